// OffsetTracker: which consumed offsets of each topic-partition are still
// needed by pending join state, and so which offset is safe to commit.
//
// At-least-once: the committed offset of a partition must not pass the
// oldest event some unfinalized request still depends on; a restart then
// re-reads everything not yet reflected in the metrics. Only retained events
// are tracked (most events are done at once), in a deque per partition kept
// in offset order; an entry released at the back is popped at once, one
// released in the middle is marked and popped when it reaches the front.
//
// Not thread-safe: owned by the consumer thread.
#ifndef RANKWATCH_DAEMON_KAFKA_OFFSET_TRACKER_H_
#define RANKWATCH_DAEMON_KAFKA_OFFSET_TRACKER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "daemon/stream/decode/events.h"

namespace rankwatch::kafka {

class OffsetTracker {
 public:
  // Starts tracking `slot` (a topic-partition). Idempotent.
  void Assign(int32_t slot);
  // Stops tracking `slot` and forgets its state.
  void Revoke(int32_t slot);
  bool assigned(int32_t slot) const { return slots_.count(slot) > 0; }

  // Records that `offset` of `slot` was read. Offsets of a slot must be
  // consumed in increasing order. Returns where the slot stood before (one
  // past the offset consumed before, -1 before any), so the caller sees a
  // gap without a second lookup.
  int64_t Consumed(int32_t slot, int64_t offset);
  // Marks `offset` as needed until Release(). Call it before handing the
  // event to the pipeline, which may release it during the call.
  void Retain(int32_t slot, int64_t offset);
  void Release(int32_t slot, int64_t offset);

  // The offset to commit for `slot`: its oldest retained offset, or one past
  // the last consumed; nullopt when nothing was consumed since assignment.
  std::optional<int64_t> SafeOffset(int32_t slot) const;
  // One past the last consumed offset, or -1.
  int64_t NextOffset(int32_t slot) const;
  // Retained entries (for metrics).
  int64_t retained(int32_t slot) const;
  std::vector<int32_t> slots() const;

 private:
  // Offsets in increasing order; a released entry has its sign bit set
  // (offsets are >= 0) until it is popped.
  struct Slot {
    std::deque<int64_t> entries;
    int64_t live = 0;  // Unreleased entries.
    int64_t next_offset = -1;
  };
  static constexpr int64_t kReleasedBit = INT64_MIN;

  std::map<int32_t, Slot> slots_;
};

// Slots number topic-partitions for the join's EventOrigin::source: the
// two topics of rankwatch interleave, so both of a partition number's
// topic-partitions stay distinct. The encoding is EventOrigin's.
inline int32_t SlotOf(int32_t topic_index, int32_t partition) {
  return stream::EventOrigin::SourceOf(topic_index, partition);
}
inline int32_t SlotTopic(int32_t slot) {
  return stream::EventOrigin::TopicIndexOf(slot);
}
inline int32_t SlotPartition(int32_t slot) {
  return stream::EventOrigin::PartitionOf(slot);
}

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_OFFSET_TRACKER_H_
