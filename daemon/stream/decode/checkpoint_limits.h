// CheckpointLimits: the bounds a restored checkpoint record must obey, the
// same as a live event's (events.max_results, max_id_length,
// join.max_judgments_per_request, max_pending_requests, the event-time
// bounds events.min_timestamp and max_future_skew). The changelog topic is
// input like any other: whoever can write to it controls bytes every
// replica decodes at start, so a decoder checks every count, length, string
// and time against these before it allocates or keeps anything
// (docs/operations.md, "Durable state").
//
// A plain value; the default bounds nothing (unit tests of one module);
// Pipeline::DecodeShard passes the configuration's, with the wall clock of
// the restore. Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_DECODE_CHECKPOINT_LIMITS_H_
#define RANKWATCH_DAEMON_STREAM_DECODE_CHECKPOINT_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/byte_codec.h"
#include "base/rfc3339.h"
#include "base/saturating.h"
#include "config/config.h"

namespace rankwatch::stream {

// More than any stream counts (2^48: 2.8 x 10^14 events). A restored count
// beyond is corrupt: sums of a few thousand such counts (shards, buckets,
// cells, pairs) must stay within int64.
inline constexpr int64_t kMaxRestoredCount = int64_t{1} << 48;

// Fails `in` unless 0 <= count <= kMaxRestoredCount; `what` names it.
inline void CheckCount(ByteReader* in, int64_t count, std::string_view what) {
  if (in->ok() && (count < 0 || count > kMaxRestoredCount)) {
    in->Fail(std::string(what) + " " + std::to_string(count) + " out of range");
  }
}

struct CheckpointLimits {
  size_t max_id_length = SIZE_MAX;
  size_t max_results = SIZE_MAX;
  size_t max_judgments_per_request = SIZE_MAX;
  uint64_t max_pending_requests = UINT64_MAX;
  // Event times outside [min_time_ms, max_time_ms] are refused, as a live
  // event's are (past_timestamp, future_timestamp).
  int64_t min_time_ms = INT64_MIN;
  int64_t max_time_ms = INT64_MAX;
  // How far past an event time a pending request's deadline may lie: the
  // join's window, lateness and early tolerance (what a live request's
  // deadline adds to its event times).
  int64_t max_deadline_after_ms = INT64_MAX;

  // The configuration's bounds at wall-clock time `now_ms`.
  static CheckpointLimits Of(const config::Config& c, int64_t now_ms) {
    CheckpointLimits l;
    l.max_id_length = static_cast<size_t>(c.events.max_id_length);
    l.max_results = static_cast<size_t>(c.events.max_results);
    l.max_judgments_per_request =
        static_cast<size_t>(c.join.max_judgments_per_request);
    l.max_pending_requests = static_cast<uint64_t>(c.join.max_pending_requests);
    l.min_time_ms = c.events.min_timestamp_ms;
    l.max_time_ms = SatAdd(now_ms, c.events.max_future_skew.count());
    l.max_deadline_after_ms = SatAdd(
        SatAdd(c.join.window.count(), c.join.allowed_lateness.count()),
        SatAdd(c.join.early_tolerance.count(), c.join.qrels_delay.count()));
    return l;
  }

  // Fails `in` when `time_ms` (`what`, e.g. "newest event time") lies
  // outside the bounds; INT64_MIN ("none yet") passes.
  void CheckTime(ByteReader* in, int64_t time_ms, std::string_view what) const {
    if (time_ms == INT64_MIN || !in->ok()) return;
    if (time_ms > max_time_ms) {
      in->Fail(std::string(what) + " " + FormatRfc3339Millis(time_ms) +
               " is after the wall clock plus events.max_future_skew (" +
               FormatRfc3339Millis(max_time_ms) + ")");
    } else if (time_ms < min_time_ms) {
      in->Fail(std::string(what) + " " + FormatRfc3339Millis(time_ms) +
               " is before events.min_timestamp " +
               FormatRfc3339Millis(min_time_ms));
    }
  }

  // The same for a window bucket index of `bucket_ms`-wide buckets: its
  // bucket must hold a time within the bounds.
  void CheckBucket(ByteReader* in, int64_t bucket, int64_t bucket_ms,
                   std::string_view what) const {
    if (!in->ok()) return;
    if (bucket_ms <= 0) {
      in->Fail(std::string(what) + " of buckets " + std::to_string(bucket_ms) +
               " ms wide");
      return;
    }
    const int64_t first = FloorDiv(min_time_ms, bucket_ms);
    const int64_t last = FloorDiv(max_time_ms, bucket_ms);
    if (bucket < first || bucket > last) {
      in->Fail(std::string(what) + " " + std::to_string(bucket) + " (of " +
               std::to_string(bucket_ms) +
               " ms) outside the event-time bounds (events.min_timestamp, "
               "events.max_future_skew)");
    }
  }
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_DECODE_CHECKPOINT_LIMITS_H_
