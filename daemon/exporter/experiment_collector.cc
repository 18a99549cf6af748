#include "daemon/exporter/experiment_collector.h"

#include <limits>
#include <utility>

#include "metrics/measures.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The gauges of one comparison row, in export order (indexes kGauges).
enum Gauge {
  kBaselineRequests,
  kTreatmentRequests,
  kBaselineMean,
  kTreatmentMean,
  kDifference,
  kRelativeDifference,
  kStandardError,
  kCiLower,
  kCiUpper,
  kPValue,
  kSequentialPValue,
  kSequentialCiLower,
  kSequentialCiUpper,
  kNumGauges,
};

struct GaugeSpec {
  const char* name;  // After "rankwatch_ab_".
  const char* help;
};

constexpr GaugeSpec kGauges[kNumGauges] = {
    {"baseline_requests", "Lists of the baseline variant"},
    {"treatment_requests", "Lists of the treatment variant"},
    {"baseline_mean",
     "Mean of the measure over the baseline's lists; NaN if none"},
    {"treatment_mean",
     "Mean of the measure over the treatment's lists; NaN if none"},
    {"difference",
     "Treatment mean minus baseline mean; NaN if an arm is empty"},
    {"relative_difference",
     "Difference divided by the baseline mean; NaN if undefined"},
    {"standard_error",
     "Welch standard error of the difference; +Inf below two lists per arm"},
    {"ci_lower",
     "Lower end of the Welch confidence interval of the difference "
     "(fixed-sample: valid for one pre-planned look)"},
    {"ci_upper",
     "Upper end of the Welch confidence interval of the difference "
     "(fixed-sample: valid for one pre-planned look)"},
    {"p_value",
     "Two-sided Welch t-test p-value of the difference (fixed-sample); 1 "
     "without inference"},
    {"sequential_p_value",
     "Always-valid mSPRT p-value of the difference since start (valid "
     "however often it is read)"},
    {"sequential_ci_lower",
     "Lower end of the always-valid mSPRT confidence sequence of the "
     "difference since start"},
    {"sequential_ci_upper",
     "Upper end of the always-valid mSPRT confidence sequence of the "
     "difference since start"},
};

std::vector<MetricFamily> MakeGauges() {
  std::vector<MetricFamily> f;
  f.reserve(kNumGauges);
  for (const GaugeSpec& g : kGauges) {
    f.push_back(MakeFamily(std::string("rankwatch_ab_") + g.name, g.help,
                           MetricType::Gauge));
  }
  return f;
}

double MeanOrNaN(const metrics::ArmSummary& arm) {
  return arm.count > 0 ? arm.mean : kNaN;
}

}  // namespace

ExperimentCollector::ExperimentCollector(const stream::Pipeline* pipeline)
    : pipeline_(pipeline),
      window_labels_(WindowLabels(pipeline->aggregator().windows_ms())) {}

Labels ExperimentCollector::ComparisonLabels(
    const stream::Comparison& c) const {
  const stream::SeriesSpec& series = pipeline_->aggregator().series()[c.series];
  return {
      {"experiment", c.experiment->name},
      {"variant", c.treatment},
      {"baseline", c.experiment->baseline},
      {"measure", std::string(metrics::MeasureName(series.measure))},
      {"k", series.k_label},
      {"window", c.window < 0 ? std::string("all")
                              : window_labels_[static_cast<size_t>(c.window)]}};
}

void ExperimentCollector::Collect(std::vector<MetricFamily>* out) const {
  const stream::ExperimentMonitor& monitor = pipeline_->experiments();
  if (pipeline_->config().experiments.empty()) return;

  MetricFamily info = MakeFamily(
      "rankwatch_experiment_info",
      "A configured A/B comparison: treatment `variant` against `baseline`",
      MetricType::Gauge);
  for (const config::ExperimentConfig& e : pipeline_->config().experiments) {
    for (const std::string& t : e.treatments) {
      AddGauge(
          &info,
          {{"experiment", e.name}, {"baseline", e.baseline}, {"variant", t}},
          1);
    }
  }
  out->push_back(std::move(info));
  MetricFamily level =
      MakeFamily("rankwatch_ab_confidence_level",
                 "Confidence level of the A/B intervals (statistics.level)",
                 MetricType::Gauge);
  AddGauge(&level, {}, monitor.level());
  out->push_back(std::move(level));

  std::vector<MetricFamily> f = MakeGauges();
  for (const stream::Comparison& c : monitor.comparisons()) {
    const Labels labels = ComparisonLabels(c);
    const metrics::WelchComparison& w = c.welch;
    const bool both = c.baseline_arm.count > 0 && c.treatment_arm.count > 0;
    AddGauge(&f[kBaselineRequests], labels,
             static_cast<double>(c.baseline_arm.count));
    AddGauge(&f[kTreatmentRequests], labels,
             static_cast<double>(c.treatment_arm.count));
    AddGauge(&f[kBaselineMean], labels, MeanOrNaN(c.baseline_arm));
    AddGauge(&f[kTreatmentMean], labels, MeanOrNaN(c.treatment_arm));
    AddGauge(&f[kDifference], labels, both ? w.difference : kNaN);
    AddGauge(&f[kRelativeDifference], labels,
             both && w.has_relative_difference ? w.relative_difference : kNaN);
    AddGauge(&f[kStandardError], labels, w.standard_error);
    AddGauge(&f[kCiLower], labels, w.interval.lower);
    AddGauge(&f[kCiUpper], labels, w.interval.upper);
    AddGauge(&f[kPValue], labels, w.p_value);
    if (c.has_sequential) {
      AddGauge(&f[kSequentialPValue], labels, c.sequential.p_value());
      AddGauge(&f[kSequentialCiLower], labels, c.sequential.interval().lower);
      AddGauge(&f[kSequentialCiUpper], labels, c.sequential.interval().upper);
    }
  }
  for (MetricFamily& family : f) out->push_back(std::move(family));
}

}  // namespace rankwatch::exporter
