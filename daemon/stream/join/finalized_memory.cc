#include "daemon/stream/join/finalized_memory.h"

#include <algorithm>
#include <bit>

namespace rankwatch::stream {

FinalizedMemory::FinalizedMemory(int64_t capacity)
    : slots_(std::bit_ceil(
          static_cast<uint64_t>(std::max<int64_t>(capacity, 1)))) {}

void FinalizedMemory::Remember(uint64_t hash, int64_t served_ms) {
  slots_[SlotOf(hash)] = Slot{hash, served_ms, true};
}

std::optional<int64_t> FinalizedMemory::Find(uint64_t hash) const {
  const Slot& s = slots_[SlotOf(hash)];
  if (!s.used || s.hash != hash) return std::nullopt;
  return s.served_ms;
}

void FinalizedMemory::Clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
}

}  // namespace rankwatch::stream
