#include "base/rate_limiter.h"

namespace rankwatch {

bool RateLimiter::Allow() {
  // An interval: monotonic, so a wall-clock step neither floods nor mutes.
  const int64_t now = clock_->MonotonicMillis();
  if (window_start_ms_ == INT64_MIN || now < window_start_ms_ ||
      now - window_start_ms_ >= 1000) {
    window_start_ms_ = now;
    used_ = 0;
  }
  if (used_ < per_second_) {
    ++used_;
    return true;
  }
  ++suppressed_;
  return false;
}

}  // namespace rankwatch
