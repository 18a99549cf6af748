#include "trec/judge_compare.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

// Two judges of two queries. "human" and "llm" both grade 7 (query, doc)
// pairs; human alone q2/d4, llm alone q1/d5; llm's q2/d5 is -1, no label.
constexpr char kHuman[] =
    "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 1\n"
    "q2 0 d1 1\nq2 0 d2 0\nq2 0 d3 2\nq2 0 d4 0\n";
constexpr char kLlm[] =
    "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 0\nq1 0 d4 2\nq1 0 d5 1\n"
    "q2 0 d1 1\nq2 0 d2 1\nq2 0 d3 2\nq2 0 d5 -1\n";

// The pairs (human, llm): q1 (2,2) (1,0) (0,0) (1,2), q2 (1,1) (0,1) (2,2).
// By hand: the table has 4 agreements in 7, row totals (grade 0, 1, 2) 2,
// 3, 2 and column totals 2, 2, 3, so p_o = 4/7, p_e = (4 + 6 + 6) / 49 =
// 16/49 and kappa = (28 - 16) / (49 - 16) = 12/33 = 4/11. scikit-learn's
// cohen_kappa_score gives 0.36363636363636365 and, with linear weights,
// 0.5116279069767442; statsmodels' standard errors 0.2681956485260991 and
// 0.22606555721126026; the krippendorff package's ordinal alpha
// 0.699647266313933.
TEST(CompareLabelsTest, PairsBothGradedAndTheirAgreement) {
  const StatusOr<Qrels> human = Qrels::Parse(kHuman, "human");
  const StatusOr<Qrels> llm = Qrels::Parse(kLlm, "llm");
  ASSERT_TRUE(human.ok() && llm.ok());
  const LabelAgreement a = CompareLabels(*human, *llm, JudgeCompareOptions());
  EXPECT_EQ(a.pairs, 7);
  EXPECT_EQ(a.only_first, 1);   // human's q2/d4.
  EXPECT_EQ(a.only_second, 1);  // llm's q1/d5 (its q2/d5 is no label).
  ASSERT_TRUE(a.kappa.has_value());
  EXPECT_NEAR(a.kappa->estimate, 4.0 / 11, 1e-15);
  EXPECT_NEAR(a.kappa->std_error, 0.2681956485260991, 1e-14);
  ASSERT_TRUE(a.weighted_kappa.has_value());
  EXPECT_NEAR(a.weighted_kappa->estimate, 0.5116279069767442, 1e-14);
  EXPECT_NEAR(a.weighted_kappa->std_error, 0.22606555721126026, 1e-14);
  ASSERT_TRUE(a.alpha.has_value());
  EXPECT_NEAR(a.alpha->estimate, 0.699647266313933, 1e-14);
  // Symmetric in the pairs, swapped in the "only" counts.
  const LabelAgreement b = CompareLabels(*llm, *human, JudgeCompareOptions());
  EXPECT_EQ(b.pairs, 7);
  EXPECT_NEAR(b.kappa->estimate, 4.0 / 11, 1e-15);
}

std::vector<Qrels> TwoJudges() {
  StatusOr<Qrels> human = Qrels::Parse(kHuman, "human");
  StatusOr<Qrels> llm = Qrels::Parse(kLlm, "llm");
  EXPECT_TRUE(human.ok() && llm.ok());
  std::vector<Qrels> qrels;
  qrels.push_back(std::move(human).value());
  qrels.push_back(std::move(llm).value());
  return qrels;
}

RunScores Scores(const std::string& name, double q1, double q2) {
  return RunScores{name, {"q1", "q2"}, {{q1, q2}}};
}

// Three runs' P@2 (threshold 1) by hand. Run A retrieves q1: d1 d4, q2: d3
// d4; B q1: d2 d3, q2: d2 d4; C q1: d4 d5, q2: d1 d2.
//   human: A (1 + 1/2) / 2 = 0.75, B (1/2 + 0) / 2 = 0.25,
//          C (1/2 + 1/2) / 2 = 0.5:   A > C > B.
//   llm:   A (1 + 1/2) / 2 = 0.75, B (0 + 1/2) / 2 = 0.25,
//          C (1 + 1) / 2 = 1:         C > A > B.
// One pair swaps (A over C for human, under for llm); Kendall's tau-b =
// (2 concordant - 1 discordant) / 3 = 1/3 (SciPy's kendalltau: 1/3, p 1);
// tau_AP of llm's order C, A, B against human's: A has C above it, wrong
// (0/1); B has C and A, both right (2/2); 2/2 (0 + 1) - 1 = 0.
TEST(CompareJudgesTest, RankingsUnderEachJudge) {
  std::vector<Qrels> qrels = TwoJudges();
  std::vector<EvaluatedRuns> evaluated(2);
  evaluated[0].measures = {"P_2"};
  evaluated[0].runs = {Scores("A", 1, 0.5), Scores("B", 0.5, 0),
                       Scores("C", 0.5, 0.5)};
  evaluated[1].measures = {"P_2"};
  evaluated[1].runs = {Scores("A", 1, 0.5), Scores("B", 0, 0.5),
                       Scores("C", 1, 1)};
  const std::vector<std::string> judges = {"human", "llm"};
  const StatusOr<JudgeComparison> c =
      CompareJudges(judges, qrels, evaluated, JudgeCompareOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->means[0][0][0], 0.75);
  EXPECT_EQ(c->means[0][2][0], 0.5);
  EXPECT_EQ(c->means[1][2][0], 1.0);
  ASSERT_EQ(c->labels.size(), 1u);
  EXPECT_EQ(c->labels[0].pairs, 7);
  ASSERT_EQ(c->rankings.size(), 1u);
  const RankingAgreement& r = c->rankings[0];
  EXPECT_EQ(r.judge, 1u);
  ASSERT_TRUE(r.kendall.has_value());
  EXPECT_NEAR(r.kendall->coefficient, 1.0 / 3, 1e-15);
  EXPECT_NEAR(r.kendall->p_value, 1.0, 1e-12);
  ASSERT_TRUE(r.tau_ap.has_value());
  EXPECT_NEAR(*r.tau_ap, 0.0, 1e-15);
  ASSERT_EQ(r.swaps.size(), 1u);
  EXPECT_EQ(r.swaps[0].above, 0u);  // A.
  EXPECT_EQ(r.swaps[0].below, 2u);  // C.

  std::string text;
  WriteJudgeComparisonText(*c, &text);
  EXPECT_NE(text.find("human ~ llm      7           1            1  0.3636 ["),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("P_2: human ranks A (0.7500) above C (0.5000); llm the "
                      "other way (0.7500 < 1.0000)"),
            std::string::npos)
      << text;
  std::string json;
  WriteJudgeComparisonJson(*c, &json);
  EXPECT_NE(json.find("\"agreement\": [{\"judges\": [\"human\", \"llm\"], "
                      "\"pairs\": 7, \"only_first\": 1, \"only_second\": 1, "
                      "\"kappa\": 0.363636363636363"),
            std::string::npos)
      << json;  // 4/11 to 15 digits (17 printed, the shortest round trip).
  EXPECT_NE(json.find("\"tau_ap\": 0, \"swaps\": [[\"A\", \"C\"]]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"llm\": {\"A\": {\"P_2\": 0.75}, \"B\": {\"P_2\": "
                      "0.25}, \"C\": {\"P_2\": 1}}"),
            std::string::npos)
      << json;
}

