// Aggregator: running means of every configured series (a measure at a
// cutoff, or uncut) per group of labels (variant and configured segments),
// over the whole run and over sliding event-time windows, without keeping
// per-request values.
//
// For each group and series it keeps a RunningStats (count, mean, variance,
// sum, sum of squares; mergeable), a histogram over [0, 1] in tenths (what
// Prometheus histograms need), and a ring of time buckets holding sums and
// sums of squares, from which any configured window is summed exactly to the
// bucket granularity. Values outside [0, 1] (clicks_k, first_click_rank)
// land in the histogram's +Inf bucket. Label cardinality is bounded: values
// beyond the allow-list or the configured maximum fold into "other" and are
// counted.
//
// State is kept per shard (an input partition: what moves between replicas
// in a rebalance) and merged: every figure read through group() is the sum
// of the shards' states, so a shard can be encoded into a checkpoint,
// dropped when its partition leaves, and restored where it arrives
// (EncodeShard, DropShard, DecodeShard). Folding a value in updates its
// shard only; the merged view is rebuilt from the shards when it is read
// after a change (at most once per look or scrape, not per request: the
// hot path writes one copy), so it holds what the shards hold, nothing
// more, also after one is dropped.
//
// Owned and driven by one thread (the pipeline); readers must synchronize
// externally (the daemon snapshots under a mutex).
#ifndef RANKWATCH_DAEMON_STREAM_AGGREGATION_AGGREGATOR_H_
#define RANKWATCH_DAEMON_STREAM_AGGREGATION_AGGREGATOR_H_

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "base/string_index.h"
#include "config/config.h"
#include "daemon/stream/aggregation/window_ring.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "metrics/measures.h"
#include "metrics/running_stats.h"

