#include "daemon/cli/demo_story.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace rankwatch::cli {
namespace {

using Lines = std::vector<std::string>;

const std::vector<Headline> kStoryHeadlines = {{"ndcg", "10"},
                                               {"precision", "5"}};

// The decision of the story's tests: B blocked by a guardrail beyond its
// margin, its primary series undecided.
DemoSnapshot DecisionSnapshot() {
  DemoSnapshot s;
  s.headlines = kStoryHeadlines;
  DecisionFigures d;
  d.experiment = "x";
  d.baseline = "A";
  d.treatment = "B";
  d.value = "no_ship";
  DecisionInputFigures primary;
  primary.series = {"ndcg", "10"};
  primary.input = 0;
  primary.lower = -0.02;
  primary.upper = 0.03;
  DecisionInputFigures guardrail;
  guardrail.guardrail = true;
  guardrail.series = {"precision", "5"};
  guardrail.input = -1;
  guardrail.lower = -0.12;
  guardrail.upper = -0.061;
  guardrail.margin = 0.05;
  d.inputs = {primary, guardrail};
  s.decisions.push_back(d);
  return s;
}

TEST(FormatDecisionTest, NamesTheSeriesThatBlockIt) {
  EXPECT_EQ(FormatDecision(DecisionSnapshot().decisions[0]),
            "do not ship B: guardrail precision@5 beyond its margin [-0.120, "
            "-0.061] (margin 0.050)");
}

// A guardrail on a field of results events (k "all") is named as the
// configuration names it: latency_ms, not latency_ms@all; a relative
// margin as a share of the baseline.
TEST(FormatDecisionTest, NamesAnUncutGuardrailWithoutItsK) {
  DecisionFigures d = DecisionSnapshot().decisions[0];
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

// A decision that keeps running says why, as the demo's table and story
// print it: the minimum sample first (lists of both arms against
// min_lists, event time against min_duration), then each primary series
// that has no call yet, with its interval.
TEST(FormatDecisionTest, SaysWhyItKeepsRunning) {
  DecisionFigures d = DecisionSnapshot().decisions[0];
  d.value = "keep_running";
  d.minimum_met = false;
  d.baseline_lists = 1377;
  d.treatment_lists = 93;
  d.min_lists = 100;
  d.elapsed_ms = 12'500;
  d.min_duration_ms = 15'000;
  EXPECT_EQ(FormatDecision(d),
            "keep running B: minimum sample not reached (lists 1,377 and 93 "
            "of 100 per arm, 12s of 15s)");
  d.minimum_met = true;
  EXPECT_EQ(FormatDecision(d),
            "keep running B: ndcg@10 inconclusive [-0.020, "
            "+0.030]");
  d.inputs[0].lower = NAN;
  d.inputs[0].upper = NAN;
  EXPECT_EQ(FormatDecision(d),
            "keep running B: ndcg@10 has too few lists for an interval");
}

// Issue 42: the demo's regression. When B's ndcg@10 estimate leaves its
// running interval the story says so once, before the decision it brings,
// and the decision's line marks the series whose interval restarted.
TEST(DemoStoryTest, NamesAnEffectThatChanged) {
  DemoSnapshot ship = DecisionSnapshot();
  ship.decisions[0].value = "ship";
  ship.decisions[0].inputs[0].input = 1;
  ship.decisions[0].inputs[0].lower = 0.01;
  ship.decisions[0].inputs[1].input = 1;
  DemoStory story;
  EXPECT_EQ(story.Observe(ship, 38000),
            Lines{"x decision: ship B: ndcg@10 better [+0.010, +0.030]; "
                  "guardrail precision@5 holds [-0.120, -0.061] (margin "
                  "0.050)"});
  DemoSnapshot worse = ship;
  DecisionInputFigures& ndcg = worse.decisions[0].inputs[0];
  worse.decisions[0].value = "no_ship";
  ndcg.input = -1;
  ndcg.lower = -0.081;
  ndcg.upper = -0.071;
  ndcg.effect_changes = 1;
  ndcg.effect_changed_ms = 58000;
  worse.decisions[0].inputs[1].input = 0;
  EXPECT_EQ(story.Observe(worse, 58000),
            (Lines{"x effect changed: B's ndcg@10 left its running interval; "
                   "its interval now counts from here",
                   "x decision: do not ship B: ndcg@10 worse [-0.081, -0.071] "
                   "(since its effect changed)"}));
  // Told once.
  EXPECT_EQ(story.Observe(worse, 60000), Lines{});
}

TEST(DemoStoryTest, TellsEachDecisionChangeOnce) {
  const DemoSnapshot s = DecisionSnapshot();
  DemoSnapshot running = s;
  running.decisions[0].value = "keep_running";
  DemoStory story;
  // Keep running at the start is no news; the change to no_ship is, once.
  EXPECT_EQ(story.Observe(running, 0), Lines{});
  EXPECT_EQ(story.Observe(s, 2000),
            Lines{"x decision: do not ship B: guardrail precision@5 beyond "
                  "its margin [-0.120, -0.061] (margin 0.050)"});
  EXPECT_EQ(story.Observe(s, 4000), Lines{});
  DemoSnapshot ship = s;
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

// With schema.covariate: the figures of two comparisons (ndcg@10, whose
// adjusted estimate lies outside its running interval, and precision@5) to
// show the columns line up.
DemoSnapshot AdjustedSnapshot() {
  DemoSnapshot s;
  s.headlines = kStoryHeadlines;
  s.events_consumed = 350;
  s.covariate = "pre_exposure.clicks";
  s.variants = {{"A", 4, {{0.55, 0.42, 0.68}, {}}},
                {"B", 1, {{0.3, -INFINITY, INFINITY}, {}}}};
  AbFigures ndcg;
  ndcg.experiment = "x";
  ndcg.baseline = "A";
  ndcg.treatment = "B";
  ndcg.headline = {"ndcg", "10"};
  ndcg.difference = {-0.21, -0.25, INFINITY};
  ndcg.look = {-0.21, -0.3, -0.12};
  ndcg.verdict = Verdict::kWorse;
  ndcg.has_adjusted = true;
  ndcg.adjusted = {
      {-0.048, -0.027, -0.007}, {-0.048, -0.069, -0.027}, 0.64, "adjusted"};
  AbFigures precision = ndcg;
  precision.headline = {"precision", "5"};
  precision.difference = {0.004, -0.002, 0.010};
  precision.look = {0.004, NAN, NAN};
  precision.verdict = Verdict::kInconclusive;
  precision.adjusted = {
      {0.003, -0.007, 0.013}, {0.003, -0.01, 0.016}, 0.81, "adjusted"};
  s.ab = {ndcg, precision};
  s.srm = {{"x", true, 1e-5}};
  return s;
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

// What was rejected or set aside ends the table, as replay's lines
// (FormatSetAside), indented.
TEST(DemoStoryTest, TableEndsWithWhatWasSetAside) {
  DemoSnapshot s = AdjustedSnapshot();
  s.set_aside = "rejected: malformed_json=2\nset aside: orphaned_judgments=3\n";
  const std::string table = DemoStory().Table(s, 10'000);
  EXPECT_TRUE(table.ends_with(
      "\n  rejected: malformed_json=2\n  set aside: orphaned_judgments=3\n"))
      << table;
  s.set_aside.clear();
  EXPECT_EQ(DemoStory().Table(s, 10'000).find("set aside"), std::string::npos);
}

// The table's row under each experiment and treatment holds the adjusted
// figures of the same comparisons, column by column.
TEST(DemoStoryTest, TableShowsTheAdjustedDifferences) {
  DemoSnapshot s = AdjustedSnapshot();
  const std::string table = DemoStory().Table(s, 10'000);
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
  s.ab[1].has_adjusted = false;
  const std::string partial = DemoStory().Table(s, 10'000);
  EXPECT_NE(partial.find("variance x0.64  n/a\n"), std::string::npos)
      << partial;
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
// The story's lines when B turns worse with `movers` exported.
Lines TurnWorse(std::vector<MoverFigures> movers) {
  DemoStory story;
  const Verdict none = Verdict::kNoData;
  DemoSnapshot first = Snapshot(100, Verdict::kInconclusive, {-0.01, -0.1, 0.1},
                                false, none, NAN, 1);
  EXPECT_EQ(story.Observe(first, 0), Lines{});
  DemoSnapshot worse = Snapshot(200, Verdict::kWorse, {-0.21, -0.25, -0.17},
                                false, none, NAN, 1);
  worse.ab[0].movers = std::move(movers);
  return story.Observe(worse, 2000);
}

TEST(DemoStoryTest, RegressionNamesItsTopTwoQueries) {
  EXPECT_EQ(TurnWorse({{"q-17", -0.412, -0.031},
                       {"q-up", 0.2, 0.01},
                       {"q-3", -0.268, -0.012},
                       {"q-9", -0.3, -0.002}}),
            Lines{"B is now worse than A on ndcg@10: -0.210 [-0.250, "
                  "-0.170] (ranker-v2); most on queries q-17 (-0.41), q-3 "
                  "(-0.27)"});
}

// A query text with escape sequences is told escaped, never raw (issue
// 43): "\x1b]0;PWNED\x07" would retitle the terminal's window.
TEST(DemoStoryTest, QueryTextsReachTheTerminalEscaped) {
  EXPECT_EQ(TurnWorse({{"q\x1b]0;PWNED\x07\x1b[31mRED", -0.412, -0.031}}),
            Lines{"B is now worse than A on ndcg@10: -0.210 [-0.250, "
                  "-0.170] (ranker-v2); most on queries "
                  "q\\x1b]0;PWNED\\x07\\x1b[31mRED (-0.41)"});
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
  s.headlines = kStoryHeadlines;
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

// Multileaving (`demo --multileave A,B,C`): the ranking and the winner of a
// three-team experiment are told under its interleaving line.
TEST(DemoStoryTest, TableShowsTheMultileavingRanking) {
  DemoSnapshot s;
  s.headlines = kStoryHeadlines;
  s.interleaving = {{"m", "A", "B", 0.04, 0.002, 900, Verdict::kBetter}};
  s.multileaving_ranking["m"] = {"C", "B", "A"};
  s.multileaving_winner["m"] = "C";
  s.events_consumed = 10;
  s.variants = {{"A", 10, {{0.5, 0.4, 0.6}, {}}}};
  const std::string table = DemoStory().Table(s, 10'000);
  EXPECT_NE(table.find("  interleaving m (B vs A): preference +0.040, p = "
                       "0.002, better, 900 impressions\n"
                       "  multileaving m ranking: C > B > A, winner C\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace rankwatch::cli
