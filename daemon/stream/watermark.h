// Watermark: how far event time has progressed, i.e. up to when join
// windows may close.
//
// Events come from several sources (Kafka topic-partitions; one source in a
// replay), which are read at different paces: one partition may be read far
// ahead of another. So each source tracks the highest event time it has
// delivered, and the watermark is the minimum of those over the sources
// that may still deliver older data ("active"), minus the allowed lateness.
// A source that has caught up with its end (the consumer reports it idle)
// no longer holds the watermark back; when every source is idle, the
// highest event time seen counts. When no event arrives at all for
// `idle_timeout` of wall time, event time is taken to advance with the wall
// clock, so an idle stream still closes its windows. Never decreases.
//
// Not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_WATERMARK_H_
#define RANKWATCH_DAEMON_STREAM_WATERMARK_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "daemon/stream/clock.h"

namespace rankwatch::stream {

class Watermark {
 public:
  Watermark(int64_t allowed_lateness_ms, int64_t idle_timeout_ms,
            const Clock* clock)
      : lateness_ms_(allowed_lateness_ms),
        idle_timeout_ms_(idle_timeout_ms),
        clock_(clock) {}

  // Registers a source that holds the watermark back until it delivers
  // events or is reported idle (a newly assigned partition).
  void AddSource(int32_t source) {
    Source& s = At(source);
    s.present = true;
    Recompute();
  }
  void RemoveSource(int32_t source) {
    if (source >= 0 && static_cast<size_t>(source) < sources_.size()) {
      sources_[source] = Source();
      Recompute();
    }
  }
  // An idle source has nothing more to deliver for now.
  void SetIdle(int32_t source, bool idle) {
    Source& s = At(source);
    if (s.present && s.idle == idle) return;
    s.present = true;
    s.idle = idle;
    Recompute();
  }

  // Records an event of `source` (registering the source if new).
  void Observe(int32_t source, int64_t event_ms) {
    last_event_wall_ms_ = clock_->NowMillis();
    max_event_ms_ = std::max(max_event_ms_, event_ms);
    Source& s = At(source);
    s.present = true;
    // A source that delivers is active again until reported caught up.
    const bool was_idle = s.idle;
    s.idle = false;
    if (event_ms > s.max_ms || was_idle) {
      s.max_ms = std::max(s.max_ms, event_ms);
      Recompute();  // O(sources): a few dozen partitions at most.
    }
  }

  // Applies idle progress. Returns true when the watermark moved.
  bool AdvanceWallClock() {
    if (max_event_ms_ == INT64_MIN) return false;
    const int64_t idle = clock_->NowMillis() - last_event_wall_ms_;
    if (idle < idle_timeout_ms_) return false;
    const int64_t advanced = max_event_ms_ + idle - lateness_ms_;
    if (advanced <= value_) return false;
    value_ = advanced;
    return true;
  }

  // Raises the watermark (never lowers it), e.g. to a previous owner's.
  void Restore(int64_t watermark_ms) {
    value_ = std::max(value_, watermark_ms);
  }

  int64_t value() const { return value_; }  // INT64_MIN before any event.
  int64_t max_event_ms() const { return max_event_ms_; }

 private:
  struct Source {
    bool present = false;
    bool idle = false;
    int64_t max_ms = INT64_MIN;
  };

  Source& At(int32_t source) {
    const size_t i = static_cast<size_t>(std::max(0, source));
    if (i >= sources_.size()) sources_.resize(i + 1);
    return sources_[i];
  }

  void Recompute() {
    int64_t active_min = INT64_MAX;
    for (const Source& s : sources_) {
      if (s.present && !s.idle) active_min = std::min(active_min, s.max_ms);
    }
    const int64_t progress =
        active_min == INT64_MAX ? max_event_ms_ : active_min;
    if (progress != INT64_MIN) {
      value_ = std::max(value_, progress - lateness_ms_);
    }
  }

  int64_t lateness_ms_;
  int64_t idle_timeout_ms_;
  const Clock* clock_;
  std::vector<Source> sources_;  // Indexed by source id (small integers).
  int64_t max_event_ms_ = INT64_MIN;
  int64_t last_event_wall_ms_ = 0;
  int64_t value_ = INT64_MIN;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_WATERMARK_H_
