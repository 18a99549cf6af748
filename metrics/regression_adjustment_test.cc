#include "metrics/regression_adjustment.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "metrics/ab_stats.h"
#include "metrics/clustered.h"
#include "metrics/metrics_test_util.h"

// Where the expected figures come from: a hand calculation written beside
// the test, or an independent computation named with its exact call, run
// once offline with NumPy 2.4.6, SciPy 1.17.1, pandas and statsmodels 0.15.0
// and pasted here. Nothing runs Python at test time.

namespace rankwatch::metrics {
namespace {

constexpr double kLevel = 0.95;
constexpr double kAlpha = 1 - kLevel;

CovariateMoments MomentsOf(const std::vector<double>& y,
                           const std::vector<double>& x) {
  CovariateMoments m;
  for (size_t i = 0; i < y.size(); ++i) m.Add(y[i], x[i]);
  return m;
}

// ---------------------------------------------------------------------------
// CovariateMoments.

TEST(CovariateMomentsTest, HandCalculation) {
  // Pairs (y, x) = (1, 0), (2, 1), (4, 2): mean_y = 7/3, mean_x = 1,
  // m2_x = 1 + 0 + 1 = 2, m2_y = (16 + 1 + 25) / 9 = 14/3,
  // c_xy = (-1)(-4/3) + 0 (-1/3) + 1 (5/3) = 3.
  const CovariateMoments m = MomentsOf({1, 2, 4}, {0, 1, 2});
  EXPECT_EQ(m.count, 3);
  EXPECT_DOUBLE_EQ(m.mean_y, 7.0 / 3);
  EXPECT_DOUBLE_EQ(m.mean_x, 1);
  EXPECT_DOUBLE_EQ(m.m2_x, 2);
  EXPECT_DOUBLE_EQ(m.m2_y, 14.0 / 3);
  EXPECT_DOUBLE_EQ(m.c_xy, 3);
  // Summary of y alone: variance (14/3) / 2 = 7/3.
  const ArmSummary s = SummarizeOutcome(m);
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.mean, 7.0 / 3);
  EXPECT_DOUBLE_EQ(s.variance, 7.0 / 3);
  EXPECT_EQ(s.clusters, 0);
}

TEST(CovariateMomentsTest, MergeWithEmpty) {
  const CovariateMoments m = MomentsOf({1, 2, 4}, {0, 1, 2});
  CovariateMoments a = m;
  a.Merge(CovariateMoments());
  EXPECT_EQ(a.count, 3);
  EXPECT_EQ(a.c_xy, m.c_xy);
  CovariateMoments b;
  b.Merge(m);
  EXPECT_EQ(b.count, 3);
  EXPECT_EQ(b.mean_y, m.mean_y);
  EXPECT_EQ(b.m2_y, m.m2_y);
}

TEST(CovariateMomentsTest, RandomChunksMergeToOnePass) {
  // 5000 correlated pairs far from 0 (mean 100, so the co-moments cancel
  // badly if done by raw sums), added in one pass and in random chunks of
  // 1 to 300 pairs merged in order and pairwise (a tree, as replicas and
  // partitions would combine): equal to 1e-12 relative.
  constexpr uint64_t kSeed = 271828;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  Xoshiro256 rng(kSeed);
  std::vector<double> y;
  std::vector<double> x;
  for (int i = 0; i < 5000; ++i) {
    const double a = rng.Gaussian();
    x.push_back(100 + a);
    y.push_back(100 + 0.6 * a + 0.8 * rng.Gaussian());
  }
  const CovariateMoments one_pass = MomentsOf(y, x);
  std::vector<CovariateMoments> chunks;
  for (size_t i = 0; i < y.size();) {
    const size_t len = static_cast<size_t>(rng.Between(1, 300));
    CovariateMoments c;
    for (size_t j = i; j < i + len && j < y.size(); ++j) c.Add(y[j], x[j]);
    chunks.push_back(c);
    i += len;
  }
  CovariateMoments sequential;
  for (const CovariateMoments& c : chunks) sequential.Merge(c);
  std::vector<CovariateMoments> level = chunks;
  while (level.size() > 1) {
    std::vector<CovariateMoments> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      CovariateMoments c = level[i];
      if (i + 1 < level.size()) c.Merge(level[i + 1]);
      next.push_back(c);
    }
    level = next;
  }
  for (const CovariateMoments& merged : {sequential, level[0]}) {
    EXPECT_EQ(merged.count, one_pass.count);
    EXPECT_TRUE(RelativelyNear(merged.mean_y, one_pass.mean_y, 1e-12));
    EXPECT_TRUE(RelativelyNear(merged.mean_x, one_pass.mean_x, 1e-12));
    EXPECT_TRUE(RelativelyNear(merged.m2_y, one_pass.m2_y, 1e-12));
    EXPECT_TRUE(RelativelyNear(merged.m2_x, one_pass.m2_x, 1e-12));
    EXPECT_TRUE(RelativelyNear(merged.c_xy, one_pass.c_xy, 1e-12));
  }
  // And against the two-pass definitions, so that the merge is not only
  // consistent with Add but right.
  double sx = 0;
  double sy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    sx += x[i];
    sy += y[i];
  }
  const double mx = sx / static_cast<double>(x.size());
  const double my = sy / static_cast<double>(y.size());
  double cxy = 0;
  double m2x = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    cxy += (x[i] - mx) * (y[i] - my);
    m2x += (x[i] - mx) * (x[i] - mx);
  }
  EXPECT_TRUE(RelativelyNear(level[0].c_xy, cxy, 1e-10));
  EXPECT_TRUE(RelativelyNear(level[0].m2_x, m2x, 1e-10));
}

