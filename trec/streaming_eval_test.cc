#include "trec/streaming_eval.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

class StreamingEvalTest : public ::testing::Test {
 protected:
  // q1: a and d relevant (R = 2); q2: x (grade 2); q3 only in the qrels.
  void SetUp() override {
    StatusOr<Qrels> q =
        Qrels::Parse("q1 0 a 1\nq1 0 d 1\nq2 0 x 2\nq3 0 y 1\n", "qrels");
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    qrels_ = std::make_unique<Qrels>(std::move(q).value());
  }

  // Streams `run` in chunks of `chunk_bytes` on `threads` threads.
  bool Evaluate(const std::string& run, size_t chunk_bytes, int threads,
                bool complete = false) {
    const std::unique_ptr<RunChunkReader> reader =
        RunChunkReader::Open(dir_.Write("run.txt", run), chunk_bytes);
    EXPECT_NE(reader, nullptr);
    if (reader == nullptr) return false;
    return EvaluateStreaming(reader.get(), *qrels_, TestConfig(), complete,
                             threads, &results_, &run_id_);
  }

  testing::TempDir dir_;
  std::unique_ptr<Qrels> qrels_;
  std::vector<QueryResult> results_;
  std::string run_id_;
};

// q1's lines come in two groups, around q2's: q1 is scored again from both.
TEST_F(StreamingEvalTest, ScoresSplitQueriesFromAllTheirLines) {
  const std::string run =
      "q1 Q0 b 1 3 r\nq2 Q0 x 1 5 r\nq9 Q0 z 1 1 r\nq1 Q0 a 2 2 r\n";
  for (size_t chunk : {1, 14, 1 << 20}) {
    for (int threads : {1, 2}) {
      ASSERT_TRUE(Evaluate(run, chunk, threads));
      // In qid order; q9 (run only) and q3 (qrels only, no -c) are left out.
      ASSERT_EQ(results_.size(), 2u);
      EXPECT_EQ(results_[0].qid, "q1");
      // q1 ranked b (unjudged), a (relevant): 1 of R = 2 at rank 2.
      EXPECT_EQ(results_[0].values[kNumRet], 2);
      EXPECT_EQ(results_[0].values[kNumRelRet], 1);
      EXPECT_DOUBLE_EQ(results_[0].values[kRecipRank], 0.5);
      EXPECT_DOUBLE_EQ(results_[0].values[kMap], 0.25);  // 1/2/2
      EXPECT_EQ(results_[1].qid, "q2");
      EXPECT_DOUBLE_EQ(results_[1].values[kMap], 1.0);
    }
  }
}

TEST_F(StreamingEvalTest, CompleteAddsQueriesMissingFromTheRun) {
  ASSERT_TRUE(Evaluate("q2 Q0 x 1 5 r\n", 1 << 20, 2, /*complete=*/true));
  ASSERT_EQ(results_.size(), 3u);
  EXPECT_EQ(results_[0].qid, "q1");
  EXPECT_EQ(results_[0].values[kNumRet], 0);
  EXPECT_EQ(results_[2].qid, "q3");
}

// trec_eval prints the run id of the file's last line, whichever chunk and
// thread read it.
TEST_F(StreamingEvalTest, RunIdIsTheLastLines) {
  const std::string run =
      "q1 Q0 b 1 3 first\nq2 Q0 x 1 5 mid\n# comment\nq1 Q0 a 2 2 last\n\n";
  for (size_t chunk : {1, 14, 1 << 20}) {
    for (int threads : {1, 2}) {
      ASSERT_TRUE(Evaluate(run, chunk, threads));
      EXPECT_EQ(run_id_, "last") << chunk << " " << threads;
    }
  }
}

// No error message here: the caller reads the run again, mapped, for it.
TEST_F(StreamingEvalTest, GivesUpOnMalformedRuns) {
  EXPECT_FALSE(Evaluate("q1 Q0 a 1 r\n", 1 << 20, 1));       // 5 fields.
  EXPECT_FALSE(Evaluate("q1 Q0 a 1 high r\n", 1 << 20, 1));  // Score.
  EXPECT_FALSE(Evaluate("q1 Q0 a 1 3 r\nq1 Q0 a 2 2 r\n", 1 << 20, 2));
  // The same docno twice in two groups of one qid.
  EXPECT_FALSE(Evaluate("q1 Q0 a 1 3 r\nq2 Q0 x 1 2 r\nq1 Q0 a 3 1 r\n", 1, 2));
  // A run-only query is checked too.
  EXPECT_FALSE(Evaluate("q1 Q0 a 1 3 r\nq9 Q0 z 1 r\n", 1 << 20, 1));
}

}  // namespace
}  // namespace rankwatch::trec
