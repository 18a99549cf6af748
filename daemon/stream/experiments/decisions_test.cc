#include "daemon/stream/experiments/decisions.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "daemon/stream/experiments/decisions_test_util.h"
#include "gtest/gtest.h"
#include "metrics/ab_stats.h"

namespace rankwatch::stream {
namespace {

using metrics::ConfidenceInterval;
using metrics::Measure;
using S = InputState;

TEST(DecideTest, TheRule) {
  const std::vector<S> none;
  // Sample-ratio mismatch overrides everything.
  EXPECT_EQ(Decide(true, std::vector<S>{S::kBetter}, none),
            DecisionValue::kInvalid);
  // One primary better, no guardrails: ship.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter}, none),
            DecisionValue::kShip);
  // One of two primaries better is enough (each tested at alpha / k).
  EXPECT_EQ(Decide(false, std::vector<S>{S::kInconclusive, S::kBetter}, none),
            DecisionValue::kShip);
  // A worse primary blocks, even beside a better one.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter, S::kWorse}, none),
            DecisionValue::kNoShip);
  // Guardrails: every one must hold to ship; an inferior one blocks.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter},
                   std::vector<S>{S::kNonInferior, S::kNonInferior}),
            DecisionValue::kShip);
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter},
                   std::vector<S>{S::kNonInferior, S::kUndecided}),
            DecisionValue::kKeepRunning);
  EXPECT_EQ(
      Decide(false, std::vector<S>{S::kBetter}, std::vector<S>{S::kNoData}),
      DecisionValue::kKeepRunning);
  EXPECT_EQ(Decide(false, std::vector<S>{S::kInconclusive},
                   std::vector<S>{S::kInferior}),
            DecisionValue::kNoShip);
  // Nothing significant: keep running, whatever the guardrails say.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kInconclusive},
                   std::vector<S>{S::kNonInferior}),
            DecisionValue::kKeepRunning);
  EXPECT_EQ(Decide(false, std::vector<S>{S::kNoData}, none),
            DecisionValue::kKeepRunning);
}

TEST(DecideTest, Names) {
  EXPECT_EQ(DecisionValueName(DecisionValue::kKeepRunning), "keep_running");
  EXPECT_EQ(DecisionValueName(DecisionValue::kShip), "ship");
  EXPECT_EQ(DecisionValueName(DecisionValue::kNoShip), "no_ship");
  EXPECT_EQ(DecisionValueName(DecisionValue::kInvalid), "invalid");
  EXPECT_EQ(InputStateName(S::kNonInferior), "non_inferior");
}

// Higher is better, margin 0.01: the difference must stay above -0.01.
TEST(DecideTest, GuardrailStates) {
  EXPECT_EQ(GuardrailState({-0.009, 0.02}, true, true, 0.01), S::kNonInferior);
  EXPECT_EQ(GuardrailState({-0.011, 0.02}, true, true, 0.01), S::kUndecided);
  EXPECT_EQ(GuardrailState({-0.05, -0.011}, true, true, 0.01), S::kInferior);
  // Lower is better (first_click_rank): the difference must stay below
  // +margin.
  EXPECT_EQ(GuardrailState({-0.5, 0.2}, true, false, 0.3), S::kNonInferior);
  EXPECT_EQ(GuardrailState({0.31, 0.9}, true, false, 0.3), S::kInferior);
  EXPECT_EQ(GuardrailState({0.1, 0.9}, true, false, 0.3), S::kUndecided);
  EXPECT_EQ(GuardrailState({-1, 1}, false, true, 0.01), S::kNoData);
  // Margin 0: non-inferior only when shown better.
  EXPECT_EQ(GuardrailState({0.001, 0.02}, true, true, 0), S::kNonInferior);
  EXPECT_EQ(GuardrailState({-0.001, 0.02}, true, true, 0), S::kUndecided);
}

