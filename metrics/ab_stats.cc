#include "metrics/ab_stats.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>

#include "base/numeric.h"
#include "metrics/boost_policy.h"
#include "metrics/numeric_internal.h"

namespace rankwatch::metrics {
namespace {

// Boost.Math's no-throw, double-precision policy: see metrics/boost_policy.h.
using internal::DoublePolicy;
using internal::LongDoublePolicy;

using Normal = boost::math::normal_distribution<double, DoublePolicy>;
using StudentT = boost::math::students_t_distribution<double, DoublePolicy>;
using StudentTLongDouble =
    boost::math::students_t_distribution<double, LongDoublePolicy>;

// Below this x = df / t^2 the t tail is the leading term of the incomplete
// beta series, I_x(a, b) = x^a / (a B(a, b)) (1 + O(x)), exact to double
// precision. Boost's students_t cdf forms t^2, which overflows beyond |t|
// about 1e154 (and x underflows before that for small df), and then returns
// 0 instead of the power-law tail.
constexpr double kPowerLawMaxX = 1e-20;

// P(T <= -|t|) for T ~ t(df), df finite and positive, t not NaN.
double StudentTLowerTail(double t, double df) {
  const double abs_t = std::fabs(t);
  if (std::isinf(abs_t)) return 0;
  if (df / abs_t / abs_t < kPowerLawMaxX) {
    // (df / t^2)^(df / 2) / (df / 2 * B(df / 2, 1 / 2)) / 2, with the power
    // taken of sqrt(df) / |t| so that neither t^2 nor the ratio overflows.
    const double a = df / 2;
    return std::pow(std::sqrt(df) / abs_t, df) /
           (2 * a * boost::math::beta(a, 0.5, DoublePolicy()));
  }
  return boost::math::cdf(StudentT(df), -abs_t);
}

// ---------------------------------------------------------------------------
// Input checks shared by the comparisons.

bool ValidArm(const ArmSummary& arm) {
  // Every non-empty cluster holds at least one value.
  return arm.count >= 0 && std::isfinite(arm.mean) &&
         std::isfinite(arm.variance) && arm.variance >= 0 &&
         arm.clusters >= 0 && arm.clusters <= arm.count;
}

// The number of independent pieces of information behind an arm's
// variance: its values, or its clusters when the values are correlated
// within clusters: the cluster-robust variance is estimated from the
// cluster totals, so its degrees of freedom are clusters - 1 (the usual
// small-sample reference distribution for cluster-robust errors, t with
// G - 1 degrees of freedom: Cameron and Miller, "A Practitioner's Guide to
// Cluster-Robust Inference", J. Human Resources 50(2), 2015).
int64_t Independent(const ArmSummary& arm) {
  return arm.clusters > 0 ? arm.clusters : arm.count;
}

// Fewer than two values or clusters in an arm: its variance is unknown.
bool TooFewForVariance(const ArmSummary& arm) {
  return arm.count < 2 || Independent(arm) < 2;
}

bool ValidLevel(double level) { return level > 0 && level < 1; }

// Fills the fields every comparison reports: the difference and, where it
// is defined, the relative difference. False if the difference of two
// finite means overflows.
bool SetDifference(const ArmSummary& baseline, const ArmSummary& treatment,
                   double* difference, double* relative_difference,
                   bool* has_relative_difference) {
  if (baseline.count == 0 || treatment.count == 0) return true;
  *difference = treatment.mean - baseline.mean;
  if (!std::isfinite(*difference)) {
    *difference = 0;
    return false;
  }
  if (baseline.mean == 0) return true;
  *relative_difference = *difference / baseline.mean;
  *has_relative_difference = std::isfinite(*relative_difference);
  if (!*has_relative_difference) *relative_difference = kNaN;
  return true;
}

// Variance of the difference of means, vb / nb + vt / nt; both counts >= 2.
double DifferenceVariance(const ArmSummary& baseline,
                          const ArmSummary& treatment) {
  return baseline.variance / static_cast<double>(baseline.count) +
         treatment.variance / static_cast<double>(treatment.count);
}

// Welch-Satterthwaite degrees of freedom, written with the arms' shares of
// the variance so that tiny or huge variances neither underflow nor
// overflow when squared. A clustered arm contributes clusters - 1 in place
// of count - 1 (see Independent).
double WelchDegreesOfFreedom(const ArmSummary& baseline,
                             const ArmSummary& treatment) {
  const double total = DifferenceVariance(baseline, treatment);
  const double share_b =
      baseline.variance / static_cast<double>(baseline.count) / total;
  const double share_t =
      treatment.variance / static_cast<double>(treatment.count) / total;
  return 1 /
         (share_b * share_b / static_cast<double>(Independent(baseline) - 1) +
          share_t * share_t / static_cast<double>(Independent(treatment) - 1));
}

}  // namespace

// ---------------------------------------------------------------------------
// Distribution functions.

double NormalCdf(double x) {
  if (std::isnan(x)) return kNaN;
  return boost::math::cdf(Normal(), x);
}

double NormalQuantile(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  return boost::math::quantile(Normal(), p);
}

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || std::isnan(x) || x < 0 || x > 1) return kNaN;
  if (std::isinf(a) || std::isinf(b)) return kNaN;
  return boost::math::ibeta(a, b, x, DoublePolicy());
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return NormalCdf(t);
  const double lower = StudentTLowerTail(t, df);
  return t < 0 ? lower : 1 - lower;
}

