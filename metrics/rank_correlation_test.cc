#include "metrics/rank_correlation.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

// Expected values: SciPy 1.10.1 in /tmp/venv-stats, run for this test:
//   k = scipy.stats.kendalltau(x, y)   (variant='b', method='auto')
//   s = scipy.stats.spearmanr(x, y)
// the figures written beside each case (script /tmp/cmp/ref2.py of the
// session that wrote them). Nothing runs Python at test time.

namespace rankwatch::metrics {
namespace {

struct Expected {
  double kendall_tau;
  double kendall_p;
  double spearman_rho;
  double spearman_p;
};

void ExpectBoth(const std::vector<double>& x, const std::vector<double>& y,
                const Expected& e) {
  const std::optional<RankCorrelation> k = KendallTauB(x, y);
  const std::optional<RankCorrelation> s = SpearmanRho(x, y);
  ASSERT_TRUE(k.has_value());
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(k->coefficient, e.kendall_tau, 1e-14);
  EXPECT_TRUE(RelativelyNear(k->p_value, e.kendall_p, 1e-10));
  EXPECT_NEAR(s->coefficient, e.spearman_rho, 1e-14);
  EXPECT_TRUE(RelativelyNear(s->p_value, e.spearman_p, 1e-10));
}

TEST(RankCorrelationTest, NoTiesSmallIsExact) {
  // kendalltau: 0.6888888888888888, p 0.00468694885361552 (exact);
  // spearmanr: 0.8666666666666665, p 0.0011735381801554687.
  ExpectBoth({0.31, 0.12, 0.58, 0.44, 0.97, 0.25, 0.66, 0.83, 0.05, 0.71},
             {0.28, 0.20, 0.49, 0.61, 0.88, 0.15, 0.52, 0.91, 0.11, 0.40},
             {0.6888888888888888, 0.00468694885361552, 0.8666666666666665,
              0.0011735381801554687});
  // n = 3, one discordant pair of three: kendalltau 0.33333333333333337,
  // p 1.0; spearmanr 0.5, p 0.6666666666666667.
  ExpectBoth({1, 2, 3}, {1, 3, 2},
             {0.33333333333333337, 1.0, 0.5, 0.6666666666666667});
  // n = 4 with c = 3 = n (n - 1) / 4 (the centre): p = 1 for both;
  // kendalltau 0.0, 1.0; spearmanr 0.0, 1.0.
  ExpectBoth({1, 2, 3, 4}, {2, 4, 1, 3}, {0.0, 1.0, 0.0, 1.0});
}

TEST(RankCorrelationTest, TiesUseTheNormalApproximation) {
  // kendalltau(xt12, yt12): 0.889685262381366, p 0.0002366793228820184;
  // spearmanr: 0.9475304231707936, p 2.866986336824614e-06.
  ExpectBoth({3, 1, 2, 2, 3, 0, 1, 3, 2, 0, 1, 2},
             {0.9, 0.2, 0.5, 0.5, 0.7, 0.1, 0.4, 0.9, 0.3, 0.1, 0.2, 0.6},
             {0.889685262381366, 0.0002366793228820184, 0.9475304231707936,
              2.866986336824614e-06});
  // Joint ties: kendalltau([1, 1, 2, 2, 3], [1, 1, 2, 3, 3]) =
  // 0.8749999999999999, p 0.05280751141611358; spearmanr
  // 0.9166666666666666, p 0.02851395829882784.
  ExpectBoth({1, 1, 2, 2, 3}, {1, 1, 2, 3, 3},
             {0.8749999999999999, 0.05280751141611358, 0.9166666666666666,
              0.02851395829882784});
}

TEST(RankCorrelationTest, LargerThan33WithoutTiesIsAsymptotic) {
  // x40 = np.round(rng.uniform(0, 1, 40), 4), y40 = np.round(x40 * 0.5 +
  // rng.uniform(0, 0.5, 40), 4), rng = np.random.default_rng(11):
  // kendalltau 0.45384615384615384, p 3.715954983885472e-05 (normal
  // approximation, n > 33); spearmanr 0.6328330206378988,
  // p 1.178120703230335e-05.
  const std::vector<double> x40 = {
      0.1286, 0.4993, 0.6015, 0.0287, 0.1479, 0.9282, 0.0704, 0.1298,
      0.9483, 0.6219, 0.369,  0.5114, 0.6628, 0.2753, 0.138,  0.788,
      0.6704, 0.5124, 0.8167, 0.5491, 0.9809, 0.2045, 0.5537, 0.4836,
      0.3533, 0.5916, 0.2353, 0.8022, 0.8673, 0.1288, 0.4671, 0.2771,
      0.0831, 0.8959, 0.4299, 0.1477, 0.6734, 0.2022, 0.9014, 0.2171};
  const std::vector<double> y40 = {
      0.0808, 0.35,   0.4736, 0.2488, 0.527,  0.8128, 0.2049, 0.0733,
      0.5541, 0.8092, 0.4144, 0.6012, 0.3587, 0.1547, 0.4919, 0.6879,
      0.4896, 0.4149, 0.453,  0.3609, 0.5027, 0.5218, 0.51,   0.3054,
      0.5463, 0.3936, 0.1486, 0.7003, 0.8815, 0.0779, 0.6361, 0.2336,
      0.088,  0.4569, 0.3614, 0.4374, 0.5833, 0.5276, 0.5593, 0.2661};
  ExpectBoth(x40, y40,
             {0.45384615384615384, 3.715954983885472e-05, 0.6328330206378988,
              1.178120703230335e-05});
}

TEST(RankCorrelationTest, AtMostOneDiscordantPairIsExactAtAnySize) {
  std::vector<double> x(40);
  std::iota(x.begin(), x.end(), 0.0);
  // kendalltau(range(40), range(40)) = 1.0, p 2.451234878256772e-48
  // (= 2 / 40!); spearmanr 1.0, p 0.0.
  const std::optional<RankCorrelation> k = KendallTauB(x, x);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->coefficient, 1.0);
  EXPECT_TRUE(RelativelyNear(k->p_value, 2.451234878256772e-48, 1e-12));
  const std::optional<RankCorrelation> s = SpearmanRho(x, x);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->coefficient, 1.0);
  EXPECT_EQ(s->p_value, 0.0);
  // One swap: kendalltau 0.9974358974358974, p 9.804939513027087e-47
  // (= 2 / 39!); spearmanr 0.9998123827392121, p 1.0477258152676955e-66.
  std::vector<double> y = x;
  std::swap(y[0], y[1]);
  const std::optional<RankCorrelation> k1 = KendallTauB(x, y);
  ASSERT_TRUE(k1.has_value());
  EXPECT_NEAR(k1->coefficient, 0.9974358974358974, 1e-15);
  EXPECT_TRUE(RelativelyNear(k1->p_value, 9.804939513027087e-47, 1e-12));
  const std::optional<RankCorrelation> s1 = SpearmanRho(x, y);
  ASSERT_TRUE(s1.has_value());
  EXPECT_NEAR(s1->coefficient, 0.9998123827392121, 1e-15);
  // The t statistic is ~ 1e33 here, so the relative error of rho's last
  // bits is amplified; SciPy and rankwatch agree to 1e-6.
  EXPECT_TRUE(RelativelyNear(s1->p_value, 1.0477258152676955e-66, 1e-6));
}

