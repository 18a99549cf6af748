#include "daemon/exporter/experiment_collector.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <utility>

#include "base/numeric.h"
#include "daemon/exporter/families.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

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
  kPValueBh,
  kVerdict,
  kSequentialLooks,
  kSequentialContradicted,
  kSequentialLookPValue,
  kSequentialLookCiLower,
  kSequentialLookCiUpper,
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
    {"p_value_bh",
     "Welch p-value adjusted by Benjamini-Hochberg over the experiment's "
     "family (treatments x quality measures x cutoffs, window all)"},
    {"verdict",
     "+1 treatment better, -1 worse, 0 inconclusive or undecidable, from the "
     "always-valid interval (quality measures only; 0 while the experiment "
     "fails its sample-ratio check)"},
    {"sequential_looks", "Looks with data the mSPRT has taken since start"},
    {"sequential_contradicted",
     "1 once a look's always-valid interval missed the running intersection "
     "(the effect drifted); the sequence then restarted from that look"},
    {"sequential_look_p_value",
     "mSPRT p-value of the latest look alone (what the recording rules "
     "compute across replicas)"},
    {"sequential_look_ci_lower",
     "Lower end of the latest look's mSPRT interval alone"},
    {"sequential_look_ci_upper",
     "Upper end of the latest look's mSPRT interval alone"},
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

// Help of the rankwatch_ab_adjusted_<name> gauges, parallel to
// stream::AdjustedFigures (whose names they carry).
constexpr GaugeSpec kAdjustedGauges[stream::kNumAdjustedFigures] = {
    {"theta",
     "Regression adjustment: pooled within-arm slope of the measure on the "
     "covariate (schema.covariate); 0 when not adjusted"},
    {"variance_ratio",
     "Squared standard error of the adjusted difference over the "
     "unadjusted one (about 1 - rho^2); NaN when undefined"},
    {"difference",
     "Regression-adjusted difference (the OLS coefficient of the treatment "
     "in y ~ 1 + T + x); NaN if an arm has no pairs"},
    {"relative_difference",
     "Adjusted difference divided by the baseline's adjusted mean"},
    {"standard_error",
     "Standard error of the adjusted difference (clustered with "
     "schema.unit); +Inf below two pairs per arm"},
    {"ci_lower",
     "Lower end of the fixed-sample Welch interval of the adjusted "
     "difference"},
    {"ci_upper",
     "Upper end of the fixed-sample Welch interval of the adjusted "
     "difference"},
    {"p_value",
     "Two-sided Welch p-value of the adjusted difference (fixed-sample)"},
    {"sequential_p_value",
     "Always-valid mSPRT p-value of the adjusted difference since start "
     "(asymptotic; from 20 pairs per arm)"},
    {"sequential_ci_lower",
     "Lower end of the always-valid confidence sequence of the adjusted "
     "difference since start (running intersection)"},
    {"sequential_ci_upper",
     "Upper end of the always-valid confidence sequence of the adjusted "
     "difference since start (running intersection)"},
    {"sequential_look_p_value",
     "mSPRT p-value of the adjusted difference at the latest look alone"},
    {"sequential_look_ci_lower",
     "Lower end of the latest look's mSPRT interval of the adjusted "
     "difference alone"},
    {"sequential_look_ci_upper",
     "Upper end of the latest look's mSPRT interval of the adjusted "
     "difference alone"},
};

double MeanOrNaN(const metrics::ArmSummary& arm) {
  return arm.count > 0 ? arm.mean : kNaN;
}

// The series that are a primary series of some experiment, by index into
// the snapshot's series: the ones whose sums the rules need.
std::vector<size_t> PrimarySeries(const stream::PipelineSnapshot& snapshot) {
  const std::vector<stream::SeriesSpec>& series = snapshot.series;
  std::vector<size_t> primary;
  for (size_t s = 0; s < series.size(); ++s) {
    for (const config::ExperimentConfig& e : snapshot.config.experiments) {
      const config::SeriesRef ref = stream::RefOf(series[s]);
      if (std::find(e.primary.begin(), e.primary.end(), ref) !=
          e.primary.end()) {
        primary.push_back(s);
        break;
      }
    }
  }
  return primary;
}

