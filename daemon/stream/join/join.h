// The join: where results events meet their judgments. Two modes share this
// interface (ImpressionJoin, QrelsJoin); both hand every scored list to a
// JoinListener and report, through the same listener, when an event they
// retained is no longer needed (so the daemon can commit past it).
//
// A join is driven by one thread; it is not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_JOIN_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/byte_codec.h"
#include "base/clock.h"
#include "base/status.h"
#include "base/string_index.h"
#include "config/config.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/decode/events.h"
#include "daemon/stream/join/pending_store.h"
#include "daemon/stream/join/watermark.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

// Counters of what happened to events in the join.
// What each counts is stated in event time in docs/configuration.md ("When
// an event counts"); only late_*, evicted, over_limit_judgments,
// judgments_after_finalization and dropped_on_rebalance depend on arrival
// order.
struct JoinCounters {
  int64_t finalized = 0;  // Lists scored (incl. R = 0 ones).
  // Judgments that arrived behind the watermark with no request pending
  // that they could still join (beyond allowed_lateness).
  int64_t late_judgments = 0;
  int64_t late_results = 0;       // Results events after their window closed.
  int64_t duplicate_results = 0;  // Further results events per request.
  int64_t evicted = 0;            // Finalized early: state limit reached.
  // Judgments no results event claimed: stamped outside
  // [served - early_tolerance, served + window] of their request, or their
  // results never came.
  int64_t orphaned_judgments = 0;
  // Judgments stamped inside their request's window that arrived after it
  // was finalized (closed by an idle stream's wall clock, evicted, or at
  // the window's edge within early_tolerance): the list was scored without
  // them. Depends on arrival order (FinalizedMemory says how long a
  // finalized request is remembered; a forgotten one's count as orphaned).
  int64_t judgments_after_finalization = 0;
  int64_t unjudged = 0;              // qrels: query without judgments.
  int64_t dropped_on_rebalance = 0;  // Pending requests of revoked partitions.
  int64_t table_full = 0;            // qrels: judgments refused, table full.
  int64_t replayed = 0;            // Re-read events already reflected: skipped.
  int64_t replayed_judgments = 0;  // Of which judgments.
  // Requests finalized from a results event a previous owner had already
  // read and may have finalized too, after its last commit (at-least-once;
  // none when it stopped cleanly: EventOrigin::maybe_counted).
  int64_t reprocessed = 0;
  // Judgments beyond join.max_judgments_per_request of one request.
  int64_t over_limit_judgments = 0;
  // Judgments whose claimed rank (schema.position) is not where their doc
  // was served: counted when their request is scored.
  int64_t position_mismatches = 0;
  // schema.impression_kind: lists built from impressions (query records
  // without hits), such records with no impression in their window (not
  // scored; their judgments count as orphaned), and impressions of a
  // request whose record listed its hits (the hits are the list).
  int64_t ranked_by_impressions = 0;
  int64_t unranked_requests = 0;
  int64_t ignored_impressions = 0;
};

// Why a request was finalized.
enum class FinalizeCause {
  kWindowClosed,  // The watermark passed its window (or qrels delay).
  kIdle,          // The stream went idle; wall time closed the window.
  kEvicted,       // The pending-request limit was reached.
  kEndOfInput,    // Replay reached the end, or FinishAll().
};

// What one judge said of a served list, as if it were the only judge.
struct JudgeGrades {
  std::vector<metrics::Grade> ranked;  // Per rank; kUnjudged where it did not.
  std::vector<metrics::Grade> judged;  // Every doc it judged.
};

