#include "daemon/stream/decode/json_scalar.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "base/rfc3339.h"

namespace rankwatch::stream {

namespace ondemand = simdjson::ondemand;
using ondemand::json_type;

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

size_t SkipDigits(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

// A loop, not find_first_of("eE"), which calls memchr on "eE" for each
// character of the number (2% of the pipeline's time in perf, issue 45).
bool HasExponent(std::string_view number) {
  for (const char c : number) {
    if (c == 'e' || c == 'E') return true;
  }
  return false;
}

// Below 2^63: the doubles that truncate to an int64.
constexpr double kTwoTo63 = 9223372036854775808.0;

ScalarResult ReadIntegerMillis(ondemand::value& value, int64_t* ms) {
  int64_t v;
  if (value.get_int64().get(v) || v < 0) return ScalarResult::Rejected();
  *ms = v;
  return ScalarResult::Ok();
}

ScalarResult ReadFloatMillis(ondemand::value& value, int64_t* ms) {
  double v;
  if (value.get_double().get(v) || !std::isfinite(v) || v < 0 ||
      v >= kTwoTo63) {
    return ScalarResult::Rejected();
  }
  *ms = static_cast<int64_t>(v);
  return ScalarResult::Ok();
}

ScalarResult ReadInt32(ondemand::value& value, NumberKind kind,
                       std::optional<int32_t>* out) {
  using Limits = std::numeric_limits<int32_t>;
  if (kind == NumberKind::kInteger) {
    int64_t v;
    if (value.get_int64().get(v) || v < Limits::min() || v > Limits::max()) {
      return ScalarResult::OutOfRange();
    }
    *out = static_cast<int32_t>(v);
    return ScalarResult::Ok();
  }
  double v;
  if (value.get_double().get(v) || !std::isfinite(v) || v != std::trunc(v)) {
    return ScalarResult::Rejected();
  }
  if (v < Limits::min() || v > Limits::max()) return ScalarResult::OutOfRange();
  *out = static_cast<int32_t>(v);
  return ScalarResult::Ok();
}

}  // namespace

// ---- Number grammar ---------------------------------------------------------

NumberKind ClassifyNumber(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  if (i == t.size() || !IsDigit(t[i])) return NumberKind::kInvalid;
  i = t[i] == '0' ? i + 1 : SkipDigits(t, i);
  bool integral = true;
  if (i < t.size() && t[i] == '.') {
    const size_t start = ++i;
    i = SkipDigits(t, i);
    if (i == start) return NumberKind::kInvalid;
    integral = false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t start = i;
    i = SkipDigits(t, i);
    if (i == start) return NumberKind::kInvalid;
    integral = false;
  }
  if (i != t.size()) return NumberKind::kInvalid;
  return integral ? NumberKind::kInteger : NumberKind::kFloat;
}

std::string_view ScalarText(ondemand::value& value) {
  std::string_view t = value.raw_json_token();
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' ||
                        t.back() == '\n' || t.back() == '\r')) {
    t.remove_suffix(1);
  }
  return t;
}

simdjson::error_code CheckScalar(ondemand::value& value, json_type type) {
  switch (type) {
    case json_type::boolean:
      // simdjson reports a broken "tru" as a type error; name the atom.
      if (!value.get_bool().error()) return simdjson::SUCCESS;
      return ScalarText(value).front() == 't' ? simdjson::T_ATOM_ERROR
                                              : simdjson::F_ATOM_ERROR;
    case json_type::null: {
      bool is_null = false;
      if (value.is_null().get(is_null) || !is_null)
        return simdjson::N_ATOM_ERROR;
      return simdjson::SUCCESS;
    }
    case json_type::number:
      return ClassifyNumber(ScalarText(value)) == NumberKind::kInvalid
                 ? simdjson::NUMBER_ERROR
                 : simdjson::SUCCESS;
    case json_type::string:
      return value.get_string().error();
    case json_type::array:
    case json_type::object:
      break;
  }
  return simdjson::SUCCESS;
}

// ---- Strings and keys -------------------------------------------------------

std::string_view NextField(simdjson::simdjson_result<ondemand::field>& result,
                           simdjson::error_code* error) {
  if (simdjson::error_code e = result.error()) {
    *error = e;
    return {};
  }
  ondemand::field& field = FieldOf(result);
  std::string_view key;
  if (RawStringWithoutEscapes(field.key().raw(), &key)) return key;
  if (simdjson::error_code e = field.unescaped_key().get(key)) {
    *error = e;
    return {};
  }
  return key;
}

// ---- Reading rules ----------------------------------------------------------

ScalarResult RejectScalar(ondemand::value& value, json_type type) {
  if (simdjson::error_code e = CheckScalar(value, type)) {
    return ScalarResult::Malformed(e);
  }
  return ScalarResult::Rejected();
}

