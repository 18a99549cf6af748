#include "daemon/stream/judge_agreement.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

constexpr metrics::Grade U = metrics::kUnjudged;

TEST(JudgePairsTest, PairIndexCountsThePairsInOrder) {
  EXPECT_EQ(NumJudgePairs(0), 0u);
  EXPECT_EQ(NumJudgePairs(1), 0u);
  EXPECT_EQ(NumJudgePairs(3), 3u);
  EXPECT_EQ(NumJudgePairs(8), 28u);
  // (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3).
  EXPECT_EQ(PairIndex(0, 1, 4), 0u);
  EXPECT_EQ(PairIndex(0, 3, 4), 2u);
  EXPECT_EQ(PairIndex(1, 2, 4), 3u);
  EXPECT_EQ(PairIndex(2, 3, 4), 5u);
}

// Two lists: human, llm and clicks grade some of their served docs.
// Counted by hand below.
TEST(JudgeAgreementTest, CountsTheServedDocsEachPairGraded) {
  JudgeAgreement agreement({"human", "llm", "clicks"});
  std::vector<JudgeGrades> list(3);
  list[0].ranked = {2, 1, U};  // human
  list[1].ranked = {2, 0, 1};  // llm
  list[2].ranked = {U, 1, U};  // clicks
  agreement.AddList(list, 0);
  list[0].ranked = {3};
  list[1].ranked = {U};
  list[2].ranked = {U};
  agreement.AddList(list, 1);
  const std::vector<JudgePairCounts> merged = agreement.Merged();
  ASSERT_EQ(merged.size(), 3u);
  // human-llm: (2, 2) and (1, 0) both; llm alone on rank 3; human alone
  // on the second list.
  const JudgePairCounts& hl = merged[PairIndex(0, 1, 3)];
  EXPECT_EQ(hl.both.items(), 2);
  EXPECT_EQ(hl.both.counts().at({2, 2}), 1);
  EXPECT_EQ(hl.both.counts().at({1, 0}), 1);
  EXPECT_EQ(hl.only_first, 1);
  EXPECT_EQ(hl.only_second, 1);
  // human-clicks: (1, 1) both; human alone on rank 1 and the second list.
  const JudgePairCounts& hc = merged[PairIndex(0, 2, 3)];
  EXPECT_EQ(hc.both.items(), 1);
  EXPECT_EQ(hc.only_first, 2);
  EXPECT_EQ(hc.only_second, 0);
  // llm-clicks: (0, 1) both; llm alone on ranks 1 and 3.
  const JudgePairCounts& lc = merged[PairIndex(1, 2, 3)];
  EXPECT_EQ(lc.both.counts().at({0, 1}), 1);
  EXPECT_EQ(lc.only_first, 2);
}

// A checkpoint restores by judge names: under another order a pair's
// grades swap sides; a pair with a judge gone is dropped.
TEST(JudgeAgreementTest, CheckpointsRestoreByJudgeNames) {
  JudgeAgreement agreement({"human", "llm", "clicks"});
  std::vector<JudgeGrades> list(3);
  list[0].ranked = {2, 1, U};
  list[1].ranked = {3, U, 1};
  list[2].ranked = {U, U, 1};
  agreement.AddList(list, 4);
  std::string record;
  ByteWriter w(&record);
  agreement.EncodeShard(4, &w);

  JudgeAgreement reordered({"llm", "human"});
  ByteReader r(record);
  ASSERT_TRUE(reordered.DecodeShard(4, &r).ok());
  EXPECT_TRUE(r.at_end());
  const std::vector<JudgePairCounts> merged = reordered.Merged();
  ASSERT_EQ(merged.size(), 1u);
  // llm first now: the pair (human 2, llm 3) reads (3, 2).
  EXPECT_EQ(merged[0].both.items(), 1);
  EXPECT_EQ(merged[0].both.counts().at({3, 2}), 1);
  EXPECT_EQ(merged[0].only_first, 1);   // llm alone (rank 3).
  EXPECT_EQ(merged[0].only_second, 1);  // human alone (rank 2).

  reordered.DropShard(4);
  EXPECT_EQ(reordered.Merged()[0].both.items(), 0);

  ByteReader corrupt(std::string_view(record).substr(0, record.size() - 3));
  JudgeAgreement other({"human", "llm"});
  EXPECT_FALSE(other.DecodeShard(4, &corrupt).ok());
  EXPECT_EQ(other.Merged()[0].both.items(), 0);
}

}  // namespace
}  // namespace rankwatch::stream
