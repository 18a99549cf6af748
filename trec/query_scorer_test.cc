#include "trec/query_scorer.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

class QueryScorerTest : public ::testing::Test {
 protected:
  // q1: a (grade 1), b (0), d (2); R = 2 at the default threshold 1.
  void SetUp() override {
    StatusOr<Qrels> q = Qrels::Parse("q1 0 a 1\nq1 0 b 0\nq1 0 d 2\n", "qrels");
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    qrels_ = std::make_unique<Qrels>(std::move(q).value());
  }

  // Columns: num_ret, num_rel, num_rel_ret, map, recip_rank, P_2.
  enum Column { kNumRet, kNumRel, kNumRelRet, kMap, kRecipRank, kP2 };
  static ScorerConfig Config(int64_t max_docs, bool judged_only = false) {
    const std::vector<std::string> specs = {
        "num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P.2"};
    return ScorerConfig{
        *metrics::Evaluator::Create({2}, {}),
        MeasureTable::Create(*MeasureSelection::Parse(specs), {}), max_docs,
        judged_only};
  }

  const QueryQrels* Q1() const { return qrels_->FindQuery("q1"); }

  // Adds run lines given as (docno, score) pairs.
  void Add(QueryScorer* s,
           std::vector<std::pair<std::string, std::string>> lines) {
    for (const auto& [doc, score] : lines) {
      kept_.push_back(doc);
      kept_.push_back(score);
      const std::string& d = kept_[kept_.size() - 2];
      const std::string& sc = kept_.back();
      ASSERT_TRUE(s->AddEntry(RunLineFields{"q1", d, sc, "r"}));
    }
  }

  std::unique_ptr<Qrels> qrels_;
  std::deque<std::string> kept_;  // Stable addresses for the views.
};

TEST_F(QueryScorerTest, JoinsSortsAndScores) {
  QueryScorer s(*qrels_, Config(1000));
  Add(&s, {{"c", "1.0"}, {"a", "3.0"}, {"b", "2.0"}});
  ASSERT_FALSE(s.JoinGrades(Q1()).has_value());
  const std::vector<RunEntry>& e = *s.entries();
  EXPECT_EQ(e[0].grade, metrics::kUnjudged);  // c: not judged.
  EXPECT_EQ(e[1].grade, 1);                   // a
  EXPECT_EQ(e[2].grade, 0);                   // b
  QueryRow out;
  s.Score(*Q1(), &out);
  // Ranked a (1), b (0), c (-): 3 retrieved, R = 2, one relevant retrieved.
  ASSERT_EQ(out.values.size(), 6u);
  EXPECT_EQ(out.values[kNumRet], 3);
  EXPECT_EQ(out.values[kNumRel], 2);
  EXPECT_EQ(out.values[kNumRelRet], 1);
  EXPECT_DOUBLE_EQ(out.values[kRecipRank], 1.0);  // a at rank 1.
  EXPECT_DOUBLE_EQ(out.values[kMap], 0.5);        // (1/1) / R.
  EXPECT_DOUBLE_EQ(out.values[kP2], 0.5);         // a of a, b.
}

// -J drops unjudged docs after the -M cut: of the top 3 (c, a, b), c goes.
TEST_F(QueryScorerTest, JudgedOnlyDropsUnjudgedDocsAfterTheCut) {
  QueryScorer s(*qrels_, Config(3, /*judged_only=*/true));
  Add(&s, {{"c", "4"}, {"a", "3"}, {"b", "2"}, {"d", "1"}});
  ASSERT_FALSE(s.JoinGrades(Q1()).has_value());
  QueryRow out;
  s.Score(*Q1(), &out);
  EXPECT_EQ(out.values[kNumRet], 2);              // a, b.
  EXPECT_DOUBLE_EQ(out.values[kRecipRank], 1.0);  // a is now first.
  EXPECT_DOUBLE_EQ(out.values[kP2], 0.5);
}

TEST_F(QueryScorerTest, NegativeGradesAreInThePoolButUnjudged) {
  StatusOr<Qrels> q = Qrels::Parse("q1 0 a -1\nq1 0 b 1\n", "qrels");
  ASSERT_TRUE(q.ok());
  QueryScorer s(*q, Config(1000));
  Add(&s, {{"a", "2"}, {"z", "1"}});
  ASSERT_FALSE(s.JoinGrades(q->FindQuery("q1")).has_value());
  EXPECT_EQ((*s.entries())[0].grade, kUnjudgedInPool);
  EXPECT_EQ((*s.entries())[1].grade, kNotInPool);
}

TEST_F(QueryScorerTest, TiesGoByDocnoDescendingAndMaxDocsCuts) {
  QueryScorer s(*qrels_, Config(1));
  // Equal scores: trec_eval ranks "b" before "a", so with one doc kept only
  // the non-relevant b counts.
  Add(&s, {{"a", "1"}, {"b", "1"}});
  ASSERT_FALSE(s.JoinGrades(Q1()).has_value());
  QueryRow out;
  s.Score(*Q1(), &out);
  EXPECT_EQ(out.values[kNumRet], 1);
  EXPECT_EQ(out.values[kNumRelRet], 0);
  EXPECT_DOUBLE_EQ(out.values[kRecipRank], 0.0);
}

TEST_F(QueryScorerTest, FindsTheFirstDocnoListedTwice) {
  QueryScorer s(*qrels_, Config(1000));
  Add(&s, {{"a", "5"}, {"b", "4"}, {"c", "3"}, {"b", "2"}, {"a", "1"}});
  const std::optional<QueryScorer::Duplicate> d = s.JoinGrades(Q1());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->first, 1u);  // b, listed again at entry 3 before a at 4.
  EXPECT_EQ(d->again, 3u);
  // Reused after Clear(): the set of seen docnos starts empty again.
  s.Clear();
  Add(&s, {{"b", "2"}, {"a", "1"}});
  EXPECT_FALSE(s.JoinGrades(Q1()).has_value());
}

