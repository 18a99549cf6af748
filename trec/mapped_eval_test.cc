#include "trec/mapped_eval.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

class MappedEvalTest : public ::testing::Test {
 protected:
  // q1: a and d relevant (R = 2); q2: x (grade 2); q3 only in the qrels.
  void SetUp() override {
    StatusOr<Qrels> q =
        Qrels::Parse("q1 0 a 1\nq1 0 d 1\nq2 0 x 2\nq3 0 y 1\n", "qrels");
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    qrels_ = std::make_unique<Qrels>(std::move(q).value());
  }

  Status Evaluate(const std::string& run, int threads, bool complete = false) {
    run_ = dir_.Write("run.txt", run);
    return EvaluateMapped("qrels.txt", run_, *qrels_, TestConfig(), complete,
                          threads, &results_, &run_id_);
  }

  testing::TempDir dir_;
  std::string run_;
  std::unique_ptr<Qrels> qrels_;
  std::vector<QueryResult> results_;
  std::string run_id_;
};

TEST_F(MappedEvalTest, ScoresInterleavedRunsInQidOrder) {
  for (int threads : {1, 3}) {
    ASSERT_TRUE(Evaluate("q2 Q0 x 1 5 r\nq1 Q0 b 1 3 r\nq9 Q0 z 1 1 r\n"
                         "q1 Q0 a 2 2 r\n",
                         threads)
                    .ok());
    ASSERT_EQ(results_.size(), 2u);
    EXPECT_EQ(results_[0].qid, "q1");
    // q1 ranked b (unjudged), a (relevant): 1 of R = 2 at rank 2.
    EXPECT_EQ(results_[0].values[kNumRet], 2);
    EXPECT_DOUBLE_EQ(results_[0].values[kMap], 0.25);  // 1/2/2
    EXPECT_EQ(results_[1].qid, "q2");
    EXPECT_DOUBLE_EQ(results_[1].values[kRecipRank], 1.0);
  }
  EXPECT_EQ(run_id_, "r");
  ASSERT_TRUE(Evaluate("q2 Q0 x 1 5 r\n", 2, /*complete=*/true).ok());
  ASSERT_EQ(results_.size(), 3u);
  EXPECT_EQ(results_[2].qid, "q3");
  EXPECT_EQ(results_[2].values[kNumRet], 0);
}

// Several queries are wrong; on any number of threads the error is the one
// a reading front to back meets first.
TEST_F(MappedEvalTest, ReportsTheFirstErrorInFileOrder) {
  const std::string run =
      "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n"  // Duplicate on line 3.
      "q2 Q0 x 1 r\n"                                  // 5 fields on line 4.
      "q9 Q0 z 1 1 r\nq9 Q0 z 1 1 r\n";                // Duplicate, line 6.
  for (int threads : {1, 2, 8}) {
    const Status s = Evaluate(run, threads);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), run_ +
                               ":3: duplicate docno 'a' for query q1 (first "
                               "listed on line 1)")
        << "threads " << threads;
  }
  const Status s = Evaluate("q2 Q0 x 1 r\nq9 Q0 z 1 1 r\nq9 Q0 z 1 1 r\n", 2);
  EXPECT_NE(s.message().find(":1: expected 6 fields"), std::string::npos)
      << s.message();
}

TEST_F(MappedEvalTest, NoCommonQuery) {
  const Status s = Evaluate("q8 Q0 a 1 1 r\n", 2);
  EXPECT_EQ(s.message(), "no query appears in both 'qrels.txt' and '" + run_ +
                             "' (with -c, every qrels query counts)");
}

}  // namespace
}  // namespace rankwatch::trec
