#include "daemon/stream/event_decoder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "config/config_loader.h"

namespace rankwatch::stream {

namespace ondemand = simdjson::ondemand;
using ondemand::json_type;

// Returns the DecodeStatus of `expr` if it is a rejection.
#define RW_RETURN_IF_REJECTED(expr)          \
  do {                                       \
    DecodeStatus rw_status_ = expr;          \
    if (!rw_status_.ok()) return rw_status_; \
  } while (false)

namespace {

// Smallest buffer and parser capacity: avoids a reallocation for each of the
// first few events, which are usually of similar small sizes.
constexpr size_t kMinCapacity = 4096;

DecodeStatus Reject(RejectReason reason, std::string detail) {
  return DecodeStatus::Reject(reason, std::move(detail));
}

DecodeStatus Malformed(simdjson::error_code error) {
  return Reject(RejectReason::kMalformedJson, simdjson::error_message(error));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// ---- JSON numbers ---------------------------------------------------------

enum class NumberKind { kInteger, kFloat, kInvalid };

size_t SkipDigits(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

// Classifies a number token by the JSON grammar (RFC 8259 §6). simdjson's
// on-demand API checks a number's syntax only when converting it, and its
// type probe does not validate at all, so "12x" must be caught here.
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

// The literal text of a scalar. simdjson's raw token runs up to the next
// structural character, so it may carry trailing whitespace.
std::string_view ScalarText(ondemand::value& value) {
  std::string_view t = value.raw_json_token();
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' ||
                        t.back() == '\n' || t.back() == '\r')) {
    t.remove_suffix(1);
  }
  return t;
}

// Whether a scalar that is about to be rejected for its type is well-formed:
// a broken literal ("tru", "12x") is malformed JSON, not a type error.
// Containers are not walked; simdjson skips them.
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

// Rejects `value` for its type with `reason`, unless it is broken JSON.
DecodeStatus RejectType(ondemand::value& value, json_type type,
                        RejectReason reason, std::string detail) {
  if (simdjson::error_code e = CheckScalar(value, type)) return Malformed(e);
  return Reject(reason, std::move(detail));
}

simdjson::error_code TypeOf(ondemand::value& value, json_type* type) {
  return value.type().get(*type);
}

// The bytes of a JSON string starting just after its opening quote, if it
// has no escape: then they are the string itself and need no copy into
// simdjson's string buffer. Stage 1 has validated the document, so a
// closing quote exists.
bool RawStringWithoutEscapes(const char* begin, std::string_view* out) {
  const char* p = begin;
  while (*p != '"' && *p != '\\') ++p;
  if (*p != '"') return false;
  *out = std::string_view(begin, static_cast<size_t>(p - begin));
  return true;
}

// Reads the next field of an object being iterated: its value is left in
// `field`, its unescaped name in `key`.
simdjson::error_code NextField(
    simdjson::simdjson_result<ondemand::field> result, ondemand::field* field,
    std::string_view* key) {
  if (simdjson::error_code e = std::move(result).get(*field)) return e;
  if (RawStringWithoutEscapes(field->key().raw(), key)) {
    return simdjson::SUCCESS;
  }
  return field->unescaped_key().get(*key);
}

// Reads a string value, without copying it when it has no escapes.
simdjson::error_code GetString(ondemand::value& value, std::string_view* out) {
  const std::string_view token = value.raw_json_token();
  if (!token.empty() && token.front() == '"' &&
      RawStringWithoutEscapes(token.data() + 1, out)) {
    return simdjson::SUCCESS;
  }
  return value.get_string().get(*out);
}

DecodeStatus RootObject(ondemand::document& doc, ondemand::object* root) {
  if (simdjson::error_code e = doc.get_object().get(*root)) {
    if (e != simdjson::INCORRECT_TYPE) return Malformed(e);
    return Reject(RejectReason::kMalformedJson, "the event is not an object");
  }
  return DecodeStatus::Ok();
}

// After the root object was iterated to its end: rejects anything after it
// ("{...}}"), which on-demand parsing does not look at by itself.
DecodeStatus CheckAtEnd(ondemand::document& doc) {
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    return Malformed(simdjson::TRAILING_CONTENT);
  }
  return DecodeStatus::Ok();
}

// ---- Reject details -------------------------------------------------------

std::string Quoted(std::string_view s) {
  std::string out = "'";
  out.append(s);
  out += '\'';
  return out;
}

}  // namespace

