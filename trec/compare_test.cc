#include "trec/compare.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

// Three runs, two measures, eight common queries q1..q8. Run A (the
// baseline) also has q9 and run C also has q0: both are left out.
const std::vector<std::string> kMeasures = {"m0", "m1"};

std::vector<RunScores> ThreeRuns() {
  const std::vector<std::string> q = {"q1", "q2", "q3", "q4",
                                      "q5", "q6", "q7", "q8"};
  RunScores a{"A",
              q,
              {{0.2, 0.5, 0.1, 0.7, 0.3, 0.4, 0.6, 0.0},
               {0.4, 0.2, 0.0, 0.6, 0.2, 0.4, 0.8, 0.0}}};
  a.qids.push_back("q9");
  a.scores[0].push_back(0.9);
  a.scores[1].push_back(0.9);
  RunScores b{"B",
              q,
              {{0.3, 0.6, 0.1, 0.9, 0.2, 0.5, 0.8, 0.1},
               {0.6, 0.4, 0.2, 0.8, 0.2, 0.4, 1.0, 0.2}}};
  RunScores c{"C",
              q,
              {{0.1, 0.5, 0.3, 0.6, 0.3, 0.2, 0.7, 0.0},
               {0.2, 0.2, 0.0, 0.4, 0.4, 0.2, 0.6, 0.0}}};
  c.qids.insert(c.qids.begin(), "q0");
  c.scores[0].insert(c.scores[0].begin(), 0.0);
  c.scores[1].insert(c.scores[1].begin(), 1.0);
  return {a, b, c};
}

