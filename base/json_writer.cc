#include "base/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/strings.h"

namespace rankwatch {

// Length of the valid UTF-8 sequence starting at s[i], or 0. Valid as RFC
// 3629 defines it: no overlong forms (C0, C1, E0 80..9F, F0 80..8F), no
// surrogates (ED A0..BF), nothing above U+10FFFF (F4 90.., F5..FF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // The second byte's range.
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  const unsigned char second = static_cast<unsigned char>(s[i + 1]);
  if (second < lo || second > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SequenceLength(s, i);
    if (n > 1) {
      out->append(s.substr(i, n));
      i += n;
      continue;
    }
    ++i;
    if (c == '"') {
      out->append("\\\"");
    } else if (c == '\\') {
      out->append("\\\\");
    } else if (c >= 0x20 && n == 1) {
      out->push_back(static_cast<char>(c));
    } else {
      // Control characters, and bytes that are not UTF-8 (kept readable as
      // their Latin-1 code point so the output stays valid JSON).
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
    }
  }
  out->push_back('"');
}

void AppendJsonDouble(std::string* out, double v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  out->append(buf, static_cast<size_t>(n));
}

void AppendJsonInt(std::string* out, int64_t v) { AppendDecimal(out, v); }

void JsonWriter::Key(std::string_view key) {
  Separate();
  AppendJsonString(&out_, key);
  out_ += spacing_ == JsonSpacing::kSpaced ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  Separate();
  AppendJsonString(&out_, s);
}

void JsonWriter::Int(int64_t v) {
  Separate();
  out_ += std::to_string(v);
}

void JsonWriter::Uint(uint64_t v) {
  Separate();
  out_ += std::to_string(v);
}

void JsonWriter::Double(double v) {
  Separate();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out_.append(buf, ec == std::errc() ? end : buf);
}

void JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
}

void JsonWriter::Null() {
  Separate();
  out_ += "null";
}

void JsonWriter::TimeOrNull(int64_t ms) {
  if (ms == INT64_MIN) {
    Null();
  } else {
    Int(ms);
  }
}

void JsonWriter::OptionalDouble(const std::optional<double>& v) {
  if (v) {
    Double(*v);
  } else {
    Null();
  }
}

void JsonWriter::StringArray(std::span<const std::string> values) {
  BeginArray();
  for (const std::string& v : values) String(v);
  EndArray();
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) {
      out_ += spacing_ == JsonSpacing::kSpaced ? ", " : ",";
    }
    has_member_.back() = true;
  }
}

void JsonWriter::Open(char c) {
  Separate();
  out_ += c;
  has_member_.push_back(false);
}

void JsonWriter::Close(char c) {
  out_ += c;
  has_member_.pop_back();
}

}  // namespace rankwatch
