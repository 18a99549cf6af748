// ExperimentMonitor: live A/B comparisons of the configured experiments
// (`experiments:` in the YAML). For each experiment, treatment, series (a
// measure at a cutoff) and window ("all" and each configured sliding
// window) it computes Welch's test of the treatment's mean against the
// baseline's; for the whole run (window "all") also the mSPRT's
// always-valid p-value and confidence sequence, which stay honest however
// often they are read, a verdict (better, worse, inconclusive) from that
// sequence, and Benjamini-Hochberg adjusted p-values over the experiment's
// family of comparisons. Per experiment it checks the sample ratio (SRM):
// the variants' traffic against the configured split, by Pearson's
// chi-square and a sequential multinomial test.
//
// The unit of analysis: without schema.unit every list is an independent
// value and an arm is a variant's lists summed over its segment groups,
// read from the aggregator. With schema.unit, lists are clustered by unit:
// the monitor keeps, per variant, sums per unit-hash bucket (Add), and every
// comparison uses the cluster-robust variance of metrics/clustered.h; the
// SRM counts are units, each counted the first time it is seen (UnitTable,
// bounded by statistics.max_tracked_units). A sliding window would cut
// units' histories, so with a unit only window "all" is compared.
//
// Update() takes a "look": it recomputes every comparison and feeds the
// sequential tests. Looks walk every group and bucket, so the pipeline
// takes one per second of wall time and one when it finishes, not one per
// request; the sequential guarantees hold for any schedule of looks.
//
// Ownership: keeps pointers to the experiments and the aggregator, which
// must outlive it. Thread-safety: none; the pipeline's owner serializes
// access (the daemon holds its mutex both while feeding the pipeline and
// while scraping).
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregator.h"
#include "daemon/stream/unit_table.h"
#include "metrics/ab_stats.h"
#include "metrics/srm.h"

namespace rankwatch::stream {

// What the latest look concluded for one comparison of window "all".
enum class VerdictState {
  kNoData,        // The sequential test has not had a look with data yet.
  kInconclusive,  // The always-valid interval contains 0.
  kBetter,        // It excludes 0 on the better side.
  kWorse,         // It excludes 0 on the worse side.
  kSampleRatioMismatch,  // The experiment fails its SRM check: no verdict.
};
inline constexpr int kNumVerdictStates = 5;
std::string_view VerdictStateName(VerdictState s);

// A change of a comparison's verdict state seen by a look, for the status
// page's markers: the look's event time ("now" of its windows), the look's
// number (ExperimentMonitor::looks()), the state before and after.
struct VerdictChange {
  int64_t event_ms = 0;
  int64_t look = 0;
  VerdictState from = VerdictState::kNoData;
  VerdictState to = VerdictState::kNoData;
};
// A comparison keeps its latest changes only (the oldest are dropped), so
// a verdict flapping at the edge of its interval cannot grow the state.
inline constexpr size_t kMaxVerdictChanges = 32;
// Appends `change` to `changes` (oldest first), dropping the oldest beyond
// kMaxVerdictChanges.
void RecordVerdictChange(std::vector<VerdictChange>* changes,
                         const VerdictChange& change);

// One row: treatment vs baseline of one experiment, for one series and
// window.
struct Comparison {
  const config::ExperimentConfig* experiment = nullptr;
  size_t experiment_index = 0;
  std::string treatment;
  size_t series = 0;  // Into Aggregator::series().
  int window = -1;    // Into Aggregator::windows_ms(); -1 for "all".
  // A quality measure (not `judged`): has a verdict and is in the BH family.
  bool quality = false;
  bool primary = false;  // One of the experiment's primary series.
  metrics::ArmSummary baseline_arm;
  metrics::ArmSummary treatment_arm;
  metrics::WelchComparison welch;
  // Window "all" only (has_sequential): the running mSPRT, its latest look
  // alone, the BH-adjusted Welch p-value and the verdict.
  bool has_sequential = false;
  metrics::SequentialTest sequential;
  metrics::SequentialLook look;
  double p_value_bh = 1;
  int verdict = 0;  // +1 better, -1 worse, 0 otherwise.
  VerdictState state = VerdictState::kNoData;
  // The latest changes of `state`, oldest first (at most
  // kMaxVerdictChanges).
  std::vector<VerdictChange> changes;
};

// The sample-ratio check of one experiment.
struct SrmState {
  std::vector<std::string> variants;  // Baseline, then treatments.
  std::vector<double> shares;         // Expected, summing to 1.
  std::vector<int64_t> counts;        // Units (or lists) per variant.
  metrics::SrmChiSquare chi_square;
  metrics::SequentialSrmTest sequential{std::vector<double>{}};
  bool detected = false;  // sequential p-value < statistics.srm_level.
  // Units not counted because statistics.max_tracked_units was reached.
  bool capped = false;
  // Lists whose unit was first seen in another variant of the experiment
  // (a broken assignment, or a unit id shared across variants).
  int64_t unit_conflicts = 0;
};

// A unit counted for the sample ratio, in the shard it was first seen in.
struct ShardUnit {
  uint64_t unit_hash = 0;
  uint32_t experiment = 0;  // Into the configured experiments.
  uint8_t position = 0;     // Its variant among the experiment's.
};

class ExperimentMonitor {
 public:
  // `experiments` and `aggregator` must outlive the monitor. With `units`
  // (schema.unit set), comparisons are clustered by unit, fed by Add().
  ExperimentMonitor(const std::vector<config::ExperimentConfig>* experiments,
                    const config::StatisticsConfig& statistics,
                    const Aggregator* aggregator, bool units = false);
  ExperimentMonitor(const ExperimentMonitor&) = delete;
  ExperimentMonitor& operator=(const ExperimentMonitor&) = delete;

