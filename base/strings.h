// ASCII string helpers that protocols and file formats need: HTTP header
// names and content codings compare case-insensitively, and HTTP's optional
// whitespace is spaces and tabs. Byte-wise and locale-independent (not
// std::tolower's locale), so that a header matches the same way everywhere.
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_BASE_STRINGS_H_
#define RANKWATCH_BASE_STRINGS_H_

#include <string_view>

namespace rankwatch {

// Whether `a` and `b` are equal when ASCII letters are folded to lower case.
// Bytes outside A-Z and a-z (UTF-8 included) must match exactly.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// `s` without leading and trailing blanks: spaces and horizontal tabs
// (POSIX's [:blank:] class, HTTP's optional whitespace), not line breaks.
std::string_view TrimBlanks(std::string_view s);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_STRINGS_H_
