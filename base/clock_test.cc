#include "base/clock.h"

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

TEST(RoundClockTest, WallTimeIsTheInnerClocksAtTheLastTick) {
  FakeClock inner(1'000);
  RoundClock clock(&inner);
  EXPECT_EQ(clock.NowMillis(), 1'000);  // Read at construction.
  inner.Set(4'000);
  EXPECT_EQ(clock.NowMillis(), 1'000);  // Not read again before a tick.
  clock.Tick();
  EXPECT_EQ(clock.NowMillis(), 4'000);
  inner.Advance(250);  // Wall 4,250, monotonic 250.
  EXPECT_EQ(clock.NowMillis(), 4'000);
  EXPECT_EQ(clock.MonotonicMillis(), 250);  // Always the inner clock's.
  clock.Tick();
  EXPECT_EQ(clock.NowMillis(), 4'250);
}

}  // namespace
}  // namespace rankwatch
