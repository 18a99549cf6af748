// PartitionBook: what the consumer keeps per assigned topic-partition
// (slot, see SlotOf) across rebalances: which consumed offsets pending join
// state still needs (OffsetTracker), the offset last committed, and the
// position the previous owner had consumed to (events below it are
// replays: that owner's metrics already reflect them), and where reading
// resumes after an assignment, until the partition shows whether the
// broker deleted events below its log start before they were read.
//
// Pure bookkeeping, no librdkafka: the rebalance callbacks and the consume
// loop drive it. Not thread-safe: the consumer thread owns it.
#ifndef RANKWATCH_DAEMON_KAFKA_PARTITION_BOOK_H_
#define RANKWATCH_DAEMON_KAFKA_PARTITION_BOOK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/kafka/offset_tracker.h"

namespace rankwatch::kafka {

class PartitionBook {
 public:
  // An offset to commit, with its metadata (commit_metadata.h).
  struct Commit {
    int32_t slot = 0;
    int64_t offset = 0;
    std::string metadata;
  };

  // Starts tracking `slot`. Idempotent.
  void Assign(int32_t slot);
  // Records what the previous owner committed for an assigned `slot`
  // (`offset` >= 0) with its `metadata`. Returns the watermark that owner
  // had reached, INT64_MIN when the metadata holds none.
  int64_t RestoreCommitted(int32_t slot, int64_t offset,
                           std::string_view metadata);
  // Forgets `slot` entirely.
  void Revoke(int32_t slot);

  // Reading `slot` resumes at `offset` (its committed offset, or its
  // checkpoint's). Until that is settled (SettleStart), a log start past
  // it means the broker deleted the events in between before anyone read
  // them (retention, DeleteRecords): a consumer finding its offset below
  // the log start reads on from there (auto.offset.reset).
  void ExpectStart(int32_t slot, int64_t offset);
  // Whether `slot`'s start is not settled yet: a test per message, so an
  // index into a vector (slots are small numbers).
  bool AwaitingStart(int32_t slot) const {
    return awaiting_ > 0 && slot >= 0 &&
           static_cast<size_t>(slot) < expected_start_.size() &&
           expected_start_[static_cast<size_t>(slot)] >= 0;
  }
  bool AwaitingStart() const { return awaiting_ > 0; }
  // The events of `slot` deleted before they were read, given its first
  // message since ExpectStart (`first_offset`; -1 before any) and its log
  // start (`log_start`; -1 when not known yet). A first message settles
  // the slot: the events from the expected start up to it and below the
  // log start were deleted (a gap the log start does not explain is a
  // compacted topic's: not counted). Before any, a log start past the
  // expected start settles it too; anything else waits. 0 when the slot
  // is settled, not expected, or nothing was deleted.
  int64_t SettleStart(int32_t slot, int64_t first_offset, int64_t log_start);
  // The events deleted before they were read in a gap of a partition's
  // offsets: reading expected `next` and got `offset` (> next), and the
  // partition's log start is `log_start` (-1: not known). The offsets from
  // `next` up to the message and below the log start were deleted unread:
  // a consumer that fell behind the retention while reading is moved to the
  // log start by the client (auto.offset.reset). A gap the log start does
  // not explain (transaction markers, a compacted topic) is not counted.
  static int64_t DeletedInGap(int64_t next, int64_t offset, int64_t log_start);

  // Whether the event at `offset` of `slot` was already reflected by the
  // previous owner.
  bool IsReplay(int32_t slot, int64_t offset) const;
  // Whether `slot`'s previous owner stopped cleanly at its last commit
  // (CommitMetadata::final): it finalized nothing the re-read could repeat.
  bool StoppedCleanly(int32_t slot) const { return clean_.contains(slot); }

  // The commits due for `slots`: each slot's safe offset when it differs
  // from the one last committed, with the slot's watermark
  // (`watermark_ms(slot)`) and the consumed position as metadata.
  // With `final` (the owner stops reading them) every slot is committed,
  // marked final, even if its offset did not move.
  std::vector<Commit> CommitsDue(
      const std::vector<int32_t>& slots,
      const std::function<int64_t(int32_t)>& watermark_ms,
      bool final = false) const;
  void MarkCommitted(int32_t slot, int64_t offset);
  // The offset last committed for `slot`, or -1.
  int64_t committed(int32_t slot) const;
  // Where the consumer stands in `slot`: one past the last consumed
  // offset, else the committed offset, else 0.
  int64_t Position(int32_t slot) const;

  std::vector<int32_t> slots() const { return tracker_.slots(); }
  OffsetTracker& tracker() { return tracker_; }
  const OffsetTracker& tracker() const { return tracker_; }

 private:
  void ClearStart(int32_t slot);

  OffsetTracker tracker_;
  std::map<int32_t, int64_t> replay_end_;  // Slot -> predecessor position.
  std::map<int32_t, int64_t> committed_;   // Slot -> last committed offset.
  std::set<int32_t> clean_;  // Slots whose predecessor stopped cleanly.
  // By slot: the start not settled yet, or -1.
  std::vector<int64_t> expected_start_;
  int32_t awaiting_ = 0;  // Slots with a start not settled yet.
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_PARTITION_BOOK_H_