// Formats a path the way details name fields (see FieldPath).
std::string EventDecoder::Describe(const FieldPath& path) {
  if (path.parent.empty()) return Quoted(path.name);
  std::string out(path.parent);
  if (path.index >= 0) {
    out += '[';
    out += std::to_string(path.index);
    out += ']';
  }
  if (!path.name.empty()) {
    out += '.';
    out.append(path.name);
  }
  return out;
}

DecodeStatus EventDecoder::MissingField(const FieldPath& path) {
  std::string detail = "missing field " + Quoted(path.name);
  if (!path.parent.empty()) {
    detail += " in ";
    detail += Describe({path.parent, path.index, {}});
  }
  return Reject(RejectReason::kMissingField, std::move(detail));
}

EventDecoder::EventDecoder(const config::SchemaConfig& schema,
                           const config::EventLimitsConfig& limits,
                           config::JoinMode mode,
                           std::vector<std::string> segment_labels,
                           const Clock* clock)
    : schema_(schema),
      limits_(limits),
      mode_(mode),
      segment_labels_(std::move(segment_labels)),
      clock_(clock) {}

// ---- Entry points ---------------------------------------------------------

DecodeStatus EventDecoder::DecodeResults(
    std::string_view payload, std::optional<int64_t> fallback_timestamp_ms,
    ResultsEvent* out) {
  DecodeStatus status = ParseResults(payload, fallback_timestamp_ms, out);
  if (!status.ok()) {
    // Leave nothing a caller could mistake for an event.
    out->request_id = out->query_id = out->variant = {};
    out->timestamp_ms = 0;
    out->doc_ids.clear();
    out->segment_values.clear();
  }
  return status;
}

DecodeStatus EventDecoder::DecodeJudgments(
    std::string_view payload, std::optional<int64_t> fallback_timestamp_ms,
    JudgmentEvent* out) {
  DecodeStatus status = ParseJudgments(payload, fallback_timestamp_ms, out);
  if (!status.ok()) {
    out->request_id = out->query_id = {};
    out->timestamp_ms = 0;
    out->judgments.clear();
  }
  return status;
}