// ---------------------------------------------------------------------------
// A fixed data set against statsmodels: 14 baseline and 18 treatment pairs
// (y = an nDCG-like metric, x = its pre-period value), drawn once with
// numpy.random.default_rng(27) and rounded to two decimals.

const std::vector<double> kXb = {0.59, 0.52, 0.54, 0.24, 0.53, 0.37, 0.37,
                                 0.57, 0.33, 0.21, 0.33, 0.22, 0.12, 0.38};
const std::vector<double> kYb = {0.60, 0.34, 0.53, 0.31, 0.54, 0.29, 0.37,
                                 0.54, 0.40, 0.17, 0.39, 0.36, 0.01, 0.42};
const std::vector<double> kXt = {0.22, 0.42, 0.35, 0.64, 0.46, 0.57,
                                 0.29, 0.52, 0.66, 0.34, 0.55, 0.52,
                                 0.44, 0.26, 0.49, 0.41, 0.54, 0.57};
const std::vector<double> kYt = {0.43, 0.40, 0.48, 0.70, 0.50, 0.63,
                                 0.37, 0.60, 0.69, 0.36, 0.58, 0.60,
                                 0.41, 0.31, 0.63, 0.48, 0.51, 0.54};

TEST(RegressionAdjustmentTest, MatchesOlsOnFixedData) {
  const CovariateMoments b = MomentsOf(kYb, kXb);
  const CovariateMoments t = MomentsOf(kYt, kXt);
  const AdjustedArms arms = AdjustArms(b, t);
  ASSERT_EQ(arms.status, AdjustmentStatus::kAdjusted);
  // df = DataFrame(y = yb + yt, x = xb + xt, T = [0] * 14 + [1] * 18);
  // fit = smf.ols('y ~ T + x', df).fit(); fit.params['x']:
  EXPECT_TRUE(RelativelyNear(arms.theta, 0.8453349666054191, 1e-12));
  EXPECT_TRUE(
      RelativelyNear(PooledWithinArmSlope(b, t), 0.8453349666054191, 1e-12));
  const WelchComparison w = CompareWelch(arms.baseline, arms.treatment, kLevel);
  ASSERT_TRUE(w.ok());
  // fit.params['T'] (the regression-adjusted effect):
  EXPECT_TRUE(RelativelyNear(w.difference, 0.0695757450762263, 1e-12));
  // The documented formula computed directly in NumPy with that theta:
  // e = (y - y.mean()) - theta * (x - x.mean()) per arm,
  // v = (e**2).sum() / (n - 1) / n, se = sqrt(v_b + v_t),
  // nu = (v_b + v_t)**2 / (v_b**2 / 13 + v_t**2 / 17),
  // p = 2 * scipy.stats.t.sf(d / se, nu), d -+ t.ppf(0.975, nu) * se.
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.025674254040110932, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.degrees_of_freedom, 22.778091814849002, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.012556947135439232, 1e-10));
  EXPECT_TRUE(RelativelyNear(w.interval.lower, 0.0164358586422238, 1e-10));
  EXPECT_TRUE(RelativelyNear(w.interval.upper, 0.12271563151022855, 1e-10));
  // Against the baseline's mean at the pooled covariate mean,
  // yb.mean() - theta * (xb.mean() - x.mean()) = 0.4136761433946228:
  ASSERT_TRUE(w.has_relative_difference);
  EXPECT_TRUE(
      RelativelyNear(w.relative_difference, 0.16818892311576933, 1e-12));
  // statsmodels' heteroskedasticity-robust errors of the same coefficient,
  // smf.ols('y ~ T + x', df).fit(cov_type=...).bse['T']: HC0
  // 0.025071489378294187, HC1 0.026336382693953865, HC2
  // 0.026579943425560852, HC3 0.028202746244529425. The plug-in treats
  // theta as known, so it leaves out theta's sampling variance times the
  // covariate imbalance (xbar_t - xbar_b = 0.078 here) and the leverage of
  // x; both are O(1/n) relative to the variance. On these 32 pairs HC2 is
  // 3.5% larger (ratio 1.0352761713752212); the bound below is that gap
  // with room, and a wrong theta or variance (e.g. y's own, 0.0502) breaks
  // it.
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.026579943425560852, 0.05));
}

