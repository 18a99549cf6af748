#include "metrics/clustered.h"

#include <cmath>
#include <cstddef>

namespace rankwatch::metrics {
namespace {

// What the comparisons reject as kInvalidInput.
ArmSummary InvalidSummary() {
  return {.count = -1, .mean = 0, .variance = 0, .clusters = 0};
}

}  // namespace

uint32_t UnitBucket(uint64_t unit_hash, uint32_t num_buckets) {
  // Lemire's multiply-shift range reduction ("Fast random integer
  // generation in an interval", ACM TOMACS 29(1), 2019) on the high 32
  // bits: (h * B) >> 32 < B for h < 2^32, and it is uniform up to a bias
  // of B / 2^32, negligible for B in the hundreds.
  return static_cast<uint32_t>(((unit_hash >> 32) * num_buckets) >> 32);
}

ArmSummary SummarizeBuckets(std::span<const double> sums,
                            std::span<const int64_t> counts) {
  if (sums.size() != counts.size()) return InvalidSummary();
  if (sums.empty()) return {};
  if (sums.size() < 2) return InvalidSummary();  // B / (B - 1) undefined.

  int64_t total_count = 0;
  double total_sum = 0;
  int64_t clusters = 0;
  for (size_t b = 0; b < sums.size(); ++b) {
    // A bucket without values has a sum of 0: anything else means the
    // sums and counts do not describe the same values.
    if (counts[b] < 0 || !std::isfinite(sums[b]) ||
        (counts[b] == 0 && sums[b] != 0)) {
      return InvalidSummary();
    }
    if (__builtin_add_overflow(total_count, counts[b], &total_count)) {
      return InvalidSummary();
    }
    total_sum += sums[b];
    if (counts[b] > 0) ++clusters;
  }
  if (total_count == 0) return {};

  // The delta method for the ratio m = Y / N of the cluster totals
  // Y = sum Y_b and N = sum N_b (Deng, Knoblich and Lu, KDD 2018:
  // the linearization of a ratio of sums over independent clusters):
  // m - mu ~= sum_b (Y_b - mu N_b) / N, whose variance over B i.i.d.
  // buckets, with mu estimated by m, is estimated by
  // B / (B - 1) * sum_b (Y_b - m N_b)^2 / N^2 (the B / (B - 1) being the
  // usual small-sample factor that makes the sum of squares about the
  // estimated mean unbiased). Buckets are i.i.d. because the hash assigns
  // units to them independently of their values, so B counts the empty
  // buckets too.
  const double n = static_cast<double>(total_count);
  const double mean = total_sum / n;
  if (!std::isfinite(mean)) return InvalidSummary();
  double squares = 0;
  for (size_t b = 0; b < sums.size(); ++b) {
    // Y_b - m N_b written as N_b (Y_b / N_b - m): the bucket's mean minus
    // the arm's, which stays small when both are, whatever N_b.
    if (counts[b] == 0) continue;
    const double nb = static_cast<double>(counts[b]);
    const double residual = nb * (sums[b] / nb - mean);
    squares += residual * residual;
  }
  const double num_buckets = static_cast<double>(sums.size());
  // variance = N Var(m), so that variance / count is Var(m).
  const double variance = num_buckets / (num_buckets - 1) * squares / n;
  if (!std::isfinite(variance)) return InvalidSummary();
  return {.count = total_count,
          .mean = mean,
          .variance = variance,
          .clusters = clusters};
}

}  // namespace rankwatch::metrics
