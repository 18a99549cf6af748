#include "daemon/stream/experiments/experiments.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_codec.h"
#include "base/numeric.h"
#include "base/random.h"
#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

namespace rankwatch::stream {
namespace {

using metrics::ComparisonStatus;
using metrics::Measure;

config::AggregationConfig TestAggregation() {
  config::AggregationConfig c;
  c.bucket = std::chrono::seconds(10);
  c.windows = {std::chrono::seconds(30)};
  c.segments = {"locale"};
  return c;
}

void AddValue(Aggregator* agg, std::string_view variant,
              std::string_view locale, int64_t time_ms, double value) {
  const std::string_view segments[] = {locale};
  agg->Add(agg->ResolveGroup(variant, segments), time_ms,
           std::vector<double>{value}, false);
}

// Baseline A: 1.0 long ago (event time 10 s), then 0.2 and 0.4 (locale de)
// and 0.6 (en) at 95 s. Treatment B: 0.5, 0.7, 0.9, 0.3 at 95 s. Looks at
// now = 100 s: the 30 s window holds only the 95 s values.
class ExperimentMonitorTest : public ::testing::Test {
 protected:
  ExperimentMonitorTest()
      : agg_(TestAggregation(), BuildSeries({Measure::kNdcg}, {10})) {
    experiments_.push_back({"ranker-v2", "A", {"B"}});
    AddValue(&agg_, "A", "de", 10'000, 1.0);
    AddValue(&agg_, "A", "de", 95'000, 0.2);
    AddValue(&agg_, "A", "de", 95'000, 0.4);
    AddValue(&agg_, "A", "en", 95'000, 0.6);
    for (double v : {0.5, 0.7, 0.9, 0.3}) AddValue(&agg_, "B", "de", 95'000, v);
  }

  Aggregator agg_;
  std::vector<config::ExperimentConfig> experiments_;
};

TEST_F(ExperimentMonitorTest, RowsPerTreatmentSeriesAndWindow) {
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  // Series ndcg_cut_10 and ndcg (uncut); windows "all" and 30s.
  ASSERT_EQ(monitor.comparisons().size(), 4u);
  const Comparison& c = monitor.comparisons()[1];
  EXPECT_EQ(c.experiment->name, "ranker-v2");
  EXPECT_EQ(c.treatment, "B");
  EXPECT_EQ(c.series, 0u);
  EXPECT_EQ(c.window, 0);
  EXPECT_FALSE(c.has_sequential);
  EXPECT_TRUE(monitor.comparisons()[0].has_sequential);
  EXPECT_EQ(monitor.comparisons()[0].window, -1);
}

TEST_F(ExperimentMonitorTest, WindowedWelchMatchesIndependentFigures) {
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.Update(100'000);
  // Window 30s, series 0: A = {0.2, 0.4, 0.6} summed over both locales
  // (mean 0.4, variance 0.04), B = {0.5, 0.7, 0.9, 0.3} (mean 0.6,
  // variance 0.2 / 3). SE = sqrt(0.04 / 3 + 0.2 / 12) = sqrt(0.03);
  // df (Welch-Satterthwaite) = 0.03^2 / ((0.04/3)^2 / 2 + (0.2/12)^2 / 3)
  // = 4.959183673469389. The p-value and t quantile were computed in Python
  // by Simpson integration of Student's t density (200,000 panels) and
  // bisection, not with rankwatch's functions.
  const Comparison& c = monitor.comparisons()[1];
  EXPECT_EQ(c.baseline_arm.count, 3);
  EXPECT_NEAR(c.baseline_arm.mean, 0.4, 1e-12);
  EXPECT_NEAR(c.baseline_arm.variance, 0.04, 1e-12);
  EXPECT_EQ(c.treatment_arm.count, 4);
  EXPECT_NEAR(c.treatment_arm.mean, 0.6, 1e-12);
  EXPECT_NEAR(c.treatment_arm.variance, 0.2 / 3, 1e-12);
  ASSERT_TRUE(c.welch.ok());
  EXPECT_NEAR(c.welch.difference, 0.2, 1e-12);
  EXPECT_NEAR(c.welch.relative_difference, 0.5, 1e-12);
  EXPECT_NEAR(c.welch.standard_error, std::sqrt(0.03), 1e-12);
  EXPECT_NEAR(c.welch.degrees_of_freedom, 4.959183673469389, 1e-9);
  EXPECT_NEAR(c.welch.p_value, 0.3008027072551736, 1e-7);
  EXPECT_NEAR(c.welch.interval.lower, -0.24634229626775656, 1e-7);
  EXPECT_NEAR(c.welch.interval.upper, 0.6463422962677563, 1e-7);
}

TEST_F(ExperimentMonitorTest, WholeRunHasTheSequentialTest) {
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.Update(100'000);
  // Window "all": A = {1.0, 0.2, 0.4, 0.6}, mean 0.55, variance 0.35 / 3;
  // B as above. d = 0.05, V = (0.35 / 3) / 4 + (0.2 / 3) / 4 = 0.0458333.
  // With tau = 0.05 and alpha = 0.05 the mSPRT half-width is
  // sqrt(V (V + tau^2) / tau^2 (ln((V + tau^2) / V) + 2 ln 20))
  // = 2.3143388933646993 (Python, math module), and Lambda < 1, so the
  // always-valid p-value is 1. Welch p = 0.8236578 (t = 0.23355,
  // df = 5.5846; Python as above).
  const Comparison& c = monitor.comparisons()[0];
  EXPECT_EQ(c.baseline_arm.count, 4);
  EXPECT_NEAR(c.baseline_arm.mean, 0.55, 1e-12);
  EXPECT_NEAR(c.baseline_arm.variance, 0.35 / 3, 1e-12);
  ASSERT_TRUE(c.welch.ok());
  EXPECT_NEAR(c.welch.p_value, 0.8236578021069962, 1e-7);
  EXPECT_EQ(c.sequential.looks(), 1);
  EXPECT_EQ(c.sequential.p_value(), 1.0);
  EXPECT_NEAR(c.sequential.interval().lower, 0.05 - 2.3143388933646993, 1e-9);
  EXPECT_NEAR(c.sequential.interval().upper, 0.05 + 2.3143388933646993, 1e-9);
}

TEST_F(ExperimentMonitorTest, MissingArmGivesNoInference) {
  experiments_.push_back({"ghost", "C", {"B"}});
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.Update(100'000);
  ASSERT_EQ(monitor.comparisons().size(), 8u);
  const Comparison& c = monitor.comparisons()[4];
  EXPECT_EQ(c.experiment->name, "ghost");
  EXPECT_EQ(c.baseline_arm.count, 0);
  EXPECT_EQ(c.treatment_arm.count, 4);
  EXPECT_EQ(c.welch.status, ComparisonStatus::kTooFewSamples);
  EXPECT_EQ(c.welch.p_value, 1.0);
  EXPECT_EQ(c.welch.interval.lower, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.sequential.looks(), 0);
}

// Benjamini-Hochberg over the family of one experiment: 2 treatments x 2
// quality series (ndcg_cut_10 and the uncut ndcg, which has no values here:
// p = 1). Welch p-values by scipy.stats.ttest_ind(X, A, equal_var=False):
// B 0.8236578021069855, C 0.12145290619612814; adjusted by
// statsmodels.stats.multitest.multipletests([pB, 1, pC, 1],
// method='fdr_bh') = [1.0, 1.0, 0.48581162478451256, 1.0].
TEST_F(ExperimentMonitorTest, BenjaminiHochbergOverTheFamily) {
  for (double v : {0.9, 1.0, 0.8, 0.95}) {
    AddValue(&agg_, "C", "de", 95'000, v);
  }
  experiments_[0].treatments = {"B", "C"};
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.Update(100'000);
  // Rows: treatment-major, series, window ("all" first).
  ASSERT_EQ(monitor.comparisons().size(), 8u);
  const Comparison& b = monitor.comparisons()[0];
  const Comparison& c = monitor.comparisons()[4];
  EXPECT_NEAR(b.welch.p_value, 0.8236578021069855, 1e-7);
  EXPECT_NEAR(c.welch.p_value, 0.12145290619612814, 1e-7);
  EXPECT_NEAR(b.p_value_bh, 1.0, 1e-12);
  EXPECT_NEAR(c.p_value_bh, 0.48581162478451256, 1e-6);
  EXPECT_NEAR(monitor.comparisons()[2].p_value_bh, 1.0, 1e-12);
}

// The request-level SRM counts are the variants' finalized lists: A 4,
// B 4 with an equal split: chi-square 0, p 1.
TEST_F(ExperimentMonitorTest, SampleRatioOfLists) {
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.Update(100'000);
  ASSERT_EQ(monitor.srm().size(), 1u);
  const SrmState& srm = monitor.srm()[0];
  EXPECT_EQ(srm.counts, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(srm.chi_square.statistic, 0.0);
  EXPECT_EQ(srm.chi_square.p_value, 1.0);
  EXPECT_FALSE(srm.detected);
}

// Verdicts from the always-valid interval. A: 50 x 0.2 and 50 x 0.4
// (variance 0.01 * 100 / 99), B: 50 x 0.8 and 50 x 0.6: d = 0.4,
// V = 2 * 0.010101 / 100 = 0.00020202020202020205, mSPRT half-width
// sqrt(V (V + tau^2) / tau^2 (ln((V + tau^2) / V) + 2 ln 20)) =
// 0.04329503491978861 (Python, math module), so [0.3567, 0.4433]: better.
TEST(ExperimentVerdictTest, BetterWorseAndCoverage) {
  Aggregator agg(TestAggregation(),
                 BuildSeries({Measure::kNdcg, Measure::kJudged}, {10}));
  for (int i = 0; i < 100; ++i) {
    const std::string_view segments[] = {"de"};
    const double a = i % 2 == 0 ? 0.2 : 0.4;
    const double b = i % 2 == 0 ? 0.8 : 0.6;
    agg.Add(agg.ResolveGroup("A", segments), 95'000, {{a, a, a}}, false);
    agg.Add(agg.ResolveGroup("B", segments), 95'000, {{b, b, b}}, false);
  }
  std::vector<config::ExperimentConfig> experiments = {{"better", "A", {"B"}},
                                                       {"worse", "B", {"A"}}};
  ExperimentMonitor monitor(&experiments, {}, &agg);
  EXPECT_EQ(monitor.comparisons()[0].state, VerdictState::kNoData);
  monitor.Update(100'000);
  // Series: ndcg_cut_10, ndcg, judged_10; windows all and 30s.
  ASSERT_EQ(monitor.comparisons().size(), 12u);
  const Comparison& better = monitor.comparisons()[0];
  EXPECT_TRUE(better.quality);
  EXPECT_NEAR(better.sequential.interval().lower, 0.4 - 0.04329503491978861,
              1e-9);
  EXPECT_EQ(better.verdict, 1);
  EXPECT_EQ(better.state, VerdictState::kBetter);
  const Comparison& worse = monitor.comparisons()[6];
  EXPECT_EQ(worse.experiment->name, "worse");
  EXPECT_EQ(worse.verdict, -1);
  EXPECT_EQ(worse.state, VerdictState::kWorse);
  // judged_10 measures coverage: no verdict, not in the BH family.
  const Comparison& judged = monitor.comparisons()[4];
  EXPECT_EQ(agg.series()[judged.series].trec_name, "judged_10");
  EXPECT_FALSE(judged.quality);
  EXPECT_EQ(judged.verdict, 0);
  EXPECT_EQ(judged.state, VerdictState::kNoData);
}

// With schema.unit: clustered summaries from per-bucket sums. B = 4
// buckets; UnitBucket takes the high 32 bits h of the hash to (h * 4) >>
// 32, so the hash (b << 62) | u is a unit u of bucket b.
//   A: unit a1 (bucket 0) 0.2, 0.4; a2 (bucket 1) 0.6; a3 (bucket 2) 1.0:
//      Y = [0.6, 0.6, 1.0, 0], N = [2, 1, 1, 0], m = 2.2 / 4 = 0.55,
//      Y - m N = [-0.5, 0.05, 0.45, 0], sum of squares 0.455,
//      Var(m) = 4/3 * 0.455 / 16, variance = 4 Var(m) = 0.15166666666666667.
//   B: unit b1 (bucket 0) 0.5, 0.7; b2 (bucket 3) 0.9, 0.5:
//      Y = [1.2, 0, 0, 1.4], N = [2, 0, 0, 2], m = 0.65, residuals -0.1,
//      0.1: Var(m) = 4/3 * 0.02 / 16, variance = 0.006666666666666666.
// Welch on these (df from 3 - 1 and 2 - 1 clusters), by scipy 1.10:
// V = 0.03958333333333333, df = 2.1712979670395764,
// p = 2 * t.sf(0.1 / sqrt(V), df) = 0.661612383933203, 95% interval
// [-0.6944673858461027, 0.8944673858461026]. SRM: units 3 and 2,
// scipy.stats.chisquare([3, 2]) = (0.2, 0.6547208460185768).
TEST(ExperimentUnitTest, ClusteredComparisonAndUnitCounts) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  const uint32_t a = agg.ResolveGroup("A", de);
  const uint32_t b = agg.ResolveGroup("B", de);
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 4;
  ExperimentMonitor monitor(&experiments, statistics, &agg, /*units=*/true);
  const auto unit = [](uint64_t bucket, uint64_t u) {
    return (bucket << 62) | u;
  };
  const auto add = [&](uint32_t group, uint64_t unit_hash, double v) {
    monitor.Add(group, unit_hash, std::vector<double>{v, v});
  };
  add(a, unit(0, 1), 0.2);
  add(a, unit(0, 1), 0.4);
  add(a, unit(1, 2), 0.6);
  add(a, unit(2, 3), 1.0);
  add(b, unit(0, 4), 0.5);
  add(b, unit(0, 4), 0.7);
  add(b, unit(3, 5), 0.9);
  add(b, unit(3, 5), 0.5);
  // Unscored lists count their unit for the sample ratio, nothing else.
  monitor.Add(b, unit(3, 5), {});
  monitor.Update(100'000);
  // With units, window "all" only: 2 series x 1 window.
  ASSERT_EQ(monitor.comparisons().size(), 2u);
  const Comparison& c = monitor.comparisons()[0];
  EXPECT_EQ(c.baseline_arm.count, 4);
  EXPECT_NEAR(c.baseline_arm.mean, 0.55, 1e-12);
  EXPECT_NEAR(c.baseline_arm.variance, 0.15166666666666667, 1e-12);
  EXPECT_EQ(c.baseline_arm.clusters, 3);
  EXPECT_EQ(c.treatment_arm.count, 4);
  EXPECT_NEAR(c.treatment_arm.variance, 0.006666666666666666, 1e-12);
  EXPECT_EQ(c.treatment_arm.clusters, 2);
  ASSERT_TRUE(c.welch.ok());
  EXPECT_NEAR(c.welch.degrees_of_freedom, 2.1712979670395764, 1e-9);
  EXPECT_NEAR(c.welch.p_value, 0.661612383933203, 1e-9);
  EXPECT_NEAR(c.welch.interval.lower, -0.6944673858461027, 1e-9);
  EXPECT_NEAR(c.welch.interval.upper, 0.8944673858461026, 1e-9);
  const SrmState& srm = monitor.srm()[0];
  EXPECT_EQ(srm.counts, (std::vector<int64_t>{3, 2}));
  EXPECT_NEAR(srm.chi_square.statistic, 0.2, 1e-12);
  EXPECT_NEAR(srm.chi_square.p_value, 0.6547208460185768, 1e-12);
  EXPECT_EQ(srm.unit_conflicts, 0);
  // Series 1 (uncut ndcg) got the same values: the same summary.
  EXPECT_EQ(monitor.comparisons()[1].baseline_arm.count, 4);
  // The unit of a1 showing up in B: a conflict, not a new unit.
  add(b, unit(0, 1), 0.3);
  monitor.Update(100'000);
  EXPECT_EQ(srm.counts, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(srm.unit_conflicts, 1);
}

// A list without a value for a series (NaN: first_click_rank without a
// click) is left out of that series' clustered summary only. A: one unit
// (bucket 0) with values {0.5, NaN} and {0.7, 0.2}; series 0 has 2 values
// (mean 0.6), series 1 one value (0.2).
TEST(ExperimentUnitTest, MissingValuesLeaveOnlyTheirSeries) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  const uint32_t a = agg.ResolveGroup("A", de);
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 4;
  ExperimentMonitor monitor(&experiments, statistics, &agg, true);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  monitor.Add(a, 1, std::vector<double>{0.5, nan});
  monitor.Add(a, 1, std::vector<double>{0.7, 0.2});
  monitor.Update(100'000);
  EXPECT_EQ(monitor.comparisons()[0].baseline_arm.count, 2);
  EXPECT_NEAR(monitor.comparisons()[0].baseline_arm.mean, 0.6, 1e-12);
  EXPECT_EQ(monitor.comparisons()[1].baseline_arm.count, 1);
  EXPECT_NEAR(monitor.comparisons()[1].baseline_arm.mean, 0.2, 1e-12);
  // The lists themselves (the rules' bucket counter) are both.
  EXPECT_EQ(monitor.arm_buckets()[0].counts[0], 2);
}

// 3000 units in A, 2000 in B against 50/50: log BF (Dirichlet-multinomial,
// alpha = 5000 each) = 33.15755507891299 by scipy.special.gammaln, p =
// exp(-33.16) = 3.98e-15 < 0.001: the mismatch blocks every verdict.
// Beyond max_tracked_units new units are not counted.
TEST(ExperimentUnitTest, SampleRatioMismatchBlocksVerdicts) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  const uint32_t a = agg.ResolveGroup("A", de);
  const uint32_t b = agg.ResolveGroup("B", de);
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.max_tracked_units = 5000;
  ExperimentMonitor monitor(&experiments, statistics, &agg, true);
  for (uint64_t u = 0; u < 3000; ++u) {
    monitor.Add(a, u * 0x9E3779B97F4A7C15ULL, std::vector<double>{0.2, 0.2});
  }
  for (uint64_t u = 3000; u < 5000; ++u) {
    monitor.Add(b, u * 0x9E3779B97F4A7C15ULL, std::vector<double>{0.9, 0.9});
  }
  monitor.Update(100'000);
  const SrmState& srm = monitor.srm()[0];
  EXPECT_EQ(srm.counts, (std::vector<int64_t>{3000, 2000}));
  EXPECT_NEAR(srm.sequential.p_value(), 3.979759204155905e-15, 1e-20);
  EXPECT_TRUE(srm.detected);
  EXPECT_FALSE(srm.capped);
  const Comparison& c = monitor.comparisons()[0];
  EXPECT_EQ(c.verdict, 0);
  EXPECT_EQ(c.state, VerdictState::kSampleRatioMismatch);
  monitor.Add(b, 5001 * 0x9E3779B97F4A7C15ULL, std::vector<double>{0.9, 0.9});
  monitor.Update(100'000);
  EXPECT_TRUE(srm.capped);
  EXPECT_EQ(srm.counts, (std::vector<int64_t>{3000, 2000}));
}

// The sample-ratio counts with units move with their shards (issue 22). By
// hand: shard 0 sees units 1 and 2 in A and 3 in B; shard 1 sees unit 4 in
// A and unit 1 again in B (a conflict: counted in A, where shard 0 saw it
// first). The process: A 3 (1, 2, 4), B 1 (3). Restored elsewhere shard by
// shard: shard 0 alone gives A 2, B 1; with shard 1, A 3, B 1; shard 0
// dropped, A 1 (unit 4), B 0 (unit 1 was shard 0's). A record of an
// experiment no longer configured restores no unit.
TEST(ExperimentUnitTest, SampleRatioUnitsMoveWithTheirShards) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 4;
  ExperimentMonitor first(&experiments, statistics, &agg, /*units=*/true);
  const uint32_t a = agg.ResolveGroup("A", de);
  const uint32_t b = agg.ResolveGroup("B", de);
  const std::vector<double> v = {0.5, 0.5};
  first.Add(a, 1, v, 0);
  first.Add(a, 2, v, 0);
  first.Add(b, 3, v, 0);
  first.Add(a, 4, v, 1);
  first.Add(b, 1, v, 1);
  first.Update(100'000);
  EXPECT_EQ(first.srm()[0].counts, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(first.srm()[0].unit_conflicts, 1);
  std::string shard0, shard1;
  ByteWriter w0(&shard0), w1(&shard1);
  first.EncodeShard(0, &w0);
  first.EncodeShard(1, &w1);

  Aggregator agg2(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  ExperimentMonitor second(&experiments, statistics, &agg2, true);
  ByteReader r0(shard0);
  ASSERT_TRUE(second.DecodeShard(0, &r0).ok());
  second.Update(100'000);
  EXPECT_EQ(second.srm()[0].counts, (std::vector<int64_t>{2, 1}));
  ByteReader r1(shard1);
  ASSERT_TRUE(second.DecodeShard(1, &r1).ok());
  second.Update(100'000);
  EXPECT_EQ(second.srm()[0].counts, (std::vector<int64_t>{3, 1}));
  second.DropShard(0);
  second.Update(100'000);
  EXPECT_EQ(second.srm()[0].counts, (std::vector<int64_t>{1, 0}));
  // New lists after the restore: unit 4 is known, unit 5 new.
  second.Add(agg2.ResolveGroup("A", de), 4, v, 1);
  second.Add(agg2.ResolveGroup("B", de), 5, v, 1);
  second.Update(100'000);
  EXPECT_EQ(second.srm()[0].counts, (std::vector<int64_t>{1, 1}));

  std::vector<config::ExperimentConfig> renamed = {{"y", "A", {"B"}}};
  Aggregator agg3(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  ExperimentMonitor third(&renamed, statistics, &agg3, true);
  ByteReader r0again(shard0);
  ASSERT_TRUE(third.DecodeShard(0, &r0again).ok());
  third.Update(100'000);
  EXPECT_EQ(third.srm()[0].counts, (std::vector<int64_t>{0, 0}));
}

// Every truncation of a record with units is an error, never a partial
// restore.
TEST(ExperimentUnitTest, TruncatedUnitsAreErrors) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 2;
  ExperimentMonitor monitor(&experiments, statistics, &agg, true);
  for (uint64_t u = 1; u <= 5; ++u) {
    monitor.Add(agg.ResolveGroup(u % 2 ? "A" : "B", de), u,
                std::vector<double>{0.1, 0.1}, 0);
  }
  std::string record;
  ByteWriter w(&record);
  monitor.EncodeShard(0, &w);
  for (size_t n = 0; n < record.size(); ++n) {
    Aggregator agg2(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
    ExperimentMonitor restored(&experiments, statistics, &agg2, true);
    ByteReader r(std::string_view(record).substr(0, n));
    EXPECT_FALSE(restored.DecodeShard(0, &r).ok()) << n << " bytes";
    restored.Update(100'000);
    EXPECT_EQ(restored.srm()[0].counts, (std::vector<int64_t>{0, 0})) << n;
  }
}

// One experiment, x: A against B, over one nDCG@10 series; shards' lists
// are added at given event times (locale de).
class ExperimentFirstListTest : public ::testing::Test {
 protected:
  Aggregator agg_{TestAggregation(), BuildSeries({Measure::kNdcg}, {10})};
  const std::string_view de_[1] = {"de"};
  std::vector<config::ExperimentConfig> experiments_ = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics_;
  const double nan_ = std::numeric_limits<double>::quiet_NaN();
};

// The start of min_duration (FirstListMs) is each shard's earliest list,
// checkpointed with the shard; the monitor's is the minimum over the
// shards it holds, whatever order they are restored in. Lists: shard 0 A
// at 5 s and B at 3 s; shard 1 A at 2 s and 9 s; shard 2 C, a variant of no
// experiment. Experiment x (A vs B) starts at 2 s with both shards, 3 s
// with shard 0 alone, 2 s with shard 1 alone (A's 2 s; B none).
TEST_F(ExperimentFirstListTest, ShardsCarryTheirFirstListsAndMergeByMinimum) {
  ExperimentMonitor live(&experiments_, statistics_, &agg_);
  const uint32_t a = agg_.ResolveGroup("A", de_);
  const uint32_t b = agg_.ResolveGroup("B", de_);
  const uint32_t c = agg_.ResolveGroup("C", de_);
  const std::vector<double> v = {0.5, 0.5};
  EXPECT_EQ(live.FirstListMs(0), ExperimentMonitor::kNoEventTime);
  live.Add(a, 1, v, 0, nan_, 5'000);
  live.Add(b, 2, v, 0, nan_, 3'000);
  live.Add(a, 3, v, 1, nan_, 9'000);
  live.Add(a, 4, v, 1, nan_, 2'000);
  live.Add(c, 5, v, 2, nan_, 1'000);
  EXPECT_EQ(live.FirstListMs(0), 2'000);
  std::string records[3];
  for (int32_t shard = 0; shard < 3; ++shard) {
    ByteWriter w(&records[shard]);
    live.EncodeShard(shard, &w);
  }
  const auto restore = [&](std::vector<int32_t> shards) {
    auto agg2 = std::make_unique<Aggregator>(
        TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
    auto m = std::make_unique<ExperimentMonitor>(&experiments_, statistics_,
                                                 agg2.get());
    for (int32_t shard : shards) {
      ByteReader r(records[shard]);
      EXPECT_TRUE(m->DecodeShard(shard, &r).ok()) << shard;
    }
    return std::make_pair(std::move(agg2), std::move(m));
  };
  EXPECT_EQ(restore({0, 1, 2}).second->FirstListMs(0), 2'000);
  EXPECT_EQ(restore({2, 1, 0}).second->FirstListMs(0), 2'000);
  EXPECT_EQ(restore({0}).second->FirstListMs(0), 3'000);
  EXPECT_EQ(restore({1}).second->FirstListMs(0), 2'000);
  // Shard 2's list is of no experiment's variant: nothing to keep.
  EXPECT_EQ(restore({2}).second->FirstListMs(0),
            ExperimentMonitor::kNoEventTime);

  // A rebalance takes shard 1 away: the start is shard 0's again; an
  // earlier list read later (Kafka's order across partitions) moves it.
  auto [agg3, moved] = restore({0, 1});
  moved->DropShard(1);
  EXPECT_EQ(moved->FirstListMs(0), 3'000);
  moved->Add(agg3->ResolveGroup("B", de_), 6, v, 0, nan_, 2'500);
  EXPECT_EQ(moved->FirstListMs(0), 2'500);
  std::string again;
  ByteWriter w(&again);
  moved->EncodeShard(0, &w);
  ByteReader r(again);
  auto [agg4, fourth] = restore({});
  ASSERT_TRUE(fourth->DecodeShard(0, &r).ok());
  EXPECT_EQ(fourth->FirstListMs(0), 2'500);
}

// A reload keeps each shard's first lists for the variants still
// configured, by name: before it x (A vs B) has A's list at 4 s in shard 0
// and B's at 6 s in shard 1; after it y (A vs C) is added. x starts at
// 4 s, y at A's 4 s; once shard 0 moves away, x starts at B's 6 s and y
// has no list (C has none, A's was shard 0's).
TEST_F(ExperimentFirstListTest, AReloadKeepsEachShardsFirstLists) {
  std::vector<config::ExperimentConfig> before = {{"x", "A", {"B"}}};
  std::vector<config::ExperimentConfig> after = {{"x", "A", {"B"}},
                                                 {"y", "A", {"C"}}};
  const std::vector<double> v = {0.5, 0.5};
  ExperimentMonitor old(&before, statistics_, &agg_);
  old.Add(agg_.ResolveGroup("A", de_), 1, v, 0, nan_, 4'000);
  old.Add(agg_.ResolveGroup("B", de_), 2, v, 1, nan_, 6'000);
  ExperimentMonitor reloaded(&after, statistics_, &agg_);
  reloaded.AdoptState(old, agg_.series(), /*same_statistics=*/true);
  EXPECT_EQ(reloaded.FirstListMs(0), 4'000);
  EXPECT_EQ(reloaded.FirstListMs(1), 4'000);
  reloaded.DropShard(0);
  EXPECT_EQ(reloaded.FirstListMs(0), 6'000);
  EXPECT_EQ(reloaded.FirstListMs(1), ExperimentMonitor::kNoEventTime);
}

// A record without first lists (a version before them wrote it, or a
// shard whose lists were of no experiment) restores with none: the start
// is then the shard's next list, as a restart always did. Its bytes end
// with the units section's header, no experiment entry beyond x's.
TEST_F(ExperimentFirstListTest, RecordWithoutFirstListsStartsAtTheNextList) {
  ExperimentMonitor empty(&experiments_, statistics_, &agg_);
  std::string record;
  ByteWriter w(&record);
  empty.EncodeShard(0, &w);
  EXPECT_EQ(record.find("first lists"), std::string::npos);
  ExperimentMonitor restored(&experiments_, statistics_, &agg_);
  ByteReader r(record);
  ASSERT_TRUE(restored.DecodeShard(0, &r).ok());
  EXPECT_EQ(restored.FirstListMs(0), ExperimentMonitor::kNoEventTime);
  restored.Add(agg_.ResolveGroup("A", de_), 1, std::vector<double>{0.5, 0.5}, 0,
               std::numeric_limits<double>::quiet_NaN(), 7'000);
  EXPECT_EQ(restored.FirstListMs(0), 7'000);
}

// The units section as a version before first lists reads it (main's
// DecodeUnits up to this change): "UNT1", a count of experiments, each a
// name and a count of variant names, then a count of units. Read by hand
// here, independently of the decoder: the first lists are one more
// experiment, named "\xff" "first lists", whose "variants" are
// <8-byte little-endian time><variant name>, and the section ends where
// the record does (no bytes after it, which an older version refuses).
TEST_F(ExperimentFirstListTest,
       OlderVersionsReadTheEntryAsAnUnknownExperiment) {
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  // 1,700,000,000,123 ms = 0x18BCFE5687B (little-endian 7B 68 E5 CF 8B 01 00
  // 00).
  monitor.Add(agg_.ResolveGroup("B", de_), 1, std::vector<double>{0.5, 0.5}, 0,
              nan_, 1'700'000'000'123);
  std::string record;
  ByteWriter w(&record);
  monitor.EncodeShard(0, &w);
  const size_t units = record.find("1TNU");  // "UNT1", little-endian.
  ASSERT_NE(units, std::string::npos);
  ByteReader r(std::string_view(record).substr(units + 4));
  ASSERT_EQ(r.Varint(), 2u);  // x, then the first lists.
  EXPECT_EQ(r.String(), "x");
  ASSERT_EQ(r.Varint(), 2u);
  EXPECT_EQ(r.String(), "A");
  EXPECT_EQ(r.String(), "B");
  EXPECT_EQ(r.String(),
            "\xff"
            "first lists");
  ASSERT_EQ(r.Varint(), 1u);  // B's alone: A has no list.
  EXPECT_EQ(r.String(), std::string("\x7b\x68\xe5\xcf\x8b\x01\x00\x00"
                                    "B",
                                    9));
  EXPECT_EQ(r.Varint(), 0u);  // No units (no schema.unit).
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());  // Without a covariate, the record's end.
}

// Corrupt first lists: a truncated entry, a time outside the live bounds
// (events.min_timestamp, the wall clock plus max_future_skew): a one-line
// error naming it, and the shard keeps nothing. Every truncation of the
// record is an error; a flipped byte is an error or a restore, never a
// crash.
TEST_F(ExperimentFirstListTest, CorruptFirstListsAreRefused) {
  const auto record_with = [&](std::string_view entry) {
    // x's entry, then the first lists' with one entry, no units.
    std::string r;
    ByteWriter w(&r);
    w.Fixed32(0x41524d32);  // "ARM2"
    w.Varint(static_cast<uint64_t>(statistics_.unit_buckets));
    w.Varint(0);            // No series.
    w.Varint(0);            // No arms.
    w.Fixed32(0x554e5431);  // "UNT1"
    w.Varint(2);
    w.String("x");
    w.Varint(2);
    w.String("A");
    w.String("B");
    w.String(
        "\xff"
        "first lists");
    w.Varint(1);
    w.String(entry);
    w.Varint(0);
    return r;
  };
  const auto decode = [&](std::string_view record,
                          const CheckpointLimits& limits) {
    ExperimentMonitor m(&experiments_, statistics_, &agg_);
    ByteReader r(record);
    const Status s = m.DecodeShard(0, &r, limits);
    EXPECT_EQ(m.FirstListMs(0),
              s.ok() ? 1'000 : ExperimentMonitor::kNoEventTime)
        << s.ToString();
    return s;
  };
  std::string good;
  ByteWriter(&good).I64(1'000);
  good += "A";
  EXPECT_TRUE(decode(record_with(good), {}).ok());
  EXPECT_EQ(decode(record_with(good.substr(0, 5)), {}).message(),
            "experiment sums of shard 0: at byte 39: a first list of 5 bytes "
            "(its time takes 8)");
  CheckpointLimits limits;
  limits.min_time_ms = 2'000;
  EXPECT_EQ(decode(record_with(good), limits).message(),
            "experiment sums of shard 0: at byte 43: an experiment's first "
            "list 1970-01-01T00:00:01Z is before events.min_timestamp "
            "1970-01-01T00:00:02Z");
  limits = {};
  limits.max_time_ms = 500;
  EXPECT_NE(
      decode(record_with(good), limits)
          .message()
          .find("an experiment's first list 1970-01-01T00:00:01Z is after "
                "the wall clock plus events.max_future_skew"),
      std::string::npos);

  ExperimentMonitor monitor(&experiments_, statistics_, &agg_);
  monitor.Add(agg_.ResolveGroup("A", de_), 1, std::vector<double>{0.5, 0.5}, 0,
              nan_, 1'000);
  std::string record;
  ByteWriter w(&record);
  monitor.EncodeShard(0, &w);
  for (size_t n = 0; n < record.size(); ++n) {
    ExperimentMonitor restored(&experiments_, statistics_, &agg_);
    ByteReader r(std::string_view(record).substr(0, n));
    EXPECT_FALSE(restored.DecodeShard(0, &r).ok()) << n << " bytes";
    EXPECT_EQ(restored.FirstListMs(0), ExperimentMonitor::kNoEventTime) << n;
  }
  for (size_t i = 0; i < record.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = record;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      ExperimentMonitor restored(&experiments_, statistics_, &agg_);
      ByteReader r(flipped);
      if (!restored.DecodeShard(0, &r).ok()) {
        EXPECT_EQ(restored.FirstListMs(0), ExperimentMonitor::kNoEventTime);
      }
    }
  }
}

// Property: units whose lists stay in one shard (a unit keyed to its
// partition), read by a fleet of three monitors among which shards move at
// random (checkpointed, dropped, restored elsewhere): the SRM counts summed
// over the fleet equal one monitor's that read everything. A failure prints
// the seed.
TEST(ExperimentUnitTest, SampleRatioUnitsSumOverAFleetAsShardsMove) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  constexpr int kShards = 4;
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B", "C"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 8;
  auto make = [&](std::unique_ptr<Aggregator>* agg) {
    *agg = std::make_unique<Aggregator>(TestAggregation(),
                                        BuildSeries({Measure::kNdcg}, {10}));
    return std::make_unique<ExperimentMonitor>(&experiments, statistics,
                                               agg->get(), true);
  };
  std::unique_ptr<Aggregator> reference_agg;
  std::unique_ptr<ExperimentMonitor> reference = make(&reference_agg);
  std::vector<std::unique_ptr<Aggregator>> aggs(3);
  std::vector<std::unique_ptr<ExperimentMonitor>> fleet;
  for (auto& agg : aggs) fleet.push_back(make(&agg));
  std::vector<int> owner(kShards);
  for (int s = 0; s < kShards; ++s) owner[s] = static_cast<int>(rng.Below(3));
  const char* variants[] = {"A", "B", "C"};
  const std::string_view de[] = {"de"};
  std::set<uint64_t> drawn;  // Each counted once, in its first variant.
  for (int i = 0; i < 3000; ++i) {
    const uint64_t unit = 1 + rng.Below(400);
    drawn.insert(unit);
    const int shard = static_cast<int>(unit % kShards);
    // Mostly the unit's own variant; sometimes another (a conflict).
    const char* variant =
        variants[rng.Below(20) == 0 ? rng.Below(3) : unit % 3];
    const std::vector<double> v = {rng.Uniform(), rng.Uniform()};
    reference->Add(reference_agg->ResolveGroup(variant, de), unit, v, shard);
    const int o = owner[shard];
    fleet[o]->Add(aggs[o]->ResolveGroup(variant, de), unit, v, shard);
    if (rng.Below(100) == 0) {
      const int moved = static_cast<int>(rng.Below(kShards));
      const int to = static_cast<int>(rng.Below(3));
      std::string record;
      ByteWriter w(&record);
      fleet[owner[moved]]->EncodeShard(moved, &w);
      fleet[owner[moved]]->DropShard(moved);
      ByteReader r(record);
      ASSERT_TRUE(fleet[to]->DecodeShard(moved, &r).ok());
      owner[moved] = to;
    }
  }
  reference->Update(100'000);
  std::vector<int64_t> sum(3, 0);
  for (auto& m : fleet) {
    m->Update(100'000);
    for (size_t i = 0; i < 3; ++i) sum[i] += m->srm()[0].counts[i];
  }
  EXPECT_EQ(sum, reference->srm()[0].counts);
  int64_t total = 0;
  for (int64_t c : sum) total += c;
  EXPECT_EQ(total, static_cast<int64_t>(drawn.size()));
}

// A verdict flapping at the edge of its interval: 40 changes, alternately
// inconclusive -> worse and back; only the latest 32 (looks 9 to 40) stay,
// oldest first.
TEST(RecordVerdictChangeTest, KeepsTheLatestThirtyTwo) {
  std::vector<VerdictChange> changes;
  for (int64_t look = 1; look <= 40; ++look) {
    const bool to_worse = look % 2 == 1;
    RecordVerdictChange(
        &changes,
        {look * 1000, look,
         to_worse ? VerdictState::kInconclusive : VerdictState::kWorse,
         to_worse ? VerdictState::kWorse : VerdictState::kInconclusive});
  }
  ASSERT_EQ(changes.size(), 32u);
  EXPECT_EQ(changes.front().look, 9);
  EXPECT_EQ(changes.front().event_ms, 9000);
  EXPECT_EQ(changes.front().to, VerdictState::kWorse);  // Look 9 is odd.
  EXPECT_EQ(changes.back().look, 40);
  EXPECT_EQ(changes.back().to, VerdictState::kInconclusive);
  for (size_t i = 1; i < changes.size(); ++i) {
    EXPECT_EQ(changes[i].look, changes[i - 1].look + 1);
  }
}

// ---------------------------------------------------------------------------
// Regression adjustment (schema.covariate).
//
// The expected figures are an independent computation, run once offline
// with NumPy 2.4.6, SciPy 1.17.1, pandas and statsmodels 0.15.0
// (/tmp/refenv/bin/python) and pasted here; nothing runs Python at test
// time. The fixed data set is metrics/regression_adjustment_test.cc's:
// 14 baseline and 18 treatment pairs (y, x), drawn once with
// numpy.random.default_rng(27), two decimals.

const std::vector<double> kXb = {0.59, 0.52, 0.54, 0.24, 0.53, 0.37, 0.37,
                                 0.57, 0.33, 0.21, 0.33, 0.22, 0.12, 0.38};
const std::vector<double> kYb = {0.60, 0.34, 0.53, 0.31, 0.54, 0.29, 0.37,
                                 0.54, 0.40, 0.17, 0.39, 0.36, 0.01, 0.42};
const std::vector<double> kXt = {0.22, 0.42, 0.35, 0.64, 0.46, 0.57,
                                 0.29, 0.52, 0.66, 0.34, 0.55, 0.52,
                                 0.44, 0.26, 0.49, 0.41, 0.54, 0.57};
const std::vector<double> kYt = {0.43, 0.40, 0.48, 0.70, 0.50, 0.63,
                                 0.37, 0.60, 0.69, 0.36, 0.58, 0.60,
                                 0.41, 0.31, 0.63, 0.48, 0.51, 0.54};

bool Near(double a, double b, double relative) {
  return std::abs(a - b) <= relative * std::max(std::abs(a), std::abs(b));
}

// The fixed data set fed `copies` times through an aggregator (the
// unadjusted rows) and a monitor with a covariate, spread over two locales
// and three shards so that the state must add up; plus lists the
// adjustment must leave out: three baseline lists without a covariate and
// one treatment list whose series 1 value is NaN (a measure it lacks).
class AdjustedMonitorTest : public ::testing::Test {
 protected:
  AdjustedMonitorTest()
      : agg_(TestAggregation(), BuildSeries({Measure::kNdcg}, {10})) {
    experiments_.push_back({"x", "A", {"B"}});
  }

  void Add(std::string_view variant, size_t i, double y, double x, double y1) {
    const std::string_view locale[] = {i % 2 == 0 ? "de" : "en"};
    const uint32_t group = agg_.ResolveGroup(variant, locale);
    const int32_t shard = static_cast<int32_t>(i % 3);
    const std::vector<double> values = {y, y1};
    agg_.Add(group, 95'000, values, false, shard);
    monitor_->Add(group, 0, values, shard, x);
  }

  void Feed(int copies) {
    monitor_ = std::make_unique<ExperimentMonitor>(&experiments_, statistics_,
                                                   &agg_, false, "pre.ndcg");
    size_t i = 0;
    for (int k = 0; k < copies; ++k) {
      for (size_t j = 0; j < kYb.size(); ++j) {
        Add("A", i++, kYb[j], kXb[j], kYb[j]);
      }
      for (size_t j = 0; j < kYt.size(); ++j) {
        Add("B", i++, kYt[j], kXt[j], kYt[j]);
      }
    }
    for (double y : {0.95, 0.05, 0.5}) Add("A", i++, y, kNaN, y);
    Add("B", i++, 0.45, 0.3, kNaN);  // Series 0 has it, series 1 not.
    monitor_->Update(100'000);
  }

  // Window "all" of series `s`.
  const Comparison& Row(size_t s) {
    for (const Comparison& c : monitor_->comparisons()) {
      if (c.series == s && c.window == -1) return c;
    }
    ADD_FAILURE() << "no row";
    return monitor_->comparisons()[0];
  }

  Aggregator agg_;
  std::vector<config::ExperimentConfig> experiments_;
  config::StatisticsConfig statistics_;
  std::unique_ptr<ExperimentMonitor> monitor_;
};

TEST_F(AdjustedMonitorTest, MatchesOlsOnFixedData) {
  Feed(1);
  // Series 1: exactly the 14 + 18 pairs (the treatment list with a NaN
  // value and the baseline lists without a covariate are no pairs).
  const Comparison& c = Row(1);
  ASSERT_TRUE(c.has_adjusted);
  const AdjustedComparison& a = c.adjusted;
  EXPECT_EQ(a.status, metrics::AdjustmentStatus::kAdjusted);
  EXPECT_EQ(a.baseline_arm.count, 14);
  EXPECT_EQ(a.treatment_arm.count, 18);
  // df = DataFrame(y = yb + yt, x = xb + xt, T = [0] * 14 + [1] * 18);
  // fit = smf.ols('y ~ T + x', df).fit(): params['x'], params['T'].
  EXPECT_TRUE(Near(a.theta, 0.8453349666054191, 1e-12));
  ASSERT_TRUE(a.welch.ok());
  EXPECT_TRUE(Near(a.welch.difference, 0.0695757450762263, 1e-12));
  // The documented plug-in variance in NumPy: per arm
  // e = (y - y.mean()) - theta (x - x.mean()), v = (e**2).sum() / (n - 1) /
  // n; se = sqrt(v_b + v_t), Welch-Satterthwaite nu, p = 2 t.sf(d / se,
  // nu), d -+ t.ppf(0.975, nu) se.
  EXPECT_TRUE(Near(a.welch.standard_error, 0.025674254040110932, 1e-12));
  EXPECT_TRUE(Near(a.welch.degrees_of_freedom, 22.778091814849002, 1e-10));
  EXPECT_TRUE(Near(a.welch.p_value, 0.012556947135439096, 1e-9));
  EXPECT_TRUE(Near(a.welch.interval.lower, 0.016435858642223924, 1e-9));
  EXPECT_TRUE(Near(a.welch.interval.upper, 0.12271563151022867, 1e-9));
  EXPECT_TRUE(Near(a.welch.relative_difference, 0.16818892311576933, 1e-12));
  // smf.ols('y ~ T + x', df).fit(cov_type='HC2').bse['T'] =
  // 0.026579943425560852: the plug-in leaves out theta's own O(1/n)
  // variance (docs/statistics.md), 3.5% here.
  EXPECT_TRUE(Near(a.welch.standard_error, 0.026579943425560852, 0.05));
  // Below the warm-up (14 < 20 pairs): no sequential look yet.
  EXPECT_EQ(a.sequential.looks(), 0);
  EXPECT_EQ(a.look.status, ComparisonStatus::kTooFewSamples);
  EXPECT_EQ(a.sequential.p_value(), 1.0);
  // The unadjusted row of series 1 has every list with a value: A 17
  // (with 0.95, 0.05, 0.5), B 18. Its Welch variance in NumPy:
  // yb3 = yb + [0.95, 0.05, 0.5]; var(yb3, ddof=1) / 17 +
  // var(yt, ddof=1) / 18 = 0.0035618106283907894, so the ratio is
  // 0.025674254040110932**2 / that = 0.18506523487296164.
  EXPECT_EQ(c.baseline_arm.count, 17);
  EXPECT_TRUE(Near(a.variance_ratio, 0.18506523487296164, 1e-9));
  // Series 0 has one more treatment pair (0.45, 0.3): another fit.
  EXPECT_EQ(Row(0).adjusted.treatment_arm.count, 19);
  // Window rows are not adjusted.
  for (const Comparison& w : monitor_->comparisons()) {
    EXPECT_EQ(w.has_adjusted, w.window == -1);
  }
}

TEST_F(AdjustedMonitorTest, SequentialTestOfTheAdjustedArms) {
  // Every pair twice: 28 + 36 pairs, past the warm-up. In NumPy/SciPy as
  // above on the doubled lists: theta 0.8453349666054192, d =
  // 0.06957574507622637, se = 0.01783758437227596 (V = se**2); with
  // tau = 0.05 and alpha = 0.05 the mSPRT half-width sqrt(V (V + tau^2) /
  // tau^2 (log((V + tau^2) / V) + 2 log(1 / alpha))) gives [d - hw, d + hw]
  // = [0.015433904735186618, 0.12371758541726612], and min(1, 1 / Lambda)
  // with Lambda = sqrt(V / (V + tau^2)) exp(tau^2 d^2 / (2 V (V + tau^2)))
  // = 0.0034910973667446345.
  Feed(2);
  const AdjustedComparison& a = Row(1).adjusted;
  ASSERT_EQ(a.sequential.looks(), 1);
  EXPECT_TRUE(Near(a.welch.difference, 0.06957574507622637, 1e-12));
  EXPECT_TRUE(Near(a.welch.standard_error, 0.01783758437227596, 1e-12));
  EXPECT_TRUE(Near(a.welch.p_value, 0.00030172184199407664, 1e-8));
  EXPECT_TRUE(Near(a.sequential.interval().lower, 0.015433904735186618, 1e-10));
  EXPECT_TRUE(Near(a.sequential.interval().upper, 0.12371758541726612, 1e-10));
  EXPECT_TRUE(Near(a.sequential.p_value(), 0.0034910973667446345, 1e-9));
  // The unadjusted sequential test is the row's own, untouched.
  EXPECT_NE(Row(1).sequential.interval().lower, a.sequential.interval().lower);
}

TEST_F(AdjustedMonitorTest, ShardsRestoredGiveTheSameFigures) {
  Feed(2);
  // Each shard's record into a monitor of its own: the same summed state.
  ExperimentMonitor restored(&experiments_, statistics_, &agg_, false,
                             "pre.ndcg");
  for (int32_t shard : {2, 0, 1}) {  // Any order.
    std::string record;
    ByteWriter w(&record);
    monitor_->EncodeShard(shard, &w);
    ByteReader r(record);
    ASSERT_TRUE(restored.DecodeShard(shard, &r).ok());
    EXPECT_TRUE(r.at_end());
  }
  restored.Update(100'000);
  for (size_t s = 0; s < 2; ++s) {
    const AdjustedComparison& want = Row(s).adjusted;
    const AdjustedComparison* got = nullptr;
    for (const Comparison& c : restored.comparisons()) {
      if (c.series == s && c.window == -1) got = &c.adjusted;
    }
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->baseline_arm.count, want.baseline_arm.count);
    EXPECT_EQ(got->treatment_arm.count, want.treatment_arm.count);
    EXPECT_TRUE(Near(got->theta, want.theta, 1e-12));
    EXPECT_TRUE(Near(got->welch.difference, want.welch.difference, 1e-12));
    EXPECT_TRUE(
        Near(got->welch.standard_error, want.welch.standard_error, 1e-12));
    EXPECT_TRUE(Near(got->sequential.interval().lower,
                     want.sequential.interval().lower, 1e-12));
  }
  // Another covariate: the moments mean something else and are dropped.
  ExperimentMonitor other(&experiments_, statistics_, &agg_, false, "pre.x");
  std::string record;
  ByteWriter w(&record);
  monitor_->EncodeShard(0, &w);
  ByteReader r(record);
  ASSERT_TRUE(other.DecodeShard(0, &r).ok());
  EXPECT_EQ(other.covariate_arms()[0].moments[0].count, 0);
  // Dropping a shard removes its pairs.
  monitor_->DropShard(0);
  monitor_->Update(100'000);
  EXPECT_LT(Row(1).adjusted.baseline_arm.count, 28);
}

// The flow copy (the exported counters' source) holds what this monitor
// added, not what it restored, and keeps it when a shard leaves. Series 1
// of Feed(1): 14 baseline and 18 treatment pairs (MatchesOlsOnFixedData);
// its baseline y values sum to sum(kYb), the x values to sum(kXb).
TEST_F(AdjustedMonitorTest, FlowHoldsWhatThisProcessAdded) {
  Feed(1);
  double sum_y = 0;
  double sum_x = 0;
  for (size_t j = 0; j < kYb.size(); ++j) {
    sum_y += kYb[j];
    sum_x += kXb[j];
  }
  ASSERT_EQ(monitor_->flow_covariate_arms().size(), 2u);
  const ExperimentMonitor::CovariateArm& flow =
      monitor_->flow_covariate_arms()[0];
  EXPECT_EQ(flow.variant, "A");
  EXPECT_EQ(flow.moments[1].count, 14);
  EXPECT_TRUE(Near(flow.moments[1].mean_y * 14, sum_y, 1e-12));
  EXPECT_TRUE(Near(flow.moments[1].mean_x * 14, sum_x, 1e-12));
  EXPECT_EQ(monitor_->flow_covariate_arms()[1].moments[1].count, 18);
  // Restored shards are state, not flow.
  ExperimentMonitor restored(&experiments_, statistics_, &agg_, false,
                             "pre.ndcg");
  for (int32_t shard : {0, 1, 2}) {
    std::string record;
    ByteWriter w(&record);
    monitor_->EncodeShard(shard, &w);
    ByteReader r(record);
    ASSERT_TRUE(restored.DecodeShard(shard, &r).ok());
  }
  EXPECT_EQ(restored.covariate_arms()[0].moments[1].count, 14);
  EXPECT_EQ(restored.flow_covariate_arms()[0].moments[1].count, 0);
  // A dropped shard leaves the state, not the flow.
  monitor_->DropShard(0);
  EXPECT_LT(monitor_->covariate_arms()[0].moments[1].count, 14);
  EXPECT_EQ(monitor_->flow_covariate_arms()[0].moments[1].count, 14);
}

// A record of the format before covariates ("ARM2": no covariate section)
// still restores, without covariate state; a truncated covariate section
// is an error.
TEST_F(AdjustedMonitorTest, ReadsRecordsWithoutCovariates) {
  std::string record;
  ByteWriter w(&record);
  w.Fixed32(0x41524d32);  // "ARM2"
  w.Varint(64);           // unit_buckets
  w.Varint(0);            // No series,
  w.Varint(0);            // no arms;
  w.Fixed32(0x554e5431);  // the units record ("UNT1"): no experiments,
  w.Varint(0);
  w.Varint(0);  // no units.
  ExperimentMonitor monitor(&experiments_, statistics_, &agg_, false,
                            "pre.ndcg");
  ByteReader r(record);
  ASSERT_TRUE(monitor.DecodeShard(0, &r).ok());
  EXPECT_TRUE(r.at_end());

  Feed(1);
  std::string full;
  ByteWriter fw(&full);
  monitor_->EncodeShard(0, &fw);
  ByteReader truncated(std::string_view(full).substr(0, full.size() - 3));
  EXPECT_FALSE(monitor.DecodeShard(0, &truncated).ok());
}

// With units: the per-bucket sums of the pairs give the cluster-robust
// variance. The data set of metrics/metrics_test_util.h (kClustered*, rows
// {bucket, y, x}, drawn with numpy.random.default_rng(2713)), which
// metrics/regression_adjustment_test.cc also reads, unit_buckets = 4; its
// figures:
// smf.ols('y ~ T + x', df).fit() params['x'] = 0.7934368198368278 and
// params['T'] = 0.031193244621982225; with theta fixed,
// smf.ols('r ~ T', df).fit(cov_type='cluster', cov_kwds={'groups':
// df.g}).bse['T'] = 0.04716312188375791 (CR1), rescaled to rankwatch's
// CR0 x B / (B - 1) per arm: x sqrt((4/3) / ((8/7) (43/42))) =
// 0.05034616061786823; Welch-Satterthwaite nu = 3.960920200010005 and
// p = 0.5693972309691357 (NumPy/SciPy).

TEST(AdjustedUnitTest, ClusteredMatchesStatsmodelsClusterRobust) {
  Aggregator agg(TestAggregation(), BuildSeries({Measure::kNdcg}, {10}));
  const std::string_view de[] = {"de"};
  const uint32_t a = agg.ResolveGroup("A", de);
  const uint32_t b = agg.ResolveGroup("B", de);
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  config::StatisticsConfig statistics;
  statistics.unit_buckets = 4;
  ExperimentMonitor monitor(&experiments, statistics, &agg, /*units=*/true,
                            "pre");
  // A unit hash in bucket `bucket` of 4 (the top two bits pick it).
  uint64_t u = 0;
  for (const metrics::ClusteredRow& r : metrics::kClusteredBaseline) {
    ++u;
    monitor.Add(a, (static_cast<uint64_t>(r.bucket) << 62) | u,
                std::vector<double>{r.y, r.y}, static_cast<int32_t>(u % 2),
                r.x);
  }
  for (const metrics::ClusteredRow& r : metrics::kClusteredTreatment) {
    ++u;
    monitor.Add(b, (static_cast<uint64_t>(r.bucket) << 62) | u,
                std::vector<double>{r.y, r.y}, static_cast<int32_t>(u % 2),
                r.x);
  }
  monitor.Update(100'000);
  const AdjustedComparison& adj = monitor.comparisons()[0].adjusted;
  ASSERT_EQ(adj.status, metrics::AdjustmentStatus::kAdjusted);
  EXPECT_EQ(adj.baseline_arm.count, 23);
  EXPECT_EQ(adj.treatment_arm.count, 21);
  EXPECT_EQ(adj.baseline_arm.clusters, 4);
  EXPECT_TRUE(Near(adj.theta, 0.7934368198368278, 1e-12));
  ASSERT_TRUE(adj.welch.ok());
  EXPECT_TRUE(Near(adj.welch.difference, 0.031193244621982225, 1e-11));
  EXPECT_TRUE(Near(adj.welch.standard_error, 0.05034616061786823, 1e-11));
  EXPECT_TRUE(Near(adj.welch.degrees_of_freedom, 3.960920200010005, 1e-9));
  EXPECT_TRUE(Near(adj.welch.p_value, 0.5693972309691357, 1e-9));
  // 4 buckets < the warm-up of 20: no sequential look.
  EXPECT_EQ(adj.sequential.looks(), 0);
  // A checkpoint of each shard restores the same figures.
  ExperimentMonitor restored(&experiments, statistics, &agg, true, "pre");
  for (int32_t shard : {1, 0}) {
    std::string record;
    ByteWriter w(&record);
    monitor.EncodeShard(shard, &w);
    ByteReader r(record);
    ASSERT_TRUE(restored.DecodeShard(shard, &r).ok());
  }
  restored.Update(100'000);
  const AdjustedComparison& again = restored.comparisons()[0].adjusted;
  EXPECT_EQ(again.baseline_arm.count, 23);
  EXPECT_TRUE(Near(again.welch.difference, adj.welch.difference, 1e-12));
  EXPECT_TRUE(
      Near(again.welch.standard_error, adj.welch.standard_error, 1e-12));
  // Under other unit buckets the bucket sums do not fit: dropped.
  statistics.unit_buckets = 8;
  ExperimentMonitor other(&experiments, statistics, &agg, true, "pre");
  std::string record;
  ByteWriter w(&record);
  monitor.EncodeShard(0, &w);
  ByteReader r(record);
  ASSERT_TRUE(other.DecodeShard(0, &r).ok());
  EXPECT_EQ(other.covariate_arms()[0].moments[0].count, 0);
}

// ---------------------------------------------------------------------------
// Simulations through the monitor (the state it keeps, its looks and its
// warm-up), as metrics/regression_adjustment_test.cc does on the bare
// functions. The data have a standard deviation of about 0.25 per list
// and tau = 0.05 (statistics.mixture_sd's default), the analogue of the
// metrics tests' tau = 0.2 on unit-variance data. Each scenario prints its
// seed and figures; tolerances are three Monte Carlo standard errors.

struct SimulatedExperiment {
  double width_ratio = 0;       // Adjusted Welch interval width / unadjusted.
  bool welch_rejected = false;  // Adjusted, at the end.
  bool adjusted_sequential = false;  // Adjusted mSPRT ever rejected.
  bool sequential = false;           // Unadjusted mSPRT ever rejected.
};

// One A/A (or A/B with no effect) experiment of independent lists: `n`
// per arm, y = 0.25 (rho x + sqrt(1 - rho^2) e), a look every `every`
// lists per arm.
SimulatedExperiment SimulateLists(Xoshiro256* rng, double rho, int n,
                                  int every) {
  config::AggregationConfig aggregation;
  Aggregator agg(aggregation, BuildSeries({Measure::kNdcg}, {}));
  const uint32_t groups[] = {agg.ResolveGroup("A", {}),
                             agg.ResolveGroup("B", {})};
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  ExperimentMonitor monitor(&experiments, {}, &agg, false, "pre");
  std::vector<double> value(1);
  for (int i = 0; i < n; ++i) {
    for (uint32_t group : groups) {
      const double x = rng->Gaussian();
      value[0] = 0.25 * (rho * x + std::sqrt(1 - rho * rho) * rng->Gaussian());
      agg.Add(group, 1000, value, false);
      monitor.Add(group, 0, value, 0, x);
    }
    if ((i + 1) % every == 0 || i + 1 == n) monitor.Update(1000);
  }
  const Comparison& c = monitor.comparisons()[0];
  SimulatedExperiment out;
  out.width_ratio =
      (c.adjusted.welch.interval.upper - c.adjusted.welch.interval.lower) /
      (c.welch.interval.upper - c.welch.interval.lower);
  out.welch_rejected = c.adjusted.welch.p_value < 0.05;
  out.adjusted_sequential = c.adjusted.sequential.rejected();
  out.sequential = c.sequential.rejected();
  return out;
}

// With units: `units` users with 1 to 6 lists each, unit effects a, b ~
// N(0, 1), x = a + 0.5 e1, y = 0.25 (0.7 a + 0.7 b + 0.5 e2) (the
// residual keeps the unit effect 0.7 b), users to arms by a coin, 64
// buckets, a look every 6 users.
SimulatedExperiment SimulateUnits(Xoshiro256* rng, int units) {
  config::AggregationConfig aggregation;
  Aggregator agg(aggregation, BuildSeries({Measure::kNdcg}, {}));
  const uint32_t groups[] = {agg.ResolveGroup("A", {}),
                             agg.ResolveGroup("B", {})};
  std::vector<config::ExperimentConfig> experiments = {{"x", "A", {"B"}}};
  ExperimentMonitor monitor(&experiments, {}, &agg, true, "pre");
  std::vector<double> value(1);
  for (int u = 0; u < units; ++u) {
    const uint64_t unit_hash = rng->Next();
    const uint32_t group = groups[rng->Below(2)];
    const double a = rng->Gaussian();
    const double b = rng->Gaussian();
    const int64_t lists = rng->Between(1, 6);
    for (int64_t i = 0; i < lists; ++i) {
      const double x = a + 0.5 * rng->Gaussian();
      value[0] = 0.25 * (0.7 * a + 0.7 * b + 0.5 * rng->Gaussian());
      monitor.Add(group, unit_hash, value, 0, x);
    }
    if ((u + 1) % 6 == 0 || u + 1 == units) monitor.Update(1000);
  }
  const Comparison& c = monitor.comparisons()[0];
  SimulatedExperiment out;
  out.width_ratio =
      (c.adjusted.welch.interval.upper - c.adjusted.welch.interval.lower) /
      (c.welch.interval.upper - c.welch.interval.lower);
  out.welch_rejected = c.adjusted.welch.p_value < 0.05;
  out.adjusted_sequential = c.adjusted.sequential.rejected();
  out.sequential = c.sequential.rejected();
  return out;
}

// The adjusted interval is about sqrt(1 - rho^2) as wide as the
// unadjusted one: mean ratio over 200 experiments of 300 + 300 lists at
// rho = 0.8, within 3 Monte Carlo standard errors plus 1 / N (the
// small-sample bias of sqrt(1 - r^2), N = 600 lists) of 0.6.
TEST(AdjustedSimulationTest, WidthRatioIsSqrtOneMinusRhoSquared) {
  constexpr uint64_t kSeed = 2701;
  Xoshiro256 rng(kSeed);
  constexpr int kExperiments = 200;
  std::vector<double> ratios;
  for (int e = 0; e < kExperiments; ++e) {
    ratios.push_back(SimulateLists(&rng, 0.8, 300, 300).width_ratio);
  }
  double mean = 0;
  for (double r : ratios) mean += r / kExperiments;
  double var = 0;
  for (double r : ratios) var += (r - mean) * (r - mean) / (kExperiments - 1);
  const double se = std::sqrt(var / kExperiments);
  std::printf("seed %llu: mean width ratio %.4f (s.e. %.5f), expected 0.6\n",
              static_cast<unsigned long long>(kSeed), mean, se);
  EXPECT_NEAR(mean, 0.6, 3 * se + 1.0 / 600) << "seed " << kSeed;
}

// A/A: the adjusted Welch test at the end stays within alpha -+ 3 sd and
// the adjusted mSPRT, read at every look from its warm-up on, rejects at
// most alpha + 3 sd of the time; without and with units.
TEST(AdjustedSimulationTest, AaFalsePositivesStayAtTheirLevel) {
  constexpr double kAlpha = 0.05;
  struct Scenario {
    const char* name;
    uint64_t seed;
    int experiments;
    bool units;
  };
  for (const Scenario& scenario : {Scenario{"lists", 2702, 1500, false},
                                   Scenario{"units", 2703, 1000, true}}) {
    Xoshiro256 rng(scenario.seed);
    int welch = 0;
    int adjusted_sequential = 0;
    int sequential = 0;
    for (int e = 0; e < scenario.experiments; ++e) {
      const SimulatedExperiment r = scenario.units
                                        ? SimulateUnits(&rng, 300)
                                        : SimulateLists(&rng, 0.8, 400, 10);
      welch += r.welch_rejected ? 1 : 0;
      adjusted_sequential += r.adjusted_sequential ? 1 : 0;
      sequential += r.sequential ? 1 : 0;
    }
    const double n = scenario.experiments;
    const double sd = std::sqrt(kAlpha * (1 - kAlpha) / n);
    std::printf(
        "%s (seed %llu, %d experiments): adjusted Welch %.4f, adjusted "
        "mSPRT %.4f, unadjusted mSPRT %.4f (limit %.4f)\n",
        scenario.name, static_cast<unsigned long long>(scenario.seed),
        scenario.experiments, welch / n, adjusted_sequential / n,
        sequential / n, kAlpha + 3 * sd);
    EXPECT_NEAR(welch / n, kAlpha, 3 * sd)
        << scenario.name << " seed " << scenario.seed;
    EXPECT_LE(adjusted_sequential / n, kAlpha + 3 * sd)
        << scenario.name << " seed " << scenario.seed;
  }
}

}  // namespace
}  // namespace rankwatch::stream
