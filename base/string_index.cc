#include "base/string_index.h"

#include <algorithm>
#include <bit>

namespace rankwatch {

namespace {
constexpr size_t kMinCapacity = 16;
}  // namespace

void StringIndex::Clear(size_t expected) {
  size_t want = std::bit_ceil(std::max(kMinCapacity, expected * 2));
  if (want > slots_.size()) {
    slots_.assign(want, Slot{});
    mask_ = want - 1;
    generation_ = 1;
  } else if (++generation_ == 0) {
    // Wrapped after 2^32 clears: re-zero once so stale slots cannot match.
    slots_.assign(slots_.size(), Slot{});
    generation_ = 1;
  }
  size_ = 0;
}

void StringIndex::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  const uint32_t old_generation = generation_;
  const size_t capacity = std::max(kMinCapacity, old.size() * 2);
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  generation_ = 1;
  size_ = 0;
  for (const Slot& s : old) {
    if (s.generation != old_generation) continue;
    size_t i = s.hash & mask_;
    while (Live(slots_[i])) i = (i + 1) & mask_;
    slots_[i] = s;
    slots_[i].generation = generation_;
    ++size_;
  }
}

const uint32_t* StringIndex::Insert(std::string_view key, uint64_t hash,
                                    uint32_t value) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  size_t i = hash & mask_;
  while (Live(slots_[i])) {
    const Slot& s = slots_[i];
    if (s.hash == hash && BytesEqual(std::string_view(s.data, s.length), key)) {
      return &s.value;
    }
    i = (i + 1) & mask_;
  }
  slots_[i] = Slot{hash, key.data(), static_cast<uint32_t>(key.size()), value,
                   generation_};
  ++size_;
  return nullptr;
}

const uint32_t* StringIndex::Find(std::string_view key, uint64_t hash) const {
  if (slots_.empty()) return nullptr;
  size_t i = hash & mask_;
  while (Live(slots_[i])) {
    const Slot& s = slots_[i];
    if (s.hash == hash && BytesEqual(std::string_view(s.data, s.length), key)) {
      return &s.value;
    }
    i = (i + 1) & mask_;
  }
  return nullptr;
}

}  // namespace rankwatch
