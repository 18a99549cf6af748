#include "daemon/stream/experiments.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

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

TEST_F(ExperimentMonitorTest, MaybeUpdateLooksOncePerInterval) {
  ExperimentMonitor monitor(&experiments_, {}, &agg_);
  monitor.MaybeUpdate(5'000, 1'000, 100'000);
  monitor.MaybeUpdate(5'999, 1'000, 100'000);
  EXPECT_EQ(monitor.looks(), 1);
  monitor.MaybeUpdate(6'000, 1'000, 100'000);
  EXPECT_EQ(monitor.looks(), 2);
  EXPECT_EQ(monitor.comparisons()[0].sequential.looks(), 2);
}

}  // namespace
}  // namespace rankwatch::stream
