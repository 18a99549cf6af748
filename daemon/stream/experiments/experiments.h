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
// Regression adjustment (schema.covariate set): each list may carry a
// pre-exposure covariate x. Per variant and series the monitor keeps the
// moments of the (y, x) pairs whose y and x are both finite
// (metrics::CovariateMoments) and, with units, per-bucket sums of y and x
// over the same pairs, in every shard (checkpointed with it) and summed
// over them. Each window-"all" comparison then also has regression-adjusted
// figures (AdjustedComparison): metrics/regression_adjustment.h and
// docs/statistics.md, "Regression adjustment".
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
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_EXPERIMENTS_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_EXPERIMENTS_H_

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "base/json_writer.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/experiments/unit_table.h"
#include "metrics/ab_stats.h"
#include "metrics/regression_adjustment.h"
#include "metrics/srm.h"

namespace rankwatch::stream {

// A label group's arm in an experiment, as the monitors cache it per group
// (ExperimentMonitor, QueryMovers): not looked up yet, or in no arm.
inline constexpr int32_t kUnknownArm = -2;
inline constexpr int32_t kNoArm = -1;

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

// A look's sequential test of the adjusted arms starts once each arm has
// this many pairs (and, with units, this many non-empty buckets): the
// plug-in theta and variance are far from their level before
// (metrics/regression_adjustment.h, AdjustedArms).
inline constexpr int64_t kAdjustedWarmUp = 20;

// The regression-adjusted figures of one window-"all" comparison, from the
// lists that carry a finite covariate (and a value of the series).
struct AdjustedComparison {
  // kInvalidInput also before any pair (the initial state).
  metrics::AdjustmentStatus status = metrics::AdjustmentStatus::kInvalidInput;
  // The pooled within-arm slope of y on x; 0 unless status is kAdjusted.
  double theta = 0;
  // The adjusted difference's squared standard error over the unadjusted
  // row's (Comparison::welch): about 1 - rho^2, the share of the variance
  // left; NaN when either is not positive and finite. Its square root is
  // the ratio of the fixed-horizon interval widths (up to the t quantiles).
  double variance_ratio = std::numeric_limits<double>::quiet_NaN();
  // The adjusted arms (count: pairs; mean at the pooled covariate mean).
  metrics::ArmSummary baseline_arm;
  metrics::ArmSummary treatment_arm;
  // Welch on the adjusted arms: the difference (the OLS coefficient of T in
  // y ~ 1 + T + x), relative difference, interval and p-value.
  metrics::WelchComparison welch;
  // The mSPRT fed with the adjusted arms from kAdjustedWarmUp on, and its
  // latest look (status kTooFewSamples before the warm-up).
  metrics::SequentialTest sequential;
  metrics::SequentialLook look;
};

// The adjusted figures by name, in the order and with the names that
// replay's JSON, /api/v1/summary (`adjusted` objects) and the
// rankwatch_ab_adjusted_<name> gauges all use: one definition of each
// number. NaN where a figure has no value (the difference while an arm has
// no pairs; the relative difference when undefined); the intervals are
// (-inf, +inf) without inference. `sequential_*` are the running figures
// (minimum p-value, intersection of the intervals), `sequential_look_*`
// the latest look's alone, whose interval always holds `difference`.
struct NamedFigure {
  const char* name;
  double value;
};
inline constexpr size_t kNumAdjustedFigures = 14;
std::array<NamedFigure, kNumAdjustedFigures> AdjustedFigures(
    const AdjustedComparison& a);
// The `adjusted` object of replay's JSON and of /api/v1/summary (the same
// writer for both): `status`, the AdjustedFigures (null when not finite),
// `sequential_looks`, and the pairs per arm as `baseline_count` and
// `treatment_count`.
void WriteAdjustedJson(const AdjustedComparison& a, JsonWriter* out);

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
  // The event time ("now" of the look) when the running sequential test
  // last saw its estimate leave its interval, an effect that changed
  // (metrics::SequentialTest::changes()); -1 when it never did.
  int64_t effect_changed_ms = -1;
  // Window "all" with schema.covariate set: the regression-adjusted
  // figures (the verdict and BH stay those of the unadjusted row).
  bool has_adjusted = false;
  AdjustedComparison adjusted;
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
  // With a `covariate` (schema.covariate, its field path), window "all"
  // comparisons are also regression-adjusted, fed by Add().
  ExperimentMonitor(const std::vector<config::ExperimentConfig>* experiments,
                    const config::StatisticsConfig& statistics,
                    const Aggregator* aggregator, bool units = false,
                    std::string covariate = {});
  ExperimentMonitor(const ExperimentMonitor&) = delete;
  ExperimentMonitor& operator=(const ExperimentMonitor&) = delete;