Comparison MustCompare(const CompareOptions& options = {},
                       size_t baseline = 0) {
  const std::vector<RunScores> runs = ThreeRuns();
  StatusOr<Comparison> c = CompareRuns(kMeasures, runs, baseline, options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

// Expected figures: /tmp/venv-stats/bin/python with SciPy 1.10.1 and
// statsmodels 0.15.0 on the eight common queries:
//   scipy.stats.ttest_rel(run, baseline)
//   exact randomization p: all 2^8 sign vectors s enumerated with exact
//     rationals (fractions.Fraction of the decimal scores), counting
//     |sum(s d)| >= |sum(d)|
//   multipletests(p, method='holm' | 'fdr_bh')[1] over the 4 pairs in
//     order (B m0, B m1, C m0, C m1)
//   scipy.stats.kendalltau(run, baseline), scipy.stats.spearmanr(...)
TEST(CompareRunsTest, AlignsQueriesAndMatchesScipy) {
  const Comparison c = MustCompare();
  EXPECT_EQ(c.qids, (std::vector<std::string>{"q1", "q2", "q3", "q4", "q5",
                                              "q6", "q7", "q8"}));
  EXPECT_EQ(c.excluded, (std::vector<int64_t>{1, 0, 1}));
  // Means over q1..q8 (hand sums: A m0 2.8 / 8, B m1 3.8 / 8).
  EXPECT_DOUBLE_EQ(c.means[0][0], 0.35);
  EXPECT_DOUBLE_EQ(c.means[1][1], 0.475);
  EXPECT_DOUBLE_EQ(c.means[2][0], 0.3375);
  ASSERT_EQ(c.pairs.size(), 4u);

  const PairComparison& b0 = c.Pair(1, 0);
  EXPECT_EQ(b0.run, 1u);
  EXPECT_EQ(b0.measure, 0u);
  EXPECT_NEAR(b0.randomization.mean_difference, 0.0875, 1e-15);
  EXPECT_NEAR(b0.t_test.t_statistic, 2.497271238044365, 1e-12);
  EXPECT_NEAR(b0.t_test.p_value, 0.04115622848920312, 1e-12);
  EXPECT_TRUE(b0.randomization.exact);
  EXPECT_EQ(b0.randomization.permutations, 256);
  EXPECT_DOUBLE_EQ(b0.randomization.p_value, 24.0 / 256);  // 0.09375
  // Hand count: B beats A on q1 q2 q4 q6 q7 q8, ties q3, loses q5.
  EXPECT_EQ(b0.win_tie_loss.wins, 6);
  EXPECT_EQ(b0.win_tie_loss.ties, 1);
  EXPECT_EQ(b0.win_tie_loss.losses, 1);
  ASSERT_TRUE(b0.query_kendall.has_value());
  EXPECT_NEAR(b0.query_kendall->coefficient, 0.9092412093166348, 1e-12);
  EXPECT_NEAR(b0.query_kendall->p_value, 0.0018276750354536807, 1e-12);
  ASSERT_TRUE(b0.query_spearman.has_value());
  EXPECT_NEAR(b0.query_spearman->coefficient, 0.9700772721497398, 1e-12);
  EXPECT_NEAR(b0.query_spearman->p_value, 6.548558831120599e-05, 1e-12);

  const PairComparison& b1 = c.Pair(1, 1);
  EXPECT_NEAR(b1.t_test.p_value, 0.0025359960802581035, 1e-12);
  EXPECT_DOUBLE_EQ(b1.randomization.p_value, 8.0 / 256);
  const PairComparison& c0 = c.Pair(2, 0);
  EXPECT_NEAR(c0.t_test.p_value, 0.7848815134082946, 1e-12);
  EXPECT_DOUBLE_EQ(c0.randomization.p_value, 1.0);
  const PairComparison& c1 = c.Pair(2, 1);
  EXPECT_NEAR(c1.t_test.t_statistic, -1.4255728899344746, 1e-12);
  EXPECT_DOUBLE_EQ(c1.randomization.p_value, 96.0 / 256);
  EXPECT_NEAR(c1.query_kendall->coefficient, 0.7506518906054692, 1e-12);
  EXPECT_NEAR(c1.query_spearman->coefficient, 0.8240460637385668, 1e-12);

  // multipletests over the randomization p-values [0.09375, 0.03125, 1,
  // 0.375] and the t-test p-values.
  const double rand_holm[] = {0.28125, 0.125, 1.0, 0.75};
  const double rand_bh[] = {0.1875, 0.125, 1.0, 0.5};
  const double t_holm[] = {0.12346868546760936, 0.010143984321032414,
                           0.7848815134082946, 0.39404414431550083};
  const double t_bh[] = {0.08231245697840624, 0.010143984321032414,
                         0.7848815134082946, 0.2626960962103339};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_NEAR(c.pairs[i].randomization_holm, rand_holm[i], 1e-12);
    EXPECT_NEAR(c.pairs[i].randomization_bh, rand_bh[i], 1e-12);
    EXPECT_NEAR(c.pairs[i].t_holm, t_holm[i], 1e-12);
    EXPECT_NEAR(c.pairs[i].t_bh, t_bh[i], 1e-12);
    // Holm at 0.05: nothing is significant.
    EXPECT_FALSE(c.pairs[i].significant);
  }
}

TEST(CompareRunsTest, BootstrapIsThePairedIntervalOfTheAlignedQueries) {
  CompareOptions options;
  options.bootstrap = 2000;
  options.confidence = 0.9;
  options.seed = 77;
  const Comparison c = MustCompare(options);
  const PairComparison& b0 = c.Pair(1, 0);
  EXPECT_EQ(b0.bootstrap.resamples, 2000);
  // The same call on the aligned scores (metrics/paired_tests_test.cc checks
  // the interval itself against numpy).
  const std::vector<double> b = {0.3, 0.6, 0.1, 0.9, 0.2, 0.5, 0.8, 0.1};
  const std::vector<double> a = {0.2, 0.5, 0.1, 0.7, 0.3, 0.4, 0.6, 0.0};
  const metrics::BootstrapResult direct =
      metrics::PairedBootstrapInterval(b, a, {2000, 0.9, 77});
  EXPECT_EQ(b0.bootstrap.ci_lower, direct.ci_lower);
  EXPECT_EQ(b0.bootstrap.ci_upper, direct.ci_upper);
  // A resampled mean lies between the smallest and largest difference
  // (-0.1 and 0.2).
  EXPECT_LT(b0.bootstrap.ci_lower, 0.0875);
  EXPECT_GT(b0.bootstrap.ci_upper, 0.0875);
  EXPECT_GE(b0.bootstrap.ci_lower, -0.1 - 1e-12);
  EXPECT_LE(b0.bootstrap.ci_upper, 0.2 + 1e-12);
}

TEST(CompareRunsTest, CorrectionChoosesTheSignificanceMark) {
  CompareOptions options;
  options.correction = Correction::kNone;
  Comparison c = MustCompare(options);
  // Raw p: 0.09375, 0.03125, 1, 0.375: only B m1 below 0.05.
  EXPECT_FALSE(c.Pair(1, 0).significant);
  EXPECT_TRUE(c.Pair(1, 1).significant);
  options.alpha = 0.2;
  options.correction = Correction::kBenjaminiHochberg;
  c = MustCompare(options);  // BH: 0.1875, 0.125, 1, 0.5.
  EXPECT_TRUE(c.Pair(1, 0).significant);
  EXPECT_TRUE(c.Pair(1, 1).significant);
  EXPECT_FALSE(c.Pair(2, 1).significant);
  options.correction = Correction::kHolm;
  c = MustCompare(options);  // Holm: 0.28125, 0.125, 1, 0.75.
  EXPECT_FALSE(c.Pair(1, 0).significant);
  EXPECT_TRUE(c.Pair(1, 1).significant);
}

// The runs' means: m0 (0.35, 0.4375, 0.3375), m1 (0.325, 0.475, 0.25):
// scipy.stats.kendalltau(m0, m1) = (1.0, p 0.3333333333333333),
// scipy.stats.spearmanr(m0, m1) = (1.0, p 0.0).
TEST(CompareRunsTest, MeasureAgreementAcrossRuns) {
  const Comparison c = MustCompare();
  ASSERT_EQ(c.agreements.size(), 1u);
  const MeasureAgreement& a = c.agreements[0];
  EXPECT_EQ(a.first, 0u);
  EXPECT_EQ(a.second, 1u);
  ASSERT_TRUE(a.kendall.has_value());
  EXPECT_DOUBLE_EQ(a.kendall->coefficient, 1.0);
  EXPECT_NEAR(a.kendall->p_value, 1.0 / 3, 1e-12);
  ASSERT_TRUE(a.spearman.has_value());
  EXPECT_DOUBLE_EQ(a.spearman->coefficient, 1.0);
  // Three runs in one order: the exact permutation p, 2 of the 3!
  // orderings as extreme (issue 43: SciPy's t approximation says 0).
  EXPECT_NEAR(a.spearman->p_value, 1.0 / 3, 1e-12);

  // Two runs: always +-1, reported as undefined.
  std::vector<RunScores> runs = ThreeRuns();
  runs.pop_back();
  StatusOr<Comparison> two = CompareRuns(kMeasures, runs, 0, {});
  ASSERT_TRUE(two.ok());
  EXPECT_FALSE(two->agreements[0].kendall.has_value());
  EXPECT_FALSE(two->agreements[0].spearman.has_value());
}

TEST(CompareRunsTest, AnotherBaseline) {
  const Comparison c = MustCompare({}, 1);
  EXPECT_EQ(c.baseline, 1u);
  ASSERT_EQ(c.pairs.size(), 4u);
  EXPECT_EQ(c.pairs[0].run, 0u);
  EXPECT_EQ(c.pairs[2].run, 2u);
  // A against B: the B m0 test mirrored (d -> -d): same two-sided p-values.
  EXPECT_NEAR(c.Pair(0, 0).randomization.mean_difference, -0.0875, 1e-15);
  EXPECT_DOUBLE_EQ(c.Pair(0, 0).randomization.p_value, 24.0 / 256);
  EXPECT_NEAR(c.Pair(0, 0).t_test.p_value, 0.04115622848920312, 1e-12);
  EXPECT_EQ(c.Pair(0, 0).win_tie_loss.wins, 1);
  EXPECT_EQ(c.Pair(0, 0).win_tie_loss.losses, 6);
}

// NaN (a measure undefined on a query) leaves the query out of the pair
// and of the run's mean. With B's m0 undefined on q3 and q5 and A's on q1,
// the pair B m0 keeps q2 q4 q6 q7 q8: d = (0.1, 0.2, 0.1, 0.2, 0.1), all
// positive, so the exact randomization p is 2 / 2^5 (only the all-plus and
// all-minus sign vectors reach |mean| = 0.14), and W/T/L = 5/0/0.
TEST(CompareRunsTest, UndefinedValuesLeaveTheQueryOutOfThePair) {
  std::vector<RunScores> runs = ThreeRuns();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  runs[1].scores[0][2] = nan;
  runs[1].scores[0][4] = nan;
  runs[0].scores[0][0] = nan;
  StatusOr<Comparison> c = CompareRuns(kMeasures, runs, 0, {});
  ASSERT_TRUE(c.ok());
  const PairComparison& b0 = c->Pair(1, 0);
  EXPECT_EQ(b0.randomization.pairs, 5);
  EXPECT_NEAR(b0.randomization.mean_difference, 0.14, 1e-15);
  EXPECT_DOUBLE_EQ(b0.randomization.p_value, 2.0 / 32);
  EXPECT_EQ(b0.win_tie_loss.wins, 5);
  // B's m0 mean over its 6 defined values: (0.3+0.6+0.9+0.5+0.8+0.1) / 6.
  EXPECT_NEAR(c->means[1][0], 3.2 / 6, 1e-15);
  // A's over 7: (2.8 - 0.2) / 7.
  EXPECT_NEAR(c->means[0][0], 2.6 / 7, 1e-15);
}

// --per-query by hand. Baseline over q1..q5: 0.5 0.2 0.9 0.4 0.3; the run:
// 0.7 0.1 0.9 0.0 NaN. Differences: q1 +0.2, q2 -0.1, q3 0 (neither),
// q4 -0.4, q5 undefined (neither). One each: gain q1, loss q4; five each:
// gain q1; losses q4 then q2.
TEST(CompareRunsTest, PerQueryGainsAndLosses) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::string> qids = {"q1", "q2", "q3", "q4", "q5"};
  std::vector<RunScores> runs = {{"base", qids, {{0.5, 0.2, 0.9, 0.4, 0.3}}},
                                 {"run", qids, {{0.7, 0.1, 0.9, 0.0, nan}}}};
  const std::vector<std::string> measures = {"m"};
  CompareOptions options;
  options.permutations = 100;
  options.bootstrap = 100;
  options.per_query = 1;
  StatusOr<Comparison> c = CompareRuns(measures, runs, 0, options);
  ASSERT_TRUE(c.ok());
  const PairComparison& p = c->Pair(1, 0);
  ASSERT_EQ(p.gains.size(), 1u);
  EXPECT_EQ(p.gains[0].qid, "q1");
  EXPECT_NEAR(p.gains[0].difference, 0.2, 1e-15);
  EXPECT_EQ(p.gains[0].baseline, 0.5);
  EXPECT_EQ(p.gains[0].run, 0.7);
  ASSERT_EQ(p.losses.size(), 1u);
  EXPECT_EQ(p.losses[0].qid, "q4");
  EXPECT_NEAR(p.losses[0].difference, -0.4, 1e-15);
  options.per_query = 5;
  c = CompareRuns(measures, runs, 0, options);
  ASSERT_TRUE(c.ok());
  const PairComparison& all = c->Pair(1, 0);
  ASSERT_EQ(all.gains.size(), 1u);
  ASSERT_EQ(all.losses.size(), 2u);
  EXPECT_EQ(all.losses[0].qid, "q4");
  EXPECT_EQ(all.losses[1].qid, "q2");
  std::string text, json;
  WriteCompareText(*c, &text);
  EXPECT_NE(text.find("run        m   loss     q4    0.4000  0.0000  -0.4000"),
            std::string::npos)
      << text;
  WriteCompareJson(*c, &json);
  // Numbers in the shortest form that reads back: the score 0.7 as 0.7, the
  // difference 0.7 - 0.5 as the double it is, 0.19999999999999996 (0.2 is
  // another double).
  EXPECT_NE(json.find("\"gains\": [{\"query\": \"q1\", \"baseline\": 0.5, "
                      "\"run\": 0.7, \"difference\": "
                      "0.19999999999999996}], \"losses\": [{\"query\": "
                      "\"q4\""),
            std::string::npos)
      << json;
  // Without the option: no lists, no keys.
  options.per_query = 0;
  c = CompareRuns(measures, runs, 0, options);
  EXPECT_TRUE(c->Pair(1, 0).gains.empty());
  json.clear();
  WriteCompareJson(*c, &json);
  EXPECT_EQ(json.find("\"gains\""), std::string::npos);
}

