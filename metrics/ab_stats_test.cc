#include "metrics/ab_stats.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>

#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"
#include "metrics/running_stats.h"

// Where the expected figures come from. Unless a test says otherwise they
// were computed once, offline, with Debian's python3-scipy 1.10.1 (numpy
// 1.24.2) and python3-mpmath 1.2.1 (at 50 significant digits), and pasted
// here; nothing runs Python at test time. Each test names the exact call.
//
// SciPy's t.cdf / t.sf agree with mpmath to about 1e-15 relative, but its
// t.ppf (cephes stdtrit) is only good to about 1e-11 at small df (e.g.
// t.ppf(0.975, 1) = 12.706204736432095 against tan(0.475 pi) =
// 12.706204736174...), so the t quantiles below are mpmath's: the root of
// mpmath's regularized incomplete beta form of the t CDF, found by
// mp.findroot to 1e-40.

namespace rankwatch::metrics {
namespace {

ArmSummary SummaryOf(std::initializer_list<double> values) {
  RunningStats stats;
  for (double v : values) stats.Add(v);
  return Summarize(stats);
}

// ---------------------------------------------------------------------------
// Normal distribution.

TEST(NormalTest, CdfMatchesScipy) {
  // scipy.stats.norm.cdf(x), which mpmath.ncdf matches to 1e-14, except at
  // x = -30 where SciPy's 4.906713927147908e-198 is 6e-14 off and the
  // literal is mpmath's.
  EXPECT_TRUE(RelativelyNear(NormalCdf(-30), 4.906713927148187e-198, 1e-12));
  EXPECT_TRUE(RelativelyNear(NormalCdf(-10), 7.61985302416047e-24, 1e-13));
  EXPECT_EQ(NormalCdf(0), 0.5);
  EXPECT_TRUE(RelativelyNear(NormalCdf(1.5), 0.9331927987311419, 1e-15));
  EXPECT_TRUE(RelativelyNear(NormalCdf(8), 0.9999999999999993, 1e-15));
}

TEST(NormalTest, QuantileMatchesScipyIntoTheTails) {
  // scipy.stats.norm.ppf(p) (cephes ndtri); the same to 1e-15 as the root
  // of mpmath.ncdf(x) = p.
  struct Case {
    double p;
    double expected;
  };
  for (const Case& c :
       {Case{1e-300, -37.0470962993612}, Case{1e-20, -9.262340089798409},
        Case{1e-10, -6.361340902404056}, Case{1e-3, -3.090232306167813},
        Case{0.025, -1.9599639845400545}, Case{0.9, 1.2815515655446004},
        Case{0.975, 1.959963984540054}, Case{1 - 1e-12, 7.0344869100478356}}) {
    EXPECT_TRUE(RelativelyNear(NormalQuantile(c.p), c.expected, 1e-14))
        << "p = " << c.p;
  }
  EXPECT_EQ(NormalQuantile(0.5), 0);
}

TEST(NormalTest, QuantileInvertsCdf) {
  // A relative error e in x becomes about x^2 e in Phi(x) far out, so at
  // p = 1e-200 (x = -30.1) 1e-12 is the round-off budget.
  for (double p :
       {1e-200, 1e-15, 1e-4, 0.07, 0.075, 0.3, 0.5, 0.6, 0.925, 0.93, 0.999}) {
    EXPECT_TRUE(RelativelyNear(NormalCdf(NormalQuantile(p)), p, 1e-12))
        << "p = " << p;
  }
}

TEST(NormalTest, QuantileEdges) {
  EXPECT_EQ(NormalQuantile(0), -kInf);
  EXPECT_EQ(NormalQuantile(1), kInf);
  EXPECT_TRUE(std::isnan(NormalQuantile(-0.1)));
  EXPECT_TRUE(std::isnan(NormalQuantile(1.5)));
  EXPECT_TRUE(std::isnan(NormalQuantile(std::nan(""))));
}

// ---------------------------------------------------------------------------
// Incomplete beta and Student t.

TEST(IncompleteBetaTest, MatchesClosedFormsAndScipy) {
  // By hand: I_0.4(2, 3) = sum_{j=2..4} C(4, j) 0.4^j 0.6^(4-j) = 0.5248.
  EXPECT_TRUE(
      RelativelyNear(RegularizedIncompleteBeta(2, 3, 0.4), 0.5248, 1e-14));
  // By hand: I_x(1/2, 1/2) = (2 / pi) asin(sqrt(x)).
  EXPECT_TRUE(RelativelyNear(RegularizedIncompleteBeta(0.5, 0.5, 0.3),
                             2 / std::numbers::pi * std::asin(std::sqrt(0.3)),
                             1e-14));
  // scipy.special.betainc(a, b, x), equal to mpmath.betainc(a, b, 0, x,
  // regularized=True) to within 3e-15.
  EXPECT_TRUE(RelativelyNear(RegularizedIncompleteBeta(50, 0.5, 0.99),
                             0.3173043978741974, 1e-13));
  EXPECT_TRUE(RelativelyNear(RegularizedIncompleteBeta(0.5, 50, 0.01),
                             0.6826956021258024, 1e-13));
  EXPECT_TRUE(RelativelyNear(RegularizedIncompleteBeta(3.3, 7.1, 0.25),
                             0.34687505699414506, 1e-13));
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 0), 0);
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 1), 1);
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(0, 3, 0.5)));
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(2, 3, 1.5)));
}

