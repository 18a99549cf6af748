// Helpers to scan whitespace-separated TREC text (qrels and run files)
// without allocating: tokens are views into the input.
#ifndef RANKWATCH_METRICS_TREC_TEXT_SCAN_H_
#define RANKWATCH_METRICS_TREC_TEXT_SCAN_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace rankwatch::trec {

// The C locale's isspace(), as trec_eval uses it, without the locale lookup.
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Splits `line` (without its '\n') into whitespace-separated tokens. Fills at
// most `max` entries of `tokens` and returns the total number of tokens.
inline int Tokenize(std::string_view line, std::string_view* tokens, int max) {
  int n = 0;
  size_t i = 0;
  const size_t size = line.size();
  while (true) {
    while (i < size && IsSpace(line[i])) ++i;
    if (i == size) return n;
    const size_t start = i;
    while (i < size && !IsSpace(line[i])) ++i;
    if (n < max) tokens[n] = line.substr(start, i - start);
    ++n;
  }
}

// Parses a finite decimal number (leading '+' or '-', exponent allowed), the
// whole token. "nan", "inf" and trailing junk are rejected.
inline bool ParseScore(std::string_view token, double* out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return false;  // "+-1"
  }
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  auto [ptr, ec] =
      std::from_chars(token.data(), end, *out, std::chars_format::general);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

// Parses a whole token as a base-10 integer that fits T.
template <typename T>
inline bool ParseInteger(std::string_view token, T* out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return false;  // "+-1"
  }
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace rankwatch::trec

#endif  // RANKWATCH_METRICS_TREC_TEXT_SCAN_H_
