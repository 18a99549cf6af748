// The project's one seeded pseudo-random generator: xoshiro256** 1.0
// (Blackman and Vigna), seeded through splitmix64 (Steele, Lea and Flood,
// OOPSLA 2014). Small, fast, and the same stream on every platform and
// standard library (std:: distributions are not), so simulations, synthetic
// traffic and randomized tests reproduce from their seed everywhere.
//
// Not thread-safe; copyable.
#ifndef RANKWATCH_BASE_RANDOM_H_
#define RANKWATCH_BASE_RANDOM_H_

#include <array>
#include <cstdint>

namespace rankwatch {

// One splitmix64 step: advances *state and returns the next output. Also a
// good 64-bit mixer of a counter.
uint64_t SplitMix64(uint64_t* state);

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, 1), 53 bits.
  double Uniform();
  // Uniform in [0, n); n > 0: Lemire's multiply-shift, whose bias (at most
  // n / 2^64) is below 2^-40 for the n used here (< 2^24).
  uint64_t Below(uint64_t n);
  // Uniform integer in [lo, hi]; lo <= hi.
  int64_t Between(int64_t lo, int64_t hi);
  // Standard normal (Marsaglia's polar method).
  double Gaussian();

 private:
  std::array<uint64_t, 4> s_;
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_RANDOM_H_