TEST(RegressionAdjustmentTest, UnadjustedSummaryIsWelchOfY) {
  // scipy.stats.ttest_ind(yt, yb, equal_var=False): p =
  // 0.012489417057721237; difference yt.mean() - yb.mean() =
  // 0.1357936507936507, se sqrt(yb.var(ddof=1)/14 + yt.var(ddof=1)/18) =
  // 0.05016108851987711. The adjusted standard error is 0.51 times this
  // (within-arm correlation of x and y 0.86: sqrt(1 - 0.86^2) = 0.51).
  const WelchComparison w =
      CompareWelch(SummarizeOutcome(MomentsOf(kYb, kXb)),
                   SummarizeOutcome(MomentsOf(kYt, kXt)), kLevel);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(RelativelyNear(w.difference, 0.1357936507936507, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.05016108851987711, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.012489417057721237, 1e-10));
}

TEST(RegressionAdjustmentTest, AdjustedArmsFeedTheSequentialTest) {
  // The mSPRT takes the adjusted arms unchanged: V = se^2 with se from the
  // NumPy computation above, and the half-width
  // sqrt(V (V + tau^2) / tau^2 (log((V + tau^2) / V) + 2 log(20))) at
  // tau = 0.05, in NumPy: 0.07934753054859256.
  const AdjustedArms arms =
      AdjustArms(MomentsOf(kYb, kXb), MomentsOf(kYt, kXt));
  SequentialTest test;
  const SequentialLook look = test.Update(arms.baseline, arms.treatment);
  ASSERT_TRUE(look.ok());
  EXPECT_TRUE(RelativelyNear(
      look.variance, 0.025674254040110932 * 0.025674254040110932, 1e-12));
  EXPECT_TRUE(RelativelyNear(look.interval.upper - look.difference,
                             0.07934753054859256, 1e-12));
}

TEST(RegressionAdjustmentTest, ConstantCovariateFallsBackToUnadjusted) {
  // x = 0.5 everywhere: no within-arm variance, theta undefined.
  const std::vector<double> xb(kYb.size(), 0.5);
  const std::vector<double> xt(kYt.size(), 0.5);
  const CovariateMoments b = MomentsOf(kYb, xb);
  const CovariateMoments t = MomentsOf(kYt, xt);
  EXPECT_TRUE(std::isnan(PooledWithinArmSlope(b, t)));
  const AdjustedArms arms = AdjustArms(b, t);
  EXPECT_EQ(arms.status, AdjustmentStatus::kNoCovariateVariance);
  EXPECT_EQ(AdjustmentStatusName(arms.status), "no_covariate_variance");
  EXPECT_EQ(arms.theta, 0);
  const WelchComparison w = CompareWelch(arms.baseline, arms.treatment, kLevel);
  // The same figures as scipy's Welch test on y (previous test).
  EXPECT_TRUE(RelativelyNear(w.difference, 0.1357936507936507, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.05016108851987711, 1e-12));
  // Empty arms: nothing to adjust, and the comparison says too few.
  const AdjustedArms empty = AdjustArms(CovariateMoments(), CovariateMoments());
  EXPECT_EQ(empty.status, AdjustmentStatus::kNoCovariateVariance);
  EXPECT_EQ(CompareWelch(empty.baseline, empty.treatment, kLevel).status,
            ComparisonStatus::kTooFewSamples);
}