// Closed forms, written so that they keep their own relative accuracy in
// the lower tail: df = 1 is the Cauchy, 1/2 + atan(t) / pi = atan2(1, -t) /
// pi; for df = 2, 1/2 + t / (2 sqrt(2 + t^2)), which for t < 0 equals
// 1 / ((sqrt(2 + t^2) - t) sqrt(2 + t^2)).
double CauchyCdf(double t) { return std::atan2(1, -t) / std::numbers::pi; }
double TwoDfCdf(double t) {
  const double r = std::sqrt(2 + t * t);
  return t < 0 ? 1 / ((r - t) * r) : 0.5 + t / (2 * r);
}

TEST(StudentTTest, CdfMatchesClosedFormsForOneAndTwoDf) {
  for (double t : {-1e6, -40.0, -2.5, -0.3, 0.0, 0.7, 3.0, 1e3}) {
    EXPECT_TRUE(RelativelyNear(StudentTCdf(t, 1), CauchyCdf(t), 1e-13))
        << "t = " << t;
    EXPECT_TRUE(RelativelyNear(StudentTCdf(t, 2), TwoDfCdf(t), 1e-13))
        << "t = " << t;
  }
}

TEST(StudentTTest, CdfMatchesScipy) {
  // scipy.stats.t.cdf(t, df); mpmath agrees to 1e-15 relative in each case.
  struct Case {
    double t;
    double df;
    double expected;
  };
  for (const Case& c : {
           Case{-2.5, 1, 0.12111894159084335},
           Case{-3.0, 2, 0.047732983133354556},
           Case{-2.2, 3.7, 0.049075197195261086},
           Case{4.0, 3.7, 0.9906055449906095},
           Case{-12.0, 5, 3.544746258580764e-05},
           Case{-6.0, 12.5, 2.620529572751121e-05},
           Case{-1.96, 30, 0.029671156448025263},
           Case{-2.0, 1e3, 0.022885173246625833},
           // Either side of the switch to Hill's expansion at df = 1e4.
           Case{-3.1, 9999, 0.0009702917788448757},
           Case{-3.1, 1e4, 0.0009702915097809978},
           Case{-7.0, 9999, 1.3620242327295491e-12},
           Case{-7.0, 1e4, 1.3620157803399035e-12},
           Case{-3.5, 1e5, 0.00023273026968555},
           Case{-5.0, 1e7, 2.8665640375042664e-07},
           Case{2.0, 1e7, 0.9772498545540785},
       }) {
    EXPECT_TRUE(RelativelyNear(StudentTCdf(c.t, c.df), c.expected, 1e-12))
        << "t = " << c.t << ", df = " << c.df;
  }
}

TEST(StudentTTest, TwoSidedPValueMatchesScipy) {
  // 2 * scipy.stats.t.sf(t, df).
  EXPECT_TRUE(RelativelyNear(StudentTTwoSidedPValue(25, 3),
                             0.0001403313899575486, 1e-13));
  EXPECT_TRUE(RelativelyNear(StudentTTwoSidedPValue(-9, 40),
                             3.680164471706177e-11, 1e-12));
  EXPECT_TRUE(RelativelyNear(StudentTTwoSidedPValue(0.4, 6), 0.7030082315037678,
                             1e-14));
  EXPECT_EQ(StudentTTwoSidedPValue(0, 6), 1);
  // df = inf is the normal: 2 * scipy.stats.norm.sf(1.959963984540054).
  EXPECT_TRUE(RelativelyNear(StudentTTwoSidedPValue(1.959963984540054, kInf),
                             0.05, 1e-14));
}

TEST(StudentTTest, FarTailsKeepRelativeAccuracy) {
  // Beyond t^2 / df = 1e20 the power-law branch; at 1e200, t^2 overflows.
  EXPECT_TRUE(RelativelyNear(StudentTCdf(-1e200, 1), CauchyCdf(-1e200), 1e-14));
  EXPECT_TRUE(RelativelyNear(StudentTCdf(-1e120, 2), TwoDfCdf(-1e120), 1e-14));
  EXPECT_EQ(StudentTCdf(-kInf, 3), 0);
  EXPECT_EQ(StudentTCdf(kInf, 3), 1);
}

TEST(StudentTTest, QuantileMatchesMpmath) {
  // Root of the mpmath t CDF (see the top of this file).
  struct Case {
    double p;
    double df;
    double expected;
  };
  for (const Case& c : {
           Case{0.975, 1, 12.706204736174694},
           Case{0.025, 2, -4.302652729749464},
           Case{0.975, 3.7, 2.8675207071911886},
           Case{0.995, 3.7, 4.8692522532278275},
           Case{0.05, 7.3, -1.8829300179564317},
           Case{0.975, 10, 2.2281388519862744},
           Case{0.975, 30, 2.0422724563012378},
           Case{1e-8, 4, -131.59473694062356},
           Case{1e-12, 2.5, -55306.17407651582},
           Case{0.975, 1e3, 1.962339080826408},
           Case{0.975, 1e6, 1.9599663568141066},
       }) {
    EXPECT_TRUE(RelativelyNear(StudentTQuantile(c.p, c.df), c.expected, 1e-12))
        << "p = " << c.p << ", df = " << c.df;
  }
}

