// Watermark: how far event time has progressed, i.e. up to when join
// windows may close.
//
// Events come from several sources (Kafka topic-partitions; one source in a
// replay), read at different paces: one partition may be read far ahead of
// another. Each source tracks the highest event time it has delivered, and
// the watermark is the minimum of those over the sources that may still
// deliver older data, minus the allowed lateness. So an event whose time is
// at least (the highest earlier event time of its own source) - lateness
// is never behind the watermark, however the sources are interleaved: that
// is what makes the joins independent of arrival order.
//
// A source that has caught up with its end (the consumer reports it idle)
// keeps holding the watermark at its highest event time for
// `idle_timeout` of wall time, then stops holding it back (so that one
// quiet partition does not stall every window). Holding first matters when
// one topic lags another: its partitions are caught up again and again
// between the lagging producer's writes, and releasing them at once would
// let the other topic close windows before their judgments are read. When
// no event arrives at all for `idle_timeout`, event time is taken to
// advance with the wall clock, so an idle stream still closes its windows.
//
// Separately it keeps the watermark restored from a previous owner's commit
// (Restore): it only tells which re-read events that owner had already
// finalized, and never closes a window here. Never decreases.
//
// Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_WATERMARK_H_
#define RANKWATCH_DAEMON_STREAM_WATERMARK_H_

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
  void RemoveSource(int32_t source);
  // An idle source has nothing more to deliver for now.
  void SetIdle(int32_t source, bool idle);
  // Records an event of `source` (registering the source if new).
  void Observe(int32_t source, int64_t event_ms);

  // Applies wall-clock progress: idle sources whose hold expired, and a
  // stream without events. Returns true when the watermark moved.
  bool AdvanceWallClock();

  // Records a previous owner's watermark (see the class comment).
  void Restore(int64_t watermark_ms);

  int64_t value() const { return value_; }        // INT64_MIN before any event.
  int64_t restored() const { return restored_; }  // INT64_MIN if none.
  int64_t max_event_ms() const { return max_event_ms_; }

 private:
  struct Source {
    bool present = false;
    bool idle = false;
    int64_t idle_since_wall_ms = 0;
    int64_t max_ms = INT64_MIN;
  };

  Source& At(int32_t source);
  void Recompute(int64_t now_wall_ms);

  int64_t lateness_ms_;
  int64_t idle_timeout_ms_;
  const Clock* clock_;
  std::vector<Source> sources_;  // Indexed by source id (small integers).
  int64_t max_event_ms_ = INT64_MIN;
  int64_t last_event_wall_ms_ = 0;
  int64_t value_ = INT64_MIN;
  int64_t restored_ = INT64_MIN;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_WATERMARK_H_
