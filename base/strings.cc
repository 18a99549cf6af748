#include "base/strings.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace rankwatch {

void AppendDecimal(std::string* out, int64_t value) {
  char digits[24];  // 19 digits and a sign at most.
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, end);
}

namespace {

char AsciiToLower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = s.find(sep, begin);
    parts.push_back(s.substr(begin, end == std::string_view::npos
                                        ? std::string_view::npos
                                        : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

namespace {

// Appends `text[i]` to `*out`, escaped when it is a control character, and
// returns how many bytes it took (2 for a C1 control). `keep_lines` keeps
// '\n' and '\t' as they are.
size_t AppendEscaped(std::string_view text, size_t i, bool keep_lines,
                     std::string* out) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  char buf[16];
  if ((c == '\n' || c == '\t') && keep_lines) {
    out->push_back(static_cast<char>(c));
  } else if (c == '\n') {
    *out += "\\n";
  } else if (c == '\t') {
    *out += "\\t";
  } else if (c < 0x20 || c == 0x7f) {
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    *out += buf;
  } else if (c == 0xc2 && i + 1 < text.size() &&
             static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
             static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
    std::snprintf(buf, sizeof(buf), "\\xc2\\x%02x",
                  static_cast<unsigned char>(text[i + 1]));
    *out += buf;
    return 2;
  } else {
    out->push_back(static_cast<char>(c));
  }
  return 1;
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < max_bytes) {
    i += AppendEscaped(text, i, false, &out);
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) i += AppendEscaped(text, i, true, &out);
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string_view> ClosestKey(
    std::string_view key, std::span<const std::string_view> known) {
  const size_t max_distance = std::max<size_t>(1, key.size() / 3);
  std::optional<std::string_view> best;
  size_t best_distance = max_distance + 1;
  for (std::string_view candidate : known) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string SignedFigure(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.4g", x);
  return buf;
}

std::string SignedInterval(double lower, double upper) {
  return "[" + SignedFigure(lower) + ", " + SignedFigure(upper) + "]";
}

std::string FormatPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g%%", 100 * fraction);
  return buf;
}

}  // namespace rankwatch
