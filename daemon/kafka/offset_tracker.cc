#include "daemon/kafka/offset_tracker.h"

#include <algorithm>
#include <iterator>

namespace rankwatch::kafka {

void OffsetTracker::Assign(int32_t slot) { slots_.try_emplace(slot); }

void OffsetTracker::Revoke(int32_t slot) { slots_.erase(slot); }

int64_t OffsetTracker::Consumed(int32_t slot, int64_t offset) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return -1;
  const int64_t before = it->second.next_offset;
  it->second.next_offset = std::max(before, offset + 1);
  return before;
}

void OffsetTracker::Retain(int32_t slot, int64_t offset) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  Slot& s = it->second;
  // Offsets arrive in order; a re-delivered older offset (after a seek) is
  // still tracked correctly by inserting it in place.
  if (s.entries.empty() || (s.entries.back() & ~kReleasedBit) < offset) {
    s.entries.push_back(offset);
  } else {
    auto pos = std::lower_bound(
        s.entries.begin(), s.entries.end(), offset,
        [](int64_t e, int64_t o) { return (e & ~kReleasedBit) < o; });
    s.entries.insert(pos, offset);
  }
  ++s.live;
}

void OffsetTracker::Release(int32_t slot, int64_t offset) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  Slot& s = it->second;
  // Most often the newest: an event the pipeline did not keep, released
  // right after Retain. Else (or if the one before holds the same offset,
  // delivered twice) a binary search: with hundreds of thousands of events
  // retained, a cache miss at each step (perf, issue 45).
  const size_t n = s.entries.size();
  auto pos = s.entries.end();
  if (n > 0 && s.entries[n - 1] == offset &&
      (n == 1 || (s.entries[n - 2] & ~kReleasedBit) < offset)) {
    pos = std::prev(s.entries.end());
  } else {
    pos = std::lower_bound(
        s.entries.begin(), s.entries.end(), offset,
        [](int64_t e, int64_t o) { return (e & ~kReleasedBit) < o; });
  }
  if (pos == s.entries.end() || *pos != offset) return;  // Not live.
  *pos |= kReleasedBit;
  --s.live;
  while (!s.entries.empty() && (s.entries.back() & kReleasedBit)) {
    s.entries.pop_back();
  }
  while (!s.entries.empty() && (s.entries.front() & kReleasedBit)) {
    s.entries.pop_front();
  }
}

std::optional<int64_t> OffsetTracker::SafeOffset(int32_t slot) const {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return std::nullopt;
  const Slot& s = it->second;
  if (!s.entries.empty()) return s.entries.front();  // Front is live.
  if (s.next_offset < 0) return std::nullopt;
  return s.next_offset;
}

int64_t OffsetTracker::NextOffset(int32_t slot) const {
  auto it = slots_.find(slot);
  return it == slots_.end() ? -1 : it->second.next_offset;
}

int64_t OffsetTracker::retained(int32_t slot) const {
  auto it = slots_.find(slot);
  return it == slots_.end() ? 0 : it->second.live;
}

std::vector<int32_t> OffsetTracker::slots() const {
  std::vector<int32_t> out;
  for (const auto& [slot, s] : slots_) out.push_back(slot);
  return out;
}

}  // namespace rankwatch::kafka
