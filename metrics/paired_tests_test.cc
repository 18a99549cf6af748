#include "metrics/paired_tests.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

// Expected values: SciPy 1.10.1 and NumPy in /tmp/venv-stats, run for this
// test (the call is written beside each literal), and hand calculations.
// Nothing runs Python at test time.

namespace rankwatch::metrics {
namespace {

// Eight queries' scores of two systems.
const std::vector<double> kA = {0.52, 0.31, 0.75, 0.12, 0.43, 0.66, 0.29, 0.81};
const std::vector<double> kB = {0.47, 0.35, 0.61, 0.10, 0.40, 0.52, 0.33, 0.70};

// Twenty queries: a20 = np.round(rng.uniform(0, 1, 20), 3) and b20 =
// np.round(np.clip(a20 + rng.normal(0.03, 0.12, 20), 0, 1), 3) with rng =
// np.random.default_rng(7).
const std::vector<double> kA20 = {
    0.625, 0.897, 0.776, 0.225, 0.3,   0.874, 0.005, 0.821, 0.797, 0.468,
    0.303, 0.278, 0.255, 0.445, 0.505, 0.553, 0.996, 0.793, 0.622, 0.989};
const std::vector<double> kB20 = {
    0.434, 0.899, 0.654, 0.288, 0.349, 0.882, 0.0, 0.786, 0.821, 0.512,
    0.149, 0.251, 0.168, 0.378, 0.662, 0.486, 1.0, 0.929, 0.582, 1.0};

TEST(PairedTTestTest, MatchesScipyTtestRel) {
  // r = scipy.stats.ttest_rel(kA, kB): statistic 1.9861234999760777,
  // pvalue 0.08738931490432186, df 7; r.confidence_interval(0.95) =
  // (-0.00976684656857315, 0.11226684656857319); np.mean(kA - kB) =
  // 0.05125000000000002.
  const PairedTTestResult r = PairedTTest(kA, kB);
  ASSERT_EQ(r.status, PairedStatus::kOk);
  EXPECT_EQ(r.pairs, 8);
  EXPECT_NEAR(r.mean_difference, 0.05125000000000002, 1e-15);
  EXPECT_TRUE(RelativelyNear(r.t_statistic, 1.9861234999760777, 1e-12));
  EXPECT_DOUBLE_EQ(r.degrees_of_freedom, 7);
  EXPECT_TRUE(RelativelyNear(r.p_value, 0.08738931490432186, 1e-11));
  // SciPy's interval rests on t.ppf(0.975, 7), 6e-12 (relative) off the
  // quantile mpmath finds at 40 digits (2.3646242515927853416..., the root
  // of mp.betainc(3.5, 0.5, 0, 7 / (7 + t * t), regularized=True) / 2 =
  // 0.025); with it, mean -+ q * np.std(d, ddof=1) / np.sqrt(8) =
  // (-0.00976684658360364, 0.11226684658360367), which Boost's quantile
  // reproduces.
  EXPECT_NEAR(r.ci_lower, -0.00976684658360364, 1e-15);
  EXPECT_NEAR(r.ci_upper, 0.11226684658360367, 1e-15);
  EXPECT_NEAR(r.ci_lower, -0.00976684656857315, 1e-10);  // SciPy's.
  EXPECT_NEAR(r.ci_upper, 0.11226684656857319, 1e-10);
  EXPECT_NEAR(r.standard_error, r.mean_difference / r.t_statistic, 1e-15);

  // r.confidence_interval(0.90) = (0.0023622276582692878,
  // 0.10013777234173074), but SciPy's t.ppf(0.95, 7) = 1.894578605061305
  // is 1.5e-11 (relative) below the quantile mpmath finds at 40 digits,
  // mp.findroot(lambda t: mp.betainc(3.5, 0.5, 0, 7 / (7 + t * t),
  // regularized=True) / 2 - 0.05, 1.9) = 1.8945786050900073894722...;
  // with it, mean -+ q * np.std(d, ddof=1) / np.sqrt(8) =
  // (0.002362227657528658, 0.10013777234247137). Boost's quantile gives
  // the latter.
  const PairedTTestResult r90 = PairedTTest(kA, kB, 0.90);
  EXPECT_NEAR(r90.ci_lower, 0.002362227657528658, 1e-15);
  EXPECT_NEAR(r90.ci_upper, 0.10013777234247137, 1e-15);
  EXPECT_NEAR(r90.ci_upper, 0.10013777234173074, 1e-11);  // SciPy's.

  // scipy.stats.ttest_rel(a20, b20): statistic 0.765432474902045, pvalue
  // 0.45341806882446156; confidence_interval(0.95) =
  // (-0.025756334624018017, 0.055456334624018035).
  const PairedTTestResult r20 = PairedTTest(kA20, kB20);
  EXPECT_TRUE(RelativelyNear(r20.t_statistic, 0.765432474902045, 1e-12));
  EXPECT_TRUE(RelativelyNear(r20.p_value, 0.45341806882446156, 1e-11));
  // (mpmath's quantile 2.0930240544083097691... gives
  // (-0.02575633462401892, 0.05545633462401894).)
  EXPECT_NEAR(r20.ci_lower, -0.025756334624018017, 1e-15);
  EXPECT_NEAR(r20.ci_upper, 0.055456334624018035, 1e-15);

  // Swapping the systems negates the difference, keeps p.
  const PairedTTestResult swapped = PairedTTest(kB, kA);
  EXPECT_NEAR(swapped.t_statistic, -r.t_statistic, 1e-12);
  EXPECT_NEAR(swapped.p_value, r.p_value, 1e-15);
}

TEST(PairedTTestTest, UndefinedCases) {
  // Identical runs: every difference 0 (SciPy: statistic nan).
  const PairedTTestResult same = PairedTTest(kA, kA);
  EXPECT_EQ(same.status, PairedStatus::kZeroVariance);
  EXPECT_EQ(same.mean_difference, 0);
  EXPECT_TRUE(std::isnan(same.p_value));
  // A constant non-zero difference (SciPy: t = inf, p = 0): no evidence
  // from a zero standard error.
  const std::vector<double> lifted = {1.5, 2.5, 3.5};
  const std::vector<double> base = {1, 2, 3};
  const PairedTTestResult constant = PairedTTest(lifted, base);
  EXPECT_EQ(constant.status, PairedStatus::kZeroVariance);
  EXPECT_DOUBLE_EQ(constant.mean_difference, 0.5);
  EXPECT_TRUE(std::isnan(constant.t_statistic));

  const std::vector<double> one = {0.5};
  EXPECT_EQ(PairedTTest(one, one).status, PairedStatus::kTooFewPairs);
  EXPECT_EQ(PairedTTest({}, {}).status, PairedStatus::kTooFewPairs);
  EXPECT_EQ(PairedTTest(kA, kA20).status, PairedStatus::kInvalidInput);
  EXPECT_EQ(PairedTTest(kA, kB, 1.0).status, PairedStatus::kInvalidInput);
  EXPECT_EQ(PairedTTest(kA, kB, 0.0).status, PairedStatus::kInvalidInput);
  const std::vector<double> with_nan = {0.1, kNaN, 0.3};
  const std::vector<double> with_inf = {0.1, kInf, 0.3};
  EXPECT_EQ(PairedTTest(with_nan, base).status, PairedStatus::kInvalidInput);
  EXPECT_EQ(PairedTTest(base, with_inf).status, PairedStatus::kInvalidInput);
  EXPECT_EQ(PairedStatusName(PairedStatus::kZeroVariance), "zero_variance");
}

TEST(PairedRandomizationTest, ExactByHand) {
  // d = 1, 2, 3: the 8 sign assignments give sums 6, 4, 2, 0, 0, -2, -4,
  // -6; |sum| >= 6 twice, so p = 2 / 8.
  const std::vector<double> t = {1, 2, 3};
  const std::vector<double> zero = {0, 0, 0};
  const RandomizationResult r = PairedRandomizationTest(t, zero);
  ASSERT_EQ(r.status, PairedStatus::kOk);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.permutations, 8);
  EXPECT_DOUBLE_EQ(r.mean_difference, 2);
  EXPECT_DOUBLE_EQ(r.p_value, 0.25);
  // d = 0.1, 0.2, 0.3: |sum| = 0.6 only with all signs equal, so also
  // 2 / 8 (the all-flipped sum is the exact negation of the observed one).
  const std::vector<double> tenths = {0.1, 0.2, 0.3};
  EXPECT_DOUBLE_EQ(PairedRandomizationTest(tenths, zero).p_value, 0.25);
  // All differences 0: every assignment ties the observation, p = 1.
  EXPECT_DOUBLE_EQ(PairedRandomizationTest(zero, zero).p_value, 1.0);
}

TEST(PairedRandomizationTest, ExactMatchesScipyPermutationTest) {
  // scipy.stats.permutation_test((kA, kB), lambda x, y, axis:
  // np.mean(x - y, axis=axis), permutation_type='samples',
  // vectorized=True, n_resamples=10000, alternative='two-sided').pvalue =
  // 0.109375 (exact: 2^8 = 256 <= 10000 assignments).
  const RandomizationResult r = PairedRandomizationTest(kA, kB);
  ASSERT_EQ(r.status, PairedStatus::kOk);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.permutations, 256);
  EXPECT_DOUBLE_EQ(r.p_value, 0.109375);
  EXPECT_DOUBLE_EQ(r.p_value * 256, 28);

