#include "daemon/kafka/ingest_state.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

// A consumer status as the loop leaves it when all is well at `now`.
IngestState Consuming(int64_t now) {
  IngestState s;
  s.consuming = true;
  s.assigned = true;
  s.last_poll_mono_ms = now;
  s.not_ready_after_ms = 3000;
  s.stalest_fetch = FetchLag{"results", 2, now, true};
  return s;
}

TEST(IngestStateTest, ReasonsInTheOrderTheyAreChecked) {
  IngestState s;
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kNotConsuming);
  s.assigned = true;
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kNotConsuming);
  s.assigned = false;
  s.consuming = true;
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kNotAssigned);
  s.assigned = true;
  // No loop watched, no partition tracked: no stall check.
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kReady);
  EXPECT_TRUE(s.ready(0));
}

// Issue 40: a changelog that cannot be prepared is why a replica does not
// start consuming: its reason comes before not_consuming (but after an
// unreachable broker, the cause of everything).
TEST(IngestStateTest, StateProblemBeforeConsumingComesFirst) {
  IngestState s;
  s.state_problem = "changelog topic 'c' has cleanup.policy=delete";
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kStateUnavailable);
  EXPECT_EQ(s.ReadinessMessage(0),
            "not ready (state_unavailable): changelog topic 'c' has "
            "cleanup.policy=delete");
  s.brokers_down = BrokersDown{"127.0.0.1:1", "Connection refused", false};
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kBrokerUnreachable);
}

