#include "daemon/stream/join/qrels_join.h"

#include "daemon/stream/join/join_test_util.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using testing::By;
using testing::Judgments;
using testing::RecordingListener;
using testing::Results;

class QrelsJoinTest : public ::testing::Test {
 protected:
  QrelsJoinTest() {
    config_.mode = config::JoinMode::kQrels;
    config_.allowed_lateness = std::chrono::seconds(1);
  }
  QrelsJoin& join() {
    if (!join_)
      join_ = std::make_unique<QrelsJoin>(config_, &clock_, &listener_);
    return *join_;
  }
  bool Res(const std::string& request_id, const std::string& query_id,
           int64_t t, std::vector<std::string> docs, int64_t offset = 0) {
    auto r = Results(request_id, t, docs, query_id);
    return join().OnResults(r.event, 0, EventOrigin{0, offset});
  }
  void Label(const std::string& query_id, int64_t t,
             std::vector<std::pair<std::string, std::optional<int32_t>>> g) {
    auto j = Judgments(query_id, t, g, /*is_query_id=*/true);
    EXPECT_FALSE(join().OnJudgments(j.event, EventOrigin{}));
  }

  config::JoinConfig config_;
  FakeClock clock_{0};
  RecordingListener listener_;
  std::unique_ptr<QrelsJoin> join_;
};

TEST_F(QrelsJoinTest, PreloadedTableScoresEveryImpression) {
  StatusOr<trec::Qrels> qrels =
      trec::Qrels::Parse("q1 0 c 1\nq1 0 a 2\nq1 0 b 0\n", "qrels");
  ASSERT_TRUE(qrels.ok());
  ASSERT_TRUE(join().Preload(*qrels).ok());
  EXPECT_EQ(join().table_entries(), 3);
  EXPECT_FALSE(Res("i1", "q1", 1000, {"c", "x", "a"}));
  EXPECT_FALSE(Res("i2", "q1", 1001, {"b"}));
  ASSERT_EQ(listener_.finalized.size(), 2u);
  EXPECT_EQ(listener_.finalized[0].ranked,
            (std::vector<metrics::Grade>{1, U, 2}));
  // All judged grades of the query, in doc order (a, b, c).
  EXPECT_EQ(listener_.finalized[0].judged,
            (std::vector<metrics::Grade>{2, 0, 1}));
  EXPECT_EQ(listener_.finalized[1].ranked, (std::vector<metrics::Grade>{0}));
  EXPECT_FALSE(Res("i3", "q2", 1002, {"a"}));
  EXPECT_EQ(join().counters().unjudged, 1);
}

TEST_F(QrelsJoinTest, LaterLabelsReplaceAndNullDeletes) {
  Label("q1", 1000, {{"a", 2}, {"b", 1}});
  Label("q1", 1001, {{"a", 0}, {"b", std::nullopt}});
  EXPECT_EQ(join().table_entries(), 1);
  EXPECT_FALSE(Res("i1", "q1", 1002, {"a", "b"}));
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked, (std::vector<metrics::Grade>{0, U}));
  Label("q1", 1003, {{"a", std::nullopt}});
  EXPECT_FALSE(Res("i2", "q1", 1004, {"a"}));
  EXPECT_EQ(join().counters().unjudged, 1);  // Table emptied.
}

// Per (query, doc) the latest event time wins, whatever the arrival order;
// ties: a withdrawal, then the higher grade.
TEST_F(QrelsJoinTest, LatestLabelWinsWhateverTheArrivalOrder) {
  Label("q1", 2000, {{"a", 1}});
  Label("q1", 1000, {{"a", 3}});  // Older, read later: ignored.
  Label("q1", 3000, {{"b", std::nullopt}});
  Label("q1", 2500, {{"b", 2}});  // Older than the withdrawal: stays out.
  Label("q1", 3000, {{"c", 1}});
  Label("q1", 3000, {{"c", 2}});  // Tie: the higher grade.
  Label("q1", 3000, {{"c", 0}});
  Label("q1", 4000, {{"d", 1}});
  Label("q1", 4000, {{"d", std::nullopt}});  // Tie: the withdrawal.
  Label("q1", 3500, {{"e", std::nullopt}});  // Withdraws before any label.
  Label("q1", 3400, {{"e", 3}});
  Label("q9", 100, {{"x", std::nullopt}});  // Unknown query: kept too.
  Label("q9", 50, {{"x", 1}});
  EXPECT_EQ(join().table_entries(), 2);  // a = 1, c = 2.
  EXPECT_FALSE(Res("i1", "q1", 5000, {"a", "b", "c", "d", "e"}));
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked,
            (std::vector<metrics::Grade>{1, U, 2, U, U}));
  EXPECT_EQ(listener_.finalized[0].judged, (std::vector<metrics::Grade>{1, 2}));
  EXPECT_FALSE(Res("i2", "q9", 5001, {"x"}));
  EXPECT_EQ(join().counters().unjudged, 1);
}

TEST_F(QrelsJoinTest, DelayLetsLabelsProducedWithResultsLandFirst) {
  config_.qrels_delay = std::chrono::seconds(5);
  // Event time never runs ahead of the wall clock: the events below are
  // in the past.
  clock_.Advance(1'000'000);
  EXPECT_TRUE(Res("i1", "q1", 1000, {"a"}, /*offset=*/7));
  Label("q1", 3000, {{"a", 3}});
  EXPECT_TRUE(listener_.finalized.empty());
  Label("q1", 7000, {{"zz", 1}});  // Watermark 6 s: the delay ends at 6 s.
  EXPECT_TRUE(listener_.finalized.empty());
  Label("q1", 7001, {{"zz", 1}});  // Watermark 6.001 s > 1 s + 5 s delay.
  ASSERT_EQ(listener_.finalized.size(), 1u);
  EXPECT_EQ(listener_.finalized[0].ranked, (std::vector<metrics::Grade>{3}));
  EXPECT_EQ(listener_.finalized[0].closed_ms, 6000);
  EXPECT_EQ(listener_.released, (std::vector<int64_t>{7}));
}