  // Records one finalized list of aggregator group `group` served to the
  // unit with `unit_hash`; `values` (one per series) when it was scored,
  // empty when left out; `covariate` its pre-exposure value (NaN: none).
  // Only needed with units or a covariate; a no-op otherwise. `shard`: the
  // input partition of the list (see Aggregator).
  // `event_ms`: the list's event time, which sets the experiment's first
  // list (FirstListMs).
  void Add(uint32_t group, uint64_t unit_hash, std::span<const double> values,
           int32_t shard = 0,
           double covariate = std::numeric_limits<double>::quiet_NaN(),
           int64_t event_ms = kNoEventTime);

  static constexpr int64_t kNoEventTime = std::numeric_limits<int64_t>::max();
  // The event time of experiment `experiment`'s first list (over its
  // variants and the shards held), or kNoEventTime before any: the start
  // of min_duration (docs/statistics.md, "Minimum sample"). Each shard
  // keeps its variants' earliest list and checkpoints it (EncodeShard), so
  // the start survives restarts, rollouts and rebalances as the sums do;
  // the minimum over shards does not depend on the order events arrive
  // in, so a replica holding every partition agrees with replay. A shard
  // restored from a record without it (written before it was kept) starts
  // again from its next list. Kept over a reload for variants still
  // configured.
  int64_t FirstListMs(size_t experiment) const;

  // Checkpoints of one shard's per-unit-bucket sums and of the units it
  // brought to the sample-ratio counts (with units; without, the
  // comparisons and the SRM read the aggregator, whose shards hold the
  // state): by variant and series name; a variant or series no longer
  // configured is dropped, and another statistics.unit_buckets starts the
  // sums afresh. A unit is counted once per process, in the shard where
  // it was first seen: the counts are the distinct units of the shards
  // held, exact over replicas when a unit's events stay in one partition
  // (docs/operations.md). With a covariate, also the shard's covariate
  // moments (and, with units, bucket sums) per variant and series; they are
  // dropped when restored under another schema.covariate, schema.unit or
  // unit_buckets. A monitor without a covariate writes, and records
  // written before covariates are, "ARM2", which restore
  // without them. The sequential tests are the process's: after a restore
  // their next look starts from the restored sums. Also the shard's first
  // lists (FirstListMs), each time checked against `limits` as a live
  // event's (experiments_first_list.cc has the encoding, which a version
  // before it reads and leaves out).
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  [[nodiscard]] Status DecodeShard(
      int32_t shard, ByteReader* in,
      const CheckpointLimits& limits = CheckpointLimits());
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
  // state whose series (measure and cutoff) is still computed; with the
  // same covariate also the covariate moments of each variant and series
  // whose values mean the same (SeriesSpec::state_key) and the adjusted
  // sequential state. Everything else starts afresh (with units, the
  // per-unit sums too).
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