TEST(RankCorrelationTest, ReversedAndTwoPairs) {
  // kendalltau([1..5], [5..1]) = -0.9999999999999999, p
  // 0.016666666666666666 (= 2 / 5!). spearmanr gives -0.9999999999999999
  // and p 1.4042654220543672e-24 from the rounding of np.corrcoef;
  // rankwatch's rho is exactly -1 and its p exactly 0.
  const std::vector<double> up = {1, 2, 3, 4, 5};
  const std::vector<double> down = {5, 4, 3, 2, 1};
  const std::optional<RankCorrelation> k = KendallTauB(up, down);
  ASSERT_TRUE(k.has_value());
  EXPECT_NEAR(k->coefficient, -1, 1e-15);
  EXPECT_NEAR(k->p_value, 0.016666666666666666, 1e-16);
  const std::optional<RankCorrelation> s = SpearmanRho(up, down);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(s->coefficient, -1, 1e-15);
  EXPECT_LT(s->p_value, 1e-20);

  // Two pairs: kendalltau([1, 2], [2, 1]) = -1.0, p 1.0; spearmanr
  // -0.9999999999999999, p nan (no degrees of freedom).
  const std::vector<double> a = {1, 2};
  const std::vector<double> b = {2, 1};
  const std::optional<RankCorrelation> k2 = KendallTauB(a, b);
  ASSERT_TRUE(k2.has_value());
  EXPECT_EQ(k2->coefficient, -1.0);
  EXPECT_EQ(k2->p_value, 1.0);
  const std::optional<RankCorrelation> s2 = SpearmanRho(a, b);
  ASSERT_TRUE(s2.has_value());
  EXPECT_NEAR(s2->coefficient, -1, 1e-15);
  EXPECT_TRUE(std::isnan(s2->p_value));
}