TEST(RegressionAdjustmentTest, InvalidMomentsAreRejected) {
  const CovariateMoments good = MomentsOf(kYb, kXb);
  CovariateMoments nan_mean = good;
  nan_mean.mean_x = kNaN;  // What one unskipped NaN covariate does.
  CovariateMoments negative = good;
  negative.m2_x = -1;
  CovariateMoments negative_count = good;
  negative_count.count = -2;
  CovariateMoments infinite = good;
  infinite.c_xy = std::numeric_limits<double>::infinity();
  for (const CovariateMoments& bad :
       {nan_mean, negative, negative_count, infinite}) {
    const AdjustedArms arms = AdjustArms(good, bad);
    EXPECT_EQ(arms.status, AdjustmentStatus::kInvalidInput);
    EXPECT_EQ(CompareWelch(arms.baseline, arms.treatment, kLevel).status,
              ComparisonStatus::kInvalidInput);
    EXPECT_EQ(AdjustArms(bad, good).status, AdjustmentStatus::kInvalidInput);
    EXPECT_TRUE(std::isnan(PooledWithinArmSlope(good, bad)));
  }
}

// ---------------------------------------------------------------------------
// Clustered: the fixed data set of units kClusteredBaseline and
// kClusteredTreatment (metrics_test_util.h), rows {bucket, y, x}.

// The per-arm state the daemon keeps: moments and bucket sums.
struct ClusteredArm {
  CovariateMoments moments;
  std::vector<double> y_sums;
  std::vector<double> x_sums;
  std::vector<int64_t> counts;

  explicit ClusteredArm(int buckets)
      : y_sums(buckets, 0), x_sums(buckets, 0), counts(buckets, 0) {}
  void Add(int bucket, double y, double x) {
    moments.Add(y, x);
    y_sums[bucket] += y;
    x_sums[bucket] += x;
    ++counts[bucket];
  }
  ClusteredArmSums Sums() const { return {y_sums, x_sums, counts}; }
  ArmSummary Unadjusted() const { return SummarizeBuckets(y_sums, counts); }
};

ClusteredArm ClusteredArmOf(const std::vector<ClusteredRow>& rows) {
  ClusteredArm arm(4);
  for (const ClusteredRow& r : rows) arm.Add(r.bucket, r.y, r.x);
  return arm;
}

TEST(RegressionAdjustmentTest, ClusteredMatchesStatsmodelsClusterRobust) {
  const ClusteredArm b = ClusteredArmOf(kClusteredBaseline);
  const ClusteredArm t = ClusteredArmOf(kClusteredTreatment);
  const AdjustedArms arms =
      AdjustClusteredArms(b.moments, b.Sums(), t.moments, t.Sums());
  ASSERT_EQ(arms.status, AdjustmentStatus::kAdjusted);
  EXPECT_EQ(arms.baseline.count, 23);
  EXPECT_EQ(arms.treatment.count, 21);
  EXPECT_EQ(arms.baseline.clusters, 4);
  EXPECT_EQ(arms.treatment.clusters, 4);
  // df with columns T, b (bucket), y, x; groups g = 4 T + b (G = 8
  // clusters, N = 44 rows). full = smf.ols('y ~ T + x', df).fit():
  // full.params['x'] = 0.7934368198368278, full.params['T'] =
  // 0.031193244621982225.
  EXPECT_TRUE(RelativelyNear(arms.theta, 0.7934368198368278, 1e-12));
  const WelchComparison w = CompareWelch(arms.baseline, arms.treatment, kLevel);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(RelativelyNear(w.difference, 0.031193244621982225, 1e-11));
  // Standard error. With theta fixed, the residual r = y - theta x
  // regressed on T alone, smf.ols('r ~ T', df).fit(cov_type='cluster',
  // cov_kwds={'groups': df.g}).bse['T'] = 0.04716312188375791, is the
  // CR1 error: CR0 times G/(G-1) (N-1)/(N-K) with K = 2 (statsmodels'
  // default use_correction=True). rankwatch's is CR0 times B/(B-1) per arm
  // (SummarizeBuckets), the same B = 4 in both arms, so exactly
  //   se = 0.04716312188375791 * sqrt((4/3) / ((8/7) (43/42)))
  //      = 0.05034616061786823,
  // and the documented formula in NumPy gives 0.050346160617868216.
  const double cr1_factor = (8.0 / 7) * (43.0 / 42);
  EXPECT_TRUE(RelativelyNear(
      w.standard_error, 0.04716312188375791 * std::sqrt((4.0 / 3) / cr1_factor),
      1e-12));
  // The full model's cluster-robust error, smf.ols('y ~ T + x', df).fit(
  // cov_type='cluster', ...).bse['T'] = 0.048267173730716637, rescaled the
  // same way with K = 3: 0.050907640081110275, 1.1% above the plug-in,
  // which treats theta as known (see the HC2 comparison above).
  EXPECT_TRUE(RelativelyNear(
      w.standard_error,
      0.048267173730716637 * std::sqrt((4.0 / 3) / ((8.0 / 7) * (43.0 / 41))),
      0.02));
  // Welch-Satterthwaite with G - 1 = 3 per arm, in NumPy from the two
  // arms' variances of the mean: nu = 3.960920200010005, p =
  // 2 * scipy.stats.t.sf(d / se, nu) = 0.5693972309691357.
  EXPECT_TRUE(RelativelyNear(w.degrees_of_freedom, 3.960920200010005, 1e-10));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.5693972309691357, 1e-10));
  // Per arm, n times the variance of the adjusted mean, in NumPy:
  // 4/3 * sum_b (R_b - m N_b)^2 / n with R_b the bucket sums of
  // y - theta (x - x.mean()).
  EXPECT_TRUE(
      RelativelyNear(arms.baseline.variance, 0.05006406542749985, 1e-12));
  EXPECT_TRUE(
      RelativelyNear(arms.treatment.variance, 0.007518785234359663, 1e-12));
  EXPECT_TRUE(RelativelyNear(arms.baseline.mean, 0.5476123150667815, 1e-12));
  EXPECT_TRUE(RelativelyNear(arms.treatment.mean, 0.5788055596887633, 1e-12));
}