// The additive pair sums of the regression adjustment, exported for the
// recording rules: rankwatch_ab_covariate_<name> (state gauges) and
// rankwatch_ab_covariate_<name>_total (counters), in the order of
// PairSums().
struct PairSumSpec {
  const char* name;
  const char* help;
};
constexpr PairSumSpec kPairSums[] = {
    {"pairs",
     "Lists of the variant with a finite covariate (schema.covariate) and a "
     "value of the primary series: the regression adjustment's pairs (y, x)"},
    {"sum_y", "Sum of y (the series' value) over the pairs"},
    {"sum_x", "Sum of x (the covariate) over the pairs"},
    {"sum_yy", "Sum of y^2 over the pairs"},
    {"sum_xx", "Sum of x^2 over the pairs"},
    {"sum_xy", "Sum of x y over the pairs"},
};
constexpr size_t kNumPairSums = std::size(kPairSums);

// The power sums of `m`'s pairs (what adds up across replicas; the
// centered co-moments do not), parallel to kPairSums.
std::array<double, kNumPairSums> PairSums(const metrics::CovariateMoments& m) {
  const double n = static_cast<double>(m.count);
  return {n,
          n * m.mean_y,
          n * m.mean_x,
          m.m2_y + n * m.mean_y * m.mean_y,
          m.m2_x + n * m.mean_x * m.mean_x,
          m.c_xy + n * m.mean_x * m.mean_y};
}

// One rendering of a snapshot.
class ExperimentRenderer {
 public:
  explicit ExperimentRenderer(const stream::PipelineSnapshot& snapshot)
      : s_(snapshot), window_labels_(WindowLabels(snapshot.windows_ms)) {}

  void CollectInfo(std::vector<MetricFamily>* out) const;
  void CollectComparisons(std::vector<MetricFamily>* out) const;
  void CollectAdjusted(std::vector<MetricFamily>* out) const;
  void CollectCovariateSums(std::vector<MetricFamily>* out) const;
  void CollectSrm(std::vector<MetricFamily>* out) const;
  void CollectBuckets(std::vector<MetricFamily>* out) const;

 private:
  Labels ComparisonLabels(const stream::Comparison& c) const;

  const stream::PipelineSnapshot& s_;
  const std::vector<std::string> window_labels_;  // Parallel to windows_ms.
};

Labels ExperimentRenderer::ComparisonLabels(const stream::Comparison& c) const {
  const stream::SeriesSpec& series = s_.series[c.series];
  // The snapshot's own configuration (c.experiment points into the
  // pipeline's).
  const config::ExperimentConfig& e = s_.config.experiments[c.experiment_index];
  return {
      {"experiment", e.name},
      {"variant", c.treatment},
      {"baseline", e.baseline},
      {"measure", series.name},
      {"k", series.k_label},
      {"window", c.window < 0 ? std::string("all")
                              : window_labels_[static_cast<size_t>(c.window)]}};
}

void ExperimentRenderer::CollectInfo(std::vector<MetricFamily>* out) const {
  MetricFamily info = MakeFamily(
      "rankwatch_experiment_info",
      "A configured A/B comparison: treatment `variant` against `baseline`",
      MetricType::Gauge);
  MetricFamily primary = MakeFamily(
      "rankwatch_ab_primary_info",
      "A primary series of an experiment (experiments[].primary): the "
      "measures its alerts and summaries decide on",
      MetricType::Gauge);
  for (const config::ExperimentConfig& e : s_.config.experiments) {
    for (const std::string& t : e.treatments) {
      AddGauge(
          &info,
          {{"experiment", e.name}, {"baseline", e.baseline}, {"variant", t}},
          1);
    }
    for (const config::SeriesRef& r : e.primary) {
      AddGauge(&primary,
               {{"experiment", e.name},
                {"measure", MeasureLabel(r)},
                {"k", CutoffLabel(r.cutoff)}},
               1);
    }
  }
  out->push_back(std::move(info));
  out->push_back(std::move(primary));
  MetricFamily level =
      MakeFamily("rankwatch_ab_confidence_level",
                 "Confidence level of the A/B intervals (statistics.level)",
                 MetricType::Gauge);
  AddGauge(&level, {}, s_.level);
  out->push_back(std::move(level));
  if (s_.units) {
    MetricFamily unit = MakeFamily(
        "rankwatch_ab_unit_info",
        "The randomization unit (schema.unit): A/B variances are clustered "
        "by it",
        MetricType::Gauge);
    AddGauge(&unit, {{"unit", s_.config.schema.unit}}, 1);
    out->push_back(std::move(unit));
  }
}