TEST(StudentTTest, QuantileInvertsCdf) {
  for (double df : {0.7, 1.0, 1.5, 2.0, 3.7, 9.0, 57.3, 9999.5, 2e4, 1e8}) {
    for (double p : {1e-150, 1e-9, 0.01, 0.3, 0.5, 0.8, 0.9995}) {
      const double t = StudentTQuantile(p, df);
      ASSERT_TRUE(std::isfinite(t)) << "p = " << p << ", df = " << df;
      EXPECT_TRUE(RelativelyNear(StudentTCdf(t, df), p, 1e-11))
          << "p = " << p << ", df = " << df;
    }
  }
}

TEST(StudentTTest, DomainEdges) {
  EXPECT_EQ(StudentTQuantile(0, 5), -kInf);
  EXPECT_EQ(StudentTQuantile(1, 5), kInf);
  EXPECT_EQ(StudentTQuantile(0.5, 5), 0);
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.3, 0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.3, -2)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(1.2, 5)));
  EXPECT_TRUE(std::isnan(StudentTCdf(1, 0)));
  EXPECT_TRUE(std::isnan(StudentTCdf(std::nan(""), 3)));
  EXPECT_EQ(StudentTQuantile(0.975, kInf), NormalQuantile(0.975));
}

// ---------------------------------------------------------------------------
// Welch.

TEST(WelchTest, SmallSamplesMatchScipy) {
  // scipy.stats.ttest_ind(treatment, baseline, equal_var=False) on these
  // samples gives statistic 2.5322014876406436, pvalue 0.024872897274783555.
  // df is the Welch-Satterthwaite formula evaluated in numpy, the interval
  // difference -+ t_{0.975, df} * se with the mpmath quantile.
  const ArmSummary baseline =
      SummaryOf({0.62, 0.71, 0.55, 0.80, 0.68, 0.59, 0.74});
  const ArmSummary treatment =
      SummaryOf({0.78, 0.66, 0.83, 0.91, 0.70, 0.88, 0.75, 0.69, 0.85});
  const WelchComparison w = CompareWelch(baseline, treatment, 0.95);
  ASSERT_TRUE(w.ok()) << ComparisonStatusName(w.status);
  EXPECT_EQ(w.baseline_count, 7);
  EXPECT_EQ(w.treatment_count, 9);
  EXPECT_NEAR(w.difference, 0.11333333333333317, 1e-14);
  ASSERT_TRUE(w.has_relative_difference);
  EXPECT_NEAR(w.relative_difference, 0.16915422885572115, 1e-14);
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.044756838619082605, 1e-13));
  EXPECT_TRUE(RelativelyNear(w.degrees_of_freedom, 13.12611469167752, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.t_statistic, 2.5322014876406436, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.024872897274783555, 1e-11));
  EXPECT_NEAR(w.interval.lower, 0.016736413078071888, 1e-12);
  EXPECT_NEAR(w.interval.upper, 0.20993025358859446, 1e-12);
  EXPECT_EQ(w.level, 0.95);
}

TEST(WelchTest, BinaryOutcomesAtLevelNinety) {
  // Clicks: scipy.stats.ttest_ind(treatment, baseline, equal_var=False)
  // gives statistic 1.9019594276507403, pvalue 0.09239432662690747; df by
  // the Welch-Satterthwaite formula, interval with mpmath's t_{0.95, df}.
  const ArmSummary baseline = SummaryOf({0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1});
  const ArmSummary treatment = SummaryOf({1, 1, 0, 1, 1});
  const WelchComparison w = CompareWelch(baseline, treatment, 0.90);
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(w.difference, 0.46666666666666673, 1e-14);
  EXPECT_NEAR(w.relative_difference, 1.4000000000000004, 1e-13);
  EXPECT_TRUE(RelativelyNear(w.standard_error, 0.24536099975754133, 1e-13));
  EXPECT_TRUE(RelativelyNear(w.degrees_of_freedom, 8.291619628048315, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.t_statistic, 1.9019594276507403, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.09239432662690747, 1e-11));
  EXPECT_NEAR(w.interval.lower, 0.012477733328712715, 1e-12);
  EXPECT_NEAR(w.interval.upper, 0.9208556000046207, 1e-12);
}

TEST(WelchTest, OneConstantArmLeavesTheOthersDegreesOfFreedom) {
  // With vb = 0 the Welch-Satterthwaite df is exactly nt - 1 = 5.
  // scipy.stats.ttest_ind(treatment, baseline, equal_var=False): statistic
  // 1.2335879094879216, pvalue 0.27217910316618416; t_{0.975, 5} from mpmath.
  const ArmSummary baseline = SummaryOf({0.5, 0.5, 0.5, 0.5});
  const ArmSummary treatment = SummaryOf({0.4, 0.9, 0.6, 0.7, 0.8, 0.3});
  const WelchComparison w = CompareWelch(baseline, treatment, 0.95);
  ASSERT_TRUE(w.ok());
  EXPECT_DOUBLE_EQ(w.degrees_of_freedom, 5);
  EXPECT_TRUE(RelativelyNear(w.t_statistic, 1.2335879094879216, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.27217910316618416, 1e-12));
  EXPECT_NEAR(w.interval.lower, -0.12644629824725084, 1e-12);
  EXPECT_NEAR(w.interval.upper, 0.359779631580584, 1e-12);
}

