// Clock: wall time for the parts of the streaming core that need it (idle
// finalization, log rate limits), injectable so tests control time.
#ifndef RANKWATCH_DAEMON_STREAM_CLOCK_H_
#define RANKWATCH_DAEMON_STREAM_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rankwatch::stream {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  static SystemClock* Get() {
    static SystemClock* clock = new SystemClock();
    return clock;
  }
};

// A clock that only moves when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 0) : now_ms_(now_ms) {}
  int64_t NowMillis() const override { return now_ms_.load(); }
  void Set(int64_t now_ms) { now_ms_.store(now_ms); }
  void Advance(int64_t delta_ms) { now_ms_.fetch_add(delta_ms); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_CLOCK_H_
