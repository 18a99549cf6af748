// DeadlineHeap: a min-heap of (deadline, slot, generation) entries, the
// pending store's order of deadlines.
//
// Four children per node instead of two: a pop walks half as many levels,
// and the four children of a node are 64 contiguous bytes (one cache line,
// two at worst) compared at once. At hundreds of thousands of pending
// requests the heap is megabytes, and std::priority_queue's binary heap
// took a cache miss per level on every pop (6 to 9% of the daemon at
// steady state, perf, issue 45). The order of entries with equal deadlines
// is unspecified, as in any heap.
//
// Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_DEADLINE_HEAP_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_DEADLINE_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankwatch::stream {

struct DeadlineEntry {
  int64_t deadline_ms;
  uint32_t slot;
  uint32_t generation;
};

class DeadlineHeap {
 public:
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // An entry of the earliest deadline. Requires !empty().
  const DeadlineEntry& top() const { return entries_.front(); }

  void push(const DeadlineEntry& e) {
    size_t i = entries_.size();
    entries_.push_back(e);
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (entries_[parent].deadline_ms <= e.deadline_ms) break;
      entries_[i] = entries_[parent];
      i = parent;
    }
    entries_[i] = e;
  }

  // Removes top(). Requires !empty().
  void pop() {
    const DeadlineEntry last = entries_.back();
    entries_.pop_back();
    const size_t n = entries_.size();
    if (n == 0) return;
    size_t i = 0;
    for (;;) {
      const size_t first = i * kArity + 1;
      if (first >= n) break;
      const size_t end = first + kArity < n ? first + kArity : n;
      size_t least = first;
      for (size_t c = first + 1; c < end; ++c) {
        if (entries_[c].deadline_ms < entries_[least].deadline_ms) least = c;
      }
      if (last.deadline_ms <= entries_[least].deadline_ms) break;
      entries_[i] = entries_[least];
      i = least;
    }
    entries_[i] = last;
  }

 private:
  static constexpr size_t kArity = 4;
  std::vector<DeadlineEntry> entries_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_DEADLINE_HEAP_H_
