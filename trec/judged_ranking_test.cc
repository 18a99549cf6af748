#include "trec/judged_ranking.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trec/qrels.h"

namespace rankwatch::trec {
namespace {

using metrics::Grade;

// Levels 0 .. n-1, one judged doc each.
std::vector<LevelCount> OnePerLevel(int64_t n) {
  std::vector<LevelCount> levels;
  for (int64_t l = 0; l < n; ++l) levels.push_back(LevelCount{l, 1});
  return levels;
}

TEST(JudgedRankingBuilderTest, ReusedBuilderForgetsThePreviousQuery) {
  JudgedRankingBuilder b;
  const std::vector<Grade> first_judgments = {3, 3, 3, 0};
  const std::vector<Grade> first_codes = {3, 3};
  (void)b.Build(first_codes, first_judgments, 1);
  // Second query: judgments 0 and 1 only, so levels 0:1 1:1; the run
  // retrieves the relevant doc, one unjudged doc in the pool and one doc
  // outside it.
  const std::vector<Grade> judgments = {0, 1, -1};
  const std::vector<Grade> codes = {1, kUnjudgedInPool, kNotInPool};
  const JudgedRanking r = b.Build(codes, judgments, 1);
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_EQ(r.levels[0].count, 1);
  EXPECT_EQ(r.levels[1].count, 1);
  EXPECT_EQ(r.num_rel, 1);
  EXPECT_EQ(r.num_judged_nonrel, 1);
  EXPECT_EQ(r.num_rel_ret, 1);
  EXPECT_EQ(r.num_unjudged_in_pool, 1);
  EXPECT_EQ(r.num_nonpool, 1);
  EXPECT_EQ(r.num_ret(), 3);
}

TEST(GainTableTest, UnmappedLevelsGainTheirLevelAndUnknownCodesZero) {
  GainTable gains;
  const std::vector<LevelCount> levels = OnePerLevel(3);
  // Pairs whose name is not an integer (p=0.5) are not gains.
  const std::vector<ParamPair> pairs = {{"2", 10.0}, {"p", 0.5}};
  gains.Setup(pairs, levels);
  EXPECT_EQ(gains.Of(0), 0.0);
  EXPECT_EQ(gains.Of(1), 1.0);
  EXPECT_EQ(gains.Of(2), 10.0);
  EXPECT_EQ(gains.Of(7), 0.0);  // No such level.
  EXPECT_EQ(gains.Of(kNotInPool), 0.0);
  ASSERT_EQ(gains.entries().size(), 3u);
  EXPECT_EQ(gains.entries().back().level, 2);  // Highest gain last.
}

// trec_eval's comparator truncates the gain difference to an int, so 4.5
// and 4 compare equal and keep their order. Entries 1:4.5 2:4 (mapped),
// then 0:0; the merge sort of [1:4.5, 2:4, 0:0] sorts [2:4, 0:0] into
// [0:0, 2:4] (4 - 0 = 4 > 0), then merges [1:4.5] with it: 0:0 first
// (4.5 > 0), then 1:4.5 (4.5 - 4 truncates to 0: the left one first),
// then 2:4.
TEST(GainTableTest, TruncatedComparatorKeepsCloseGainsInOrder) {
  GainTable gains;
  const std::vector<LevelCount> levels = OnePerLevel(3);
  const std::vector<ParamPair> pairs = {{"1", 4.5}, {"2", 4.0}};
  gains.Setup(pairs, levels);
  ASSERT_EQ(gains.entries().size(), 3u);
  EXPECT_EQ(gains.entries()[0].level, 0);
  EXPECT_EQ(gains.entries()[1].level, 1);
  EXPECT_EQ(gains.entries()[2].level, 2);
  // So the ideal ranking, walked from the last entry down, puts the gain-4
  // doc first: ideal DCG = 4/log2 2 + 4.5/log2 3, below the DCG of a run
  // that ranks them 4.5 then 4 (4.5/log2 2 + 4/log2 3), as in trec_eval.
  const std::vector<Grade> codes = {1, 2, 0};
  const std::vector<Grade> judgments = {0, 1, 2};
  JudgedRankingBuilder b;
  const JudgedRanking r = b.Build(codes, judgments, 1);
  double ideal = 0.0;
  double dcg = 0.0;
  ComputeNdcg(r, &gains, TrecMeasure::kIdealDcg, &ideal);
  ComputeNdcg(r, &gains, TrecMeasure::kDcg, &dcg);
  EXPECT_DOUBLE_EQ(ideal, 4.0 + 4.5 / std::log2(3.0));
  EXPECT_DOUBLE_EQ(dcg, 4.5 + 4.0 / std::log2(3.0));
}

// Beyond 16 entries the gain of a code is found by binary search over the
// levels; a level named twice keeps its first entry in gain order.
TEST(GainTableTest, ManyLevelsSearchedByLevel) {
  GainTable gains;
  const std::vector<LevelCount> levels = OnePerLevel(20);
  const std::vector<ParamPair> pairs = {{"5", 7.0}, {"5", -3.0}};
  gains.Setup(pairs, levels);
  ASSERT_EQ(gains.entries().size(), 21u);  // Two for level 5.
  EXPECT_EQ(gains.Of(0), 0.0);
  EXPECT_EQ(gains.Of(17), 17.0);
  EXPECT_EQ(gains.Of(19), 19.0);
  EXPECT_EQ(gains.Of(5), -3.0);  // -3 sorts before 7.
  EXPECT_EQ(gains.Of(20), 0.0);
  EXPECT_EQ(gains.Of(-1), 0.0);
  // Rescaled into [0, 1] by (gain - min) / (max - min) = (g + 3) / 22.
  gains.Rescale(-3.0, 19.0);
  EXPECT_DOUBLE_EQ(gains.Of(5), 0.0);
  EXPECT_DOUBLE_EQ(gains.Of(19), 1.0);
  EXPECT_DOUBLE_EQ(gains.Of(8), 11.0 / 22.0);
}

// The hand-made ranking of trec_measures_test.cc: codes 2 -1 0 -2 1 0
// (a, x outside the pool, b, d unjudged in the pool, c, e).
class JudgedMeasuresTest : public ::testing::Test {
 protected:
  JudgedRanking Ranking() { return builder_.Build(codes_, judgments_, 1); }