DecodeStatus EventDecoder::ParseResults(std::string_view payload,
                                        std::optional<int64_t> fallback,
                                        ResultsEvent* out) {
  out->request_id = out->query_id = out->variant = {};
  out->doc_ids.clear();
  out->segment_values.assign(segment_labels_.size(), std::string_view());

  ondemand::document doc;
  RW_RETURN_IF_REJECTED(Start(payload, &doc));
  ondemand::object root;
  RW_RETURN_IF_REJECTED(RootObject(doc, &root));
  bool has_timestamp = false;
  bool has_results = false;
  for (auto result : root) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code e = NextField(std::move(result), &field, &key)) {
      return Malformed(e);
    }
    ondemand::value& value = field.value();
    if (key == schema_.request_id) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.request_id}, &out->request_id));
    } else if (key == schema_.query_id) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.query_id}, &out->query_id));
    } else if (key == schema_.variant) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.variant}, &out->variant));
    } else if (key == schema_.timestamp) {
      RW_RETURN_IF_REJECTED(ReadTimestamp(value, &out->timestamp_ms));
      has_timestamp = true;
    } else if (key == schema_.results) {
      RW_RETURN_IF_REJECTED(ReadResults(value, &out->doc_ids));
      has_results = true;
    } else if (key == schema_.segments) {
      RW_RETURN_IF_REJECTED(ReadSegments(value, &out->segment_values));
    }
  }
  RW_RETURN_IF_REJECTED(CheckAtEnd(doc));
  RW_RETURN_IF_REJECTED(CheckRequiredIds(out->request_id, out->query_id));
  if (!has_results) return MissingField(FieldPath{{}, -1, schema_.results});
  RW_RETURN_IF_REJECTED(
      ResolveTimestamp(has_timestamp, fallback, &out->timestamp_ms));
  if (out->variant.empty()) out->variant = schema_.default_variant;
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ParseJudgments(std::string_view payload,
                                          std::optional<int64_t> fallback,
                                          JudgmentEvent* out) {
  out->request_id = out->query_id = {};
  out->judgments.clear();

  ondemand::document doc;
  RW_RETURN_IF_REJECTED(Start(payload, &doc));
  ondemand::object root;
  RW_RETURN_IF_REJECTED(RootObject(doc, &root));
  bool has_timestamp = false;
  bool has_batch = false;
  bool has_single_doc = false;
  bool has_single_relevance = false;
  Judgment single;
  for (auto result : root) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code e = NextField(std::move(result), &field, &key)) {
      return Malformed(e);
    }
    ondemand::value& value = field.value();
    if (key == schema_.request_id) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.request_id}, &out->request_id));
    } else if (key == schema_.query_id) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.query_id}, &out->query_id));
    } else if (key == schema_.timestamp) {
      RW_RETURN_IF_REJECTED(ReadTimestamp(value, &out->timestamp_ms));
      has_timestamp = true;
    } else if (key == schema_.judgments) {
      RW_RETURN_IF_REJECTED(ReadJudgmentBatch(value, &out->judgments));
      has_batch = true;
    } else if (key == schema_.doc_id) {
      RW_RETURN_IF_REJECTED(
          ReadId(value, {{}, -1, schema_.doc_id}, &single.doc_id));
      has_single_doc = true;
    } else if (key == schema_.relevance) {
      RW_RETURN_IF_REJECTED(
          ReadRelevance(value, {{}, -1, schema_.relevance}, &single.grade));
      has_single_relevance = true;
    }
  }
  RW_RETURN_IF_REJECTED(CheckAtEnd(doc));
  RW_RETURN_IF_REJECTED(CheckRequiredIds(out->request_id, out->query_id));
  if (has_batch) {
    if (out->judgments.empty()) {
      return Reject(RejectReason::kMissingField,
                    Quoted(schema_.judgments) + " is empty");
    }
  } else if (has_single_doc) {
    if (!has_single_relevance) {
      RW_RETURN_IF_REJECTED(
          DefaultRelevance({{}, -1, schema_.relevance}, &single.grade));
    }
    out->judgments.push_back(single);
  } else {
    return Reject(RejectReason::kMissingField,
                  "missing field " + Quoted(schema_.doc_id) + " (or " +
                      Quoted(schema_.judgments) + ")");
  }
  return ResolveTimestamp(has_timestamp, fallback, &out->timestamp_ms);
}

// ---- Parsing --------------------------------------------------------------

DecodeStatus EventDecoder::Start(std::string_view payload,
                                 ondemand::document* doc) {
  if (static_cast<int64_t>(payload.size()) > limits_.max_event_bytes) {
    return Reject(RejectReason::kTooLarge,
                  "event is " + std::to_string(payload.size()) +
                      " bytes (max " + std::to_string(limits_.max_event_bytes) +
                      ")");
  }
  RW_RETURN_IF_REJECTED(Reserve(payload.size()));
  if (!payload.empty()) {
    std::memcpy(buffer_.data(), payload.data(), payload.size());
  }
  if (simdjson::error_code e =
          parser_.iterate(buffer_.data(), payload.size(), buffer_.size())
              .get(*doc)) {
    return Malformed(e);
  }
  return DecodeStatus::Ok();
}