TEST_F(QueryScorerTest, RunOnlyQueryIsCheckedButNotJoined) {
  QueryScorer s(*qrels_, Config(1000));
  Add(&s, {{"a", "2"}, {"z", "1"}});
  EXPECT_FALSE(s.JoinGrades(nullptr).has_value());
  EXPECT_EQ((*s.entries())[0].grade, metrics::kUnjudged);
  s.Clear();
  Add(&s, {{"z", "2"}, {"z", "1"}});
  EXPECT_TRUE(s.JoinGrades(nullptr).has_value());
}

TEST_F(QueryScorerTest, RejectsScoresThatAreNotNumbers) {
  QueryScorer s(*qrels_, Config(1000));
  EXPECT_FALSE(s.AddEntry(RunLineFields{"q1", "a", "high", "r"}));
  EXPECT_FALSE(s.AddEntry(RunLineFields{"q1", "a", "nan", "r"}));
  EXPECT_TRUE(s.entries()->empty());
}

TEST_F(QueryScorerTest, EmptyListScoresZero) {
  QueryScorer s(*qrels_, Config(1000));
  EXPECT_FALSE(s.JoinGrades(Q1()).has_value());
  QueryRow out;
  s.Score(*Q1(), &out);
  EXPECT_EQ(out.values[kNumRet], 0);
  EXPECT_EQ(out.values[kNumRel], 2);
  EXPECT_DOUBLE_EQ(out.values[kMap], 0.0);
}

TEST(DocnoSetTest, RemembersHashesUntilCleared) {
  // The key is a hash's high 32 bits (bit 32 set, so never 0).
  constexpr uint64_t kHigh = uint64_t{1} << 32;
  DocnoSet set;
  set.Clear(3);
  EXPECT_TRUE(set.Insert(0x1234 * kHigh));
  EXPECT_TRUE(set.Insert((0x1234 + 128) * kHigh));  // Same slot: probes on.
  EXPECT_FALSE(set.Insert(0x1234 * kHigh));
  EXPECT_FALSE(set.Insert(0x1234 * kHigh + 99));  // Low bits are not kept.
  EXPECT_FALSE(set.Insert((0x1234 + 128) * kHigh));
  set.Clear(3);
  EXPECT_TRUE(set.Insert(0x1234 * kHigh));
  // Sized for 1,000, or for 1 and grown: 10,000 distinct keys (even high
  // bits: the low bit of the key is always set) all fit, and each is found
  // again.
  for (const size_t n : {size_t{1000}, size_t{1}}) {
    set.Clear(n);
    for (uint64_t h = 1; h <= 10000; ++h) {
      ASSERT_TRUE(set.Insert(2 * h * kHigh));
    }
    for (uint64_t h = 1; h <= 10000; ++h) {
      ASSERT_FALSE(set.Insert(2 * h * kHigh));
    }
  }
}

// AddJoinedEntry joins as AddEntry and JoinGrades do, line by line: q1's
// qrels (SetUp) give a 1, b 0, d 2; c is not judged.
TEST_F(QueryScorerTest, JoinsEachLineAsItIsAdded) {
  QueryScorer s(*qrels_, Config(1000));
  s.BeginJoined(Q1());
  for (const auto& [doc, score] :
       std::vector<std::pair<std::string_view, std::string_view>>{
           {"c", "1.0"}, {"a", "3.0"}, {"b", "2.0"}, {"d", "-1"}}) {
    ASSERT_TRUE(s.AddJoinedEntry(RunLineFields{"q1", doc, score, "r"}));
  }
  const std::vector<RunEntry>& e = *s.entries();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].grade, metrics::kUnjudged);  // c
  EXPECT_EQ(e[1].grade, 1);                   // a
  EXPECT_EQ(e[2].grade, 0);                   // b
  EXPECT_EQ(e[3].grade, 2);                   // d
  EXPECT_EQ(e[3].score, -1.0);
  // A docno listed again, or a score that is not a number: refused, and
  // nothing appended.
  EXPECT_FALSE(s.AddJoinedEntry(RunLineFields{"q1", "a", "0.5", "r"}));
  EXPECT_FALSE(s.AddJoinedEntry(RunLineFields{"q1", "e", "high", "r"}));
  EXPECT_EQ(s.entries()->size(), 4u);
  QueryRow out;
  s.Score(*Q1(), &out);
  EXPECT_EQ(out.values[kNumRet], 4);
  EXPECT_EQ(out.values[kNumRelRet], 2);  // a and d.
  // Ranked a (1), b (0), c (unjudged), d (2): AP = (1/1 + 2/4) / 2 = 0.75.
  EXPECT_DOUBLE_EQ(out.values[kMap], 0.75);
  // The next query starts empty; for a query the qrels lack, nothing is
  // judged, and a docno of the last query is new again.
  s.BeginJoined(nullptr);
  EXPECT_TRUE(s.AddJoinedEntry(RunLineFields{"q9", "a", "1", "r"}));
  ASSERT_EQ(s.entries()->size(), 1u);
  EXPECT_EQ((*s.entries())[0].grade, metrics::kUnjudged);
  EXPECT_FALSE(s.AddJoinedEntry(RunLineFields{"q9", "a", "2", "r"}));
}

}  // namespace
}  // namespace rankwatch::trec