TEST(RegressionAdjustmentTest, ClusteredFallbackAndInvalidBuckets) {
  const ClusteredArm b = ClusteredArmOf(kClusteredBaseline);
  const ClusteredArm t = ClusteredArmOf(kClusteredTreatment);
  // Constant x: the clustered summaries of y, as without a covariate.
  ClusteredArm cb(4);
  ClusteredArm ct(4);
  for (const ClusteredRow& r : kClusteredBaseline) cb.Add(r.bucket, r.y, 1.0);
  for (const ClusteredRow& r : kClusteredTreatment) ct.Add(r.bucket, r.y, 1.0);
  const AdjustedArms fallback =
      AdjustClusteredArms(cb.moments, cb.Sums(), ct.moments, ct.Sums());
  EXPECT_EQ(fallback.status, AdjustmentStatus::kNoCovariateVariance);
  const ArmSummary unadjusted = b.Unadjusted();
  EXPECT_EQ(fallback.baseline.count, unadjusted.count);
  EXPECT_EQ(fallback.baseline.mean, unadjusted.mean);
  EXPECT_EQ(fallback.baseline.variance, unadjusted.variance);
  EXPECT_EQ(fallback.baseline.clusters, unadjusted.clusters);

  // Counts that do not add up to the moments' count.
  ClusteredArm short_arm = b;
  short_arm.counts[0] -= 1;
  EXPECT_EQ(AdjustClusteredArms(short_arm.moments, short_arm.Sums(), t.moments,
                                t.Sums())
                .status,
            AdjustmentStatus::kInvalidInput);
  // Spans of different sizes.
  ClusteredArm ragged = b;
  ragged.x_sums.pop_back();
  EXPECT_EQ(
      AdjustClusteredArms(ragged.moments, ragged.Sums(), t.moments, t.Sums())
          .status,
      AdjustmentStatus::kInvalidInput);
  // An x sum in a bucket without pairs.
  ClusteredArm stray(5);
  for (const ClusteredRow& r : kClusteredBaseline)
    stray.Add(r.bucket, r.y, r.x);
  stray.x_sums[4] = 0.5;
  const AdjustedArms bad =
      AdjustClusteredArms(stray.moments, stray.Sums(), t.moments, t.Sums());
  EXPECT_EQ(bad.status, AdjustmentStatus::kInvalidInput);
  EXPECT_EQ(CompareWelch(bad.baseline, bad.treatment, kLevel).status,
            ComparisonStatus::kInvalidInput);
  // A NaN x sum.
  ClusteredArm nan_arm = b;
  nan_arm.x_sums[1] = kNaN;
  EXPECT_EQ(
      AdjustClusteredArms(nan_arm.moments, nan_arm.Sums(), t.moments, t.Sums())
          .status,
      AdjustmentStatus::kInvalidInput);
}

// ---------------------------------------------------------------------------
// Simulations. Deterministic (fixed seeds, printed with the figures and in
// every failure message) and, together, about 2 s in the ASan -O1
// build. docs/statistics.md quotes their output, printed by
//   metrics_test --gtest_filter='RegressionAdjustmentSimulationTest.*'

