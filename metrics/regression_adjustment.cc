#include "metrics/regression_adjustment.h"

#include <cmath>
#include <cstddef>
#include <vector>

#include "metrics/clustered.h"

namespace rankwatch::metrics {
namespace {

// What the comparisons reject as kInvalidInput.
ArmSummary InvalidSummary() {
  return {.count = -1, .mean = 0, .variance = 0, .clusters = 0};
}

AdjustedArms InvalidArms() {
  AdjustedArms arms;
  arms.status = AdjustmentStatus::kInvalidInput;
  arms.baseline = InvalidSummary();
  arms.treatment = InvalidSummary();
  return arms;
}

bool ValidMoments(const CovariateMoments& m) {
  return m.count >= 0 && std::isfinite(m.mean_y) && std::isfinite(m.mean_x) &&
         std::isfinite(m.m2_y) && std::isfinite(m.m2_x) &&
         std::isfinite(m.c_xy) && m.m2_y >= 0 && m.m2_x >= 0;
}

// The count-weighted mean of x over both arms, written as an update of the
// baseline's mean so that it stays within the two means whatever their
// size. 0 when both arms are empty.
double PooledCovariateMean(const CovariateMoments& baseline,
                           const CovariateMoments& treatment) {
  const double n_b = static_cast<double>(baseline.count);
  const double n_t = static_cast<double>(treatment.count);
  if (n_b + n_t == 0) return 0;
  return baseline.mean_x +
         (treatment.mean_x - baseline.mean_x) * (n_t / (n_b + n_t));
}

// The adjusted summary of one independent arm; count -1 if a figure is not
// finite.
ArmSummary AdjustedSummary(const CovariateMoments& m, double theta,
                           double covariate_mean) {
  const double mean = m.mean_y - theta * (m.mean_x - covariate_mean);
  // sum ((y - mean_y) - theta (x - mean_x))^2, expanded. It is a sum of
  // squares, so a negative value is rounding (x and y nearly collinear
  // within the arm): clamp to 0.
  double squares = m.m2_y - 2 * theta * m.c_xy + theta * theta * m.m2_x;
  if (squares < 0) squares = 0;
  const double variance =
      m.count >= 2 ? squares / static_cast<double>(m.count - 1) : 0;
  if (!std::isfinite(mean) || !std::isfinite(variance)) {
    return InvalidSummary();
  }
  return {.count = m.count, .mean = mean, .variance = variance, .clusters = 0};
}

// The sum of the counts, or -1 if negative or overflowing.
int64_t TotalCount(std::span<const int64_t> counts) {
  int64_t total = 0;
  for (int64_t c : counts) {
    if (c < 0 || __builtin_add_overflow(total, c, &total)) return -1;
  }
  return total;
}

bool ValidBuckets(const CovariateMoments& m, const ClusteredArmSums& sums) {
  if (sums.y_sums.size() != sums.counts.size() ||
      sums.x_sums.size() != sums.counts.size()) {
    return false;
  }
  for (size_t b = 0; b < sums.counts.size(); ++b) {
    // A bucket without pairs sums to 0 (SummarizeBuckets checks the y
    // sums; the x sums must agree too, or the residual sums would hide
    // the mismatch when theta is 0).
    if (!std::isfinite(sums.x_sums[b]) ||
        (sums.counts[b] == 0 && sums.x_sums[b] != 0)) {
      return false;
    }
  }
  return TotalCount(sums.counts) == m.count;
}

}  // namespace

void CovariateMoments::Merge(const CovariateMoments& other) {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  const double n_a = static_cast<double>(count);
  const double n_b = static_cast<double>(other.count);
  const double n = n_a + n_b;
  const double dx = other.mean_x - mean_x;
  const double dy = other.mean_y - mean_y;
  // Chan, Golub and LeVeque's pairwise combination: each co-moment of the
  // union is the two co-moments plus the between-part term.
  const double weight = n_a * n_b / n;
  m2_x += other.m2_x + dx * dx * weight;
  m2_y += other.m2_y + dy * dy * weight;
  c_xy += other.c_xy + dx * dy * weight;
  mean_x += dx * (n_b / n);
  mean_y += dy * (n_b / n);
  count += other.count;
}

std::string_view AdjustmentStatusName(AdjustmentStatus status) {
  switch (status) {
    case AdjustmentStatus::kAdjusted:
      return "adjusted";
    case AdjustmentStatus::kNoCovariateVariance:
      return "no_covariate_variance";
    case AdjustmentStatus::kInvalidInput:
      return "invalid_input";
  }
  return "unknown";
}

ArmSummary SummarizeOutcome(const CovariateMoments& moments) {
  if (!ValidMoments(moments)) return InvalidSummary();
  const double variance =
      moments.count >= 2 ? moments.m2_y / static_cast<double>(moments.count - 1)
                         : 0;
  return {.count = moments.count,
          .mean = moments.mean_y,
          .variance = variance,
          .clusters = 0};
}

double PooledWithinArmSlope(const CovariateMoments& baseline,
                            const CovariateMoments& treatment) {
  if (!ValidMoments(baseline) || !ValidMoments(treatment)) {
    return std::nan("");
  }
  // Within-arm: the arm means are removed before the co-moments are
  // pooled, which is what the treatment indicator does in the regression
  // y ~ 1 + T + x (Frisch-Waugh-Lovell), so the slope is not biased by a
  // treatment effect on y.
  const double m2_x = baseline.m2_x + treatment.m2_x;
  if (!(m2_x > 0)) return std::nan("");
  return (baseline.c_xy + treatment.c_xy) / m2_x;
}

AdjustedArms AdjustArms(const CovariateMoments& baseline,
                        const CovariateMoments& treatment) {
  if (!ValidMoments(baseline) || !ValidMoments(treatment)) {
    return InvalidArms();
  }
  AdjustedArms arms;
  arms.covariate_mean = PooledCovariateMean(baseline, treatment);
  if (baseline.m2_x + treatment.m2_x == 0) {
    arms.status = AdjustmentStatus::kNoCovariateVariance;
    arms.baseline = SummarizeOutcome(baseline);
    arms.treatment = SummarizeOutcome(treatment);
    return arms;
  }
  const double theta = PooledWithinArmSlope(baseline, treatment);
  if (!std::isfinite(theta) || !std::isfinite(arms.covariate_mean)) {
    return InvalidArms();
  }
  arms.theta = theta;
  arms.baseline = AdjustedSummary(baseline, theta, arms.covariate_mean);
  arms.treatment = AdjustedSummary(treatment, theta, arms.covariate_mean);
  if (arms.baseline.count < 0 || arms.treatment.count < 0) {
    return InvalidArms();
  }
  arms.status = AdjustmentStatus::kAdjusted;
  return arms;
}

AdjustedArms AdjustClusteredArms(const CovariateMoments& baseline,
                                 const ClusteredArmSums& baseline_buckets,
                                 const CovariateMoments& treatment,
                                 const ClusteredArmSums& treatment_buckets) {
  if (!ValidMoments(baseline) || !ValidMoments(treatment) ||
      !ValidBuckets(baseline, baseline_buckets) ||
      !ValidBuckets(treatment, treatment_buckets)) {
    return InvalidArms();
  }
  AdjustedArms arms;
  arms.covariate_mean = PooledCovariateMean(baseline, treatment);
  if (baseline.m2_x + treatment.m2_x == 0) {
    arms.status = AdjustmentStatus::kNoCovariateVariance;
    arms.baseline =
        SummarizeBuckets(baseline_buckets.y_sums, baseline_buckets.counts);
    arms.treatment =
        SummarizeBuckets(treatment_buckets.y_sums, treatment_buckets.counts);
  } else {
    const double theta = PooledWithinArmSlope(baseline, treatment);
    if (!std::isfinite(theta) || !std::isfinite(arms.covariate_mean)) {
      return InvalidArms();
    }
    arms.theta = theta;
    arms.status = AdjustmentStatus::kAdjusted;
    // The bucket sums of the residual y - theta (x - covariate_mean): a
    // linear function of each pair, so its bucket sums follow from those
    // of y and x, and SummarizeBuckets gives its cluster-robust variance.
    // Treating theta as known ignores its own sampling error, which is of
    // smaller order (docs/statistics.md).
    const auto residual_sums = [&](const ClusteredArmSums& sums) {
      std::vector<double> r(sums.counts.size());
      for (size_t b = 0; b < r.size(); ++b) {
        r[b] =
            sums.y_sums[b] -
            theta * (sums.x_sums[b] -
                     arms.covariate_mean * static_cast<double>(sums.counts[b]));
      }
      return r;
    };
    arms.baseline = SummarizeBuckets(residual_sums(baseline_buckets),
                                     baseline_buckets.counts);
    arms.treatment = SummarizeBuckets(residual_sums(treatment_buckets),
                                      treatment_buckets.counts);
  }
  if (arms.baseline.count < 0 || arms.treatment.count < 0) {
    return InvalidArms();
  }
  return arms;
}

}  // namespace rankwatch::metrics
