#include "base/duration.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <system_error>

namespace rankwatch {

namespace {

// Duration units, longest first: compound durations list them in this
// order.
struct DurationUnit {
  std::string_view suffix;
  int64_t ms;
};
constexpr std::array<DurationUnit, 5> kDurationUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};

// The index in kDurationUnits of the unit that `rest` starts with, or
// kDurationUnits.size().
size_t UnitAt(std::string_view rest) {
  // "ms" before "m", so that 5ms is not read as 5m followed by "s".
  if (rest.starts_with("ms")) return kDurationUnits.size() - 1;
  size_t unit = kDurationUnits.size();
  for (size_t u = 0; u + 1 < kDurationUnits.size(); ++u) {
    if (rest.starts_with(kDurationUnits[u].suffix)) unit = u;
  }
  return unit;
}

}  // namespace

DurationError ParseDurationMs(std::string_view text, int64_t* out) {
  if (text.empty()) return DurationError::kMalformed;
  const int64_t max_ms = kMaxDuration.count();
  int64_t total = 0;
  size_t next_unit = 0;  // Units must come in decreasing order.
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
      ++i;
    if (i == start) return DurationError::kMalformed;
    int64_t value = 0;
    const auto [end, ec] =
        std::from_chars(text.data() + start, text.data() + i, value);
    if (ec == std::errc::result_out_of_range) return DurationError::kTooLarge;
    if (ec != std::errc() || end != text.data() + i) {
      return DurationError::kMalformed;
    }
    const size_t unit = UnitAt(text.substr(i));
    if (unit == kDurationUnits.size() || unit < next_unit) {
      return DurationError::kMalformed;
    }
    next_unit = unit + 1;
    i += kDurationUnits[unit].suffix.size();
    if (value > (max_ms - total) / kDurationUnits[unit].ms) {
      return DurationError::kTooLarge;
    }
    total += value * kDurationUnits[unit].ms;
  }
  *out = total;
  return DurationError::kNone;
}

std::optional<Duration> ParseDuration(std::string_view text) {
  int64_t ms = 0;
  if (ParseDurationMs(text, &ms) != DurationError::kNone) return std::nullopt;
  return Duration(ms);
}

std::string FormatDuration(Duration d) {
  if (d.count() == 0) return "0s";
  std::string out = d.count() < 0 ? "-" : "";
  // Unsigned, so that the magnitude of the most negative value fits.
  uint64_t rest = d.count() < 0 ? 0 - static_cast<uint64_t>(d.count())
                                : static_cast<uint64_t>(d.count());
  for (const DurationUnit& unit : kDurationUnits) {
    const uint64_t size = static_cast<uint64_t>(unit.ms);
    if (rest >= size) {
      out += std::to_string(rest / size);
      out += unit.suffix;
      rest %= size;
    }
  }
  return out;
}

namespace {

// Milliseconds per unit, or 0 for an unknown unit.
int64_t UnitMs(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return 86'400'000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "<digits>.<digits><unit>" in whole milliseconds, if it is one.
std::optional<int64_t> FractionalMs(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i])) ++i;
  if (i == 0 || i >= text.size() || text[i] != '.') return std::nullopt;
  const std::string_view whole = text.substr(0, i);
  size_t j = i + 1;
  while (j < text.size() && IsDigit(text[j])) ++j;
  const std::string_view fraction = text.substr(i + 1, j - i - 1);
  const int64_t unit = UnitMs(text.substr(j));
  if (fraction.empty() || unit == 0 || whole.size() > 6 ||
      fraction.size() > 6) {
    return std::nullopt;
  }
  // Exact decimal arithmetic: value = whole + fraction / 10^digits.
  int64_t scale = 1;
  for (size_t k = 0; k < fraction.size(); ++k) scale *= 10;
  int64_t numerator = 0;
  for (char c : whole) numerator = numerator * 10 + (c - '0');
  int64_t digits = 0;
  for (char c : fraction) digits = digits * 10 + (c - '0');
  numerator = numerator * scale + digits;
  if ((numerator * unit) % scale != 0) return std::nullopt;
  return numerator * unit / scale;
}

}  // namespace

std::string MalformedDurationHint(std::string_view text) {
  if (text.empty()) return "";
  if (text.front() == '-') return "durations are not negative";
  if (std::all_of(text.begin(), text.end(), IsDigit)) {
    return "a unit is needed: " + std::string(text) + "s or " +
           std::string(text) + "ms?";
  }
  if (const std::optional<int64_t> ms = FractionalMs(text)) {
    return "whole units only: " + FormatDuration(Duration(*ms));
  }
  if (text.find(' ') != std::string_view::npos) return "no spaces";
  return "units from the largest, e.g. 1h30m, 2d12h, 1s500ms";
}

std::string FormatApproxSeconds(double seconds) {
  constexpr double kHour = 3600, kDay = 86400, kYear = 365.25 * kDay;
  char text[48];
  if (seconds < kHour) {
    std::snprintf(text, sizeof(text), "%g s", seconds);
  } else if (seconds < 2 * kDay) {
    std::snprintf(text, sizeof(text), "%.3g h", seconds / kHour);
  } else if (seconds < kYear) {
    std::snprintf(text, sizeof(text), "%.3g days", seconds / kDay);
  } else {
    std::snprintf(text, sizeof(text), "%.3g years", seconds / kYear);
  }
  return text;
}

}  // namespace rankwatch