TEST(DecideTest, PrimaryStates) {
  EXPECT_EQ(PrimaryState({0.001, 0.02}, true, true), S::kBetter);
  EXPECT_EQ(PrimaryState({-0.02, -0.001}, true, true), S::kWorse);
  EXPECT_EQ(PrimaryState({-0.02, 0.001}, true, true), S::kInconclusive);
  EXPECT_EQ(PrimaryState({-0.02, -0.001}, true, false), S::kBetter);
  EXPECT_EQ(PrimaryState({}, false, true), S::kNoData);
}

class DecisionBoardTest : public ::testing::Test {
 protected:
  DecisionBoardTest()
      : agg_(DecisionTestAggregation(),
             BuildSeries({Measure::kNdcg, Measure::kPrecision}, {10})) {
    config::ExperimentConfig e{"ranker-v2", "A", {"B"}};
    e.split = {1, 1};
    e.primary = {{Measure::kNdcg, 10}};
    // The rule itself, without a minimum sample (tested on its own in
    // decisions_evidence_test.cc).
    e.min_lists = 0;
    e.min_duration = std::chrono::milliseconds(0);
    experiments_.push_back(e);
  }

  void Add(std::string_view variant, double ndcg10, double p10) {
    agg_.Add(agg_.ResolveGroup(variant, {}), 1'000,
             std::vector<double>{ndcg10, ndcg10, p10}, false);
  }

  // n lists per arm: A's ndcg@10 alternates 0.4 / 0.6, B's 0.5 / 0.7
  // (difference +0.1, each arm's variance 0.01 n / (n - 1)); P@10 is
  // `pa` +- 0.1 in A and `pb` +- 0.1 in B.
  void Feed(int n, double pa, double pb) {
    for (int i = 0; i < n; ++i) {
      const double sign = i % 2 == 0 ? -1 : 1;
      Add("A", 0.5 + 0.1 * sign, pa + 0.1 * sign);
      Add("B", 0.6 + 0.1 * sign, pb + 0.1 * sign);
    }
  }

  // ndcg@10 (series 0), ndcg (1) and P@10 (2).
  const Decision& Look(ExperimentMonitor* monitor, DecisionBoard* board,
                       int64_t now_ms) {
    return LookOnce(monitor, board, agg_, now_ms);
  }

  Aggregator agg_;
  std::vector<config::ExperimentConfig> experiments_;
  config::StatisticsConfig statistics_;
};

