#include "metrics/ppi.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

// Ten labelled items (truth y, the cheap judge's f) and fifteen the cheap
// judge alone labelled. Expected: ppi_py's ppi_mean_pointestimate and
// ppi_mean_ci(alpha=0.05) (PyPI ppi-python, run once for this test), with
// lam=None (PPI++'s tuned lambda, 0.6529705719044976 by the formula in
// ppi.h) and lam=1 (plain PPI).
const std::vector<double> kY = {0.5, 0.2, 0.9, 0.4, 0.7,
                                0.1, 0.6, 0.8, 0.3, 0.55};
const std::vector<double> kF = {0.6, 0.35, 0.95, 0.5,  0.7,
                                0.3, 0.65, 0.9,  0.45, 0.6};
const std::vector<double> kU = {0.7,  0.2,  0.5,  0.85, 0.4, 0.6,  0.9, 0.3,
                                0.55, 0.75, 0.65, 0.45, 0.8, 0.25, 0.5};

TEST(PpiMeanTest, MatchesPpiPy) {
  const auto tuned = PpiMean(kY, kF, kU);
  ASSERT_TRUE(tuned.has_value());
  EXPECT_NEAR(tuned->lambda, 0.6529705719044976, 1e-14);
  EXPECT_NEAR(tuned->estimate, 0.47888117712382006, 1e-14);
  EXPECT_NEAR(tuned->lower, 0.3784803178982711, 1e-12);
  EXPECT_NEAR(tuned->upper, 0.579282036349369, 1e-12);
  const auto plain = PpiMean(kY, kF, kU, 0.95, /*tune=*/false);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->lambda, 1);
  EXPECT_NEAR(plain->estimate, 0.4650000000000001, 1e-14);
  EXPECT_NEAR(plain->lower, 0.35308832577716714, 1e-12);
  EXPECT_NEAR(plain->upper, 0.5769116742228331, 1e-12);
  // By hand: the classical mean of y is 5.05 / 10; the cheap judge over
  // all 25 items averages (6.0 + 8.4) / 25 = 0.576.
  EXPECT_NEAR(tuned->classical, 0.505, 1e-15);
  EXPECT_NEAR(tuned->naive, 0.576, 1e-15);
}

// The sums form gives ppi_py's figures too, tuned and plain.
TEST(PpiMeanTest, FromMomentsMatchesPpiPy) {
  PpiMoments m;
  for (size_t i = 0; i < kY.size(); ++i) m.AddLabelled(kY[i], kF[i]);
  for (double u : kU) m.AddOther(u);
  const auto tuned = PpiMean(m);
  ASSERT_TRUE(tuned.has_value());
  EXPECT_NEAR(tuned->lambda, 0.6529705719044976, 1e-13);
  EXPECT_NEAR(tuned->estimate, 0.47888117712382006, 1e-13);
  EXPECT_NEAR(tuned->lower, 0.3784803178982711, 1e-12);
  EXPECT_NEAR(tuned->upper, 0.579282036349369, 1e-12);
  const auto plain = PpiMean(m, 0.95, /*tune=*/false);
  ASSERT_TRUE(plain.has_value());
  EXPECT_NEAR(plain->estimate, 0.4650000000000001, 1e-13);
  EXPECT_NEAR(plain->lower, 0.35308832577716714, 1e-12);
  EXPECT_NEAR(plain->upper, 0.5769116742228331, 1e-12);
  EXPECT_NEAR(plain->classical, 0.505, 1e-15);
  EXPECT_NEAR(plain->naive, 0.576, 1e-15);
  // The classical interval: sd of y with divisor n - 1 by hand,
  // sum (y - 0.505)^2 = 0.60225, var 0.60225 / 9, se sqrt(var / 10).
  EXPECT_NEAR(plain->classical_std_error, std::sqrt(0.60225 / 9 / 10), 1e-14);
  PpiMoments few;
  few.AddLabelled(0.5, 0.5);
  few.AddOther(0.5);
  EXPECT_FALSE(PpiMean(few).has_value());
}