TEST(RankCorrelationTest, InfinityRanksLikeAnyValue) {
  // kendalltau([1, 2, inf, 4], [1, 3, 4, 2]) = 0.6666666666666669, p
  // 0.3333333333333333; spearmanr 0.7999999999999999, p
  // 0.20000000000000007.
  ExpectBoth({1, 2, kInf, 4}, {1, 3, 4, 2},
             {0.6666666666666669, 0.3333333333333333, 0.7999999999999999,
              0.20000000000000007});
}

TEST(RankCorrelationTest, UndefinedCases) {
  // Constant input: SciPy returns nan for both (kendalltau([1, 1, 1],
  // [1, 2, 3]), spearmanr likewise).
  const std::vector<double> constant = {1, 1, 1};
  const std::vector<double> rising = {1, 2, 3};
  EXPECT_FALSE(KendallTauB(constant, rising).has_value());
  EXPECT_FALSE(KendallTauB(rising, constant).has_value());
  EXPECT_FALSE(SpearmanRho(constant, rising).has_value());
  EXPECT_FALSE(SpearmanRho(rising, constant).has_value());
  // Fewer than two pairs, sizes differ, NaN.
  const std::vector<double> one = {1};
  EXPECT_FALSE(KendallTauB(one, one).has_value());
  EXPECT_FALSE(SpearmanRho(one, one).has_value());
  EXPECT_FALSE(KendallTauB({}, {}).has_value());
  const std::vector<double> two = {1, 2};
  EXPECT_FALSE(KendallTauB(two, rising).has_value());
  EXPECT_FALSE(SpearmanRho(two, rising).has_value());
  const std::vector<double> with_nan = {1, kNaN, 3};
  EXPECT_FALSE(KendallTauB(with_nan, rising).has_value());
  EXPECT_FALSE(SpearmanRho(rising, with_nan).has_value());
}

// The coefficient-only functions give the same values with one scratch
// reused across samples that grow and shrink, and its buffers stop growing
// once the largest sample has been seen (no allocation per call). Figures:
// the SciPy values of the cases above.
TEST(RankCorrelationTest, CoefficientsWithReusedScratch) {
  RankCorrelationScratch scratch;
  const std::vector<double> x12 = {3, 1, 2, 2, 3, 0, 1, 3, 2, 0, 1, 2};
  const std::vector<double> y12 = {0.9, 0.2, 0.5, 0.5, 0.7, 0.1,
                                   0.4, 0.9, 0.3, 0.1, 0.2, 0.6};
  const std::vector<double> x3 = {1, 2, 3};
  const std::vector<double> y3 = {1, 3, 2};
  for (int round = 0; round < 2; ++round) {
    // kendalltau 0.889685262381366, spearmanr 0.9475304231707936.
    EXPECT_NEAR(KendallTauBCoefficient(x12, y12, &scratch).value(),
                0.889685262381366, 1e-14);
    EXPECT_NEAR(SpearmanRhoCoefficient(x12, y12, &scratch).value(),
                0.9475304231707936, 1e-14);
    // kendalltau 0.33333333333333337, spearmanr 0.5.
    EXPECT_NEAR(KendallTauBCoefficient(x3, y3, &scratch).value(),
                0.33333333333333337, 1e-14);
    EXPECT_NEAR(SpearmanRhoCoefficient(x3, y3, &scratch).value(), 0.5, 1e-14);
  }
  const size_t capacity = scratch.order.capacity() + scratch.first.capacity() +
                          scratch.second.capacity() + scratch.third.capacity();
  EXPECT_EQ(KendallTauBCoefficient(x12, y12, &scratch),
            KendallTauB(x12, y12)->coefficient);
  EXPECT_EQ(SpearmanRhoCoefficient(x12, y12, &scratch),
            SpearmanRho(x12, y12)->coefficient);
  EXPECT_EQ(scratch.order.capacity() + scratch.first.capacity() +
                scratch.second.capacity() + scratch.third.capacity(),
            capacity);
  // Undefined as KendallTauB and SpearmanRho are.
  const std::vector<double> constant = {1, 1, 1};
  EXPECT_FALSE(KendallTauBCoefficient(constant, x3, &scratch).has_value());
  EXPECT_FALSE(SpearmanRhoCoefficient(x3, constant, &scratch).has_value());
  const std::vector<double> one = {1};
  EXPECT_FALSE(KendallTauBCoefficient(one, one, &scratch).has_value());
  EXPECT_FALSE(SpearmanRhoCoefficient(one, one, &scratch).has_value());
}

