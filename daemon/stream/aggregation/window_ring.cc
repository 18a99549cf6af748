#include "daemon/stream/aggregation/window_ring.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "base/saturating.h"

namespace rankwatch::stream {

double WindowTotals::mean() const {
  return count > 0 ? sum / static_cast<double>(count)
                   : std::numeric_limits<double>::quiet_NaN();
}

double WindowTotals::variance() const {
  if (count < 2) return 0.0;
  const double n = static_cast<double>(count);
  return std::max(0.0, (sum_of_squares - sum * sum / n) / (n - 1));
}

WindowRing::WindowRing(int64_t bucket_ms, int64_t span_ms, size_t num_series)
    : bucket_ms_(std::max<int64_t>(1, bucket_ms)),
      num_slots_(static_cast<size_t>(span_ms / bucket_ms_) + 1),
      num_series_(num_series),
      slot_bucket_(num_slots_, -1),
      slot_counts_(num_slots_ * num_series, 0),
      slot_sums_(num_slots_ * num_series * 2, 0.0),
      slot_changed_(num_slots_, 0) {}

int64_t WindowRing::OldestKept() const {
  return SatAdd(SatSub(newest_bucket_, static_cast<int64_t>(num_slots_)), 1);
}

size_t WindowRing::Slot(int64_t bucket) const {
  const int64_t n = static_cast<int64_t>(num_slots_);
  return static_cast<size_t>(((bucket % n) + n) % n);
}

void WindowRing::Add(int64_t time_ms, std::span<const double> values) {
  const int64_t bucket = FloorDiv(time_ms, bucket_ms_);
  if (bucket > newest_bucket_) newest_bucket_ = bucket;
  if (bucket <= SatSub(newest_bucket_, static_cast<int64_t>(num_slots_))) {
    return;
  }
  const size_t slot = Slot(bucket);
  double* sums = &slot_sums_[slot * num_series_ * 2];
  int64_t* counts = &slot_counts_[slot * num_series_];
  slot_changed_[slot] = 1;
  if (slot_bucket_[slot] != bucket) {
    slot_bucket_[slot] = bucket;
    std::fill(counts, counts + num_series_, 0);
    std::fill(sums, sums + num_series_ * 2, 0.0);
  }
  for (size_t s = 0; s < values.size() && s < num_series_; ++s) {
    if (!metrics::IsDefinedValue(values[s])) continue;
    ++counts[s];
    sums[2 * s] += values[s];
    sums[2 * s + 1] += values[s] * values[s];
  }
}

bool WindowRing::WindowBuckets(int64_t now_ms, int64_t window_ms,
                               int64_t* first, int64_t* last) const {
  if (newest_bucket_ == INT64_MIN) return false;  // Nothing added yet.
  *last = FloorDiv(now_ms, bucket_ms_);
  const int64_t buckets =
      std::min<int64_t>(std::max<int64_t>(1, window_ms / bucket_ms_),
                        static_cast<int64_t>(num_slots_));
  // Slots older than the ring's span may still hold stale buckets.
  *first = std::max(SatAdd(SatSub(*last, buckets), 1), OldestKept());
  return *first <= *last;
}

WindowTotals WindowRing::Sum(size_t series, int64_t now_ms,
                             int64_t window_ms) const {
  WindowTotals t;
  int64_t first = 0;
  int64_t last = 0;
  if (!WindowBuckets(now_ms, window_ms, &first, &last)) return t;
  // Counted, not compared with `last`: a bucket at INT64_MAX ends the loop.
  for (int64_t i = 0, n = last - first; i <= n; ++i) {
    const int64_t b = first + i;
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    t.count += slot_counts_[slot * num_series_ + series];
    t.sum += slot_sums_[(slot * num_series_ + series) * 2];
    t.sum_of_squares += slot_sums_[(slot * num_series_ + series) * 2 + 1];
  }
  return t;
}

void WindowRing::AddSums(int64_t now_ms, int64_t window_ms,
                         std::span<WindowTotals> out) const {
  int64_t first = 0;
  int64_t last = 0;
  if (!WindowBuckets(now_ms, window_ms, &first, &last)) return;
  const size_t n_series = std::min(out.size(), num_series_);
  // Per series, the buckets are added in Sum()'s order into a total of
  // its own, then into out: the same additions, so the same doubles. The
  // totals live on the stack, a chunk of series per walk of the buckets
  // (one walk up to kChunk series), so concurrent readers share nothing.
  constexpr size_t kChunk = 64;
  std::array<WindowTotals, kChunk> totals;
  for (size_t begin = 0; begin < n_series; begin += kChunk) {
    const size_t end = std::min(n_series, begin + kChunk);
    std::fill(totals.begin(), totals.end(), WindowTotals{});
    // Counted, not compared with `last`: a bucket at INT64_MAX ends it.
    for (int64_t i = 0, n = last - first; i <= n; ++i) {
      const int64_t b = first + i;
      const size_t slot = Slot(b);
      if (slot_bucket_[slot] != b) continue;
      const int64_t* counts = &slot_counts_[slot * num_series_];
      const double* sums = &slot_sums_[slot * num_series_ * 2];
      for (size_t s = begin; s < end; ++s) {
        WindowTotals& into = totals[s - begin];
        into.count += counts[s];
        into.sum += sums[2 * s];
        into.sum_of_squares += sums[2 * s + 1];
      }
    }
    for (size_t s = begin; s < end; ++s) {
      out[s].count += totals[s - begin].count;
      out[s].sum += totals[s - begin].sum;
      out[s].sum_of_squares += totals[s - begin].sum_of_squares;
    }
  }
}

void WindowRing::BucketTotals(size_t series, int64_t now_ms,
                              std::span<WindowTotals> out) const {
  std::fill(out.begin(), out.end(), WindowTotals{});
  if (newest_bucket_ == INT64_MIN || series >= num_series_) return;
  const int64_t last = FloorDiv(now_ms, bucket_ms_);
  // As in Sum(): slots older than the ring's span may hold stale buckets.
  const int64_t first =
      SatAdd(SatSub(last, static_cast<int64_t>(out.size())), 1);
  const int64_t from = std::max(first, OldestKept());
  if (from > last) return;
  for (int64_t i = 0, n = last - from; i <= n; ++i) {
    const int64_t b = from + i;
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    WindowTotals& t = out[static_cast<size_t>(b - first)];
    t.count = slot_counts_[slot * num_series_ + series];
    t.sum = slot_sums_[(slot * num_series_ + series) * 2];
    t.sum_of_squares = slot_sums_[(slot * num_series_ + series) * 2 + 1];
  }
}

void WindowRing::MergeFrom(const WindowRing& other) {
  if (other.newest_bucket_ == INT64_MIN || other.bucket_ms_ != bucket_ms_ ||
      other.num_series_ != num_series_) {
    return;
  }
  newest_bucket_ = std::max(newest_bucket_, other.newest_bucket_);
  whole_changed_ = true;
  const int64_t oldest_kept = OldestKept();
  for (size_t from = 0; from < other.num_slots_; ++from) {
    const int64_t b = other.slot_bucket_[from];
    if (b == -1 || b < oldest_kept) continue;
    if (b < other.OldestKept()) {
      continue;  // Stale in `other`: outside its own span.
    }
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) {
      slot_bucket_[slot] = b;
      std::fill_n(&slot_counts_[slot * num_series_], num_series_, 0);
      std::fill_n(&slot_sums_[slot * num_series_ * 2], num_series_ * 2, 0.0);
    }
    for (size_t s = 0; s < num_series_; ++s) {
      slot_counts_[slot * num_series_ + s] +=
          other.slot_counts_[from * num_series_ + s];
      slot_sums_[(slot * num_series_ + s) * 2] +=
          other.slot_sums_[(from * num_series_ + s) * 2];
      slot_sums_[(slot * num_series_ + s) * 2 + 1] +=
          other.slot_sums_[(from * num_series_ + s) * 2 + 1];
    }
  }
}