TEST(WelchTest, LargeArmsFromSummariesMatchScipy) {
  // scipy.stats.ttest_ind_from_stats(0.3012, sqrt(0.2105), 1200000, 0.3005,
  // sqrt(0.2101), 800000, equal_var=False) (treatment first): statistic
  // 1.0576459937218472, pvalue 0.2902170143887597; df 1715401.3348584557 by
  // the Welch-Satterthwaite formula; interval with scipy.stats.t.ppf(0.975,
  // df) = 1.9599653674659194, which at this df agrees with mpmath.
  const ArmSummary baseline = {800000, 0.3005, 0.2101};
  const ArmSummary treatment = {1200000, 0.3012, 0.2105};
  const WelchComparison w = CompareWelch(baseline, treatment, 0.95);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(RelativelyNear(w.degrees_of_freedom, 1715401.3348584557, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.t_statistic, 1.0576459937218472, 1e-12));
  EXPECT_TRUE(RelativelyNear(w.p_value, 0.2902170143887597, 1e-12));
  EXPECT_NEAR(w.interval.lower, -0.0005971975172885621, 1e-15);
  EXPECT_NEAR(w.interval.upper, 0.00199719751728863, 1e-15);
}

TEST(WelchTest, SwappingArmsNegatesTheDifference) {
  const ArmSummary a = SummaryOf({0.1, 0.4, 0.35, 0.8});
  const ArmSummary b = SummaryOf({0.5, 0.45, 0.9, 0.7, 0.65});
  const WelchComparison ab = CompareWelch(a, b, 0.95);
  const WelchComparison ba = CompareWelch(b, a, 0.95);
  EXPECT_DOUBLE_EQ(ab.difference, -ba.difference);
  EXPECT_DOUBLE_EQ(ab.p_value, ba.p_value);
  EXPECT_DOUBLE_EQ(ab.interval.lower, -ba.interval.upper);
  EXPECT_DOUBLE_EQ(ab.interval.upper, -ba.interval.lower);
}

// The "no evidence" values every non-OK comparison must carry.
void ExpectNoInference(const WelchComparison& w) {
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.p_value, 1);
  EXPECT_EQ(w.t_statistic, 0);
  EXPECT_EQ(w.degrees_of_freedom, 0);
  EXPECT_EQ(w.interval.lower, -kInf);
  EXPECT_EQ(w.interval.upper, kInf);
}

TEST(WelchTest, TooFewSamples) {
  const ArmSummary one = SummaryOf({0.4});
  const ArmSummary two = SummaryOf({0.4, 0.6});
  const WelchComparison w = CompareWelch(one, two, 0.95);
  EXPECT_EQ(w.status, ComparisonStatus::kTooFewSamples);
  ExpectNoInference(w);
  EXPECT_EQ(w.standard_error, kInf);
  // The means are known, so the difference is still reported.
  EXPECT_DOUBLE_EQ(w.difference, 0.1);
  EXPECT_DOUBLE_EQ(w.relative_difference, 0.25);

  const WelchComparison empty = CompareWelch(ArmSummary{}, two, 0.95);
  EXPECT_EQ(empty.status, ComparisonStatus::kTooFewSamples);
  ExpectNoInference(empty);
  EXPECT_EQ(empty.difference, 0);
  EXPECT_FALSE(empty.has_relative_difference);
  EXPECT_TRUE(std::isnan(empty.relative_difference));
}

TEST(WelchTest, ZeroVarianceInBothArms) {
  const ArmSummary zeros = SummaryOf({0, 0, 0});
  const ArmSummary ones = SummaryOf({1, 1});
  const WelchComparison w = CompareWelch(zeros, ones, 0.95);
  EXPECT_EQ(w.status, ComparisonStatus::kZeroVariance);
  ExpectNoInference(w);
  EXPECT_EQ(w.standard_error, 0);
  EXPECT_EQ(w.difference, 1);
  EXPECT_FALSE(w.has_relative_difference);  // Baseline mean 0.
  EXPECT_TRUE(std::isnan(w.relative_difference));

  const WelchComparison same = CompareWelch(ones, ones, 0.95);
  EXPECT_EQ(same.status, ComparisonStatus::kZeroVariance);
  EXPECT_EQ(same.difference, 0);
  EXPECT_EQ(same.relative_difference, 0);
}

TEST(WelchTest, ZeroBaselineMeanHasNoRelativeDifference) {
  const WelchComparison w =
      CompareWelch(SummaryOf({-1, 1, 0}), SummaryOf({0.5, 1, 1.5}), 0.95);
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w.has_relative_difference);
  EXPECT_TRUE(std::isnan(w.relative_difference));
  EXPECT_DOUBLE_EQ(w.difference, 1);
}