// A served list ready to score. Spans are valid during the callback only.
struct FinalizedRequest {
  std::string_view request_id;
  uint32_t group = 0;
  uint64_t unit_hash = 0;  // ResultsEvent::unit_hash of the served list.
  // ResultsEvent::covariate of the served list; NaN when it has none.
  double covariate = std::numeric_limits<double>::quiet_NaN();
  // ResultsEvent::fields of the served list (schema.fields).
  FieldValues fields = kNoFieldValues;
  int64_t served_ms = 0;
  // Event time the aggregates file it under: when its window closed
  // (served + window; served + delay in qrels mode). It depends only on the
  // events, not on processing order, so replay and the daemon agree.
  int64_t closed_ms = 0;
  FinalizeCause cause = FinalizeCause::kWindowClosed;
  // Grade per rank, rank 1 first. With judges, per judges.combine: the
  // grade of the first judge of judges.names that labelled the doc, or
  // every judge's labels pooled.
  std::span<const metrics::Grade> ranked;
  std::span<const metrics::Grade> judged;  // Grades of all judged docs.
  // With judges: per judge, in judges.names order, its own grades
  // (each judge's labels combined by join.combine). Empty without judges.
  std::span<const JudgeGrades> judges;
  // Impression mode: the grade per rank from the judgments that may be
  // clicks (not of a metrics.click_exclude_kinds kind); equal to `ranked`
  // when none is excluded. Empty in qrels mode.
  std::span<const metrics::Grade> clicks;
  // Impression mode: event time from the results event to the earliest
  // click (a judgment in `clicks` at or above the relevance threshold) on
  // a served doc, at least 0; -1 without a click (and in qrels mode).
  int64_t first_click_delay_ms = -1;
  // The input partition whose state it belongs to (PendingRequest::shard).
  int32_t shard = 0;
  // The results event's query id; empty without one.
  std::string_view query_id;
  // Interleaved traffic: ResultsEvent::interleaving and teams.
  int32_t interleaving = -1;
  std::span<const uint8_t> teams;
};

class JoinListener {
 public:
  virtual ~JoinListener() = default;
  virtual void OnFinalized(const FinalizedRequest& request) = 0;
  // An event the join retained (see Join::OnResults) is no longer needed.
  virtual void OnReleased(EventOrigin origin) = 0;
};

class Join {
 public:
  virtual ~Join() = default;

  // Feeds one decoded event. `group` is the served list's label group.
  // Returns true when the join keeps state that depends on the event (it
  // then calls OnReleased(origin) once that state is gone), false when the
  // event is fully processed (used, counted as late, duplicate...).
  virtual bool OnResults(const ResultsEvent& event, uint32_t group,
                         EventOrigin origin) = 0;
  virtual bool OnJudgments(const JudgmentEvent& event, EventOrigin origin) = 0;

  // A hint, before the event is decoded: the state of the request keyed
  // `key` in `shard` is about to be looked up (the Kafka message key, which
  // producers set to the request id to co-partition both topics). Its
  // bucket of the pending store's index is fetched while the event
  // decodes, not when the join looks it up (a cache miss per event at
  // hundreds of thousands of pending requests, perf, issue 45). Another
  // key costs a hash and a wasted prefetch, never a wrong result.
  virtual void Prefetch(int32_t shard, std::string_view key) = 0;
  // Lets wall time close windows when the stream is idle. Call regularly.
  virtual void AdvanceWallClock() = 0;
  // Finalizes everything pending (end of a replay).
  virtual void FinishAll() = 0;
  // Forgets the pending state fed from `partitions`, without scoring it and
  // without OnReleased (another consumer re-reads those events).
  virtual void DropPartitions(std::span<const int32_t> partitions) = 0;
  // Records the watermark `source`'s previous owner committed, so that the
  // re-read events of that source it had finalized are recognized
  // (EventOrigin::replayed). It closes no window here.
  virtual void RestoreWatermark(int32_t source, int64_t watermark_ms) = 0;
  // Event sources (EventOrigin::partition, e.g. Kafka topic-partitions):
  // an added source holds event time back until it delivers events or is
  // reported idle (caught up with its end). See Watermark.
  virtual void AddSource(int32_t source) = 0;
  virtual void SetSourceIdle(int32_t source, bool idle) = 0;
  // Adopts new bounds on a configuration reload: max_pending_requests,
  // max_judgments_per_request and max_table_entries of `limits`; the rest
  // is ignored (it cannot change live). State already held is kept even
  // beyond a lowered bound: new state waits until it shrinks.
  virtual void SetLimits(const config::JoinConfig& limits) = 0;