TEST(PpiMeanTest, Undefined) {
  const std::vector<double> one = {0.5};
  EXPECT_FALSE(PpiMean(one, one, kU).has_value());
  EXPECT_FALSE(PpiMean(kY, kF, std::vector<double>{}).has_value());
  EXPECT_FALSE(PpiMean(kY, kU, kU).has_value());  // Sizes differ.
  std::vector<double> nan = kY;
  nan[3] = std::nan("");
  EXPECT_FALSE(PpiMean(nan, kF, kU).has_value());
}

// Simulation (issue 29's test): a per-query figure y = u^2 (u uniform, so
// E[y] = 1/3) that a cheap judge overstates: f = y + 0.15 + noise (sd 0.1).
// 100 queries labelled by the trusted judge (a uniform random sample),
// 1,000 by the cheap judge alone; 2,000 repetitions. Plain PPI's 90%
// interval covers 1/3 in 90% of them (binomial sd 0.7%: accepted within
// 2.5%), at less than half the classical interval's width (the 100 labels
// alone); PPI++'s tuned lambda is narrower still but, estimated from the
// same 100 labels, covers about 1.3 points less (measured 0.881-0.890 over
// runs of this test: accepted within [0.86, 0.92]), which is why
// `rankwatch compare --ppi` uses plain PPI unless asked. The cheap judge
// alone is off by about 0.15 and an interval as wide as the classical one
// around its own mean almost never covers.
struct Coverage {
  double coverage = 0, width = 0, classical_width = 0, naive_bias = 0;
  int naive_covered = 0;
};

Coverage Simulate(uint64_t seed, bool tune) {
  Xoshiro256 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.1);
  std::mt19937_64 gauss(seed);
  constexpr int kReps = 2000, kLabelled = 100, kOthers = 1000;
  const double truth = 1.0 / 3;
  Coverage c;
  std::vector<double> y(kLabelled), f(kLabelled), u(kOthers);
  for (int rep = 0; rep < kReps; ++rep) {
    for (int i = 0; i < kLabelled; ++i) {
      const double x = rng.Uniform();
      y[i] = x * x;
      f[i] = y[i] + 0.15 + noise(gauss);
    }
    for (int j = 0; j < kOthers; ++j) {
      const double x = rng.Uniform();
      u[j] = x * x + 0.15 + noise(gauss);
    }
    const auto e = PpiMean(y, f, u, 0.90, tune);
    if (!e.has_value()) return {};
    if (e->lower <= truth && truth <= e->upper) c.coverage += 1.0 / kReps;
    c.width += (e->upper - e->lower) / kReps;
    c.classical_width += (e->classical_upper - e->classical_lower) / kReps;
    const double half = (e->classical_upper - e->classical_lower) / 2;
    if (std::abs(e->naive - truth) <= half) ++c.naive_covered;
    c.naive_bias += (e->naive - truth) / kReps;
  }
  std::printf(
      "%s: coverage %.4f, mean width %.4f (classical %.4f); naive "
      "bias %+.4f, naive coverage %d/%d\n",
      tune ? "PPI++" : "PPI", c.coverage, c.width, c.classical_width,
      c.naive_bias, c.naive_covered, kReps);
  return c;
}

TEST(PpiMeanTest, CoverageWithABiasedCheapJudge) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Coverage plain = Simulate(seed, /*tune=*/false);
  EXPECT_NEAR(plain.coverage, 0.90, 0.025);
  EXPECT_LT(plain.width, 0.5 * plain.classical_width);
  EXPECT_NEAR(plain.naive_bias, 0.15, 0.01);
  EXPECT_LT(plain.naive_covered, 20);
  const Coverage tuned = Simulate(seed, /*tune=*/true);
  EXPECT_GT(tuned.coverage, 0.86);
  EXPECT_LT(tuned.coverage, 0.92);
  EXPECT_LT(tuned.width, plain.width);
}

}  // namespace
}  // namespace rankwatch::metrics
