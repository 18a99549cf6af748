// FinalizedMemory: which requests the join finalized recently, so that a
// judgment arriving after its request was scored is told apart from one
// whose request never came (JoinCounters::judgments_after_finalization
// against orphaned_judgments).
//
// A direct-mapped table of (request hash, served time), allocated once:
// remembering costs no allocation per request, and a slot's newer request
// overwrites an older one. So it remembers at most `capacity` requests,
// the most recent ones best; a judgment whose request was forgotten counts
// as orphaned, as before. What it remembers is the process's (not in a
// checkpoint): after a restore it starts empty. Both kinds of judgment
// depend on arrival order only at the window's edges; see
// ImpressionJoin's class comment.
//
// Not thread-safe; owned by the join.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_FINALIZED_MEMORY_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_FINALIZED_MEMORY_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace rankwatch::stream {

class FinalizedMemory {
 public:
  // Slots: `capacity` rounded up to a power of two, at least 1.
  explicit FinalizedMemory(int64_t capacity);

  // Records that the request with key hash `hash`, served at `served_ms`,
  // was finalized.
  void Remember(uint64_t hash, int64_t served_ms);
  // Starts loading the slot that Remember(hash, ...) will write: the
  // table (1.5 MiB) is written at random, so that store missed the cache
  // on nearly every request (30-40% of ImpressionJoin::Finalize's own
  // samples, perf annotate, issue 45); the join asks for it before it
  // scores the request, which takes long enough to hide the miss.
  void Prefetch(uint64_t hash) const {
    __builtin_prefetch(&slots_[SlotOf(hash)], /*rw=*/1);
  }
  // The served time of a remembered request with key hash `hash`.
  std::optional<int64_t> Find(uint64_t hash) const;
  // Forgets everything (the join's state was dropped).
  void Clear();

  size_t capacity() const { return slots_.size(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    int64_t served_ms = 0;
    bool used = false;
  };
  size_t SlotOf(uint64_t hash) const { return hash & (slots_.size() - 1); }

  std::vector<Slot> slots_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_FINALIZED_MEMORY_H_
