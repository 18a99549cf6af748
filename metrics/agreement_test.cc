#include "metrics/agreement.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

// Expected figures: scikit-learn 1.x `cohen_kappa_score(x, y, weights=w)`,
// statsmodels `cohens_kappa(table, wt=w)` (kappa, std_kappa, kappa_low,
// kappa_upp) and the `krippendorff` package's `alpha(reliability_data=[x,
// y], level_of_measurement=...)`, run once on the data below (PyPI, the
// session of issue 29); the jackknife of alpha by calling that package on
// each leave-one-out sample. Nothing runs Python at test time.

namespace rankwatch::metrics {
namespace {

// 40 (query, doc) pairs graded 0-3 by two judges.
const std::vector<int> kX = {0, 1, 2, 3, 0, 1, 1, 2, 3, 3, 0, 0, 1, 2,
                             2, 3, 1, 0, 2, 1, 0, 1, 2, 3, 3, 2, 1, 0,
                             0, 2, 1, 1, 3, 2, 0, 1, 2, 3, 1, 0};
const std::vector<int> kY = {0, 1, 1, 3, 0, 2, 1, 2, 2, 3, 0, 1, 1, 2,
                             3, 3, 0, 0, 2, 1, 1, 1, 2, 2, 3, 2, 0, 0,
                             0, 3, 1, 2, 3, 2, 0, 1, 1, 3, 1, 1};

TEST(CohenKappaTest, MatchesScikitLearnAndStatsmodels) {
  const auto none = CohenKappa(kX, kY, KappaWeights::kNone);
  ASSERT_TRUE(none.has_value());
  EXPECT_NEAR(none->estimate, 0.5630252100840336, 1e-14);
  EXPECT_NEAR(none->std_error, 0.1003675472856941, 1e-14);
  EXPECT_NEAR(none->lower, 0.3663084321874524, 1e-12);
  EXPECT_NEAR(none->upper, 0.7597419879806151, 1e-12);
  const auto linear = CohenKappa(kX, kY, KappaWeights::kLinear);
  ASSERT_TRUE(linear.has_value());
  EXPECT_NEAR(linear->estimate, 0.7239915074309979, 1e-14);
  EXPECT_NEAR(linear->std_error, 0.06803801858179195, 1e-14);
  EXPECT_NEAR(linear->lower, 0.5906394414312187, 1e-12);
  EXPECT_NEAR(linear->upper, 0.8573435734307772, 1e-12);
  const auto quadratic = CohenKappa(kX, kY, KappaWeights::kQuadratic);
  ASSERT_TRUE(quadratic.has_value());
  EXPECT_NEAR(quadratic->estimate, 0.854586129753915, 1e-14);
  EXPECT_NEAR(quadratic->std_error, 0.039997793501984416, 1e-14);
  EXPECT_NEAR(quadratic->lower, 0.7761918950289554, 1e-12);
  EXPECT_NEAR(quadratic->upper, 0.9329803644788747, 1e-12);
  // A 90% interval is z(0.95) = 1.6448536269514722 standard errors wide.
  const auto ninety = CohenKappa(kX, kY, KappaWeights::kNone, 0.90);
  EXPECT_NEAR(ninety->upper - ninety->estimate,
              1.6448536269514722 * 0.1003675472856941, 1e-12);
}

// Grades 0, 1 and 3 (nobody gave 2): the weights' distances are the grades'
// (statsmodels with the 4 x 4 table, its row and column 2 empty).
// Counted pairs, as a live count keeps them: added item by item in two
// shards and merged, with a label that changed taken back, they give the
// span form's figures (0.5630252100840336 for kappa above, from
// scikit-learn).
TEST(GradePairsTest, CountsGiveTheSameFiguresAsTheItems) {
  GradePairs first;
  GradePairs second;
  for (size_t i = 0; i < kX.size(); ++i) {
    (i % 2 == 0 ? first : second).Add(kX[i], kY[i]);
  }
  second.Add(9, 0);        // A label later changed...
  second.Add(9, 0, -1);    // ...taken back: category 9 leaves the spread.
  second.Add(2, 2, -100);  // Never below zero: only the 2,2 items leave.
  GradePairs twos;
  for (size_t i = 0; i < kX.size(); ++i) {
    if (i % 2 == 1 && kX[i] == 2 && kY[i] == 2) twos.Add(2, 2);
  }
  second.Merge(twos);  // Back in.
  first.Merge(second);
  EXPECT_EQ(first.items(), 40);
  const auto kappa = CohenKappa(first, KappaWeights::kNone);
  ASSERT_TRUE(kappa.has_value());
  EXPECT_NEAR(kappa->estimate, 0.5630252100840336, 1e-14);
  EXPECT_NEAR(kappa->std_error, 0.1003675472856941, 1e-14);
  for (AlphaMetric m :
       {AlphaMetric::kNominal, AlphaMetric::kOrdinal, AlphaMetric::kInterval}) {
    const auto from_items = KrippendorffAlpha(kX, kY, m);
    const auto from_pairs = KrippendorffAlpha(first, m);
    ASSERT_TRUE(from_items && from_pairs);
    EXPECT_DOUBLE_EQ(from_pairs->estimate, from_items->estimate);
    EXPECT_DOUBLE_EQ(from_pairs->std_error, from_items->std_error);
  }
  EXPECT_FALSE(CohenKappa(GradePairs(), KappaWeights::kNone).has_value());
}

TEST(CohenKappaTest, AGradeNobodyGaveStillCountsInTheSpread) {
  const std::vector<int> x = {0, 0, 1, 3, 3, 1, 0, 3, 1, 1, 0, 3};
  const std::vector<int> y = {0, 1, 1, 3, 1, 1, 0, 3, 3, 1, 0, 3};
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kNone)->estimate, 0.625, 1e-14);
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kNone)->std_error,
              0.18782523875267668, 1e-14);
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kLinear)->estimate,
              0.6808510638297873, 1e-14);
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kLinear)->std_error,
              0.1735617770782288, 1e-14);
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kQuadratic)->estimate,
              0.7476635514018692, 1e-14);
  EXPECT_NEAR(CohenKappa(x, y, KappaWeights::kQuadratic)->std_error,
              0.15369846478738264, 1e-14);
  EXPECT_NEAR(KrippendorffAlpha(x, y, AlphaMetric::kNominal)->estimate,
              0.6387434554973822, 1e-14);
  EXPECT_NEAR(KrippendorffAlpha(x, y, AlphaMetric::kOrdinal)->estimate,
              0.8041053921568628, 1e-14);
  EXPECT_NEAR(KrippendorffAlpha(x, y, AlphaMetric::kInterval)->estimate,
              0.7578947368421053, 1e-14);
}