  // The same with n = 20 and n_resamples=np.inf (all 2^20 assignments):
  // pvalue = 0.4552135467529297 (= 477326 / 2^20).
  RandomizationOptions all;
  all.permutations = int64_t{1} << 20;
  const RandomizationResult exact20 = PairedRandomizationTest(kA20, kB20, all);
  EXPECT_TRUE(exact20.exact);
  EXPECT_DOUBLE_EQ(exact20.p_value, 0.4552135467529297);
}

TEST(PairedRandomizationTest, SampledAgreesWithExactWithinMonteCarloError) {
  // 10000 random assignments of the n = 20 case against the exact
  // 0.4552135467529297 above: the standard error of the estimate is
  // sqrt(p (1 - p) / 10000) = 0.00498; allow 4 of them.
  for (uint64_t seed : {uint64_t{0x5eed}, uint64_t{1}, uint64_t{2}}) {
    RandomizationOptions options;
    options.seed = seed;
    const RandomizationResult r = PairedRandomizationTest(kA20, kB20, options);
    ASSERT_EQ(r.status, PairedStatus::kOk);
    EXPECT_FALSE(r.exact);
    EXPECT_EQ(r.permutations, 10000);
    EXPECT_NEAR(r.p_value, 0.4552135467529297, 4 * 0.00498) << "seed " << seed;
    // (count + 1) / (B + 1): a multiple of 1 / 10001.
    const double count_plus_one = r.p_value * 10001;
    EXPECT_NEAR(count_plus_one, std::round(count_plus_one), 1e-9);
    // Reproducible from the seed.
    EXPECT_EQ(PairedRandomizationTest(kA20, kB20, options).p_value, r.p_value);
  }
  // A difference far beyond the null: no sampled assignment reaches the
  // observation, and p is 1 / (B + 1), never 0. Twenty +1 differences:
  // only the identity reaches |mean| = 1, chance 2^-19 per draw.
  const std::vector<double> ones(20, 1.0);
  const std::vector<double> zeros(20, 0.0);
  RandomizationOptions few;
  few.permutations = 999;
  EXPECT_DOUBLE_EQ(PairedRandomizationTest(ones, zeros, few).p_value,
                   1.0 / 1000);
}