// A list's order against its grades, x = -position. SciPy 1.10.1, x =
// [-1, -2, -3, -4, -5, -6]:
//   y = [10000, 0, 5000, 5000, -3, 0] (a grade range past the dense
//   counts): spearmanr 0.6473388749701496, kendalltau 0.501280411827603;
//   y = [4, 0, 2, 2, 1, 0]: spearmanr 0.5296408977028497,
//   kendalltau 0.501280411827603.
TEST(RankCorrelationTest, OrderGradeCorrelationsDenseAndWide) {
  RankCorrelationScratch scratch;
  const std::vector<int32_t> wide = {10000, 0, 5000, 5000, -3, 0};
  const std::vector<int32_t> dense = {4, 0, 2, 2, 1, 0};
  for (int round = 0; round < 2; ++round) {
    const OrderGradeCorrelation w = OrderGradeCorrelations(wide, &scratch);
    EXPECT_NEAR(w.spearman.value(), 0.6473388749701496, 1e-14);
    EXPECT_NEAR(w.kendall_tau.value(), 0.501280411827603, 1e-14);
    const OrderGradeCorrelation d = OrderGradeCorrelations(dense, &scratch);
    EXPECT_NEAR(d.spearman.value(), 0.5296408977028497, 1e-14);
    EXPECT_NEAR(d.kendall_tau.value(), 0.501280411827603, 1e-14);
  }
  const std::vector<int32_t> constant = {2, 2, 2};
  const std::vector<int32_t> one = {2};
  for (const std::vector<int32_t>* g : {&constant, &one}) {
    const OrderGradeCorrelation u = OrderGradeCorrelations(*g, &scratch);
    EXPECT_FALSE(u.spearman.has_value());
    EXPECT_FALSE(u.kendall_tau.has_value());
  }
  EXPECT_FALSE(OrderGradeCorrelations({}, &scratch).spearman.has_value());
}

// The counting path gives the general functions' values bit for bit, on
// random lists with many ties (fixed seed; grades from -2 to 5).
TEST(RankCorrelationTest, OrderGradeCorrelationsMatchTheGeneralFunctions) {
  constexpr uint64_t kSeed = 424242;
  Xoshiro256 rng(kSeed);
  RankCorrelationScratch scratch;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(testing::Message() << "seed " << kSeed << " trial " << trial);
    std::vector<int32_t> grades;
    std::vector<double> x;
    std::vector<double> y;
    for (int64_t n = rng.Between(0, 60); n > 0; --n) {
      grades.push_back(static_cast<int32_t>(rng.Between(-2, 5)));
      x.push_back(-static_cast<double>(grades.size()));
      y.push_back(grades.back());
    }
    const OrderGradeCorrelation c = OrderGradeCorrelations(grades, &scratch);
    const std::optional<RankCorrelation> rho = SpearmanRho(x, y);
    const std::optional<RankCorrelation> tau = KendallTauB(x, y);
    ASSERT_EQ(c.spearman.has_value(), rho.has_value());
    ASSERT_EQ(c.kendall_tau.has_value(), tau.has_value());
    if (rho) {
      EXPECT_EQ(*c.spearman, rho->coefficient);
    }
    if (tau) {
      EXPECT_EQ(*c.kendall_tau, tau->coefficient);
    }
  }
}

