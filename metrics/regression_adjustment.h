// Regression adjustment of A/B comparisons by a pre-exposure covariate
// (CUPED: Deng, Xu, Kohavi and Walker, "Improving the sensitivity of online
// controlled experiments by utilizing pre-experiment data", WSDM 2013). Each
// value y of an arm comes with a covariate x measured before exposure (the
// same user's metric in the weeks before the experiment, say); subtracting
// theta x with theta the pooled within-arm slope of y on x removes the part
// of y's variance that x explains, so the difference of the arms' adjusted
// means has the variance of the residual y - theta x instead of y's: about
// 1 - rho^2 times as much for a correlation rho between x and y.
//
// The state is mergeable sufficient statistics: per arm a CovariateMoments
// (count, means, co-moments of the (y, x) pairs), and for a clustered arm
// also the per-bucket sums of y and of x (the layout of
// metrics/clustered.h). Both add up across replicas and partitions. The
// functions here turn that state into ArmSummary values whose difference is
// the adjusted difference and whose variance / count is its per-arm
// variance, so that CompareWelch and SequentialTest (metrics/ab_stats.h)
// compute the interval, p-value and always-valid figures unchanged.
// docs/statistics.md ("Regression adjustment") gives the formulas,
// assumptions and references.
//
// CovariateMoments is a value type, not thread-safe for concurrent
// mutation; the free functions are pure and thread-safe.
#ifndef RANKWATCH_METRICS_REGRESSION_ADJUSTMENT_H_
#define RANKWATCH_METRICS_REGRESSION_ADJUSTMENT_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "metrics/ab_stats.h"

namespace rankwatch::metrics {

// Count, means and co-moments of a stream of (y, x) pairs, updated by
// Welford's recurrence and combined by Chan, Golub and LeVeque's pairwise
// formula, the bivariate form of RunningStats. The fields are plain so that
// a checkpoint can store and restore them as they are.
//
// The caller skips a pair whose y or x is NaN (or infinite): Add does not
// check, and one such pair makes every field NaN for good. For a clustered
// arm the same pairs must go into the bucket sums (ClusteredArmSums), so
// skip the pair there too.
struct CovariateMoments {
  int64_t count = 0;
  double mean_y = 0;
  double mean_x = 0;
  double m2_y = 0;  // sum (y - mean_y)^2
  double m2_x = 0;  // sum (x - mean_x)^2
  double c_xy = 0;  // sum (x - mean_x)(y - mean_y)

  void Add(double y, double x) {
    ++count;
    const double n = static_cast<double>(count);
    const double dx = x - mean_x;
    mean_x += dx / n;
    const double dy = y - mean_y;
    mean_y += dy / n;
    // Each co-moment times the old deviation of one variable and the new
    // deviation of the other: the exact update (Welford 1962; for the
    // cross term, Pebay 2008).
    m2_x += dx * (x - mean_x);
    m2_y += dy * (y - mean_y);
    c_xy += dx * (y - mean_y);
  }

