#include "daemon/stream/experiments/unit_table.h"

#include <algorithm>

namespace rankwatch::stream {

namespace {

// Smallest table; it doubles when half full.
constexpr size_t kInitialSlots = 1024;

// 0 marks an empty slot, so the key 0 is stored as another constant (a
// collision of two units, as likely as any other).
uint64_t StoredKey(uint64_t key) { return key == 0 ? 0x9E3779B97F4A7C15 : key; }

}  // namespace

UnitTable::UnitTable(int64_t max_units)
    : max_units_(std::max<int64_t>(0, max_units)) {}

UnitTable::Outcome UnitTable::Insert(uint64_t key, uint8_t* value) {
  key = StoredKey(key);
  if (!keys_.empty()) {
    for (size_t i = key & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == key) {
        *value = values_[i];
        return Outcome::kPresent;
      }
      if (keys_[i] == 0) break;
    }
  }
  if (size_ >= max_units_) return Outcome::kFull;
  if (static_cast<size_t>(size_ + 1) * 2 > keys_.size()) Grow();
  size_t i = key & mask_;
  while (keys_[i] != 0) i = (i + 1) & mask_;
  keys_[i] = key;
  values_[i] = *value;
  ++size_;
  return Outcome::kInserted;
}

void UnitTable::Grow() {
  const size_t slots = keys_.empty() ? kInitialSlots : keys_.size() * 2;
  std::vector<uint64_t> old_keys(slots, 0);
  std::vector<uint8_t> old_values(slots, 0);
  old_keys.swap(keys_);
  old_values.swap(values_);
  mask_ = slots - 1;
  for (size_t j = 0; j < old_keys.size(); ++j) {
    if (old_keys[j] == 0) continue;
    size_t i = old_keys[j] & mask_;
    while (keys_[i] != 0) i = (i + 1) & mask_;
    keys_[i] = old_keys[j];
    values_[i] = old_values[j];
  }
}

}  // namespace rankwatch::stream
