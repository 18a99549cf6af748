// RateLimiter: allows at most `per_second` events per second of monotonic
// time, for logs that a flood of bad input (rejected events, broker
// errors, failed logins) must not flood in turn. What it refuses is
// counted, so that the log can say how much it left out.
//
// Not thread-safe: each user owns one (or guards it with its own lock).
#ifndef RANKWATCH_BASE_RATE_LIMITER_H_
#define RANKWATCH_BASE_RATE_LIMITER_H_

#include <cstdint>

#include "base/clock.h"

namespace rankwatch {

class RateLimiter {
 public:
  // `clock` must outlive the limiter.
  RateLimiter(int32_t per_second, const Clock* clock)
      : per_second_(per_second), clock_(clock) {}

  // Whether one more event may pass in the current one-second window.
  bool Allow();
  // Events refused so far.
  int64_t suppressed() const { return suppressed_; }
  void set_per_second(int32_t per_second) { per_second_ = per_second; }

 private:
  int32_t per_second_;
  const Clock* clock_;
  int64_t window_start_ms_ = INT64_MIN;
  int32_t used_ = 0;
  int64_t suppressed_ = 0;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_RATE_LIMITER_H_