// Grows the buffer and the parser geometrically, so that events of slowly
// increasing sizes do not reallocate every time (simdjson alone would
// reallocate to the exact size).
DecodeStatus EventDecoder::Reserve(size_t payload_bytes) {
  const size_t capacity = std::max(kMinCapacity, std::bit_ceil(payload_bytes));
  if (buffer_.size() < payload_bytes + simdjson::SIMDJSON_PADDING) {
    buffer_.resize(capacity + simdjson::SIMDJSON_PADDING);
  }
  if (parser_.capacity() < payload_bytes) {
    const size_t want = std::min(capacity, parser_.max_capacity());
    if (simdjson::error_code e = parser_.allocate(want, parser_.max_depth())) {
      return Reject(RejectReason::kTooLarge,
                    "event is " + std::to_string(payload_bytes) +
                        " bytes: " + simdjson::error_message(e));
    }
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadId(ondemand::value& value, const FieldPath& path,
                                  std::string_view* id) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::string) {
    if (simdjson::error_code e = GetString(value, id)) {
      return Malformed(e);
    }
  } else if (type == json_type::number &&
             ClassifyNumber(ScalarText(value)) == NumberKind::kInteger) {
    // Many producers use numeric ids; the literal text is the id.
    *id = ScalarText(value);
  } else {
    return RejectType(value, type, RejectReason::kWrongType,
                      Describe(path) + " is not a string or an integer");
  }
  return CheckIdLength(*id, path);
}

