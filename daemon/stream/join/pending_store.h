// PendingStore: the requests a join holds until their window closes, indexed
// by key (request_id) and ordered by deadline.
//
// Requests live in a pool of reusable slots: a finalized request's strings
// and vectors keep their capacity for the next one, so steady-state joining
// does not allocate. The key index is an open-addressing table with
// backward-shift deletion. The deadline order is a binary heap with lazy
// deletion: an entry is stale once its slot's generation moved (Schedule
// and Release bump it), which PeekDue checks in a per-slot array without
// touching the request (a cache miss per request closing otherwise).
//
// Change tracking (checkpoints proportional to change, docs/operations.md
// "Durable state"): once StartTracking() was called, the store remembers
// which requests were created or found (Find, Create: the join changes
// every request it finds) since the last cut, and the keys of the released
// ones that an earlier record may hold. It costs a compare per Find: each
// request carries the epoch it last changed in (PendingRequest::
// change_epoch), and its slot joins the changed list only the first time
// in an epoch (a push into a vector that keeps its capacity).
//
// Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_PENDING_STORE_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_PENDING_STORE_H_

#include <cstdint>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_codec.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/decode/events.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

// One judgment held by a pending request, as received: which judgments
// count, and how they combine, is decided from these when the request is
// finalized (by event time, so not by arrival order). Its doc id is
// judged_docs[begin, end).
struct JudgmentRecord {
  uint32_t begin;
  uint32_t end;
  int64_t time_ms;       // The judgment event's time.
  metrics::Grade grade;  // Unused when `withdraws`.
  bool withdraws;        // "relevance": null.
  bool replayed;         // See EventOrigin::replayed.
  bool click_excluded;   // Judgment::click_excluded: never a click.
  // Judgment::judge: its place in judges.names; -1 without judges.
  int8_t judge;
  int32_t claimed_position;  // Judgment::claimed_position; 0: none.
  bool impression;           // Judgment::impression.
};

struct PendingRequest {
  std::string key;       // request_id (or a synthetic key).
  std::string query_id;  // The table to score against (qrels); movers.
  std::string docs;      // Result doc ids, concatenated.
  std::vector<uint32_t> doc_ends;  // End offset of each doc in `docs`.
  std::string judged_docs;
  std::vector<JudgmentRecord> records;
  std::vector<EventOrigin> origins;  // The judgment events it retains.
  // Valid when has_results; source -1 when restored from a checkpoint (the
  // event is not retained: the checkpoint's offsets are past it).
  EventOrigin results_origin;
  uint32_t group = 0;
  // The input partition whose state it belongs to (EventOrigin::partition()
  // of the event that created it): what a checkpoint of that partition
  // holds and a rebalance moves.
  int32_t shard = 0;
  uint64_t unit_hash = 0;      // ResultsEvent::unit_hash.
  double covariate = 0;        // ResultsEvent::covariate (NaN: none).
  int32_t interleaving = -1;   // ResultsEvent::interleaving.
  bool has_results = false;    // In the padding after `interleaving`.
  std::vector<uint8_t> teams;  // ResultsEvent::teams.
  int64_t served_ms = 0;
  int64_t deadline_ms = 0;
  uint32_t slot = 0;  // Set and owned by PendingStore.
  // Set and owned by PendingStore: the tracking epoch of its last change,
  // with kCreatedInEpoch when it was created in that epoch (no earlier
  // record holds it, so its release needs no deletion). In the padding
  // after `slot`: no bytes per request.
  uint32_t change_epoch = 0;

  // ResultsEvent::fields (kNoFieldValues until SetFields gave it a value).
  const FieldValues& fields() const {
    return fields_ != nullptr ? *fields_ : kNoFieldValues;
  }
  void SetFields(const FieldValues& values);
  // Forgets the values (PendingStore::Create), keeping their storage.
  void ClearFields() {
    if (fields_ != nullptr) *fields_ = kNoFieldValues;
  }

  size_t num_docs() const { return doc_ends.size(); }
  std::string_view doc(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : doc_ends[i - 1];
    return std::string_view(docs).substr(begin, doc_ends[i] - begin);
  }
  std::string_view judged_doc(const JudgmentRecord& j) const {
    return std::string_view(judged_docs).substr(j.begin, j.end - j.begin);
  }
  // Rank - 1 of `doc` in the results, or -1.
  int32_t FindDoc(std::string_view doc) const;

