// InterleavingMonitor: live team-draft interleaving and multileaving
// experiments (`interleaving:` in the YAML, 2 to 8 teams). Each finalized
// list of an interleaved variant credits its clicks to the teams of their
// positions (metrics::CreditTeams); every pair of teams (X, Y) then has an
// outcome (no click, tie, or a win of one of them: metrics/multileaving.h).
// The monitor counts outcomes per experiment and pair over the whole run
// and over the configured sliding event-time windows, and per team its
// credited clicks; on each look it computes per pair the always-valid
// sequential test, and per experiment the Benjamini-Hochberg adjustment
// across pairs, the verdicts, the Copeland ranking and the winner.
// Formulas: metrics/interleaving.h, metrics/multileaving.h,
// docs/statistics.md ("Multileaving").
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
#ifndef RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_MONITOR_H_
#define RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_MONITOR_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/experiments/experiments.h"
#include "metrics/interleaving.h"
#include "metrics/multileaving.h"

namespace rankwatch::stream {

// What the monitor knows of one experiment.
struct InterleavingState {
  const config::InterleavingConfig* config = nullptr;
  // The first pair of teams (the incumbent and the first challenger): for
  // a two-team experiment, the whole experiment.
  metrics::InterleavingCounts all;  // Since the state began (merged shards).
  // What this process counted since it started (not restored, kept when a
  // shard is dropped): the exported counters' source.
  metrics::InterleavingCounts flow;
  // Per configured window (parallel to windows_ms()), at the latest look.
  std::vector<metrics::InterleavingCounts> windows;
  metrics::SequentialPreferenceTest sequential;
  int verdict = 0;  // +1 the challenger is better, -1 worse, 0 otherwise.
  VerdictState state = VerdictState::kNoData;
  // The outcomes in event-time buckets: per pair three series (first
  // wins, second wins, tie; PairIndex order), then no_click; a 0/1 value
  // per list, so a window's counts are sums.
  WindowRing ring;

  // Every pair and team (pair 0 is the one above).
  metrics::MultileavingCounts counts;       // As `all`.
  metrics::MultileavingCounts flow_counts;  // As `flow`.
  // As `windows`; per-team clicks are not windowed (zero here).
  std::vector<metrics::MultileavingCounts> window_counts;
  // Per pair (PairIndex order), the sequential test and, at the latest
  // look, its state.
  std::vector<metrics::SequentialPreferenceTest> pair_tests;
  std::vector<VerdictState> pair_states;
  // At the latest look: per pair the BH-adjusted verdict, the Copeland
  // ranking and the winner.
  metrics::MultileavingAnalysis analysis;

  InterleavingState(const config::InterleavingConfig* c, size_t num_windows,
                    double prior_sd, WindowRing window_ring);
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
  // configured list) whose window closed at `time_ms`: rank r came from
  // team teams[r] and was clicked when clicks[r] >= threshold.
  void AddImpression(int32_t experiment, int64_t time_ms,
                     std::span<const uint8_t> teams,
                     std::span<const metrics::Grade> clicks,
                     metrics::Grade threshold, int32_t shard = 0);
  // Counts one impression of a two-team outcome: a win is one click
  // credited to the winner, a tie one click to each of the first two teams.
  void Add(int32_t experiment, int64_t time_ms,
           metrics::InterleavingOutcome outcome, int32_t shard = 0);

  // Checkpoints of one shard's counts (see Aggregator::EncodeShard): by
  // experiment name, variant and teams; an experiment whose configuration
  // changed, or that is gone, starts afresh. Records of the two-team
  // format ("ILV1") restore too, without per-team clicks (they start at 0).
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  // A delta's section ("ILV3", Pipeline::EncodeShardDelta): the counts
  // whole, each experiment's window only the buckets changed since the
  // shard's previous record (WindowRing::EncodeChanges), which
  // MarkShardRecorded starts afresh. DecodeShard reads it onto the shard
  // as the records before restored it.
  void EncodeShardChanges(int32_t shard, ByteWriter* out) const;
  void MarkShardRecorded(int32_t shard);
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits = {});
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
  // The same for every pair.
  static metrics::MultileavingCounts MultiWindowCounts(
      const InterleavingState& s, int64_t now_ms, int64_t window_ms);
  double alpha() const { return alpha_; }
  double prior_shape() const { return prior_shape_; }

 private:
  // The WindowRing series of a pair: one 0/1 value per outcome, at
  // 3 * pair + Series; no_click is the last series, at 3 * pairs.
  enum Series : size_t { kFirstWin = 0, kSecondWin, kTie, kPairSeries };
  static size_t NumSeries(const config::InterleavingConfig& c) {
    return kPairSeries * metrics::NumPairs(c.teams.size()) + 1;
  }

  // One experiment's counts in one shard.
  struct ShardCounts {
    metrics::MultileavingCounts counts;
    WindowRing ring;
  };
  using Shard = std::vector<ShardCounts>;  // Parallel to states_.

  Shard NewShard() const;
  // Counts one impression with `credit` per team.
  void Record(size_t experiment, int64_t time_ms,
              std::span<const int64_t> credit, int32_t shard);
  // A shard's section: whole ("ILV2") or changes ("ILV3").
  void EncodeCounts(int32_t shard, bool changes, ByteWriter* out) const;
  // The formats of a shard's section: "ILV1" (two teams, no per-team
  // clicks), "ILV2" and "ILV3" (a delta's: the window's changes).
  enum class Format { kTwoTeams, kTeams, kTeamsChanges };
  // Reads one experiment's record of a checkpoint into `restored`.
  void DecodeExperiment(ByteReader* in, Format format,
                        const CheckpointLimits& limits, Shard* restored) const;
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

#endif  // RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_MONITOR_H_
