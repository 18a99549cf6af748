// Durations as written in the configuration and on command lines: one or
// more `<integer><unit>` with units d, h, m, s, ms in decreasing order, e.g.
// 250ms, 30s, 5m, 1h30m, 2d. A bare number is not a duration (the unit
// would be a guess). Parsed by the configuration and the command lines,
// formatted by the hot path's messages, the Kafka layer and the exporter's
// labels: in base so that none of them depends on another for it.
// Stateless and thread-safe.
#ifndef RANKWATCH_BASE_DURATION_H_
#define RANKWATCH_BASE_DURATION_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rankwatch {

using Duration = std::chrono::milliseconds;

// The longest duration accepted, so that event times plus durations never
// overflow.
inline constexpr Duration kMaxDuration = std::chrono::hours(24 * 3650);

// Why ParseDurationMs() refused a text: callers word the two differently.
enum class DurationError {
  kNone,
  kMalformed,  // Not `<integer><unit>`..., or units out of order.
  kTooLarge,   // Well-formed but longer than kMaxDuration.
};

// Parses `text` into milliseconds in `*out` (left alone on error).
DurationError ParseDurationMs(std::string_view text, int64_t* out);

// ParseDurationMs() for callers that need no reason: nullopt when malformed
// or longer than kMaxDuration.
std::optional<Duration> ParseDuration(std::string_view text);

// Why a text ParseDurationMs() found malformed is not a duration, for a
// user who wrote "1.5h", "30", "-5m" or "30m1h": a few words with the
// duration meant when it is clear ("whole units only: 1h30m"), else "".
std::string MalformedDurationHint(std::string_view text);

// The inverse of ParseDuration: the shortest compound form (90000 ms is
// "1m30s", 0 is "0s"); a negative duration gets a leading '-'.
std::string FormatDuration(Duration d);

// A span of `seconds` (>= 0) for a person reading a message, to three
// significant digits: seconds below an hour as they are ("300.001 s"),
// then hours ("26.5 h"), days ("45.2 days") and years of 365.25 days
// ("3.07 years"), so that a date a few years off reads as such, not as
// "9.68499e+07 s".
std::string FormatApproxSeconds(double seconds);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_DURATION_H_