TEST_F(QrelsJoinTest, DuplicateRequestIdsAreIgnored) {
  Label("q1", 1000, {{"a", 1}});
  EXPECT_FALSE(Res("i1", "q1", 1000, {"a"}));
  EXPECT_FALSE(Res("i1", "q1", 1000, {"a"}));
  EXPECT_FALSE(Res("", "q1", 1000, {"a"}));  // No id: never a duplicate.
  EXPECT_FALSE(Res("", "q1", 1000, {"a"}));
  EXPECT_EQ(join().counters().duplicate_results, 1);
  EXPECT_EQ(listener_.finalized.size(), 3u);
}

TEST_F(QrelsJoinTest, TableLimit) {
  config_.max_table_entries = 2;
  Label("q1", 1000, {{"a", 1}, {"b", 1}, {"c", 1}});
  Label("q1", 1000, {{"a", 2}});  // Replacing needs no room.
  EXPECT_EQ(join().counters().table_full, 1);
  EXPECT_EQ(join().table_entries(), 2);
}

TEST(RecentIdsTest, RemembersTheLastN) {
  RecentIds ids(2);
  EXPECT_TRUE(ids.Insert(1));
  EXPECT_TRUE(ids.Insert(2));
  EXPECT_FALSE(ids.Insert(2));
  EXPECT_TRUE(ids.Insert(3));  // Forgets 1.
  EXPECT_TRUE(ids.Insert(1));
  EXPECT_FALSE(ids.Insert(3));
}

// Labels from several judges (issue 29), judges human (0) and llm (1):
// each (query, doc, judge) is a label of its own. Query q1: human grades
// a 0 at 1 s; llm grades a 2 at 2 s, b 1 and z 3 (never served); a
// preloaded file's labels are judges.default's (llm here): c 1.
class QrelsJoinJudgesTest : public QrelsJoinTest {
 protected:
  void Feed(config::JudgeCombine combine) {
    config::JudgesConfig judges;
    judges.names = {"human", "llm"};
    judges.default_judge = "llm";
    judges.combine = combine;
    join().SetJudges(judges);
    StatusOr<trec::Qrels> qrels = trec::Qrels::Parse("q1 0 c 1\n", "qrels");
    ASSERT_TRUE(qrels.ok());
    ASSERT_TRUE(join().Preload(*qrels).ok());
    auto human = By(0, Judgments("q1", 1000, {{"a", 0}}, true));
    auto llm =
        By(1, Judgments("q1", 2000, {{"a", 2}, {"b", 1}, {"z", 3}}, true));
    EXPECT_FALSE(join().OnJudgments(human.event, EventOrigin{}));
    EXPECT_FALSE(join().OnJudgments(llm.event, EventOrigin{}));
    EXPECT_EQ(join().table_entries(), 5);  // a twice, b, c, z.
    EXPECT_FALSE(Res("i1", "q1", 3000, {"a", "b", "c", "x"}));
    ASSERT_EQ(listener_.finalized.size(), 1u);
  }
};

TEST_F(QrelsJoinJudgesTest, PrecedenceTakesTheFirstJudgeThatLabelled) {
  Feed(config::JudgeCombine::kPrecedence);
  const auto& f = listener_.finalized[0];
  EXPECT_EQ(f.ranked, (std::vector<metrics::Grade>{0, 1, 1, U}));
  // Every judged doc in doc order (a, b, c, z), one grade each.
  EXPECT_EQ(f.judged, (std::vector<metrics::Grade>{0, 1, 1, 3}));
  ASSERT_EQ(f.judges.size(), 2u);
  EXPECT_EQ(f.judges[0].ranked, (std::vector<metrics::Grade>{0, U, U, U}));
  EXPECT_EQ(f.judges[0].judged, (std::vector<metrics::Grade>{0}));
  EXPECT_EQ(f.judges[1].ranked, (std::vector<metrics::Grade>{2, 1, 1, U}));
  EXPECT_EQ(f.judges[1].judged, (std::vector<metrics::Grade>{2, 1, 1, 3}));
}

TEST_F(QrelsJoinJudgesTest, PooledTakesTheLatestLabel) {
  Feed(config::JudgeCombine::kPooled);
  // a: llm's 2 (2 s) is later than human's 0 (1 s).
  EXPECT_EQ(listener_.finalized[0].ranked,
            (std::vector<metrics::Grade>{2, 1, 1, U}));
  EXPECT_EQ(listener_.finalized[0].judged,
            (std::vector<metrics::Grade>{2, 1, 1, 3}));
}

TEST_F(QrelsJoinJudgesTest, AWithdrawalIsItsJudgesOwn) {
  Feed(config::JudgeCombine::kPrecedence);
  auto withdraw = By(0, Judgments("q1", 4000, {{"a", std::nullopt}}, true));
  EXPECT_FALSE(join().OnJudgments(withdraw.event, EventOrigin{}));
  EXPECT_FALSE(Res("i2", "q1", 5000, {"a"}));
  ASSERT_EQ(listener_.finalized.size(), 2u);
  // Human's label of a is withdrawn; llm's stands.
  EXPECT_EQ(listener_.finalized[1].ranked, (std::vector<metrics::Grade>{2}));
  EXPECT_EQ(listener_.finalized[1].judges[0].ranked,
            (std::vector<metrics::Grade>{U}));
}

}  // namespace
}  // namespace rankwatch::stream
