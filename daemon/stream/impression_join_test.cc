#include "daemon/stream/impression_join.h"

#include <algorithm>

#include "daemon/stream/join_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using testing::Judgments;
using testing::RecordingListener;
using testing::Results;
constexpr metrics::Grade U = metrics::kUnjudged;

// Window 10 s, lateness 1 s, idle timeout 5 s: a request served at t is
// finalized once an event at t + 11 s or later has been seen.
class ImpressionJoinTest : public ::testing::Test {
 protected:
  ImpressionJoinTest() {
    config_.window = std::chrono::seconds(10);
    config_.allowed_lateness = std::chrono::seconds(1);
    config_.idle_timeout = std::chrono::seconds(5);
    config_.max_pending_requests = 3;
  }
  ImpressionJoin& join() {
    if (!join_)
      join_ = std::make_unique<ImpressionJoin>(config_, &clock_, &listener_);
    return *join_;
  }
  bool Res(const std::string& id, int64_t t, std::vector<std::string> docs,
           int64_t offset, int32_t partition = 0) {
    auto r = Results(id, t, docs);
    return join().OnResults(r.event, 0, EventOrigin{partition, offset});
  }
  bool Jud(const std::string& id, int64_t t,
           std::vector<std::pair<std::string, std::optional<int32_t>>> g,
           int64_t offset, int32_t partition = 0) {
    auto j = Judgments(id, t, g);
    return join().OnJudgments(j.event, EventOrigin{partition, offset});
  }

  config::JoinConfig config_;
  FakeClock clock_{1'000'000};
  RecordingListener listener_;
  std::unique_ptr<ImpressionJoin> join_;
};