DecodeStatus EventDecoder::CheckIdLength(std::string_view id,
                                         const FieldPath& path) const {
  if (id.empty()) {
    return Reject(RejectReason::kEmptyId, Describe(path) + " is empty");
  }
  if (static_cast<int64_t>(id.size()) > limits_.max_id_length) {
    return Reject(RejectReason::kIdTooLong,
                  Describe(path) + " is " + std::to_string(id.size()) +
                      " bytes (max " + std::to_string(limits_.max_id_length) +
                      ")");
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadTimestamp(ondemand::value& value,
                                         int64_t* ms) const {
  const std::string_view name = schema_.timestamp;
  const auto bad = [name] {
    return Quoted(name) +
           " is not epoch milliseconds >= 0 nor an RFC 3339 date-time";
  };
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::string) {
    std::string_view text;
    if (simdjson::error_code e = GetString(value, &text)) {
      return Malformed(e);
    }
    const std::optional<int64_t> parsed = config::ParseRfc3339Millis(text);
    if (!parsed || *parsed < 0) {
      return Reject(RejectReason::kBadTimestamp, bad());
    }
    *ms = *parsed;
    return DecodeStatus::Ok();
  }
  if (type == json_type::number) {
    const NumberKind kind = ClassifyNumber(ScalarText(value));
    if (kind == NumberKind::kInvalid) return Malformed(simdjson::NUMBER_ERROR);
    if (kind == NumberKind::kInteger) {
      int64_t v;
      if (!value.get_int64().get(v) && v >= 0) {
        *ms = v;
        return DecodeStatus::Ok();
      }
    } else {
      // A float is truncated toward zero, if it fits.
      double v;
      if (!value.get_double().get(v) && std::isfinite(v) && v >= 0 &&
          v < 9223372036854775808.0) {
        *ms = static_cast<int64_t>(v);
        return DecodeStatus::Ok();
      }
    }
  }
  return RejectType(value, type, RejectReason::kBadTimestamp, bad());
}

DecodeStatus EventDecoder::ResolveTimestamp(bool present,
                                            std::optional<int64_t> fallback,
                                            int64_t* ms) {
  if (!present) {
    // Kafka reports -1 for a record without a timestamp.
    if (!fallback || *fallback < 0) {
      return MissingField(FieldPath{{}, -1, schema_.timestamp});
    }
    *ms = *fallback;
  }
  return CheckTimeBounds(present, *ms);
}

DecodeStatus EventDecoder::CheckTimeBounds(bool present, int64_t ms) {
  const auto name = [&] {
    return (present ? Quoted(schema_.timestamp) : "the Kafka timestamp") + " " +
           config::FormatRfc3339Millis(ms);
  };
  if (ms < limits_.min_timestamp_ms) {
    return Reject(RejectReason::kPastTimestamp,
                  name() + " is before events.min_timestamp " +
                      config::FormatRfc3339Millis(limits_.min_timestamp_ms));
  }
  if (ms <= clock_seen_ms_) return DecodeStatus::Ok();
  clock_seen_ms_ = clock_->NowMillis();
  // Saturating: now + skew must not overflow for any clock.
  int64_t limit = 0;
  if (__builtin_add_overflow(clock_seen_ms_, limits_.max_future_skew.count(),
                             &limit)) {
    limit = std::numeric_limits<int64_t>::max();
  }
  if (ms <= limit) return DecodeStatus::Ok();
  // In double: the difference of two int64 may not fit one.
  const double ahead_s =
      (static_cast<double>(ms) - static_cast<double>(clock_seen_ms_)) / 1000;
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", ahead_s);
  return Reject(RejectReason::kFutureTimestamp,
                name() + " is " + seconds +
                    " s ahead of the wall clock (events.max_future_skew " +
                    config::FormatDuration(limits_.max_future_skew) + ")");
}

DecodeStatus EventDecoder::CheckRequiredIds(std::string_view request_id,
                                            std::string_view query_id) const {
  // A present id is never empty (empty_id), so empty means absent.
  if (mode_ == config::JoinMode::kImpression && request_id.empty()) {
    return MissingField(FieldPath{{}, -1, schema_.request_id});
  }
  if (mode_ == config::JoinMode::kQrels && query_id.empty()) {
    return MissingField(FieldPath{{}, -1, schema_.query_id});
  }
  return DecodeStatus::Ok();
}

// ---- Results --------------------------------------------------------------

DecodeStatus EventDecoder::ReadResults(ondemand::value& value,
                                       std::vector<std::string_view>* doc_ids) {
  doc_ids->clear();
  seen_docs_.Clear();
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::array) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.results) + " is not an array");
  }
  ondemand::array array;
  if (simdjson::error_code e = value.get_array().get(array)) {
    return Malformed(e);
  }
  const size_t max_results =
      static_cast<size_t>(std::max<int32_t>(limits_.max_results, 0));
  int64_t index = 0;
  for (auto result : array) {
    ondemand::value entry;
    if (simdjson::error_code e = std::move(result).get(entry)) {
      return Malformed(e);
    }
    if (doc_ids->size() == max_results) {
      return Reject(RejectReason::kTooManyResults,
                    Quoted(schema_.results) + " has more than " +
                        std::to_string(max_results) + " entries");
    }
    std::string_view doc_id;
    RW_RETURN_IF_REJECTED(ReadResultEntry(entry, index, &doc_id));
    if (const uint32_t* first =
            seen_docs_.Insert(doc_id, static_cast<uint32_t>(index))) {
      return Reject(RejectReason::kDuplicateDoc,
                    Describe(FieldPath{schema_.results, index, {}}) +
                        " repeats doc " + Quoted(doc_id) + " of " +
                        Describe(FieldPath{schema_.results, *first, {}}));
    }
    doc_ids->push_back(doc_id);
    ++index;
  }
  if (doc_ids->empty()) {
    return Reject(RejectReason::kEmptyResults,
                  Quoted(schema_.results) + " is empty");
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadResultEntry(ondemand::value& value,
                                           int64_t index,
                                           std::string_view* doc_id) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::object) return ReadResultObject(value, index, doc_id);
  if (type == json_type::string ||
      (type == json_type::number &&
       ClassifyNumber(ScalarText(value)) == NumberKind::kInteger)) {
    return ReadId(value, {schema_.results, index, {}}, doc_id);
  }
  return RejectType(value, type, RejectReason::kWrongType,
                    Describe(FieldPath{schema_.results, index, {}}) +
                        " is not an object, a string or an integer");
}