TEST_F(DecisionBoardTest, ShipsWhenThePrimaryIsBetterAndGuardrailsHold) {
  experiments_[0].guardrails = {{{Measure::kPrecision, 10}, 0.04}};
  Feed(100, 0.3, 0.3);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const Decision& d = Look(&monitor, &board, 5'000);
  // ndcg@10: d = 0.1, V = 2 x 0.01 x 100 / 99 / 100 = 2.0202e-4; with
  // tau = 0.05 and alpha = 0.05 the mSPRT half-width is
  // sqrt(V (V + tau^2) / tau^2 (ln((V + tau^2) / V) + 2 ln 20))
  // = 0.04330 (Python, math module): [0.0567, 0.1433], better.
  // P@10: d = 0, same V: [-0.0433, 0.0433] reaches past -0.04: undecided.
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[0].series, "ndcg@10");
  EXPECT_EQ(d.inputs[0].state, S::kBetter);
  EXPECT_NEAR(d.inputs[0].interval.lower, 0.1 - 0.04330, 1e-4);
  EXPECT_EQ(d.inputs[1].series, "precision@10");
  EXPECT_EQ(d.inputs[1].state, S::kUndecided);
  EXPECT_EQ(d.value, DecisionValue::kKeepRunning);
  EXPECT_EQ(d.since_look, 1);
  EXPECT_EQ(d.since_event_ms, 5'000);
  ASSERT_EQ(d.reasons.size(), 3u);
  EXPECT_EQ(d.reasons[0],
            "a primary series is better, but not every guardrail holds yet");
  EXPECT_EQ(d.reasons[1].substr(0, 44),
            "ndcg_cut_10 is better: +0.1 (+20.0%), 95% al");
  // 300 more lists per arm: V = 2 x 0.01 x 400 / 399 / 400 = 5.0125e-5,
  // half-width 0.02252: P@10 [-0.0225, 0.0225] stays above -0.04.
  Feed(300, 0.3, 0.3);
  const Decision& later = Look(&monitor, &board, 9'000);
  EXPECT_EQ(later.inputs[1].state, S::kNonInferior);
  EXPECT_NEAR(later.inputs[1].interval.lower, -0.02252, 1e-4);
  EXPECT_EQ(later.value, DecisionValue::kShip);
  EXPECT_EQ(later.since_look, 2);
  EXPECT_EQ(later.since_event_ms, 9'000);
  ASSERT_EQ(later.reasons.size(), 2u);
  EXPECT_EQ(later.reasons[1].substr(0, 23), "guardrail P_10 holds: +");
  EXPECT_NE(later.reasons[1].find("stays above the margin -0.04"),
            std::string::npos)
      << later.reasons[1];
  // Another look with the same data keeps the "since".
  const Decision& again = Look(&monitor, &board, 12'000);
  EXPECT_EQ(again.value, DecisionValue::kShip);
  EXPECT_EQ(again.since_look, 2);
}

TEST_F(DecisionBoardTest, AGuardrailWorseThanItsMarginBlocks) {
  // P@10 drops by 0.1 (0.3 -> 0.2) with a relative margin of 10% of the
  // baseline's 0.3 = 0.03: its interval [-0.1 - 0.0225, -0.1 + 0.0225]
  // lies below -0.03.
  experiments_[0].guardrails = {{{Measure::kPrecision, 10}, 0.1, true}};
  Feed(400, 0.3, 0.2);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const Decision& d = Look(&monitor, &board, 5'000);
  EXPECT_EQ(d.inputs[0].state, S::kBetter);
  EXPECT_EQ(d.inputs[1].state, S::kInferior);
  EXPECT_NEAR(d.inputs[1].margin, 0.03, 1e-12);
  EXPECT_EQ(d.value, DecisionValue::kNoShip);
  ASSERT_EQ(d.reasons.size(), 1u);
  EXPECT_NE(d.reasons[0].find("guardrail P_10 is worse than its "
                              "margin: -0.1 (-33.3%)"),
            std::string::npos)
      << d.reasons[0];
  EXPECT_NE(d.reasons[0].find("lies below the margin -0.03 (10% of the "
                              "baseline's 0.3)"),
            std::string::npos)
      << d.reasons[0];
}

// A guardrail on a field not (yet) computed, as right after a reload
// before its series exists: the input keeps the field's configured
// direction (better: lower), not the default of measures.
TEST_F(DecisionBoardTest, AFieldGuardrailWithoutItsSeriesKeepsItsDirection) {
  config::GuardrailConfig latency;
  latency.series.field = "latency_ms";
  latency.margin = 5;
  experiments_[0].guardrails = {latency};
  Feed(100, 0.3, 0.3);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_,
                      {{"latency_ms", "ms", false, 10}});
  const Decision& d = Look(&monitor, &board, 5'000);
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[1].series, "latency_ms");
  EXPECT_FALSE(d.inputs[1].higher_is_better);
  EXPECT_EQ(d.inputs[1].state, S::kNoData);
}

TEST_F(DecisionBoardTest, ASampleRatioMismatchIsInvalid) {
  // 90/10 configured, 50/50 served: the sequential SRM test rejects.
  experiments_[0].split = {9, 1};
  Feed(400, 0.3, 0.3);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const Decision& d = Look(&monitor, &board, 5'000);
  EXPECT_EQ(d.value, DecisionValue::kInvalid);
  ASSERT_EQ(d.reasons.size(), 1u);
  EXPECT_EQ(d.reasons[0].substr(0, 70),
            "sample ratio mismatch: A 400, B 400 against the configured 90/10 "
            "split");
}

TEST_F(DecisionBoardTest, TwoPrimarySeriesAreTestedAtHalfTheAlpha) {
  experiments_[0].primary = {{Measure::kNdcg, 10}, {Measure::kPrecision, 10}};
  Feed(100, 0.3, 0.3);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const Decision& d = Look(&monitor, &board, 5'000);
  // Level 0.975: half-width sqrt(V (V + tau^2) / tau^2 (ln((V + tau^2) / V)
  // + 2 ln 40)) = 0.04666 for V = 2.0202e-4 (Python, math module), wider
  // than the comparison's own 0.04330.
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_DOUBLE_EQ(d.inputs[0].level, 0.975);
  EXPECT_NEAR(d.inputs[0].interval.upper - d.inputs[0].interval.lower,
              2 * 0.04666, 2e-4);
  EXPECT_EQ(d.inputs[0].state, S::kBetter);
  EXPECT_EQ(d.inputs[1].state, S::kInconclusive);
  EXPECT_EQ(d.value, DecisionValue::kShip);
  EXPECT_NE(d.reasons[0].find("97.5% always-valid interval"), std::string::npos)
      << d.reasons[0];
}

// A reload keeps the "since" of a decision whose experiment (by name),
// treatment and value are unchanged.
TEST_F(DecisionBoardTest, AReloadKeepsTheSinceOfAnUnchangedDecision) {
  Feed(400, 0.3, 0.3);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  ASSERT_EQ(Look(&monitor, &board, 5'000).value, DecisionValue::kShip);
  Look(&monitor, &board, 6'000);
  // The new configuration puts another experiment first.
  std::vector<config::ExperimentConfig> next = {{"other", "A", {"C"}},
                                                experiments_[0]};
  next[0].split = {1, 1};
  next[0].primary = {{Measure::kNdcg, 10}};
  next[0].min_lists = 0;
  next[0].min_duration = std::chrono::milliseconds(0);
  ExperimentMonitor monitor2(&next, statistics_, &agg_);
  DecisionBoard board2(&next, statistics_);
  board2.AdoptState(board);
  monitor2.Update(7'000);
  board2.Update(monitor2, agg_.series(), 7'000);
  ASSERT_EQ(board2.decisions().size(), 2u);
  const Decision& kept = board2.decisions()[1];
  EXPECT_EQ(kept.name, "ranker-v2");
  EXPECT_EQ(kept.value, DecisionValue::kShip);
  EXPECT_EQ(kept.since_event_ms, 5'000);
  // The new experiment's decision starts at this look.
  EXPECT_EQ(board2.decisions()[0].since_event_ms, 7'000);
}

// The running interval restarts where an effect changed, but a look
// without an interval (too few lists) can leave the latest estimate
// outside it; the reason then labels both.
TEST(DecisionReasonsTest, AnEstimateOutsideTheRunningIntervalIsLabelled) {
  DecisionInput in;
  in.series = "precision@5";
  in.label = "precision@5";  // As the user spelled it.
  in.difference = -0.037;
  in.relative_difference = -0.1;
  in.has_interval = true;
  in.interval = {-0.007, -0.006};
  in.level = 0.975;
  in.state = S::kWorse;
  std::vector<DecisionInput> inputs = {in};
  EXPECT_EQ(DecisionReasons(DecisionValue::kNoShip, inputs, nullptr),
            std::vector<std::string>{
                "precision@5 is worse: -0.037 (-10.0%) at the latest look, "
                "outside the interval of the looks before it; 97.5% "
                "always-valid interval [-0.007, -0.006] excludes 0"});
  // Inside it: one plain figure.
  inputs[0].interval = {-0.05, -0.02};
  EXPECT_EQ(DecisionReasons(DecisionValue::kNoShip, inputs, nullptr)[0],
            "precision@5 is worse: -0.037 (-10.0%), 97.5% always-valid "
            "interval [-0.05, -0.02] excludes 0");
}

TEST_F(DecisionBoardTest, JsonHasEveryFigure) {
  experiments_[0].guardrails = {{{Measure::kPrecision, 10}, 0.1, true}};
  Feed(400, 0.3, 0.2);
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const Decision& d = Look(&monitor, &board, 5'000);
  JsonWriter w;
  WriteDecisionJson(d, &w);
  const std::string json = w.Take();
  // The guardrail: d = 0.2 - 0.3, relative -1/3, margin 0.1 x 0.3.
  for (const char* part :
       {R"({"treatment":"B","value":"no_ship","reasons":["guardrail )",
        R"("since_look":1,"since_event_ms":5000,"minimum":{"baseline_lists":)",
        R"("min_lists":0,"units":false,"elapsed_ms":0,"min_duration_ms":0,)",
        R"("met":true,"met_at_ms":-1},"effect_changes":[],)",
        R"("inputs":[{"role":"primary",)",
        R"({"role":"guardrail","series":"precision@10","label":"P_10",)",
        R"("state":"inferior",)",
        R"("baseline_count":400,"treatment_count":400,)",
        R"("level":0.95,"effect_changes":0,"effect_changed_ms":-1,)",
        R"("margin":0.03,"relative_margin":0.1}]})"}) {
    EXPECT_NE(json.find(part), std::string::npos) << part << "\n" << json;
  }
}

// Simulation of the rule over looks, through the monitor: per run, 2,000
// lists per arm in 10 looks of 200; values N(mean, 0.2^2). Seeds print on
// failure.
struct SimResult {
  int ship = 0;
  int no_ship = 0;
  int guardrail_non_inferior = 0;
};

SimResult Simulate(int runs, uint64_t seed, double primary_effect,
                   double guardrail_effect, double margin) {
  SimResult r;
  Xoshiro256 rng(seed);
  for (int run = 0; run < runs; ++run) {
    Aggregator agg(DecisionTestAggregation(),
                   BuildSeries({Measure::kNdcg, Measure::kPrecision}, {10}));
    std::vector<config::ExperimentConfig> experiments;
    config::ExperimentConfig e{"x", "A", {"B"}};
    e.split = {1, 1};
    e.primary = {{Measure::kNdcg, 10}};
    e.guardrails = {{{Measure::kPrecision, 10}, margin}};
    // min_lists (100) is met at the first look, of 200 lists; the lists
    // carry no event time to count min_duration from.
    e.min_duration = std::chrono::milliseconds(0);
    experiments.push_back(e);
    const config::StatisticsConfig statistics;
    ExperimentMonitor monitor(&experiments, statistics, &agg);
    DecisionBoard board(&experiments, statistics);
    const uint32_t a = agg.ResolveGroup("A", {});
    const uint32_t b = agg.ResolveGroup("B", {});
    DecisionValue last = DecisionValue::kKeepRunning;
    bool shipped = false;
    for (int look = 1; look <= 10; ++look) {
      for (int i = 0; i < 200; ++i) {
        const double ya = 0.5 + 0.2 * rng.Gaussian();
        agg.Add(a, 1'000,
                std::vector<double>{ya, ya, 0.5 + 0.2 * rng.Gaussian()}, false);
        const double yb = 0.5 + primary_effect + 0.2 * rng.Gaussian();
        agg.Add(b, 1'000,
                std::vector<double>{
                    yb, yb, 0.5 + guardrail_effect + 0.2 * rng.Gaussian()},
                false);
      }
      monitor.Update(look * 1'000);
      board.Update(monitor, agg.series(), look * 1'000);
      last = board.decisions()[0].value;
      // A person who ships at the first "ship" they see: the error counted
      // is shipping at any look.
      shipped = shipped || last == DecisionValue::kShip;
    }
    r.ship += shipped ? 1 : 0;
    r.no_ship += last == DecisionValue::kNoShip ? 1 : 0;
    r.guardrail_non_inferior +=
        board.decisions()[0].inputs[1].state == S::kNonInferior ? 1 : 0;
  }
  return r;
}

// A/A: shipping needs the primary's always-valid interval above 0, a
// one-sided event of the two-sided 95% sequence: at most 0.05.
TEST(DecisionSimulationTest, FalseShipRateUnderAA) {
  const uint64_t seed = 2711;
  const int runs = 400;
  const SimResult r = Simulate(runs, seed, 0, 0, 0.05);
  const double rate = static_cast<double>(r.ship) / runs;
  // Binomial standard error at 0.05 over 400 runs: 0.011; allow 2.5 of it.
  EXPECT_LE(rate, 0.05 + 2.5 * 0.011) << "seed " << seed;
  RecordProperty("false_ship_rate", std::to_string(rate));
}

// Better on the primary (+0.05, which the test detects within 2,000 lists)
// but worse on the guardrail by 0.04 against a margin of 0.02: must not
// ship. Shipping needs the guardrail's interval above -0.02 while the truth
// is -0.04: at most 0.05 per run.
TEST(DecisionSimulationTest, NoShipWhenAGuardrailIsWorseThanItsMargin) {
  const uint64_t seed = 2712;
  const int runs = 300;
  const SimResult r = Simulate(runs, seed, 0.05, -0.04, 0.02);
  const double ship = static_cast<double>(r.ship) / runs;
  EXPECT_LE(ship, 0.05) << "seed " << seed;
  RecordProperty("ship_rate", std::to_string(ship));
  RecordProperty("no_ship_at_end", std::to_string(r.no_ship));
  // And it says no: at the end most runs show the guardrail inferior
  // (interval below -0.02 once its half-width, 0.0203 at 2,000 lists per
  // arm, is under the 0.02 of excess loss).
  EXPECT_GE(r.no_ship, runs / 2) << "seed " << seed;
}

// Power of the guardrail test: no true change, margin 0.03, 2,000 lists
// per arm with sd 0.2. At the last look V = 2 x 0.04 / 2000 = 4e-5 and
// the 95% mSPRT half-width (tau 0.05) is 0.0203, so the guardrail holds
// when the estimate exceeds -0.0097: P(Z > -0.0097 / sqrt(V)) =
// P(Z > -1.53) = 0.937 from the last look alone (Python: 1 -
// NormalDist().cdf(-(0.03 - 0.0203) / sqrt(4e-5))); the running
// intersection only raises the lower end. Measured: at least 0.90.
TEST(DecisionSimulationTest, GuardrailPowerAtNoChange) {
  const uint64_t seed = 2713;
  const int runs = 300;
  const SimResult r = Simulate(runs, seed, 0, 0, 0.03);
  const double power = static_cast<double>(r.guardrail_non_inferior) / runs;
  EXPECT_GE(power, 0.90) << "seed " << seed;
  RecordProperty("guardrail_power", std::to_string(power));
}

// The sign each input gives the decision (rankwatch_ab_decision_input).
TEST(InputSignTest, SupportsBlocksOrNeither) {
  EXPECT_EQ(InputSign(InputState::kBetter), 1);
  EXPECT_EQ(InputSign(InputState::kNonInferior), 1);
  EXPECT_EQ(InputSign(InputState::kWorse), -1);
  EXPECT_EQ(InputSign(InputState::kInferior), -1);
  EXPECT_EQ(InputSign(InputState::kNoData), 0);
  EXPECT_EQ(InputSign(InputState::kInconclusive), 0);
  EXPECT_EQ(InputSign(InputState::kUndecided), 0);
  EXPECT_EQ(InputSign(InputState::kInvalid), -1);
}

}  // namespace
}  // namespace rankwatch::stream