  // Checkpoints (see Pipeline::EncodeShard). A shard is an input partition
  // number: its sources are that partition of each topic
  // (EventOrigin::SourceOf). EncodeShard writes the event-time progress of
  // its sources and its pending requests; DecodeShard restores them into
  // this join (on a corrupt record it leaves the shard empty and fails);
  // DropShard forgets them without scoring (the partition moved, its state
  // lives on in the checkpoint).
  virtual void EncodeShard(int32_t shard, const GroupCodec& groups,
                           ByteWriter* out) const = 0;
  // `limits` bound the restored requests as live ones are (ids, counts,
  // event times, max_pending_requests).
  [[nodiscard]] virtual Status DecodeShard(
      int32_t shard, const GroupCodec& groups, ByteReader* in,
      const CheckpointLimits& limits = {}) = 0;
  // After a DecodeShard whose codec staged the groups (GroupCodec::Read
  // returned kStagedGroup + i): the group of each such request of `shard`
  // becomes groups[i].
  virtual void ResolveStagedGroups(int32_t shard,
                                   std::span<const uint32_t> groups) = 0;
  virtual void DropShard(int32_t shard) = 0;
  // Checkpoints proportional to change (Pipeline::EncodeShardDelta).
  // StartShardTracking makes the shard's store remember what changes from
  // now on (called when its state is written whole). EncodeShardDelta
  // writes the event-time progress, the keys of the requests released
  // since the last cut that an earlier record holds, and the requests
  // created or changed since, then cuts (a new epoch); it writes nothing
  // and returns false when the shard is not tracked. ApplyShardDelta
  // applies such a section onto the shard's requests (restored from the
  // records before it): deletions, then replacements. A deletion of a
  // request the shard does not hold means the section does not follow
  // the state it is applied to: an error, as corrupt input is (the shard
  // is then in no defined state: the caller drops or restores it again).
  virtual void StartShardTracking(int32_t shard) = 0;
  virtual bool EncodeShardDelta(int32_t shard, const GroupCodec& groups,
                                ByteWriter* out) = 0;
  [[nodiscard]] virtual Status ApplyShardDelta(
      int32_t shard, const GroupCodec& groups, ByteReader* in,
      const CheckpointLimits& limits) = 0;
  // What each position of a pending request's field values means
  // (schema.fields, as SeriesSpec::state_key), written with them: a
  // checkpoint restored under other fields maps each value by its key,
  // and drops a value no field of the new configuration has.
  virtual void SetFieldKeys(std::vector<std::string> keys) = 0;
  // The judges (judges.names, in precedence order) and how a doc's grade
  // comes from their labels (FinalizedRequest::judges, ranked). Call
  // before any event; without judges every judgment counts alike.
  virtual void SetJudges(const config::JudgesConfig& judges) = 0;

  virtual const JoinCounters& counters() const = 0;
  virtual int64_t pending_requests() const = 0;
  virtual int64_t table_entries() const = 0;
  // Event time before which events are late (INT64_MIN before any event):
  // a window [.., end] closes once watermark_ms() > end. Moves with events
  // only (Watermark::value()); an idle stream closes windows further.
  virtual int64_t watermark_ms() const = 0;
  // What to commit for `source`'s successor: the later of watermark_ms()
  // (but not past the source's shard's own) and the one restored for it
  // (whatever either owner finalized, the next one skips).
  virtual int64_t commit_watermark_ms(int32_t source) const = 0;
};

