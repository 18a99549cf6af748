#include "daemon/stream/join/watermark.h"

#include <algorithm>

#include "base/saturating.h"
#include "daemon/stream/decode/events.h"

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
    // A shard none of whose sources is registered starts afresh (its
    // partition left; if it comes back, it brings its own progress).
    const int32_t shard = EventOrigin::PartitionOf(source);
    const bool other_present =
        At(EventOrigin::SourceOf(1 - EventOrigin::TopicIndexOf(source), shard))
            .present;
    if (!other_present && static_cast<size_t>(shard) < shard_values_.size()) {
      shard_values_[static_cast<size_t>(shard)] = INT64_MIN;
    }
    Recompute(clock_->NowMillis());
  }
}

void Watermark::SetIdle(int32_t source, bool idle) {
  Source& s = At(source);
  if (s.present && s.idle == idle) return;
  const int64_t now = clock_->NowMillis();
  s.present = true;
  s.idle = idle;
  if (idle) {
    s.idle_since_wall_ms = now;
    s.catching_up = false;  // Its backlog is read.
  }
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
    RecomputeGlobal(now);  // O(sources): a few dozen partitions at most.
    RecomputeShard(EventOrigin::PartitionOf(source), now);
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

int64_t Watermark::progress(int32_t source) const {
  if (source < 0 || static_cast<size_t>(source) >= sources_.size()) {
    return INT64_MIN;
  }
  return sources_[static_cast<size_t>(source)].max_ms;
}

void Watermark::RestoreProgress(int32_t source, int64_t max_ms) {
  const int64_t now = clock_->NowMillis();
  Source& s = At(source);
  s.present = true;
  // Not known to be caught up, whatever was reported before the restore:
  // its backlog comes first (see the class comment).
  s.idle = false;
  s.catching_up = true;
  s.max_ms = std::max(s.max_ms, max_ms);
  // Not an event, but the newest event time the stream has reached
  // includes it; and the idle advance counts from the restore, not from
  // the epoch (no event has arrived in this process yet).
  max_event_ms_ = std::max(max_event_ms_, max_ms);
  last_event_wall_ms_ = std::max(last_event_wall_ms_, now);
  Recompute(now);
}

bool Watermark::CatchingUp(int32_t shard) const {
  for (int topic = 0; topic < 2; ++topic) {
    const size_t i = static_cast<size_t>(EventOrigin::SourceOf(topic, shard));
    if (i < sources_.size() && sources_[i].catching_up) return true;
  }
  return false;
}

int64_t Watermark::restored(int32_t source) const {
  if (source < 0 || static_cast<size_t>(source) >= sources_.size()) {
    return INT64_MIN;
  }
  return sources_[static_cast<size_t>(source)].restored_ms;
}

int64_t Watermark::Progress(const Source* const* sources, size_t n,
                            int64_t max_ms, int64_t now_wall_ms) const {
  bool any_held = false;
  int64_t held_min = INT64_MAX;
  for (size_t i = 0; i < n; ++i) {
    const Source& s = *sources[i];
    if (!s.present) continue;
    if (s.idle && now_wall_ms - s.idle_since_wall_ms >= idle_timeout_ms_) {
      continue;  // Caught up for long enough: no longer holds.
    }
    any_held = true;
    // Not past the wall clock either: an event from a clock minutes fast
    // must not carry event time (and every window) ahead of the stream,
    // even while its partition's other source is idle.
    held_min = std::min(held_min, std::min(s.max_ms, now_wall_ms));
  }
  // Every source caught up: the newest event time, but not past the wall
  // clock (an event from a clock minutes fast is not how far the stream
  // has come; the least of the sources' newest would let one stale
  // partition hold every window).
  if (any_held) return held_min;
  return max_ms == INT64_MIN ? INT64_MIN : std::min(max_ms, now_wall_ms);
}

void Watermark::Recompute(int64_t now_wall_ms) {
  RecomputeGlobal(now_wall_ms);
  const int32_t shards = static_cast<int32_t>((sources_.size() + 1) / 2);
  for (int32_t shard = 0; shard < shards; ++shard) {
    RecomputeShard(shard, now_wall_ms);
  }
}

void Watermark::RecomputeGlobal(int64_t now_wall_ms) {
  std::vector<const Source*>& all = scratch_;
  all.clear();
  for (const Source& s : sources_) all.push_back(&s);
  const int64_t progress =
      Progress(all.data(), all.size(), max_event_ms_, now_wall_ms);
  if (progress != INT64_MIN) {
    value_ = std::max(value_, SatSub(progress, lateness_ms_));
  }
}

void Watermark::RecomputeShard(int32_t shard, int64_t now_wall_ms) {
  (void)At(EventOrigin::SourceOf(1, shard));  // Both exist from here on.
  const Source& results = At(EventOrigin::SourceOf(0, shard));
  const Source& judgments = At(EventOrigin::SourceOf(1, shard));
  const Source* sources[2] = {&results, &judgments};
  if (!results.present && !judgments.present) return;
  const int64_t progress = Progress(
      sources, 2, std::max(results.max_ms, judgments.max_ms), now_wall_ms);
  if (progress == INT64_MIN) return;
  if (static_cast<size_t>(shard) >= shard_values_.size()) {
    shard_values_.resize(static_cast<size_t>(shard) + 1, INT64_MIN);
  }
  int64_t& v = shard_values_[static_cast<size_t>(shard)];
  v = std::max(v, SatSub(progress, lateness_ms_));
}

int64_t Watermark::value(int32_t shard) const {
  if (shard < 0 || static_cast<size_t>(shard) >= shard_values_.size()) {
    return INT64_MIN;
  }
  return shard_values_[static_cast<size_t>(shard)];
}

}  // namespace rankwatch::stream