DecodeStatus EventDecoder::ReadResultObject(ondemand::value& value,
                                            int64_t index,
                                            std::string_view* doc_id) const {
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  bool has_doc_id = false;
  for (auto result : object) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code e = NextField(std::move(result), &field, &key)) {
      return Malformed(e);
    }
    if (key == schema_.doc_id) {
      RW_RETURN_IF_REJECTED(ReadId(
          field.value(), {schema_.results, index, schema_.doc_id}, doc_id));
      has_doc_id = true;
    } else if (key == schema_.score) {
      RW_RETURN_IF_REJECTED(
          ReadScore(field.value(), {schema_.results, index, schema_.score}));
    }
  }
  if (!has_doc_id) {
    return MissingField(FieldPath{schema_.results, index, schema_.doc_id});
  }
  return DecodeStatus::Ok();
}

// Scores are informational: checked, not kept.
DecodeStatus EventDecoder::ReadScore(ondemand::value& value,
                                     const FieldPath& path) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::number) {
    const std::string_view text = ScalarText(value);
    if (ClassifyNumber(text) == NumberKind::kInvalid) {
      return Malformed(simdjson::NUMBER_ERROR);
    }
    // Without an exponent, fewer than 300 digits cannot overflow a double:
    // no need to convert it.
    if (text.size() < 300 && text.find_first_of("eE") == text.npos) {
      return DecodeStatus::Ok();
    }
    // simdjson fails on a literal that overflows a double (1e999).
    double score;
    if (!value.get_double().get(score) && std::isfinite(score)) {
      return DecodeStatus::Ok();
    }
  }
  return RejectType(value, type, RejectReason::kNonFiniteScore,
                    Describe(path) + " is not a finite number");
}

DecodeStatus EventDecoder::ReadSegments(
    ondemand::value& value, std::vector<std::string_view>* values) const {
  std::fill(values->begin(), values->end(), std::string_view());
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::object) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.segments) + " is not an object");
  }
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  for (auto result : object) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code e = NextField(std::move(result), &field, &key)) {
      return Malformed(e);
    }
    const auto label =
        std::find(segment_labels_.begin(), segment_labels_.end(), key);
    if (label == segment_labels_.end()) continue;
    RW_RETURN_IF_REJECTED(
        ReadSegmentValue(field.value(), {schema_.segments, -1, key},
                         &(*values)[label - segment_labels_.begin()]));
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadSegmentValue(ondemand::value& value,
                                            const FieldPath& path,
                                            std::string_view* out) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  switch (type) {
    case json_type::string:
      if (simdjson::error_code e = GetString(value, out)) {
        return Malformed(e);
      }
      break;
    case json_type::number:
    case json_type::boolean:
      if (simdjson::error_code e = CheckScalar(value, type)) {
        return Malformed(e);
      }
      *out = ScalarText(value);
      break;
    case json_type::null:
      if (simdjson::error_code e = CheckScalar(value, type)) {
        return Malformed(e);
      }
      *out = {};
      break;
    case json_type::array:
    case json_type::object:
      return Reject(RejectReason::kWrongType,
                    Describe(path) + " is not a string, a number or a boolean");
  }
  // Unlike ids, an empty value is allowed: it means "not carried".
  if (out->empty()) return DecodeStatus::Ok();
  return CheckIdLength(*out, path);
}

// ---- Judgments ------------------------------------------------------------

