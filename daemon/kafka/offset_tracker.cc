#include "daemon/kafka/offset_tracker.h"

#include <algorithm>
#include <iterator>

namespace rankwatch::kafka {

namespace {

// An entry's offset, without the released bit (OffsetTracker::kReleasedBit,
// the sign bit: offsets are >= 0).
constexpr int64_t OffsetOf(int64_t entry) { return entry & INT64_MAX; }

// The first of entries[lo, hi) whose offset is not below `offset`.
size_t LowerBound(const std::deque<int64_t>& entries, size_t lo, size_t hi,
                  int64_t offset) {
  return static_cast<size_t>(
      std::lower_bound(entries.begin() + static_cast<ptrdiff_t>(lo),
                       entries.begin() + static_cast<ptrdiff_t>(hi), offset,
                       [](int64_t e, int64_t o) { return OffsetOf(e) < o; }) -
      entries.begin());
}

// The first entry whose offset is not below `offset`, in a few probes near
// where it must be. Retained offsets are increasing and mostly dense (a
// partition's events are nearly all retained until their request closes),
// so the offset's share of the span between the first and the last entry
// is a close guess of its position; a search galloping out from the guess
// finds it. A binary search over a slot's tens of thousands of entries took
// a cache miss per step (5% of the daemon at steady state, perf, issue 45).
size_t GuessedLowerBound(const std::deque<int64_t>& entries, int64_t offset) {
  const size_t n = entries.size();
  const int64_t first = OffsetOf(entries.front());
  const int64_t last = OffsetOf(entries.back());
  if (offset <= first) return 0;
  if (offset > last) return n;
  // first < offset <= last: the guess is in [0, n - 1].
  const double share =
      static_cast<double>(offset - first) / static_cast<double>(last - first);
  size_t guess =
      std::min(n - 1, static_cast<size_t>(share * static_cast<double>(n - 1)));
  size_t step = 1;
  if (OffsetOf(entries[guess]) < offset) {
    // The bound is past the guess: gallop up. Every entry before `lo` is
    // below the offset.
    size_t lo = guess + 1;
    for (;;) {
      const size_t probe = lo + step - 1;
      if (probe >= n) return LowerBound(entries, lo, n, offset);
      if (OffsetOf(entries[probe]) >= offset) {
        return LowerBound(entries, lo, probe + 1, offset);
      }
      lo = probe + 1;
      step *= 2;
    }
  }
  // The bound is at the guess or before it: gallop down. The entry at `hi`
  // is not below the offset.
  size_t hi = guess;
  for (;;) {
    if (hi < step) return LowerBound(entries, 0, hi + 1, offset);
    const size_t probe = hi - step;
    if (OffsetOf(entries[probe]) < offset) {
      return LowerBound(entries, probe + 1, hi + 1, offset);
    }
    hi = probe;
    step *= 2;
  }
}

}  // namespace

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
  if (s.entries.empty() || OffsetOf(s.entries.back()) < offset) {
    s.entries.push_back(offset);
  } else {
    s.entries.insert(
        s.entries.begin() +
            static_cast<ptrdiff_t>(GuessedLowerBound(s.entries, offset)),
        offset);
  }
  ++s.live;
}

void OffsetTracker::Release(int32_t slot, int64_t offset) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  Slot& s = it->second;
  if (s.entries.empty()) return;
  // Most often the newest: an event the pipeline did not keep, released
  // right after Retain. An offset delivered twice has two entries, either
  // of which may go: they are the same event.
  size_t pos = s.entries.size() - 1;
  if (s.entries[pos] != offset) {
    pos = GuessedLowerBound(s.entries, offset);
    // Past the released entries of the same offset to a live one.
    while (pos < s.entries.size() && s.entries[pos] != offset &&
           OffsetOf(s.entries[pos]) == offset) {
      ++pos;
    }
    if (pos == s.entries.size() || s.entries[pos] != offset) return;
  }
  s.entries[pos] |= kReleasedBit;
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
