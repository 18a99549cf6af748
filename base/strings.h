// ASCII string helpers that protocols and file formats need: HTTP header
// names and content codings compare case-insensitively, and HTTP's optional
// whitespace is spaces and tabs. Byte-wise and locale-independent (not
// std::tolower's locale), so that a header matches the same way everywhere.
// Printable() makes input text fit for a one-line error message;
// ClosestKey() finds the known name a mistyped one most likely means, for
// every layer's "did you mean" (configuration keys, measure names).
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_BASE_STRINGS_H_
#define RANKWATCH_BASE_STRINGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch {

// Appends the decimal digits of `value` ('-' first when negative) to
// `*out`: std::to_chars into `*out`'s own storage, no temporary string.
void AppendDecimal(std::string* out, int64_t value);

// Whether `a` and `b` are equal when ASCII letters are folded to lower case.
// Bytes outside A-Z and a-z (UTF-8 included) must match exactly.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// `s` without leading and trailing blanks: spaces and horizontal tabs
// (POSIX's [:blank:] class, HTTP's optional whitespace), not line breaks.
std::string_view TrimBlanks(std::string_view s);

// The parts of `s` between each `sep`, empty parts included: "a,,b" gives
// "a", "", "b"; "" gives one empty part. Views into `s`.
std::vector<std::string_view> SplitOn(std::string_view s, char sep);

// `text` made fit for a one-line message, whatever bytes it holds: '\n' and
// '\t' written as such, other control characters (below 0x20, and 0x7f) as
// \xNN, so that no echoed value (a config value, a file name, a token of a
// data file) can break a message into two lines, hide part of it (NUL) or
// drive the terminal (ESC). Anything beyond `max_bytes` bytes of `text` is
// cut and marked "...". UTF-8 and other bytes from 0x80 pass unchanged.
// Every error message that echoes input uses this one function.
// The C1 controls (U+0080 to U+009F, UTF-8 C2 80 to C2 9F; U+009B is a
// CSI to some terminals) are escaped too, as their two bytes.
inline constexpr size_t kPrintableMaxBytes = 60;
std::string Printable(std::string_view text,
                      size_t max_bytes = kPrintableMaxBytes);

// `text` made safe to write to a terminal, as Printable() (no cut), but
// keeping its line breaks and tabs: for a whole report of many lines
// (replay's table, the demo's story, compare's text) whose query texts,
// ids and variant names come from input and must not drive the terminal
// ("\x1b]0;PWNED\x07" retitling the window, "\x1b[31m" colouring it).
std::string TerminalSafe(std::string_view text);

// Edit distance counting a swap of neighbours as one edit (optimal string
// alignment): "jion" is one typo away from "join".
size_t EditDistance(std::string_view a, std::string_view b);

// The known key closest to `key`, when close enough to be a likely typo: at
// most max(1, key.size() / 3) edits away. The first of equally close keys.
std::optional<std::string_view> ClosestKey(
    std::string_view key, std::span<const std::string_view> known);

// A difference or an interval's end as every human output of an A/B test
// prints it (the decision's reasons, replay's table): signed, 4 significant
// digits ("+0.02224", "-12.35", "+1.5e-05"), so that a reason and the table
// beside it show the same numbers (issue 42). "nan" and "inf" pass as such.
std::string SignedFigure(double x);

// "[-0.02336, +0.06783]": two SignedFigure()s, the lower end first.
std::string SignedInterval(double lower, double upper);

// A fraction as a percentage with 4 significant digits: "95%", "97.5%",
// "2.5%": a confidence level or a relative margin as the decisions' reasons
// and replay's table write them.
std::string FormatPercent(double fraction);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_STRINGS_H_
