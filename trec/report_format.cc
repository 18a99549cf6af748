#include "trec/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rankwatch::trec {

std::string Format(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Exact(double value, std::string_view nan) {
  if (std::isnan(value)) return std::string(nan);
  if (std::isinf(value)) return value > 0 ? "1e999" : "-1e999";
  return Format("%.17g", value);
}

std::string Fixed(double value) {
  return std::isnan(value) ? "-" : Format("%.4f", value);
}

std::string Signed(double value) {
  return std::isnan(value) ? "-" : Format("%+.4f", value);
}

std::string PValue(double p) {
  if (std::isnan(p)) return "-";
  if (p == 0) return "<1e-300";
  return p < 1e-4 ? Format("%.1e", p) : Format("%.4f", p);
}

std::string Int(int64_t value) { return std::to_string(value); }

void AppendTable(const std::vector<std::vector<std::string>>& rows,
                 std::string* out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      if (c == 0) {
        line += row[c] + pad;
      } else {
        line += "  " + pad + row[c];
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    *out += line + "\n";
  }
}

}  // namespace rankwatch::trec
