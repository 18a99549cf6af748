// Issue 42: decisions a person can act on. The minimum sample before a
// call, statistics that are not finite, effects that change, and
// simulations of the whole rule through the ExperimentMonitor at the small
// sizes where people look first. Seeds print on failure.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "base/random.h"
#include "daemon/stream/experiments/decisions.h"
#include "daemon/stream/experiments/decisions_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using metrics::Measure;
using S = InputState;
using std::chrono::milliseconds;

constexpr double kNoCovariate = std::numeric_limits<double>::quiet_NaN();

config::ExperimentConfig EvidenceExperiment(int64_t min_lists,
                                            milliseconds min_ms) {
  config::ExperimentConfig e{"ranker-v2", "A", {"B"}};
  e.split = {1, 1};
  e.primary = {{Measure::kNdcg, 10}};
  e.min_lists = min_lists;
  e.min_duration = min_ms;
  return e;
}

// Worked by hand: 8 lists per arm 40 s after the first list (at 1,000 s),
// against 100 lists and 1 h. At 8 lists per 40 s an arm reaches 100 lists
// 100 x 40 / 8 = 500 s after its first list; the hour ends at 1,000 s +
// 3,600 s = 4,600 s (01:16:40), 3,560 s (59m20s) after the look.
TEST(MinimumSampleTest, WhatIsMissingAndWhenItIsMet) {
  const config::ExperimentConfig e =
      EvidenceExperiment(100, std::chrono::hours(1));
  const MinimumSample m = MinimumSampleAt(8, 8, 1'000'000, 1'040'000, e);
  EXPECT_FALSE(m.met());
  EXPECT_EQ(m.elapsed_ms, 40'000);
  EXPECT_EQ(m.met_at_ms, 4'600'000);
  EXPECT_EQ(MinimumSentence(m),
            "minimum sample not reached: baseline 8 and treatment 8 of the "
            "minimum 100 lists per arm, 40s since the first list of the "
            "minimum 1h; at the current rate met at about "
            "1970-01-01T01:16:40Z (in 59m20s)");
  // The hour has passed, the lists have not: 30 and 60 lists in 2 h. The
  // slower arm needs 100 x 7,200 / 30 = 24,000 s (06:40:00), 4h40m on.
  const MinimumSample lists = MinimumSampleAt(30, 60, 0, 7'200'000, e);
  EXPECT_FALSE(lists.met());
  EXPECT_EQ(lists.met_at_ms, 24'000'000);
  EXPECT_EQ(MinimumSentence(lists),
            "minimum sample not reached: baseline 30 and treatment 60 of the "
            "minimum 100 lists per arm; at the current rate met at about "
            "1970-01-01T06:40:00Z (in 4h40m)");
  // No list yet: nothing to tell the time from.
  const MinimumSample none =
      MinimumSampleAt(0, 0, ExperimentMonitor::kNoEventTime, 5'000, e);
  EXPECT_EQ(none.met_at_ms, -1);
  EXPECT_EQ(MinimumSentence(none),
            "minimum sample not reached: baseline 0 and treatment 0 of the "
            "minimum 100 lists per arm, 0s since the first list of the "
            "minimum 1h; no lists yet to tell when it will be met");
  // Met: both counts and the hour.
  EXPECT_TRUE(MinimumSampleAt(100, 150, 0, 3'600'000, e).met());
  EXPECT_FALSE(MinimumSampleAt(100, 150, 0, 3'599'999, e).met());
}

TEST(MinimumSampleTest, OnlyAGuardrailBreachCallsItEarly) {
  const std::vector<S> none;
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter}, none, false),
            DecisionValue::kKeepRunning);
  EXPECT_EQ(Decide(false, std::vector<S>{S::kWorse}, none, false),
            DecisionValue::kKeepRunning);
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter},
                   std::vector<S>{S::kInferior}, false),
            DecisionValue::kNoShip);
  // Met: the rule as before.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kWorse}, none, true),
            DecisionValue::kNoShip);
  // Statistics that are not finite: invalid, minimum or not.
  EXPECT_EQ(Decide(false, std::vector<S>{S::kBetter},
                   std::vector<S>{S::kInvalid}, false),
            DecisionValue::kInvalid);
  EXPECT_EQ(InputStateName(S::kInvalid), "invalid");
}

