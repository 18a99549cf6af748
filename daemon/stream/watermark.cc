#include "daemon/stream/watermark.h"

#include <algorithm>

#include "base/saturating.h"

namespace rankwatch::stream {

Watermark::Watermark(int64_t allowed_lateness_ms, int64_t idle_timeout_ms,
                     const Clock* clock)
    : lateness_ms_(allowed_lateness_ms),
      idle_timeout_ms_(idle_timeout_ms),
      clock_(clock) {}

Watermark::Source& Watermark::At(int32_t source) {
  const size_t i = static_cast<size_t>(std::max(0, source));
  if (i >= sources_.size()) sources_.resize(i + 1);
  return sources_[i];
}

void Watermark::AddSource(int32_t source) {
  At(source).present = true;
  Recompute(clock_->NowMillis());
}

void Watermark::RemoveSource(int32_t source) {
  if (source >= 0 && static_cast<size_t>(source) < sources_.size()) {
    sources_[source] = Source();
    Recompute(clock_->NowMillis());
  }
}

void Watermark::SetIdle(int32_t source, bool idle) {
  Source& s = At(source);
  if (s.present && s.idle == idle) return;
  const int64_t now = clock_->NowMillis();
  s.present = true;
  s.idle = idle;
  if (idle) s.idle_since_wall_ms = now;
  Recompute(now);
}

void Watermark::Observe(int32_t source, int64_t event_ms) {
  const int64_t now = clock_->NowMillis();
  last_event_wall_ms_ = now;
  max_event_ms_ = std::max(max_event_ms_, event_ms);
  // Events again: the idle advance ends (see the class comment).
  closing_ = INT64_MIN;
  Source& s = At(source);
  s.present = true;
  // A source that delivers is active again until reported caught up.
  const bool was_idle = s.idle;
  s.idle = false;
  if (event_ms > s.max_ms || was_idle) {
    s.max_ms = std::max(s.max_ms, event_ms);
    Recompute(now);  // O(sources): a few dozen partitions at most.
  }
}

bool Watermark::AdvanceWallClock() {
  const int64_t before = closing();
  const int64_t now = clock_->NowMillis();
  Recompute(now);
  if (max_event_ms_ != INT64_MIN) {
    const int64_t idle = now - last_event_wall_ms_;
    if (idle >= idle_timeout_ms_) {
      // From the newest event time, but no further than the wall clock
      // when it arrived: a timestamp minutes fast is not event time.
      const int64_t base = std::min(max_event_ms_, last_event_wall_ms_);
      closing_ = std::max(closing_, SatSub(SatAdd(base, idle), lateness_ms_));
    }
  }
  return closing() != before;
}

void Watermark::Restore(int32_t source, int64_t watermark_ms) {
  Source& s = At(source);
  s.restored_ms = std::max(s.restored_ms, watermark_ms);
}

int64_t Watermark::restored(int32_t source) const {
  if (source < 0 || static_cast<size_t>(source) >= sources_.size()) {
    return INT64_MIN;
  }
  return sources_[static_cast<size_t>(source)].restored_ms;
}

void Watermark::Recompute(int64_t now_wall_ms) {
  bool any_held = false;
  int64_t held_min = INT64_MAX;
  for (const Source& s : sources_) {
    if (!s.present) continue;
    if (s.idle && now_wall_ms - s.idle_since_wall_ms >= idle_timeout_ms_) {
      continue;  // Caught up for long enough: no longer holds.
    }
    any_held = true;
    held_min = std::min(held_min, s.max_ms);
  }
  // Every source caught up: the newest event time, but not past the wall
  // clock (an event from a clock minutes fast is not how far the stream
  // has come; the least of the sources' newest would let one stale
  // partition hold every window).
  const int64_t progress =
      any_held
          ? held_min
          : (max_event_ms_ == INT64_MIN ? INT64_MIN
                                        : std::min(max_event_ms_, now_wall_ms));
  if (progress != INT64_MIN) {
    value_ = std::max(value_, SatSub(progress, lateness_ms_));
  }
}

}  // namespace rankwatch::stream
