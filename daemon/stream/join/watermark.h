// Watermark: how far event time has progressed, i.e. up to when join
// windows may close, per event source and over all of them.
//
// Events come from several sources (Kafka topic-partitions; one source in a
// replay), read at different paces: one partition may be read far ahead of
// another. Each source tracks the highest event time it has delivered, and
// the watermark (value()) is the minimum of those over the sources that may
// still deliver older data, minus the allowed lateness. So an event whose
// time is at least (the highest earlier event time of its own source) -
// lateness is never behind the watermark, however the sources are
// interleaved: that is what makes the joins independent of arrival order.
// value() is what lateness is judged by, and it moves with events only.
//
// A source that has caught up with its end (the consumer reports it idle)
// keeps holding the watermark at its highest event time for
// `idle_timeout` of wall time, then stops holding it back (so that one
// quiet partition does not stall every window). Holding first matters when
// one topic lags another: its partitions are caught up again and again
// between the lagging producer's writes, and releasing them at once would
// let the other topic close windows before their judgments are read. When
// every source has caught up, the watermark moves to the newest event time.
// A source's event time never counts past the wall clock: one event from a
// clock minutes fast must not carry the watermark (and with it every
// window) ahead of the stream, whether or not the other sources are idle.
//
// When no event arrives at all for `idle_timeout`, windows still close:
// closing() advances with the wall clock from the newest event time (capped
// at the wall clock when that event arrived), so an idle stream finalizes
// its last lists. That advance is transient: it closes windows but never
// makes an event late. The next event takes it back to value(), so events
// from the past (a backlog, history backfilled into Kafka) are never judged
// late merely because the wall clock moved on during a lull.
//
// A source restored from a checkpoint (RestoreProgress) is catching up:
// the events its previous owner never read wait in its backlog, and the
// pending requests restored with it need the judgments among them. Until
// the source is reported caught up (SetIdle(source, true)), its shard's
// windows close by events only, never by the wall clock: the idle advance
// does not apply to the shard, however long the process was down. (A
// restore after an outage longer than the lateness would otherwise close
// every restored window before its backlog is read, and lose the
// judgments in it.)
//
// Separately it keeps, per source, the watermark restored from that
// source's previous owner (Restore): it only tells which re-read events of
// that source the previous owner had already finalized, and never closes a
// window here. Per source, because the sources assigned to one replica may
// come from several previous owners (one killed early, one stopped late):
// one watermark for all would skip what the earlier one never finalized.
//
// Event time is also kept per shard: an input partition, whose two sources
// are that partition of the results and of the judgments topic
// (EventOrigin::SourceOf). value(shard) is computed as value() is, over
// the shard's sources only: a request of a shard is judged late, and its
// window closed, by its own partition's progress, never by another's. So
// what a shard computes depends on its own events only, whichever replica
// reads it, whatever else that replica reads, and however far ahead its
// other partitions are (a partition restored on a replica that is ahead
// elsewhere, a backlog read beside live traffic).
//
// Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_WATERMARK_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_WATERMARK_H_

#include <cstdint>
#include <vector>

#include "base/clock.h"

namespace rankwatch::stream {

class Watermark {
 public:
  // `clock` must outlive the watermark.
  Watermark(int64_t allowed_lateness_ms, int64_t idle_timeout_ms,
            const Clock* clock);

  // Registers a source that holds the watermark back until it delivers
  // events or is reported idle (a newly assigned partition).
  void AddSource(int32_t source);
  // Forgets `source`, its restored watermark included (a revoked
  // partition).
  void RemoveSource(int32_t source);
  // An idle source has nothing more to deliver for now.
  void SetIdle(int32_t source, bool idle);
  // Records an event of `source` (registering the source if new).
  void Observe(int32_t source, int64_t event_ms);

  // Applies wall-clock progress: idle sources whose hold expired, and a
  // stream without events. Returns true when closing() moved.
  bool AdvanceWallClock();

  // Records the watermark `source`'s previous owner committed (see the
  // class comment); never decreases.
  void Restore(int32_t source, int64_t watermark_ms);

  // What lateness is judged by: INT64_MIN before any event; never
  // decreases.
  int64_t value() const { return value_; }
  // Up to where windows close: value(), or more while the stream is idle.
  int64_t closing() const { return closing_ > value_ ? closing_ : value_; }
  // The same for one shard (see the class comment): INT64_MIN before its
  // sources deliver; never decreases while a source of it is registered.
  int64_t value(int32_t shard) const;
  // A shard restored and still catching up (see the class comment) closes
  // by events only.
  int64_t closing(int32_t shard) const {
    const int64_t v = value(shard);
    return closing_ > v && !CatchingUp(shard) ? closing_ : v;
  }
  // The highest event time `source` has delivered (INT64_MIN if none), and
  // its restoration from a checkpoint of the source's partition: the source
  // is registered (it holds the watermark back until it delivers or is
  // idle, as AddSource) at that progress, catching up until reported idle.
  int64_t progress(int32_t source) const;
  void RestoreProgress(int32_t source, int64_t max_ms);
  // `source`'s restored watermark; INT64_MIN if none.
  int64_t restored(int32_t source) const;
  int64_t max_event_ms() const { return max_event_ms_; }
  // Whether a source of `shard` was restored and has not been reported
  // caught up since.
  bool CatchingUp(int32_t shard) const;

 private:
  struct Source {
    bool present = false;
    bool idle = false;
    int64_t idle_since_wall_ms = 0;
    int64_t max_ms = INT64_MIN;
    int64_t restored_ms = INT64_MIN;
    bool catching_up = false;  // RestoreProgress until SetIdle(true).
  };

  Source& At(int32_t source);
  void Recompute(int64_t now_wall_ms);  // Global and every shard.
  void RecomputeGlobal(int64_t now_wall_ms);
  // value(shard) from its sources.
  void RecomputeShard(int32_t shard, int64_t now_wall_ms);
  // The progress of a set of sources: the least newest event time of
  // those that still hold, or when none holds the newest event time `max`
  // (capped at the wall clock); INT64_MIN when unknown.
  int64_t Progress(const Source* const* sources, size_t n, int64_t max_ms,
                   int64_t now_wall_ms) const;

  int64_t lateness_ms_;
  int64_t idle_timeout_ms_;
  const Clock* clock_;
  std::vector<Source> sources_;  // Indexed by source id (small integers).
  int64_t max_event_ms_ = INT64_MIN;
  int64_t last_event_wall_ms_ = 0;
  int64_t value_ = INT64_MIN;
  std::vector<int64_t> shard_values_;   // Indexed by shard.
  std::vector<const Source*> scratch_;  // Recompute(): no allocation.
  int64_t closing_ = INT64_MIN;  // The idle advance; INT64_MIN when none.
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_WATERMARK_H_