TEST(WelchTest, InvalidInputs) {
  const ArmSummary good = SummaryOf({0.2, 0.4, 0.9});
  for (const ArmSummary& bad :
       {ArmSummary{-1, 0.5, 0.1}, ArmSummary{5, std::nan(""), 0.1},
        ArmSummary{5, 0.5, -0.1}, ArmSummary{5, 0.5, kInf},
        ArmSummary{5, kInf, 0.1}}) {
    const WelchComparison w = CompareWelch(bad, good, 0.95);
    EXPECT_EQ(w.status, ComparisonStatus::kInvalidInput);
    ExpectNoInference(w);
    EXPECT_EQ(w.difference, 0);
    EXPECT_EQ(CompareWelch(good, bad, 0.95).status,
              ComparisonStatus::kInvalidInput);
  }
  for (double level : {0.0, 1.0, -0.5, 95.0, std::nan("")}) {
    EXPECT_EQ(CompareWelch(good, good, level).status,
              ComparisonStatus::kInvalidInput)
        << "level " << level;
  }
  // Finite means whose difference overflows.
  const WelchComparison overflow =
      CompareWelch({3, -1e308, 1}, {3, 1e308, 1}, 0.95);
  EXPECT_EQ(overflow.status, ComparisonStatus::kInvalidInput);
  ExpectNoInference(overflow);
  EXPECT_EQ(overflow.difference, 0);
}

TEST(WelchTest, StatusNames) {
  EXPECT_EQ(ComparisonStatusName(ComparisonStatus::kOk), "ok");
  EXPECT_EQ(ComparisonStatusName(ComparisonStatus::kZeroVariance),
            "zero_variance");
  EXPECT_EQ(ComparisonStatusName(ComparisonStatus::kCountDecreased),
            "count_decreased");
}

// ---------------------------------------------------------------------------
// mSPRT formulas. Reference Lambdas come from integrating the mixture
// directly, not from the closed form: with SciPy 1.10.1,
//   scipy.integrate.quad(lambda th: exp((2*d*th - th*th)/(2*V)
//                        - th*th/(2*tau*tau)) / (tau*sqrt(2*pi)), lo, hi,
//                        epsrel=1e-13, points=[0, d*tau^2/(V+tau^2)])
// i.e. the integral over theta ~ N(0, tau^2) of N(d; theta, V) / N(d; 0, V),
// over [lo, hi] covering the integrand's mass by more than 12 standard
// deviations on each side.

TEST(MsprtTest, LikelihoodRatioMatchesNumericalMixture) {
  struct Case {
    double d;
    double variance;
    double tau;
    double lambda;
  };
  for (const Case& c : {Case{0.02, 1e-4, 0.05, 1.3418223517825936},
                        Case{0.0, 1e-4, 0.05, 0.1961161351381841},
                        Case{-0.01, 4e-6, 0.05, 10512.883282755793},
                        Case{0.3, 0.01, 0.1, 6.708842347995734},
                        Case{0.005, 1e-6, 0.01, 23592.340077512898}}) {
    EXPECT_TRUE(RelativelyNear(MsprtLogLikelihoodRatio(c.d, c.variance, c.tau),
                               std::log(c.lambda), 1e-13))
        << "d = " << c.d;
    EXPECT_TRUE(RelativelyNear(MsprtPValue(c.d, c.variance, c.tau),
                               std::min(1.0, 1 / c.lambda), 1e-13))
        << "d = " << c.d;
  }
  // By hand: at d = 0, Lambda = sqrt(V / (V + tau^2)) < 1, so p = 1.
  EXPECT_DOUBLE_EQ(MsprtLogLikelihoodRatio(0, 1e-4, 0.05),
                   0.5 * std::log(1e-4 / (1e-4 + 0.0025)));
  EXPECT_EQ(MsprtPValue(0, 1e-4, 0.05), 1);
}

TEST(MsprtTest, HalfWidthMatchesNumericalInversion) {
  // scipy.optimize.brentq(lambda h: log(Lambda_quad(h, V, tau)) -
  // log(1 / alpha), 0, 10 * sqrt(V * (1 + V / tau^2)), xtol=1e-16,
  // rtol=1e-14), with Lambda_quad the integral above.
  struct Case {
    double variance;
    double tau;
    double level;
    double half_width;
  };
  for (const Case& c : {Case{1e-4, 0.05, 0.95, 0.031015388968276117},
                        Case{4e-6, 0.05, 0.95, 0.007057111086578477},
                        Case{0.01, 0.1, 0.9, 0.32552472614374584},
                        Case{1e-6, 0.01, 0.99, 0.0037368055204553548}}) {
    EXPECT_TRUE(RelativelyNear(MsprtHalfWidth(c.variance, c.tau, c.level),
                               c.half_width, 1e-13))
        << "V = " << c.variance;
  }
}

TEST(MsprtTest, BoundaryIsWhereLambdaReachesOneOverAlpha) {
  for (double variance : {1e-9, 3e-6, 1e-4, 0.02, 1.0}) {
    for (double tau : {0.005, 0.05, 0.5}) {
      for (double level : {0.8, 0.9, 0.95, 0.99, 0.999}) {
        const double h = MsprtHalfWidth(variance, tau, level);
        const double log_inverse_alpha = -std::log(1 - level);
        EXPECT_TRUE(RelativelyNear(MsprtLogLikelihoodRatio(h, variance, tau),
                                   log_inverse_alpha, 1e-12));
        EXPECT_TRUE(RelativelyNear(MsprtLogLikelihoodRatio(-h, variance, tau),
                                   log_inverse_alpha, 1e-12));
        // And the p-value crosses 1 - level there.
        EXPECT_GT(MsprtPValue(h * (1 - 1e-9), variance, tau), 1 - level);
        EXPECT_LT(MsprtPValue(h * (1 + 1e-9), variance, tau), 1 - level);
      }
    }
  }
}