// Mixing standard deviation of the simulated sequential tests: the data have a
// standard deviation of about 1 per row, and tau = 0.2 is to them what the
// default 0.05 is to a [0, 1] ranking metric with a standard deviation of
// 0.25 (docs/statistics.md, "Choosing tau").
constexpr double kSimulationTau = 0.2;

// Monte Carlo standard error of a rate near p over n experiments.
double BinomialSd(double p, int n) { return std::sqrt(p * (1 - p) / n); }

// y = rho x + sqrt(1 - rho^2) e with x, e independent standard normal, so
// corr(x, y) = rho. With equal arms the ratio of the adjusted to the
// unadjusted Welch interval width is, up to the t quantiles (their degrees
// of freedom differ by well under 1% here), sqrt(1 - r^2) with r the
// sample within-arm correlation; its mean over experiments is
// sqrt(1 - rho^2) up to an O(1/N) small-sample bias (N rows per
// experiment; by the delta method about rho^2 sqrt(1 - rho^2) / (2 N) from
// the curvature of the square root, and of the same order from E r^2 -
// rho^2), so the bound is 3 Monte Carlo standard errors plus 1 / N.
void ExpectWidthRatio(double rho, uint64_t seed) {
  constexpr int kPerArm = 500;
  constexpr int kExperiments = 400;
  const std::string trace =
      "rho " + std::to_string(rho) + ", seed " + std::to_string(seed);
  SCOPED_TRACE(trace);
  Xoshiro256 rng(seed);
  const double noise = std::sqrt(1 - rho * rho);
  double sum = 0;
  double sum_sq = 0;
  double sequential_sum = 0;
  for (int e = 0; e < kExperiments; ++e) {
    CovariateMoments arm[2];
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < kPerArm; ++i) {
        const double x = rng.Gaussian();
        arm[k].Add(rho * x + noise * rng.Gaussian(), x);
      }
    }
    const AdjustedArms adjusted = AdjustArms(arm[0], arm[1]);
    ASSERT_EQ(adjusted.status, AdjustmentStatus::kAdjusted);
    const WelchComparison a =
        CompareWelch(adjusted.baseline, adjusted.treatment, kLevel);
    const WelchComparison u = CompareWelch(SummarizeOutcome(arm[0]),
                                           SummarizeOutcome(arm[1]), kLevel);
    ASSERT_TRUE(a.ok() && u.ok());
    const double ratio = (a.interval.upper - a.interval.lower) /
                         (u.interval.upper - u.interval.lower);
    sum += ratio;
    sum_sq += ratio * ratio;
    const double tau = kSimulationTau;
    sequential_sum +=
        MsprtHalfWidth(a.standard_error * a.standard_error, tau, kLevel) /
        MsprtHalfWidth(u.standard_error * u.standard_error, tau, kLevel);
  }
  const double mean = sum / kExperiments;
  const double sd = std::sqrt((sum_sq - sum * mean) / (kExperiments - 1));
  const double mc_se = sd / std::sqrt(kExperiments);
  const double target = std::sqrt(1 - rho * rho);
  const double bound = 3 * mc_se + 1.0 / (2 * kPerArm);
  std::printf("[width_ratio rho=%.1f] seed %" PRIu64
              ", %d experiments of %d+%d rows: mean Welch width ratio %.4f "
              "(sqrt(1 - rho^2) = %.4f, Monte Carlo s.e. %.5f, bound %.4f); "
              "mean mSPRT half-width ratio (tau %.2f) %.4f\n",
              rho, seed, kExperiments, kPerArm, kPerArm, mean, target, mc_se,
              bound, kSimulationTau, sequential_sum / kExperiments);
  EXPECT_NEAR(mean, target, bound);
}

TEST(RegressionAdjustmentSimulationTest, WidthRatioIsSqrtOneMinusRhoSquared) {
  ExpectWidthRatio(0.5, 5);
  ExpectWidthRatio(0.8, 8);
}

// Warm-ups of the mSPRT: looks count only once every arm has this many
// values (SequentialOptions::min_count) and, clustered, this many non-empty
// buckets. From the first possible look (2 values, 2 buckets) the plug-in
// variance of a handful of values or clusters is far too noisy for the
// normal approximation the mSPRT rests on, and a theta estimated from the
// same few values makes it worse (the figures printed, quoted in
// docs/statistics.md). The level is asserted at kWarmUps[kAssertedWarmUp].
constexpr int64_t kWarmUps[] = {2, 5, 10, 20, 50};
constexpr int kNumWarmUps = 5;
constexpr int kAssertedWarmUp = 3;  // 20 values (and buckets) per arm.