TEST(PairedRandomizationTest, UndefinedCases) {
  EXPECT_EQ(PairedRandomizationTest({}, {}).status, PairedStatus::kTooFewPairs);
  EXPECT_EQ(PairedRandomizationTest(kA, kA20).status,
            PairedStatus::kInvalidInput);
  RandomizationOptions none;
  none.permutations = 0;
  EXPECT_EQ(PairedRandomizationTest(kA, kB, none).status,
            PairedStatus::kInvalidInput);
  // One pair: two assignments, both reach |d|: p = 1.
  const std::vector<double> one = {0.7};
  const std::vector<double> other = {0.2};
  EXPECT_DOUBLE_EQ(PairedRandomizationTest(one, other).p_value, 1.0);
}

TEST(PairedBootstrapTest, MatchesNumpyOnTheSameResamples) {
  // The reference re-implements Xoshiro256 (base/random.cc) in Python and
  // draws the same indices, Below(8) = (x.next() * 8) >> 64 (Lemire's
  // multiply-shift), resample after resample:
  //   means[k] = np.mean(d[[(x.next() * 8) >> 64 for _ in range(8)]]),
  //   k < 2000, np.percentile(means, [2.5, 97.5]) =
  //   [0.0050000000000000044, 0.09878124999999986],
  //   np.percentile(means, [5, 95]) = [0.013749999999999991,
  //   0.09125000000000003],
  // with d = kA - kB and the seed 0x5eed (numpy 1.24).
  BootstrapOptions options;
  options.resamples = 2000;
  options.seed = 0x5eed;
  const BootstrapResult r = PairedBootstrapInterval(kA, kB, options);
  ASSERT_EQ(r.status, PairedStatus::kOk);
  EXPECT_EQ(r.resamples, 2000);
  EXPECT_NEAR(r.mean_difference, 0.05125000000000002, 1e-15);
  EXPECT_NEAR(r.ci_lower, 0.0050000000000000044, 1e-13);
  EXPECT_NEAR(r.ci_upper, 0.09878124999999986, 1e-13);
  options.level = 0.90;
  const BootstrapResult r90 = PairedBootstrapInterval(kA, kB, options);
  EXPECT_NEAR(r90.ci_lower, 0.013749999999999991, 1e-13);
  EXPECT_NEAR(r90.ci_upper, 0.09125000000000003, 1e-13);
}