  const std::vector<Grade> judgments_ = {2, 0, 1, -1, 0, 3, 1};
  const std::vector<Grade> codes_ = {2, kNotInPool, 0, kUnjudgedInPool, 1, 0};
  JudgedRankingBuilder builder_;
};

TEST_F(JudgedMeasuresTest, UnjudgedShareAtCutoffs) {
  // Unjudged (negative code) at ranks 2 and 4: top 1 has 0 of 1, top 2
  // has 1 of 2, top 4 has 2 of 4; past the list, 2 of 10.
  const std::vector<int32_t> cutoffs = {1, 2, 4, 10};
  std::vector<double> out(cutoffs.size());
  ComputeUnj(Ranking(), cutoffs, out);
  EXPECT_EQ(out, (std::vector<double>{0.0, 0.5, 0.5, 0.2}));
}

TEST_F(JudgedMeasuresTest, RelstringMarksEachCode) {
  std::string text;
  // '-' outside the pool, '.' unjudged in it, the grade otherwise.
  ComputeRelstring(Ranking(), 4, &text);
  EXPECT_EQ(text, "2-0.");
  ComputeRelstring(Ranking(), 100, &text);
  EXPECT_EQ(text, "2-0.10");
  ComputeRelstring(Ranking(), std::nan(""), &text);
  EXPECT_EQ(text, "");
  // Grades above 9 print as '>'.
  const std::vector<Grade> codes = {12, 9};
  JudgedRankingBuilder b;
  ComputeRelstring(b.Build(codes, judgments_, 1), 10, &text);
  EXPECT_EQ(text, ">9");
}

TEST_F(JudgedMeasuresTest, GeometricMeanInputsAreFloored) {
  // bpref: a relevant at rank 1 with no judged non-relevant above (+1);
  // c relevant at rank 5 below one judged non-relevant (b):
  // 1 - min(1, R=4) / min(2 non-relevant, 4) = 1/2; over R = 4: 0.375.
  EXPECT_DOUBLE_EQ(ComputeBpref(Ranking(), 1), 0.375);
  EXPECT_DOUBLE_EQ(ComputeGmBpref(Ranking(), 1), std::log(0.375));
  // Nothing relevant retrieved: AP and bpref are 0, floored at .00001.
  const std::vector<Grade> codes = {0, 0};
  JudgedRankingBuilder b;
  const JudgedRanking none = b.Build(codes, judgments_, 1);
  EXPECT_DOUBLE_EQ(ComputeGmMap(none, 1), std::log(0.00001));
  EXPECT_DOUBLE_EQ(ComputeGmBpref(none, 1), std::log(0.00001));
}

TEST_F(JudgedMeasuresTest, RbpResidualWithPersistenceOneHalf) {
  // p = 0.5: weights 1, 1/2, 1/4, ... by rank; 0.5^6 is left after the
  // list, and the unjudged docs at ranks 2 and 4 could add
  // (1 - p)(0.5 + 0.125): 0.015625 + 0.3125 = 0.328125.
  const std::vector<ParamPair> pairs = {{"p", 0.5}};
  EXPECT_DOUBLE_EQ(ComputeRbpResid(Ranking(), pairs), 0.328125);
  // Every doc judged: nothing is left to learn.
  const std::vector<Grade> codes = {2, 0, 1};
  JudgedRankingBuilder b;
  EXPECT_EQ(ComputeRbpResid(b.Build(codes, judgments_, 1), pairs), 0.0);
}

}  // namespace
}  // namespace rankwatch::trec
