// Arithmetic on event times (epoch milliseconds) that cannot overflow.
//
// Event times come from producers: a timestamp of INT64_MAX is a valid
// JSON integer, and `served + window` on it is undefined behaviour in
// C++. Every sum of an event time and a duration (window, lateness, delay,
// tolerance) goes through these, saturating at the int64 range, so a
// hostile or broken timestamp can only ever mean "very far away".
#ifndef RANKWATCH_BASE_SATURATING_H_
#define RANKWATCH_BASE_SATURATING_H_

#include <cstdint>
#include <limits>

namespace rankwatch {

// a + b, clamped to [INT64_MIN, INT64_MAX].
constexpr int64_t SatAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

// a - b, clamped to [INT64_MIN, INT64_MAX].
constexpr int64_t SatSub(int64_t a, int64_t b) {
  int64_t difference;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

// a / b rounded towards minus infinity (b > 0): the bucket of an event
// time, also before 1970.
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_SATURATING_H_
