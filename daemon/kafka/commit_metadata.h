// The metadata rankwatch stores with each committed offset:
// "wm=<watermark ms>;end=<next offset consumed>[;final=1]", or with durable
// state "clp=<partition>;clo=<offset>" (see below). A new owner of
// the partition restores the watermark from it and skips, as replayed, the
// events below `end` that its predecessor had already reflected. `final`
// marks the last commit of an owner that stopped cleanly (SIGTERM, a
// revocation): it finalized nothing after it, so no re-read request can
// have been counted twice.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_DAEMON_KAFKA_COMMIT_METADATA_H_
#define RANKWATCH_DAEMON_KAFKA_COMMIT_METADATA_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace rankwatch::kafka {

struct CommitMetadata {
  int64_t watermark_ms = INT64_MIN;  // INT64_MIN: none.
  int64_t end = -1;                  // Next offset consumed; -1: none.
  bool final = false;  // The owner's last commit before a clean stop.
  // Durable state (kafka.durable_state): the base of the partition's
  // checkpoint chain (changelog.h) when these offsets were committed after
  // its base or one of its deltas ("clp=<changelog partition>;clo=<offset
  // of the base>"). A new owner reads the partition's newest base and its
  // deltas from there on; a pointer without a readable base from there on
  // means the state was lost (the topic deleted or compacted away).
  int64_t changelog_partition = -1;  // -1: none.
  int64_t changelog_offset = -1;
};

// "wm=..;end=..;final=1", leaving out what is unset ("" when all are).
std::string EncodeCommitMetadata(const CommitMetadata& metadata);

// Reads the items of `s` into *metadata. Unknown keys, items without '='
// and values that are not a decimal int64 (garbage, overflow) are skipped,
// leaving that field as it was: metadata written by another client, or
// damaged, must not stop a rebalance.
void DecodeCommitMetadata(std::string_view s, CommitMetadata* metadata);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_COMMIT_METADATA_H_
