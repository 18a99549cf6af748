// A/B statistics on per-arm summaries: Welch's two-sample t test (difference
// of means, relative difference, standard error, confidence interval,
// p-value) and always-valid inference on the same difference by the mixture
// sequential probability ratio test (mSPRT) with a normal mixing
// distribution, plus the Student t and standard normal distribution functions
// they need.
//
// Every function takes summaries (ArmSummary: count, mean, variance of the
// mean times count, clusters), never individual values, because the daemon
// keeps only running sums per arm: a RunningStats, or per-unit-bucket sums
// (metrics/clustered.h) when values are correlated within units.
// docs/statistics.md gives the formulas, assumptions and references.
//
// The free functions are pure and thread-safe. SequentialTest is a value
// type; it is not thread-safe for concurrent mutation.
#ifndef RANKWATCH_METRICS_AB_STATS_H_
#define RANKWATCH_METRICS_AB_STATS_H_

#include <cstdint>
#include <limits>
#include <string_view>

#include "metrics/running_stats.h"

namespace rankwatch::metrics {

// ---------------------------------------------------------------------------
// Distribution functions, computed by Boost.Math (normal, students_t, ibeta)
// under a policy that never throws (see ab_stats.cc). Relative error below
// about 3e-13 wherever the result is a normal double, tails included
// (checked against 50-digit mpmath for df from 0.5 to 1e12; see
// ab_stats_test.cc). Arguments outside the domain (p outside [0, 1],
// df <= 0, NaN) give NaN.

// Standard normal CDF, Phi(x).
[[nodiscard]] double NormalCdf(double x);

// Inverse of NormalCdf. Returns -inf at p = 0 and +inf at p = 1.
[[nodiscard]] double NormalQuantile(double p);

// Regularized incomplete beta function I_x(a, b) for finite a, b > 0 and x
// in [0, 1].
[[nodiscard]] double RegularizedIncompleteBeta(double a, double b, double x);

// CDF of Student's t with `df` > 0 degrees of freedom (df need not be an
// integer; df = +inf is the normal distribution).
[[nodiscard]] double StudentTCdf(double t, double df);

// P(|T| >= |t|) for T ~ t(df): the two-sided p-value of a t statistic.
// Computed directly, so it keeps its relative accuracy when tiny.
[[nodiscard]] double StudentTTwoSidedPValue(double t, double df);

// Inverse of StudentTCdf. Returns -inf at p = 0 and +inf at p = 1.
[[nodiscard]] double StudentTQuantile(double p, double df);

// ---------------------------------------------------------------------------
// Inputs and common results.

// What the daemon keeps for one arm of one experiment, measure, cutoff and
// window.
struct ArmSummary {
  int64_t count = 0;
  double mean = 0;
  // variance / count is the variance of the mean. For independent values
  // (clusters == 0) the unbiased sample variance (n - 1 denominator); for
  // a clustered arm (SummarizeBuckets in metrics/clustered.h) the sample
  // variance inflated by the design effect.
  double variance = 0;
  // 0: the values are independent, and Welch's degrees of freedom use
  // count - 1. Otherwise the number of non-empty unit buckets, and they use
  // clusters - 1 (a comparison needs two or more in each arm).
  int64_t clusters = 0;
};

[[nodiscard]] ArmSummary Summarize(const RunningStats& stats);

// Why a comparison produced no inference. Anything but kOk leaves the
// "no information" values documented on each result type.
enum class ComparisonStatus {
  kOk = 0,
  // A negative count or variance, a non-finite mean or variance, clusters
  // negative or above count, means whose difference overflows, a level
  // outside (0, 1) or a mixing standard deviation that is not positive and
  // finite.
  kInvalidInput,
  // An arm has fewer than two values, or is clustered with fewer than two
  // non-empty clusters (or, for the sequential test, has fewer values than
  // the configured minimum), so its variance is unknown.
  kTooFewSamples,
  // Both arms have zero variance: the standard error is 0 and no test is
  // defined (SciPy returns NaN, R's t.test stops with "data are essentially
  // constant").
  kZeroVariance,
  // SequentialTest only: an arm's count went down since the previous look,
  // so the summaries are not cumulative over one experiment.
  kCountDecreased,
};

std::string_view ComparisonStatusName(ComparisonStatus status);

// Closed interval [lower, upper]; (-inf, +inf) when there is no information.
struct ConfidenceInterval {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();

