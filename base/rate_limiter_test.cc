#include "base/rate_limiter.h"

#include <gtest/gtest.h>

namespace rankwatch {
namespace {

TEST(RateLimiterTest, AllowsPerSecondThenCountsWhatItRefuses) {
  FakeClock clock;
  RateLimiter limiter(3, &clock);
  EXPECT_TRUE(limiter.Allow());
  EXPECT_TRUE(limiter.Allow());
  EXPECT_TRUE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
  EXPECT_EQ(limiter.suppressed(), 2);
  clock.Advance(999);  // Still the same one-second window.
  EXPECT_FALSE(limiter.Allow());
  clock.Advance(1);  // A new window: three more.
  EXPECT_TRUE(limiter.Allow());
  EXPECT_TRUE(limiter.Allow());
  EXPECT_TRUE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
  EXPECT_EQ(limiter.suppressed(), 4);
}

TEST(RateLimiterTest, AWallClockStepNeitherFloodsNorMutes) {
  FakeClock clock(1'000'000);
  RateLimiter limiter(1, &clock);
  EXPECT_TRUE(limiter.Allow());
  clock.Set(5'000'000);  // The wall clock jumps; the window does not end.
  EXPECT_FALSE(limiter.Allow());
  clock.Set(0);  // Nor when it jumps back.
  EXPECT_FALSE(limiter.Allow());
  clock.Advance(1000);
  EXPECT_TRUE(limiter.Allow());
}

TEST(RateLimiterTest, ANewRateAppliesToTheCurrentWindow) {
  FakeClock clock;
  RateLimiter limiter(1, &clock);
  EXPECT_TRUE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
  limiter.set_per_second(2);
  EXPECT_TRUE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
}

}  // namespace
}  // namespace rankwatch
