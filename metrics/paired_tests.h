// Paired comparisons of two systems scored on the same queries, as an IR
// researcher compares runs offline (`rankwatch compare`): the paired t test,
// Fisher's randomization (sign-flip permutation) test, a paired percentile
// bootstrap interval of the mean difference, and win/tie/loss counts.
//
// Every function takes the per-query scores of the two systems, aligned:
// treatment[i] and baseline[i] are the same query's scores. The difference
// is d_i = treatment[i] - baseline[i] (positive: the treatment is better on
// a measure where higher is better), as scipy.stats.ttest_rel(treatment,
// baseline) orders it. The randomized procedures draw from a seeded
// Xoshiro256 (base/random.h), so their results reproduce exactly from the
// seed on every platform.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_PAIRED_TESTS_H_
#define RANKWATCH_METRICS_PAIRED_TESTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

namespace rankwatch::metrics {

// Why a paired comparison produced no inference. Anything but kOk leaves the
// fields documented as NaN on each result type NaN.
enum class PairedStatus {
  kOk = 0,
  // The spans differ in size, a score is not finite, or an option is out
  // of range (level outside (0, 1), no permutations or resamples).
  kInvalidInput,
  // Fewer than two pairs: the variance of the difference is unknown (the t
  // test and the bootstrap), or there is nothing to permute.
  kTooFewPairs,
  // t test only: every difference is the same, so the standard error is 0.
  // SciPy returns NaN when they are all 0 and t = +-inf, p = 0 otherwise;
  // rankwatch reports neither as evidence. mean_difference is still set.
  kZeroVariance,
};

std::string_view PairedStatusName(PairedStatus status);

// ---------------------------------------------------------------------------
// Paired t test (Student, 1908, on the differences): t = mean(d) / (s_d /
// sqrt(n)) with n - 1 degrees of freedom, s_d the sample standard deviation
// (n - 1 denominator); the interval is mean(d) +- t_{(1 + level) / 2, n - 1}
// s_d / sqrt(n). Matches scipy.stats.ttest_rel(treatment, baseline) and its
// confidence_interval(level).
struct PairedTTestResult {
  PairedStatus status = PairedStatus::kInvalidInput;
  int64_t pairs = 0;
  double mean_difference = std::numeric_limits<double>::quiet_NaN();
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  double t_statistic = std::numeric_limits<double>::quiet_NaN();
  double degrees_of_freedom = std::numeric_limits<double>::quiet_NaN();
  // Two-sided.
  double p_value = std::numeric_limits<double>::quiet_NaN();
  double ci_lower = std::numeric_limits<double>::quiet_NaN();
  double ci_upper = std::numeric_limits<double>::quiet_NaN();
};

[[nodiscard]] PairedTTestResult PairedTTest(std::span<const double> treatment,
                                            std::span<const double> baseline,
                                            double level = 0.95);

// ---------------------------------------------------------------------------
// Fisher's randomization test of the mean paired difference (Fisher, The
// Design of Experiments, 1935, sec. 21; for IR: Smucker, Allan and
// Carterette, CIKM 2007). Under the null hypothesis the two systems are
// exchangeable on every query, so each difference's sign is a fair coin;
// the statistic is T = mean(d), and the two-sided p-value is the share of
// sign assignments s with |mean(s d)| >= |T|, compared with SciPy's
// tolerance (|T*| >= |T| - max(1e-14, 1e-14 |T|)) so that a tie that
// rounding broke still counts.
//
// * Exact when 2^n <= permutations: all 2^n assignments are enumerated
//   (the observed one among them) and p = count / 2^n, as
//   scipy.stats.permutation_test(..., permutation_type='samples') computes
//   when n_resamples >= 2^n.
// * Otherwise `permutations` random assignments (the observed one not
//   among them) and p = (count + 1) / (permutations + 1), which is never 0
//   and is a valid p-value (Phipson and Smyth, SAGA 9(1), 2010); it is also
//   SciPy's randomized formula. (ranx divides by the permutations alone,
//   without the +1, which can report p = 0.)
//
// The default of 10000 permutations bounds the Monte Carlo standard error
// of p by sqrt(0.05 * 0.95 / 10000) = 0.0022 near p = 0.05; ranx's default
// is 1000.
struct RandomizationOptions {
  int64_t permutations = 10000;
  uint64_t seed = 0x5eed;
};

struct RandomizationResult {
  PairedStatus status = PairedStatus::kInvalidInput;
  int64_t pairs = 0;
  double mean_difference = std::numeric_limits<double>::quiet_NaN();
  double p_value = std::numeric_limits<double>::quiet_NaN();
  // 2^n when exact, else options.permutations.
  int64_t permutations = 0;
  bool exact = false;
};

[[nodiscard]] RandomizationResult PairedRandomizationTest(
    std::span<const double> treatment, std::span<const double> baseline,
    const RandomizationOptions& options = {});

// ---------------------------------------------------------------------------
// Paired percentile bootstrap interval of the mean difference (Efron and
// Tibshirani, An Introduction to the Bootstrap, 1993, ch. 13; for IR:
// Sakai, SIGIR 2006). Each resample draws n query indices with replacement
// (index = Xoshiro256::Below(n), resample after resample, from one
// generator seeded with `seed`) and takes the mean of their differences;
// the interval is the (1 - level) / 2 and (1 + level) / 2 quantiles of the
// `resamples` means, linearly interpolated between order statistics as
// numpy.percentile does by default (position q (B - 1) in the sorted
// means).
struct BootstrapOptions {
  int64_t resamples = 10000;
  double level = 0.95;
  uint64_t seed = 0x5eed;
};

struct BootstrapResult {
  PairedStatus status = PairedStatus::kInvalidInput;
  int64_t pairs = 0;
  double mean_difference = std::numeric_limits<double>::quiet_NaN();
  double ci_lower = std::numeric_limits<double>::quiet_NaN();
  double ci_upper = std::numeric_limits<double>::quiet_NaN();
  int64_t resamples = 0;
};

[[nodiscard]] BootstrapResult PairedBootstrapInterval(
    std::span<const double> treatment, std::span<const double> baseline,
    const BootstrapOptions& options = {});

// ---------------------------------------------------------------------------
// Queries on which the treatment scores higher (wins), exactly the same
// (ties: equal doubles, no tolerance, so two runs that retrieve the same
// documents tie) or lower (losses) than the baseline. nullopt if the spans
// differ in size or a score is NaN.
struct WinTieLoss {
  int64_t wins = 0;
  int64_t ties = 0;
  int64_t losses = 0;
};

[[nodiscard]] std::optional<WinTieLoss> CountWinTieLoss(
    std::span<const double> treatment, std::span<const double> baseline);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_PAIRED_TESTS_H_