TEST(KrippendorffAlphaTest, MatchesTheKrippendorffPackageAndItsJackknife) {
  struct Case {
    AlphaMetric metric;
    double alpha, se, lower, upper;
  };
  const Case cases[] = {
      {AlphaMetric::kNominal, 0.5683060109289617, 0.10108580213893088,
       0.37018147938831525, 0.7664305424696082},
      {AlphaMetric::kOrdinal, 0.8575031418876461, 0.038540136397664654,
       0.7819658625889621, 0.9330404211863301},
      {AlphaMetric::kInterval, 0.8563837225562858, 0.04068014537241498,
       0.7766521027404987, 0.936115342372073},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.metric));
    const auto a = KrippendorffAlpha(kX, kY, c.metric);
    ASSERT_TRUE(a.has_value());
    EXPECT_NEAR(a->estimate, c.alpha, 1e-14);
    EXPECT_NEAR(a->std_error, c.se, 1e-12);
    EXPECT_NEAR(a->lower, c.lower, 1e-12);
    EXPECT_NEAR(a->upper, c.upper, 1e-12);
  }
}

// Perfect agreement is 1 for both; undefined figures are nullopt.
TEST(AgreementTest, PerfectAndUndefined) {
  const std::vector<int> x = {0, 1, 2, 2, 1};
  EXPECT_NEAR(CohenKappa(x, x, KappaWeights::kNone)->estimate, 1, 1e-15);
  EXPECT_NEAR(CohenKappa(x, x, KappaWeights::kNone)->std_error, 0, 1e-15);
  EXPECT_NEAR(KrippendorffAlpha(x, x, AlphaMetric::kOrdinal)->estimate, 1,
              1e-15);
  // Every grade the same: no expected disagreement.
  const std::vector<int> same = {2, 2, 2};
  EXPECT_FALSE(CohenKappa(same, same, KappaWeights::kLinear).has_value());
  EXPECT_FALSE(KrippendorffAlpha(same, same, AlphaMetric::kNominal));
  // Sizes differ; one item; grades too far apart for a dense table.
  EXPECT_FALSE(CohenKappa(x, same, KappaWeights::kNone).has_value());
  EXPECT_FALSE(CohenKappa(std::vector<int>{1}, std::vector<int>{0},
                          KappaWeights::kNone));
  EXPECT_FALSE(CohenKappa(std::vector<int>{0, 100}, std::vector<int>{0, 100},
                          KappaWeights::kNone));
  // One item alone holds the only other grade: leaving it out leaves no
  // disagreement to expect, so the jackknife (not alpha) is undefined.
  const auto lone =
      KrippendorffAlpha(std::vector<int>{0, 0, 0, 1},
                        std::vector<int>{0, 0, 0, 0}, AlphaMetric::kNominal);
  ASSERT_TRUE(lone.has_value());
  EXPECT_TRUE(std::isnan(lone->std_error));
}