 private:
  // schema.fields' values, out of line: 8 doubles inline cost every pending
  // request 64 bytes (a tenth of its memory, bench/README.md) whether
  // schema.fields is configured or not (it is empty by default). Allocated
  // the first time the slot's request carries a value and kept with the
  // slot (PendingStore reuses slots), so a steady stream allocates nothing.
  std::unique_ptr<FieldValues> fields_;
};

class PendingStore;

// Labels of an aggregator group in a checkpoint: the group ids of one
// process mean nothing to another, so requests carry their labels.
class GroupCodec {
 public:
  virtual ~GroupCodec() = default;
  virtual void Write(uint32_t group, ByteWriter* out) const = 0;
  // The group of the labels read (created, or folded into "other", as a new
  // event's would be), or kStagedGroup + i for the i-th labels a codec
  // stages until the whole record has decoded (Join::ResolveStagedGroups).
  virtual uint32_t Read(ByteReader* in) const = 0;
};
inline constexpr uint32_t kStagedGroup = 0x80000000u;

// A request's state in a checkpoint: what Finalize() needs, not the
// origins of the events (a checkpoint's offsets are past them).
// Format 2 adds the covariate after the deadline; format 1 (written before
// schema.covariate existed) has none; format 3 adds the values of
// schema.fields after it (a count, then the values up to the last one
// present); format 4 adds each judgment's judge (judges.names) as its
// place in the list the join's record names. The join's record says which
// (WatermarkedJoin::EncodeShard writes the oldest format that holds its
// requests, so that a version before covariates, fields or judges still
// reads the checkpoints of a configuration without them).
inline constexpr int kPendingRequestFormat = 4;
void EncodePendingRequest(const PendingRequest& r, const GroupCodec& groups,
                          ByteWriter* out, int format = kPendingRequestFormat);
// Reads a request encoded by EncodePendingRequest in `format` (1 to 3; a
// format-1 request has no covariate, one before 3 no field values: NaN) into
// `store` (a request with the same key is replaced) and schedules it. Fails
// `in` on corrupt input; returns the request or null.
// In format 3, value i goes to position field_map[i] (dropped when -1; a
// value past the map is corrupt input); an empty map keeps the positions.
// `judges` maps the judges the writer named to this configuration's.
struct JudgeMap {
  // The writer's judge i is this configuration's judge `to[i]` (-1: not
  // configured here: its judgments are dropped, as a new one would be
  // rejected). Empty: the record names no judges (format < 4).
  std::vector<int32_t> to;
  // The judge of a judgment the writer kept without one (written before
  // judges were configured): judges.default, or -1 to drop it. Unused
  // while no judges are configured (every judgment is kept, judge -1).
  int32_t unnamed = -1;
  bool judges_configured = false;
};
// `limits` bound it as a live request is bounded (ids, list and judgment
// counts, event times): a request beyond them fails `in`.
PendingRequest* DecodePendingRequest(ByteReader* in, const GroupCodec& groups,
                                     int32_t shard, PendingStore* store,
                                     int format = kPendingRequestFormat,
                                     std::span<const int32_t> field_map = {},
                                     const JudgeMap& judges = {},
                                     const CheckpointLimits& limits = {});

class PendingStore {
 public:
  PendingStore() = default;

  PendingRequest* Find(std::string_view key, uint64_t hash);
  // Brings the index bucket a Find(.., hash) starts at into the cache.
  void Prefetch(uint64_t hash) const {
    if (!index_.empty()) __builtin_prefetch(&index_[hash & index_mask_]);
  }
  // Creates an empty request with `key`, which must not be present.
  PendingRequest* Create(std::string_view key, uint64_t hash);
  // Sets (or moves) the request's deadline.
  void Schedule(PendingRequest* request, int64_t deadline_ms);
  // The request with the earliest deadline if that deadline <= `limit_ms`,
  // else null. The request stays in the store until Release().
  PendingRequest* PeekDue(int64_t limit_ms);
  // The request with the earliest deadline, or null when empty.
  PendingRequest* PeekEarliest() { return PeekDue(INT64_MAX); }
  // Removes the request; its slot is reused.
  void Release(PendingRequest* request);

  size_t size() const { return size_; }

  // Starts a tracking epoch (or a new one): what changed before is
  // forgotten; from now on changes and releases are remembered.
  void StartTracking();
  bool tracking() const { return tracking_; }
  // Calls f(const PendingRequest&) for each live request created or found
  // since the epoch started.
  template <typename F>
  void ForEachChanged(F f) const {
    for (uint32_t slot : changed_) {
      if (live_[slot] &&
          (SlotAt(slot).change_epoch & ~kCreatedInEpoch) == epoch_) {
        f(SlotAt(slot));
      }
    }
  }
  // The keys of the requests released since the epoch started that
  // existed before it: `released_count()` ByteWriter::String()s.
  std::string_view released_keys() const { return released_; }
  uint64_t released_count() const { return released_count_; }