// tau_AP by hand (Yilmaz et al. 2008). Reference A > B > C > D (scores 4,
// 3, 2, 1).
// - Estimated B, A, C, D: i=2 (A): B above it, the reference puts B below
//   A: 0/1; i=3 (C): B, A both above in the reference: 2/2; i=4 (D): 3/3.
//   tau_AP = 2/3 (0 + 1 + 1) - 1 = 1/3 (Kendall's tau: 4/6 = 2/3).
// - Estimated A, B, D, C: 1/1, 2/2, then C below A, B (right) and D
//   (wrong): 2/3. tau_AP = 2/3 (1 + 1 + 2/3) - 1 = 7/9: a swap at the
//   bottom costs less than one at the top.
// - The same order: 1; the reverse: 2/3 (0 + 0 + 0) - 1 = -1.
// - A pair the reference ties counts half: reference 2, 2, 1 and estimated
//   B, A, C: i=2: 1/2; i=3: 2/2; tau_AP = (1/2 + 1) - 1 = 1/2.
TEST(TauApTest, HandWorkedRankings) {
  const std::vector<double> ref = {4, 3, 2, 1};  // A, B, C, D.
  EXPECT_NEAR(*TauAp(ref, std::vector<double>{3, 4, 2, 1}), 1.0 / 3, 1e-15);
  EXPECT_NEAR(*TauAp(ref, std::vector<double>{4, 3, 1, 2}), 7.0 / 9, 1e-15);
  EXPECT_NEAR(*TauAp(ref, ref), 1.0, 1e-15);
  EXPECT_NEAR(*TauAp(ref, std::vector<double>{1, 2, 3, 4}), -1.0, 1e-15);
  EXPECT_NEAR(
      *TauAp(std::vector<double>{2, 2, 1}, std::vector<double>{0.5, 0.9, 0.1}),
      0.5, 1e-15);
  // Asymmetric. Estimated B, C, A, D (scores A 2, B 4, C 3, D 1) against
  // A > B > C > D: i=2 (C): B above, right: 1/1; i=3 (A): B, C above, both
  // wrong: 0/2; i=4: 3/3; (1 + 0 + 1) 2/3 - 1 = 1/3. The other way round,
  // A, B, C, D against B > C > A > D: i=2 (B): A above, wrong: 0; i=3 (C):
  // A wrong, B right: 1/2; i=4: 1; (0 + 1/2 + 1) 2/3 - 1 = 0.
  const std::vector<double> bcad = {2, 4, 3, 1};
  EXPECT_NEAR(*TauAp(ref, bcad), 1.0 / 3, 1e-15);
  EXPECT_NEAR(*TauAp(bcad, ref), 0.0, 1e-15);
  EXPECT_FALSE(TauAp(ref, std::vector<double>{1, 2}).has_value());
  EXPECT_FALSE(TauAp(std::vector<double>{1}, std::vector<double>{1}));
  EXPECT_FALSE(TauAp(ref, std::vector<double>{1, 2, NAN, 4}).has_value());
}

// Exact permutation p-values, counted by hand. Three systems in one order:
// of the 3! orderings only the same and the reverse have |tau| = |rho| =
// 1, so p = 2/6 for both (SciPy: Spearman p 0, as t is infinite).
TEST(ExactPermutationTest, ThreeSystemsInOneOrder) {
  const std::vector<double> x = {0.1, 0.2, 0.3};
  const std::vector<double> y = {0.5, 0.6, 0.9};
  const ExactRankCorrelations e = ExactPermutationCorrelations(x, y);
  ASSERT_TRUE(e.kendall && e.spearman);
  EXPECT_EQ(e.kendall->coefficient, 1.0);
  EXPECT_NEAR(e.kendall->p_value, 1.0 / 3, 1e-15);
  EXPECT_EQ(e.spearman->coefficient, 1.0);
  EXPECT_NEAR(e.spearman->p_value, 1.0 / 3, 1e-15);
}

// Five systems, y = ranks 1 3 2 5 4: two discordant pairs of ten, tau =
// 0.6; orderings of 5 by inversions (Mahonian numbers) 1 4 9 15 20 22 20 15
// 9 4 1, |tau| >= 0.6 for at most 2 or at least 8 inversions: 28 of 120 =
// 0.2333... (scipy.stats.kendalltau(..., method='exact') too). Spearman:
// sum d^2 = 4, rho = 1 - 6 x 4 / (5 x 24) = 0.8; |rho| >= 0.8 for sum d^2
// <= 4 (the identity, 4 adjacent swaps, 3 pairs of disjoint adjacent
// swaps: 8) or >= 36 (their reverses: 8): 16 of 120 = 0.1333....
TEST(ExactPermutationTest, FiveSystemsCountedByHand) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const std::vector<double> y = {1, 3, 2, 5, 4};
  const ExactRankCorrelations e = ExactPermutationCorrelations(x, y);
  ASSERT_TRUE(e.kendall && e.spearman);
  EXPECT_NEAR(e.kendall->coefficient, 0.6, 1e-15);
  EXPECT_NEAR(e.kendall->p_value, 28.0 / 120, 1e-15);
  EXPECT_NEAR(e.spearman->coefficient, 0.8, 1e-15);
  EXPECT_NEAR(e.spearman->p_value, 16.0 / 120, 1e-15);
  // Undefined where the coefficients are, and beyond 8 systems.
  EXPECT_FALSE(ExactPermutationCorrelations(x, std::vector<double>(5, 1.0))
                   .kendall.has_value());
  const std::vector<double> nine = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_FALSE(ExactPermutationCorrelations(nine, nine).spearman.has_value());
}

}  // namespace
}  // namespace rankwatch::metrics
