// ExperimentMonitor: live A/B comparisons of the configured experiments
// (`experiments:` in the YAML), computed from the aggregator's running
// state: for each experiment, treatment, series (a measure at a cutoff) and
// window ("all" and each configured sliding window), Welch's test of the
// treatment's mean against the baseline's; and for the whole run
// (window "all"), the mSPRT's always-valid p-value and confidence sequence,
// which stay honest however often they are read.
//
// An arm is a variant summed over its segment groups (every locale...):
// the experiment compares variants, not segments.
//
// Update() takes a "look": it recomputes every comparison and feeds the
// sequential tests. Looks are cheap but not free (they walk every group
// and window), so the pipeline takes one per second of wall time and one
// when it finishes, not one per request; the sequential guarantee holds for
// any schedule of looks.
//
// Ownership: keeps a pointer to the aggregator, which must outlive it.
// Thread-safety: none; the pipeline's owner serializes access (the daemon
// holds its mutex both while feeding the pipeline and while scraping).
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/stream/aggregator.h"
#include "metrics/ab_stats.h"

namespace rankwatch::stream {

// One row: treatment vs baseline of one experiment, for one series and
// window.
struct Comparison {
  const config::ExperimentConfig* experiment = nullptr;
  std::string treatment;
  size_t series = 0;  // Into Aggregator::series().
  int window = -1;    // Into Aggregator::windows_ms(); -1 for "all".
  metrics::ArmSummary baseline_arm;
  metrics::ArmSummary treatment_arm;
  metrics::WelchComparison welch;
  // Window "all" only (has_sequential): the running mSPRT.
  bool has_sequential = false;
  metrics::SequentialTest sequential;
};

class ExperimentMonitor {
 public:
  // `experiments` and `aggregator` must outlive the monitor.
  ExperimentMonitor(const std::vector<config::ExperimentConfig>* experiments,
                    const config::StatisticsConfig& statistics,
                    const Aggregator* aggregator);
  ExperimentMonitor(const ExperimentMonitor&) = delete;
  ExperimentMonitor& operator=(const ExperimentMonitor&) = delete;

  // Takes a look at the aggregator's state, windows ending at `now_ms`
  // (event time, as the `_mean` gauges).
  void Update(int64_t now_ms);

  // Takes a look when `monotonic_ms` is at least `interval_ms` after the last
  // one (or there was none).
  void MaybeUpdate(int64_t monotonic_ms, int64_t interval_ms, int64_t now_ms);

  // Experiment-major, then treatment, series, window ("all" first).
  const std::vector<Comparison>& comparisons() const { return comparisons_; }
  // Looks taken so far.
  int64_t looks() const { return looks_; }
  double level() const { return level_; }

 private:
  // Per series and window (index 0 = "all"), the summary of `variant`
  // summed over its groups.
  void SummarizeVariant(const std::string& variant, int64_t now_ms,
                        std::vector<metrics::ArmSummary>* out) const;

  const Aggregator* aggregator_;
  double level_;
  std::vector<Comparison> comparisons_;
  std::vector<metrics::ArmSummary> baseline_scratch_;
  std::vector<metrics::ArmSummary> treatment_scratch_;
  int64_t looks_ = 0;
  int64_t last_look_ms_ = INT64_MIN;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_