  // Calls f(PendingRequest&) for every live request. f must not modify the
  // store; collect and Release() afterwards.
  template <typename F>
  void ForEach(F f) {
    for (size_t i = 0; i < num_slots_; ++i) {
      if (live_[i]) f(SlotAt(i));
    }
  }

 private:
  struct IndexEntry {
    uint64_t hash;
    uint32_t slot;  // UINT32_MAX: empty.
  };
  struct HeapEntry {
    int64_t deadline_ms;
    uint32_t slot;
    uint32_t generation;
    bool operator>(const HeapEntry& o) const {
      return deadline_ms > o.deadline_ms;
    }
  };

  static constexpr uint32_t kCreatedInEpoch = 0x80000000u;
  static constexpr size_t kSlotsPerChunk = 64;

  PendingRequest& SlotAt(size_t slot) {
    return chunks_[slot / kSlotsPerChunk][slot % kSlotsPerChunk];
  }
  const PendingRequest& SlotAt(size_t slot) const {
    return chunks_[slot / kSlotsPerChunk][slot % kSlotsPerChunk];
  }

  size_t FindIndex(std::string_view key, uint64_t hash) const;
  // Marks `r` changed in this epoch (`created`: and created in it).
  void Touch(PendingRequest& r, bool created) {
    if ((r.change_epoch & ~kCreatedInEpoch) != epoch_ && tracking_) {
      changed_.push_back(r.slot);
    }
    if (created) {
      r.change_epoch = epoch_ | kCreatedInEpoch;
    } else if ((r.change_epoch & ~kCreatedInEpoch) != epoch_) {
      r.change_epoch = epoch_;
    }
  }
  void GrowIndex();
  void EraseIndex(size_t pos);

  // The slots, in chunks: stable addresses without a heap block per
  // request (std::deque holds one object of this size per block, with a
  // malloc header, rounding and a map entry: 24 bytes a request).
  std::vector<std::unique_ptr<PendingRequest[]>> chunks_;
  size_t num_slots_ = 0;
  std::vector<uint64_t> hashes_;  // Per slot.
  // Per slot: bumped by each Schedule and Release; a heap entry holding
  // another value is stale. A value comes back after 2^32 changes of one
  // slot, while a stale entry leaves the heap once its deadline is due:
  // within the window (plus the allowed skew) of event time.
  std::vector<uint32_t> generations_;
  std::vector<bool> live_;
  std::vector<uint32_t> free_;
  size_t size_ = 0;
  std::vector<IndexEntry> index_;
  size_t index_mask_ = 0;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>,
                      std::greater<HeapEntry>>
      heap_;
  // Change tracking (see the class comment).
  bool tracking_ = false;
  uint32_t epoch_ = 0;  // Below kCreatedInEpoch; 0 while not tracking.
  std::vector<uint32_t> changed_;  // Slots, each once per epoch.
  std::string released_;
  uint64_t released_count_ = 0;
};

// One PendingStore per shard (input partition): a shard's requests are
// looked up, scheduled and closed by that shard's own event time, and
// checkpointed, dropped or restored together. A request's events all
// come from one shard (both topics keyed by request_id, co-partitioned),
// so the shard of an event is where its request lives.
class ShardedPendingStore {
 public:
  // The store of `shard` (>= 0), created on first use.
  PendingStore& Shard(int32_t shard);
  // The store of `shard`, or null when it has none.
  PendingStore* Find(int32_t shard);
  // Removes `request` from its shard's store.
  void Release(PendingRequest* request) {
    Shard(request->shard).Release(request);
  }
  // The request with the earliest deadline over every shard, or null.
  PendingRequest* PeekEarliest();
  // Forgets every request of `shard` (without telling anyone).
  void Drop(int32_t shard);
  size_t size() const;
  // Shards with a store, ascending.
  int32_t num_shards() const { return static_cast<int32_t>(shards_.size()); }
  // Calls f(PendingRequest&) for every live request (see PendingStore).
  template <typename F>
  void ForEach(F f) {
    for (std::unique_ptr<PendingStore>& s : shards_) {
      if (s) s->ForEach(f);
    }
  }

 private:
  std::vector<std::unique_ptr<PendingStore>> shards_;  // Indexed by shard.
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_PENDING_STORE_H_