double StudentTTwoSidedPValue(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return 2 * NormalCdf(-std::fabs(t));
  return 2 * StudentTLowerTail(t, df);
}

double StudentTQuantile(double p, double df) {
  if (std::isnan(p) || p < 0 || p > 1 || !(df > 0)) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (std::isinf(df)) return NormalQuantile(p);
  const double t = boost::math::quantile(StudentT(df), p);
  if (std::isfinite(t)) return t;
  // In double, the series for tiny p and small df (p = 1e-150, df = 0.7)
  // overflow on the way to a finite t; long double's wider exponent range
  // does not.
  return boost::math::quantile(StudentTLongDouble(df), p);
}

// ---------------------------------------------------------------------------
// Welch.

ArmSummary Summarize(const RunningStats& stats) {
  return {.count = stats.count(),
          .mean = stats.mean(),
          .variance = stats.variance(),
          .clusters = 0};
}

std::string_view ComparisonStatusName(ComparisonStatus status) {
  switch (status) {
    case ComparisonStatus::kOk:
      return "ok";
    case ComparisonStatus::kInvalidInput:
      return "invalid_input";
    case ComparisonStatus::kTooFewSamples:
      return "too_few_samples";
    case ComparisonStatus::kZeroVariance:
      return "zero_variance";
    case ComparisonStatus::kCountDecreased:
      return "count_decreased";
  }
  return "unknown";
}

WelchComparison CompareWelch(const ArmSummary& baseline,
                             const ArmSummary& treatment, double level) {
  WelchComparison result;
  result.level = level;
  result.baseline_count = baseline.count;
  result.treatment_count = treatment.count;
  if (!ValidArm(baseline) || !ValidArm(treatment) || !ValidLevel(level)) {
    return result;  // kInvalidInput.
  }
  if (!SetDifference(baseline, treatment, &result.difference,
                     &result.relative_difference,
                     &result.has_relative_difference)) {
    return result;  // kInvalidInput.
  }
  if (TooFewForVariance(baseline) || TooFewForVariance(treatment)) {
    result.status = ComparisonStatus::kTooFewSamples;
    return result;
  }
  const double variance = DifferenceVariance(baseline, treatment);
  result.standard_error = std::sqrt(variance);
  if (variance == 0) {
    result.status = ComparisonStatus::kZeroVariance;
    return result;
  }
  result.status = ComparisonStatus::kOk;
  result.degrees_of_freedom = WelchDegreesOfFreedom(baseline, treatment);
  result.t_statistic = result.difference / result.standard_error;
  result.p_value =
      StudentTTwoSidedPValue(result.t_statistic, result.degrees_of_freedom);
  const double critical =
      -StudentTQuantile((1 - level) / 2, result.degrees_of_freedom);
  result.interval = {result.difference - critical * result.standard_error,
                     result.difference + critical * result.standard_error};
  return result;
}

// ---------------------------------------------------------------------------
// Verdicts.