TEST(CompareRunsTest, RefusesBadInput) {
  const std::vector<RunScores> runs = ThreeRuns();
  EXPECT_FALSE(CompareRuns(kMeasures, std::span(runs).first(1), 0, {}).ok());
  EXPECT_FALSE(CompareRuns(kMeasures, runs, 3, {}).ok());
  EXPECT_FALSE(CompareRuns({}, runs, 0, {}).ok());
  CompareOptions bad;
  bad.alpha = 1;
  EXPECT_FALSE(CompareRuns(kMeasures, runs, 0, bad).ok());
  bad = {};
  bad.permutations = 0;
  EXPECT_FALSE(CompareRuns(kMeasures, runs, 0, bad).ok());
  std::vector<RunScores> disjoint = runs;
  disjoint[1].qids = {"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"};
  const StatusOr<Comparison> none = CompareRuns(kMeasures, disjoint, 0, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "no query was evaluated in every run");
  std::vector<RunScores> ragged = runs;
  ragged[2].scores[1].pop_back();
  EXPECT_FALSE(CompareRuns(kMeasures, ragged, 0, {}).ok());
}

TEST(CompareRunsTest, ParsesTheCorrection) {
  EXPECT_EQ(ParseCorrection("bh"), Correction::kBenjaminiHochberg);
  EXPECT_EQ(ParseCorrection("bonferroni"), std::nullopt);
}

