#include "metrics/srm.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

// Where the expected figures come from: computed once offline with SciPy
// 1.10.1 (scipy.stats.chisquare, chi2.sf, chi2.isf / chi2.ppf,
// scipy.special.gammaln) and, as a second reference for the Bayes factor
// and the sequential p-value, Optimizely's ssrm-test 0.1.5 package (by
// Lindon) (pip install ssrm-test), each call named beside its literal.
// Nothing runs Python at test time.

namespace rankwatch::metrics {
namespace {

using Counts = std::vector<int64_t>;
using Shares = std::vector<double>;

// ---------------------------------------------------------------------------
// Chi-square.

TEST(SampleRatioChiSquareTest, MatchesScipy) {
  // scipy.stats.chisquare([5050, 4950]) = (1.0, 0.31731050786291115);
  // by hand: E = 5000 each, (50^2 + 50^2) / 5000 = 1.
  SrmChiSquare r = TestSampleRatio(Counts{5050, 4950}, Shares{0.5, 0.5});
  EXPECT_EQ(r.status, SrmStatus::kOk);
  EXPECT_EQ(r.degrees_of_freedom, 1);
  EXPECT_DOUBLE_EQ(r.statistic, 1.0);
  EXPECT_TRUE(RelativelyNear(r.p_value, 0.31731050786291115, 1e-14));

  // scipy.stats.chisquare([1000, 2100, 2900], f_exp=[1200, 1800, 3000]) =
  // (86.66666666666667, 1.515557614400431e-19); by hand 200^2/1200 +
  // 300^2/1800 + 100^2/3000 = 33.33 + 50 + 3.33.
  r = TestSampleRatio(Counts{1000, 2100, 2900}, Shares{0.2, 0.3, 0.5});
  EXPECT_EQ(r.status, SrmStatus::kOk);
  EXPECT_EQ(r.degrees_of_freedom, 2);
  EXPECT_TRUE(RelativelyNear(r.statistic, 86.66666666666667, 1e-14));
  EXPECT_TRUE(RelativelyNear(r.p_value, 1.515557614400431e-19, 1e-12));

  // A 51/49 split of 100,000: scipy.stats.chisquare([51000, 49000]) =
  // (40.0, 2.5396285894708634e-10) = chi2.sf(40, 1).
  r = TestSampleRatio(Counts{51000, 49000}, Shares{0.5, 0.5});
  EXPECT_DOUBLE_EQ(r.statistic, 40.0);
  EXPECT_TRUE(RelativelyNear(r.p_value, 2.5396285894708634e-10, 1e-12));

  // An arm with no traffic at all: scipy.stats.chisquare([50, 30, 20, 0],
  // f_exp=[25, 25, 25, 25]) = (52.0, 2.995080092688494e-11).
  r = TestSampleRatio(Counts{50, 30, 20, 0}, Shares{0.25, 0.25, 0.25, 0.25});
  EXPECT_EQ(r.degrees_of_freedom, 3);
  EXPECT_DOUBLE_EQ(r.statistic, 52.0);
  EXPECT_TRUE(RelativelyNear(r.p_value, 2.995080092688494e-11, 1e-12));
}

TEST(SampleRatioChiSquareTest, NoDataAndInvalidInput) {
  SrmChiSquare r = TestSampleRatio(Counts{0, 0}, Shares{0.5, 0.5});
  EXPECT_EQ(r.status, SrmStatus::kNoData);
  EXPECT_EQ(r.p_value, 1);
  EXPECT_EQ(r.statistic, 0);

  for (const auto& [counts, shares] : std::vector<std::pair<Counts, Shares>>{
           {{10, 20}, {0.5, 0.5, 0.0}},  // Sizes differ.
           {{10}, {1.0}},                // One arm.
           {{}, {}},                     // No arm.
           {{10, -1}, {0.5, 0.5}},       // Negative count.
           {{10, 20}, {0.6, 0.6}},       // Sum 1.2.
           {{10, 20}, {0.5, 0.4999}},    // Sum off by 1e-4.
           {{10, 20}, {1.0, 0.0}},       // A zero share.
           {{10, 20}, {1.5, -0.5}},      // A negative share.
           {{10, 20}, {kNaN, 0.5}},      // NaN.
       }) {
    r = TestSampleRatio(counts, shares);
    EXPECT_EQ(r.status, SrmStatus::kInvalidInput) << counts.size();
    EXPECT_EQ(r.p_value, 1);
    EXPECT_EQ(r.degrees_of_freedom, 0);
    EXPECT_TRUE(std::isnan(SrmLogBayesFactor(counts, shares, 10000)));
  }
  // Shares that sum to 1 within 1e-6 are fine (a normalized split).
  EXPECT_EQ(TestSampleRatio(Counts{10, 20}, Shares{0.5, 0.5000005}).status,
            SrmStatus::kOk);
}

TEST(SampleRatioChiSquareTest, CriticalValuesMatchScipy) {
  // scipy.stats.chi2.ppf(0.999, df) (= chi2.isf(0.001, df)):
  EXPECT_TRUE(
      RelativelyNear(ChiSquareCritical(1, 0.001), 10.827566170662733, 1e-14));
  // df = 2 is exponential with mean 2: -2 ln(0.001) = 13.815510557964274.
  EXPECT_TRUE(
      RelativelyNear(ChiSquareCritical(2, 0.001), 13.815510557964274, 1e-14));
  EXPECT_TRUE(
      RelativelyNear(ChiSquareCritical(3, 0.001), 16.26623619623813, 1e-14));
  EXPECT_TRUE(
      RelativelyNear(ChiSquareCritical(5, 0.001), 20.515005652432873, 1e-14));
  // scipy.stats.chi2.isf(0.05, 1) = 3.8414588206941285 (1.96^2).
  EXPECT_TRUE(
      RelativelyNear(ChiSquareCritical(1, 0.05), 3.8414588206941285, 1e-14));

  EXPECT_TRUE(std::isnan(ChiSquareCritical(0, 0.001)));
  EXPECT_TRUE(std::isnan(ChiSquareCritical(1, 0)));
  EXPECT_TRUE(std::isnan(ChiSquareCritical(1, 1)));
  EXPECT_TRUE(std::isnan(ChiSquareCritical(1, kNaN)));
}

// ---------------------------------------------------------------------------
// Bayes factor.

TEST(SrmBayesFactorTest, MatchesGammalnAndSsrmTest) {
  // First reference, with a = concentration * shares, n the counts:
  //   gammaln(a.sum()) - gammaln(a.sum() + n.sum())
  //   + sum(gammaln(a + n) - gammaln(a) - n * log(shares))
  // (scipy.special.gammaln). Second reference:
  //   log(ssrm_test.sequential_bayes_factors(np.array([n]), shares,
  //       dirichlet_concentration=c)[-1]),
  // which agrees with the first to 2e-11 or better (it sums per-look
  // logs, so the last digits differ); hence the 1e-9 tolerance.
  struct Case {
    Counts counts;
    Shares shares;
    double concentration;
    double expected;  // gammaln form.
    double ssrm;      // ssrm-test.
  };
  const std::vector<Case> cases = {
      {{5050, 4950},
       {0.5, 0.5},
       10000,
       -0.09657254803460091,
       -0.09657254802004901},
      {{51000, 49000}, {0.5, 0.5}, 10000, 16.98401502147317, 16.98401502147317},
      {{1000, 2100, 2900},
       {0.2, 0.3, 0.5},
       10000,
       15.735842808499001,
       15.735842808491725},
      {{10, 0}, {0.5, 0.5}, 10000, 0.004495729730578546, 0.004495729737849283},
      {{500500, 499500},
       {0.5, 0.5},
       10000,
       -1.8125349339097738,
       -1.8125349339097738},
      // By hand too: a = {0.5, 1.5}, n = {3, 1}, A = 2:
      //   lgamma(2) - lgamma(6) + lgamma(3.5) - lgamma(0.5) + lgamma(2.5)
      //   - lgamma(1.5) - 3 log(1/4) - log(3/4)
      //   = log(1/120 * (15/8) * (3/2) * 64 * (4/3)) = log 2.
      {{3, 1}, {0.25, 0.75}, 2.0, 0.6931471805599454, 0.6931471805599457},
  };
  for (const Case& c : cases) {
    const double log_bf =
        SrmLogBayesFactor(c.counts, c.shares, c.concentration);
    EXPECT_NEAR(log_bf, c.expected, 1e-9) << c.counts[0];
    EXPECT_NEAR(log_bf, c.ssrm, 1e-9) << c.counts[0];
  }
  EXPECT_EQ(SrmLogBayesFactor(Counts{0, 0}, Shares{0.5, 0.5}, 10000), 0);
  EXPECT_TRUE(std::isnan(SrmLogBayesFactor(Counts{1, 2}, Shares{0.5, 0.5}, 0)));
  EXPECT_TRUE(
      std::isnan(SrmLogBayesFactor(Counts{1, 2}, Shares{0.5, 0.5}, kNaN)));
}

// ---------------------------------------------------------------------------
// Sequential test.

TEST(SequentialSrmTestTest, RunningMinimumMatchesSsrmTest) {
  // Cumulative counts at five looks; ssrm_test.sequential_p_values(
  //   numpy.diff([[0, 0]] + cumulative, axis=0), [0.5, 0.5],
  //   dirichlet_concentration=10000) gives
  //   [1.0, 0.9845856389907347, 0.5202319125344177, 8.122290324125678e-15,
  //    8.122290324125678e-15];
  // exp(-max(0, log BF)) of each look's totals by the gammaln form gives
  //   [1.0, 0.9845856390009208, 0.5202319125360146, 8.12229032509617e-15,
  //    4.206646281353424e-08]:
  // the last look alone is less extreme, the running minimum keeps 8e-15.
  SequentialSrmTest test({0.5, 0.5});
  EXPECT_EQ(test.p_value(), 1);
  const std::vector<Counts> looks = {
      {100, 90}, {1000, 950}, {5100, 4900}, {26000, 24000}, {51000, 49000}};
  const std::vector<double> expected = {
      1.0, 0.9845856389907347, 0.5202319125344177, 8.122290324125678e-15,
      8.122290324125678e-15};
  for (size_t i = 0; i < looks.size(); ++i) {
    ASSERT_EQ(test.Update(looks[i]), SrmStatus::kOk) << i;
    EXPECT_TRUE(RelativelyNear(test.p_value(), expected[i], 1e-8)) << i;
    EXPECT_EQ(test.looks(), static_cast<int64_t>(i) + 1);
  }
  EXPECT_LT(test.p_value(), kDefaultSrmLevel);

  test.Reset();
  EXPECT_EQ(test.p_value(), 1);
  EXPECT_EQ(test.looks(), 0);
  // After Reset, smaller counts are a new experiment, not a decrease.
  EXPECT_EQ(test.Update(Counts{100, 90}), SrmStatus::kOk);
}

TEST(SequentialSrmTestTest, ThreeArmsMatchSsrmTest) {
  // ssrm_test.sequential_p_values(numpy.diff([[0, 0, 0], [200, 310, 480],
  //   [2000, 3100, 4900], [20000, 30500, 49500]], axis=0),
  //   [0.2, 0.3, 0.5], dirichlet_concentration=10000)
  //   = [1.0, 0.5304703268975861, 0.02605309225523836]
  // (gammaln form: 1.0, 0.5304703268999984, 0.026053092249290876).
  SequentialSrmTest test({0.2, 0.3, 0.5});
  EXPECT_EQ(test.Update(Counts{200, 310, 480}), SrmStatus::kOk);
  EXPECT_EQ(test.p_value(), 1.0);
  EXPECT_EQ(test.Update(Counts{2000, 3100, 4900}), SrmStatus::kOk);
  EXPECT_TRUE(RelativelyNear(test.p_value(), 0.5304703268975861, 1e-9));
  EXPECT_EQ(test.Update(Counts{20000, 30500, 49500}), SrmStatus::kOk);
  EXPECT_TRUE(RelativelyNear(test.p_value(), 0.02605309225523836, 1e-9));
}

TEST(SequentialSrmTestTest, RefusesDecreasingCountsAndInvalidInput) {
  SequentialSrmTest test({0.5, 0.5});
  EXPECT_EQ(test.Update(Counts{0, 0}), SrmStatus::kNoData);
  EXPECT_EQ(test.looks(), 0);
  ASSERT_EQ(test.Update(Counts{26000, 24000}), SrmStatus::kOk);
  const double p = test.p_value();
  // One arm went down: not cumulative.
  EXPECT_EQ(test.Update(Counts{26001, 23999}), SrmStatus::kInvalidInput);
  EXPECT_EQ(test.Update(Counts{-1, 30000}), SrmStatus::kInvalidInput);
  EXPECT_EQ(test.Update(Counts{30000}), SrmStatus::kInvalidInput);
  EXPECT_EQ(test.looks(), 1);
  EXPECT_EQ(test.p_value(), p);
  // Equal counts are a look without new data: allowed.
  EXPECT_EQ(test.Update(Counts{26000, 24000}), SrmStatus::kOk);
  EXPECT_EQ(test.p_value(), p);

  SequentialSrmTest bad_shares({0.6, 0.6});
  EXPECT_EQ(bad_shares.Update(Counts{10, 10}), SrmStatus::kInvalidInput);
  SequentialSrmTest nan_share({kNaN, 0.5});
  EXPECT_EQ(nan_share.Update(Counts{10, 10}), SrmStatus::kInvalidInput);
  SequentialSrmTest bad_concentration({0.5, 0.5}, -1);
  EXPECT_EQ(bad_concentration.Update(Counts{10, 10}), SrmStatus::kInvalidInput);
  EXPECT_EQ(bad_concentration.p_value(), 1);
}

}  // namespace
}  // namespace rankwatch::metrics