void ExperimentRenderer::CollectComparisons(
    std::vector<MetricFamily>* out) const {
  std::vector<MetricFamily> f = MakeGauges();
  MetricFamily state = MakeFamily(
      "rankwatch_ab_verdict_state",
      "The verdict's state, one series per state, 1 for the current one: "
      "no_data, inconclusive, better, worse, sample_ratio_mismatch",
      MetricType::Gauge);
  for (const stream::Comparison& c : s_.comparisons) {
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
    if (!c.has_sequential) continue;
    AddGauge(&f[kSequentialPValue], labels, c.sequential.p_value());
    AddGauge(&f[kSequentialCiLower], labels, c.sequential.interval().lower);
    AddGauge(&f[kSequentialCiUpper], labels, c.sequential.interval().upper);
    AddGauge(&f[kSequentialLooks], labels,
             static_cast<double>(c.sequential.looks()));
    AddGauge(&f[kSequentialContradicted], labels,
             c.sequential.contradicted() ? 1 : 0);
    AddGauge(&f[kSequentialLookPValue], labels, c.look.p_value);
    AddGauge(&f[kSequentialLookCiLower], labels, c.look.interval.lower);
    AddGauge(&f[kSequentialLookCiUpper], labels, c.look.interval.upper);
    if (!c.quality) continue;
    AddGauge(&f[kPValueBh], labels, c.p_value_bh);
    AddGauge(&f[kVerdict], labels, c.verdict);
    for (int s = 0; s < stream::kNumVerdictStates; ++s) {
      const auto v = static_cast<stream::VerdictState>(s);
      Labels with_state = labels;
      with_state.push_back({"state", std::string(stream::VerdictStateName(v))});
      AddGauge(&state, std::move(with_state), c.state == v ? 1 : 0);
    }
  }
  for (MetricFamily& family : f) out->push_back(std::move(family));
  out->push_back(std::move(state));
}

void ExperimentRenderer::CollectAdjusted(std::vector<MetricFamily>* out) const {
  MetricFamily info = MakeFamily(
      "rankwatch_ab_covariate_info",
      "The covariate of regression adjustment (schema.covariate): the "
      "rankwatch_ab_adjusted_* gauges adjust by it",
      MetricType::Gauge);
  AddGauge(&info, {{"covariate", s_.covariate}}, 1);
  out->push_back(std::move(info));
  MetricFamily events = MakeFamily(
      "rankwatch_covariate_events_total",
      "Results events consumed, by what their covariate field held "
      "(present, absent, null, wrong_type, not_finite); only present gives "
      "the list a covariate, none is rejected for it",
      MetricType::Counter);
  AddOutcomeCounters(&events, {}, s_.counters.covariate);
  out->push_back(std::move(events));
  std::vector<MetricFamily> f;
  for (const GaugeSpec& g : kAdjustedGauges) {
    f.push_back(MakeFamily(std::string("rankwatch_ab_adjusted_") + g.name,
                           g.help, MetricType::Gauge));
  }
  const std::pair<const char*, const char*> counts[] = {
      {"baseline_pairs",
       "Baseline lists with a finite covariate and value (the adjusted arm)"},
      {"treatment_pairs",
       "Treatment lists with a finite covariate and value (the adjusted "
       "arm)"},
      {"sequential_looks", "Looks the adjusted mSPRT has taken since start"}};
  for (const auto& [name, help] : counts) {
    f.push_back(MakeFamily(std::string("rankwatch_ab_adjusted_") + name, help,
                           MetricType::Gauge));
  }
  MetricFamily status = MakeFamily(
      "rankwatch_ab_adjusted_status",
      "Whether the adjusted figures are adjusted, one series per status, 1 "
      "for the current one: adjusted, no_covariate_variance (fewer than two "
      "pairs per arm, or a covariate constant within the arms: the figures "
      "are the unadjusted ones of the pairs), invalid_input",
      MetricType::Gauge);
  for (const stream::Comparison& c : s_.comparisons) {
    if (!c.has_adjusted) continue;
    const Labels labels = ComparisonLabels(c);
    const stream::AdjustedComparison& a = c.adjusted;
    size_t i = 0;
    for (const stream::NamedFigure& figure : stream::AdjustedFigures(a)) {
      AddGauge(&f[i++], labels, figure.value);
    }
    for (const int64_t n :
         {std::max<int64_t>(a.baseline_arm.count, 0),
          std::max<int64_t>(a.treatment_arm.count, 0), a.sequential.looks()}) {
      AddGauge(&f[i++], labels, static_cast<double>(n));
    }
    for (const metrics::AdjustmentStatus s :
         {metrics::AdjustmentStatus::kAdjusted,
          metrics::AdjustmentStatus::kNoCovariateVariance,
          metrics::AdjustmentStatus::kInvalidInput}) {
      Labels with_status = labels;
      with_status.push_back(
          {"status", std::string(metrics::AdjustmentStatusName(s))});
      AddGauge(&status, std::move(with_status), a.status == s ? 1 : 0);
    }
  }
  for (MetricFamily& family : f) out->push_back(std::move(family));
  out->push_back(std::move(status));
}

