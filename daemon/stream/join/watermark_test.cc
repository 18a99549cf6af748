#include "daemon/stream/join/watermark.h"

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

// Issue 40: a shard restored from a checkpoint written 15 s ago (the
// process was down for longer than the lateness and the idle timeout) must
// not close its windows from the wall clock before its backlog is read.
// Shard 0 (sources 0 and 1) is restored at event time 50 s; the wall clock
// reads 65 s.
TEST_F(WatermarkTest, RestoredShardClosesByEventsUntilCaughtUp) {
  clock_.Advance(15'000);
  // (The judgments' source first: each restore recomputes, and the shard's
  // event time never decreases.)
  w_.RestoreProgress(1, 49'000);
  w_.RestoreProgress(0, 50'000);
  EXPECT_EQ(w_.value(0), 48'900);  // min(50 s, 49 s) - 0.1 s.
  EXPECT_TRUE(w_.CatchingUp(0));
  // Ticks for a minute: nothing arrives (the backlog is not fetched yet).
  for (int i = 0; i < 60; ++i) {
    clock_.Advance(1000);
    w_.AdvanceWallClock();
  }
  EXPECT_EQ(w_.closing(0), 48'900);  // Not the wall clock's 124.9 s.
  // The backlog: the 15 s the process missed, by events only.
  w_.Observe(0, 60'000);
  w_.Observe(1, 58'000);
  EXPECT_EQ(w_.closing(0), 57'900);
  // Caught up: the judgments' source first, the results' still catching up.
  w_.SetIdle(1, true);
  EXPECT_TRUE(w_.CatchingUp(0));
  clock_.Advance(2000);
  w_.AdvanceWallClock();
  // The judgments' source released after its idle timeout, the results'
  // source alone holds: 60 s - 0.1 s, by events still.
  EXPECT_EQ(w_.closing(0), 59'900);
  w_.SetIdle(0, true);
  EXPECT_FALSE(w_.CatchingUp(0));
  // From here an idle stream closes by the wall clock as before: the last
  // event arrived at 125 s of wall time, 4 s ago: min(60 s, 125 s) + 4 s
  // - 0.1 s.
  clock_.Advance(2000);
  w_.AdvanceWallClock();
  EXPECT_EQ(w_.closing(0), 63'900);
}

// Only the restored shard waits: another shard of the same process, read
// live, keeps the idle advance.
TEST_F(WatermarkTest, OnlyTheRestoredShardWaitsForItsBacklog) {
  w_.RestoreProgress(2, 40'000);  // Shard 1's results source.
  w_.Observe(0, 50'000);          // Shard 0, live.
  w_.Observe(1, 50'000);
  w_.SetIdle(0, true);
  w_.SetIdle(1, true);
  clock_.Advance(3000);
  w_.AdvanceWallClock();
  // min(50 s, wall 50 s) + 3 s - 0.1 s for shard 0; shard 1 by events.
  EXPECT_EQ(w_.closing(0), 52'900);
  EXPECT_EQ(w_.closing(1), 39'900);
  // A restore after a source was reported idle still waits for the
  // backlog: the report was about the previous reading, not this one.
  w_.SetIdle(4, true);
  w_.RestoreProgress(4, 45'000);
  EXPECT_TRUE(w_.CatchingUp(2));
}

}  // namespace
}  // namespace rankwatch::stream
