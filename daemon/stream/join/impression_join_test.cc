#include "daemon/stream/join/impression_join.h"

#include <algorithm>
#include <functional>

#include "base/random.h"
#include "daemon/stream/join/join_test_util.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using testing::By;
using testing::Finalized;
using testing::Judgments;
using testing::RecordingListener;
using testing::Results;

// Window 10 s, early tolerance 1 s, lateness 1 s, idle timeout 5 s: a
// request served at t claims judgments stamped in [t - 1 s, t + 10 s] and
// is finalized once the watermark passes t + 10 s, i.e. once an event
// later than t + 11 s has been seen.
class ImpressionJoinTest : public ::testing::Test {
 protected:
  ImpressionJoinTest() {
    config_.window = std::chrono::seconds(10);
    config_.early_tolerance = std::chrono::seconds(1);
    config_.allowed_lateness = std::chrono::seconds(1);
    config_.idle_timeout = std::chrono::seconds(5);
    config_.max_pending_requests = 3;
  }
  ImpressionJoin& join() {
    if (!join_)
      join_ = std::make_unique<ImpressionJoin>(config_, &clock_, &listener_, 1,
                                               position_base_);
    return *join_;
  }
  // A UBI event of `doc` at `position` (claimed_position: position + 1;
  // -1 none): an impression (`grade` nullopt) or a graded action.
  bool Ubi(const std::string& id, int64_t t, const std::string& doc,
           int32_t position, std::optional<int32_t> grade, int64_t offset) {
    auto j = Judgments(id, t, {{doc, grade.value_or(0)}});
    j.event.judgments[0].impression = !grade.has_value();
    j.event.judgments[0].claimed_position = position < 0 ? 0 : position + 1;
    return join().OnJudgments(j.event, EventOrigin{0, offset});
  }
  bool Res(const std::string& id, int64_t t, std::vector<std::string> docs,
           int64_t offset, int32_t source = 0) {
    auto r = Results(id, t, docs);
    return join().OnResults(r.event, 0, EventOrigin{source, offset});
  }
  bool Jud(const std::string& id, int64_t t,
           std::vector<std::pair<std::string, std::optional<int32_t>>> g,
           int64_t offset, int32_t source = 0) {
    auto j = Judgments(id, t, g);
    return join().OnJudgments(j.event, EventOrigin{source, offset});
  }

  config::JoinConfig config_;
  int32_t position_base_ = 1;
  FakeClock clock_{1'000'000};
  RecordingListener listener_;
  std::unique_ptr<ImpressionJoin> join_;
};