std::optional<int64_t> ParseDateTimeMillis(std::string_view text) {
  if (std::optional<int64_t> ms = ParseRfc3339Millis(text)) return ms;
  // The ISO 8601 forms RFC 3339 leaves out, rewritten into RFC 3339: after
  // "YYYY-MM-DDThh:mm:ss" and an optional fraction, no zone (UTC), or an
  // offset without its colon ("+0000", as Java formats it) or minutes.
  constexpr size_t kSeconds = 19;  // "YYYY-MM-DDThh:mm:ss".
  constexpr size_t kMaxLength = 48;
  if (text.size() < kSeconds || text.size() > kMaxLength) return std::nullopt;
  size_t zone = kSeconds;
  if (zone < text.size() && text[zone] == '.')
    zone = SkipDigits(text, zone + 1);
  const std::string_view offset = text.substr(zone);
  const auto digits = [&](size_t from, size_t to) {
    return SkipDigits(offset, from) >= to;
  };
  const bool signed_offset =
      !offset.empty() && (offset[0] == '+' || offset[0] == '-');
  char buf[kMaxLength + 8];
  std::memcpy(buf, text.data(), zone);
  size_t n = zone;
  if (offset.empty()) {
    buf[n++] = 'Z';
  } else if (signed_offset && offset.size() == 5 && digits(1, 5)) {
    std::memcpy(buf + n, offset.data(), 3);  // "+hh"
    n += 3;
    buf[n++] = ':';
    std::memcpy(buf + n, offset.data() + 3, 2);  // "mm"
    n += 2;
  } else if (signed_offset && offset.size() == 3 && digits(1, 3)) {
    std::memcpy(buf + n, offset.data(), 3);
    n += 3;
    std::memcpy(buf + n, ":00", 3);
    n += 3;
  } else {
    return std::nullopt;
  }
  return ParseRfc3339Millis(std::string_view(buf, n));
}

// The common form of a timestamp, 1 to 18 digits without a leading zero,
// read in one pass: an integer below 10^18 < 2^63, which ClassifyNumber
// would call kInteger and get_int64 would read, two more passes over its
// digits for every event (ReadTimestamp 3% of BM_PipelineEvents, perf).
// False for any other token, which the general path reads.
bool ReadPlainMillis(std::string_view token, int64_t* ms) {
  constexpr size_t kMaxDigits = 18;
  if (token.empty() || token.size() > kMaxDigits ||
      (token[0] == '0' && token.size() > 1)) {
    return false;
  }
  int64_t v = 0;
  for (const char c : token) {
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *ms = v;
  return true;
}

ScalarResult ReadEpochMillis(ondemand::value& value, json_type type,
                             int64_t* ms) {
  if (type == json_type::string) {
    std::string_view text;
    if (simdjson::error_code e = GetString(value, &text)) {
      return ScalarResult::Malformed(e);
    }
    const std::optional<int64_t> parsed = ParseDateTimeMillis(text);
    if (!parsed || *parsed < 0) return ScalarResult::Rejected();
    *ms = *parsed;
    return ScalarResult::Ok();
  }
  if (type == json_type::number) {
    const std::string_view token = ScalarText(value);
    if (ReadPlainMillis(token, ms)) return ScalarResult::Ok();
    const NumberKind kind = ClassifyNumber(token);
    if (kind == NumberKind::kInvalid) {
      return ScalarResult::Malformed(simdjson::NUMBER_ERROR);
    }
    const ScalarResult read = kind == NumberKind::kInteger
                                  ? ReadIntegerMillis(value, ms)
                                  : ReadFloatMillis(value, ms);
    if (read.ok()) return read;
  }
  return RejectScalar(value, type);
}

ScalarResult CheckFiniteNumber(ondemand::value& value, json_type type) {
  if (type == json_type::number) {
    const std::string_view text = ScalarText(value);
    if (ClassifyNumber(text) == NumberKind::kInvalid) {
      return ScalarResult::Malformed(simdjson::NUMBER_ERROR);
    }
    // Without an exponent, fewer than 300 digits cannot overflow a double:
    // no need to convert it.
    if (text.size() < 300 && !HasExponent(text)) {
      return ScalarResult::Ok();
    }
    // simdjson fails on a literal that overflows a double (1e999).
    double v;
    if (!value.get_double().get(v) && std::isfinite(v)) {
      return ScalarResult::Ok();
    }
  }
  return RejectScalar(value, type);
}

ScalarResult ReadScalarText(ondemand::value& value, json_type type,
                            std::string_view* text) {
  switch (type) {
    case json_type::string:
      if (simdjson::error_code e = GetString(value, text)) {
        return ScalarResult::Malformed(e);
      }
      return ScalarResult::Ok();
    case json_type::number:
    case json_type::boolean:
      if (simdjson::error_code e = CheckScalar(value, type)) {
        return ScalarResult::Malformed(e);
      }
      *text = ScalarText(value);
      return ScalarResult::Ok();
    case json_type::null:
      if (simdjson::error_code e = CheckScalar(value, type)) {
        return ScalarResult::Malformed(e);
      }
      *text = {};
      return ScalarResult::Ok();
    case json_type::array:
    case json_type::object:
      break;
  }
  return ScalarResult::Rejected();
}

ScalarResult ReadNullableInt32(ondemand::value& value, json_type type,
                               std::optional<int32_t>* out) {
  if (type == json_type::null) {
    if (simdjson::error_code e = CheckScalar(value, type)) {
      return ScalarResult::Malformed(e);
    }
    out->reset();
    return ScalarResult::Ok();
  }
  if (type == json_type::number) {
    const NumberKind kind = ClassifyNumber(ScalarText(value));
    if (kind == NumberKind::kInvalid) {
      return ScalarResult::Malformed(simdjson::NUMBER_ERROR);
    }
    const ScalarResult read = ReadInt32(value, kind, out);
    if (read.outcome != ScalarOutcome::kRejected) return read;
  }
  return RejectScalar(value, type);
}

}  // namespace rankwatch::stream