TEST(IngestStateTest, LoopStallAtTenSeconds) {
  FakeClock clock(1'700'000'000'000);
  clock.Advance(50'000);
  IngestState s = Consuming(clock.MonotonicMillis());
  s.not_ready_after_ms = 60'000;  // Longer: the loop check decides.
  clock.Advance(IngestState::kStallMs - 1);
  EXPECT_TRUE(s.ready(clock.MonotonicMillis()));
  clock.Advance(1);
  EXPECT_EQ(s.ready_reason(clock.MonotonicMillis()), ReadyReason::kLoopStalled);
  // 50 s + 10 s - 50 s = 10 s without a poll.
  EXPECT_EQ(s.ReadinessMessage(clock.MonotonicMillis()),
            "not ready (loop_stalled): the consume loop has not polled for "
            "10s");
  s.last_poll_mono_ms = clock.MonotonicMillis();
  EXPECT_TRUE(s.ready(clock.MonotonicMillis()));
}

// The bound is inclusive: ready at exactly not_ready_after without a
// fetch, not ready 1 ms later; ready again as soon as a fetch progresses.
TEST(IngestStateTest, FetchBoundInclusiveThenRecovery) {
  FakeClock clock;
  clock.Advance(10'000);
  IngestState s = Consuming(clock.MonotonicMillis());
  clock.Advance(3000);
  s.last_poll_mono_ms = clock.MonotonicMillis();  // The loop keeps polling.
  EXPECT_EQ(s.ready_reason(clock.MonotonicMillis()), ReadyReason::kReady);
  EXPECT_EQ(s.ReadinessMessage(clock.MonotonicMillis()), "ready");
  clock.Advance(1);
  EXPECT_EQ(s.ready_reason(clock.MonotonicMillis()),
            ReadyReason::kFetchStalled);
  // 13.001 s - 10 s = 3001 ms.
  EXPECT_EQ(s.ReadinessMessage(clock.MonotonicMillis()),
            "not ready (fetch_stalled): no fetch for results/2 for 3s1ms "
            "(kafka.not_ready_after 3s): its leader broker does not answer");
  s.stalest_fetch->leader_up = false;
  EXPECT_EQ(s.ready_reason(clock.MonotonicMillis()),
            ReadyReason::kBrokerUnreachable);
  EXPECT_EQ(s.ReadinessMessage(clock.MonotonicMillis()),
            "not ready (broker_unreachable): no fetch for results/2 for 3s1ms "
            "(kafka.not_ready_after 3s): its leader broker is unreachable");
  // Statistics report a fetch answered 200 ms ago.
  s.stalest_fetch = FetchLag{"results", 2, clock.MonotonicMillis() - 200, true};
  EXPECT_TRUE(s.ready(clock.MonotonicMillis()));
}

TEST(IngestStateTest, LoopStallTakesPrecedenceOverFetchStall) {
  IngestState s = Consuming(0);
  EXPECT_EQ(s.ready_reason(IngestState::kStallMs), ReadyReason::kLoopStalled);
  s.consuming = false;
  EXPECT_EQ(s.ready_reason(IngestState::kStallMs), ReadyReason::kNotConsuming);
  EXPECT_EQ(s.ReadinessMessage(0),
            "not ready (not_consuming): not consuming (starting, loading the "
            "judgments table, or shut down)");
  s.consuming = true;
  s.assigned = false;
  EXPECT_EQ(s.ReadinessMessage(0),
            "not ready (not_assigned): no partitions assigned (joining the "
            "consumer group or rebalancing)");
}

// Every broker down: the reason while nothing is assigned (starting,
// joining, or after losing the partitions), named with the bootstrap
// servers and the cause; once assigned, the fetch bound decides.
TEST(IngestStateTest, BrokersDownReplacesNotConsumingAndNotAssigned) {
  IngestState s;
  s.brokers_down = BrokersDown{"127.0.0.1:1", "Connection refused", false};
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kBrokerUnreachable);
  EXPECT_EQ(s.ReadinessMessage(0),
            "not ready (broker_unreachable): cannot reach any bootstrap "
            "broker (127.0.0.1:1): Connection refused");
  s.consuming = true;
  EXPECT_EQ(s.ready_reason(0), ReadyReason::kBrokerUnreachable);
  s.brokers_down->reached_before = true;
  s.brokers_down->bootstrap = "k1:9092,k2:9092";
  s.brokers_down->cause = "Disconnected";
  EXPECT_EQ(s.ReadinessMessage(0),
            "not ready (broker_unreachable): lost every broker connection "
            "(bootstrap k1:9092,k2:9092): Disconnected");
  // Assigned, last fetch 1 s ago, bound 3 s: a restart shorter than the
  // bound keeps the replica ready.
  s = Consuming(10'000);
  s.brokers_down = BrokersDown{"127.0.0.1:1", "Connection refused", true};
  EXPECT_EQ(s.ready_reason(11'000), ReadyReason::kReady);
  // 3001 ms without a fetch, leader down: the fetch message.
  s.stalest_fetch->leader_up = false;
  s.last_poll_mono_ms = 13'001;
  EXPECT_EQ(s.ReadinessMessage(13'001),
            "not ready (broker_unreachable): no fetch for results/2 for 3s1ms "
            "(kafka.not_ready_after 3s): its leader broker is unreachable");
  s.assigned = false;
  EXPECT_EQ(s.ReadinessMessage(13'001),
            "not ready (broker_unreachable): lost every broker connection "
            "(bootstrap 127.0.0.1:1): Connection refused");
  s.brokers_down.reset();
  EXPECT_EQ(s.ready_reason(13'001), ReadyReason::kNotAssigned);
}

TEST(IngestStateTest, ReasonNamesAreDistinct) {
  std::set<std::string_view> names;
  for (ReadyReason r : kAllReadyReasons) names.insert(ReadyReasonName(r));
  EXPECT_EQ(names,
            (std::set<std::string_view>{
                "ready", "not_consuming", "not_assigned", "loop_stalled",
                "broker_unreachable", "fetch_stalled", "state_unavailable"}));
}

// The board answers from what was published, at the time asked: the
// fetch bound (3 s here) and the stall (10 s) pass without a new
// publication, and a later change of the status shows only once
// published.
TEST(ReadinessBoardTest, AnswersFromThePublishedInputs) {
  ReadinessBoard board;
  EXPECT_FALSE(board.At(0).ready);
  EXPECT_EQ(board.At(0).message.rfind("not ready (not_consuming)", 0), 0u)
      << board.At(0).message;
  IngestState s = Consuming(1000);
  s.partitions.push_back({"results", 2, 5, 10, 15});  // Not an input.
  board.Publish(s);
  EXPECT_TRUE(board.At(1000).ready);
  EXPECT_EQ(board.At(1000).message, "ready");
  // No fetch since 1000 for longer than the bound (3000 ms).
  EXPECT_FALSE(board.At(4001).ready);
  EXPECT_EQ(board.At(4001).message.rfind("not ready (fetch_stalled)", 0), 0u)
      << board.At(4001).message;
  s.state_problem = "changelog unreadable";
  EXPECT_TRUE(board.At(1000).ready);  // Not published yet.
  board.Publish(s);
  EXPECT_EQ(board.At(1000).message,
            "not ready (state_unavailable): changelog unreadable");
}

TEST(FetchProgressTableTest, StalestTrackedSlot) {
  FetchProgressTable t;
  EXPECT_FALSE(t.stalest().has_value());
  t.Track(0, 100);
  t.Track(2, 300);
  t.Track(0, 900);  // Tracked already: keeps 100.
  ASSERT_TRUE(t.stalest().has_value());
  EXPECT_EQ(t.stalest()->slot, 0);
  EXPECT_EQ(t.stalest()->progress_mono_ms, 100);
  t.Progress(0, 500);
  t.Progress(0, 400);  // Older than known: ignored.
  t.Progress(5, 50);   // Untracked: ignored.
  EXPECT_EQ(t.stalest()->slot, 2);
  EXPECT_EQ(t.stalest()->progress_mono_ms, 300);
  EXPECT_TRUE(t.stalest()->leader_up);
  t.SetLeaderUp(2, false);
  EXPECT_FALSE(t.stalest()->leader_up);
  t.Untrack(2);
  EXPECT_EQ(t.stalest()->slot, 0);
  EXPECT_EQ(t.stalest()->progress_mono_ms, 500);
  t.Untrack(0);
  EXPECT_FALSE(t.stalest().has_value());
}

}  // namespace
}  // namespace rankwatch::kafka
