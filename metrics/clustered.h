// Cluster-robust summaries of one A/B arm whose values are correlated
// within randomization units (users, sessions): every value belongs to a
// unit, and each unit is hashed to one of B buckets. Only per-bucket sums
// are kept (B sums of values and B counts per arm and series), so the state
// is bounded whatever the number of units, adds up across replicas and
// across segment groups, and the variance of the arm's mean comes from the
// buckets by the delta method for a ratio of sums (Deng, Knoblich and Lu,
// "Applying the Delta Method in Metric Analytics", KDD 2018), the buckets
// acting as independent clusters because the hash assigns units to buckets
// independently of their values. docs/statistics.md gives the formula.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_CLUSTERED_H_
#define RANKWATCH_METRICS_CLUSTERED_H_

#include <cstdint>
#include <span>

#include "metrics/ab_stats.h"

namespace rankwatch::metrics {

// Default number of unit buckets (statistics.unit_buckets).
inline constexpr int32_t kDefaultUnitBuckets = 64;

// The bucket of a unit, from a 64-bit hash of its id (base/string_index.h
// HashBytes): uniform over [0, num_buckets) for num_buckets >= 1. Uses the
// high bits, so it stays independent of hash-table slots that use the low
// ones.
[[nodiscard]] uint32_t UnitBucket(uint64_t unit_hash, uint32_t num_buckets);

// The arm summary from per-bucket sums of values (`sums[b]`) and counts of
// values (`counts[b]`), both of size B >= 2:
//
//   N = sum counts, m = (sum sums) / N,
//   Var(m) = B / (B - 1) * sum_b (sums[b] - m counts[b])^2 / N^2,
//
// returned as {count = N, mean = m, variance = N Var(m), clusters = number
// of non-empty buckets}, so that variance / count is the variance of the
// mean, as CompareWelch and SequentialTest read it, and Welch's degrees of
// freedom come from the clusters. Empty input (no buckets, or every count
// 0) gives {0, 0, 0, 0}. Spans of different sizes, a single bucket, a
// negative count, a non-finite sum, a non-zero sum in a bucket of count 0,
// counts whose total overflows or a non-finite result give a summary that
// the comparisons reject as kInvalidInput (count -1).
//
// B counts the empty buckets too: the hash makes the B buckets i.i.d.
// clusters, an empty one included; with fewer than two non-empty buckets
// the variance is unknown and the comparisons say kTooFewSamples.
[[nodiscard]] ArmSummary SummarizeBuckets(std::span<const double> sums,
                                          std::span<const int64_t> counts);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_CLUSTERED_H_