void ExperimentRenderer::CollectSrm(std::vector<MetricFamily>* out) const {
  const bool units = s_.units;
  const std::string what =
      units ? "Randomization units first seen in the variant (schema.unit)"
            : "Lists of the variant (requests are the randomization unit: no "
              "schema.unit)";
  MetricFamily counts =
      MakeFamily("rankwatch_ab_units_total", what + ", counted by this process",
                 MetricType::Counter);
  MetricFamily state_counts = MakeFamily(
      "rankwatch_ab_units",
      what +
          (units ? ", counted by this process (unit tables are not yet "
                   "durable)"
                 : ", since the state began (survives restarts and "
                   "rebalances)") +
          "; sum over replicas",
      MetricType::Gauge);
  MetricFamily shares =
      MakeFamily("rankwatch_ab_expected_share",
                 "Share of the experiment's units the variant should get "
                 "(experiments[].split, normalized)",
                 MetricType::Gauge);
  MetricFamily statistic = MakeFamily(
      "rankwatch_ab_srm_statistic",
      "Pearson chi-square statistic of the units per variant against the "
      "split",
      MetricType::Gauge);
  MetricFamily p_value =
      MakeFamily("rankwatch_ab_srm_p_value",
                 "Chi-square p-value of the sample ratio (fixed-sample)",
                 MetricType::Gauge);
  MetricFamily sequential = MakeFamily(
      "rankwatch_ab_srm_sequential_p_value",
      "Always-valid p-value of the sample ratio (Dirichlet-multinomial test, "
      "Lindon et al. 2022)",
      MetricType::Gauge);
  MetricFamily detected = MakeFamily(
      "rankwatch_ab_srm_detected",
      "1 while the sequential sample-ratio p-value is below "
      "statistics.srm_level: the experiment's comparisons are not to be "
      "trusted",
      MetricType::Gauge);
  MetricFamily capped = MakeFamily(
      "rankwatch_ab_srm_units_capped",
      "1 once statistics.max_tracked_units was reached: later new units are "
      "not counted",
      MetricType::Gauge);
  MetricFamily conflicts = MakeFamily(
      "rankwatch_ab_unit_conflicts_total",
      "Lists whose unit was first seen in another variant of the experiment",
      MetricType::Counter);
  const std::vector<config::ExperimentConfig>& experiments =
      s_.config.experiments;
  for (size_t x = 0; x < experiments.size(); ++x) {
    const stream::SrmState& srm = s_.srm[x];
    const Labels experiment = {{"experiment", experiments[x].name}};
    for (size_t i = 0; i < srm.variants.size(); ++i) {
      Labels labels = experiment;
      labels.push_back({"variant", srm.variants[i]});
      // Without units, the lists this process scored (the counts are the
      // state's, which can shrink when a partition leaves).
      int64_t flow = srm.counts[i];
      if (!units) {
        flow = 0;
        for (size_t g = 0; g < s_.groups.size(); ++g) {
          if (s_.groups[g].variant == srm.variants[i]) {
            flow += s_.flows[g].requests;
          }
        }
      }
      AddCounter(&counts, labels, static_cast<double>(flow));
      AddGauge(&state_counts, labels, static_cast<double>(srm.counts[i]));
      AddGauge(&shares, std::move(labels), srm.shares[i]);
    }
    AddGauge(&statistic, experiment, srm.chi_square.statistic);
    AddGauge(&p_value, experiment, srm.chi_square.p_value);
    AddGauge(&sequential, experiment, srm.sequential.p_value());
    AddGauge(&detected, experiment, srm.detected ? 1 : 0);
    if (units) {
      AddGauge(&capped, experiment, srm.capped ? 1 : 0);
      AddCounter(&conflicts, experiment,
                 static_cast<double>(srm.unit_conflicts));
    }
  }
  out->push_back(std::move(counts));
  out->push_back(std::move(state_counts));
  out->push_back(std::move(shares));
  out->push_back(std::move(statistic));
  out->push_back(std::move(p_value));
  out->push_back(std::move(sequential));
  out->push_back(std::move(detected));
  if (units) {
    out->push_back(std::move(capped));
    out->push_back(std::move(conflicts));
  }
}