TEST_F(ImpressionJoinTest, JoinsWithinWindowAndFinalizesOnWatermark) {
  EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c"}, 1));
  EXPECT_TRUE(Jud("r1", 2000, {{"b", 1}, {"z", 2}}, 2));  // z: not served.
  EXPECT_TRUE(Res("r2", 12'000, {"a"}, 3));               // Watermark 11 s.
  EXPECT_TRUE(listener_.finalized.empty());  // r1's window ends at 11 s.
  EXPECT_TRUE(Res("r3", 12'001, {"a"}, 4));  // Watermark 11.001 s: closes.
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

// A list longer than the join's scan threshold (32 docs) finds its judged
// docs through a hash index, rebuilt for each request: r2 serves r1's docs
// in reverse, so d0 is at rank 40 there. Grades placed by hand.
// A results event without a list (a UBI query record of the data
// generator) is ranked by its impressions in the window, in position
// order (none last), a doc at its first place. By hand, served at 1 s:
//   impressions a@0, b@1, c@2, a@3 (again), d (no position), e@4 at
//   -0.5 s (before 1 s - 1 s: outside the window)
//   list [a, b, c, d]; b clicked (1), d bought (3), z (not shown) carted
//   (2). Ordinal 0 is claimed: base 0, so b@1 is rank 2 (a match) and
//   z@7 a mismatch.
TEST_F(ImpressionJoinTest, ListWithoutDocsIsRankedByItsImpressions) {
  position_base_ = config::kPositionBaseAuto;
  EXPECT_TRUE(Ubi("g", -500, "e", 4, std::nullopt, 1));
  EXPECT_TRUE(Res("g", 1000, {}, 2));
  EXPECT_TRUE(Ubi("g", 1100, "c", 2, std::nullopt, 3));
  EXPECT_TRUE(Ubi("g", 1100, "a", 0, std::nullopt, 4));
  EXPECT_TRUE(Ubi("g", 1200, "b", 1, std::nullopt, 5));
  EXPECT_TRUE(Ubi("g", 1300, "a", 3, std::nullopt, 6));
  EXPECT_TRUE(Ubi("g", 1300, "d", -1, std::nullopt, 7));
  EXPECT_TRUE(Ubi("g", 2000, "b", 1, 1, 8));
  EXPECT_TRUE(Ubi("g", 2100, "d", -1, 3, 9));
  EXPECT_TRUE(Ubi("g", 2200, "z", 7, 2, 10));
  EXPECT_TRUE(Res("x", 12'001, {"q"}, 11));  // Closes g's window.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  const auto& f = listener_.finalized[0];
  EXPECT_EQ(f.request_id, "g");
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{U, 1, U, 3}));
  std::vector<metrics::Grade> judged = f.judged;
  std::sort(judged.begin(), judged.end());
  EXPECT_EQ(judged, (std::vector<metrics::Grade>{1, 2, 3}));
  const JoinCounters& c = join().counters();
  EXPECT_EQ(c.ranked_by_impressions, 1);
  EXPECT_EQ(c.position_mismatches, 1);
  EXPECT_EQ(c.orphaned_judgments, 1);  // e, outside the window.
  EXPECT_EQ(c.ignored_impressions, 0);
  EXPECT_EQ(c.unranked_requests, 0);
}

// Without any impression in its window such a request has no list: not
// scored, its judgments orphaned.
TEST_F(ImpressionJoinTest, ListWithoutDocsOrImpressionsIsUnranked) {
  EXPECT_TRUE(Res("n", 1000, {}, 1));
  EXPECT_TRUE(Ubi("n", 2000, "a", 0, 1, 2));
  EXPECT_TRUE(Res("x", 12'001, {"q"}, 3));
  EXPECT_TRUE(listener_.finalized.empty());
  EXPECT_EQ(join().counters().unranked_requests, 1);
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
  EXPECT_EQ(join().counters().finalized, 0);
}

// A click counts for its served doc whatever its position says; the
// position only feeds position_mismatches, from the request's base: with
// auto, 0 when an event of the request claims position 0, else 1.
TEST_F(ImpressionJoinTest, PositionsOnlyCountMismatchesFromTheirBase) {
  for (const int32_t base : {config::kPositionBaseAuto, 1, 0}) {
    SCOPED_TRACE(base);
    position_base_ = base;
    join_.reset();
    listener_.finalized.clear();
    // r1: b clicked at position 2, served 2nd: base 1's rank.
    EXPECT_TRUE(Res("r1", 1000, {"a", "b"}, 1));
    EXPECT_TRUE(Ubi("r1", 2000, "b", 2, 1, 2));
    // r2: impressions from 0 (not the list: the hits are), b clicked at 1
    // (base 0's rank 2), a clicked at 5.
    EXPECT_TRUE(Res("r2", 1000, {"a", "b"}, 3));
    EXPECT_TRUE(Ubi("r2", 1500, "a", 0, std::nullopt, 4));
    EXPECT_TRUE(Ubi("r2", 1500, "b", 1, std::nullopt, 5));
    EXPECT_TRUE(Ubi("r2", 2000, "b", 1, 1, 6));
    EXPECT_TRUE(Ubi("r2", 2000, "a", 5, 2, 7));
    EXPECT_TRUE(Res("x", 12'001, {"q"}, 8));
    ASSERT_EQ(listener_.finalized.size(), 2u);
    for (const auto& f : listener_.finalized) {
      EXPECT_EQ(f.ranked, f.request_id == "r1"
                              ? (std::vector<metrics::Grade>{U, 1})
                              : (std::vector<metrics::Grade>{2, 1}));
    }
    const JoinCounters& c = join().counters();
    EXPECT_EQ(c.ignored_impressions, 2);
    // auto: r1 base 1 (match), r2 base 0 (b matches, a@5 not): 1.
    // 1: r1 matches, r2's b@1 and a@5 do not: 2. 0: r1's b@2 is rank 3
    // (a mismatch), r2 as auto: 2.
    EXPECT_EQ(c.position_mismatches, base == config::kPositionBaseAuto ? 1 : 2);
  }
}

TEST_F(ImpressionJoinTest, JudgedDocsOfALongListFindTheirRanks) {
  std::vector<std::string> docs;
  for (int i = 0; i < 40; ++i) docs.push_back("d" + std::to_string(i));
  EXPECT_TRUE(Res("r1", 1000, docs, 1));
  std::reverse(docs.begin(), docs.end());
  EXPECT_TRUE(Res("r2", 1000, docs, 2));
  for (const char* id : {"r1", "r2"}) {
    EXPECT_TRUE(
        Jud(id, 2000, {{"d0", 1}, {"d39", 2}, {"d20", 3}, {"zz", 4}}, 3));
  }
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 2u);
  for (const auto& f : listener_.finalized) {
    std::vector<metrics::Grade> expected(40, U);
    const bool reversed = f.request_id == "r2";
    expected[reversed ? 39 : 0] = 1;   // d0
    expected[reversed ? 0 : 39] = 2;   // d39
    expected[reversed ? 19 : 20] = 3;  // d20
    EXPECT_EQ(f.ranked, expected) << f.request_id;
    EXPECT_EQ(f.judged, (std::vector<metrics::Grade>{1, 2, 3, 4}));
  }
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
  // After finalization, behind the watermark (19 s) by more than the early
  // tolerance: no on-time results event can claim it -> late.
  EXPECT_FALSE(Jud("r1", 5000, {{"a", 1}, {"b", 1}}, 3));
  EXPECT_EQ(join().counters().late_judgments, 2);
  // While pending but stamped after r2's window (served 20 s + 10 s): held,
  // and unclaimed when r2 is finalized.
  EXPECT_TRUE(Jud("r2", 30'001, {{"a", 1}}, 4));
  EXPECT_EQ(listener_.finalized.size(), 1u);
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 2u);
  EXPECT_EQ(listener_.finalized[1].ranked, (std::vector<metrics::Grade>{U}));
  EXPECT_EQ(join().counters().late_judgments, 2);
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
}

// The bug of issue 9: a judgment read before its results event was applied
// whatever its event time. Now the window decides, in either order.
TEST_F(ImpressionJoinTest, JudgmentsReadBeforeTheirResultsStillNeedTheWindow) {
  for (bool results_first : {false, true}) {
    join_.reset();
    listener_.finalized.clear();
    // Served at 1 s: claims [0 s, 11 s]. Clicks at 0 s (the early bound),
    // 11 s (the late bound), -0.001 s and 11.001 s (outside), 31 s (three
    // windows later).
    if (results_first) {
      EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c", "d", "e"}, 1));
    }
    EXPECT_TRUE(Jud("r1", 0, {{"a", 1}}, 2));
    EXPECT_TRUE(Jud("r1", 11'000, {{"b", 2}}, 3));
    EXPECT_TRUE(Jud("r1", 31'000, {{"c", 3}}, 4, /*source=*/1));
    if (!results_first) {
      EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c", "d", "e"}, 1));
    }
    EXPECT_TRUE(Jud("r1", 11'001, {{"d", 1}}, 5));
    join().FinishAll();
    ASSERT_EQ(listener_.finalized.size(), 1u) << results_first;
    EXPECT_EQ(listener_.finalized[0].ranked,
              (std::vector<metrics::Grade>{1, 2, U, U, U}))
        << results_first;
    EXPECT_EQ(join().counters().orphaned_judgments, 2) << results_first;
  }
  join_.reset();
  listener_.finalized.clear();
  EXPECT_TRUE(Jud("r2", 1000, {{"a", 1}}, 1));  // 1 ms too early for r2.
  EXPECT_TRUE(Res("r2", 2001, {"a"}, 2));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked, (std::vector<metrics::Grade>{U}));
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
}

TEST_F(ImpressionJoinTest, EarlierResultsEventIsTheRequestInEitherOrder) {
  for (bool earlier_first : {false, true}) {
    join_.reset();
    listener_.finalized.clear();
    listener_.released.clear();
    // Two results events for r1: served at 1 s and at 2 s. The one at 1 s
    // is the request (window until 11 s), so the click at 11.5 s is not.
    if (earlier_first) {
      EXPECT_TRUE(Res("r1", 1000, {"a", "b"}, 1));
      EXPECT_FALSE(Res("r1", 2000, {"b", "a"}, 2));
    } else {
      EXPECT_TRUE(Res("r1", 2000, {"b", "a"}, 2));
      EXPECT_TRUE(Res("r1", 1000, {"a", "b"}, 1));
      EXPECT_EQ(listener_.released, std::vector<int64_t>{2});  // Replaced.
    }
    EXPECT_TRUE(Jud("r1", 11'500, {{"a", 1}}, 3));
    EXPECT_TRUE(Jud("r1", 5000, {{"b", 2}}, 4));
    join().FinishAll();
    ASSERT_EQ(listener_.finalized.size(), 1u);
    EXPECT_EQ(listener_.finalized[0].served_ms, 1000);
    EXPECT_EQ(listener_.finalized[0].ranked,
              (std::vector<metrics::Grade>{U, 2}));
    EXPECT_EQ(join().counters().duplicate_results, 1);
    // Every retained event is released once (2 only if it was retained).
    std::vector<int64_t> released = listener_.released;
    std::sort(released.begin(), released.end());
    const std::vector<int64_t> expected =
        earlier_first ? std::vector<int64_t>{1, 3, 4}
                      : std::vector<int64_t>{1, 2, 3, 4};
    EXPECT_EQ(released, expected);
  }
  // Equal times: the smaller doc list (by ids, in order) is the request.
  join_.reset();
  listener_.finalized.clear();
  EXPECT_TRUE(Res("r2", 1000, {"b"}, 1));
  EXPECT_TRUE(Res("r2", 1000, {"a", "z"}, 2));
  EXPECT_FALSE(Res("r2", 1000, {"a", "z", "x"}, 3));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked.size(), 2u);
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
  EXPECT_TRUE(Res("r1", 1300, {"a"}, 1));       // Closes at 11.3 s.
  EXPECT_TRUE(Res("r2", 1000, {"a"}, 2));       // Closes at 11 s.
  EXPECT_TRUE(Jud("r3", 1200, {{"a", 1}}, 3));  // Claimable until 2.2 s.
  EXPECT_TRUE(Res("r4", 1400, {"a"}, 4));  // Full (3): orphan r3 is evicted.
  EXPECT_EQ(join().counters().evicted, 1);
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
  EXPECT_TRUE(listener_.finalized.empty());  // Orphans are not scored.
  EXPECT_TRUE(Res("r5", 1500, {"a"}, 5));    // Next earliest: r2.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].request_id, "r2");
  EXPECT_EQ(listener_.finalized[0].cause, FinalizeCause::kEvicted);
  EXPECT_EQ(join().counters().evicted, 2);
  EXPECT_EQ(join().pending_requests(), 3);
}

TEST_F(ImpressionJoinTest, OrphanedJudgmentsExpire) {
  EXPECT_TRUE(Jud("r9", 1000, {{"a", 1}}, 1));  // Claimable until 2 s.
  EXPECT_TRUE(Res("r1", 3001, {"a"}, 2));       // Watermark 2.001 s > 2 s.
  EXPECT_EQ(join().counters().orphaned_judgments, 1);
  EXPECT_TRUE(listener_.finalized.empty());
  EXPECT_EQ(listener_.released, (std::vector<int64_t>{1}));
}

TEST_F(ImpressionJoinTest, IdleStreamFinalizesOnWallClock) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1));
  clock_.Advance(4'000);  // Not idle long enough.
  join().AdvanceWallClock();
  EXPECT_TRUE(listener_.finalized.empty());
  // Idle for 11.001 s: windows close as if event time had advanced as
  // much, to 1 + 11.001 - 1 (lateness) = 11.001 s, past r1's window end
  // (11 s).
  clock_.Advance(7'001);
  join().AdvanceWallClock();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].cause, FinalizeCause::kIdle);
  // Lateness stays with event time (1 s - 1 s): an event from the past
  // arriving after the lull is not late for it (issue 22).
  EXPECT_EQ(join().watermark_ms(), 0);
  EXPECT_TRUE(Res("r2", 1500, {"a"}, 2));
  EXPECT_EQ(join().counters().late_results, 0);
}

// Issue 40: a judgment stamped inside its request's window that arrives
// after the request was finalized (here by an idle stream's wall clock) is
// counted apart from orphans, and not held. r1 is served at 1 s: its
// window is [0 s, 11 s].
TEST_F(ImpressionJoinTest,
       JudgmentsAfterTheirRequestWasFinalizedAreCountedApart) {
  EXPECT_TRUE(Res("r1", 1000, {"a", "b"}, 1));
  clock_.Advance(11'001);  // Idle: r1 finalized by the wall clock.
  join().AdvanceWallClock();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  // Stamped at 5 s, inside [0 s, 11 s]: after finalization, not held.
  EXPECT_FALSE(Jud("r1", 5000, {{"a", 2}, {"b", 1}}, 2));
  EXPECT_EQ(join().counters().judgments_after_finalization, 2);
  EXPECT_EQ(join().counters().orphaned_judgments, 0);
  // Stamped at 20 s, outside r1's window: unclaimed as before, like a
  // judgment of a request never served.
  EXPECT_TRUE(Jud("r1", 20'000, {{"a", 1}}, 3));
  EXPECT_TRUE(Jud("r7", 20'000, {{"a", 1}}, 4));
  join().FinishAll();
  EXPECT_EQ(join().counters().orphaned_judgments, 2);
  EXPECT_EQ(join().counters().judgments_after_finalization, 2);
  EXPECT_EQ(listener_.finalized.size(), 1u);
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

// The same judgments in reverse arrival order give the same grades: "last"
// is the latest event time (higher grade on ties), and a withdrawal removes
// what is stamped at or before it.
TEST_F(ImpressionJoinTest, CombineGoesByEventTimeNotArrival) {
  for (config::CombineRule rule :
       {config::CombineRule::kMax, config::CombineRule::kLast}) {
    for (bool reversed : {false, true}) {
      config_.combine = rule;
      join_.reset();
      listener_.finalized.clear();
      EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c", "d"}, 1));
      std::vector<std::function<void()>> events = {
          [&] {
            Jud("r1", 1100, {{"a", 3}, {"b", 2}, {"c", 1}}, 2);
          },
          [&] {
            Jud("r1", 1200, {{"a", 1}, {"b", std::nullopt}}, 3);
          },
          // Same time: the withdrawal beats c's grade; d's higher grade
          // beats its lower one.
          [&] {
            Jud("r1", 1300, {{"c", 2}, {"d", 1}}, 4);
          },
          [&] {
            Jud("r1", 1300, {{"c", std::nullopt}, {"d", 2}}, 5);
          },
          [&] {
            Jud("r1", 1250, {{"b", 1}}, 6);
          },  // After b's withdrawal.
      };
      if (reversed) std::reverse(events.begin(), events.end());
      for (auto& e : events) e();
      join().FinishAll();
      ASSERT_EQ(listener_.finalized.size(), 1u);
      // max:  a = max(3, 1) = 3; b = 1 (2 was withdrawn at 1.2 s); c none;
      //       d = max(1, 2) = 2.
      // last: a = 1 (1.2 s); b = 1; c none; d = 2 (tie at 1.3 s).
      const metrics::Grade a = rule == config::CombineRule::kMax ? 3 : 1;
      EXPECT_EQ(listener_.finalized[0].ranked,
                (std::vector<metrics::Grade>{a, 1, U, 2}))
          << static_cast<int>(rule) << reversed;
      std::vector<metrics::Grade> judged = listener_.finalized[0].judged;
      std::sort(judged.begin(), judged.end());  // Order carries no meaning.
      std::vector<metrics::Grade> expected = {a, 1, 2};
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(judged, expected);
    }
  }
}

// More records than Combine() groups by moving (16): it sorts them; the
// grades are the same.
TEST_F(ImpressionJoinTest, ClicksLeaveOutExcludedKindsAndTimeTheFirstClick) {
  // r1 served at 1 s: a label (excluded kind) on c at 0.5 s, a grade 0 on
  // a at 2.5 s (below the threshold: no click), a click on b at 3 s and
  // one on z (not served) at 2 s. Clicks: b only; first click 2 s after.
  EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c"}, 1));
  auto label = Judgments("r1", 500, {{"c", 1}});
  label.event.judgments[0].click_excluded = true;
  EXPECT_TRUE(join().OnJudgments(label.event, EventOrigin{0, 2}));
  EXPECT_TRUE(Jud("r1", 2500, {{"a", 0}}, 3));
  EXPECT_TRUE(Jud("r1", 3000, {{"b", 1}}, 4));
  EXPECT_TRUE(Jud("r1", 2000, {{"z", 1}}, 5));
  // r2: a click stamped 0.2 s before its results (within the early
  // tolerance): delay 0, not negative. No excluded kind: clicks = ranked.
  EXPECT_TRUE(Res("r2", 1000, {"a", "b"}, 6));
  EXPECT_TRUE(Jud("r2", 800, {{"b", 1}}, 7));
  // r3: a click withdrawn later: no click at all.
  EXPECT_TRUE(Res("r3", 1000, {"a"}, 8));
  EXPECT_TRUE(Jud("r3", 2000, {{"a", 1}}, 9));
  EXPECT_TRUE(Jud("r3", 3000, {{"a", std::nullopt}}, 10));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 3u);
  std::sort(
      listener_.finalized.begin(), listener_.finalized.end(),
      [](const auto& x, const auto& y) { return x.request_id < y.request_id; });
  const auto& r1 = listener_.finalized[0];
  EXPECT_EQ(r1.ranked, (std::vector<metrics::Grade>{0, 1, 1}));
  EXPECT_EQ(r1.clicks, (std::vector<metrics::Grade>{0, 1, U}));
  EXPECT_EQ(r1.first_click_delay_ms, 2000);
  const auto& r2 = listener_.finalized[1];
  EXPECT_EQ(r2.clicks, r2.ranked);
  EXPECT_EQ(r2.first_click_delay_ms, 0);
  const auto& r3 = listener_.finalized[2];
  EXPECT_EQ(r3.clicks, (std::vector<metrics::Grade>{U}));
  EXPECT_EQ(r3.first_click_delay_ms, -1);
}

TEST_F(ImpressionJoinTest, ManyJudgmentsOfOneRequestCombine) {
  config_.combine = config::CombineRule::kLast;
  std::vector<std::string> docs;
  std::vector<std::pair<std::string, std::optional<int32_t>>> early, late;
  for (int d = 0; d < 12; ++d) {
    docs.push_back("d" + std::to_string(d));
    early.emplace_back(docs.back(), 3);
    late.emplace_back(docs.back(), d % 3);
  }
  EXPECT_TRUE(Res("r1", 1000, docs, 1));
  EXPECT_TRUE(Jud("r1", 1200, late, 2));  // 24 records: last wins, by time.
  EXPECT_TRUE(Jud("r1", 1100, early, 3));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  std::vector<metrics::Grade> expected;
  for (int d = 0; d < 12; ++d) expected.push_back(d % 3);
  EXPECT_EQ(listener_.finalized[0].ranked, expected);
}

TEST_F(ImpressionJoinTest, JudgmentsBeyondThePerRequestLimitAreCounted) {
  config_.max_judgments_per_request = 2;
  EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c"}, 1));
  EXPECT_TRUE(Jud("r1", 1100, {{"a", 1}, {"b", 1}, {"c", 1}}, 2));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked,
            (std::vector<metrics::Grade>{1, 1, U}));
  EXPECT_EQ(join().counters().over_limit_judgments, 1);
}

TEST_F(ImpressionJoinTest, ExtremeTimestampsDoNotOverflow) {
  // Served at INT64_MAX: served + window saturates (UBSan would flag an
  // overflow); the request still finalizes at the end.
  EXPECT_TRUE(Res("r1", INT64_MAX, {"a"}, 1));
  EXPECT_TRUE(Jud("r1", INT64_MAX, {{"a", 2}}, 2));
  EXPECT_TRUE(Jud("r2", INT64_MAX - 1, {{"a", 2}}, 3));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].closed_ms, INT64_MAX);
  EXPECT_EQ(listener_.finalized[0].ranked, (std::vector<metrics::Grade>{2}));
}

TEST_F(ImpressionJoinTest, DropPartitionsForgetsWithoutReleasing) {
  EXPECT_TRUE(Res("r1", 1000, {"a"}, 1, /*source=*/0));
  EXPECT_TRUE(Res("r2", 1000, {"a"}, 1, /*source=*/1));
  EXPECT_TRUE(Jud("r3", 1000, {{"a", 1}}, 2, /*source=*/1));
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
  // One previous owner of both partitions: r1 (served at 1 s) was
  // finalized.
  join.RestoreWatermark(0, 20'000);
  join.RestoreWatermark(1, 20'000);
  auto r1 = testing::Results("r1", 1000, {"a"});
  auto j1 = testing::Judgments("r1", 2000, {{"a", 1}});
  EXPECT_FALSE(join.OnResults(r1.event, 0, EventOrigin{0, 1, true}));
  EXPECT_FALSE(join.OnJudgments(j1.event, EventOrigin{0, 2, true}));
  EXPECT_EQ(join.counters().replayed, 2);
  EXPECT_EQ(join.counters().replayed_judgments, 1);  // j1; r1 is results.
  EXPECT_EQ(join.counters().late_results, 0);
  EXPECT_EQ(join.counters().late_judgments, 0);
  // A request still pending at the restart (served at 15 s, closing at
  // 25 s) is joined afresh, with its re-read click stamped at 12 s, which
  // arrives first (another partition) and lies behind the restored
  // watermark: it must wait, not count as replayed. The restored
  // watermark closes no window: nothing is finalized before FinishAll.
  auto j2 = testing::Judgments("r2", 12'000, {{"a", 3}});
  EXPECT_TRUE(join.OnJudgments(j2.event, EventOrigin{1, 1, true}));
  auto r2 = testing::Results("r2", 15'000, {"a"});
  // The previous owner crashed (its last commit was not final).
  EXPECT_TRUE(join.OnResults(r2.event, 0, EventOrigin{0, 3, true, true}));
  EXPECT_TRUE(listener.finalized.empty());
  join.FinishAll();
  ASSERT_EQ(listener.finalized.size(), 1u);
  EXPECT_EQ(listener.finalized[0].request_id, "r2");
  EXPECT_EQ(listener.finalized[0].ranked, (std::vector<metrics::Grade>{3}));
  // Its results were read by the previous owner too: it may count twice.
  EXPECT_EQ(join.counters().reprocessed, 1);
  EXPECT_EQ(join.commit_watermark_ms(0), 20'000);
  EXPECT_EQ(join.commit_watermark_ms(1), 20'000);
}

// Issue 22: the partitions one replica is assigned after a rebalance may
// come from several previous owners. Partition 1's owner was killed early
// (its last commit carried 5 s) and partition 0's stopped late (20 s): a
// request re-read from partition 1, served at 1 s and closing at 11 s, was
// never finalized by its owner and must be joined afresh, not skipped
// because partition 0's owner got further. (One watermark per replica, the
// greatest, skipped it: a lost list.)
TEST(ImpressionJoinRestoreTest, EachPartitionKeepsItsOwnersWatermark) {
  config::JoinConfig config;
  config.window = std::chrono::seconds(10);
  config.allowed_lateness = std::chrono::seconds(0);
  FakeClock clock(0);
  testing::RecordingListener listener;
  ImpressionJoin join(config, &clock, &listener);
  join.RestoreWatermark(0, 20'000);
  join.RestoreWatermark(1, 5'000);
  auto r0 = testing::Results("r0", 1000, {"a"});  // Closes at 11 s < 20 s.
  EXPECT_FALSE(join.OnResults(r0.event, 0, EventOrigin{0, 1, true}));
  auto r1 = testing::Results("r1", 1000, {"a"});  // Closes at 11 s > 5 s.
  auto j1 = testing::Judgments("r1", 2000, {{"a", 2}});
  EXPECT_TRUE(join.OnResults(r1.event, 0, EventOrigin{1, 1, true}));
  EXPECT_TRUE(join.OnJudgments(j1.event, EventOrigin{1, 2, true}));
  EXPECT_EQ(join.counters().replayed, 1);
  EXPECT_EQ(join.counters().replayed_judgments, 0);
  join.FinishAll();
  ASSERT_EQ(listener.finalized.size(), 1u);
  EXPECT_EQ(listener.finalized[0].request_id, "r1");
  // Partition 1's owner stopped cleanly (final commit): it finalized
  // nothing after that commit, so r1 cannot count twice.
  EXPECT_EQ(join.counters().reprocessed, 0);
  EXPECT_EQ(listener.finalized[0].ranked, (std::vector<metrics::Grade>{2}));
  // Each partition's commit carries its own: the greater of this owner's
  // watermark (1 s: the least newest event time of the two partitions,
  // lateness 0; FinishAll closes windows, it does not move event time) and
  // the one restored for it.
  EXPECT_EQ(join.commit_watermark_ms(0), 20'000);
  EXPECT_EQ(join.commit_watermark_ms(1), 5'000);
}

// A partition revoked and assigned back (an eager rebalance revokes every
// partition, then hands some back) commits only what its own shard has
// finalized. Partition 0 (sources 0, 1) has reached 50 s, partition 1
// (sources 2, 3) 2 s: the replica's watermark is 1 s (lateness 0). Every
// partition is revoked: none holds the replica's watermark any more, and
// it moved to the newest event time, 50 s. Partition 1 comes back; its
// request r1, served at 1 s and closing at 11 s, is re-read and pending.
// Its commit must not carry 50 s: its next owner would skip r1 as
// finalized (closing before the committed watermark), and r1 would be
// finalized nowhere.
TEST(ImpressionJoinRestoreTest,
     APartitionAssignedBackCommitsWhatItsShardFinalized) {
  config::JoinConfig config;
  config.window = std::chrono::seconds(10);
  config.allowed_lateness = std::chrono::seconds(0);
  FakeClock clock(1'000'000);  // Past every event: no cap at the wall clock.
  testing::RecordingListener listener;
  ImpressionJoin join(config, &clock, &listener);
  for (int32_t source = 0; source < 4; ++source) join.AddSource(source);
  auto r0 = testing::Results("r0", 50'000, {"a"});
  auto j0 = testing::Judgments("r0", 50'000, {{"a", 1}});
  auto r1 = testing::Results("r1", 1'000, {"a"});
  auto j1 = testing::Judgments("r1", 2'000, {{"a", 2}});
  EXPECT_TRUE(join.OnResults(r0.event, 0, EventOrigin{0, 0, false}));
  EXPECT_TRUE(join.OnJudgments(j0.event, EventOrigin{1, 0, false}));
  EXPECT_TRUE(join.OnResults(r1.event, 0, EventOrigin{2, 0, false}));
  EXPECT_TRUE(join.OnJudgments(j1.event, EventOrigin{3, 0, false}));
  EXPECT_EQ(join.commit_watermark_ms(2), 1'000);  // min(50, 50, 1, 2) s.
  // The revocation's final commit carried 1 s; partition 1 comes back.
  const int32_t all[] = {0, 1, 2, 3};
  join.DropPartitions(all);
  join.AddSource(2);
  join.AddSource(3);
  join.RestoreWatermark(2, 1'000);
  join.RestoreWatermark(3, 1'000);
  EXPECT_TRUE(join.OnResults(r1.event, 0, EventOrigin{2, 0, true}));
  EXPECT_TRUE(join.OnJudgments(j1.event, EventOrigin{3, 0, true}));
  EXPECT_TRUE(listener.finalized.empty());  // r1 is pending again.
  // What its next commit carries: partition 1's shard has reached 1 s.
  EXPECT_EQ(join.commit_watermark_ms(2), 1'000);
  EXPECT_EQ(join.commit_watermark_ms(3), 1'000);
  // Its next owner, restoring that, re-reads r1 and finalizes it.
  testing::RecordingListener next_listener;
  ImpressionJoin next(config, &clock, &next_listener);
  next.RestoreWatermark(2, join.commit_watermark_ms(2));
  next.RestoreWatermark(3, join.commit_watermark_ms(3));
  EXPECT_TRUE(next.OnResults(r1.event, 0, EventOrigin{2, 0, true}));
  EXPECT_TRUE(next.OnJudgments(j1.event, EventOrigin{3, 0, true}));
  EXPECT_EQ(next.counters().replayed, 0);
  next.FinishAll();
  ASSERT_EQ(next_listener.finalized.size(), 1u);
  EXPECT_EQ(next_listener.finalized[0].request_id, "r1");
}

// Labels from several judges (issue 29): judges human (0), llm (1) and
// clicks (2). r1 serves [a, b, c]; llm grades a 2 and b 1, human grades a
// 0, clicks grade c 1. Each judge's grades stand apart; the list's grade
// of a doc is the first judge's in judges.names that has one.
class ImpressionJoinJudgesTest : public ImpressionJoinTest {
 protected:
  void UseJudges(config::JudgeCombine combine) {
    config::JudgesConfig judges;
    judges.names = {"human", "llm", "clicks"};
    judges.combine = combine;
    join().SetJudges(judges);
  }
  void Feed() {
    EXPECT_TRUE(Res("r1", 1000, {"a", "b", "c"}, 1));
    auto llm = By(1, Judgments("r1", 2000, {{"a", 2}, {"b", 1}}));
    auto human = By(0, Judgments("r1", 3000, {{"a", 0}}));
    auto clicks = By(2, Judgments("r1", 2500, {{"c", 1}}));
    EXPECT_TRUE(join().OnJudgments(llm.event, EventOrigin{0, 2}));
    EXPECT_TRUE(join().OnJudgments(human.event, EventOrigin{0, 3}));
    EXPECT_TRUE(join().OnJudgments(clicks.event, EventOrigin{0, 4}));
  }
  static std::vector<metrics::Grade> Sorted(std::vector<metrics::Grade> g) {
    std::sort(g.begin(), g.end());
    return g;
  }
};

TEST_F(ImpressionJoinJudgesTest, PrecedenceTakesTheFirstJudgeThatLabelled) {
  UseJudges(config::JudgeCombine::kPrecedence);
  Feed();
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  const auto& f = listener_.finalized[0];
  // a: human's 0 over llm's 2; b: llm's 1; c: clicks' 1.
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{0, 1, 1}));
  EXPECT_EQ(Sorted(f.judged), (std::vector<metrics::Grade>{0, 1, 1}));
  ASSERT_EQ(f.judges.size(), 3u);
  EXPECT_EQ(f.judges[0].ranked, (std::vector<metrics::Grade>{0, U, U}));
  EXPECT_EQ(f.judges[0].judged, (std::vector<metrics::Grade>{0}));
  EXPECT_EQ(f.judges[1].ranked, (std::vector<metrics::Grade>{2, 1, U}));
  EXPECT_EQ(Sorted(f.judges[1].judged), (std::vector<metrics::Grade>{1, 2}));
  EXPECT_EQ(f.judges[2].ranked, (std::vector<metrics::Grade>{U, U, 1}));
  // What counts as a click does not depend on the judges: every label
  // pooled (join.combine max), as without judges.
  EXPECT_EQ(f.clicks, (std::vector<metrics::Grade>{2, 1, 1}));
}

TEST_F(ImpressionJoinJudgesTest, PooledCombinesEveryLabelAsWithoutJudges) {
  UseJudges(config::JudgeCombine::kPooled);
  Feed();
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  const auto& f = listener_.finalized[0];
  // join.combine max: a is max(2, 0).
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{2, 1, 1}));
  EXPECT_EQ(f.clicks, f.ranked);
  EXPECT_EQ(f.judges[0].ranked, (std::vector<metrics::Grade>{0, U, U}));
}

// A withdrawal ("relevance": null) withdraws its own judge's labels only.
TEST_F(ImpressionJoinJudgesTest, AWithdrawalIsItsJudgesOwn) {
  UseJudges(config::JudgeCombine::kPrecedence);
  Feed();
  auto withdraw = By(0, Judgments("r1", 5000, {{"a", std::nullopt}}));
  EXPECT_TRUE(join().OnJudgments(withdraw.event, EventOrigin{0, 5}));
  join().FinishAll();
  ASSERT_EQ(listener_.finalized.size(), 1u);
  const auto& f = listener_.finalized[0];
  // a: human withdrew its 0; llm's 2 stands and now comes first.
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{2, 1, 1}));
  EXPECT_EQ(f.judges[0].ranked, (std::vector<metrics::Grade>{U, U, U}));
  EXPECT_TRUE(f.judges[0].judged.empty());
  EXPECT_EQ(f.judges[1].ranked, (std::vector<metrics::Grade>{2, 1, U}));
}

// A checkpoint names its judges: restored under judges.names in another
// order, each label keeps its judge; under a list without llm, llm's
// labels leave; without judges, every label counts alike.
TEST_F(ImpressionJoinJudgesTest, CheckpointsMapTheJudgesByName) {
  UseJudges(config::JudgeCombine::kPrecedence);
  Feed();
  std::string record;
  ByteWriter w(&record);
  join().EncodeShard(0, testing::NoGroups(), &w);

  const auto restore = [&](std::vector<std::string> names) {
    RecordingListener listener;
    ImpressionJoin other(config_, &clock_, &listener);
    config::JudgesConfig judges;
    judges.names = std::move(names);
    other.SetJudges(judges);
    ByteReader r(record);
    EXPECT_TRUE(other.DecodeShard(0, testing::NoGroups(), &r).ok());
    other.FinishAll();
    EXPECT_EQ(listener.finalized.size(), 1u);
    return listener.finalized.empty() ? Finalized{} : listener.finalized[0];
  };
  // llm first now: a is llm's 2.
  const Finalized reordered = restore({"llm", "clicks", "human"});
  EXPECT_EQ(reordered.ranked, (std::vector<metrics::Grade>{2, 1, 1}));
  EXPECT_EQ(reordered.judges[0].ranked, (std::vector<metrics::Grade>{2, 1, U}));
  EXPECT_EQ(reordered.judges[2].ranked, (std::vector<metrics::Grade>{0, U, U}));
  // Without llm: a is human's 0, b has no label left.
  const Finalized without_llm = restore({"human", "clicks"});
  EXPECT_EQ(without_llm.ranked, (std::vector<metrics::Grade>{0, U, 1}));
  // Without judges: join.combine max over every label, as pooled.
  const Finalized none = restore({});
  EXPECT_EQ(none.ranked, (std::vector<metrics::Grade>{2, 1, 1}));
  EXPECT_TRUE(none.judges.empty());
}

// Property: with judges, what a request's list scores does not depend on
// the order its judgments arrive in. Random labels (grades 0..3 and
// withdrawals) from three judges on five docs, fed in a random order; the
// grades are checked against a reference written here: per judge and doc,
// the labels after the judge's latest withdrawal of the doc combine by max
// (join.combine), and the list takes the first judge's in judges.names.
TEST_F(ImpressionJoinTest, JudgesGradesDoNotDependOnArrivalOrder) {
  constexpr int kJudges = 3;
  const std::vector<std::string> docs = {"a", "b", "c", "d", "e"};
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Xoshiro256 rng(seed);
    struct Label {
      int judge;
      int doc;
      int64_t t;
      std::optional<int32_t> grade;
    };
    std::vector<Label> labels;
    for (int n = static_cast<int>(rng.Between(1, 12)); n > 0; --n) {
      const bool withdraw = rng.Below(5) == 0;
      labels.push_back({static_cast<int>(rng.Below(kJudges)),
                        static_cast<int>(rng.Below(docs.size())),
                        1000 + rng.Between(0, 9000),
                        withdraw ? std::nullopt
                                 : std::optional<int32_t>(rng.Between(0, 3))});
    }
    // The reference.
    std::vector<metrics::Grade> want(docs.size(), U);
    for (size_t d = 0; d < docs.size(); ++d) {
      for (int j = 0; j < kJudges && want[d] == U; ++j) {
        int64_t withdrawn_until = INT64_MIN;
        for (const Label& l : labels) {
          if (l.judge == j && l.doc == static_cast<int>(d) && !l.grade) {
            withdrawn_until = std::max(withdrawn_until, l.t);
          }
        }
        for (const Label& l : labels) {
          if (l.judge == j && l.doc == static_cast<int>(d) && l.grade &&
              l.t > withdrawn_until) {
            want[d] = std::max(want[d], *l.grade);
          }
        }
      }
    }
    // Two arrival orders of the same labels.
    for (int order = 0; order < 2; ++order) {
      std::vector<Label> shuffled = labels;
      for (size_t i = shuffled.size(); i > 1; --i) {
        std::swap(shuffled[i - 1], shuffled[rng.Below(i)]);
      }
      RecordingListener listener;
      ImpressionJoin join(config_, &clock_, &listener);
      config::JudgesConfig judges;
      judges.names = {"human", "llm", "clicks"};
      join.SetJudges(judges);
      auto r = Results("r", 1000, docs);
      EXPECT_TRUE(join.OnResults(r.event, 0, EventOrigin{0, 0}));
      int64_t offset = 1;
      for (const Label& l : shuffled) {
        auto j = By(l.judge, Judgments("r", l.t, {{docs[l.doc], l.grade}}));
        EXPECT_TRUE(join.OnJudgments(j.event, EventOrigin{0, offset++}));
      }
      join.FinishAll();
      ASSERT_EQ(listener.finalized.size(), 1u);
      EXPECT_EQ(listener.finalized[0].ranked, want) << "order " << order;
    }
  }
}

}  // namespace
}  // namespace rankwatch::stream
