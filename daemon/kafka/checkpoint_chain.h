// SelectChain: which records of a partition's changelog a restore applies
// (docs/operations.md, "Durable state"). The newest base (key "<p>"), then
// its deltas (keys "<p>.<base offset>.<seq>") in order, as long as each is
// whole (its checksum), is the one that follows (seq 1, 2, ...) and says
// so in its header. The first that is not stops the chain there: a restore
// takes the base and the deltas before it, whose offsets are where reading
// the input resumes, so a bad delta costs re-reading input, never a state
// that the offsets do not reflect.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_DAEMON_KAFKA_CHECKPOINT_CHAIN_H_
#define RANKWATCH_DAEMON_KAFKA_CHECKPOINT_CHAIN_H_

#include <cstdint>
#include <optional>
#include <string>
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
  // The key of every delta read (of this base or an older one): deleted
  // (tombstones) once a newer base is acknowledged.
  std::vector<std::string> delta_keys;
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