namespace rankwatch::stream {

// One aggregated series: a measure at a cutoff, or without one.
struct SeriesSpec {
  // A measure's series; unused (kNdcg) for a field's (field >= 0).
  metrics::Measure measure;
  int cutoff_index;       // Into the evaluator's cutoffs; -1 for uncut.
  int32_t cutoff;         // The cutoff k, or 0 when uncut.
  std::string trec_name;  // P_5, map, ndcg_cut_10, recip_rank, judged_10...
  std::string k_label;    // "5", or "all" when uncut.
  // What the series' values mean, as checkpoints name it: trec_name, plus
  // whatever else changes the values (the pipeline appends the metric
  // definitions). A checkpoint's series restores into the series with the
  // same key only.
  std::string state_key;
  // The `measure` label of every output: "ndcg", or a field's name.
  std::string name = {};
  // How human outputs name it (config::SeriesLabel): the user's spelling
  // in experiments ("MRR"), else trec_name.
  std::string label = {};
  // A field of results events (schema.fields): its index there; its values
  // are the events' (FinalizedRequest::fields), not the evaluator's.
  int32_t field = -1;
  // Which way is better: the measure's (metrics::HigherIsBetter) or the
  // field's `better`.
  bool higher_is_better = true;
  // A field's tau of the always-valid tests (its `mixture_sd`, in its own
  // units); 0: statistics.mixture_sd, in units of the measure.
  double mixture_sd = 0;
  // A quality measure (metrics::IsQualityMeasure): has a verdict and is in
  // the Benjamini-Hochberg family. Never a field.
  bool quality = false;
};

// The series of `measures` at `cutoffs` (sorted), in measure order, each
// measure's cut series in ascending k, then its uncut series; then one
// uncut series per field of `fields` (schema.fields), in their order.
std::vector<SeriesSpec> BuildSeries(
    const std::vector<metrics::Measure>& measures,
    const std::vector<int32_t>& cutoffs,
    const std::vector<config::ResultFieldConfig>& fields = {});

// The configuration's name of a series (primary, guardrails).
config::SeriesRef RefOf(const SeriesSpec& s);

// Upper bounds of the histogram buckets (Prometheus `le`), +Inf implied.
inline constexpr std::array<double, 10> kHistogramBounds = {
    0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
using Histogram = std::array<int64_t, kHistogramBounds.size() + 1>;

// The histogram bucket of `v`: Prometheus buckets are upper-inclusive, so
// it is the number of bounds below `v` (what lower_bound finds; NaN: 0).
// Without a branch on the value: a binary search mispredicted on about
// every other value of a list's 36 series (perf annotate, issue 45). The
// bounds are k / 10, so floor(10 v) - 1 bounds are below `v` for certain
// (the next bound is at least 0.1 above it, far beyond any rounding of
// 10 v) and at most two more: two compares instead of ten (40 of the 95
// instructions per series of Aggregator::Add before).
inline size_t HistogramBucket(double v) {
  // kHistogramBounds (each k / 10) and two bounds above every value.
  static constexpr std::array<double, 12> kPadded = [] {
    std::array<double, 12> padded{};
    for (size_t i = 0; i < kHistogramBounds.size(); ++i) {
      padded[i] = kHistogramBounds[i];
    }
    padded[10] = padded[11] = std::numeric_limits<double>::infinity();
    return padded;
  }();
  static_assert([] {
    for (size_t i = 0; i < kHistogramBounds.size(); ++i) {
      if (kHistogramBounds[i] != static_cast<double>(i + 1) / 10) return false;
    }
    return kHistogramBounds.size() == 10;
  }());
  const double t = v * 10;
  // NaN and t < 1 start at 0; t >= 11 (v > 1, infinity) at 10.
  const size_t surely_below = !(t >= 1) ? 0
                              : t >= 11 ? 10
                                        : static_cast<size_t>(t) - 1;
  return surely_below + (kPadded[surely_below] < v ? 1 : 0) +
         (kPadded[surely_below + 1] < v ? 1 : 0);
}

// Upper bounds (seconds) of the time-to-first-click histogram, +Inf
// implied: from a click on an instant answer to one after a long read.
inline constexpr std::array<double, 11> kFirstClickBounds = {
    0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800};

// The event-time delays from results events to their first click.
struct FirstClickHistogram {
  std::array<int64_t, kFirstClickBounds.size() + 1> counts{};
  int64_t count = 0;
  double sum_seconds = 0;
  void Add(int64_t delay_ms);
  void Merge(const FirstClickHistogram& other);
};

// The `window` label of each window in `windows_ms` ("5m", "1h30m"),
// written as the configuration writes durations (FormatDuration): one
// definition for /metrics, the summary and replay.
std::vector<std::string> WindowLabels(std::span<const int64_t> windows_ms);

// The state of one group of labels.
struct GroupStats {
  std::string variant;
  std::vector<std::string> segment_values;  // Parallel to config segments.
  int64_t requests = 0;  // Finalized, including those left out by policy.
  int64_t without_relevant = 0;            // Finalized with R = 0.
  std::vector<metrics::RunningStats> all;  // Per series, whole run.
  std::vector<Histogram> histograms;       // Per series.
  WindowRing windows;
  FirstClickHistogram first_click;  // Impression mode: clicked requests.
};

// The totals of series `series` of `g`: since start (its RunningStats)
// when `window` < 0, else over windows_ms[window] ending at `now_ms`.
WindowTotals TotalsOf(const GroupStats& g, size_t series, int window,
                      std::span<const int64_t> windows_ms, int64_t now_ms);

// What one process has folded into a group since it started (not what
// it restored, and kept when a shard is dropped): the source of the
// exported counters, which must never go backwards whatever partitions
// come and go (docs/metrics-reference.md).
struct GroupFlow {
  // Per series: what the counters need, plain sums (no Welford update on
  // the hot path).
  struct Sums {
    int64_t count = 0;
    double sum = 0;
    double sum_of_squares = 0;
  };
  int64_t requests = 0;
  std::vector<Sums> all;              // Per series.
  std::vector<Histogram> histograms;  // Per series.
  FirstClickHistogram first_click;
};

class Aggregator {
 public:
  static constexpr std::string_view kOther = "other";
  static constexpr std::string_view kUnknown = "unknown";  // Absent segment.

  Aggregator(const config::AggregationConfig& config,
             std::vector<SeriesSpec> series);
  // Its indexes hold views into its own storage: not copyable or movable.
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;

  // The group of a served list's labels, created on first use. Values
  // outside the allow-list, or past the cardinality limit, become "other".
  uint32_t ResolveGroup(std::string_view variant,
                        std::span<const std::string_view> segment_values);

  // Counts a finalized request of `group`; when `values` is non-empty (one
  // per series) they are folded in at event time `time_ms`. A NaN value
  // (a measure undefined for the request, such as first_click_rank without
  // a click) is left out of its series: count, mean, histogram and windows.
  // `shard` is the input partition the request came from (0 when there is
  // one, as in replay): small non-negative numbers.
  void Add(uint32_t group, int64_t time_ms, std::span<const double> values,
           bool without_relevant, int32_t shard = 0);
  // Records the delay from a finalized request of `group` to its first
  // click (FinalizedRequest::first_click_delay_ms >= 0).
  void AddFirstClick(uint32_t group, int64_t delay_ms, int32_t shard = 0);

  // The state of `shard` (every group it has touched), for a checkpoint.
  // Series are written by name and windows with their bucket width, so a
  // checkpoint of another configuration restores what still applies.
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  // Restores `shard` from EncodeShard()'s output, replacing what it held:
  // series by name (a series the checkpoint lacks starts empty, one no
  // longer configured is dropped), windows when the bucket width is
  // unchanged. Label values resolve as new events' do (bounded). On error
  // (a corrupt record, or one beyond `limits`) the shard is left empty.
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits = {});
  // DecodeShard in two steps, so that a record a later section refuses
  // creates nothing: StageShard reads the shard into `staged` and changes
  // nothing here (labels are checked: valid UTF-8, within max_id_length,
  // no more groups than the label bounds allow); CommitShard resolves its
  // groups (creating those new here) and installs it.
  struct StagedShard {
    struct Group {
      std::string variant;
      std::vector<std::string> segment_values;
      GroupStats stats;
      // StageShardChanges: stats.windows holds the changed buckets, and
      // whether they replace the whole ring.
      bool windows_whole = true;
    };
    int32_t shard = -1;
    int64_t newest_time_ms = INT64_MIN;
    std::vector<Group> groups;
  };
  [[nodiscard]] Status StageShard(int32_t shard, ByteReader* in,
                                  const CheckpointLimits& limits,
                                  StagedShard* staged) const;
  void CommitShard(StagedShard staged);

  // Checkpoints proportional to change (Pipeline::EncodeShardDelta, delta
  // version 2): EncodeShard's layout, but each group's windows hold only
  // the buckets changed since the shard's previous record
  // (WindowRing::EncodeChanges); every other figure of a group is a few
  // numbers per series, written whole. MarkShardRecorded says the shard's
  // state is in a record (after a base or a delta): changes count from
  // there.
  void EncodeShardChanges(int32_t shard, ByteWriter* out) const;
  void MarkShardRecorded(int32_t shard);
  // Reads EncodeShardChanges' output as StageShard reads EncodeShard's;
  // CommitShardChanges applies it onto the shard as the records before
  // it restored it: each written group's figures replace what the shard
  // held, its window buckets are applied (WindowRing::Apply). Two written
  // groups that resolve to one here (label bounds lower than the
  // writer's) cannot be applied bucket by bucket: an error, the shard
  // unchanged (the caller restores the records before and reads the
  // input again).
  [[nodiscard]] Status StageShardChanges(int32_t shard, ByteReader* in,
                                         const CheckpointLimits& limits,
                                         StagedShard* staged) const;
  [[nodiscard]] Status CommitShardChanges(StagedShard staged);
  // Forgets `shard` (its partition moved to another replica): the merged
  // figures then hold the other shards' state only.
  void DropShard(int32_t shard);
  // Whether `shard` holds state.
  bool HasShard(int32_t shard) const;

  const std::vector<SeriesSpec>& series() const { return series_; }
  size_t num_groups() const { return groups_.size(); }
  // Group i's labels, without the merged figures (no rebuild).
  const std::string& variant(size_t i) const { return groups_[i].variant; }
  const std::vector<std::string>& segment_values(size_t i) const {
    return groups_[i].segment_values;
  }
  // The merged state of group i (rebuilt here when stale: callers hold the
  // owner's lock, as for every read).
  const GroupStats& group(size_t i) const {
    if (merged_stale_) RebuildMerged();
    return groups_[i];
  }
  // What this process folded into group i (see GroupFlow).
  const GroupFlow& flow(size_t i) const { return flow_[i]; }
  // The configured windows, in milliseconds.
  const std::vector<int64_t>& windows_ms() const { return windows_ms_; }
  // Width of the windows' time buckets (aggregation.bucket), milliseconds.
  int64_t bucket_ms() const { return bucket_ms_; }
  // Newest event time folded in (the "now" of the windows), or INT64_MIN.
  int64_t newest_time_ms() const { return newest_time_ms_; }
  // Label values folded into "other": index 0 is the variant, then one per
  // segment label.
  const std::vector<int64_t>& overflowed() const { return overflowed_; }

  // A configuration reload. Every group is kept with its request counts
  // and first-click histogram; series i of `series` takes the running
  // stats, histogram and window buckets of the old series from[i] (-1:
  // starts empty); windows and bucket width follow `config` (see
  // WindowRing::Remapped). The new max_variants and max_segment_values
  // bound values seen from now on. Labels (segments, allow-lists) must be
  // unchanged: the caller refuses such a reload.
  void Reconfigure(const config::AggregationConfig& config,
                   std::vector<SeriesSpec> series, std::span<const int> from);
  // Keeps a place for each of `variants` (the variants experiments and
  // interleaving name: config::NamedVariants) in the variant dimension, so
  // that they are never folded into "other", however many unnamed variants
  // come first: those fill what is left of aggregation.max_variants. Named
  // variants beyond it (a reload naming new ones after the slots filled)
  // are kept too; the loader refuses more named variants than the limit.
  // With an allow-list, nothing to do (the loader checks they are in it).
  void ReserveVariants(std::span<const std::string> variants);

 private:
  // Interns the values of one label dimension under its bounds.
  class Dimension {
   public:
    Dimension(std::vector<std::string> allowed, int32_t max_values);
    // index_ holds views into values_: a copy would point into the original.
    Dimension(const Dimension&) = delete;
    Dimension& operator=(const Dimension&) = delete;
    // Returns the value's index; sets *overflow when folded into "other".
    uint32_t Resolve(std::string_view value, bool* overflow);
    const std::string& value(uint32_t i) const { return values_[i]; }
    // How many values it can ever hold, "other" included.
    uint64_t capacity() const;
    void set_max_values(int32_t max_values) { max_values_ = max_values; }
    // Interns `value` whatever the limit (ReserveVariants).
    void Reserve(std::string_view value);

   private:
    bool allow_list_;
    int32_t max_values_;
    std::deque<std::string> values_;  // Stable storage for index keys.
    StringIndex index_;
    uint32_t other_ = UINT32_MAX;
  };

  // One shard's groups, indexed by group id (a group it never touched has
  // a default entry: requests 0), and its newest event time folded in.
  struct Shard {
    std::deque<GroupStats> groups;
    int64_t newest_time_ms = INT64_MIN;
  };

  GroupStats NewGroupStats(const GroupStats& labels) const;
  // EncodeShard (`changes` false) and EncodeShardChanges.
  void EncodeGroups(int32_t shard, bool changes, ByteWriter* out) const;
  // StageShard (`changes` false) and StageShardChanges.
  [[nodiscard]] Status Stage(int32_t shard, ByteReader* in,
                             const CheckpointLimits& limits, bool changes,
                             StagedShard* staged) const;
  // How many series and segment labels a shard's record names.
  struct EncodedShape {
    uint64_t series;
    uint64_t segments;
  };
  // One group of a shard's record: its labels, then its figures, the
  // current series i taking the encoded series from[i].
  void StageGroup(ByteReader* in, const CheckpointLimits& limits,
                  std::span<const int> from, EncodedShape shape, bool changes,
                  StagedShard::Group* staged) const;
  // The most groups the label bounds allow (saturating).
  uint64_t MaxGroups() const;
  // `shard`'s entry of `group`, created (with the shard) on first use.
  GroupStats& ShardGroup(int32_t shard, uint32_t group);
  // The merged view from the shards.
  void RebuildMerged() const;

  std::vector<SeriesSpec> series_;
  int64_t bucket_ms_;
  int64_t span_ms_;
  std::vector<int64_t> windows_ms_;
  std::deque<Dimension> dimensions_;         // Variant, then segments; stable.
  std::vector<std::string> segment_labels_;  // aggregation.segments.
  std::vector<int64_t> overflowed_;
  // Merged over the shards (and the group labels); rebuilt when stale.
  mutable std::deque<GroupStats> groups_;
  mutable bool merged_stale_ = false;
  std::deque<GroupFlow> flow_;                  // Parallel to groups_.
  std::vector<std::unique_ptr<Shard>> shards_;  // Indexed by shard.
  std::deque<std::string> group_keys_;          // Packed dimension indices.
  StringIndex group_index_;
  std::string key_scratch_;
  int64_t newest_time_ms_ = INT64_MIN;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_AGGREGATION_AGGREGATOR_H_