bool WindowRing::ValuesWithin(double lo, double hi) const {
  for (size_t i = 0; i < slot_counts_.size(); ++i) {
    const double n = static_cast<double>(slot_counts_[i]);
    const double sum = slot_sums_[2 * i];
    const double squares = slot_sums_[2 * i + 1];
    // Written so that NaN fails.
    if (!(sum >= lo * n && sum <= hi * n && squares >= lo * lo * n &&
          squares <= hi * hi * n)) {
      return false;
    }
  }
  return true;
}

void WindowRing::Encode(ByteWriter* out) const {
  EncodeSlots(/*changed_only=*/false, out);
}

void WindowRing::EncodeChanges(ByteWriter* out) const {
  out->Varint(whole_changed_ ? 1 : 0);
  EncodeSlots(/*changed_only=*/!whole_changed_, out);
}

void WindowRing::MarkRecorded() {
  std::fill(slot_changed_.begin(), slot_changed_.end(), 0);
  whole_changed_ = false;
}

void WindowRing::EncodeSlots(bool changed_only, ByteWriter* out) const {
  out->I64(bucket_ms_);
  out->I64(newest_bucket_);
  out->Varint(num_series_);
  size_t held = 0;
  const int64_t oldest_kept =
      newest_bucket_ == INT64_MIN ? INT64_MAX : OldestKept();
  // A changed slot whose bucket has aged out of the span since is not
  // written: the newest bucket ages it out of the restored ring too.
  auto live = [&](size_t slot) {
    return slot_bucket_[slot] != -1 && slot_bucket_[slot] >= oldest_kept &&
           (!changed_only || slot_changed_[slot] != 0);
  };
  for (size_t slot = 0; slot < num_slots_; ++slot) held += live(slot) ? 1 : 0;
  out->Varint(held);
  for (size_t slot = 0; slot < num_slots_; ++slot) {
    if (!live(slot)) continue;
    out->I64(slot_bucket_[slot]);
    for (size_t s = 0; s < num_series_; ++s) {
      out->Varint(static_cast<uint64_t>(slot_counts_[slot * num_series_ + s]));
      out->Double(slot_sums_[(slot * num_series_ + s) * 2]);
      out->Double(slot_sums_[(slot * num_series_ + s) * 2 + 1]);
    }
  }
}