SequentialTest MakeSequentialTest(int64_t min_count) {
  return SequentialTest({.level = kLevel,
                         .mixing_stddev = kSimulationTau,
                         .min_count = min_count});
}

double Rate(int count, int experiments) {
  return static_cast<double>(count) / experiments;
}

// An adjusted and an unadjusted mSPRT per warm-up, fed at every look.
struct SequentialTests {
  std::vector<SequentialTest> adjusted;
  std::vector<SequentialTest> unadjusted;

  SequentialTests() {
    for (int64_t w : kWarmUps) {
      adjusted.push_back(MakeSequentialTest(w));
      unadjusted.push_back(MakeSequentialTest(w));
    }
  }
  // `clusters`: the fewest non-empty buckets of an arm, or 0 for
  // independent values (no cluster warm-up). SequentialOptions::min_count
  // counts values; the cluster count is the caller's to check.
  void Update(const AdjustedArms& arms, const ArmSummary& unadjusted_b,
              const ArmSummary& unadjusted_t, int64_t clusters) {
    for (int i = 0; i < kNumWarmUps; ++i) {
      if (clusters > 0 && clusters < kWarmUps[i]) continue;
      (void)adjusted[i].Update(arms.baseline, arms.treatment);
      (void)unadjusted[i].Update(unadjusted_b, unadjusted_t);
    }
  }
};

// Rejections of the null over an A/A simulation.
struct AaOutcome {
  int experiments = 0;
  int welch_adjusted = 0;    // Adjusted Welch at the last look.
  int welch_unadjusted = 0;  // Unadjusted Welch at the last look.
  // mSPRT ever rejected, per warm-up.
  int sequential_adjusted[kNumWarmUps] = {};
  int sequential_unadjusted[kNumWarmUps] = {};
  // Clustered runs only: the adjusted Welch test on the same rows taken as
  // independent, i.e. the rate a forgotten schema.unit would give.
  int per_row_welch_adjusted = 0;

  void Count(const SequentialTests& tests) {
    for (int i = 0; i < kNumWarmUps; ++i) {
      sequential_adjusted[i] += tests.adjusted[i].rejected();
      sequential_unadjusted[i] += tests.unadjusted[i].rejected();
    }
  }
};

void ReportAndCheckAa(const char* name, uint64_t seed, bool clustered,
                      const AaOutcome& o) {
  const int n = o.experiments;
  const double limit = kAlpha + 3 * BinomialSd(kAlpha, n);
  std::printf(
      "[%s] seed %" PRIu64
      ", %d experiments, alpha %.2f, tau %.2f (limit alpha + 3 sd = %.4f):\n"
      "  Welch at the end: adjusted %.4f, unadjusted %.4f\n",
      name, seed, n, kAlpha, kSimulationTau, limit, Rate(o.welch_adjusted, n),
      Rate(o.welch_unadjusted, n));
  for (int i = 0; i < kNumWarmUps; ++i) {
    std::printf("  mSPRT ever rejected, warm-up %" PRId64
                "%s: adjusted %.4f, unadjusted %.4f\n",
                kWarmUps[i],
                clustered ? " values and buckets per arm" : " values per arm",
                Rate(o.sequential_adjusted[i], n),
                Rate(o.sequential_unadjusted[i], n));
  }
  if (clustered) {
    std::printf("  adjusted Welch per row (unit ignored): %.4f\n",
                Rate(o.per_row_welch_adjusted, n));
  }
  const std::string trace =
      std::string(name) + ", seed " + std::to_string(seed);
  SCOPED_TRACE(trace);
  EXPECT_LE(Rate(o.welch_adjusted, n), limit);
  // Welch used as designed is calibrated, not merely conservative.
  EXPECT_GE(Rate(o.welch_adjusted, n), kAlpha - 3 * BinomialSd(kAlpha, n));
  EXPECT_LE(Rate(o.sequential_adjusted[kAssertedWarmUp], n), limit);
}

