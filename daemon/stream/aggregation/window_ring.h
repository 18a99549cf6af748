// WindowRing: sliding-window sums of several series in a ring of
// fixed-width event-time buckets (count, sum and sum of squares per bucket
// and series), from which any window up to the ring's span is summed
// exactly to the bucket granularity. The aggregator keeps one per label
// group; the interleaving monitor one per experiment.
//
// A plain value, checkpointed with its owner (Encode, Decode; and in a
// delta record only the buckets changed since the previous record:
// EncodeChanges, DecodeChanges, Apply). Not
// thread-safe for writers; its const methods keep nothing, so any number
// of readers may share one that no writer changes (a snapshot's copy).
#ifndef RANKWATCH_DAEMON_STREAM_AGGREGATION_WINDOW_RING_H_
#define RANKWATCH_DAEMON_STREAM_AGGREGATION_WINDOW_RING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/byte_codec.h"
#include "daemon/stream/decode/checkpoint_limits.h"

namespace rankwatch::stream {

// More series than any configuration has: a checkpoint's count beyond is
// corruption.
inline constexpr uint64_t kMaxEncodedSeries = 4096;

// Totals of one series over a window.
struct WindowTotals {
  int64_t count = 0;
  double sum = 0;
  double sum_of_squares = 0;
  double mean() const;
  // Unbiased sample variance from the sums. Measures are bounded (in
  // [0, 1], or small counts and ranks): no cancellation worth a Welford
  // merge. A field of results events is not: its relative error is about
  // 1e-16 x (mean / sd)^2, negligible below mean / sd = 1e5 (a latency of
  // 80 ms with sd 20 is 4; docs/statistics.md).
  double variance() const;
};

struct WindowChanges;

// Sliding-window sums in a ring of fixed-width event-time buckets.
class WindowRing {
 public:
  WindowRing(int64_t bucket_ms, int64_t span_ms, size_t num_series);

  // Adds one request's values at event time `time_ms`. Values older than
  // the ring's span relative to the newest bucket are not kept, nor are
  // undefined (NaN) values: each series counts its own defined values.
  void Add(int64_t time_ms, std::span<const double> values);
  // Totals of `series` over the buckets in (now - window, now], whole
  // buckets: the window ends with the bucket holding `now_ms`.
  WindowTotals Sum(size_t series, int64_t now_ms, int64_t window_ms) const;
  // Adds the totals of Sum(s, now_ms, window_ms) into out[s] for every
  // series s < min(out.size(), series): the same figures, bit for bit, with
  // the buckets walked once for all series (a look sums every series of
  // every group, under the daemon's lock).
  void AddSums(int64_t now_ms, int64_t window_ms,
               std::span<WindowTotals> out) const;
  // Per-bucket totals of `series` for the history charts of the status
  // page: out->size() buckets ending with the one holding `now_ms`, oldest
  // first; a bucket the ring does not hold (never filled, or older than its
  // span) reads as empty. Reads the ring as Sum() does; keeps nothing.
  void BucketTotals(size_t series, int64_t now_ms,
                    std::span<WindowTotals> out) const;
  int64_t bucket_ms() const { return bucket_ms_; }
  // Buckets the ring holds: the longest window's, plus the one in progress.
  size_t num_buckets() const { return num_slots_; }
  // A ring of `span_ms` and `from.size()` series (a configuration reload):
  // series i takes this ring's series from[i] (-1: starts empty), bucket
  // by bucket, as far back as the new span reaches. With another bucket
  // width the buckets cannot be re-cut exactly: the new ring starts empty.
  WindowRing Remapped(int64_t bucket_ms, int64_t span_ms,
                      std::span<const int> from) const;
  // Adds `other`'s buckets (same bucket width and series) into this ring,
  // as if its values had been added here; buckets older than this ring's
  // span (after the merge) are not kept, as in Add().
  void MergeFrom(const WindowRing& other);
  // Whether every bucket's sums are those of its count of values in
  // [lo, hi] (0 <= lo): a restored ring of outcomes (0 or 1) must hold
  // counts, which its reader converts to integers.
  bool ValuesWithin(double lo, double hi) const;
  // The held buckets and their sums, for a checkpoint.
  void Encode(ByteWriter* out) const;
  // A ring of `bucket_ms`, `span_ms` and `from.size()` series from an
  // encoded one: series i takes the encoded series from[i] (-1: empty). An
  // encoding of another bucket width restores empty (the buckets cannot be
  // re-cut), as Remapped() does. Bucket indices outside `limits`' event
  // times, and negative counts, fail `in`.
  static WindowRing Decode(ByteReader* in, int64_t bucket_ms, int64_t span_ms,
                           std::span<const int> from,
                           const CheckpointLimits& limits = {});

  // Checkpoints proportional to change (Aggregator::EncodeShardDelta): a
  // flag, then Encode()'s layout holding only the buckets added to since
  // the last MarkRecorded(). The flag is 1, and every held bucket written,
  // when the ring's buckets did not all come from Add() since then (it was
  // remapped by a reload, decoded or merged): its changes are then the
  // whole ring. One bucket of 10 s changes in a round of 5 s where the
  // ring holds an hour's 361.
  void EncodeChanges(ByteWriter* out) const;
  // The ring's state is in a record (a base or a delta): changes count
  // from here.
  void MarkRecorded();
  // EncodeChanges' output, read as Decode() reads Encode()'s (the same
  // checks; the buckets in a ring of their own), to Apply() onto the ring
  // that the records before it restored.
  static WindowChanges DecodeChanges(ByteReader* in, int64_t bucket_ms,
                                     int64_t span_ms, std::span<const int> from,
                                     const CheckpointLimits& limits = {});
  // Applies `changes`, decoded with this ring's bucket width, span and
  // series: each changed bucket replaces what its slot held, and the
  // newest bucket moves on. A ring restored from a base, then each
  // delta's changes applied, holds the live ring's buckets.
  void Apply(WindowChanges changes);

 private:
  size_t Slot(int64_t bucket) const;
  // The buckets [*first, *last] of the window Sum() reads; false when none.
  bool WindowBuckets(int64_t now_ms, int64_t window_ms, int64_t* first,
                     int64_t* last) const;
  // The oldest bucket the span keeps behind newest_bucket_ (saturating: a
  // restored newest bucket near INT64_MIN must not overflow).
  int64_t OldestKept() const;
  // Encode()'s layout, of every held bucket or of the changed ones only.
  void EncodeSlots(bool changed_only, ByteWriter* out) const;

  int64_t bucket_ms_;
  size_t num_slots_;
  size_t num_series_;
  int64_t newest_bucket_ = INT64_MIN;
  std::vector<int64_t> slot_bucket_;  // Bucket index a slot holds; -1 none.
  std::vector<int64_t> slot_counts_;  // [slot][series]: defined values.
  std::vector<double> slot_sums_;     // [slot][series][sum, sum of squares].
  // Since the last MarkRecorded(): the slots Add() wrote to (1), and
  // whether the whole ring is to be written (see EncodeChanges).
  std::vector<uint8_t> slot_changed_;
  bool whole_changed_ = false;
};

// A ring's changes as a delta record holds them (WindowRing::DecodeChanges).
struct WindowChanges {
  bool whole = false;  // `buckets` replaces the ring.
  WindowRing buckets{1, 1, 0};
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_AGGREGATION_WINDOW_RING_H_