  // With a covariate: per variant of any experiment, the moments of the
  // (y, x) pairs per series and, with units, their per-bucket sums.
  struct CovariateArm {
    std::string variant;
    std::vector<metrics::CovariateMoments> moments;  // [series]
    // With units, [series * buckets + bucket]: over the same pairs as
    // `moments`.
    std::vector<double> y_sums;
    std::vector<double> x_sums;
    std::vector<int64_t> counts;
  };
  const std::vector<CovariateArm>& covariate_arms() const { return cov_arms_; }
  // What this process folded into the covariate arms since it started (not
  // what it restored, and kept when a shard is dropped), as
  // flow_arm_buckets() for the unadjusted sums: the exported counters'
  // source. Parallel to covariate_arms().
  const std::vector<CovariateArm>& flow_covariate_arms() const {
    return flow_cov_arms_;
  }
  // schema.covariate; empty without regression adjustment.
  const std::string& covariate() const { return covariate_; }
  bool adjusted() const { return !covariate_.empty(); }

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
  // `first` (parallel to variants_) gets the record's first lists.
  void DecodeUnits(ByteReader* in, const CheckpointLimits& limits,
                   std::vector<ShardUnit>* units,
                   std::vector<int64_t>* first) const;
  // The name of the units section's entry holding the first lists: not
  // UTF-8, so no configured experiment has it (the configuration must be
  // UTF-8), and a version before first lists reads it as an experiment no
  // longer configured and leaves it out.
  static constexpr std::string_view kFirstListsEntry =
      "\xff"
      "first lists";
  // The first lists (experiments_first_list.cc): a shard's, folded in by
  // Add; their entry in the units section; the process's minimum.
  void AddFirstList(size_t arm, size_t shard, int64_t event_ms);
  // The shard's first lists, or null when it has none.
  const std::vector<int64_t>* ShardFirstLists(int32_t shard) const;
  void EncodeFirstLists(const std::vector<int64_t>& first,
                        ByteWriter* out) const;
  void DecodeFirstLists(ByteReader* in, const CheckpointLimits& limits,
                        std::vector<int64_t>* first) const;
  void SetShardFirstLists(size_t shard, std::vector<int64_t> first);
  void RebuildFirstLists();
  void UpdateSrm();
  void UpdateFamilies();

  // Zeroed per-bucket sums of every arm (the shape of arms_).
  std::vector<ArmBuckets> EmptyArms() const;
  void RebuildArms();
  // The same for the covariate state (the shape of cov_arms_).
  std::vector<CovariateArm> EmptyCovariateArms() const;
  void RebuildCovariate();
  // AdoptState's part for the covariate state (without units).
  void AdoptCovariate(const ExperimentMonitor& previous,
                      const std::vector<SeriesSpec>& previous_series);
  void AddCovariate(size_t arm, uint64_t unit_hash,
                    std::span<const double> values, double x, size_t shard);
  void EncodeCovariate(int32_t shard, ByteWriter* out) const;
  // Reads the covariate section of a record whose series are mapped by
  // `from` (see DecodeShard) into `restored` (null: none kept).
  void DecodeCovariate(
      ByteReader* in, uint64_t buckets, const std::vector<int>& from,
      uint64_t num_series,
      std::unique_ptr<std::vector<CovariateArm>>* restored) const;
  const CovariateArm* FindCovariateArm(const std::string& variant) const;
  void UpdateAdjusted(Comparison* c) const;

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
  std::vector<ArmBuckets> arms_;  // With units; parallel to variants_.
  // The variants of all experiments, each once.
  std::vector<std::string> variants_;
  std::vector<std::vector<Membership>> memberships_;  // Parallel to variants_.
  // The earliest list's event time per variant over the shards held, and
  // each shard's (empty: none), which merge into it by their minimum.
  std::vector<int64_t> first_list_ms_;  // Parallel to variants_.
  std::vector<std::vector<int64_t>> shard_first_;
  std::vector<int32_t> group_arm_;  // Aggregator group -> variant; -2 unknown.
  // With a covariate: the summed state (parallel to variants_) and each
  // shard's, which merge into it.
  std::string covariate_;
  std::vector<CovariateArm> cov_arms_;
  std::vector<std::unique_ptr<std::vector<CovariateArm>>> shard_cov_;
  std::vector<CovariateArm> flow_cov_arms_;  // Parallel to cov_arms_.
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

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_EXPERIMENTS_H_