int Verdict(const ConfidenceInterval& interval, Direction direction) {
  // A NaN bound fails every comparison below, and an inverted interval
  // (lower > upper) is no evidence either way.
  if (!(interval.lower <= interval.upper)) return 0;
  const bool above = interval.lower > 0 && std::isfinite(interval.lower);
  const bool below = interval.upper < 0 && std::isfinite(interval.upper);
  switch (direction) {
    case Direction::kHigherIsBetter:
      return above ? 1 : below ? -1 : 0;
    case Direction::kLowerIsBetter:
      return below ? 1 : above ? -1 : 0;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// mSPRT.

double MsprtLogLikelihoodRatio(double difference, double variance,
                               double mixing_stddev) {
  if (!(variance > 0) || !(mixing_stddev > 0)) return kNaN;
  // With r = tau^2 / V: log Lambda = (d^2 / V) r / (2 (1 + r))
  //                                  - log(1 + r) / 2.
  const double r = mixing_stddev * mixing_stddev / variance;
  return 0.5 *
         (difference * difference / variance * (r / (1 + r)) - std::log1p(r));
}

double MsprtPValue(double difference, double variance, double mixing_stddev) {
  const double log_lambda =
      MsprtLogLikelihoodRatio(difference, variance, mixing_stddev);
  if (std::isnan(log_lambda)) return kNaN;
  return log_lambda <= 0 ? 1.0 : std::exp(-log_lambda);
}

double MsprtHalfWidth(double variance, double mixing_stddev, double level) {
  if (!(variance > 0) || !(mixing_stddev > 0) || !ValidLevel(level)) {
    return kNaN;
  }
  // Solving log Lambda = log(1 / alpha) for d^2, with r = tau^2 / V:
  //   d^2 = V (1 + 1 / r) (log(1 + r) + 2 log(1 / alpha)).
  const double r = mixing_stddev * mixing_stddev / variance;
  const double alpha = 1 - level;
  return std::sqrt(variance * (1 + 1 / r) *
                   (std::log1p(r) - 2 * std::log(alpha)));
}

SequentialLook CompareSequential(const ArmSummary& baseline,
                                 const ArmSummary& treatment,
                                 const SequentialOptions& options) {
  SequentialLook look;
  if (!ValidArm(baseline) || !ValidArm(treatment) ||
      !ValidLevel(options.level) || !(options.mixing_stddev > 0) ||
      !std::isfinite(options.mixing_stddev)) {
    return look;  // kInvalidInput.
  }
  double unused_relative = 0;
  bool unused_has_relative = false;
  if (!SetDifference(baseline, treatment, &look.difference, &unused_relative,
                     &unused_has_relative)) {
    return look;  // kInvalidInput.
  }
  if (TooFewForVariance(baseline) || TooFewForVariance(treatment)) {
    look.status = ComparisonStatus::kTooFewSamples;
    return look;
  }
  look.variance = DifferenceVariance(baseline, treatment);
  const int64_t min_count = std::max<int64_t>(2, options.min_count);
  if (baseline.count < min_count || treatment.count < min_count) {
    look.status = ComparisonStatus::kTooFewSamples;
    return look;
  }
  if (look.variance == 0) {
    look.status = ComparisonStatus::kZeroVariance;
    return look;
  }
  look.status = ComparisonStatus::kOk;
  look.p_value =
      MsprtPValue(look.difference, look.variance, options.mixing_stddev);
  double half_width =
      MsprtHalfWidth(look.variance, options.mixing_stddev, options.level);
  // The mixture's bound rests on the normal approximation of the means and
  // the plug-in variance, which a handful of lists (or clusters) do not
  // give: never claim more than the same look's fixed-horizon Welch t test
  // (issue 42). Widening a look's interval keeps every guarantee.
  const WelchComparison welch =
      CompareWelch(baseline, treatment, options.level);
  if (welch.ok()) {
    half_width =
        std::max(half_width, (welch.interval.upper - welch.interval.lower) / 2);
    look.p_value = std::max(look.p_value, welch.p_value);
  }
  look.interval = {look.difference - half_width, look.difference + half_width};
  return look;
}

SequentialLook SequentialTest::Update(const ArmSummary& baseline,
                                      const ArmSummary& treatment) {
  if (baseline.count < last_baseline_count_ ||
      treatment.count < last_treatment_count_) {
    SequentialLook look;
    look.status = ComparisonStatus::kCountDecreased;
    return look;
  }
  const SequentialLook look = CompareSequential(baseline, treatment, options_);
  if (look.status == ComparisonStatus::kInvalidInput) return look;
  last_baseline_count_ = baseline.count;
  last_treatment_count_ = treatment.count;
  if (!look.ok()) return look;

  ++looks_;
  if (looks_ > 1 && !interval_.Contains(look.difference)) {
    // The estimate left the running interval: the effect changed (or the
    // model failed). Every look's interval holds a constant effect at once
    // with probability 1 - alpha, so the intersection over any set of
    // looks does too: restart it, and the minimum p-value, from this look.
    contradicted_ = true;
    ++changes_;
    changed_look_ = looks_;
    p_value_ = look.p_value;
    interval_ = look.interval;
    return look;
  }
  p_value_ = std::min(p_value_, look.p_value);
  interval_ = {std::max(interval_.lower, look.interval.lower),
               std::min(interval_.upper, look.interval.upper)};
  return look;
}

void SequentialTest::Reset() { *this = SequentialTest(options_); }

}  // namespace rankwatch::metrics