// Per variant and unit bucket, the lists and the primary series' sums: what
// the recording rules need to compute the clustered variance of the whole
// fleet (bucket totals add across replicas; their squares do not).
void ExperimentRenderer::CollectBuckets(std::vector<MetricFamily>* out) const {
  const std::vector<stream::SeriesSpec>& series = s_.series;
  const std::vector<size_t> primary = PrimarySeries(s_);
  // Counters: what this process scored (never backwards). Gauges: the
  // state's totals, which move with their partitions (summed over the
  // replicas: the fleet's, exactly, surviving restarts).
  MetricFamily lists =
      MakeFamily("rankwatch_ab_bucket_lists_total",
                 "Scored lists of the variant whose unit hashes to the "
                 "bucket, scored by this process",
                 MetricType::Counter);
  MetricFamily sums = MakeFamily(
      "rankwatch_ab_bucket_sum_total",
      "Sum of a primary series over the variant's lists in the unit bucket, "
      "scored by this process",
      MetricType::Counter);
  MetricFamily state_lists = MakeFamily(
      "rankwatch_ab_bucket_lists",
      "Scored lists of the variant whose unit hashes to the bucket, since "
      "the state began (survives restarts and rebalances); sum over replicas",
      MetricType::Gauge);
  MetricFamily state_sums = MakeFamily(
      "rankwatch_ab_bucket_sum",
      "Sum of a primary series over the variant's lists in the unit bucket, "
      "since the state began; sum over replicas",
      MetricType::Gauge);
  const size_t buckets = static_cast<size_t>(s_.num_buckets);
  auto add = [&](const std::vector<stream::ExperimentMonitor::ArmBuckets>& arms,
                 MetricFamily* l, MetricFamily* y, bool counter) {
    auto put = counter ? AddCounter : AddGauge;
    for (const stream::ExperimentMonitor::ArmBuckets& arm : arms) {
      for (size_t b = 0; b < buckets; ++b) {
        const std::string bucket = std::to_string(b);
        put(l, {{"variant", arm.variant}, {"bucket", bucket}},
            static_cast<double>(arm.counts[b]));
        for (size_t s : primary) {
          put(y,
              {{"variant", arm.variant},
               {"measure", series[s].name},
               {"k", series[s].k_label},
               {"bucket", bucket}},
              arm.sums[s * buckets + b]);
        }
      }
    }
  };
  add(s_.flow_arm_buckets, &lists, &sums, true);
  add(s_.arm_buckets, &state_lists, &state_sums, false);
  out->push_back(std::move(lists));
  out->push_back(std::move(sums));
  out->push_back(std::move(state_lists));
  out->push_back(std::move(state_sums));
}

