// UnitTable: the randomization units an experiment has seen, and the
// variant each was first seen in, for counting units (not requests) in the
// sample-ratio check. A flat open-addressing table of 64-bit unit hashes
// (about 18 bytes per unit at its fullest) with a hard bound on the number
// of units: past it, new units are refused rather than memory grown, so a
// flood of ids cannot exhaust the daemon.
//
// Keys are hashes, not ids: two units collide with probability 2^-64 per
// pair (about 4e-7 over 4 million units), which the counts can afford.
//
// Owned by one thread (the pipeline's); not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_UNIT_TABLE_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_UNIT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankwatch::stream {

class UnitTable {
 public:
  // At most `max_units` units (0: none).
  explicit UnitTable(int64_t max_units);

  enum class Outcome {
    kInserted,  // A new unit, recorded with `value`.
    kPresent,   // Seen before; *value is what it was recorded with.
    kFull,      // A new unit, but the table holds max_units already.
  };
  // Looks `key` up and records it with *value when new.
  Outcome Insert(uint64_t key, uint8_t* value);

  int64_t size() const { return size_; }
  int64_t max_units() const { return max_units_; }

 private:
  void Grow();

  int64_t max_units_;
  int64_t size_ = 0;
  std::vector<uint64_t> keys_;  // 0: empty (keys are remapped to be != 0).
  std::vector<uint8_t> values_;
  size_t mask_ = 0;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_UNIT_TABLE_H_
