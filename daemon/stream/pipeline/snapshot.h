// PipelineSnapshot: the read model of a pipeline. Every figure a view shows
// (the Prometheus collectors, /api/v1/summary and the page, replay's
// reports, the demo's terminal) is rendered from one of these, so that two
// views of the same moment cannot disagree, and so that computing and
// rendering happen outside the daemon's lock.
//
// It is taken in two steps (issue 41):
//   CopySnapshot      with the pipeline's lock held: a copy of its counts
//                     and sums and of what its latest look decided, and
//                     nothing computed. Its size is bounded by the
//                     configuration, not by the events: the aggregates
//                     (label groups x series x (window buckets + histogram
//                     bins), groups bounded by aggregation.max_variants and
//                     max_segment_values), the comparisons, decisions and
//                     interleaving states (one per experiment, treatment,
//                     series and window), the movers' counters (shards x
//                     arms x statistics.tracked_queries), and the judges'
//                     grade pairs (at most 28 pairs of judges, each its
//                     distinct (grade, grade) cells: at most 64 x 64 of
//                     them where agreement is defined), since start and per
//                     window.
//   CompleteSnapshot  without it: the figures computed from those counts,
//                     the judges' agreement (kappa, alpha and their
//                     intervals), the query movers, the prediction-powered
//                     means and the coverage checks.
// The A/B intervals and decisions are computed by the pipeline's looks
// (Pipeline::RefreshLook), which advance the sequential tests' state, so
// they belong to the pipeline and are copied as the look left them.
// The daemon keeps one completed snapshot per pipeline state version
// (SnapshotCache), shared by concurrent readers.
//
// What it holds points into nothing of the pipeline (the comparisons' and
// interleaving states' configuration pointers point into its own `config`)
// and stays valid after the lock is released, across reloads and
// rebalances. A snapshot copied or moved must be taken again to point
// into its own copy (TakeSnapshot into it), as those pointers would still
// point into the original.
//
// Ownership: a plain value. Thread-safety: none; a snapshot is written by
// CopySnapshot() and CompleteSnapshot() and then read by any number of
// threads.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/experiments/decisions.h"
#include "daemon/stream/experiments/experiments.h"
#include "daemon/stream/experiments/query_movers.h"
#include "daemon/stream/interleaving/interleaving_monitor.h"
#include "daemon/stream/join/join.h"
#include "daemon/stream/judges/judge_agreement.h"
#include "daemon/stream/judges/judge_monitor.h"
#include "daemon/stream/pipeline/pipeline_counters.h"
#include "metrics/movers.h"
#include "metrics/ppi.h"
#include "trec/judge_compare.h"

namespace rankwatch::stream {

class Pipeline;

// The movers of one comparison (a primary series, window "all"), as
// QueryMovers::Movers() gave them.
struct MoversSnapshot {
  size_t experiment = 0;  // Into config.experiments.
  std::string treatment;
  size_t series = 0;  // Into PipelineSnapshot::series.
  std::vector<metrics::QueryMover> movers;
};

// A prediction-powered mean (judges.ppi) of one main series, variant and
// window, from the judge monitor's sums.
struct PpiFigure {
  size_t group = 0;   // Into PipelineSnapshot::judge_groups.
  size_t series = 0;  // Into PipelineSnapshot::series (the main series).
  int window = -1;    // Into windows_ms; -1 for the whole run.
  metrics::PpiMoments moments;
  // nullopt with fewer than two labelled lists or no other list.
  std::optional<metrics::PpiMeanEstimate> estimate;
};

// Whether an experiment's arms had their top k judged alike: the shares of
// the served top-k docs no judge labelled, since start (judges.
// coverage_tolerance). k is the cutoff of the experiment's first primary
// series (the smallest cutoff when that series is uncut).
struct CoverageCheck {
  size_t experiment = 0;  // Into config.experiments.
  std::string treatment;
  int32_t cutoff = 0;
  // NaN while an arm has no list.
  double baseline_unjudged = std::numeric_limits<double>::quiet_NaN();
  double treatment_unjudged = std::numeric_limits<double>::quiet_NaN();
  // |treatment - baseline| > judges.coverage_tolerance: the comparison's
  // figures count more unjudged docs as non-relevant in one arm.
  bool flagged = false;
};

struct PipelineSnapshot {
  // The configuration the figures were computed under.
  config::Config config;

