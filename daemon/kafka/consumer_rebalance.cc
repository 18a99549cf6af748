// KafkaIngest's rebalance listener: what an assignment (restores,
// committed offsets, sources that hold event time) and a revocation
// (checkpoints or commits, dropped state) do. The consume loop is in
// consumer.cc; the class comment in consumer.h describes both.
#include <librdkafka/rdkafka.h>

#include <mutex>
#include <string_view>
#include <vector>

#include "daemon/kafka/commit_metadata.h"
#include "daemon/kafka/consumer.h"

namespace rankwatch::kafka {

void KafkaIngest::OnAssigned(std::vector<AssignedPartition>& partitions) {
  // Durable state: each shard's checkpoint is read before the lock is
  // taken (a read can take seconds; scrapes go on meanwhile).
  std::vector<Restore> restores;
  if (changelog_) {
    // Inside a batch's poll, the batch's lock is released for the reads
    // (and the flag with it: a callback served by them locks).
    const bool in_batch = batch_locked_;
    if (in_batch) {
      batch_locked_ = false;
      mu_->unlock();
    }
    std::vector<int32_t> slots;
    for (const AssignedPartition& p : partitions) {
      const int t = TopicIndex(p.topic);
      if (t >= 0) slots.push_back(SlotOf(t, p.partition));
    }
    for (int32_t shard : ShardsOf(slots)) {
      restores.push_back(ReadCheckpoint(shard, partitions));
    }
    if (in_batch) {
      mu_->lock();
      batch_locked_ = true;
    }
  }
  const std::unique_lock<std::mutex> lock = CallbackLock();
  event_clock_.Tick();  // Inside a poll that may have waited.
  ++status_.rebalances;
  MarkReachable(kGroupClient);  // Its group coordinator answered.
  const int64_t now = clock_->MonotonicMillis();
  for (AssignedPartition& p : partitions) {
    const int t = TopicIndex(p.topic);
    if (t < 0) continue;
    const int32_t slot = SlotOf(t, p.partition);
    book_.Assign(slot);
    fetch_progress_.Track(slot, now);
    // It holds event time back until it delivers or has caught up.
    pipeline_->AddSource(slot);
    if (p.committed_offset < 0) continue;
    if (changelog_) {
      CommitMetadata committed;
      DecodeCommitMetadata(p.metadata, &committed);
      if (committed.changelog_offset >= 0) {
        // A checkpoint's offsets: restored from the checkpoint.
        book_.MarkCommitted(slot, p.committed_offset);
        continue;
      }
      // Offsets committed without durable state (a first start with it):
      // as without it, their watermark tells which re-read events the
      // previous owner had already finalized.
    }
    // Each partition with its own previous owner's watermark: partitions
    // of a replica killed early must not be judged by one stopped late.
    const int64_t watermark =
        book_.RestoreCommitted(slot, p.committed_offset, p.metadata);
    if (watermark != INT64_MIN) {
      (void)pipeline_->RestoreWatermark(slot, watermark);
    }
  }
  for (const Restore& r : restores) ApplyRestore(r, partitions);
  ExpectStarts(partitions);
  PublishFetchProgress();
}

void KafkaIngest::ExpectStarts(
    const std::vector<AssignedPartition>& partitions) {
  for (const AssignedPartition& p : partitions) {
    const int t = TopicIndex(p.topic);
    // A paused partition (state not restored) reads nothing.
    if (t < 0 || p.pause) continue;
    const int64_t start =
        p.start_offset >= 0 ? p.start_offset : p.committed_offset;
    if (start >= 0) book_.ExpectStart(SlotOf(t, p.partition), start);
  }
}

void KafkaIngest::OnRevoked(const std::vector<RevokedPartition>& partitions,
                            bool lost) {
  std::vector<int32_t> slots;
  for (const RevokedPartition& p : partitions) {
    const int t = TopicIndex(p.topic);
    if (t >= 0) slots.push_back(SlotOf(t, p.partition));
  }
  const std::unique_lock<std::mutex> lock = CallbackLock();
  event_clock_.Tick();  // Inside a poll that may have waited.
  ++status_.rebalances;
  if (changelog_) {
    const std::vector<int32_t> shards = ShardsOf(slots);
    // Its state moves with it: checkpointed (unless lost: then the new
    // owner restores the last checkpoint and re-reads from its offsets).
    if (!lost) Checkpoint(shards, /*force=*/false);
    for (int32_t shard : shards) {
      pipeline_->DropShard(shard);
      checkpointed_.erase(shard);
      chains_.erase(shard);
      unrestored_.erase(shard);
    }
    PublishStateProblem();
  } else {
    if (!lost) Commit(slots, /*sync=*/true, /*final=*/true);
    // The new owner re-reads these events from the committed offsets.
    pipeline_->DropPartitions(slots);
  }
  for (int32_t slot : slots) {
    book_.Revoke(slot);
    fetch_progress_.Untrack(slot);
  }
  PublishFetchProgress();
}

void KafkaIngest::OnAssignmentChanged(bool assigned) {
  const std::unique_lock<std::mutex> lock = CallbackLock();
  status_.assigned = assigned;
  PublishReadiness();
}

void KafkaIngest::OnRebalanceError(RdKafka::ErrorCode err,
                                   std::string_view context) {
  const std::unique_lock<std::mutex> lock = CallbackLock();
  errors_.Report(err, context);
}

}  // namespace rankwatch::kafka