// Prediction-powered means by hand (plain PPI, lambda 1). The trusted
// judge evaluated q0 (which the cheap judge lacks: left out) and q1-q3 (the
// labelled sample) with y = 0.5, 0.2, 0.9; the cheap judge q1-q6 with f =
// 0.6, 0.4, 0.8, then 0.3, 0.7, 0.5 (the others).
//   estimate = mean(others) + mean(y - f) = 0.5 + (-0.1 - 0.2 + 0.1) / 3
//            = 0.5 - 0.2/3 = 0.43333...
//   se^2 = var(others)/3 + var(y - f)/3, variances with divisors 3:
//        = (0.08 / 3) / 3 + (0.046666... / 3) / 3 = 0.0140740...
//   classical: mean(y) = 1.6 / 3; cheap alone: 3.3 / 6 = 0.55.
//   95% interval: 0.4333 -+ 1.96 * 0.11863 = [0.2008, 0.6659].
TEST(CompareJudgesTest, PredictionPoweredMeans) {
  std::vector<Qrels> qrels = TwoJudges();
  std::vector<EvaluatedRuns> evaluated(2);
  evaluated[0].measures = {"P_2"};
  evaluated[0].runs = {
      RunScores{"A", {"q0", "q1", "q2", "q3"}, {{1.0, 0.5, 0.2, 0.9}}}};
  evaluated[1].measures = {"P_2"};
  evaluated[1].runs = {RunScores{"A",
                                 {"q1", "q2", "q3", "q4", "q5", "q6"},
                                 {{0.6, 0.4, 0.8, 0.3, 0.7, 0.5}}}};
  JudgeCompareOptions options;
  options.ppi = true;
  const std::vector<std::string> judges = {"human", "llm"};
  const StatusOr<JudgeComparison> c =
      CompareJudges(judges, qrels, evaluated, options);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->ppi.size(), 1u);
  const PpiRow& p = c->ppi[0];
  EXPECT_EQ(p.labelled, 3);
  EXPECT_EQ(p.others, 3);
  ASSERT_TRUE(p.estimate.has_value());
  EXPECT_NEAR(p.estimate->estimate, 0.5 - 0.2 / 3, 1e-15);
  EXPECT_NEAR(p.estimate->std_error, std::sqrt(0.08 / 9 + (0.14 / 3) / 9),
              1e-15);
  EXPECT_EQ(p.estimate->lambda, 1);
  EXPECT_NEAR(p.estimate->classical, 1.6 / 3, 1e-15);
  EXPECT_NEAR(p.estimate->naive, 0.55, 1e-15);
  std::string text;
  WriteJudgeComparisonText(*c, &text);
  EXPECT_NE(
      text.find("A        P_2         3       3  0.4333 [0.2008, 0.6659]"),
      std::string::npos)
      << text;
  std::string json;
  WriteJudgeComparisonJson(*c, &json);
  EXPECT_NE(json.find("\"ppi\": {\"trusted\": \"human\", \"cheap\": "
                      "\"llm\", \"tuned\": false, \"means\": [{\"run\": "
                      "\"A\", \"measure\": \"P_2\", \"labelled\": 3, "
                      "\"others\": 3, \"estimate\": 0.4333333"),
            std::string::npos)
      << json;
}

TEST(CompareJudgesTest, Errors) {
  std::vector<Qrels> qrels = TwoJudges();
  std::vector<EvaluatedRuns> evaluated(2);
  evaluated[0].measures = {"P_2"};
  evaluated[1].measures = {"map"};
  const std::vector<std::string> judges = {"human", "llm"};
  EXPECT_FALSE(
      CompareJudges(judges, qrels, evaluated, JudgeCompareOptions()).ok());
  const std::vector<std::string> one = {"human"};
  EXPECT_FALSE(CompareJudges(one, std::span<const Qrels>(qrels).first(1),
                             std::span<const EvaluatedRuns>(evaluated).first(1),
                             JudgeCompareOptions())
                   .ok());
}

}  // namespace
}  // namespace rankwatch::trec
