#include "daemon/cli/demo_story.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace rankwatch::cli {
namespace {

using Lines = std::vector<std::string>;

const std::vector<Headline> kHeadlines = {{"ndcg", "10"}, {"precision", "5"}};

// A page as the daemon writes it, cut down to a few series; the ignored
// ones (another k, another window, a zero state) must stay ignored.
constexpr char kPage[] = R"(# HELP rankwatch_events_consumed_total Events read
# TYPE rankwatch_events_consumed_total counter
rankwatch_events_consumed_total{topic="results"} 100
rankwatch_events_consumed_total{topic="judgments"} 250
rankwatch_ab_confidence_level 0.95
rankwatch_ndcg_count{variant="A",k="10",locale="en"} 2
rankwatch_ndcg_sum{variant="A",k="10",locale="en"} 1.0
rankwatch_ndcg_squares_total{variant="A",k="10",locale="en"} 0.52
rankwatch_ndcg_count{variant="A",k="10",locale="de"} 2
rankwatch_ndcg_sum{variant="A",k="10",locale="de"} 1.2
rankwatch_ndcg_squares_total{variant="A",k="10",locale="de"} 0.74
rankwatch_ndcg_count{variant="A",k="5",locale="en"} 99
rankwatch_ndcg_count{variant="B",k="10",locale="en"} 1
rankwatch_ndcg_sum{variant="B",k="10",locale="en"} 0.3
rankwatch_ndcg_squares_total{variant="B",k="10",locale="en"} 0.09
rankwatch_ndcg_mean{variant="B",k="10",locale="en",window="all"} NaN
rankwatch_ab_verdict_state{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all",state="better"} 0
rankwatch_ab_verdict_state{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all",state="worse"} 1
rankwatch_ab_verdict_state{experiment="x",variant="B",baseline="A",measure="ndcg",k="5",window="all",state="better"} 1
rankwatch_ab_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="1m"} -0.5
rankwatch_ab_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.21
rankwatch_ab_sequential_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.25
rankwatch_ab_sequential_ci_upper{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} +Inf
rankwatch_ab_sequential_look_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.3
rankwatch_ab_sequential_look_ci_upper{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.12
rankwatch_ab_srm_detected{experiment="x"} 1
rankwatch_ab_srm_sequential_p_value{experiment="x"} 1e-05
rankwatch_interleaving_info{experiment="A-vs-B",variant="A-vs-B",incumbent="A",challenger="B"} 1
rankwatch_interleaving_verdict_state{experiment="A-vs-B",state="no_data"} 0
rankwatch_interleaving_verdict_state{experiment="A-vs-B",state="better"} 1
rankwatch_interleaving_preference{experiment="A-vs-B",window="1m"} 0.5
rankwatch_interleaving_preference{experiment="A-vs-B",window="all"} 0.05
rankwatch_interleaving_sequential_p_value{experiment="A-vs-B"} 0.001
rankwatch_interleaving_impressions_total{experiment="A-vs-B"} 1234
rankwatch_interleaving_other{experiment="say \"hi\"\\"} 3
)";

TEST(ParseMetricsSnapshotTest, ReadsTheStorysSeries) {
  auto s = ParseMetricsSnapshot(kPage, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->events_consumed, 350);  // 100 + 250.
  EXPECT_DOUBLE_EQ(s->level, 0.95);
  ASSERT_EQ(s->variants.size(), 2u);
  const VariantFigures& a = s->variants[0];
  EXPECT_EQ(a.variant, "A");
  EXPECT_EQ(a.lists, 4);  // 2 + 2 over the locales; k=5 ignored.
  ASSERT_EQ(a.headlines.size(), 2u);
  // Values 0.4, 0.6 (en: sum 1.0, squares 0.52) and 0.5, 0.7 (de: 1.2,
  // 0.74): mean 0.55, variance (1.26 - 4 * 0.55^2) / 3 = 0.05 / 3. SciPy
  // 1.10: x = [.4, .6, .5, .7]; x.mean() -/+ norm.ppf(0.975) *
  // x.std(ddof=1) / sqrt(4) = 0.42348486881183406, 0.6765151311881661.
  EXPECT_NEAR(a.headlines[0].value, 0.55, 1e-12);
  EXPECT_NEAR(a.headlines[0].lower, 0.42348486881183406, 1e-9);
  EXPECT_NEAR(a.headlines[0].upper, 0.6765151311881661, 1e-9);
  EXPECT_TRUE(std::isnan(a.headlines[1].value));  // No precision series.
  const VariantFigures& b = s->variants[1];
  EXPECT_EQ(b.variant, "B");
  EXPECT_EQ(b.lists, 1);
  EXPECT_DOUBLE_EQ(b.headlines[0].value, 0.3);
  EXPECT_EQ(b.headlines[0].lower, -INFINITY);  // One list: no interval.
  EXPECT_EQ(b.headlines[0].upper, INFINITY);

  ASSERT_EQ(s->ab.size(), 1u);  // ndcg@5 is no headline.
  EXPECT_EQ(s->ab[0].experiment, "x");
  EXPECT_EQ(s->ab[0].baseline, "A");
  EXPECT_EQ(s->ab[0].treatment, "B");
  EXPECT_EQ(s->ab[0].headline, (Headline{"ndcg", "10"}));
  EXPECT_EQ(s->ab[0].verdict, Verdict::kWorse);
  EXPECT_DOUBLE_EQ(s->ab[0].difference.value, -0.21);  // Not the 1m -0.5.
  EXPECT_DOUBLE_EQ(s->ab[0].difference.lower, -0.25);
  EXPECT_EQ(s->ab[0].difference.upper, INFINITY);
  EXPECT_DOUBLE_EQ(s->ab[0].look.value, -0.21);  // The same estimate.
  EXPECT_DOUBLE_EQ(s->ab[0].look.lower, -0.3);
  EXPECT_DOUBLE_EQ(s->ab[0].look.upper, -0.12);

  ASSERT_EQ(s->srm.size(), 1u);
  EXPECT_TRUE(s->srm[0].detected);
  EXPECT_DOUBLE_EQ(s->srm[0].p_value, 1e-5);

  ASSERT_EQ(s->interleaving.size(), 1u);
  const InterleavingFigures& il = s->interleaving[0];
  EXPECT_EQ(il.experiment, "A-vs-B");
  EXPECT_EQ(il.incumbent, "A");
  EXPECT_EQ(il.challenger, "B");
  EXPECT_EQ(il.verdict, Verdict::kBetter);
  EXPECT_DOUBLE_EQ(il.preference, 0.05);  // window="all", not 1m.
  EXPECT_DOUBLE_EQ(il.p_value, 0.001);
  EXPECT_EQ(il.impressions, 1234);
}

// The exported top movers (statistics.export_query_movers) of a headline
// comparison, by rank; another series' movers are not its.
TEST(ParseMetricsSnapshotTest, ReadsTheTopMovers) {
  const std::string page =
      std::string(kPage) +
      R"(rankwatch_query_mover_info{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="2",query="hotels paris"} 1
rankwatch_query_mover_info{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="1",query="cheap flights"} 1
rankwatch_query_mover_info{experiment="x",variant="B",baseline="A",measure="ndcg",k="5",rank="1",query="other"} 1
rankwatch_query_mover_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="1"} -0.41
rankwatch_query_mover_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="2"} 0.12
rankwatch_query_mover_contribution{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="1"} -0.031
rankwatch_query_mover_contribution{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",rank="2"} 0.004
)";
  auto s = ParseMetricsSnapshot(page, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->ab.size(), 1u);
  const std::vector<MoverFigures>& m = s->ab[0].movers;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].query, "cheap flights");
  EXPECT_DOUBLE_EQ(m[0].difference, -0.41);
  EXPECT_DOUBLE_EQ(m[0].contribution, -0.031);
  EXPECT_EQ(m[1].query, "hotels paris");
  EXPECT_DOUBLE_EQ(m[1].contribution, 0.004);
  // Without the export: none.
  auto plain = ParseMetricsSnapshot(kPage, kHeadlines);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->ab[0].movers.empty());
}

