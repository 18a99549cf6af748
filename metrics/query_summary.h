// QuerySummary: the most frequent queries of one stream of lists (one A/B
// arm), in bounded memory, with each tracked query's running statistics per
// series, for "which queries moved" (issue 26; metrics/movers.h ranks
// them).
//
// The frequent queries are Metwally, Agrawal and El Abbadi's Space-Saving
// (ICDT 2005): `capacity` counters; a query not tracked takes the counter
// with the smallest count, inheriting that count as its possible
// overestimate (`error`). For every tracked query count - error <= its true
// count <= count, and every query seen more than total / capacity times is
// tracked. A query's statistics cover the lists since it was last taken into
// the summary (all of them when error == 0); its Space-Saving count is a
// frequency estimate only.
//
// Memory is bounded by the capacity: about 120 + 40 x series bytes per
// counter plus the query text (bytes()). Add() costs a hash probe and a
// heap step, O(log capacity), and allocates only when a query text longer
// than any before enters a counter.
//
// Ownership: owns its entries. Thread-safety: none (one pipeline thread).
#ifndef RANKWATCH_METRICS_QUERY_SUMMARY_H_
#define RANKWATCH_METRICS_QUERY_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/running_stats.h"

namespace rankwatch::metrics {

class QuerySummary {
 public:
  struct Entry {
    std::string query;
    uint64_t hash = 0;
    int64_t count = 0;  // Space-Saving's estimate.
    int64_t error = 0;  // How much `count` may exceed the true count.
    std::vector<RunningStats> series;  // Since the query entered.
  };

  // `capacity` >= 1 counters; `num_series` values per list.
  QuerySummary(int32_t capacity, int32_t num_series);

  // One list of `query` (`hash` a 64-bit hash of its text) with one value
  // per series; a NaN value (a list without that series) is left out.
  void Add(std::string_view query, uint64_t hash,
           std::span<const double> values);

  // Takes in a tracked query as a checkpoint or a merge holds it: `query`
  // with its counts and statistics (num_series of them), if not tracked yet
  // and a counter is free; false otherwise (nothing changes).
  bool Restore(std::string_view query, uint64_t hash, int64_t count,
               int64_t error, std::span<const RunningStats> series);
  // Sets total() (a restored summary's lists).
  void set_total(int64_t total) { total_ = total; }

  int64_t total() const { return total_; }  // Lists added.
  int32_t capacity() const { return capacity_; }
  // The tracked queries, in no particular order.
  std::span<const Entry> entries() const {
    return std::span<const Entry>(entries_).first(size_);
  }
  // The tracked entry of `hash`, or nullptr.
  const Entry* Find(uint64_t hash) const;
  // Bytes held (counters, index, query texts).
  size_t bytes() const;

 private:
  int32_t Lookup(uint64_t hash) const;  // Entry index or -1.
  void Insert(uint64_t hash, int32_t entry);
  void Erase(uint64_t hash);
  void SiftDown(size_t at);
  void SiftUp(size_t at);
  void Swap(size_t a, size_t b);

  int32_t capacity_;
  int32_t num_series_;
  int32_t size_ = 0;
  int64_t total_ = 0;
  std::vector<Entry> entries_;
  // A min-heap of entry indices by count, and each entry's place in it.
  std::vector<int32_t> heap_;
  std::vector<size_t> place_;
  // Open addressing by hash (linear probing, backward-shift deletion):
  // slot -> entry index + 1 (0: empty).
  std::vector<uint64_t> keys_;
  std::vector<int32_t> slots_;
  size_t mask_ = 0;
};

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_QUERY_SUMMARY_H_
