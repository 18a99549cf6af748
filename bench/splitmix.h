// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fully specified random
// stream, so that generated benchmark data is the same on every platform
// and standard library (std:: distributions are not). Shared by the
// benchmarks and the TREC case generator. Value type; not thread-safe.
#ifndef RANKWATCH_BENCH_SPLITMIX_H_
#define RANKWATCH_BENCH_SPLITMIX_H_

#include <cstdint>

namespace rankwatch::bench {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n) by multiply-shift (Lemire); the bias is negligible
  // for the small n used here.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }

 private:
  uint64_t state_;
};

}  // namespace rankwatch::bench

#endif  // RANKWATCH_BENCH_SPLITMIX_H_