  // The aggregates (Aggregator), merged over the shards held.
  std::vector<SeriesSpec> series;
  std::vector<GroupStats> groups;
  std::vector<GroupFlow> flows;  // Parallel to groups: this process's flow.
  std::vector<int64_t> windows_ms;
  int64_t bucket_ms = 0;
  int64_t newest_time_ms = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> overflowed;  // Aggregator::overflowed().

  // The A/B comparisons at the latest look (ExperimentMonitor).
  std::vector<Comparison> comparisons;
  std::vector<SrmState> srm;
  int64_t looks = 0;
  double level = 0;
  bool units = false;
  std::string covariate;  // Empty without regression adjustment.
  std::vector<ExperimentMonitor::ArmBuckets> arm_buckets;
  std::vector<ExperimentMonitor::ArmBuckets> flow_arm_buckets;
  int32_t num_buckets = 0;
  std::vector<ExperimentMonitor::CovariateArm> covariate_arms;
  std::vector<ExperimentMonitor::CovariateArm> flow_covariate_arms;

  // One decision per experiment and treatment (DecisionBoard).
  std::vector<Decision> decisions;

  // Interleaving experiments (InterleavingMonitor).
  std::vector<InterleavingState> interleaving;
  std::vector<int64_t> interleaving_windows_ms;
  double interleaving_alpha = 0;
  double interleaving_prior_shape = 0;

  // The query movers (statistics.tracked_queries): 0 when none are
  // tracked. `movers` has an entry for every comparison that has them,
  // computed from `movers_counts`.
  int32_t movers_capacity = 0;
  std::vector<MoversSnapshot> movers;
  QueryMoversCounts movers_counts;

  // judges.names and, with two or more, how far each pair agrees (in
  // PairIndex order; LabelAgreement::first and second index `judges`).
  std::vector<std::string> judges;
  std::vector<trec::LabelAgreement> agreement;
  // The same per window (windows_ms order) over its whole buckets, in
  // impression mode; empty in qrels mode (the table's labels have no event
  // time of their own).
  std::vector<std::vector<trec::LabelAgreement>> window_agreement;
  // The counts the two above are computed from (Pipeline::
  // judge_agreement(), since start and per window).
  std::vector<metrics::JudgePairCounts> judge_pair_counts;
  std::vector<std::vector<metrics::JudgePairCounts>> window_judge_pair_counts;
  // Items the agreement did not count: their grade pair would have been a
  // cell past JudgeAgreement::kMaxGradeCells (a process counter).
  int64_t agreement_refused = 0;

  // With judges (JudgeMonitor): its series (judge_layout says what each
  // holds), per variant (judge_groups[i].variant; no segments) with this
  // process's flow; the prediction-powered means; the coverage checks.
  std::vector<JudgeSeries> judge_layout;
  std::vector<SeriesSpec> judge_series;
  std::vector<GroupStats> judge_groups;
  std::vector<GroupFlow> judge_flows;
  std::vector<PpiFigure> ppi;
  std::vector<CoverageCheck> coverage;

  // The process's counters and the join's state.
  PipelineCounters counters;
  JoinCounters join_counters;
  int64_t pending_requests = 0;
  int64_t table_entries = 0;
  int64_t watermark_ms = std::numeric_limits<int64_t>::min();
  int64_t window_now_ms = std::numeric_limits<int64_t>::min();
  bool tracks_clicks = false;

  bool adjusted() const { return !covariate.empty(); }
  // The movers of a comparison (Comparison::experiment_index, treatment,
  // series), or null when it has none.
  const std::vector<metrics::QueryMover>* FindMovers(size_t experiment,
                                                     std::string_view treatment,
                                                     size_t series) const;
};

// Step 1, with the lock that serializes `pipeline`'s access held: copies
// its counts, sums and latest look into `out`, reusing its buffers.
// Computes no statistic and takes no look: a caller that wants the latest
// figures calls Pipeline::RefreshLook() first (the daemon does, under its
// lock).
void CopySnapshot(const Pipeline& pipeline, PipelineSnapshot* out);
// Step 2, without the lock: the figures computed from what step 1 copied
// (agreement, movers, PPI, coverage).
void CompleteSnapshot(PipelineSnapshot* out);
// Both, for a caller whose pipeline no other thread touches (replay,
// tests, benchmarks).
void TakeSnapshot(const Pipeline& pipeline, PipelineSnapshot* out);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_H_