TEST_F(ImpressionJoinTest, JoinsWithinWindowAndFinalizesOnWatermark) {
  EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c"}, 1));
  EXPECT_TRUE(Jud("r1", 2000, {{"b", 1}, {"z", 2}}, 2));  // z: not served.
  EXPECT_TRUE(Res("r2", 11'999, {"a"}, 3));               // Watermark 10.999 s.
  EXPECT_TRUE(listener_.finalized.empty());
  EXPECT_TRUE(Res("r3", 12'000, {"a"}, 4));  // Watermark 11 s: r1 closes.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  const auto& f = listener_.finalized[0];
  EXPECT_EQ(f.request_id, "r1");
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{U, 1, U}));
  EXPECT_EQ(f.judged, (std::vector<metrics::Grade>{1, 2}));
  EXPECT_EQ(f.served_ms, 1000);
  EXPECT_EQ(f.closed_ms, 11'000);
  EXPECT_EQ(f.cause, FinalizeCause::kWindowClosed);
  EXPECT_EQ(listener_.released, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(join().pending_requests(), 2);
  EXPECT_EQ(join().counters().finalized, 1);
}

TEST_F(ImpressionJoinTest, EarlyJudgmentsWaitForTheirResults) {
  EXPECT_TRUE(Jud("r1", 1000, {{"b", 2}}, 1));
  EXPECT_TRUE(Res("r1", 1500, {"a", "b"}, 2));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked, (std::vector<metrics::Grade>{U, 2}));
  EXPECT_EQ(listener_.finalized[0].cause, FinalizeCause::kEndOfInput);
  EXPECT_EQ(join().counters().orphaned_judgments, 0);
}

TEST_F(ImpressionJoinTest, LateJudgmentsAreCountedAndDropped) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1));
  EXPECT_TRUE(Res("r2", 20'000, {"a"}, 2));  // r1 finalized.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  // After finalization: older than the watermark (19 s) -> late.
  EXPECT_FALSE(Jud("r1", 5000, {{"a", 1}, {"b", 1}}, 3));
  EXPECT_EQ(join().counters().late_judgments, 2);
  // While pending but outside r2's window (served 20 s, window 10 s).
  EXPECT_FALSE(Jud("r2", 30'001, {{"a", 1}}, 4));
  EXPECT_EQ(join().counters().late_judgments, 3);
  // The watermark is now 29.001 s: r2 (deadline 30 s) is still pending, and
  // finalizes without the late judgment.
  EXPECT_EQ(listener_.finalized.size(), 1u);
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 2u);
  EXPECT_EQ(listener_.finalized[1].ranked, (std::vector<metrics::Grade>{U}));
}

TEST_F(ImpressionJoinTest, LateResultsAndDuplicates) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1));
  EXPECT_FALSE(Res("r1", 1000, {"a"}, 2));
  EXPECT_EQ(join().counters().duplicate_results, 1);
  EXPECT_TRUE(Res("r2", 50'000, {"a"}, 3));   // Watermark 49 s.
  EXPECT_FALSE(Res("r3", 30'000, {"a"}, 4));  // Window ended at 40 s.
  EXPECT_EQ(join().counters().late_results, 1);
}

TEST_F(ImpressionJoinTest, EvictsEarliestDeadlineWhenFull) {
  EXPECT_TRUE(Res("r1", 1300, {"a"}, 1));
  EXPECT_TRUE(Res("r2", 1000, {"a"}, 2));
  EXPECT_TRUE(Jud("r3", 1200, {{"a", 1}}, 3));  // An orphan also counts.
  EXPECT_TRUE(Res("r4", 1400, {"a"}, 4));       // Full (3): r2 is evicted.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].request_id, "r2");
  EXPECT_EQ(listener_.finalized[0].cause, FinalizeCause::kEvicted);
  EXPECT_TRUE(Res("r5", 1500, {"a"}, 5));  // Next earliest: orphan r3.
  EXPECT_EQ(join().counters().evicted, 2);
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
  EXPECT_EQ(listener_.finalized.size(), 1u);  // Orphans are not scored.
  EXPECT_EQ(join().pending_requests(), 3);
}

TEST_F(ImpressionJoinTest, OrphanedJudgmentsExpire) {
  EXPECT_TRUE(Jud("r9", 1000, {{"a", 1}}, 1));
  EXPECT_TRUE(Res("r1", 12'500, {"a"}, 2));  // Watermark 11.5 s > 11 s.
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
  EXPECT_TRUE(listener_.finalized.empty());
  EXPECT_EQ(listener_.released, (std::vector<int64_t>{1}));
}

TEST_F(ImpressionJoinTest, IdleStreamFinalizesOnWallClock) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1));
  clock_.Advance(4'000);  // Not idle long enough.
  join().AdvanceWallClock();
  EXPECT_TRUE(listener_.finalized.empty());
  // Idle for 11 s: event time is taken to have advanced 11 s too, to
  // 1 + 11 - 1 (lateness) = 11 s, which closes r1's window.
  clock_.Advance(7'000);
  join().AdvanceWallClock();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].cause, FinalizeCause::kIdle);
  EXPECT_EQ(join().watermark_ms(), 11'000);
}

TEST_F(ImpressionJoinTest, CombineMaxOrLastAndNullDeletes) {
  for (config::CombineRule rule :
       {config::CombineRule::kMax, config::CombineRule::kLast}) {
    config_.combine = rule;
    join_.reset();
    listener_.finalized.clear();
    EXPECT_TRUE(Res("r1", 1000, {"a", "b"}, 1));
    EXPECT_TRUE(Jud("r1", 1100, {{"a", 1}, {"b", 1}}, 2));
    EXPECT_TRUE(Jud("r1", 1200, {{"a", 3}}, 3));
    EXPECT_TRUE(Jud("r1", 1300, {{"a", 2}, {"b", std::nullopt}}, 4));
    join().FinishAll();
    ASSERT_EQ(listener_.finalized.size(), 1u);
    const metrics::Grade a = rule == config::CombineRule::kMax ? 3 : 2;
    EXPECT_EQ(listener_.finalized[0].ranked,
              (std::vector<metrics::Grade>{a, U}));
    EXPECT_EQ(listener_.finalized[0].judged, (std::vector<metrics::Grade>{a}));
  }
}

TEST_F(ImpressionJoinTest, DropPartitionsForgetsWithoutReleasing) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1, /*partition=*/0));
  EXPECT_TRUE(Res("r2", 1000, {"a"}, 1, /*partition=*/1));
  EXPECT_TRUE(Jud("r3", 1000, {{"a", 1}}, 2, /*partition=*/1));
  const int32_t revoked[] = {1};
  join().DropPartitions(revoked);
  EXPECT_EQ(join().counters().dropped_on_rebalance, 2);
  EXPECT_EQ(join().pending_requests(), 1);
  EXPECT_TRUE(listener_.released.empty());
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].request_id, "r1");
}

}  // namespace
}  // namespace rankwatch::stream

namespace rankwatch::stream {
namespace {

// After a restart the new owner restores the watermark its predecessor
// committed: what the predecessor finalized is re-read and skipped as
// replayed, not counted as late and not scored twice.
TEST(ImpressionJoinRestoreTest, ReplayedEventsAreSkipped) {
  config::JoinConfig config;
  config.window = std::chrono::seconds(10);
  config.allowed_lateness = std::chrono::seconds(0);
  FakeClock clock(0);
  testing::RecordingListener listener;
  ImpressionJoin join(config, &clock, &listener);
  join.RestoreWatermark(20'000);  // r1 (served at 1 s) was finalized.
  auto r1 = testing::Results("r1", 1000, {"a"});
  auto j1 = testing::Judgments("r1", 2000, {{"a", 1}});
  EXPECT_FALSE(join.OnResults(r1.event, 0, EventOrigin{0, 1, true}));
  EXPECT_FALSE(join.OnJudgments(j1.event, EventOrigin{0, 2, true}));
  EXPECT_EQ(join.counters().replayed, 2);
  EXPECT_EQ(join.counters().late_results, 0);
  EXPECT_EQ(join.counters().late_judgments, 0);
  // A request still pending at the restart (served at 15 s) is joined.
  auto r2 = testing::Results("r2", 15'000, {"a"});
  EXPECT_TRUE(join.OnResults(r2.event, 0, EventOrigin{0, 3, true}));
  join.FinishAll();
  ASSERT_EQ(listener.finalized.size(), 1u);
  EXPECT_EQ(listener.finalized[0].request_id, "r2");
}

}  // namespace
}  // namespace rankwatch::stream