  [[nodiscard]] bool Contains(double x) const {
    return lower <= x && x <= upper;
  }
};

// ---------------------------------------------------------------------------
// Welch's unequal-variance t test on the difference of means. Valid for one
// fixed, pre-planned look; read again and again it gives far more false
// alarms than its level (that is what SequentialTest is for).

inline constexpr double kDefaultLevel = 0.95;

struct WelchComparison {
  ComparisonStatus status = ComparisonStatus::kInvalidInput;
  int64_t baseline_count = 0;
  int64_t treatment_count = 0;
  // treatment.mean - baseline.mean; 0 when an arm is empty or the input is
  // invalid.
  double difference = 0;
  // difference / baseline.mean. NaN, with has_relative_difference false,
  // when the baseline mean is 0 or the difference is not reported.
  double relative_difference = std::numeric_limits<double>::quiet_NaN();
  bool has_relative_difference = false;
  // sqrt(vb / nb + vt / nt) when both arms have two or more values (and
  // clusters, if clustered), so 0 for kZeroVariance; +inf otherwise.
  double standard_error = std::numeric_limits<double>::infinity();
  // The fields below hold "no evidence" values unless status is kOk:
  // degrees_of_freedom = 0, t_statistic = 0, p_value = 1 and
  // interval = (-inf, +inf).
  // Welch-Satterthwaite, with clusters - 1 in place of count - 1 for a
  // clustered arm.
  double degrees_of_freedom = 0;
  double t_statistic = 0;
  double p_value = 1;  // Two-sided.
  ConfidenceInterval interval;
  double level = kDefaultLevel;

  [[nodiscard]] bool ok() const { return status == ComparisonStatus::kOk; }
};

// Compares treatment against baseline at confidence level `level` (e.g.
// 0.95). Never returns NaN outside relative_difference (see above).
[[nodiscard]] WelchComparison CompareWelch(const ArmSummary& baseline,
                                           const ArmSummary& treatment,
                                           double level);

// ---------------------------------------------------------------------------
// Verdicts.

// Which direction of a measure is an improvement. Every ranking measure
// rankwatch computes is higher-is-better today; latency or cost measures
// would be lower-is-better.
enum class Direction { kHigherIsBetter, kLowerIsBetter };

// +1 when the interval of treatment - baseline shows the treatment better
// (entirely above 0 for kHigherIsBetter, below 0 for kLowerIsBetter), -1
// when worse, 0 when it contains 0 (inconclusive) or is not finite on the
// deciding side.
[[nodiscard]] int Verdict(const ConfidenceInterval& interval,
                          Direction direction);

// ---------------------------------------------------------------------------
// Always-valid inference: the mixture sequential probability ratio test with
// a normal mixing distribution N(0, tau^2) over the true difference (Johari,
// Koomen, Pekelis and Walsh: KDD 2017, and "Always Valid Inference",
// Operations Research 70(3), 2022). With d the observed difference and
// V = vb / nb + vt / nt its plug-in variance,
//
//   Lambda = sqrt(V / (V + tau^2)) * exp(tau^2 d^2 / (2 V (V + tau^2))).
//
// Its p-value and confidence sequence stay valid however often they are read
// and whenever the experiment is stopped: under no difference, the chance
// that the running p-value EVER falls to alpha is at most alpha (up to the
// normal approximation of the means and the plug-in variance).

// Mixing standard deviation tau for metrics on [0, 1]: the scale of the
// absolute differences the test is tuned to detect fastest. Ranking metrics
// move by 0.005 to 0.1 in real experiments; the width of the confidence
// sequence grows only with sqrt(log(tau^2 / V)), so a tau within a factor of
// ten of the true effect costs little. Scale it for metrics on other ranges.
inline constexpr double kDefaultMixingStddev = 0.05;

// log Lambda for an observed `difference` minus the null value, its
// `variance` V > 0 and mixing standard deviation tau > 0. NaN if V or tau is
// not positive.
[[nodiscard]] double MsprtLogLikelihoodRatio(double difference, double variance,
                                             double mixing_stddev);

// min(1, 1 / Lambda) at one look; the always-valid p-value is the running
// minimum of this over looks.
[[nodiscard]] double MsprtPValue(double difference, double variance,
                                 double mixing_stddev);

// Half-width of the confidence sequence at one look, the |difference| at
// which Lambda = 1 / alpha with alpha = 1 - level:
//
//   sqrt(V (V + tau^2) / tau^2 * (log((V + tau^2) / V) + 2 log(1 / alpha))).
//
// NaN if V or tau is not positive or level is outside (0, 1).
[[nodiscard]] double MsprtHalfWidth(double variance, double mixing_stddev,
                                    double level);

struct SequentialOptions {
  double level = kDefaultLevel;  // 1 - alpha.
  double mixing_stddev = kDefaultMixingStddev;
  // Looks where an arm has fewer values than this are skipped (at least 2,
  // for a variance).
  int64_t min_count = 2;
};

// One look of the mSPRT, on its own. Its interval is never narrower than
// the same look's Welch t interval (and its p-value never below Welch's):
// at a handful of lists the mixture's normal approximation does not hold
// yet, and the t distribution governs (docs/statistics.md).
struct SequentialLook {
  ComparisonStatus status = ComparisonStatus::kInvalidInput;
  double difference = 0;  // As in WelchComparison.
  // V = vb / nb + vt / nt; +inf unless both arms have two or more values
  // (and clusters, if clustered).
  double variance = std::numeric_limits<double>::infinity();
  // Unless status is kOk: p_value = 1 and interval = (-inf, +inf).
  double p_value = 1;           // This look only: min(1, 1 / Lambda).
  ConfidenceInterval interval;  // This look only: difference +- half-width.

