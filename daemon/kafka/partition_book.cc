#include "daemon/kafka/partition_book.h"

#include <algorithm>

#include "daemon/kafka/commit_metadata.h"

namespace rankwatch::kafka {

void PartitionBook::Assign(int32_t slot) { tracker_.Assign(slot); }

int64_t PartitionBook::RestoreCommitted(int32_t slot, int64_t offset,
                                        std::string_view metadata) {
  committed_[slot] = offset;
  CommitMetadata md;
  DecodeCommitMetadata(metadata, &md);
  if (md.end > offset) replay_end_[slot] = md.end;
  if (md.final) {
    clean_.insert(slot);
  } else {
    clean_.erase(slot);
  }
  return md.watermark_ms;
}

void PartitionBook::Revoke(int32_t slot) {
  tracker_.Revoke(slot);
  replay_end_.erase(slot);
  committed_.erase(slot);
  clean_.erase(slot);
  ClearStart(slot);
}

void PartitionBook::ExpectStart(int32_t slot, int64_t offset) {
  if (slot < 0 || offset < 0) return;
  ClearStart(slot);
  if (static_cast<size_t>(slot) >= expected_start_.size()) {
    expected_start_.resize(static_cast<size_t>(slot) + 1, -1);
  }
  expected_start_[static_cast<size_t>(slot)] = offset;
  ++awaiting_;
}

void PartitionBook::ClearStart(int32_t slot) {
  if (!AwaitingStart(slot)) return;
  expected_start_[static_cast<size_t>(slot)] = -1;
  --awaiting_;
}

int64_t PartitionBook::SettleStart(int32_t slot, int64_t first_offset,
                                   int64_t log_start) {
  if (!AwaitingStart(slot)) return 0;
  const int64_t start = expected_start_[static_cast<size_t>(slot)];
  if (first_offset < 0) {
    if (log_start <= start) return 0;  // Unknown, or nothing deleted yet.
    ClearStart(slot);
    return log_start - start;
  }
  ClearStart(slot);
  return DeletedInGap(start, first_offset, log_start);
}

int64_t PartitionBook::DeletedInGap(int64_t next, int64_t offset,
                                    int64_t log_start) {
  if (log_start <= next || offset <= next) return 0;
  return std::min(offset, log_start) - next;
}

bool PartitionBook::IsReplay(int32_t slot, int64_t offset) const {
  auto it = replay_end_.find(slot);
  return it != replay_end_.end() && offset < it->second;
}

std::vector<PartitionBook::Commit> PartitionBook::CommitsDue(
    const std::vector<int32_t>& slots,
    const std::function<int64_t(int32_t)>& watermark_ms, bool final) const {
  std::vector<Commit> due;
  for (int32_t slot : slots) {
    const std::optional<int64_t> safe = tracker_.SafeOffset(slot);
    if (!safe) continue;
    auto it = committed_.find(slot);
    if (!final && it != committed_.end() && it->second == *safe) continue;
    due.push_back({slot, *safe,
                   EncodeCommitMetadata({watermark_ms(slot),
                                         tracker_.NextOffset(slot), final})});
  }
  return due;
}

void PartitionBook::MarkCommitted(int32_t slot, int64_t offset) {
  committed_[slot] = offset;
}

int64_t PartitionBook::committed(int32_t slot) const {
  auto it = committed_.find(slot);
  return it == committed_.end() ? -1 : it->second;
}

int64_t PartitionBook::Position(int32_t slot) const {
  const int64_t next = tracker_.NextOffset(slot);
  if (next >= 0) return next;
  auto it = committed_.find(slot);
  return it == committed_.end() ? 0 : it->second;
}

}  // namespace rankwatch::kafka
