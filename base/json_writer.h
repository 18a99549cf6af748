// The project's JSON writers. AppendJsonString appends a string as a JSON
// string literal; JsonWriter builds a whole document with the commas
// managed and one number format. The JSON documents rankwatch writes go
// through it (the status API's /api/v1/summary, `eval`, `compare` and its
// judge comparison, replay's report, JSON log lines); only the dead-letter
// lines of `replay` (one per rejected event, in a reused buffer) are
// appended by hand, with AppendJsonInt below.
//
// AppendJsonString: Valid UTF-8 passes through; quotes, backslashes and control
// characters are escaped; bytes that are not UTF-8 are written as the
// \u00XX of their Latin-1 code point, so the output is always valid JSON
// (dead letters carry arbitrary payloads).
#ifndef RANKWATCH_BASE_JSON_WRITER_H_
#define RANKWATCH_BASE_JSON_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch {

// Appends `s` to `*out` as a JSON string literal, quotes included.
void AppendJsonString(std::string* out, std::string_view s);

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8SequenceLength(std::string_view s, size_t i);
// Whether all of `s` is valid UTF-8 (Utf8SequenceLength's definition).
bool IsValidUtf8(std::string_view s);

// Appends `v` with 17 significant digits (%.17g, reads back as the same
// double), or null when it is not finite; and an integer. Appending by
// hand is for a line rebuilt in a reused buffer (replay's dead letters,
// daemon/stream/pipeline/replay.cc); documents are written through JsonWriter.
void AppendJsonDouble(std::string* out, double v);
void AppendJsonInt(std::string* out, int64_t v);

// How a JsonWriter separates: kCompact writes `{"a":1,"b":[1,2]}` (machine
// documents: the status API, `eval`, replay); kSpaced writes
// `{"a": 1, "b": [1, 2]}`, one space after each ':' and ',' but no line
// breaks (`compare`'s documents, read by people too). Either is one line.
enum class JsonSpacing { kCompact, kSpaced };

// Appends JSON values to a document, managing the commas between members
// and elements. Keys and strings go through AppendJsonString; numbers print
// as the shortest decimal that reads back as the same double
// (std::to_chars), and non-finite numbers as null (JSON has no NaN or
// Infinity). The caller balances Begin and End.
//
// Value type; not thread-safe.
class JsonWriter {
 public:
  explicit JsonWriter(JsonSpacing spacing = JsonSpacing::kCompact)
      : spacing_(spacing) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();
  // An event time, or null while none is known (INT64_MIN).
  void TimeOrNull(int64_t ms);
  // A number, or null when absent.
  void OptionalDouble(const std::optional<double>& v);
  // An array of strings.
  void StringArray(std::span<const std::string> values);
  std::string Take() { return std::move(out_); }

 private:
  void Separate();
  void Open(char c);
  void Close(char c);

  JsonSpacing spacing_;
  std::string out_;
  std::vector<bool> has_member_;  // Per open container.
  bool after_key_ = false;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_JSON_WRITER_H_
