#include "daemon/stream/watermark.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

// Lateness 100 ms, idle timeout 1 s throughout.
class WatermarkTest : public ::testing::Test {
 protected:
  FakeClock clock_{50'000};
  Watermark w_{100, 1000, &clock_};
};

TEST_F(WatermarkTest, MinimumOverSourcesMinusLateness) {
  EXPECT_EQ(w_.value(), INT64_MIN);
  w_.Observe(0, 5000);
  EXPECT_EQ(w_.value(), 4900);  // One source: 5000 - 100.
  w_.Observe(1, 3000);          // A slower source holds it back: no change.
  EXPECT_EQ(w_.value(), 4900);  // (never decreases)
  w_.Observe(0, 9000);
  EXPECT_EQ(w_.value(), 4900);  // min(9000, 3000) - 100 = 2900 < 4900.
  w_.Observe(1, 8000);
  EXPECT_EQ(w_.value(), 7900);  // min(9000, 8000) - 100.
  w_.Observe(1, 7000);          // Out of order within its source: no effect.
  EXPECT_EQ(w_.value(), 7900);
}

TEST_F(WatermarkTest, AddedSourceHoldsUntilItDeliversOrIsIdle) {
  w_.AddSource(1);
  w_.Observe(0, 5000);
  EXPECT_EQ(w_.value(), INT64_MIN);  // Source 1 has delivered nothing.
  w_.SetIdle(1, true);
  // Idle, it still holds for the idle timeout of wall time...
  EXPECT_EQ(w_.value(), INT64_MIN);
  clock_.Advance(999);
  w_.Observe(0, 5001);  // (Events keep coming: no wall-clock progress.)
  EXPECT_FALSE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), INT64_MIN);
  // ...then stops holding: 5001 - 100.
  clock_.Advance(1);
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), 4901);
}

TEST_F(WatermarkTest, IdleSourceHoldsAtItsNewestEventWhileBriefly) {
  // A lagging topic's partition is caught up between its producer's
  // writes: while it resumes within the idle timeout, the other source
  // cannot close windows past it.
  w_.AddSource(0);
  w_.AddSource(1);
  w_.Observe(0, 10'000);
  w_.Observe(1, 2000);
  EXPECT_EQ(w_.value(), 1900);
  w_.SetIdle(1, true);
  w_.Observe(0, 20'000);
  EXPECT_EQ(w_.value(), 1900);  // Held at 2000 - 100.
  clock_.Advance(500);
  w_.Observe(1, 2500);  // Resumes: active again, no older than allowed.
  EXPECT_EQ(w_.value(), 2400);
  w_.SetIdle(1, true);
  clock_.Advance(999);
  w_.Observe(0, 20'001);  // (Events keep coming: no wall-clock progress.)
  clock_.Advance(1);
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), 19'901);  // Released: only source 0 holds.
}

TEST_F(WatermarkTest, WallClockAdvancesAnIdleStream) {
  w_.Observe(0, 5000);
  clock_.Advance(999);
  EXPECT_FALSE(w_.AdvanceWallClock());
  clock_.Advance(1001);  // 2000 ms without events: 5000 + 2000 - 100.
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), 6900);
}

TEST_F(WatermarkTest, RestoredIsKeptApartAndNeverClosesWindows) {
  w_.Restore(100'000);
  w_.Restore(90'000);  // Never decreases.
  EXPECT_EQ(w_.restored(), 100'000);
  EXPECT_EQ(w_.value(), INT64_MIN);
  w_.Observe(0, 5000);
  EXPECT_EQ(w_.value(), 4900);
}

TEST_F(WatermarkTest, ExtremeTimesSaturate) {
  Watermark w(INT64_MAX, 1000, &clock_);
  w.Observe(0, -5);
  EXPECT_EQ(w.value(), INT64_MIN);  // -5 - INT64_MAX saturates.
  w_.Observe(0, INT64_MAX);
  EXPECT_EQ(w_.value(), INT64_MAX - 100);
  clock_.Advance(INT64_MAX / 2);
  // INT64_MAX + idle saturates at INT64_MAX, minus the lateness: unmoved.
  EXPECT_FALSE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), INT64_MAX - 100);
}

TEST_F(WatermarkTest, RemovedSourceNoLongerHolds) {
  w_.AddSource(0);
  w_.AddSource(1);
  w_.Observe(0, 9000);
  w_.Observe(1, 1000);
  EXPECT_EQ(w_.value(), 900);
  w_.RemoveSource(1);
  EXPECT_EQ(w_.value(), 8900);
}

}  // namespace
}  // namespace rankwatch::stream
