#include "base/rfc3339.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rankwatch {
namespace {

// Expected values: date -u -d '<the same date-time>' +%s, times 1000, plus
// the milliseconds.
TEST(Rfc3339Test, ValidDateTimes) {
  struct Case {
    std::string_view text;
    int64_t ms;
  };
  const Case cases[] = {
      // date -u -d '2025-11-22T10:00:00Z' +%s -> 1763805600
      {"2025-11-22T10:00:00Z", 1763805600000},
      {"2025-11-22t10:00:00z", 1763805600000},
      {"2025-11-22 10:00:00Z", 1763805600000},
      {"2025-11-22T10:00:00.1Z", 1763805600100},
      {"2025-11-22T10:00:00.12Z", 1763805600120},
      {"2025-11-22T10:00:00.123Z", 1763805600123},
      {"2025-11-22T10:00:00.123999999999Z", 1763805600123},  // Truncated.
      {"2025-11-22T10:00:00-00:00", 1763805600000},
      // date -u -d '2025-11-22T10:00:00+01:00' +%s -> 1763802000
      {"2025-11-22T10:00:00+01:00", 1763802000000},
      // date -u -d '2025-11-22T10:00:00-05:30' +%s -> 1763825400
      {"2025-11-22T10:00:00.5-05:30", 1763825400500},
      // date -u -d '2025-11-22T00:30:00+01:00' +%s -> 1763767800 (the UTC
      // date is the previous day).
      {"2025-11-22T00:30:00+01:00", 1763767800000},
      // date -u -d '2024-02-29T23:59:59Z' +%s -> 1709251199
      {"2024-02-29T23:59:59.999Z", 1709251199999},
      // date -u -d '2000-02-29T00:00:00Z' +%s -> 951782400
      {"2000-02-29T00:00:00Z", 951782400000},
      {"1970-01-01T00:00:00Z", 0},
      // date -u -d '1969-12-31T23:59:59Z' +%s -> -1
      {"1969-12-31T23:59:59Z", -1000},
      // date -u -d '1600-03-01T00:00:00Z' +%s -> -11670912000
      {"1600-03-01T00:00:00Z", -11670912000000},
      // A leap second lands on the next second, as in POSIX time:
      // date -u -d '2017-01-01T00:00:00Z' +%s -> 1483228800
      {"2016-12-31T23:59:60Z", 1483228800000},
      // date -u -d '9999-12-31T23:59:59Z' +%s -> 253402300799
      {"9999-12-31T23:59:59Z", 253402300799000},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseRfc3339Millis(c.text), std::optional<int64_t>(c.ms))
        << c.text;
  }
}

TEST(Rfc3339Test, InvalidDateTimes) {
  for (std::string_view text : {
           "",
           "2025-11-22",
           "2025-11-22T10:00Z",
           "2025-11-22T10:00:00",  // No offset.
           "2025-11-22T10:00:00Zx",
           "2025-11-22T10:00:00.Z",
           "2025-11-22T10:00:00,5Z",
           "2025-11-22X10:00:00Z",
           "2025-11-22T10:00:00+0100",
           "2025-11-22T10:00:00+01",
           "2025-11-22T10:00:00+24:00",
           "2025-11-22T10:00:00+01:60",
           "2025-11-22T10:00:00 Z",
           " 2025-11-22T10:00:00Z",
           "2025-1-22T10:00:00Z",
           "+2025-11-22T10:00:00Z",
           "2025-13-01T00:00:00Z",
           "2025-00-10T00:00:00Z",
           "2025-04-31T00:00:00Z",
           "2025-04-00T00:00:00Z",
           "2023-02-29T00:00:00Z",  // Not a leap year.
           "1900-02-29T00:00:00Z",  // Divisible by 100, not by 400.
           "2025-11-22T24:00:00Z",
           "2025-11-22T10:60:00Z",
           "2025-11-22T10:00:61Z",
           "2025-11-22T1a:00:00Z",
       }) {
    EXPECT_EQ(ParseRfc3339Millis(text), std::nullopt) << text;
  }
}

// Expected texts: date -u -d @<ms / 1000> +%Y-%m-%dT%H:%M:%S, plus the
// milliseconds when there are any.
TEST(Rfc3339Test, FormatIsUtcWithMillisecondsOnlyWhenNeeded) {
  struct Case {
    int64_t ms;
    std::string_view text;
  };
  const Case cases[] = {
      {0, "1970-01-01T00:00:00Z"},
      {1, "1970-01-01T00:00:00.001Z"},
      {999, "1970-01-01T00:00:00.999Z"},
      // date -u -d @1763805600 -> 2025-11-22T10:00:00
      {1763805600000, "2025-11-22T10:00:00Z"},
      {1763805600120, "2025-11-22T10:00:00.120Z"},
      // date -u -d @1709251199 -> 2024-02-29T23:59:59
      {1709251199999, "2024-02-29T23:59:59.999Z"},
      // date -u -d @951782400 -> 2000-02-29T00:00:00
      {951782400000, "2000-02-29T00:00:00Z"},
      // Before 1970 the day still starts at midnight: date -u -d @-1 ->
      // 1969-12-31T23:59:59.
      {-1000, "1969-12-31T23:59:59Z"},
      {-1, "1969-12-31T23:59:59.999Z"},
      // date -u -d @-11670912000 -> 1600-03-01T00:00:00
      {-11670912000000, "1600-03-01T00:00:00Z"},
      // The ends of four-digit years: date -u -d 0000-01-01T00:00:00Z +%s
      // -> -62167219200; date -u -d 9999-12-31T23:59:59Z +%s ->
      // 253402300799.
      {kMinRfc3339Millis, "0000-01-01T00:00:00Z"},
      {kMaxRfc3339Millis, "9999-12-31T23:59:59.999Z"},
      // Beyond them: the number itself.
      {kMaxRfc3339Millis + 1, "253402300800000"},
      {kMinRfc3339Millis - 1, "-62167219200001"},
      {INT64_MAX, "9223372036854775807"},
      {INT64_MIN, "-9223372036854775808"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatRfc3339Millis(c.ms), c.text) << c.ms;
  }
  EXPECT_EQ(kMinRfc3339Millis, -62167219200000);
  EXPECT_EQ(kMaxRfc3339Millis, 253402300799999);
}

// Every 997th millisecond of a day read back, and a day every 997 days
// across the whole range: the formatter and the parser agree everywhere.
TEST(Rfc3339Test, FormatRoundTripsThroughParse) {
  constexpr int64_t kDay = 86'400'000;
  for (int64_t ms = 0; ms < kDay; ms += 997) {
    ASSERT_EQ(ParseRfc3339Millis(FormatRfc3339Millis(ms)),
              std::optional<int64_t>(ms));
  }
  for (int64_t ms = kMinRfc3339Millis; ms <= kMaxRfc3339Millis;
       ms += 997 * kDay + 12'345) {
    ASSERT_EQ(ParseRfc3339Millis(FormatRfc3339Millis(ms)),
              std::optional<int64_t>(ms))
        << FormatRfc3339Millis(ms);
  }
}

}  // namespace
}  // namespace rankwatch