TEST(RegressionAdjustmentSimulationTest, AaFalsePositivesIndependentRows) {
  // A/A, rho = 0.8, 1000 rows per arm at the end, a look every 2 rows per
  // arm (500 looks), theta re-estimated at every look from all rows so far.
  constexpr uint64_t kSeed = 2013;
  constexpr int kExperiments = 2000;
  constexpr int kLooks = 500;
  constexpr int kPerLook = 2;
  constexpr double kRho = 0.8;
  const double noise = std::sqrt(1 - kRho * kRho);
  Xoshiro256 rng(kSeed);
  AaOutcome o;
  o.experiments = kExperiments;
  for (int e = 0; e < kExperiments; ++e) {
    CovariateMoments arm[2];
    SequentialTests tests;
    AdjustedArms arms;
    for (int look = 0; look < kLooks; ++look) {
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < kPerLook; ++i) {
          const double x = rng.Gaussian();
          arm[k].Add(kRho * x + noise * rng.Gaussian(), x);
        }
      }
      arms = AdjustArms(arm[0], arm[1]);
      tests.Update(arms, SummarizeOutcome(arm[0]), SummarizeOutcome(arm[1]),
                   /*clusters=*/0);
    }
    ASSERT_EQ(arms.status, AdjustmentStatus::kAdjusted) << "seed " << kSeed;
    o.welch_adjusted +=
        CompareWelch(arms.baseline, arms.treatment, kLevel).p_value <= kAlpha;
    o.welch_unadjusted +=
        CompareWelch(SummarizeOutcome(arm[0]), SummarizeOutcome(arm[1]), kLevel)
            .p_value <= kAlpha;
    o.Count(tests);
  }
  ReportAndCheckAa("aa_independent", kSeed, /*clustered=*/false, o);
}

TEST(RegressionAdjustmentSimulationTest, AaFalsePositivesClusteredUnits) {
  // A/A with units: 600 units per experiment, each with 1 to 6 rows
  // (mean 3.5), assigned to an arm by a fair coin and to one of 64 buckets
  // uniformly (as the hash does). Unit effects a, b ~ N(0, 1):
  // x = a + 0.5 e1, y = 0.7 a + 0.7 b + 0.5 e2, so x explains the part of
  // y that a carries (within correlation 0.63) and the residual keeps a
  // unit effect, 0.7 b (intra-unit correlation about 0.6 after
  // adjustment, design effect about 3). A look every 6 units (100 looks).
  constexpr uint64_t kSeed = 2210;
  constexpr int kExperiments = 1000;
  constexpr int kLooks = 100;
  constexpr int kUnitsPerLook = 6;
  constexpr int kBuckets = 64;
  Xoshiro256 rng(kSeed);
  AaOutcome o;
  o.experiments = kExperiments;
  for (int e = 0; e < kExperiments; ++e) {
    ClusteredArm arm[2] = {ClusteredArm(kBuckets), ClusteredArm(kBuckets)};
    SequentialTests tests;
    AdjustedArms arms;
    for (int look = 0; look < kLooks; ++look) {
      for (int u = 0; u < kUnitsPerLook; ++u) {
        const int k = static_cast<int>(rng.Below(2));
        const int bucket = static_cast<int>(rng.Below(kBuckets));
        const double a = rng.Gaussian();
        const double b = rng.Gaussian();
        const int rows = static_cast<int>(rng.Between(1, 6));
        for (int i = 0; i < rows; ++i) {
          const double x = a + 0.5 * rng.Gaussian();
          arm[k].Add(bucket, 0.7 * a + 0.7 * b + 0.5 * rng.Gaussian(), x);
        }
      }
      arms = AdjustClusteredArms(arm[0].moments, arm[0].Sums(), arm[1].moments,
                                 arm[1].Sums());
      const ArmSummary ub = arm[0].Unadjusted();
      const ArmSummary ut = arm[1].Unadjusted();
      // Before both arms have a unit, clusters is 0: no look yet.
      const int64_t clusters = std::min(ub.clusters, ut.clusters);
      if (clusters > 0) tests.Update(arms, ub, ut, clusters);
    }
    ASSERT_EQ(arms.status, AdjustmentStatus::kAdjusted) << "seed " << kSeed;
    o.welch_adjusted +=
        CompareWelch(arms.baseline, arms.treatment, kLevel).p_value <= kAlpha;
    o.welch_unadjusted +=
        CompareWelch(arm[0].Unadjusted(), arm[1].Unadjusted(), kLevel)
            .p_value <= kAlpha;
    o.Count(tests);
    const AdjustedArms per_row = AdjustArms(arm[0].moments, arm[1].moments);
    o.per_row_welch_adjusted +=
        CompareWelch(per_row.baseline, per_row.treatment, kLevel).p_value <=
        kAlpha;
  }
  ReportAndCheckAa("aa_clustered", kSeed, /*clustered=*/true, o);
  // Without the units the same adjusted comparison is overconfident: the
  // clustering is what keeps the rate at its level.
  EXPECT_GT(Rate(o.per_row_welch_adjusted, kExperiments), 0.10)
      << "seed " << kSeed;
}

}  // namespace
}  // namespace rankwatch::metrics