TEST(CompareWriteTest, CsvHasOneRowPerRunAndMeasure) {
  std::string csv;
  WriteCompareCsv(MustCompare(), &csv);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = csv.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(csv.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 7u);  // Header + 3 runs x 2 measures.
  const auto commas = [](const std::string& s) {
    return std::count(s.begin(), s.end(), ',');
  };
  for (const std::string& line : lines) EXPECT_EQ(commas(line), 27) << line;
  // Means as sum / 8 at %.17g: 2.8 / 8 rounds to 0.35000000000000003.
  EXPECT_EQ(lines[1].substr(0, 27), "A,m0,A,8,0.3500000000000000");
  EXPECT_EQ(lines[3].substr(0, 26), "B,m0,A,8,0.437500000000000");
  // difference, t, t p, randomization p (= 24/256), 256 permutations, exact.
  EXPECT_NE(lines[3].find(",0.09375,256,true,"), std::string::npos);
  EXPECT_NE(lines[3].find(",6,1,1,0.28125,0.1875,"), std::string::npos);
}

TEST(CompareWriteTest, JsonWritesNanAsNull) {
  std::vector<RunScores> runs = ThreeRuns();
  runs.pop_back();
  // Constant scores: Kendall's tau is undefined.
  runs[1].scores[0].assign(8, 0.5);
  StatusOr<Comparison> c = CompareRuns(kMeasures, runs, 0, {});
  ASSERT_TRUE(c.ok());
  std::string json;
  WriteCompareJson(*c, &json);
  EXPECT_NE(json.find("\"kendall_tau_b\": null"), std::string::npos) << json;
  EXPECT_EQ(json.find("nan"), std::string::npos) << json;
  // B m1 as above: exact, 8 / 256.
  EXPECT_NE(json.find("\"randomization_p\": 0.03125"), std::string::npos)
      << json;
}