  [[nodiscard]] bool ok() const { return status == ComparisonStatus::kOk; }
};

// The mSPRT quantities of a single look; kInvalidInput also for invalid
// options. Stateless: the always-valid guarantee needs the running minimum
// and intersection over looks, which is what SequentialTest keeps.
[[nodiscard]] SequentialLook CompareSequential(
    const ArmSummary& baseline, const ArmSummary& treatment,
    const SequentialOptions& options);

// The always-valid state of one experiment, measure, cutoff and window, fed
// at each look with the summaries accumulated since the experiment started.
// Keeps the running minimum of the p-value and the running intersection of
// the confidence sequence, both valid at every look and at any stopping
// time. Only cumulative windows qualify: sliding or tumbling windows drop
// data, so they need a new SequentialTest each (Reset()).
class SequentialTest {
 public:
  explicit SequentialTest(const SequentialOptions& options = {})
      : options_(options) {}

  // Records one look and returns its own figures. A look whose status is
  // not kOk (too few values, zero variance, an arm's count that went down)
  // leaves the state unchanged; skipping a look costs no validity, but
  // kCountDecreased means the caller fed the wrong summaries.
  [[nodiscard]] SequentialLook Update(const ArmSummary& baseline,
                                      const ArmSummary& treatment);

  // Forgets every look, e.g. when the experiment restarts.
  void Reset();

  // Always-valid p-value: the minimum over the looks since the latest
  // change (below); 1 before the first look.
  double p_value() const { return p_value_; }
  // Always-valid confidence sequence: the intersection of the looks'
  // intervals since the latest change; (-inf, +inf) before the first look.
  // When a look's estimate (its difference) lies outside the running
  // intersection, the effect changed (a drift, a novelty effect, a changed
  // treatment; or the model failed): the look counts as a change
  // (contradicted(), changes(), changed_look()) and the intersection and
  // the minimum p-value restart from it. The intersection over any subset
  // of looks holds a constant effect with the same 1 - alpha, so a restart
  // keeps the guarantee; it never shows an estimate outside its interval.
  ConfidenceInterval interval() const { return interval_; }
  bool contradicted() const { return contradicted_; }
  // Changes so far, and the look (1-based, as looks()) of the latest; 0
  // when none.
  int64_t changes() const { return changes_; }
  int64_t changed_look() const { return changed_look_; }
  // True while the sequence since the latest change excludes a difference
  // of 0, i.e. p_value() <= 1 - level. Reverts only at a change.
  bool rejected() const { return p_value_ <= 1 - options_.level; }
  // Looks with status kOk so far.
  int64_t looks() const { return looks_; }
  const SequentialOptions& options() const { return options_; }

 private:
  SequentialOptions options_;
  int64_t looks_ = 0;
  int64_t changes_ = 0;
  int64_t changed_look_ = 0;
  int64_t last_baseline_count_ = 0;
  int64_t last_treatment_count_ = 0;
  double p_value_ = 1;
  ConfidenceInterval interval_;
  bool contradicted_ = false;
};

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_AB_STATS_H_