WindowRing WindowRing::Decode(ByteReader* in, int64_t bucket_ms,
                              int64_t span_ms, std::span<const int> from,
                              const CheckpointLimits& limits) {
  WindowRing ring(bucket_ms, span_ms, from.size());
  const int64_t encoded_bucket_ms = in->I64();
  const int64_t newest = in->I64();
  // A corrupt count must not size the vectors below: the checkpoint holds
  // a few dozen series.
  const uint64_t num_series = in->Varint();
  if (num_series > kMaxEncodedSeries) in->Fail("too many window series");
  // A bucket: its index, then per series a count (>= 1 byte) and two sums.
  const uint64_t held = in->ok() ? in->Count(8 + num_series * 17) : 0;
  // A newest bucket is written even for an empty ring, and read only when
  // buckets follow: then it must be an event time's, as each bucket's.
  if (held > 0) {
    limits.CheckBucket(in, newest, encoded_bucket_ms,
                       "a window's newest bucket");
  }
  const bool same_width = encoded_bucket_ms == ring.bucket_ms_;
  if (same_width && held > 0) ring.newest_bucket_ = newest;
  const int64_t oldest_kept =
      SatAdd(SatSub(newest, static_cast<int64_t>(ring.num_slots_)), 1);
  if (!in->ok()) return ring;
  std::vector<int64_t> counts(num_series);
  std::vector<double> sums(num_series * 2);
  for (uint64_t i = 0; i < held && in->ok(); ++i) {
    const int64_t b = in->I64();
    for (uint64_t s = 0; s < num_series; ++s) {
      counts[s] = static_cast<int64_t>(in->Varint());
      sums[2 * s] = in->Double();
      sums[2 * s + 1] = in->Double();
    }
    if (b > newest) in->Fail("a window bucket newer than the ring's newest");
    limits.CheckBucket(in, b, encoded_bucket_ms, "a window bucket");
    for (uint64_t s = 0; s < num_series; ++s) {
      CheckCount(in, counts[s], "a window count");
    }
    if (!same_width || b < oldest_kept || !in->ok()) continue;
    const size_t slot = ring.Slot(b);
    ring.slot_bucket_[slot] = b;
    for (size_t s = 0; s < from.size(); ++s) {
      if (from[s] < 0 || static_cast<uint64_t>(from[s]) >= num_series) continue;
      const size_t at = slot * ring.num_series_ + s;
      const size_t old = static_cast<size_t>(from[s]);
      ring.slot_counts_[at] = counts[old];
      ring.slot_sums_[2 * at] = sums[2 * old];
      ring.slot_sums_[2 * at + 1] = sums[2 * old + 1];
    }
  }
  if (!in->ok()) return WindowRing(bucket_ms, span_ms, from.size());
  ring.whole_changed_ = true;
  return ring;
}