// Krippendorff's alpha of two coders written out from its definition (ch.
// 12), apart from agreement.cc: the values' counts n_c, D_o from the items'
// pairs (each item pairable both ways), D_e from every pair of values, the
// ordinal difference the values from c to d less half of c's and d's.
// Grades in [0, k). Item `skip` is left out (none when out of range).
std::optional<double> AlphaFromItems(const std::vector<int>& x,
                                     const std::vector<int>& y, int k,
                                     AlphaMetric metric, size_t skip) {
  std::vector<double> count(static_cast<size_t>(k), 0.0);
  double values = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i == skip) continue;
    count[static_cast<size_t>(x[i])] += 1;
    count[static_cast<size_t>(y[i])] += 1;
    values += 2;
  }
  std::vector<double> cumulative(static_cast<size_t>(k) + 1, 0.0);
  for (int c = 0; c < k; ++c) cumulative[c + 1] = cumulative[c] + count[c];
  auto difference = [&](int c, int d) {
    if (c == d) return 0.0;
    switch (metric) {
      case AlphaMetric::kNominal:
        return 1.0;
      case AlphaMetric::kInterval:
        return static_cast<double>(c - d) * (c - d);
      case AlphaMetric::kOrdinal: {
        const int lo = std::min(c, d), hi = std::max(c, d);
        const double v =
            cumulative[hi + 1] - cumulative[lo] - (count[lo] + count[hi]) / 2;
        return v * v;
      }
    }
    return 0.0;
  };
  double observed = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i != skip) observed += 2 * difference(x[i], y[i]);
  }
  double expected = 0;
  for (int c = 0; c < k; ++c) {
    for (int d = 0; d < k; ++d)
      expected += count[c] * count[d] * difference(c, d);
  }
  if (values < 2 || !(expected > 0)) return std::nullopt;
  return 1 - (values - 1) * observed / expected;
}

// The jackknife's fast form (LeaveOneOut in agreement.cc: each leave-one-out
// alpha from the full table's sums in O(k)) against the brute force:
// every item left out in turn and alpha recomputed from the items
// (AlphaFromItems), se^2 = (n - 1) / n sum (alpha_(i) - mean)^2.
TEST(KrippendorffAlphaTest, FastJackknifeEqualsLeavingEachItemOutByBruteForce) {
  const uint64_t seed = 20260141;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 random(seed);
  int undefined = 0;
  for (int trial = 0; trial < 24; ++trial) {
    // Up to 64 grades; some spreads are sparse (a few values far apart),
    // some trials have a grade held by one item (the jackknife undefined).
    const int k = static_cast<int>(random.Between(2, 64));
    const size_t n = static_cast<size_t>(random.Between(2, 160));
    std::vector<int> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<int>(random.Below(static_cast<uint64_t>(k)));
      // The second judge mostly near the first: alpha well above 0.
      const int noise = static_cast<int>(random.Between(-2, 2));
      y[i] = random.Uniform() < 0.2
                 ? static_cast<int>(random.Below(static_cast<uint64_t>(k)))
                 : std::clamp(x[i] + noise, 0, k - 1);
    }
    if (trial % 6 == 5) {  // Every grade 0 but one item's.
      std::fill(x.begin(), x.end(), 0);
      std::fill(y.begin(), y.end(), 0);
      x[0] = k - 1;
    }
    for (AlphaMetric metric : {AlphaMetric::kNominal, AlphaMetric::kOrdinal,
                               AlphaMetric::kInterval}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " k " +
                   std::to_string(k) + " n " + std::to_string(n) + " metric " +
                   std::to_string(static_cast<int>(metric)));
      const std::optional<double> whole =
          AlphaFromItems(x, y, k, metric, SIZE_MAX);
      const std::optional<AgreementEstimate> fast =
          KrippendorffAlpha(x, y, metric);
      ASSERT_EQ(fast.has_value(), whole.has_value());
      if (!whole) continue;
      EXPECT_NEAR(fast->estimate, *whole, 1e-12);
      std::vector<double> loo;
      for (size_t i = 0; i < n; ++i) {
        const std::optional<double> a = AlphaFromItems(x, y, k, metric, i);
        if (!a) break;
        loo.push_back(*a);
      }
      if (loo.size() < n) {
        ++undefined;
        EXPECT_TRUE(std::isnan(fast->std_error)) << fast->std_error;
        continue;
      }
      double mean = 0;
      for (double a : loo) mean += a / static_cast<double>(n);
      double squares = 0;
      for (double a : loo) squares += (a - mean) * (a - mean);
      const double se = std::sqrt((n - 1.0) / n * squares);
      EXPECT_NEAR(fast->std_error, se, 1e-12 * std::max(1.0, se));
    }
  }
  EXPECT_GT(undefined, 0);  // The undefined case was reached.
}

}  // namespace
}  // namespace rankwatch::metrics
