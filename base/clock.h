// Clock: the two times rankwatch reads, injectable so that tests control
// them. Wall time (NowMillis) is for what is compared with event times
// (idle finalization, the future-skew bound, log timestamps); monotonic
// time (MonotonicMillis) is for intervals and timeouts (commit intervals,
// statistics staleness, rate limits), which must not jump when NTP or an
// operator sets the wall clock.
//
// Implementations are thread-safe.
#ifndef RANKWATCH_BASE_CLOCK_H_
#define RANKWATCH_BASE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rankwatch {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() const = 0;
  // Milliseconds since an arbitrary origin; never decreases.
  virtual int64_t MonotonicMillis() const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  int64_t MonotonicMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // A process-wide instance (never destroyed, so usable at exit).
  static SystemClock* Get() {
    static SystemClock* clock = new SystemClock();
    return clock;
  }
};

// A wall clock read once per round: NowMillis() is `inner`'s wall time at
// the last Tick() (at construction before any), so that the many reads of
// one round (the events of a poll batch, as the consumer received them)
// cost a load instead of a clock read each. Monotonic time is `inner`'s.
// Tick() from one thread; reads from any.
class RoundClock : public Clock {
 public:
  explicit RoundClock(const Clock* inner)
      : inner_(inner), wall_ms_(inner->NowMillis()) {}
  int64_t NowMillis() const override {
    return wall_ms_.load(std::memory_order_relaxed);
  }
  int64_t MonotonicMillis() const override { return inner_->MonotonicMillis(); }
  void Tick() {
    wall_ms_.store(inner_->NowMillis(), std::memory_order_relaxed);
  }

 private:
  const Clock* inner_;
  std::atomic<int64_t> wall_ms_;
};

// A clock that only moves when told to. Advance() moves both times; Set()
// moves the wall clock alone (a step, as NTP makes), which the monotonic
// time does not see.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 0) : wall_ms_(now_ms), mono_ms_(0) {}
  int64_t NowMillis() const override { return wall_ms_.load(); }
  int64_t MonotonicMillis() const override { return mono_ms_.load(); }
  void Set(int64_t now_ms) { wall_ms_.store(now_ms); }
  void Advance(int64_t delta_ms) {
    wall_ms_.fetch_add(delta_ms);
    mono_ms_.fetch_add(delta_ms);
  }

 private:
  std::atomic<int64_t> wall_ms_;
  std::atomic<int64_t> mono_ms_;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_CLOCK_H_
