// The project's one JSON string writer: appends a string as a JSON string
// literal. Valid UTF-8 passes through; quotes, backslashes and control
// characters are escaped; bytes that are not UTF-8 are written as the
// \u00XX of their Latin-1 code point, so the output is always valid JSON
// (dead letters carry arbitrary payloads).
#ifndef RANKWATCH_BASE_JSON_WRITER_H_
#define RANKWATCH_BASE_JSON_WRITER_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rankwatch {

// Appends `s` to `*out` as a JSON string literal, quotes included.
void AppendJsonString(std::string* out, std::string_view s);

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8SequenceLength(std::string_view s, size_t i);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_JSON_WRITER_H_
