#include "metrics/query_summary.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rankwatch::metrics {

QuerySummary::QuerySummary(int32_t capacity, int32_t num_series)
    : capacity_(capacity < 1 ? 1 : capacity),
      num_series_(num_series < 0 ? 0 : num_series) {
  entries_.resize(static_cast<size_t>(capacity_));
  for (Entry& e : entries_) {
    e.series.resize(static_cast<size_t>(num_series_));
  }
  heap_.reserve(static_cast<size_t>(capacity_));
  place_.assign(static_cast<size_t>(capacity_), 0);
  size_t slots = 4;
  while (slots < 2 * static_cast<size_t>(capacity_)) slots *= 2;
  keys_.assign(slots, 0);
  slots_.assign(slots, 0);
  mask_ = slots - 1;
}

int32_t QuerySummary::Lookup(uint64_t hash) const {
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    if (slots_[i] == 0) return -1;
    if (keys_[i] == hash) return slots_[i] - 1;
  }
}

const QuerySummary::Entry* QuerySummary::Find(uint64_t hash) const {
  const int32_t e = Lookup(hash);
  return e < 0 ? nullptr : &entries_[static_cast<size_t>(e)];
}

void QuerySummary::Insert(uint64_t hash, int32_t entry) {
  size_t i = hash & mask_;
  while (slots_[i] != 0) i = (i + 1) & mask_;
  keys_[i] = hash;
  slots_[i] = entry + 1;
}

void QuerySummary::Erase(uint64_t hash) {
  size_t i = hash & mask_;
  while (slots_[i] != 0 && keys_[i] != hash) i = (i + 1) & mask_;
  if (slots_[i] == 0) return;
  // Backward shift: move later entries of the probe run into the hole when
  // their home slot does not lie strictly after it (cyclically).
  size_t hole = i;
  for (size_t j = (i + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = keys_[j] & mask_;
    const bool between =
        hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (between) continue;
    keys_[hole] = keys_[j];
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = 0;
  keys_[hole] = 0;
}

void QuerySummary::Swap(size_t a, size_t b) {
  std::swap(heap_[a], heap_[b]);
  place_[static_cast<size_t>(heap_[a])] = a;
  place_[static_cast<size_t>(heap_[b])] = b;
}

void QuerySummary::SiftDown(size_t at) {
  const size_t n = heap_.size();
  for (;;) {
    size_t smallest = at;
    for (size_t child : {2 * at + 1, 2 * at + 2}) {
      if (child < n &&
          entries_[static_cast<size_t>(heap_[child])].count <
              entries_[static_cast<size_t>(heap_[smallest])].count) {
        smallest = child;
      }
    }
    if (smallest == at) return;
    Swap(at, smallest);
    at = smallest;
  }
}

void QuerySummary::SiftUp(size_t at) {
  while (at > 0) {
    const size_t parent = (at - 1) / 2;
    if (entries_[static_cast<size_t>(heap_[parent])].count <=
        entries_[static_cast<size_t>(heap_[at])].count) {
      return;
    }
    Swap(at, parent);
    at = parent;
  }
}

void QuerySummary::Add(std::string_view query, uint64_t hash,
                       std::span<const double> values) {
  ++total_;
  int32_t e = Lookup(hash);
  if (e >= 0) {
    ++entries_[static_cast<size_t>(e)].count;
    SiftDown(place_[static_cast<size_t>(e)]);
  } else {
    int64_t inherited = 0;
    if (size_ < capacity_) {
      e = size_++;
      heap_.push_back(e);
      place_[static_cast<size_t>(e)] = heap_.size() - 1;
    } else {
      // Space-Saving: the smallest counter changes hands.
      e = heap_[0];
      Erase(entries_[static_cast<size_t>(e)].hash);
      inherited = entries_[static_cast<size_t>(e)].count;
    }
    Entry& entry = entries_[static_cast<size_t>(e)];
    entry.query.assign(query);  // Reuses the evicted text's capacity.
    entry.hash = hash;
    entry.count = inherited + 1;
    entry.error = inherited;
    for (RunningStats& s : entry.series) s.Clear();
    Insert(hash, e);
    const size_t at = place_[static_cast<size_t>(e)];
    SiftUp(at);
    SiftDown(place_[static_cast<size_t>(e)]);
  }
  Entry& entry = entries_[static_cast<size_t>(e)];
  const size_t n = std::min(values.size(), entry.series.size());
  for (size_t s = 0; s < n; ++s) {
    if (!std::isnan(values[s])) entry.series[s].Add(values[s]);
  }
}

bool QuerySummary::Restore(std::string_view query, uint64_t hash, int64_t count,
                           int64_t error,
                           std::span<const RunningStats> series) {
  if (size_ >= capacity_ || Lookup(hash) >= 0 ||
      series.size() != static_cast<size_t>(num_series_)) {
    return false;
  }
  const int32_t e = size_++;
  Entry& entry = entries_[static_cast<size_t>(e)];
  entry.query.assign(query);
  entry.hash = hash;
  entry.count = count;
  entry.error = error;
  std::copy(series.begin(), series.end(), entry.series.begin());
  heap_.push_back(e);
  place_[static_cast<size_t>(e)] = heap_.size() - 1;
  SiftUp(heap_.size() - 1);
  Insert(hash, e);
  return true;
}

size_t QuerySummary::bytes() const {
  size_t b =
      sizeof(*this) + entries_.capacity() * sizeof(Entry) +
      heap_.capacity() * sizeof(int32_t) + place_.capacity() * sizeof(size_t) +
      keys_.capacity() * sizeof(uint64_t) + slots_.capacity() * sizeof(int32_t);
  for (const Entry& e : entries_) {
    b += e.series.capacity() * sizeof(RunningStats);
    if (e.query.capacity() > 15) b += e.query.capacity() + 1;  // Past SSO.
  }
  return b;
}

}  // namespace rankwatch::metrics