WindowChanges WindowRing::DecodeChanges(ByteReader* in, int64_t bucket_ms,
                                        int64_t span_ms,
                                        std::span<const int> from,
                                        const CheckpointLimits& limits) {
  WindowChanges changes;
  const uint64_t whole = in->Varint();
  if (whole > 1) in->Fail("a window's changes flag is not 0 or 1");
  changes.whole = whole == 1;
  changes.buckets = Decode(in, bucket_ms, span_ms, from, limits);
  return changes;
}

void WindowRing::Apply(WindowChanges changes) {
  if (changes.whole) {
    *this = std::move(changes.buckets);
    return;
  }
  const WindowRing& c = changes.buckets;
  // Decoded for another bucket width (nothing held), or nothing changed.
  if (c.newest_bucket_ == INT64_MIN || c.bucket_ms_ != bucket_ms_ ||
      c.num_series_ != num_series_) {
    return;
  }
  newest_bucket_ = std::max(newest_bucket_, c.newest_bucket_);
  whole_changed_ = true;
  const int64_t oldest_kept = OldestKept();
  for (size_t from = 0; from < c.num_slots_; ++from) {
    const int64_t b = c.slot_bucket_[from];
    if (b == -1 || b < oldest_kept) continue;
    const size_t slot = Slot(b);
    slot_bucket_[slot] = b;
    std::copy_n(&c.slot_counts_[from * num_series_], num_series_,
                &slot_counts_[slot * num_series_]);
    std::copy_n(&c.slot_sums_[from * num_series_ * 2], num_series_ * 2,
                &slot_sums_[slot * num_series_ * 2]);
  }
}

WindowRing WindowRing::Remapped(int64_t bucket_ms, int64_t span_ms,
                                std::span<const int> from) const {
  WindowRing ring(bucket_ms, span_ms, from.size());
  // Not what Add() made: a delta writes it whole (EncodeChanges).
  ring.whole_changed_ = true;
  if (ring.bucket_ms_ != bucket_ms_ || newest_bucket_ == INT64_MIN) {
    return ring;
  }
  ring.newest_bucket_ = newest_bucket_;
  const int64_t kept =
      static_cast<int64_t>(std::min(num_slots_, ring.num_slots_));
  const int64_t first = SatAdd(SatSub(newest_bucket_, kept), 1);
  for (int64_t i = 0, n = newest_bucket_ - first; i <= n; ++i) {
    const int64_t b = first + i;
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    const size_t to = ring.Slot(b);
    ring.slot_bucket_[to] = b;
    for (size_t s = 0; s < from.size(); ++s) {
      if (from[s] < 0) continue;
      const size_t old = slot * num_series_ + static_cast<size_t>(from[s]);
      const size_t now = to * ring.num_series_ + s;
      ring.slot_counts_[now] = slot_counts_[old];
      ring.slot_sums_[2 * now] = slot_sums_[2 * old];
      ring.slot_sums_[2 * now + 1] = slot_sums_[2 * old + 1];
    }
  }
  return ring;
}

}  // namespace rankwatch::stream