TEST(MsprtTest, FormulasRejectBadParameters) {
  EXPECT_TRUE(std::isnan(MsprtLogLikelihoodRatio(0.1, 0, 0.05)));
  EXPECT_TRUE(std::isnan(MsprtLogLikelihoodRatio(0.1, 1e-4, 0)));
  EXPECT_TRUE(std::isnan(MsprtPValue(0.1, -1, 0.05)));
  EXPECT_TRUE(std::isnan(MsprtHalfWidth(1e-4, 0.05, 1.0)));
  EXPECT_TRUE(std::isnan(MsprtHalfWidth(1e-4, -0.05, 0.95)));
}

TEST(MsprtTest, SequentialIntervalIsWiderThanWelchsAtOneLook) {
  // The price of validity at every look: at any single look the sequence is
  // wider than the fixed-sample interval.
  const ArmSummary baseline = {5000, 0.31, 0.21};
  const ArmSummary treatment = {5000, 0.32, 0.22};
  const WelchComparison w = CompareWelch(baseline, treatment, 0.95);
  const SequentialLook s = CompareSequential(baseline, treatment, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(s.ok());
  EXPECT_LT(s.interval.lower, w.interval.lower);
  EXPECT_GT(s.interval.upper, w.interval.upper);
  EXPECT_GT(s.p_value, w.p_value);
}

TEST(MsprtTest, LookFromSummariesMatchesNumericalMixture) {
  // The samples of WelchTest.SmallSamplesMatchScipy: d = 0.11333333333333317,
  // V = se^2 = 0.002003174603174604. Lambda and the half-width from the
  // quad / brentq computations above, with tau = 0.05 and level 0.95:
  // Lambda 3.9544562307885833, half-width 0.1566576428981869.
  const ArmSummary baseline =
      SummaryOf({0.62, 0.71, 0.55, 0.80, 0.68, 0.59, 0.74});
  const ArmSummary treatment =
      SummaryOf({0.78, 0.66, 0.83, 0.91, 0.70, 0.88, 0.75, 0.69, 0.85});
  const SequentialLook look = CompareSequential(baseline, treatment, {});
  ASSERT_TRUE(look.ok());
  EXPECT_TRUE(RelativelyNear(look.variance, 0.002003174603174604, 1e-13));
  EXPECT_TRUE(RelativelyNear(look.p_value, 1 / 3.9544562307885833, 1e-12));
  EXPECT_NEAR(look.interval.lower, -0.043324309564853725, 1e-13);
  EXPECT_NEAR(look.interval.upper, 0.2699909762315201, 1e-13);
  // Welch rejects at 0.05 on these samples (p = 0.0249); one look of the
  // always-valid test does not.
  EXPECT_TRUE(look.interval.Contains(0));
}

// Issue 42, worked by hand: 2 lists per arm, A {0.50, 0.52}, B {0.60,
// 0.61}. d = 0.095, V = 0.0002 / 2 + 0.00005 / 2 = 1.25e-4, Welch df =
// 1.4706. The mixture alone (tau 0.05) would claim [0.06056, 0.12944] and
// p = 5.4e-15 on four numbers; the same look's Welch t interval is
// [0.025815, 0.164185], p = 0.031656 (SciPy 1.17:
// scipy.stats.ttest_ind(B, A, equal_var=False).confidence_interval(0.95)
// and .pvalue). The look never claims more than Welch.
TEST(MsprtTest, AtTwoListsPerArmTheTIntervalGoverns) {
  const ArmSummary baseline = SummaryOf({0.50, 0.52});
  const ArmSummary treatment = SummaryOf({0.60, 0.61});
  const SequentialLook look = CompareSequential(baseline, treatment, {});
  ASSERT_TRUE(look.ok());
  EXPECT_NEAR(look.interval.lower, 0.02581477169928928, 1e-9);
  EXPECT_NEAR(look.interval.upper, 0.16418522830071067, 1e-9);
  EXPECT_NEAR(look.p_value, 0.0316555633109467, 1e-9);
  // The mixture's own half-width, for the record: sqrt(V (V + tau^2) /
  // tau^2 (ln((V + tau^2) / V) + 2 ln 20)) = 0.0344380 (Python, math).
  EXPECT_NEAR(MsprtHalfWidth(look.variance, kDefaultMixingStddev, 0.95),
              0.0344379629443892, 1e-12);
}

// 8 lists per arm: A {0.4, 0.5, 0.3, 0.6, 0.45, 0.35, 0.55, 0.5}, B {0.6,
// 0.7, 0.5, 0.9, 0.65, 0.8, 0.55, 0.75}: d = 0.225, V = 0.003515625, Welch
// [0.096976, 0.353024], p = 0.0022094 (SciPy as above); the mixture's
// half-width 0.2350076 is the wider, so the look is the mixture's:
// [-0.0100076, 0.4600076], p = 0.0656356 (min(1, 1 / Lambda), Python).
TEST(MsprtTest, AtEightListsPerArmTheMixtureGoverns) {
  const ArmSummary baseline =
      SummaryOf({0.4, 0.5, 0.3, 0.6, 0.45, 0.35, 0.55, 0.5});
  const ArmSummary treatment =
      SummaryOf({0.6, 0.7, 0.5, 0.9, 0.65, 0.8, 0.55, 0.75});
  const SequentialLook look = CompareSequential(baseline, treatment, {});
  ASSERT_TRUE(look.ok());
  EXPECT_NEAR(look.interval.lower, -0.010007609352566393, 1e-9);
  EXPECT_NEAR(look.interval.upper, 0.46000760935256624, 1e-9);
  EXPECT_NEAR(look.p_value, 0.06563564733236098, 1e-9);
  const WelchComparison w = CompareWelch(baseline, treatment, 0.95);
  EXPECT_NEAR(w.interval.lower, 0.09697613354959306, 1e-9);
  EXPECT_NEAR(w.p_value, 0.0022093717852398782, 1e-9);
}

TEST(MsprtTest, LookStatuses) {
  const ArmSummary good = SummaryOf({0.2, 0.4, 0.9});
  EXPECT_EQ(CompareSequential(SummaryOf({0.3}), good, {}).status,
            ComparisonStatus::kTooFewSamples);
  EXPECT_EQ(CompareSequential(SummaryOf({1, 1}), SummaryOf({0, 0}), {}).status,
            ComparisonStatus::kZeroVariance);
  SequentialOptions options;
  options.min_count = 4;
  const SequentialLook early = CompareSequential(good, good, options);
  EXPECT_EQ(early.status, ComparisonStatus::kTooFewSamples);
  EXPECT_EQ(early.p_value, 1);
  EXPECT_EQ(early.interval.lower, -kInf);
  EXPECT_EQ(early.interval.upper, kInf);
  options = {};
  options.mixing_stddev = 0;
  EXPECT_EQ(CompareSequential(good, good, options).status,
            ComparisonStatus::kInvalidInput);
  options = {};
  options.level = 1;
  EXPECT_EQ(CompareSequential(good, good, options).status,
            ComparisonStatus::kInvalidInput);
  EXPECT_EQ(CompareSequential(ArmSummary{3, 0.5, -1}, good, {}).status,
            ComparisonStatus::kInvalidInput);
}

// ---------------------------------------------------------------------------
// SequentialTest state.

TEST(SequentialTestTest, KeepsRunningMinimumAndIntersection) {
  SequentialTest test;
  EXPECT_EQ(test.p_value(), 1);
  EXPECT_EQ(test.interval().lower, -kInf);
  EXPECT_EQ(test.looks(), 0);

  // Look 1: a large observed difference; look 2: more data, a smaller one.
  const ArmSummary b1 = {1000, 0.30, 0.21};
  const ArmSummary t1 = {1000, 0.36, 0.23};
  const ArmSummary b2 = {4000, 0.30, 0.21};
  const ArmSummary t2 = {4000, 0.31, 0.215};
  const SequentialLook l1 = test.Update(b1, t1);
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(test.p_value(), l1.p_value);
  EXPECT_EQ(test.interval().lower, l1.interval.lower);
  EXPECT_EQ(test.interval().upper, l1.interval.upper);
  const SequentialLook l2 = test.Update(b2, t2);
  ASSERT_TRUE(l2.ok());
  EXPECT_GT(l2.p_value, l1.p_value);
  EXPECT_EQ(test.p_value(), l1.p_value);  // The minimum stays.
  EXPECT_EQ(test.interval().lower,
            std::max(l1.interval.lower, l2.interval.lower));
  EXPECT_EQ(test.interval().upper,
            std::min(l1.interval.upper, l2.interval.upper));
  EXPECT_EQ(test.looks(), 2);
  EXPECT_FALSE(test.contradicted());
  // Running p <= alpha exactly when the running interval excludes 0.
  EXPECT_EQ(test.rejected(), !test.interval().Contains(0));
  EXPECT_EQ(l1.p_value <= 0.05, !l1.interval.Contains(0));
}

TEST(SequentialTestTest, SkipsDegenerateLooksAndRefusesShrinkingCounts) {
  SequentialTest test;
  EXPECT_EQ(test.Update({1, 0.3, 0}, {1, 0.4, 0}).status,
            ComparisonStatus::kTooFewSamples);
  EXPECT_EQ(test.Update({5, 0, 0}, {5, 0, 0}).status,
            ComparisonStatus::kZeroVariance);
  EXPECT_EQ(test.looks(), 0);
  ASSERT_TRUE(test.Update({100, 0.3, 0.21}, {100, 0.35, 0.22}).ok());
  const double p = test.p_value();
  const ConfidenceInterval interval = test.interval();
  EXPECT_EQ(test.Update({99, 0.3, 0.21}, {120, 0.35, 0.22}).status,
            ComparisonStatus::kCountDecreased);
  EXPECT_EQ(test.Update({-5, 0.3, 0.21}, {120, 0.35, 0.22}).status,
            ComparisonStatus::kCountDecreased);
  EXPECT_EQ(test.Update({120, 0.3, -1}, {120, 0.35, 0.22}).status,
            ComparisonStatus::kInvalidInput);
  EXPECT_EQ(test.looks(), 1);
  EXPECT_EQ(test.p_value(), p);
  EXPECT_EQ(test.interval().lower, interval.lower);

  test.Reset();
  EXPECT_EQ(test.looks(), 0);
  EXPECT_EQ(test.p_value(), 1);
  EXPECT_TRUE(test.Update({10, 0.3, 0.21}, {10, 0.35, 0.22}).ok());
}

TEST(SequentialTestTest, DisjointLooksMarkTheSequenceContradicted) {
  // An effect that flips sign between looks (a novelty effect, a changed
  // treatment) can leave no value inside every look's interval.
  SequentialTest test;
  ASSERT_TRUE(test.Update({20000, 0.30, 0.01}, {20000, 0.40, 0.01}).ok());
  EXPECT_TRUE(test.rejected());
  EXPECT_FALSE(test.contradicted());
  const SequentialLook flipped =
      test.Update({80000, 0.30, 0.01}, {80000, 0.20, 0.01});
  ASSERT_TRUE(flipped.ok());
  EXPECT_TRUE(test.contradicted());
  EXPECT_EQ(test.interval().lower, flipped.interval.lower);
  EXPECT_EQ(test.interval().upper, flipped.interval.upper);
  EXPECT_TRUE(test.rejected());
}

// Issue 42: an effect that changes. Look 1: d = +0.05 at V = 2e-5, the
// interval 0.05 +- 0.0147746 (half-width sqrt(V (V + tau^2) / tau^2
// (ln((V + tau^2) / V) + 2 ln 20)), Python). Look 2: the cumulative
// estimate is 0, outside [0.035, 0.065]: a change, and the sequence
// restarts from look 2 (whose interval holds 0). Look 3: 0 again, inside:
// the intersection resumes.
TEST(SequentialTestTest, AnEstimateLeavingTheIntervalIsAChange) {
  SequentialTest test;
  const SequentialLook l1 = test.Update({1000, 0.30, 0.01}, {1000, 0.35, 0.01});
  ASSERT_TRUE(l1.ok());
  EXPECT_NEAR(l1.interval.lower, 0.05 - 0.014774551381136373, 1e-12);
  EXPECT_EQ(test.changes(), 0);
  const SequentialLook l2 = test.Update({2000, 0.30, 0.01}, {2000, 0.30, 0.01});
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(test.changes(), 1);
  EXPECT_EQ(test.changed_look(), 2);
  EXPECT_TRUE(test.contradicted());
  EXPECT_EQ(test.interval().lower, l2.interval.lower);
  EXPECT_EQ(test.interval().upper, l2.interval.upper);
  EXPECT_TRUE(test.interval().Contains(l2.difference));
  EXPECT_EQ(test.p_value(), l2.p_value);  // Restarted: 1 here.
  EXPECT_FALSE(test.rejected());
  const SequentialLook l3 = test.Update({3000, 0.30, 0.01}, {3000, 0.30, 0.01});
  ASSERT_TRUE(l3.ok());
  EXPECT_EQ(test.changes(), 1);
  EXPECT_EQ(test.interval().lower,
            std::max(l2.interval.lower, l3.interval.lower));
}

// ---------------------------------------------------------------------------
// Verdicts (hand-made intervals; the rule is the sign of the interval).

TEST(VerdictTest, SignOfTheIntervalByDirection) {
  struct Case {
    ConfidenceInterval interval;
    int higher_is_better;
    int lower_is_better;
  };
  for (const Case& c : {
           Case{{0.01, 0.05}, 1, -1},    // Entirely above 0.
           Case{{-0.05, -0.01}, -1, 1},  // Entirely below 0.
           Case{{-0.01, 0.05}, 0, 0},    // Contains 0.
           Case{{0, 0.05}, 0, 0},        // Touches 0: closed interval.
           Case{{-0.05, 0}, 0, 0}, Case{{0, 0}, 0, 0},
           Case{{1e-300, 1e-300}, 1, -1},  // A point interval off 0.
           Case{{0.01, kInf}, 1, -1},      // Finite on the deciding side.
           Case{{-kInf, -0.01}, -1, 1},
           Case{{-kInf, kInf}, 0, 0},  // No information.
           Case{{kInf, kInf}, 0, 0},   // Not finite on the deciding side.
           Case{{-kInf, -kInf}, 0, 0}, Case{{std::nan(""), 0.05}, 0, 0},
           Case{{0.01, std::nan("")}, 0, 0},
           Case{{0.05, 0.01}, 0, 0},  // Inverted: no evidence.
       }) {
    EXPECT_EQ(Verdict(c.interval, Direction::kHigherIsBetter),
              c.higher_is_better)
        << c.interval.lower << " " << c.interval.upper;
    EXPECT_EQ(Verdict(c.interval, Direction::kLowerIsBetter), c.lower_is_better)
        << c.interval.lower << " " << c.interval.upper;
  }
}

TEST(VerdictTest, ReadsTheSequentialInterval) {
  // The looks of DisjointLooksMarkTheSequenceContradicted: the first says
  // better (0.40 against 0.30 with tiny variance), and once contradicted
  // the interval is the latest look's alone, which says worse.
  SequentialTest test;
  ASSERT_TRUE(test.Update({20000, 0.30, 0.01}, {20000, 0.40, 0.01}).ok());
  EXPECT_EQ(Verdict(test.interval(), Direction::kHigherIsBetter), 1);
  ASSERT_TRUE(test.Update({80000, 0.30, 0.01}, {80000, 0.20, 0.01}).ok());
  ASSERT_TRUE(test.contradicted());
  EXPECT_EQ(Verdict(test.interval(), Direction::kHigherIsBetter), -1);
  // Before any look: (-inf, +inf), inconclusive.
  EXPECT_EQ(Verdict(SequentialTest().interval(), Direction::kHigherIsBetter),
            0);
}

}  // namespace
}  // namespace rankwatch::metrics
