// SelectChain: which records of a partition's changelog a restore applies
// (docs/operations.md, "Durable state"). The newest base (key "<p>"), then
// its deltas (keys "<p>.<base offset>.<seq>") in order, as long as each is
// whole (its checksum), is the one that follows (seq 1, 2, ...) and says
// so in its header. The first that is not stops the chain there: a restore
// takes the base and the deltas before it, whose offsets are where reading
// the input resumes, so a bad delta costs re-reading input, never a state
// that the offsets do not reflect.
//
// A delta that belongs to no chain any more (its base superseded) is
// deleted with a tombstone once a newer base is acknowledged. Should the
// writer crash before the tombstone is acknowledged, a new owner deletes
// it: the committed pointer stays at or before every such delta until its
// tombstone is acknowledged (ShardChain::Pointer), and a restore collects
// the keys of every delta it reads, before the newest base as after it
// (FoldChainRecord, SelectChain's delta_keys), to delete once its own base
// is acknowledged.
//
// Pure functions and a plain value; thread-safe but for a ShardChain
// written from two threads.
#ifndef RANKWATCH_DAEMON_KAFKA_CHECKPOINT_CHAIN_H_
#define RANKWATCH_DAEMON_KAFKA_CHECKPOINT_CHAIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/kafka/changelog.h"

namespace rankwatch::kafka {

struct ChainSelection {
  // Indexes into the records: the base (nullopt: none), then its deltas to
  // apply in order.
  std::optional<size_t> base;
  std::vector<size_t> deltas;
  // Why the chain stops before a delta of its base (one line; empty when
  // every delta of the base applies).
  std::string problem;
  // The key of every delta read (of this base or an older one, before the
  // base or after it): deleted (tombstones) once a newer base is
  // acknowledged.
  std::vector<std::string> delta_keys;
};

// Folds one record of the partition's changelog partition, read in order
// (`value` null: a tombstone), into `records`, what Changelog::ReadChain
// returns: the partition's newest base and every record after it, and
// before it the keys (values dropped: never applied, but to be deleted)
// of the deltas not deleted yet. A tombstone drops the key's records.
void FoldChainRecord(int32_t partition, std::string_view key, int64_t offset,
                     const std::string_view* value,
                     std::vector<Changelog::Stored>* records);

// One partition's chain as its owner writes it (KafkaIngest): where its
// base is, the last delta written after it, their sizes (a new base is due
// once the deltas outgrow the base), the delta keys to delete once a newer
// base is acknowledged, and where a new owner must start reading to see
// every delta not yet deleted.
struct ShardChain {
  int64_t base_offset = -1;  // -1: the next record is a base.
  uint32_t seq = 0;          // Of the last acknowledged delta.
  int64_t base_bytes = 0;
  int64_t delta_bytes = 0;  // Since the base.
  std::vector<std::string> delta_keys;
  // The lowest changelog offset of delta_keys' records; -1 when none.
  int64_t keys_from = -1;
  // The lowest changelog offset of the deltas whose tombstones are sent
  // or due but not acknowledged; -1 when none.
  int64_t stale_from = -1;

  // Restored from records read from changelog offset `read_from` on (-1:
  // the start), `keys` the delta keys read (SelectChain's delta_keys).
  void Restored(std::vector<std::string> keys, int64_t read_from);
  // Delta `seq` of `bytes` with key `key` was acknowledged.
  void DeltaAcked(uint32_t seq, int64_t bytes, std::string key);
  // A base of `bytes` was acknowledged at `offset`: the previous chain's
  // delta keys, returned, are to be deleted (stale until their tombstones
  // are acknowledged: TombstonesAcked).
  std::vector<std::string> BaseAcked(int64_t offset, int64_t bytes);
  // The round that wrote a record of the chain failed: whether the broker
  // took it is unknown, so the next record is a base, and a delta's key
  // (`seq` > 0) is deleted with the chain's.
  void RoundFailed(uint32_t seq, std::string key);
  // Every tombstone the chain was waiting for is acknowledged.
  void TombstonesAcked() { stale_from = -1; }
  // The pointer committed with the group's offsets: where a new owner
  // reads from. The base, or an earlier offset while deltas before it wait
  // for their tombstones: a crash then leaves them where the new owner's
  // restore reads, and deletes, them.
  int64_t Pointer() const;
};

// `records` in changelog order (Changelog::ReadChain's, or any: only the
// newest base and what follows it count).
ChainSelection SelectChain(int32_t partition,
                           const std::vector<Changelog::Stored>& records);

// Parses a delta key of `partition` ("<p>.<base offset>.<seq>"); false
// when `key` is not one.
bool ParseDeltaKey(int32_t partition, std::string_view key,
                   int64_t* base_offset, uint32_t* seq);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_CHECKPOINT_CHAIN_H_
