#include "daemon/stream/experiments.h"

#include <utility>

#include "metrics/running_stats.h"

namespace rankwatch::stream {

ExperimentMonitor::ExperimentMonitor(
    const std::vector<config::ExperimentConfig>* experiments,
    const config::StatisticsConfig& statistics, const Aggregator* aggregator)
    : aggregator_(aggregator), level_(statistics.level) {
  metrics::SequentialOptions options;
  options.level = statistics.level;
  options.mixing_stddev = statistics.mixture_sd;
  const size_t num_series = aggregator_->series().size();
  const int num_windows = static_cast<int>(aggregator_->windows_ms().size());
  for (const config::ExperimentConfig& experiment : *experiments) {
    for (const std::string& treatment : experiment.treatments) {
      for (size_t s = 0; s < num_series; ++s) {
        for (int w = -1; w < num_windows; ++w) {
          Comparison c;
          c.experiment = &experiment;
          c.treatment = treatment;
          c.series = s;
          c.window = w;
          c.has_sequential = w == -1;
          c.sequential = metrics::SequentialTest(options);
          comparisons_.push_back(std::move(c));
        }
      }
    }
  }
}

void ExperimentMonitor::SummarizeVariant(
    const std::string& variant, int64_t now_ms,
    std::vector<metrics::ArmSummary>* out) const {
  const size_t num_series = aggregator_->series().size();
  const std::vector<int64_t>& windows = aggregator_->windows_ms();
  const size_t per_series = windows.size() + 1;
  std::vector<metrics::RunningStats> all(num_series);
  std::vector<WindowTotals> windowed(num_series * windows.size());
  for (size_t g = 0; g < aggregator_->num_groups(); ++g) {
    const GroupStats& group = aggregator_->group(g);
    if (group.variant != variant) continue;
    for (size_t s = 0; s < num_series && s < group.all.size(); ++s) {
      all[s].Merge(group.all[s]);
      for (size_t w = 0; w < windows.size(); ++w) {
        const WindowTotals t = group.windows.Sum(s, now_ms, windows[w]);
        WindowTotals& sum = windowed[s * windows.size() + w];
        sum.count += t.count;
        sum.sum += t.sum;
        sum.sum_of_squares += t.sum_of_squares;
      }
    }
  }
  out->assign(num_series * per_series, metrics::ArmSummary{});
  for (size_t s = 0; s < num_series; ++s) {
    (*out)[s * per_series] = metrics::Summarize(all[s]);
    for (size_t w = 0; w < windows.size(); ++w) {
      const WindowTotals& t = windowed[s * windows.size() + w];
      (*out)[s * per_series + w + 1] =
          metrics::ArmSummary{t.count, t.mean(), t.variance()};
    }
  }
}

void ExperimentMonitor::Update(int64_t now_ms) {
  ++looks_;
  const size_t per_series = aggregator_->windows_ms().size() + 1;
  const config::ExperimentConfig* summarized_experiment = nullptr;
  std::string summarized_treatment;
  for (Comparison& c : comparisons_) {
    // Rows come grouped by experiment and treatment: summarize each arm
    // once per group of rows.
    if (c.experiment != summarized_experiment) {
      SummarizeVariant(c.experiment->baseline, now_ms, &baseline_scratch_);
      summarized_experiment = c.experiment;
      summarized_treatment.clear();
    }
    if (c.treatment != summarized_treatment) {
      SummarizeVariant(c.treatment, now_ms, &treatment_scratch_);
      summarized_treatment = c.treatment;
    }
    const size_t i = c.series * per_series + static_cast<size_t>(c.window + 1);
    c.baseline_arm = baseline_scratch_[i];
    c.treatment_arm = treatment_scratch_[i];
    c.welch = metrics::CompareWelch(c.baseline_arm, c.treatment_arm, level_);
    if (c.has_sequential) {
      // A look without enough data leaves the test as it was.
      (void)c.sequential.Update(c.baseline_arm, c.treatment_arm);
    }
  }
}

void ExperimentMonitor::MaybeUpdate(int64_t monotonic_ms, int64_t interval_ms,
                                    int64_t now_ms) {
  if (last_look_ms_ != INT64_MIN &&
      monotonic_ms - last_look_ms_ < interval_ms) {
    return;
  }
  last_look_ms_ = monotonic_ms;
  Update(now_ms);
}

}  // namespace rankwatch::stream