DecodeStatus EventDecoder::ReadJudgmentBatch(
    ondemand::value& value, std::vector<Judgment>* judgments) const {
  judgments->clear();
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::array) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.judgments) + " is not an array");
  }
  ondemand::array array;
  if (simdjson::error_code e = value.get_array().get(array)) {
    return Malformed(e);
  }
  const size_t max_judgments =
      static_cast<size_t>(std::max<int32_t>(limits_.max_judgments, 0));
  int64_t index = 0;
  for (auto result : array) {
    ondemand::value entry;
    if (simdjson::error_code e = std::move(result).get(entry)) {
      return Malformed(e);
    }
    if (judgments->size() == max_judgments) {
      return Reject(RejectReason::kTooManyJudgments,
                    Quoted(schema_.judgments) + " has more than " +
                        std::to_string(max_judgments) + " entries");
    }
    Judgment judgment;
    RW_RETURN_IF_REJECTED(ReadJudgmentEntry(entry, index, &judgment));
    judgments->push_back(judgment);
    ++index;
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadJudgmentEntry(ondemand::value& value,
                                             int64_t index,
                                             Judgment* judgment) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::object) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Describe(FieldPath{schema_.judgments, index, {}}) +
                          " is not an object");
  }
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  bool has_doc_id = false;
  bool has_relevance = false;
  for (auto result : object) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code e = NextField(std::move(result), &field, &key)) {
      return Malformed(e);
    }
    if (key == schema_.doc_id) {
      RW_RETURN_IF_REJECTED(ReadId(field.value(),
                                   {schema_.judgments, index, schema_.doc_id},
                                   &judgment->doc_id));
      has_doc_id = true;
    } else if (key == schema_.relevance) {
      RW_RETURN_IF_REJECTED(ReadRelevance(
          field.value(), {schema_.judgments, index, schema_.relevance},
          &judgment->grade));
      has_relevance = true;
    }
  }
  if (!has_doc_id) {
    return MissingField(FieldPath{schema_.judgments, index, schema_.doc_id});
  }
  if (!has_relevance) {
    return DefaultRelevance({schema_.judgments, index, schema_.relevance},
                            &judgment->grade);
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadRelevance(
    ondemand::value& value, const FieldPath& path,
    std::optional<metrics::Grade>* grade) const {
  using Limits = std::numeric_limits<metrics::Grade>;
  const auto out_of_range = [&path] {
    return Reject(RejectReason::kNonIntegerRelevance,
                  Describe(path) + " is out of the 32-bit integer range");
  };
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::null) {
    if (simdjson::error_code e = CheckScalar(value, type)) return Malformed(e);
    grade->reset();  // A deletion.
    return DecodeStatus::Ok();
  }
  if (type == json_type::number) {
    const NumberKind kind = ClassifyNumber(ScalarText(value));
    if (kind == NumberKind::kInvalid) return Malformed(simdjson::NUMBER_ERROR);
    if (kind == NumberKind::kInteger) {
      int64_t v;
      if (value.get_int64().get(v) || v < Limits::min() || v > Limits::max()) {
        return out_of_range();
      }
      *grade = static_cast<metrics::Grade>(v);
      return DecodeStatus::Ok();
    }
    // Integral floats (2.0, 2e0) are accepted: some producers emit every
    // number as a double.
    double v;
    if (!value.get_double().get(v) && std::isfinite(v) && v == std::trunc(v)) {
      if (v < Limits::min() || v > Limits::max()) return out_of_range();
      *grade = static_cast<metrics::Grade>(v);
      return DecodeStatus::Ok();
    }
  }
  return RejectType(value, type, RejectReason::kNonIntegerRelevance,
                    Describe(path) + " is not an integer");
}

DecodeStatus EventDecoder::DefaultRelevance(
    const FieldPath& path, std::optional<metrics::Grade>* grade) const {
  if (!schema_.default_relevance) return MissingField(path);
  *grade = *schema_.default_relevance;
  return DecodeStatus::Ok();
}

#undef RW_RETURN_IF_REJECTED

}  // namespace rankwatch::stream
