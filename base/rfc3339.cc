#include "base/rfc3339.h"

#include <algorithm>
#include <cstdio>

namespace rankwatch {

namespace {

constexpr int64_t kMillisPerDay = 86'400'000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` decimal digits at s[pos].
bool ReadDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool CharAt(std::string_view s, size_t pos, char c) {
  return pos < s.size() && s[pos] == c;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant,
// "chrono-Compatible Low-Level Date Algorithms", days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int64_t year;
  int month;
  int day;
};

// The inverse of DaysFromCivil (Hinnant's civil_from_days).
CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

// "YYYY-MM-DD" at s[0], validated (months, leap years).
bool ParseFullDate(std::string_view s, int64_t* days) {
  int year, month, day;
  if (!ReadDigits(s, 0, 4, &year) || !CharAt(s, 4, '-') ||
      !ReadDigits(s, 5, 2, &month) || !CharAt(s, 7, '-') ||
      !ReadDigits(s, 8, 2, &day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) {
    return false;
  }
  *days = DaysFromCivil(year, month, day);
  return true;
}

// "hh:mm:ss" at s[pos]. A leap second (:60) is accepted and, as in POSIX
// time, lands on the next second.
bool ParsePartialTime(std::string_view s, size_t pos, int* seconds) {
  int hour, minute, second;
  if (!ReadDigits(s, pos, 2, &hour) || !CharAt(s, pos + 2, ':') ||
      !ReadDigits(s, pos + 3, 2, &minute) || !CharAt(s, pos + 5, ':') ||
      !ReadDigits(s, pos + 6, 2, &second)) {
    return false;
  }
  if (hour > 23 || minute > 59 || second > 60) return false;
  *seconds = hour * 3600 + minute * 60 + second;
  return true;
}

// Optional ".digits" at s[*pos]: milliseconds from the first three digits;
// further digits are truncated.
bool ParseFraction(std::string_view s, size_t* pos, int* millis) {
  *millis = 0;
  if (!CharAt(s, *pos, '.')) return true;
  const size_t start = ++*pos;
  int scale = 100;
  while (*pos < s.size() && IsDigit(s[*pos])) {
    *millis += (s[*pos] - '0') * scale;
    scale /= 10;
    ++*pos;
  }
  return *pos > start;
}

// The whole of `s` is "Z", "z", "+hh:mm" or "-hh:mm"; seconds east of UTC.
bool ParseOffset(std::string_view s, int* seconds) {
  if (s == "Z" || s == "z") {
    *seconds = 0;
    return true;
  }
  int hour, minute;
  if (s.size() != 6 || (s[0] != '+' && s[0] != '-') ||
      !ReadDigits(s, 1, 2, &hour) || s[3] != ':' ||
      !ReadDigits(s, 4, 2, &minute) || hour > 23 || minute > 59) {
    return false;
  }
  *seconds = (s[0] == '-' ? -1 : 1) * (hour * 3600 + minute * 60);
  return true;
}

}  // namespace

std::optional<int64_t> ParseRfc3339Millis(std::string_view s) {
  int64_t days;
  int seconds, millis, offset;
  size_t pos = 19;  // After "YYYY-MM-DDThh:mm:ss".
  // RFC 3339 §5.6 allows 't' and, in its note, a space for 'T'.
  const bool separator =
      CharAt(s, 10, 'T') || CharAt(s, 10, 't') || CharAt(s, 10, ' ');
  if (!ParseFullDate(s, &days) || !separator ||
      !ParsePartialTime(s, 11, &seconds) || !ParseFraction(s, &pos, &millis) ||
      !ParseOffset(s.substr(std::min(pos, s.size())), &offset)) {
    return std::nullopt;
  }
  return (days * 86400 + seconds - offset) * 1000 + millis;
}

std::string FormatRfc3339Millis(int64_t ms) {
  if (ms < kMinRfc3339Millis || ms > kMaxRfc3339Millis) {
    return std::to_string(ms);
  }
  // Floor division: a time before 1970 belongs to the previous day.
  int64_t days = ms / kMillisPerDay;
  int64_t in_day = ms % kMillisPerDay;
  if (in_day < 0) {
    --days;
    in_day += kMillisPerDay;
  }
  const CivilDate date = CivilFromDays(days);
  const int64_t seconds = in_day / 1000;
  const int millis = static_cast<int>(in_day % 1000);
  char buf[40];
  int n =
      std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02lld:%02lld:%02lld",
                    static_cast<long long>(date.year), date.month, date.day,
                    static_cast<long long>(seconds / 3600),
                    static_cast<long long>(seconds / 60 % 60),
                    static_cast<long long>(seconds % 60));
  if (millis != 0) {
    n += std::snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), ".%03d",
                       millis);
  }
  std::snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), "Z");
  return buf;
}

}  // namespace rankwatch