  // Records one finalized list of aggregator group `group` served to the
  // unit with `unit_hash`; `values` (one per series) when it was scored,
  // empty when left out. Only needed with units; a no-op otherwise.
  // `shard`: the input partition of the list (see Aggregator).
  void Add(uint32_t group, uint64_t unit_hash, std::span<const double> values,
           int32_t shard = 0);

  // Checkpoints of one shard's per-unit-bucket sums and of the units it
  // brought to the sample-ratio counts (with units; without, the
  // comparisons and the SRM read the aggregator, whose shards hold the
  // state): by variant and series name; a variant or series no longer
  // configured is dropped, and another statistics.unit_buckets starts the
  // sums afresh. A unit is counted once per process, in the shard where
  // it was first seen: the counts are the distinct units of the shards
  // held, exact over replicas when a unit's events stay in one partition
  // (docs/operations.md). The sequential tests are the process's: after a
  // restore their next look starts from the restored sums.
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in);
  void DropShard(int32_t shard);

  // Takes a look at the state, windows ending at `now_ms` (event time, as
  // the `_mean` gauges).
  void Update(int64_t now_ms);

  // After a configuration reload, takes from `previous` (the monitor of
  // the old configuration, whose experiments must still be alive;
  // `previous_series` were its aggregator's series) what stays valid: the
  // count of looks and, without units and with unchanged statistics, for
  // every experiment whose name, baseline, treatments and split are
  // unchanged, its SRM state and each window-"all" comparison's sequential
  // state whose series (measure and cutoff) is still computed. Everything
  // else starts afresh (with units, the per-unit sums too).
  void AdoptState(const ExperimentMonitor& previous,
                  const std::vector<SeriesSpec>& previous_series,
                  bool same_statistics);

  // Experiment-major, then treatment, series, window ("all" first).
  const std::vector<Comparison>& comparisons() const { return comparisons_; }
  // Parallel to the configured experiments.
  const std::vector<SrmState>& srm() const { return srm_; }
  // Looks taken so far.
  int64_t looks() const { return looks_; }
  double level() const { return level_; }
  bool units() const { return units_; }

  // With units: the variants of all experiments and their per-bucket sums.
  struct ArmBuckets {
    std::string variant;
    std::vector<int64_t> counts;  // [bucket]: scored lists.
    std::vector<double> sums;     // [series * buckets + bucket].
    // [series * buckets + bucket]: the values summed, which is `counts`
    // but for a series a list can lack (first_click_rank: NaN).
    std::vector<int64_t> series_counts;
  };
  const std::vector<ArmBuckets>& arm_buckets() const { return arms_; }
  // What this process folded into the arms since it started (not what it
  // restored, and kept when a shard is dropped): the exported counters'
  // source. Parallel to arm_buckets().
  const std::vector<ArmBuckets>& flow_arm_buckets() const { return flow_arms_; }
  int32_t num_buckets() const { return num_buckets_; }

 private:
  // Where an arm takes part: experiment and position among its variants.
  struct Membership {
    size_t experiment;
    uint8_t position;
  };

  // Per series and window (index 0 = "all"), the summary of `variant`
  // summed over its groups.
  void SummarizeVariant(const std::string& variant, int64_t now_ms,
                        std::vector<metrics::ArmSummary>* out) const;
  // Per series, the clustered summary of `variant` (window "all" only).
  void SummarizeBuckets(const std::string& variant,
                        std::vector<metrics::ArmSummary>* out) const;
  void Summarize(const std::string& variant, int64_t now_ms,
                 std::vector<metrics::ArmSummary>* out) const;
  // The arm of aggregator group `group`, or -1 if its variant is in no
  // experiment.
  int32_t ArmOf(uint32_t group);
  void CountUnit(size_t arm, uint64_t unit_hash, size_t shard);
  // Counts one unit first seen in a shard (the SRM counts and units_seen_);
  // true when it was new.
  bool CountNewUnit(uint64_t unit_hash, size_t experiment, uint8_t* position);
  // Recounts the SRM's units from the shards' units (after a restore or a
  // drop).
  void RebuildUnits();
  void EncodeUnits(int32_t shard, ByteWriter* out) const;
  void DecodeUnits(ByteReader* in, std::vector<ShardUnit>* units) const;
  void UpdateSrm();
  void UpdateFamilies();

  // Zeroed per-bucket sums of every arm (the shape of arms_).
  std::vector<ArmBuckets> EmptyArms() const;
  void RebuildArms();

  const std::vector<config::ExperimentConfig>* experiments_;
  const Aggregator* aggregator_;
  // With units: each shard's arms (parallel to arms_), which merge into
  // arms_.
  std::vector<std::unique_ptr<std::vector<ArmBuckets>>> shard_arms_;
  std::vector<ArmBuckets> flow_arms_;
  double level_;
  double srm_level_;
  bool units_;
  int32_t num_buckets_;
  std::vector<Comparison> comparisons_;
  std::vector<SrmState> srm_;
  std::vector<ArmBuckets> arms_;
  std::vector<std::vector<Membership>> memberships_;  // Parallel to arms_.
  std::vector<int32_t> group_arm_;  // Aggregator group -> arm; -2 unknown.
  UnitTable units_seen_;
  int64_t max_units_;
  // With units: per shard, the units first seen in it (the SRM counts'
  // source when shards move).
  std::vector<std::vector<ShardUnit>> shard_units_;
  std::vector<metrics::ArmSummary> baseline_scratch_;
  std::vector<metrics::ArmSummary> treatment_scratch_;
  std::vector<double> family_p_;
  std::vector<double> family_adjusted_;
  std::vector<size_t> family_rows_;
  int64_t looks_ = 0;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_H_
