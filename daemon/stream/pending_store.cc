#include "daemon/stream/pending_store.h"

#include <bit>

namespace rankwatch::stream {

namespace {
constexpr uint32_t kEmpty = UINT32_MAX;
constexpr size_t kMinIndex = 64;
}  // namespace

int32_t PendingRequest::FindDoc(std::string_view doc) const {
  uint32_t begin = 0;
  for (size_t i = 0; i < doc_ends.size(); ++i) {
    const uint32_t end = doc_ends[i];
    if (end - begin == doc.size() &&
        std::string_view(docs).substr(begin, end - begin) == doc) {
      return static_cast<int32_t>(i);
    }
    begin = end;
  }
  return -1;
}

size_t PendingStore::FindIndex(std::string_view key, uint64_t hash) const {
  if (index_.empty()) return SIZE_MAX;
  for (size_t i = hash & index_mask_;; i = (i + 1) & index_mask_) {
    const IndexEntry& e = index_[i];
    if (e.slot == kEmpty) return SIZE_MAX;
    if (e.hash == hash && slots_[e.slot].key == key) return i;
  }
}

PendingRequest* PendingStore::Find(std::string_view key, uint64_t hash) {
  const size_t pos = FindIndex(key, hash);
  return pos == SIZE_MAX ? nullptr : &slots_[index_[pos].slot];
}

void PendingStore::GrowIndex() {
  std::vector<IndexEntry> old;
  old.swap(index_);
  const size_t capacity = std::max(kMinIndex, old.size() * 2);
  index_.assign(capacity, IndexEntry{0, kEmpty});
  index_mask_ = capacity - 1;
  for (const IndexEntry& e : old) {
    if (e.slot == kEmpty) continue;
    size_t i = e.hash & index_mask_;
    while (index_[i].slot != kEmpty) i = (i + 1) & index_mask_;
    index_[i] = e;
  }
}

PendingRequest* PendingStore::Create(std::string_view key, uint64_t hash) {
  if ((size_ + 1) * 2 > index_.size()) GrowIndex();
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
    hashes_.push_back(0);
    generations_.push_back(0);
    live_.push_back(false);
  }
  PendingRequest& r = slots_[slot];
  // Clear but keep capacity: the slot's buffers serve the next request.
  r.key.assign(key);
  r.query_id.clear();
  r.docs.clear();
  r.doc_ends.clear();
  r.judged_docs.clear();
  r.records.clear();
  r.origins.clear();
  r.results_origin = EventOrigin();
  r.group = 0;
  r.unit_hash = 0;
  r.has_results = false;
  r.served_ms = 0;
  r.deadline_ms = INT64_MIN;
  r.slot = slot;
  hashes_[slot] = hash;
  live_[slot] = true;
  ++size_;
  size_t i = hash & index_mask_;
  while (index_[i].slot != kEmpty) i = (i + 1) & index_mask_;
  index_[i] = IndexEntry{hash, slot};
  return &r;
}

void PendingStore::Schedule(PendingRequest* r, int64_t deadline_ms) {
  if (r->deadline_ms == deadline_ms) return;
  r->deadline_ms = deadline_ms;
  heap_.push(HeapEntry{deadline_ms, r->slot, generations_[r->slot]});
}

PendingRequest* PendingStore::PeekDue(int64_t limit_ms) {
  while (!heap_.empty()) {
    const HeapEntry& top = heap_.top();
    // No entry, stale or not, is due before the earliest deadline: answer
    // without touching the request (a cache miss on every event otherwise).
    // Stale entries are dropped once they reach the top and are due.
    if (top.deadline_ms > limit_ms) return nullptr;
    const PendingRequest& r = slots_[top.slot];
    const bool stale = !live_[top.slot] ||
                       generations_[top.slot] != top.generation ||
                       r.deadline_ms != top.deadline_ms;
    if (stale) {
      heap_.pop();
      continue;
    }
    return &slots_[top.slot];
  }
  return nullptr;
}

// Backward-shift deletion keeps probe sequences intact without tombstones.
void PendingStore::EraseIndex(size_t pos) {
  size_t hole = pos;
  for (size_t j = (hole + 1) & index_mask_;; j = (j + 1) & index_mask_) {
    if (index_[j].slot == kEmpty) break;
    const size_t home = index_[j].hash & index_mask_;
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool in_range =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!in_range) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = IndexEntry{0, kEmpty};
}

void PendingStore::Release(PendingRequest* r) {
  const uint32_t slot = r->slot;
  if (!live_[slot]) return;
  const size_t pos = FindIndex(r->key, hashes_[slot]);
  if (pos != SIZE_MAX) EraseIndex(pos);
  live_[slot] = false;
  ++generations_[slot];
  r->deadline_ms = INT64_MIN;
  free_.push_back(slot);
  --size_;
}

}  // namespace rankwatch::stream