TEST(PairedBootstrapTest, CoverageOfNormalDifferences) {
  // 400 data sets of 30 normal differences with mean 0.1 and sd 1; the
  // percentile interval should cover 0.1 about 95% of the time (slightly
  // less: the percentile bootstrap undercovers by about n^-1, Hall 1992).
  // Binomial sd of the coverage over 400 sets: 0.011; accept [0.90, 0.98].
  const uint64_t seed = 20261122;
  Xoshiro256 data(seed);
  int covered = 0;
  constexpr int kSets = 400;
  BootstrapOptions options;
  options.resamples = 1000;
  std::vector<double> t(30);
  const std::vector<double> zero(30, 0.0);
  for (int set = 0; set < kSets; ++set) {
    for (double& v : t) v = 0.1 + data.Gaussian();
    options.seed = static_cast<uint64_t>(set);
    const BootstrapResult r = PairedBootstrapInterval(t, zero, options);
    ASSERT_EQ(r.status, PairedStatus::kOk);
    ASSERT_LE(r.ci_lower, r.mean_difference);
    ASSERT_GE(r.ci_upper, r.mean_difference);
    if (r.ci_lower <= 0.1 && 0.1 <= r.ci_upper) ++covered;
  }
  const double coverage = static_cast<double>(covered) / kSets;
  EXPECT_GE(coverage, 0.90) << "seed " << seed;
  EXPECT_LE(coverage, 0.98) << "seed " << seed;
}

TEST(PairedBootstrapTest, WidthShrinksLikeTheStandardError) {
  // For large n the percentile interval approaches mean +- 1.96 s / sqrt(n)
  // (the t interval of the same data): within 10% at n = 20 with 10000
  // resamples. t interval half-width from the ttest_rel figures above:
  // (0.055456334624018035 - -0.025756334624018017) / 2 = 0.040606; the
  // bootstrap's uses z and the n (not n - 1) variance, so it is narrower by
  // about sqrt(19 / 20) * 1.96 / 2.093 = 0.913.
  const BootstrapResult r = PairedBootstrapInterval(kA20, kB20);
  const double half_width = (r.ci_upper - r.ci_lower) / 2;
  EXPECT_NEAR(half_width, 0.040606 * 0.913, 0.1 * 0.040606);
}

TEST(PairedBootstrapTest, UndefinedCases) {
  const std::vector<double> one = {0.5};
  EXPECT_EQ(PairedBootstrapInterval(one, one).status,
            PairedStatus::kTooFewPairs);
  EXPECT_EQ(PairedBootstrapInterval(kA, kA20).status,
            PairedStatus::kInvalidInput);
  BootstrapOptions bad;
  bad.level = 1.5;
  EXPECT_EQ(PairedBootstrapInterval(kA, kB, bad).status,
            PairedStatus::kInvalidInput);
  bad.level = 0.95;
  bad.resamples = 0;
  EXPECT_EQ(PairedBootstrapInterval(kA, kB, bad).status,
            PairedStatus::kInvalidInput);
  // Identical runs: a degenerate interval at 0.
  const BootstrapResult same = PairedBootstrapInterval(kA, kA);
  EXPECT_EQ(same.ci_lower, 0);
  EXPECT_EQ(same.ci_upper, 0);
}

TEST(WinTieLossTest, Counts) {
  // kA vs kB by hand: wins at 0, 2, 3, 4, 5, 7; losses at 1, 6.
  const std::optional<WinTieLoss> wtl = CountWinTieLoss(kA, kB);
  ASSERT_TRUE(wtl.has_value());
  EXPECT_EQ(wtl->wins, 6);
  EXPECT_EQ(wtl->ties, 0);
  EXPECT_EQ(wtl->losses, 2);
  // Ties are exact equality: 0.3 and 0.1 + 0.2 differ.
  const std::vector<double> t = {0.5, 0.3, 0.1 + 0.2, 1.0};
  const std::vector<double> b = {0.5, 0.3, 0.3, 0.0};
  const std::optional<WinTieLoss> exact = CountWinTieLoss(t, b);
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->wins, 2);
  EXPECT_EQ(exact->ties, 2);
  EXPECT_EQ(exact->losses, 0);
  EXPECT_FALSE(CountWinTieLoss(kA, kA20).has_value());
  const std::vector<double> with_nan = {0.5, kNaN, 0.3, 1.0};
  EXPECT_FALSE(CountWinTieLoss(with_nan, b).has_value());
  const std::optional<WinTieLoss> empty = CountWinTieLoss({}, {});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->wins + empty->ties + empty->losses, 0);
}

}  // namespace
}  // namespace rankwatch::metrics
