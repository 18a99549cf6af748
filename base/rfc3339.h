// RFC 3339 date-times <-> epoch milliseconds: event timestamps on the hot
// path (daemon/stream/decode/event_decoder.cc, json_scalar.cc), the
// `events.min_timestamp` key of the configuration and the log's times. In
// base because those libraries sit on different floors and none may
// depend on another for it. Stateless and thread-safe.
#ifndef RANKWATCH_BASE_RFC3339_H_
#define RANKWATCH_BASE_RFC3339_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rankwatch {

// The times a four-digit year can express: 0000-01-01T00:00:00.000Z and
// 9999-12-31T23:59:59.999Z.
inline constexpr int64_t kMinRfc3339Millis = -62'167'219'200'000;
inline constexpr int64_t kMaxRfc3339Millis = 253'402'300'799'999;

// Parses an RFC 3339 date-time ("2025-11-22T10:00:00.123Z", offsets
// allowed; 't', 'z' and a space for 'T' too) into epoch milliseconds.
// Digits of the fraction beyond milliseconds are truncated; a leap second
// (:60) lands on the next second, as in POSIX time. nullopt when malformed
// or not a valid calendar date.
std::optional<int64_t> ParseRfc3339Millis(std::string_view s);

// `ms` as an RFC 3339 UTC date-time that ParseRfc3339Millis reads back:
// "2025-11-22T10:00:00Z", or "2025-11-22T10:00:00.123Z" when `ms` is not a
// whole second. A time outside [kMinRfc3339Millis, kMaxRfc3339Millis] has
// no such form and is written as its decimal number of milliseconds.
std::string FormatRfc3339Millis(int64_t ms);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_RFC3339_H_
