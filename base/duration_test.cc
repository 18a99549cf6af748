#include "base/duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace rankwatch {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(DurationTest, Parse) {
  EXPECT_EQ(ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(ParseDuration("30s"), seconds(30));
  EXPECT_EQ(ParseDuration("5m"), minutes(5));
  EXPECT_EQ(ParseDuration("1h"), hours(1));
  EXPECT_EQ(ParseDuration("2d"), hours(48));
  EXPECT_EQ(ParseDuration("1h30m"), minutes(90));
  EXPECT_EQ(ParseDuration("1d2h3m4s5ms"),
            hours(26) + minutes(3) + seconds(4) + milliseconds(5));
  EXPECT_EQ(ParseDuration("0s"), Duration(0));
  EXPECT_EQ(ParseDuration("90m"), minutes(90));
  EXPECT_EQ(ParseDuration("3650d"), kMaxDuration);
  for (std::string_view bad :
       {"", "30", "0", "s", "5", "5x", "5 m", " 5m", "5m ", "-5m", "+5m",
        "1.5h", "30m1h", "1m1m", "5ms1s", "1hh", "5M", "3651d",
        "99999999999999999999999ms"}) {
    EXPECT_EQ(ParseDuration(bad), std::nullopt) << bad;
  }
}

TEST(DurationTest, FormatIsTheShortestCompoundForm) {
  EXPECT_EQ(FormatDuration(Duration(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatDuration(minutes(90)), "1h30m");
  EXPECT_EQ(FormatDuration(hours(48)), "2d");
  EXPECT_EQ(FormatDuration(seconds(-5)), "-5s");
  for (int64_t ms : {1, 999, 1000, 61'000, 3'600'001, 86'400'000 * 3 + 7}) {
    EXPECT_EQ(ParseDuration(FormatDuration(Duration(ms))), Duration(ms)) << ms;
  }
}

// Expected values by hand: d = 86,400,000 ms, h = 3,600,000, m = 60,000,
// s = 1,000.
TEST(DurationTest, ParseDurationMsValues) {
  struct Case {
    std::string_view text;
    int64_t ms;
  };
  for (const Case& c : {
           Case{"0s", 0},
           Case{"0d0h0m0s0ms", 0},
           Case{"1ms", 1},
           Case{"250ms", 250},
           Case{"1s", 1'000},
           Case{"1s500ms", 1'500},
           Case{"1m30s", 90'000},
           Case{"90s", 90'000},  // Any count per unit; no carry needed.
           Case{"2h", 7'200'000},
           // 86,400,000 + 7,200,000 + 180,000 + 4,000 + 5.
           Case{"1d2h3m4s5ms", 93'784'005},
           Case{"1d5ms", 86'400'005},  // Units may be skipped.
           Case{"007s", 7'000},        // Leading zeros are digits.
           // The maximum, 3650 d = 315,360,000,000 ms, in several forms.
           Case{"3650d", 315'360'000'000},
           Case{"87600h", 315'360'000'000},
           Case{"315360000000ms", 315'360'000'000},
           Case{"3649d24h", 315'360'000'000},  // 24 h: no carry needed.
           Case{"3649d23h59m59s999ms", 315'359'999'999},
       }) {
    SCOPED_TRACE(c.text);
    int64_t ms = -1;
    ASSERT_EQ(ParseDurationMs(c.text, &ms), DurationError::kNone);
    EXPECT_EQ(ms, c.ms);
  }
  EXPECT_EQ(kMaxDuration.count(), 315'360'000'000);
}

TEST(DurationTest, ParseDurationMsTooLarge) {
  for (std::string_view text : {
           "3651d",
           "3650d1ms",  // One past the maximum.
           "87600h1ms", "315360000001ms",
           "3649d24h1ms",  // 3649 d + 24 h is the maximum; 1 ms more is not.
           "9223372036854775807ms",  // INT64_MAX: fits, but too long.
           "9223372036854775808ms",  // INT64_MAX + 1: does not fit.
           "99999999999999999999999ms",
           "106751991167d",  // Would overflow int64 once multiplied.
       }) {
    SCOPED_TRACE(text);
    int64_t ms = -1;
    EXPECT_EQ(ParseDurationMs(text, &ms), DurationError::kTooLarge);
    EXPECT_EQ(ms, -1);  // Left alone.
  }
}

TEST(DurationTest, ParseDurationMsMalformed) {
  for (std::string_view text : {
           "",      "30",   "s",     "ms",   "5x",    "5 m", " 5m",
           "5m ",   "-5m",  "+5m",   "1.5h", "1e3ms", "5M",  "5S",
           "30m1h",  // Units out of order.
           "1m1m",   // A unit twice.
           "5ms1s",
           "1s5",  // A trailing number without a unit.
           "1hh",   "5mss", "1d_2h",
       }) {
    SCOPED_TRACE(text);
    int64_t ms = -1;
    EXPECT_EQ(ParseDurationMs(text, &ms), DurationError::kMalformed);
    EXPECT_EQ(ms, -1);  // Left alone.
  }
}

TEST(DurationTest, FormatExtremes) {
  EXPECT_EQ(FormatDuration(kMaxDuration), "3650d");
  EXPECT_EQ(FormatDuration(Duration(93'784'005)), "1d2h3m4s5ms");
  EXPECT_EQ(FormatDuration(Duration(86'400'005)), "1d5ms");
  EXPECT_EQ(FormatDuration(Duration(-1)), "-1ms");
  // 2^63 ms = 106,751,991,167 d + 25,975,808 ms, and 25,975,808 ms =
  // 7 h + 12 m + 55 s + 808 ms: the most negative value has no positive
  // counterpart, and still prints.
  EXPECT_EQ(FormatDuration(Duration(std::numeric_limits<int64_t>::min())),
            "-106751991167d7h12m55s808ms");
}

// What a user who wrote a malformed duration probably meant: the exact
// whole-unit form of a decimal (1.5 h = 90 min; 0.1 s = 100 ms; 1.0001 s is
// not a whole number of milliseconds: no guess).
TEST(DurationTest, MalformedDurationHint) {
  EXPECT_EQ(MalformedDurationHint("1.5h"), "whole units only: 1h30m");
  EXPECT_EQ(MalformedDurationHint("0.1s"), "whole units only: 100ms");
  EXPECT_EQ(MalformedDurationHint("1.0001s"),
            "units from the largest, e.g. 1h30m, 2d12h, 1s500ms");
  EXPECT_EQ(MalformedDurationHint("15"), "a unit is needed: 15s or 15ms?");
  EXPECT_EQ(MalformedDurationHint("-1s"), "durations are not negative");
  EXPECT_EQ(MalformedDurationHint("1 h"), "no spaces");
  EXPECT_EQ(MalformedDurationHint(""), "");
}

}  // namespace
// Expected: the division by hand (an hour 3600 s, a day 86400 s, a year
// 365.25 x 86400 = 31557600 s), to three significant digits.
TEST(DurationTest, FormatApproxSeconds) {
  EXPECT_EQ(FormatApproxSeconds(0.001), "0.001 s");
  EXPECT_EQ(FormatApproxSeconds(300.001), "300.001 s");
  EXPECT_EQ(FormatApproxSeconds(3599), "3599 s");
  EXPECT_EQ(FormatApproxSeconds(3600), "1 h");
  EXPECT_EQ(FormatApproxSeconds(95'400), "26.5 h");        // 95400 / 3600.
  EXPECT_EQ(FormatApproxSeconds(172'800), "2 days");       // 2 x 86400.
  EXPECT_EQ(FormatApproxSeconds(3'905'280), "45.2 days");  // 45.2 x 86400.
  // 2030-01-01 seen from 2026-12-07T05:00Z: 96849000 s / 31557600.
  EXPECT_EQ(FormatApproxSeconds(96'849'000), "3.07 years");
  EXPECT_EQ(FormatApproxSeconds(9.22337e15), "2.92e+08 years");
}

}  // namespace rankwatch