TEST(CompareWriteTest, LatexEscapesAndMarks) {
  std::vector<RunScores> runs = ThreeRuns();
  runs[1].name = "bm25_rm3&x";
  CompareOptions options;
  options.correction = Correction::kNone;
  const std::vector<std::string> measures = {"ndcg_cut_10", "P_5"};
  StatusOr<Comparison> c = CompareRuns(measures, runs, 0, options);
  ASSERT_TRUE(c.ok());
  std::string tex;
  WriteCompareLatex(*c, &tex);
  EXPECT_NE(tex.find("\\begin{tabular}{lrr}\n\\toprule\n"
                     "Run & ndcg\\_cut\\_10 & P\\_5 \\\\\n\\midrule\n"
                     "A & 0.3500 & 0.3250 \\\\\n"
                     "bm25\\_rm3\\&x & 0.4375 & 0.4750$^{*}$ \\\\\n"),
            std::string::npos)
      << tex;
  EXPECT_NE(tex.find("\\bottomrule\n\\end{tabular}\n"), std::string::npos);
}

TEST(CompareWriteTest, TextTableIsAligned) {
  CompareOptions options;
  options.correction = Correction::kNone;
  std::string text;
  WriteCompareText(MustCompare(options), &text);
  EXPECT_NE(text.find("baseline: A; 8 queries evaluated in every run (2 run "
                      "queries left out"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("run               m0     diff       m1     diff\n"
                      "A (baseline)  0.3500            0.3250\n"
                      "B             0.4375  +0.0875   0.4750  +0.1500*\n"
                      "C             0.3375  -0.0125   0.2500  -0.0750\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace rankwatch::trec