// What both joins share: event time from a Watermark over the event
// sources, the counters, and finalizing whatever the watermark makes due
// when wall time or an idle source moves it (ProcessDue, per join).
class WatermarkedJoin : public Join {
 public:
  void Prefetch(int32_t shard, std::string_view key) override {
    if (const PendingStore* s = store().Find(shard))
      s->Prefetch(HashBytes(key));
  }
  void AdvanceWallClock() override {
    if (watermark_.AdvanceWallClock()) ProcessDue(FinalizeCause::kIdle);
  }
  void RestoreWatermark(int32_t source, int64_t watermark_ms) override {
    watermark_.Restore(source, watermark_ms);
  }
  void AddSource(int32_t source) override { watermark_.AddSource(source); }
  void SetSourceIdle(int32_t source, bool idle) override {
    watermark_.SetIdle(source, idle);
    ProcessDue(FinalizeCause::kWindowClosed);
  }
  const JoinCounters& counters() const override { return counters_; }
  void EncodeShard(int32_t shard, const GroupCodec& groups,
                   ByteWriter* out) const override;
  [[nodiscard]] Status DecodeShard(
      int32_t shard, const GroupCodec& groups, ByteReader* in,
      const CheckpointLimits& limits = {}) override;
  void ResolveStagedGroups(int32_t shard,
                           std::span<const uint32_t> groups) override;
  void DropShard(int32_t shard) override;
  void StartShardTracking(int32_t shard) override {
    store().Shard(shard).StartTracking();
  }
  bool EncodeShardDelta(int32_t shard, const GroupCodec& groups,
                        ByteWriter* out) override;
  [[nodiscard]] Status ApplyShardDelta(int32_t shard, const GroupCodec& groups,
                                       ByteReader* in,
                                       const CheckpointLimits& limits) override;
  void SetFieldKeys(std::vector<std::string> keys) override {
    field_keys_ = std::move(keys);
  }
  void SetJudges(const config::JudgesConfig& judges) override;
  int64_t watermark_ms() const override { return watermark_.value(); }
  int64_t commit_watermark_ms(int32_t source) const override {
    // Never past the source's own shard: the replica's watermark moves
    // when sources leave (a revoked partition no longer holds it; with
    // every one revoked, none does, and it jumps to the newest event
    // time), past what a shard assigned back has finalized since.
    const int64_t own = std::min(
        watermark_.value(), watermark_.value(EventOrigin::PartitionOf(source)));
    return std::max(own, watermark_.restored(source));
  }

 protected:
  // `clock` must outlive the join.
  WatermarkedJoin(const config::JoinConfig& config, const Clock* clock)
      : watermark_(config.allowed_lateness.count(), config.idle_timeout.count(),
                   clock) {}

  // Finalizes (or scores) everything the watermark has made due, in
  // every shard.
  void ProcessDue(FinalizeCause cause) {
    for (int32_t shard = 0; shard < store().num_shards(); ++shard) {
      ProcessDueIn(shard, cause);
    }
  }
  // The same in one shard, by its own event time (Watermark::closing).
  virtual void ProcessDueIn(int32_t shard, FinalizeCause cause) = 0;
  // The pending requests, per shard.
  virtual ShardedPendingStore& store() = 0;

  // What a join record says before its requests (DecodeShard's and
  // ApplyShardDelta's): its sources' progress and how the writer's fields
  // and judges map to this configuration's.
  struct ShardHeader {
    int64_t results_progress = 0;
    int64_t judgments_progress = 0;
    std::vector<int32_t> field_map;
    JudgeMap judges;
  };
  void DecodeShardHeader(ByteReader* in, int format,
                         const CheckpointLimits& limits,
                         ShardHeader* header) const;
  void WriteShardHeader(int32_t shard, int format, ByteWriter* out) const;
  // Registers the shard's sources with the progress the record holds.
  void RestoreShardProgress(int32_t shard, const ShardHeader& header);
  // Decodes one pending request of a record into `store`, remembering it
  // when its group is staged (ResolveStagedGroups).
  void DecodeRequest(ByteReader* in, const GroupCodec& groups, int32_t shard,
                     PendingStore* store, int format, const ShardHeader& header,
                     const CheckpointLimits& limits);

  // The subclasses observe events into the watermark and count outcomes.
  Watermark watermark_;
  JoinCounters counters_;
  std::vector<std::string> field_keys_;  // SetFieldKeys.
  // SetJudges: judges.names (empty: none), the place of judges.default
  // (-1: none) and judges.combine.
  std::vector<std::string> judge_names_;
  int32_t default_judge_ = -1;
  config::JudgeCombine judge_combine_ = config::JudgeCombine::kPrecedence;
  // Per judge, the scratch FinalizedRequest::judges points into.
  std::vector<JudgeGrades> judge_grades_;
  // The requests of the record being restored whose groups are staged:
  // ResolveStagedGroups resolves those, not every request of the shard,
  // so that a delta's restore costs what the delta holds (a chain applies
  // many deltas onto a state of hundreds of thousands of requests). Slots
  // keep their addresses until released, and a record releases (a
  // delta's deletions) before it decodes.
  std::vector<PendingRequest*> staged_requests_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_JOIN_H_
