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

TEST_F(WatermarkTest, WallClockClosesTheWindowsOfAnIdleStream) {
  w_.Observe(0, 5000);
  clock_.Advance(999);
  EXPECT_FALSE(w_.AdvanceWallClock());
  clock_.Advance(1001);  // 2000 ms without events: 5000 + 2000 - 100.
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.closing(), 6900);
  // Lateness stays with event time: 5000 - 100.
  EXPECT_EQ(w_.value(), 4900);
}

// Issue 22: history backfilled into Kafka pauses longer than the idle
// timeout; the events after the pause continue where it stopped and are
// not late merely because the wall clock moved on. The advance closed the
// windows while idle, and ends with the next event.
TEST_F(WatermarkTest, EventsFromThePastAfterALullAreNotLate) {
  w_.Observe(0, 5000);
  clock_.Advance(60'000);  // A minute without events.
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.closing(), 5000 + 60'000 - 100);
  w_.Observe(0, 5200);          // The backfill resumes where it was.
  EXPECT_EQ(w_.value(), 5100);  // 5200 - 100: 5200 is not late.
  EXPECT_EQ(w_.closing(), 5100);
}

// Issue 22's measurement: one results event stamped 4 minutes ahead of the
// wall clock (inside max_future_skew), then a 15 s lull longer than the
// idle timeout with every partition caught up, then a burst stamped with
// the true time. The watermark used to jump to the outlier and drop the
// whole burst as late.
TEST_F(WatermarkTest, AnOutlierFromAFastClockDoesNotCarryItAfterALull) {
  // The wall clock reads 50 s; partitions 0 and 1 deliver at 49.9 s and
  // 50 s, partition 1 then one event at 50 s + 4 min.
  w_.AddSource(0);
  w_.AddSource(1);
  w_.Observe(0, 49'900);
  w_.Observe(1, 50'000);
  w_.Observe(1, 290'000);
  EXPECT_EQ(w_.value(), 49'800);  // Partition 0 holds: 49.9 s - 0.1 s.
  w_.SetIdle(0, true);
  w_.SetIdle(1, true);
  clock_.Advance(15'000);  // The lull: both released, no events at all.
  w_.AdvanceWallClock();
  // Event time is at most the wall clock now (65 s), minus the lateness.
  EXPECT_EQ(w_.value(), 64'900);
  // Windows close from the wall clock when the last event arrived (50 s),
  // not from 290 s: 50 s + 15 s - 0.1 s.
  EXPECT_EQ(w_.closing(), 64'900);
  // The burst, stamped with the true time, is not late.
  w_.Observe(0, 65'000);
  EXPECT_GE(65'000, w_.value());
}

TEST_F(WatermarkTest, RestoredIsKeptPerSourceAndNeverClosesWindows) {
  w_.Restore(0, 100'000);
  w_.Restore(0, 90'000);  // Never decreases.
  w_.Restore(3, 20'000);
  EXPECT_EQ(w_.restored(0), 100'000);
  EXPECT_EQ(w_.restored(3), 20'000);
  EXPECT_EQ(w_.restored(1), INT64_MIN);
  EXPECT_EQ(w_.restored(99), INT64_MIN);
  EXPECT_EQ(w_.value(), INT64_MIN);
  w_.Observe(0, 5000);
  EXPECT_EQ(w_.value(), 4900);
  w_.RemoveSource(0);  // Revoked: its restored watermark goes too.
  EXPECT_EQ(w_.restored(0), INT64_MIN);
}

TEST_F(WatermarkTest, ExtremeTimesSaturate) {
  Watermark w(INT64_MAX, 1000, &clock_);
  w.Observe(0, -5);
  EXPECT_EQ(w.value(), INT64_MIN);  // -5 - INT64_MAX saturates.
  // The newest event time is capped at the wall clock (a source's clock
  // far ahead does not carry event time): wall clock minus the lateness.
  w_.Observe(0, INT64_MAX);
  EXPECT_EQ(w_.value(), clock_.NowMillis() - 100);
  clock_.Advance(INT64_MAX / 2);
  // INT64_MAX + idle saturates; the wall clock still caps the source.
  EXPECT_TRUE(w_.AdvanceWallClock());
  EXPECT_EQ(w_.value(), clock_.NowMillis() - 100);
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
