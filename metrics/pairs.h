// The unordered pairs of N things (teams of a multileaving, judges of a
// panel) in row order: (0, 1), (0, 2), ..., (0, N - 1), (1, 2), ... Every
// per-pair table of rankwatch (multileaving's pairwise tests, the judges'
// agreement) is indexed this way, so one pair has one index everywhere.
#ifndef RANKWATCH_METRICS_PAIRS_H_
#define RANKWATCH_METRICS_PAIRS_H_

#include <cstddef>

namespace rankwatch::metrics {

// N (N - 1) / 2.
[[nodiscard]] constexpr size_t NumPairs(size_t n) {
  return n < 2 ? 0 : n * (n - 1) / 2;
}

// The index of pair (x, y), x < y < n, in row order. Pair 0 is (0, 1): in
// a multileaving, (incumbent, first challenger).
[[nodiscard]] constexpr size_t PairIndex(size_t x, size_t y, size_t n) {
  return x * n - x * (x + 1) / 2 + (y - x - 1);
}

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_PAIRS_H_