// Per variant and primary series, the power sums of the regression
// adjustment's pairs and, with units, per bucket the sums of y and x and the
// pairs: what the rules need to compute the adjusted comparison of the
// whole fleet (theta from the pooled co-moments, the clustered variance
// from the bucket totals). As in CollectBuckets: counters from what this
// process folded in, gauges from the state of the shards it holds.
void ExperimentRenderer::CollectCovariateSums(
    std::vector<MetricFamily>* out) const {
  const std::vector<stream::SeriesSpec>& series = s_.series;
  const std::vector<size_t> primary = PrimarySeries(s_);
  const bool units = s_.units;
  // [counter?][sum]: the families of the pair sums, then (with units) of
  // the bucket sums.
  std::vector<MetricFamily> sums[2];
  for (int counter = 0; counter < 2; ++counter) {
    const char* suffix = counter ? "_total" : "";
    const std::string whose =
        counter ? "; counted by this process"
                : "; the state's, since it began (survives restarts and "
                  "rebalances): sum over replicas";
    for (const PairSumSpec& p : kPairSums) {
      sums[counter].push_back(MakeFamily(
          std::string("rankwatch_ab_covariate_") + p.name + suffix,
          p.help + whose, counter ? MetricType::Counter : MetricType::Gauge));
    }
    if (!units) continue;
    const std::pair<const char*, const char*> buckets[] = {
        {"bucket_pairs",
         "Pairs (y, x) of the variant whose unit hashes to "
         "the bucket"},
        {"bucket_sum_y", "Sum of y over the variant's pairs in the bucket"},
        {"bucket_sum_x", "Sum of x over the variant's pairs in the bucket"}};
    for (const auto& [name, help] : buckets) {
      sums[counter].push_back(MakeFamily(
          std::string("rankwatch_ab_covariate_") + name + suffix, help + whose,
          counter ? MetricType::Counter : MetricType::Gauge));
    }
  }
  const size_t num_buckets = static_cast<size_t>(s_.num_buckets);
  auto add =
      [&](const std::vector<stream::ExperimentMonitor::CovariateArm>& arms,
          std::vector<MetricFamily>* f, bool counter) {
        auto put = counter ? AddCounter : AddGauge;
        for (const stream::ExperimentMonitor::CovariateArm& arm : arms) {
          for (size_t s : primary) {
            const Labels labels = {{"variant", arm.variant},
                                   {"measure", series[s].name},
                                   {"k", series[s].k_label}};
            const std::array<double, kNumPairSums> p = PairSums(arm.moments[s]);
            for (size_t i = 0; i < kNumPairSums; ++i)
              put(&(*f)[i], labels, p[i]);
            if (!units) continue;
            for (size_t b = 0; b < num_buckets; ++b) {
              Labels with_bucket = labels;
              with_bucket.push_back({"bucket", std::to_string(b)});
              const size_t i = s * num_buckets + b;
              put(&(*f)[kNumPairSums], with_bucket,
                  static_cast<double>(arm.counts[i]));
              put(&(*f)[kNumPairSums + 1], with_bucket, arm.y_sums[i]);
              put(&(*f)[kNumPairSums + 2], std::move(with_bucket),
                  arm.x_sums[i]);
            }
          }
        }
      };
  add(s_.covariate_arms, &sums[0], false);
  add(s_.flow_covariate_arms, &sums[1], true);
  for (std::vector<MetricFamily>& families : sums) {
    for (MetricFamily& family : families) out->push_back(std::move(family));
  }
}

}  // namespace

void ExperimentCollector::Collect(const stream::PipelineSnapshot& snapshot,
                                  std::vector<MetricFamily>* out) const {
  if (snapshot.config.experiments.empty()) return;
  const ExperimentRenderer r(snapshot);
  r.CollectInfo(out);
  r.CollectComparisons(out);
  if (snapshot.adjusted()) {
    r.CollectAdjusted(out);
    r.CollectCovariateSums(out);
  }
  r.CollectSrm(out);
  if (snapshot.units) r.CollectBuckets(out);
}

}  // namespace rankwatch::exporter