class EvidenceTest : public ::testing::Test {
 protected:
  EvidenceTest()
      : agg_(DecisionTestAggregation(),
             BuildSeries({Measure::kNdcg, Measure::kPrecision}, {10})) {}

  // One list of `variant` served at `event_ms`, as the pipeline feeds both.
  void Add(ExperimentMonitor* monitor, std::string_view variant, double ndcg,
           double p10, int64_t event_ms) {
    const uint32_t g = agg_.ResolveGroup(variant, {});
    const std::vector<double> values = {ndcg, ndcg, p10};
    agg_.Add(g, event_ms, values, false);
    monitor->Add(g, 0, values, 0, kNoCovariate, event_ms);
  }

  // n lists per arm: A's ndcg@10 alternates 0.4 / 0.6, B's is `b` +- 0.1;
  // P@10 is 0.3 +- 0.1 in both.
  void Feed(ExperimentMonitor* monitor, int n, double b, int64_t event_ms) {
    for (int i = 0; i < n; ++i) {
      const double sign = i % 2 == 0 ? -1 : 1;
      Add(monitor, "A", 0.5 + 0.1 * sign, 0.3 + 0.1 * sign, event_ms);
      Add(monitor, "B", b + 0.1 * sign, 0.3 + 0.1 * sign, event_ms);
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

// The issue's first case: 8 lists per arm and a large difference. The
// always-valid interval excludes 0 (d = 0.4, V = 2 x 0.01 x 8/7 / 8 =
// 2.857e-3 gives 0.4 +- 0.201323 from the mixture, Python), but 8 of the
// default 100 lists and 30 s of the default hour are no basis for a call.
TEST_F(EvidenceTest, EightListsPerArmKeepRunningByDefault) {
  experiments_ = {EvidenceExperiment(config::kDefaultMinLists,
                                     config::kDefaultMinDuration)};
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  Feed(&monitor, 8, 0.9, 1'000);
  const Decision& d = Look(&monitor, &board, 31'000);
  EXPECT_NEAR(d.inputs[0].interval.lower, 0.4 - 0.20132327348854884, 1e-9);
  EXPECT_EQ(d.inputs[0].state, S::kBetter);
  EXPECT_EQ(d.value, DecisionValue::kKeepRunning);
  EXPECT_EQ(d.minimum.baseline_lists, 8);
  EXPECT_EQ(d.minimum.elapsed_ms, 30'000);
  ASSERT_GE(d.reasons.size(), 2u);
  // 100 lists at 8 per 30 s: 375 s after the first list; the hour: 3,601 s.
  EXPECT_EQ(d.reasons[0],
            "minimum sample not reached: baseline 8 and treatment 8 of the "
            "minimum 100 lists per arm, 30s since the first list of the "
            "minimum 1h; at the current rate met at about "
            "1970-01-01T01:00:01Z (in 59m30s)");
  EXPECT_EQ(d.reasons[1].substr(0, 24), "ndcg_cut_10 is better: +");
}

// A look before any event has no event time ("now" INT64_MIN): the
// decision's "since" takes the first look that has one, so that a
// keep_running held from the start is dated (the status page's clock
// cannot show INT64_MIN).
TEST_F(EvidenceTest, TheFirstLookWithAnEventTimeDatesTheDecision) {
  experiments_ = {EvidenceExperiment(100, std::chrono::hours(1))};
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  const int64_t no_time = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Look(&monitor, &board, no_time).since_event_ms, no_time);
  Feed(&monitor, 4, 0.6, 1'000);
  const Decision& d = Look(&monitor, &board, 2'000);
  EXPECT_EQ(d.value, DecisionValue::kKeepRunning);
  EXPECT_EQ(d.since_look, 1);
  EXPECT_EQ(d.since_event_ms, 2'000);
  EXPECT_EQ(Look(&monitor, &board, 3'000).since_event_ms, 2'000);
}

// The issue's third case: one list with P@10 (a guardrail) of 1e200. Its
// square overflows the sums, the variance is not finite: the decision is
// invalid and says why, never "too few lists" (which would keep the last
// interval standing).
TEST_F(EvidenceTest, StatisticsThatAreNotFiniteMakeTheDecisionInvalid) {
  experiments_ = {EvidenceExperiment(0, milliseconds(0))};
  experiments_[0].guardrails = {{{Measure::kPrecision, 10}, 0.05}};
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  Feed(&monitor, 400, 0.6, 1'000);
  ASSERT_EQ(Look(&monitor, &board, 2'000).value, DecisionValue::kShip);
  Add(&monitor, "B", 0.6, 1e200, 1'500);
  const Decision& d = Look(&monitor, &board, 3'000);
  EXPECT_EQ(d.inputs[1].state, S::kInvalid);
  EXPECT_EQ(d.value, DecisionValue::kInvalid);
  ASSERT_EQ(d.reasons.size(), 1u);
  // Baseline: 400 lists of 0.3 +- 0.1, variance 0.01 x 400 / 399; B's
  // mean (1e200 + 401 x 0.3 - 0.1) / 401 = 2.494e197 (the 401st list's
  // 0.6 ndcg@10 with P@10 1e200), its variance infinite.
  EXPECT_EQ(d.reasons[0],
            "guardrail P_10 has statistics that are not finite "
            "(baseline mean 0.3, variance 0.01003; treatment mean 2.494e+197, "
            "variance inf): a value overflowed its sums; bound the field "
            "(schema.fields[].min and max) and restart the experiment");
}

// The issue's second case, through the monitor: B better by 0.1 for 400
// lists per arm, then worse by 0.1 for 1,600 more (the cumulative estimate
// falls to -0.06, outside the running interval around +0.1). The decision
// names the change and its event time; its interval holds the estimate.
TEST_F(EvidenceTest, AnEffectThatChangesIsNamed) {
  experiments_ = {EvidenceExperiment(0, milliseconds(0))};
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  DecisionBoard board(&experiments_, statistics_);
  Feed(&monitor, 400, 0.6, 1'000);
  const Decision& before = Look(&monitor, &board, 5'000);
  EXPECT_EQ(before.value, DecisionValue::kShip);
  EXPECT_EQ(before.inputs[0].effect_changes, 0);
  Feed(&monitor, 1600, 0.4, 6'000);
  const Decision& d = Look(&monitor, &board, 9'000);
  const DecisionInput& in = d.inputs[0];
  EXPECT_NEAR(in.difference, -0.06, 1e-9);  // (400 x 0.1 - 1600 x 0.1) / 2000
  EXPECT_EQ(in.effect_changes, 1);
  EXPECT_EQ(in.effect_changed_ms, 9'000);
  EXPECT_TRUE(in.interval.Contains(in.difference));
  EXPECT_EQ(d.value, DecisionValue::kNoShip);
  ASSERT_EQ(d.reasons.size(), 1u);
  EXPECT_NE(d.reasons[0].find("(counted from 1970-01-01T00:00:09Z, when the "
                              "effect changed)"),
            std::string::npos)
      << d.reasons[0];
  JsonWriter w;
  WriteDecisionJson(d, &w);
  const std::string json = w.Take();
  EXPECT_NE(
      json.find(
          R"("effect_changes":[{"series":"ndcg@10","label":"ndcg_cut_10",)"
          R"("changes":1,)"
          R"("event_ms":9000}])"),
      std::string::npos)
      << json;
}

// Simulations of the rule through the monitor, a look after every
// `per_look` lists per arm (a person refreshing the page).
struct EvidenceSim {
  int runs = 0;
  int looks = 0;
  int per_look = 0;
  double effect = 0;  // Treatment - baseline on ndcg@10.
  int64_t min_lists = 0;
  bool bernoulli = false;  // 0/1 values (p 0.2), else N(0.5, 0.2^2).
  uint64_t seed = 0;
};
struct EvidenceCounts {
  int called = 0;   // Runs with ship or no_ship at any look.
  int shipped = 0;  // Runs with ship at any look.
  int early = 0;    // Ship before min_lists per arm.
};

EvidenceCounts RunSim(const EvidenceSim& s) {
  EvidenceCounts out;
  Xoshiro256 rng(s.seed);
  const auto draw = [&](double shift) {
    if (s.bernoulli) return rng.Uniform() < 0.2 + shift ? 1.0 : 0.0;
    return 0.5 + shift + 0.2 * rng.Gaussian();
  };
  for (int run = 0; run < s.runs; ++run) {
    Aggregator agg(DecisionTestAggregation(),
                   BuildSeries({Measure::kNdcg, Measure::kPrecision}, {10}));
    std::vector<config::ExperimentConfig> experiments = {
        EvidenceExperiment(s.min_lists, milliseconds(0))};
    const config::StatisticsConfig statistics;
    ExperimentMonitor monitor(&experiments, statistics, &agg);
    DecisionBoard board(&experiments, statistics);
    const uint32_t a = agg.ResolveGroup("A", {});
    const uint32_t b = agg.ResolveGroup("B", {});
    bool called = false;
    bool shipped = false;
    for (int look = 1; look <= s.looks; ++look) {
      for (int i = 0; i < s.per_look; ++i) {
        const double ya = draw(0);
        const double yb = draw(s.effect);
        agg.Add(a, 1'000, std::vector<double>{ya, ya, 0.5}, false);
        agg.Add(b, 1'000, std::vector<double>{yb, yb, 0.5}, false);
      }
      monitor.Update(look * 1'000);
      board.Update(monitor, agg.series(), look * 1'000);
      const DecisionValue v = board.decisions()[0].value;
      called = called || v != DecisionValue::kKeepRunning;
      shipped = shipped || v == DecisionValue::kShip;
      if (v == DecisionValue::kShip && look * s.per_look < s.min_lists) {
        ++out.early;
      }
    }
    out.called += called;
    out.shipped += shipped;
  }
  return out;
}

// A/A at small sizes, a look every 4 lists per arm up to 200, with no
// minimum at all (the intervals alone) on 0/1 values, whose normal
// approximation is worst at a handful of lists: a call (ship or no_ship)
// at ANY look at most at the level. Binomial standard error at 0.05 over
// 400 runs: 0.011; the bound allows 2.5 of it.
TEST(DecisionEvidenceSimulationTest, SmallAAWithPeekingCallsAtMostAtTheLevel) {
  for (const bool bernoulli : {true, false}) {
    const EvidenceSim s{.runs = 400,
                        .looks = 50,
                        .per_look = 4,
                        .effect = 0,
                        .min_lists = 0,
                        .bernoulli = bernoulli,
                        .seed = bernoulli ? 4211u : 4212u};
    const EvidenceCounts c = RunSim(s);
    const double rate = static_cast<double>(c.called) / s.runs;
    std::printf(
        "[small_aa] seed %llu, %s values, %d runs, looks every %d "
        "lists to %d: called at some look %.4f\n",
        static_cast<unsigned long long>(s.seed), bernoulli ? "0/1" : "normal",
        s.runs, s.per_look, s.per_look * s.looks, rate);
    EXPECT_LE(rate, 0.05 + 2.5 * 0.011) << "seed " << s.seed;
  }
}

// A large true effect (+0.2 on sd 0.2) that the intervals see within a
// few lists: no ship before the minimum (100 lists per arm), and a ship
// soon after it.
TEST(DecisionEvidenceSimulationTest, NoShipBeforeTheMinimumSample) {
  const EvidenceSim s{.runs = 100,
                      .looks = 40,
                      .per_look = 5,
                      .effect = 0.2,
                      .min_lists = 100,
                      .bernoulli = false,
                      .seed = 4213};
  const EvidenceCounts c = RunSim(s);
  std::printf(
      "[minimum] seed %llu, %d runs: ship before 100 lists %d, "
      "shipped by 200 lists %d\n",
      static_cast<unsigned long long>(s.seed), s.runs, c.early, c.shipped);
  EXPECT_EQ(c.early, 0) << "seed " << s.seed;
  EXPECT_EQ(c.shipped, s.runs) << "seed " << s.seed;
}

}  // namespace
}  // namespace rankwatch::stream