  // Combines `other` into this, as if its pairs had been added here. Exact
  // up to rounding, in any merge order.
  void Merge(const CovariateMoments& other);
};

// Why the comparison is or is not adjusted.
enum class AdjustmentStatus {
  // The summaries are the adjusted ones (theta finite).
  kAdjusted = 0,
  // The covariate has no variance within the arms (sum of m2_x is 0, e.g.
  // every x equal, or fewer than two pairs per arm), so theta is undefined:
  // the summaries are the unadjusted ones of y (theta reported as 0).
  kNoCovariateVariance,
  // Negative count or co-moment sums, non-finite fields, theta not finite,
  // bucket sums that do not match the moments: the summaries have count -1,
  // which CompareWelch and SequentialTest reject as kInvalidInput.
  kInvalidInput,
};

std::string_view AdjustmentStatusName(AdjustmentStatus status);

// The two arms, ready for CompareWelch(baseline, treatment, level) and
// SequentialTest::Update(baseline, treatment). The always-valid figures are
// then a plug-in (theta and the variance estimated from the data they are
// applied to): asymptotic, and far above their level at the first looks;
// feed the SequentialTest only from 20 values per arm
// (SequentialOptions::min_count) and, clustered, 20 non-empty buckets per
// arm, under which the simulations of regression_adjustment_test.cc keep
// the level (docs/statistics.md, "Regression adjustment").
struct AdjustedArms {
  AdjustmentStatus status = AdjustmentStatus::kInvalidInput;
  // The pooled within-arm slope sum c_xy / sum m2_x over both arms: the OLS
  // coefficient of x in y ~ 1 + T + x. 0 unless status is kAdjusted.
  double theta = 0;
  // The pooled mean of x over both arms, at which the adjusted means are
  // read: mean = mean_y - theta (mean_x - covariate_mean). Centering does
  // not change the difference; it keeps each adjusted mean on y's scale, so
  // the relative difference CompareWelch reports is against the baseline's
  // mean at the pooled covariate mean.
  double covariate_mean = 0;
  // Per arm: count n; mean as above; variance the sample variance
  // (n - 1 denominator) of the residual y - theta x, or, clustered, n times
  // the cluster-robust variance of the residual's mean (SummarizeBuckets);
  // clusters as in ArmSummary.
  ArmSummary baseline;
  ArmSummary treatment;
};

// The unadjusted summary of y: {count, mean_y, m2_y / (count - 1), 0}
// (variance 0 below two pairs), as Summarize gives for a RunningStats of
// the same y values.
[[nodiscard]] ArmSummary SummarizeOutcome(const CovariateMoments& moments);

// theta = (c_xy of both arms) / (m2_x of both arms); NaN when the
// denominator is 0 or either input is invalid.
[[nodiscard]] double PooledWithinArmSlope(const CovariateMoments& baseline,
                                          const CovariateMoments& treatment);

// Independent pairs: the adjusted arms from the moments alone. The
// difference of the returned means is
//   (mean_y_t - mean_y_b) - theta (mean_x_t - mean_x_b),
// the OLS coefficient of the treatment indicator T in y ~ 1 + T + x, and
// each arm's variance is (m2_y - 2 theta c_xy + theta^2 m2_x) / (n - 1),
// so CompareWelch's standard error is
//   sqrt(sum over arms of that variance / n),
// the unequal-variance form, with Welch-Satterthwaite degrees of freedom.
[[nodiscard]] AdjustedArms AdjustArms(const CovariateMoments& baseline,
                                      const CovariateMoments& treatment);

// One clustered arm's per-bucket sums (metrics/clustered.h): for each of the
// B unit buckets the sum of y, the sum of x and the number of pairs, over
// the same pairs as the arm's CovariateMoments.
struct ClusteredArmSums {
  std::span<const double> y_sums;
  std::span<const double> x_sums;
  std::span<const int64_t> counts;
};

// Values correlated within units: theta from the moments as in AdjustArms
// (the point estimate is the same), and each arm's variance by
// SummarizeBuckets on the bucket sums of the centered residual,
//   r_b = y_sums[b] - theta (x_sums[b] - covariate_mean counts[b]),
// i.e. B / (B - 1) sum_b (r_b - m counts[b])^2 / N^2 as the variance of the
// adjusted mean m. With kNoCovariateVariance, SummarizeBuckets of the y
// sums. kInvalidInput also when the three spans of an arm differ in size or
// an arm's counts do not add up to its moments' count; SummarizeBuckets'
// own checks apply to the residual sums.
[[nodiscard]] AdjustedArms AdjustClusteredArms(
    const CovariateMoments& baseline, const ClusteredArmSums& baseline_buckets,
    const CovariateMoments& treatment,
    const ClusteredArmSums& treatment_buckets);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_REGRESSION_ADJUSTMENT_H_