// The decision gauges (exporter/decision_collector.h): the current state,
// its inputs with their intervals and a guardrail's margin.
constexpr std::string_view kDecisionPage =
    R"(rankwatch_ab_decision{experiment="x",variant="B",baseline="A",decision="ship"} 0
rankwatch_ab_decision{experiment="x",variant="B",baseline="A",decision="no_ship"} 1
rankwatch_ab_decision{experiment="x",variant="B",baseline="A",decision="keep_running"} 0
rankwatch_ab_decision{experiment="x",variant="B",baseline="A",decision="invalid"} 0
rankwatch_ab_decision_input{experiment="x",variant="B",baseline="A",measure="precision",k="5",role="guardrail"} -1
rankwatch_ab_decision_input{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",role="primary"} 0
rankwatch_ab_decision_ci_lower{experiment="x",variant="B",baseline="A",measure="precision",k="5",role="guardrail"} -0.12
rankwatch_ab_decision_ci_upper{experiment="x",variant="B",baseline="A",measure="precision",k="5",role="guardrail"} -0.061
rankwatch_ab_decision_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",role="primary"} -0.02
rankwatch_ab_decision_ci_upper{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",role="primary"} 0.03
rankwatch_ab_guardrail_margin{experiment="x",variant="B",baseline="A",measure="precision",k="5",kind="absolute"} 0.05
)";

TEST(ParseMetricsSnapshotTest, ReadsTheDecisions) {
  auto s = ParseMetricsSnapshot(kDecisionPage, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->decisions.size(), 1u);
  const DecisionFigures& d = s->decisions[0];
  EXPECT_EQ(d.experiment, "x");
  EXPECT_EQ(d.baseline, "A");
  EXPECT_EQ(d.treatment, "B");
  EXPECT_EQ(d.value, "no_ship");
  ASSERT_EQ(d.inputs.size(), 2u);
  // The primary series first, though listed second.
  EXPECT_FALSE(d.inputs[0].guardrail);
  EXPECT_EQ(d.inputs[0].series, (Headline{"ndcg", "10"}));
  EXPECT_EQ(d.inputs[0].input, 0);
  EXPECT_TRUE(d.inputs[1].guardrail);
  EXPECT_EQ(d.inputs[1].input, -1);
  EXPECT_DOUBLE_EQ(d.inputs[1].lower, -0.12);
  EXPECT_DOUBLE_EQ(d.inputs[1].upper, -0.061);
  EXPECT_DOUBLE_EQ(d.inputs[1].margin, 0.05);
  EXPECT_FALSE(d.inputs[1].relative);
  EXPECT_EQ(FormatDecision(d),
            "do not ship B: guardrail precision@5 beyond its margin [-0.120, "
            "-0.061] (margin 0.050)");
}

// A guardrail on a field of results events (k "all") is named as the
// configuration names it: latency_ms, not latency_ms@all.
TEST(ParseMetricsSnapshotTest, NamesAnUncutGuardrailWithoutItsK) {
  auto s = ParseMetricsSnapshot(kDecisionPage, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  DecisionFigures d = s->decisions[0];
  d.inputs[1].series = Headline{"latency_ms", "all"};
  d.inputs[1].lower = 4.579;
  d.inputs[1].upper = 10.36;
  d.inputs[1].margin = 0.05;
  d.inputs[1].relative = true;
  EXPECT_EQ(FormatDecision(d),
            "do not ship B: guardrail latency_ms beyond its margin [+4.579, "
            "+10.360] (margin 5.0% of the baseline)");
  EXPECT_EQ((Headline{"ndcg", "10"}).Label(), "ndcg@10");
}

TEST(DemoStoryTest, TellsEachDecisionChangeOnce) {
  auto s = ParseMetricsSnapshot(kDecisionPage, kHeadlines);
  ASSERT_TRUE(s.ok());
  DemoSnapshot running = *s;
  running.decisions[0].value = "keep_running";
  DemoStory story;
  // Keep running at the start is no news; the change to no_ship is, once.
  EXPECT_EQ(story.Observe(running, 0), Lines{});
  EXPECT_EQ(story.Observe(*s, 2000),
            Lines{"x decision: do not ship B: guardrail precision@5 beyond "
                  "its margin [-0.120, -0.061] (margin 0.050)"});
  EXPECT_EQ(story.Observe(*s, 4000), Lines{});
  DemoSnapshot ship = *s;
  ship.decisions[0].value = "ship";
  ship.decisions[0].inputs[0].input = 1;
  ship.decisions[0].inputs[0].lower = 0.01;
  ship.decisions[0].inputs[1].input = 1;
  ship.decisions[0].inputs[1].relative = true;
  ship.decisions[0].inputs[1].margin = 0.1;
  EXPECT_EQ(story.Observe(ship, 6000),
            Lines{"x decision: ship B: ndcg@10 better [+0.010, +0.030]; "
                  "guardrail precision@5 holds [-0.120, -0.061] (margin "
                  "10.0% of the baseline)"});
  // With two primary series, their intervals are Bonferroni-corrected, and
  // the line says so.
  DemoSnapshot two = ship;
  DecisionInputFigures p5 = two.decisions[0].inputs[0];
  p5.series = {"precision", "5"};
  p5.input = 0;
  two.decisions[0].inputs.insert(two.decisions[0].inputs.begin() + 1, p5);
  EXPECT_EQ(FormatDecision(two.decisions[0]),
            "ship B: ndcg@10 better [+0.010, +0.030]; guardrail precision@5 "
            "holds [-0.120, -0.061] (margin 10.0% of the baseline) (primary "
            "series at 1 - alpha/2 each)");
  // The table shows the decision once lists are scored.
  ship.variants.push_back(
      {"A", 10, std::vector<Estimate>(ship.headlines.size())});
  const std::string table = story.Table(ship, 8000);
  EXPECT_NE(table.find("  x decision (B vs A): ship B: ndcg@10 better"),
            std::string::npos)
      << table;
}

// With schema.covariate the daemon exports regression-adjusted figures of
// each window-"all" comparison (exporter/experiment_collector.h); a
// second comparison (precision@5) shows the columns line up.
constexpr std::string_view kAdjustedPage =
    R"(rankwatch_ab_verdict_state{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all",state="inconclusive"} 1
rankwatch_ab_difference{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.004
rankwatch_ab_sequential_ci_lower{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} -0.002
rankwatch_ab_sequential_ci_upper{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.010
rankwatch_ab_covariate_info{covariate="pre_exposure.clicks"} 1
rankwatch_ab_adjusted_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="1m"} 9
rankwatch_ab_adjusted_difference{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.048
rankwatch_ab_adjusted_sequential_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.027
rankwatch_ab_adjusted_sequential_ci_upper{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.007
rankwatch_ab_adjusted_sequential_look_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.069
rankwatch_ab_adjusted_sequential_look_ci_upper{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.027
rankwatch_ab_adjusted_ci_lower{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} -0.5
rankwatch_ab_adjusted_variance_ratio{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all"} 0.64
rankwatch_ab_adjusted_status{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all",status="adjusted"} 1
rankwatch_ab_adjusted_status{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all",status="no_covariate_variance"} 0
rankwatch_ab_adjusted_status{experiment="x",variant="B",baseline="A",measure="ndcg",k="10",window="all",status="invalid_input"} 0
rankwatch_ab_adjusted_difference{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.003
rankwatch_ab_adjusted_sequential_ci_lower{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} -0.007
rankwatch_ab_adjusted_sequential_ci_upper{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.013
rankwatch_ab_adjusted_sequential_look_ci_lower{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} -0.01
rankwatch_ab_adjusted_sequential_look_ci_upper{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.016
rankwatch_ab_adjusted_variance_ratio{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all"} 0.81
rankwatch_ab_adjusted_status{experiment="x",variant="B",baseline="A",measure="precision",k="5",window="all",status="adjusted"} 1
)";

TEST(ParseMetricsSnapshotTest, ReadsTheAdjustedFigures) {
  const std::string page = std::string(kPage) + std::string(kAdjustedPage);
  auto s = ParseMetricsSnapshot(page, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->covariate, "pre_exposure.clicks");
  ASSERT_EQ(s->ab.size(), 2u);  // ndcg@10, precision@5: configured order.
  const AbFigures& ndcg = s->ab[0];
  EXPECT_EQ(ndcg.headline, (Headline{"ndcg", "10"}));
  ASSERT_TRUE(ndcg.has_adjusted);
  // window="all", not the 1m row; the running interval and the look's
  // around the same estimate; not the fixed-sample Welch interval.
  EXPECT_DOUBLE_EQ(ndcg.adjusted.difference.value, -0.048);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.difference.lower, -0.027);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.difference.upper, -0.007);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.look.value, -0.048);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.look.lower, -0.069);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.look.upper, -0.027);
  EXPECT_DOUBLE_EQ(ndcg.adjusted.variance_ratio, 0.64);
  EXPECT_EQ(ndcg.adjusted.status, "adjusted");  // The series at 1.
  // The unadjusted figures stay the unadjusted gauges'.
  EXPECT_DOUBLE_EQ(ndcg.difference.value, -0.21);
  const AbFigures& precision = s->ab[1];
  EXPECT_EQ(precision.headline, (Headline{"precision", "5"}));
  EXPECT_TRUE(precision.has_adjusted);
  EXPECT_DOUBLE_EQ(precision.adjusted.difference.value, 0.003);
  EXPECT_DOUBLE_EQ(precision.adjusted.variance_ratio, 0.81);
  // Without schema.covariate: no adjusted figures.
  auto plain = ParseMetricsSnapshot(kPage, kHeadlines);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->covariate, "");
  EXPECT_FALSE(plain->ab[0].has_adjusted);
}

// The adjusted figures follow the unadjusted ones' labelling: the running
// interval alone when it holds the estimate, else the latest look's
// interval and the running one, labelled. The variance ratio follows: a
// standard error of 0.008 adjusted against 0.010 unadjusted is
// (0.008 / 0.010)^2 = 0.64.
TEST(FormatAdjustedTest, LabelsLikeTheUnadjustedAndGivesTheVarianceRatio) {
  AdjustedFigures a;
  a.difference = {-0.041, -0.060, -0.022};
  a.look = {-0.041, -0.065, -0.017};
  a.variance_ratio = 0.64;
  a.status = "adjusted";
  EXPECT_EQ(FormatAdjusted(a), "-0.041 [-0.060, -0.022], variance x0.64");
  a.difference = {-0.048, -0.027, -0.007};
  a.look = {-0.048, -0.069, -0.027};
  EXPECT_EQ(FormatAdjusted(a),
            "-0.048 [-0.069, -0.027] at this look; since start [-0.027, "
            "-0.007], variance x0.64");
  // Fewer than 20 pairs per arm: no always-valid interval yet.
  a.difference = {0.01, -INFINITY, INFINITY};
  a.look = {0.01, -INFINITY, INFINITY};
  EXPECT_EQ(FormatAdjusted(a), "+0.010 [-inf, +inf], variance x0.64");
  // Not adjusted: said so rather than a ratio of 1.
  a.difference = {-0.02, -0.05, 0.01};
  a.variance_ratio = 1;
  a.status = "no_covariate_variance";
  EXPECT_EQ(FormatAdjusted(a),
            "-0.020 [-0.050, +0.010], not adjusted (no covariate variance)");
  a.status = "invalid_input";
  EXPECT_EQ(FormatAdjusted(a), "invalid input");
  // An undefined ratio is left out.
  a.status = "adjusted";
  a.variance_ratio = NAN;
  EXPECT_EQ(FormatAdjusted(a), "-0.020 [-0.050, +0.010]");
}

// The table's row under each experiment and treatment holds the adjusted
// figures of the same comparisons, column by column, from /metrics.
TEST(DemoStoryTest, TableShowsTheAdjustedDifferences) {
  const std::string page = std::string(kPage) + std::string(kAdjustedPage);
  auto s = ParseMetricsSnapshot(page, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string table = DemoStory().Table(*s, 10'000);
  // Columns padded to their widest cell plus two blanks (widths 10, 8, 82).
  EXPECT_NE(
      table.find(
          "  A/B difference [95% always-valid interval] and verdict:\n"
          "  adjusted: regression-adjusted by pre_exposure.clicks, [95% "
          "always-valid interval] of its own test, variance adjusted / "
          "unadjusted\n"
          "  experiment            ndcg@10                                    "
          "                                         precision@5\n"
          "  x           B vs A    -0.210 [-0.250, +inf] worse                "
          "                                         +0.004 [-0.002, +0.010] "
          "inconclusive\n"
          "              adjusted  -0.048 [-0.069, -0.027] at this look; "
          "since start [-0.027, -0.007], variance x0.64  +0.003 [-0.007, "
          "+0.013], variance x0.81\n"),
      std::string::npos)
      << table;
  // A comparison without adjusted figures beside one with: "n/a".
  s->ab[1].has_adjusted = false;
  const std::string partial = DemoStory().Table(*s, 10'000);
  EXPECT_NE(partial.find("variance x0.64  n/a\n"), std::string::npos)
      << partial;
}

TEST(ParseMetricsSnapshotTest, MalformedLineNamesItsNumber) {
  auto s = ParseMetricsSnapshot(
      "# TYPE x gauge\nrankwatch_ab_verdict{experiment=\"x\" 1\n", kHeadlines);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/metrics line 2"), std::string::npos)
      << s.status().message();
  EXPECT_FALSE(
      ParseMetricsSnapshot("rankwatch_events_consumed_total{topic=\"r\"} x\n",
                           kHeadlines)
          .ok());
}

TEST(FormatEstimateTest, DecimalsFollowTheIntervalsWidth) {
  // Width 0.0809: two significant digits of it are three decimals.
  EXPECT_EQ(FormatEstimate({-0.2134, -0.2511, -0.1702}, true),
            "-0.213 [-0.251, -0.170]");
  // Width 0.2: two decimals.
  EXPECT_EQ(FormatEstimate({0.5, 0.4, 0.6}, false), "0.50 [0.40, 0.60]");
  // Width 2e-5 would need six: capped at four.
  EXPECT_EQ(FormatEstimate({0.01, 0.00999, 0.01001}, false),
            "0.0100 [0.0100, 0.0100]");
  EXPECT_EQ(FormatEstimate({0.04, 0.01, 0.07}, true),
            "+0.040 [+0.010, +0.070]");
  // No inference yet: three decimals, infinite bounds spelt out.
  EXPECT_EQ(FormatEstimate({0.3, -INFINITY, INFINITY}, false),
            "0.300 [-inf, +inf]");
  EXPECT_EQ(FormatEstimate({}, false), "n/a");
  EXPECT_EQ(FormatEstimate({0.25, NAN, NAN}, false), "0.250");
}

// A snapshot with one experiment (B vs A on ndcg@10), its SRM check and an
// interleaving experiment.
DemoSnapshot Snapshot(int64_t events, Verdict ab, Estimate difference, bool srm,
                      Verdict interleaving, double preference, double p) {
  DemoSnapshot s;
  s.headlines = {{"ndcg", "10"}};
  s.events_consumed = events;
  // The latest look's interval: the running one widened by 0.01 each side.
  const Estimate look{difference.value, difference.lower - 0.01,
                      difference.upper + 0.01};
  s.ab.push_back({"ranker-v2",
                  "A",
                  "B",
                  {"ndcg", "10"},
                  difference,
                  look,
                  ab,
                  {},
                  false,
                  {}});
  s.srm.push_back({"ranker-v2", srm, srm ? 1e-5 : 0.5});
  s.interleaving.push_back(
      {"A-vs-B", "A", "B", preference, p, 1000, interleaving});
  return s;
}

TEST(DemoStoryTest, TellsEachVerdictChangeOnce) {
  DemoStory story;
  const Estimate worse{-0.21, -0.25, -0.17};
  const Verdict none = Verdict::kNoData;
  EXPECT_EQ(story.Observe(Snapshot(100, Verdict::kInconclusive,
                                   {-0.01, -0.1, 0.1}, false, none, NAN, 1),
                          0),
            Lines{});
  EXPECT_EQ(
      story.Observe(Snapshot(200, Verdict::kWorse, worse, false, none, NAN, 1),
                    2000),
      Lines{"B is now worse than A on ndcg@10: -0.210 [-0.250, -0.170] "
            "(ranker-v2)"});
  EXPECT_EQ(
      story.Observe(Snapshot(300, Verdict::kWorse, worse, false, none, NAN, 1),
                    4000),
      Lines{});
  // The sample-ratio mismatch is told once; the verdict it hides stands.
  EXPECT_EQ(story.Observe(Snapshot(400, Verdict::kSampleRatioMismatch, worse,
                                   true, none, NAN, 1),
                          6000),
            Lines{"ranker-v2: sample ratio mismatch detected (p = 1.0e-05): "
                  "its A/B verdicts do not hold until it clears"});
  EXPECT_EQ(
      story.Observe(Snapshot(500, Verdict::kWorse, worse, false, none, NAN, 1),
                    8000),
      Lines{"ranker-v2: sample ratio mismatch cleared"});
  EXPECT_EQ(
      story.Observe(Snapshot(600, Verdict::kInconclusive, {-0.01, -0.03, 0.01},
                             false, none, NAN, 1),
                    10000),
      Lines{"B is no longer worse than A on ndcg@10: -0.010 [-0.030, +0.010] "
            "(ranker-v2)"});
  EXPECT_EQ(story.Observe(Snapshot(700, Verdict::kBetter, {0.04, 0.01, 0.07},
                                   false, none, NAN, 1),
                          12000),
            Lines{"B is now better than A on ndcg@10: +0.040 [+0.010, "
                  "+0.070] (ranker-v2)"});
}

// A regression verdict names the two queries that carry it most: the first
// exported movers whose contribution has the verdict's sign (q-up, which
// moves the other way, is skipped).
TEST(DemoStoryTest, RegressionNamesItsTopTwoQueries) {
  DemoStory story;
  const Verdict none = Verdict::kNoData;
  DemoSnapshot first = Snapshot(100, Verdict::kInconclusive, {-0.01, -0.1, 0.1},
                                false, none, NAN, 1);
  EXPECT_EQ(story.Observe(first, 0), Lines{});
  DemoSnapshot worse = Snapshot(200, Verdict::kWorse, {-0.21, -0.25, -0.17},
                                false, none, NAN, 1);
  worse.ab[0].movers = {{"q-17", -0.412, -0.031},
                        {"q-up", 0.2, 0.01},
                        {"q-3", -0.268, -0.012},
                        {"q-9", -0.3, -0.002}};
  EXPECT_EQ(story.Observe(worse, 2000),
            Lines{"B is now worse than A on ndcg@10: -0.210 [-0.250, "
                  "-0.170] (ranker-v2); most on queries q-17 (-0.41), q-3 "
                  "(-0.27)"});
}

// The running always-valid interval is an intersection over looks: the
// latest estimate can fall outside it (issue 27: the demo printed -0.048
// beside [-0.027, -0.007]). Then the line shows the latest look's own
// interval, which holds the estimate, and the running one, labelled.
TEST(FormatAbDifferenceTest, AnEstimateOutsideTheRunningIntervalShowsBoth) {
  AbFigures ab;
  ab.difference = {-0.048, -0.027, -0.007};
  ab.look = {-0.048, -0.069, -0.027};
  EXPECT_EQ(FormatAbDifference(ab),
            "-0.048 [-0.069, -0.027] at this look; since start [-0.027, "
            "-0.007]");
  // Inside (or on an end): the running interval alone, as before.
  ab.difference = {-0.020, -0.027, -0.007};
  EXPECT_EQ(FormatAbDifference(ab), "-0.020 [-0.027, -0.007]");
  ab.difference = {-0.027, -0.027, -0.007};
  EXPECT_EQ(FormatAbDifference(ab), "-0.027 [-0.027, -0.007]");
  // No interval yet: the estimate alone.
  ab.difference = {0.01, NAN, NAN};
  EXPECT_EQ(FormatAbDifference(ab), "+0.010");
}

// The story's line and the table use it.
TEST(DemoStoryTest, VerdictLineNeverPutsTheEstimateOutsideItsInterval) {
  DemoStory story;
  const Verdict none = Verdict::kNoData;
  EXPECT_EQ(story.Observe(Snapshot(100, Verdict::kInconclusive,
                                   {-0.01, -0.1, 0.1}, false, none, NAN, 1),
                          0),
            Lines{});
  DemoSnapshot worse = Snapshot(200, Verdict::kWorse, {-0.048, -0.027, -0.007},
                                false, none, NAN, 1);
  worse.ab[0].look = {-0.048, -0.069, -0.027};
  worse.variants = {{"A", 500, {{0.61, 0.59, 0.63}}},
                    {"B", 500, {{0.56, 0.54, 0.58}}}};
  EXPECT_EQ(story.Observe(worse, 2000),
            Lines{"B is now worse than A on ndcg@10: -0.048 [-0.069, -0.027] "
                  "at this look; since start [-0.027, -0.007] (ranker-v2)"});
  EXPECT_NE(story.Table(worse, 2000)
                .find("-0.048 [-0.069, -0.027] at this look; since start "
                      "[-0.027, -0.007] worse"),
            std::string::npos)
      << story.Table(worse, 2000);
}

TEST(DemoStoryTest, TellsInterleavingVerdicts) {
  DemoStory story;
  const Verdict ab = Verdict::kInconclusive;
  const Estimate d{0, -0.1, 0.1};
  EXPECT_EQ(
      story.Observe(
          Snapshot(1, ab, d, false, Verdict::kInconclusive, 0.01, 0.6), 0),
      Lines{});
  EXPECT_EQ(story.Observe(
                Snapshot(2, ab, d, false, Verdict::kBetter, 0.05, 0.001), 2000),
            Lines{"interleaving A-vs-B: users now prefer B to A: preference "
                  "+0.050, p = 0.001"});
  EXPECT_EQ(story.Observe(
                Snapshot(3, ab, d, false, Verdict::kWorse, -0.05, 2e-4), 4000),
            Lines{"interleaving A-vs-B: users now prefer A to B: preference "
                  "-0.050, p = 2.0e-04"});
  EXPECT_EQ(
      story.Observe(
          Snapshot(4, ab, d, false, Verdict::kInconclusive, 0.001, 0.5), 6000),
      Lines{"interleaving A-vs-B: no longer conclusive: preference "
            "+0.001, p = 0.500"});
}

TEST(DemoStoryTest, TellsStalledAndFlowingEvents) {
  DemoStory story;
  const Verdict ab = Verdict::kInconclusive;
  const Verdict none = Verdict::kNoData;
  const Estimate d{0, -0.1, 0.1};
  auto at = [&](int64_t events, int64_t ms) {
    return story.Observe(Snapshot(events, ab, d, false, none, NAN, 1), ms);
  };
  EXPECT_EQ(at(100, 0), Lines{});
  EXPECT_EQ(at(500, 10'000), Lines{});
  EXPECT_EQ(at(500, 38'000), Lines{});  // 28 s without a new event.
  EXPECT_EQ(at(500, 40'000), Lines{"no events for 30 s"});
  EXPECT_EQ(at(500, 42'000), Lines{});  // Told once.
  EXPECT_EQ(at(501, 44'000), Lines{"events flowing again (none for 34 s)"});
  EXPECT_EQ(at(502, 46'000), Lines{});
}

TEST(DemoStoryTest, TableShowsVariantsVerdictsAndRate) {
  DemoSnapshot s;
  s.headlines = kHeadlines;
  s.events_consumed = 0;
  s.variants = {{"A", 0, {{}, {}}}};  // Series exist before any list.
  DemoStory story;
  EXPECT_EQ(story.Table(s, 2000),
            "-- 2s: 0 events/s --\n"
            "  no list scored yet (the first join windows must close)\n");
  s.events_consumed = 1500;
  s.variants = {{"A", 4210, {{0.612, 0.605, 0.619}, {0.412, 0.405, 0.419}}},
                {"B", 980, {{0.401, 0.392, 0.41}, {}}}};
  s.ab = {{"ranker-v2",
           "A",
           "B",
           {"ndcg", "10"},
           {-0.21, -0.25, -0.17},
           {-0.21, -0.26, -0.16},
           Verdict::kWorse,
           {},
           false,
           {}},
          {"ranker-v2",
           "A",
           "B",
           {"precision", "5"},
           {0.004, -0.002, 0.010},
           {0.004, -0.003, 0.011},
           Verdict::kInconclusive,
           {},
           false,
           {}}};
  s.srm = {{"ranker-v2", false, 0.5}};
  s.interleaving = {{"A-vs-B", "A", "B", 0.05, 0.001, 1234, Verdict::kBetter}};
  // 1500 events in the 10 s since the previous table: 150/s. Columns are
  // padded to their widest cell plus two blanks.
  EXPECT_EQ(story.Table(s, 12'000),
            "-- 12s: 150 events/s --\n"
            "  since start, mean [95% interval]:\n"
            "  variant  lists  ndcg@10               precision@5\n"
            "  A        4,210  0.612 [0.605, 0.619]  0.412 [0.405, 0.419]\n"
            "  B        980    0.401 [0.392, 0.410]  n/a\n"
            "  A/B difference [95% always-valid interval] and verdict:\n"
            "  experiment          ndcg@10                        "
            "precision@5\n"
            "  ranker-v2   B vs A  -0.210 [-0.250, -0.170] worse  "
            "+0.004 [-0.002, +0.010] inconclusive\n"
            "  ranker-v2 sample ratio: ok (p = 0.500)\n"
            "  interleaving A-vs-B (B vs A): preference +0.050, p = 0.001, "
            "better, 1,234 impressions\n");
}

// Multileaving (`demo --multileave A,B,C`): the ranks and the winner of a
// three-team experiment are read from /metrics and told under its
// interleaving line; a two-team experiment's ranks are not repeated.
TEST(DemoStoryTest, TableShowsTheMultileavingRanking) {
  const std::string page =
      R"(rankwatch_interleaving_info{experiment="m",variant="m",incumbent="A",challenger="B"} 1
rankwatch_interleaving_verdict_state{experiment="m",state="better"} 1
rankwatch_interleaving_preference{experiment="m",window="all"} 0.04
rankwatch_interleaving_sequential_p_value{experiment="m"} 0.002
rankwatch_interleaving_impressions_total{experiment="m"} 900
rankwatch_interleaving_rank{experiment="m",team="C"} 1
rankwatch_interleaving_rank{experiment="m",team="A"} 3
rankwatch_interleaving_rank{experiment="m",team="B"} 2
rankwatch_interleaving_winner{experiment="m",team="A"} 0
rankwatch_interleaving_winner{experiment="m",team="C"} 1
rankwatch_interleaving_rank{experiment="two",team="A"} 1
rankwatch_interleaving_rank{experiment="two",team="B"} 2
)";
  auto s = ParseMetricsSnapshot(page, kHeadlines);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->multileaving_ranking.at("m"),
            (std::vector<std::string>{"C", "B", "A"}));
  EXPECT_EQ(s->multileaving_ranking.count("two"), 0u);
  EXPECT_EQ(s->multileaving_winner.at("m"), "C");
  s->events_consumed = 10;
  s->variants = {{"A", 10, {{0.5, 0.4, 0.6}, {}}}};
  const std::string table = DemoStory().Table(*s, 10'000);
  EXPECT_NE(table.find("  interleaving m (B vs A): preference +0.040, p = "
                       "0.002, better, 900 impressions\n"
                       "  multileaving m ranking: C > B > A, winner C\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace rankwatch::cli
