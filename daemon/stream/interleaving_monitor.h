// InterleavingMonitor: live team-draft interleaving experiments
// (`interleaving:` in the YAML). Each finalized list of an interleaved
// variant has an outcome (metrics::CreditClicks: no click, tie, or a win of
// one team); the monitor counts outcomes per experiment over the whole run
// and over the configured sliding event-time windows, and on each look
// computes per window the preference of the challenger and the sign test,
// and for the whole run the always-valid sequential test and the verdict.
// Formulas: metrics/interleaving.h and docs/metrics.md.
//
// Outcomes are filed at the event time the list's join window closed
// (FinalizedRequest::closed_ms), like the aggregator's means, so windows
// depend on the events only, not on processing order.
//
// Counts are kept per shard (input partition) and merged, as the
// aggregator's are (see Aggregator): a shard's counts are checkpointed,
// dropped and restored with its partition. The sequential tests and
// verdicts are the process's: they look at the merged counts.
//
// Ownership: keeps a pointer to the experiments, which must outlive it.
// Thread-safety: none; the pipeline's owner serializes access.
#ifndef RANKWATCH_DAEMON_STREAM_INTERLEAVING_MONITOR_H_
#define RANKWATCH_DAEMON_STREAM_INTERLEAVING_MONITOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregator.h"
#include "daemon/stream/experiments.h"
#include "metrics/interleaving.h"

namespace rankwatch::stream {

// What the monitor knows of one experiment.
struct InterleavingState {
  const config::InterleavingConfig* config = nullptr;
  metrics::InterleavingCounts all;  // Since the state began (merged shards).
  // What this process counted since it started (not restored, kept when a
  // shard is dropped): the exported counters' source.
  metrics::InterleavingCounts flow;
  // Per configured window (parallel to windows_ms()), at the latest look.
  std::vector<metrics::InterleavingCounts> windows;
  metrics::SequentialPreferenceTest sequential;
  int verdict = 0;  // +1 the challenger is better, -1 worse, 0 otherwise.
  VerdictState state = VerdictState::kNoData;
  // The outcomes in event-time buckets: per outcome (as in Series below)
  // a 0/1 value per list, so a window's counts are sums.
  WindowRing ring;
};

class InterleavingMonitor {
 public:
  // `experiments` must outlive the monitor. Windows and their bucket width
  // come from `aggregation`, the prior and level from `statistics`.
  InterleavingMonitor(
      const std::vector<config::InterleavingConfig>* experiments,
      const config::AggregationConfig& aggregation,
      const config::StatisticsConfig& statistics);
  InterleavingMonitor(const InterleavingMonitor&) = delete;
  InterleavingMonitor& operator=(const InterleavingMonitor&) = delete;

  // Counts one impression of experiment `experiment` (an index into the
  // configured list) whose window closed at `time_ms`.
  void Add(int32_t experiment, int64_t time_ms,
           metrics::InterleavingOutcome outcome, int32_t shard = 0);

  // Checkpoints of one shard's counts (see Aggregator::EncodeShard): by
  // experiment name, variant and teams; an experiment whose configuration
  // changed, or that is gone, starts afresh.
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in);
  void DropShard(int32_t shard);

  // A look: windows ending at `now_ms` (event time), the sequential tests
  // and the verdicts.
  void Update(int64_t now_ms);

  // After a configuration reload, takes from `previous` (the monitor of
  // the old configuration, whose experiments must still be alive) the
  // state of every experiment with the same name, variant and teams: its
  // counts and window buckets (see WindowRing::Remapped), and with
  // unchanged statistics its sequential test and verdict.
  void AdoptState(const InterleavingMonitor& previous, bool same_statistics);

  const std::vector<InterleavingState>& experiments() const { return states_; }
  const std::vector<int64_t>& windows_ms() const { return windows_ms_; }
  // The outcomes of experiment `s` over the window of `window_ms` ending at
  // `now_ms` (event time), from its buckets; what Update() stores.
  static metrics::InterleavingCounts WindowCounts(const InterleavingState& s,
                                                  int64_t now_ms,
                                                  int64_t window_ms);
  double alpha() const { return alpha_; }
  double prior_shape() const { return prior_shape_; }

 private:
  // The WindowRing series: one 0/1 value per outcome.
  enum Series : size_t {
    kFirstWin = 0,
    kSecondWin,
    kTie,
    kNoClick,
    kNumSeries
  };

  // One experiment's counts in one shard.
  struct ShardCounts {
    metrics::InterleavingCounts all;
    WindowRing ring;
  };
  using Shard = std::vector<ShardCounts>;  // Parallel to states_.

  Shard NewShard() const;
  // The merged counts and rings from the shards.
  void RebuildMerged();

  std::vector<std::unique_ptr<Shard>> shards_;  // Indexed by shard.
  std::vector<int64_t> windows_ms_;
  int64_t bucket_ms_;
  int64_t span_ms_;
  double alpha_;
  double prior_sd_;
  double prior_shape_;
  std::vector<InterleavingState> states_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_INTERLEAVING_MONITOR_H_
