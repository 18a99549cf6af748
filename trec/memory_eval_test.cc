#include "trec/memory_eval.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

// q1 judges a and c relevant, b not; q2 judges a; q4 is only in the qrels.
constexpr char kQrels[] = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 a 1\nq4 0 z 1\n";

Qrels TestQrels() { return Qrels::Parse(kQrels, "qrels").value(); }

TEST(MemoryEvalTest, ScoresTheQueriesBothHaveInQidOrder) {
  const Qrels qrels = TestQrels();
  MemoryRun run;
  // Rows of q1 come in two groups, around q3 and q2: one query all the same.
  const size_t q1 = run.Query("q1");
  ASSERT_TRUE(run.Add(q1, "b", 3.0));
  ASSERT_TRUE(run.Add(run.Query("q3"), "y", 1.0));  // Not judged: left out.
  ASSERT_TRUE(run.Add(run.Query("q2"), "x", 1.0));
  ASSERT_TRUE(run.Add(run.Query("q1"), "a", 2.0));
  ASSERT_TRUE(run.Add(q1, "d", 1.0));
  std::vector<QueryResult> results;
  ASSERT_TRUE(
      EvaluateMemory(qrels, run, TestConfig(), false, 2, &results).ok());
  ASSERT_EQ(results.size(), 2u);
  // q1 ranks b (0), a (1), d (unjudged); R = 2: one relevant retrieved at
  // rank 2, so AP = (1/2) / 2 and RR = 1/2.
  EXPECT_EQ(results[0].qid, "q1");
  EXPECT_EQ(results[0].values[kNumRet], 3);
  EXPECT_EQ(results[0].values[kNumRelRet], 1);
  EXPECT_DOUBLE_EQ(results[0].values[kMap], 0.25);
  EXPECT_DOUBLE_EQ(results[0].values[kRecipRank], 0.5);
  // q2 retrieves only x, unjudged: nothing relevant.
  EXPECT_EQ(results[1].qid, "q2");
  EXPECT_EQ(results[1].values[kNumRet], 1);
  EXPECT_EQ(results[1].values[kMap], 0);
}

TEST(MemoryEvalTest, TiesAreBrokenByDocnoDescendingAsTrecEvalBreaksThem) {
  const Qrels qrels = TestQrels();
  MemoryRun run;
  const size_t q1 = run.Query("q1");
  ASSERT_TRUE(run.Add(q1, "a", 1.0));
  ASSERT_TRUE(run.Add(q1, "b", 1.0));
  std::vector<QueryResult> results;
  ASSERT_TRUE(
      EvaluateMemory(qrels, run, TestConfig(), false, 1, &results).ok());
  ASSERT_EQ(results.size(), 1u);
  // b ranks first (strcmp descending), a second: RR = 1/2, AP = (1/2) / 2.
  EXPECT_DOUBLE_EQ(results[0].values[kRecipRank], 0.5);
  EXPECT_DOUBLE_EQ(results[0].values[kMap], 0.25);
}

TEST(MemoryEvalTest, CompleteScoresTheQrelsQueriesTheRunLacks) {
  const Qrels qrels = TestQrels();
  MemoryRun run;
  ASSERT_TRUE(run.Add(run.Query("q2"), "a", 1.0));
  std::vector<QueryResult> results;
  ASSERT_TRUE(EvaluateMemory(qrels, run, TestConfig(), true, 2, &results).ok());
  // q1, q2, q4 in qid order; the missing ones retrieve nothing.
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].qid, "q1");
  EXPECT_EQ(results[0].values[kNumRet], 0);
  EXPECT_EQ(results[0].values[kMap], 0);
  EXPECT_EQ(results[1].qid, "q2");
  EXPECT_DOUBLE_EQ(results[1].values[kMap], 1.0);
  EXPECT_EQ(results[2].qid, "q4");
}

TEST(MemoryEvalTest, NoQueryInCommonGivesNoResults) {
  const Qrels qrels = TestQrels();
  MemoryRun run;
  ASSERT_TRUE(run.Add(run.Query("q9"), "a", 1.0));
  std::vector<QueryResult> results(1);
  ASSERT_TRUE(
      EvaluateMemory(qrels, run, TestConfig(), false, 1, &results).ok());
  EXPECT_TRUE(results.empty());
}

TEST(MemoryEvalTest, ADocListedTwiceIsAnErrorNamingIt) {
  const Qrels qrels = TestQrels();
  MemoryRun run;
  const size_t q1 = run.Query("q1");
  ASSERT_TRUE(run.Add(q1, "a", 2.0));
  ASSERT_TRUE(run.Add(q1, "a", 1.0));
  std::vector<QueryResult> results;
  const Status s = EvaluateMemory(qrels, run, TestConfig(), false, 1, &results);
  EXPECT_EQ(s.message(), "query 'q1' lists doc 'a' twice");
}

TEST(MemoryEvalTest, ScoresThatAreNotFiniteAreRefused) {
  MemoryRun run;
  const size_t q1 = run.Query("q1");
  EXPECT_FALSE(run.Add(q1, "a", std::nan("")));
  EXPECT_FALSE(run.Add(q1, "a", INFINITY));
  EXPECT_TRUE(run.Add(q1, "a", 1.0));
}

}  // namespace
}  // namespace rankwatch::trec
