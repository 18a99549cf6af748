// QueryMovers: per A/B arm (a variant of a configured experiment), the most
// frequent queries and their statistics per series, for "which queries
// moved" (issue 26): the tracked queries of a treatment and its baseline,
// ranked by their contribution to the difference (metrics/movers.h).
//
// Only the experiments' primary series are tracked (ExperimentConfig::
// primary; the union over experiments): what a verdict is read from, and
// memory and CPU in proportion to them, not to every series.
//
// State is per shard (input partition), as every figure of the pipeline
// (Aggregator), so it moves with its partition (EncodeShard, DecodeShard,
// DropShard): each shard keeps a QuerySummary of `capacity` counters per
// arm and the arm's scored lists. Reading merges the shards (Movers()): a
// query's counts, error bounds and statistics are summed over the shards
// that track it; the merged summary keeps the `capacity` largest counts.
// Memory: shards x arms x capacity counters (QuerySummary::bytes()).
//
// Ownership: keeps pointers to the experiments and the aggregator (for
// group -> variant), which must outlive it. Thread-safety: none; the
// pipeline's owner serializes access.
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_QUERY_MOVERS_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_QUERY_MOVERS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_codec.h"
#include "base/json_writer.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "metrics/movers.h"
#include "metrics/query_summary.h"

namespace rankwatch::stream {

// What QueryMovers::Movers() reads, copied (QueryMovers::CopyCounts), so
// that the movers are computed from it without the pipeline (the daemon
// copies under its lock and computes after): per shard held and arm, its
// summary and lists. Bounded by the configuration: shards x arms x
// statistics.tracked_queries counters of the tracked series each. A plain
// value; not thread-safe, read by any number of threads once written.
struct QueryMoversCounts {
  struct Shard {
    std::vector<metrics::QuerySummary> summaries;  // [arm]
    std::vector<int64_t> lists;                    // [arm]
  };
  std::vector<std::string> arms;  // Variants of every experiment.
  std::vector<size_t> tracked;    // Aggregator series kept, ascending.
  int32_t capacity = 0;
  metrics::MoverOptions options;
  std::vector<Shard> shards;

  // The movers of `treatment` against `baseline` on aggregator series
  // `series`, as QueryMovers::Movers() gives them.
  std::vector<metrics::QueryMover> Movers(std::string_view baseline,
                                          std::string_view treatment,
                                          size_t series) const;
};

class QueryMovers {
 public:
  // `capacity` counters per arm and shard (0: nothing is tracked); the
  // movers' intervals at confidence `level` (statistics.level).
  QueryMovers(const std::vector<config::ExperimentConfig>* experiments,
              const Aggregator* aggregator, int32_t capacity,
              double level = metrics::kDefaultLevel);
  QueryMovers(const QueryMovers&) = delete;
  QueryMovers& operator=(const QueryMovers&) = delete;

  // One scored list of aggregator group `group` for query `query` (empty:
  // it counts among the arm's lists, no query is tracked), one value per
  // aggregator series (NaN where the list lacks one), in input partition
  // `shard`. Lists of variants in no experiment are ignored.
  // No allocation once the query texts have fit their counters.
  void Add(uint32_t group, std::string_view query,
           std::span<const double> values, int32_t shard);

  // A shard's state: per arm (by variant name) its lists and tracked
  // queries with their statistics (series by SeriesSpec::state_key; those
  // no longer computed are dropped). Another capacity keeps the largest
  // counts that fit.
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits = {});
  void DropShard(int32_t shard);

  // The movers of `treatment` against experiment `experiment`'s baseline on
  // aggregator series `series`, over every shard held; empty when the
  // series is not a tracked (primary) one.
  std::vector<metrics::QueryMover> Movers(
      size_t experiment, std::string_view treatment, size_t series,
      const metrics::MoverOptions& options) const;
  // The same with the configured level and the default min_lists.
  std::vector<metrics::QueryMover> Movers(size_t experiment,
                                          std::string_view treatment,
                                          size_t series) const {
    return Movers(experiment, treatment, series, options_);
  }

  // Copies what Movers() reads into `out` (QueryMoversCounts).
  void CopyCounts(QueryMoversCounts* out) const;

  int32_t capacity() const { return capacity_; }
  // The shards holding state.
  std::vector<int32_t> HeldShards() const;
  size_t bytes() const;

 private:
  struct Shard {
    std::vector<std::unique_ptr<metrics::QuerySummary>> summaries;  // [arm]
    std::vector<int64_t> lists;                                     // [arm]
  };
  int32_t ArmOf(uint32_t group);
  int32_t ArmIndex(std::string_view variant) const;
  Shard& ShardAt(int32_t shard);
  // The arm's summaries merged over the shards, and its lists.
  std::unique_ptr<metrics::QuerySummary> Merged(size_t arm,
                                                int64_t* lists) const;

  const std::vector<config::ExperimentConfig>* experiments_;
  const Aggregator* aggregator_;
  int32_t capacity_;
  metrics::MoverOptions options_;
  std::vector<size_t> tracked_;     // Aggregator series kept, ascending.
  std::vector<double> values_;      // Scratch: the tracked values of a list.
  std::vector<std::string> arms_;   // Variants of every experiment.
  std::vector<int32_t> group_arm_;  // Aggregator group -> arm; -2 unknown.
  std::vector<std::unique_ptr<Shard>> shards_;
};

// How many movers a JSON document lists (docs/statistics.md, "Query
// movers"): the first 20 by |contribution|, Movers()'s order.
inline constexpr size_t kQueryMoversInJson = 20;

// Whether each mover's object carries its Welch interval. The two documents
// differ only there (docs/metrics-reference.md): replay's JSON has
// `ci_lower` and `ci_upper` (null when untested), /api/v1/summary not.
enum class MoverInterval { kOmit, kInclude };

// The `query_movers` array of a comparison, the same writer for
// /api/v1/summary and replay's JSON: the first kQueryMoversInJson movers,
// each {query, baseline_count, treatment_count, baseline_mean,
// treatment_mean, difference, share, contribution, [ci_lower, ci_upper,]
// p_value, p_value_bh, tested, significant}; numbers that are not finite (a
// p-value untested, a mean without lists) are null.
void WriteQueryMoversJson(std::span<const metrics::QueryMover> movers,
                          MoverInterval interval, JsonWriter* out);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_QUERY_MOVERS_H_
