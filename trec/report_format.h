// The number formats and layout helpers of the TREC reports (`rankwatch
// compare`, its judge comparison): one place, so every table of these
// commands prints a figure the same way. Their JSON documents go through
// base/json_writer.h's JsonWriter.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_TREC_REPORT_FORMAT_H_
#define RANKWATCH_TREC_REPORT_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::trec {

// `value` through snprintf's `format` (one double conversion).
std::string Format(const char* format, double value);
// Full precision (%.17g, round-trips a double); `nan` for NaN ("" in CSV),
// 1e999 / -1e999 for infinities.
std::string Exact(double value, std::string_view nan);
// Four decimals; "-" for NaN.
std::string Fixed(double value);
// Four decimals with a sign; "-" for NaN.
std::string Signed(double value);
// Four decimals, or two significant digits below 0.0001; a p-value that
// underflows a double prints as "<1e-300", not 0; "-" for NaN.
std::string PValue(double p);
std::string Int(int64_t value);

// Rows of cells printed in columns: the first left-aligned, the others
// right-aligned, two spaces apart; trailing spaces trimmed.
void AppendTable(const std::vector<std::vector<std::string>>& rows,
                 std::string* out);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_REPORT_FORMAT_H_
