#include "metrics/multiple_testing.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

// Expected values: statsmodels 0.15.0,
//   statsmodels.stats.multitest.multipletests(p, method='fdr_bh')[1],
// run once offline and pasted here (R's p.adjust(p, "BH") gives the same),
// and the hand calculation beside each case. Nothing runs Python at test
// time.

namespace rankwatch::metrics {
namespace {

std::vector<double> Adjusted(const std::vector<double>& p) {
  std::vector<double> out(p.size(), -1);
  BenjaminiHochberg(p, out);
  return out;
}

void ExpectAllNear(const std::vector<double>& actual,
                   const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-15) << "index " << i;
  }
}

TEST(BenjaminiHochbergTest, MatchesStatsmodels) {
  // Sorted: 0.005, 0.01, 0.03, 0.04, 0.2 (m = 5); m p_(i) / i = 0.025,
  // 0.025, 0.05, 0.05, 0.2; running minimum from the top leaves them.
  // multipletests([0.01, 0.04, 0.03, 0.005, 0.2], method='fdr_bh')[1] =
  // [0.025, 0.05, 0.05, 0.025, 0.2].
  ExpectAllNear(Adjusted({0.01, 0.04, 0.03, 0.005, 0.2}),
                {0.025, 0.05, 0.05, 0.025, 0.2});
  // Step-up: m p_(i) / i = 0.04 * 4 / i = 0.16, 0.08, 0.0533, 0.04, and
  // the minimum over j >= i makes every one 0.04
  // (multipletests([0.04] * 4, method='fdr_bh')[1] = [0.04] * 4).
  ExpectAllNear(Adjusted({0.04, 0.04, 0.04, 0.04}), {0.04, 0.04, 0.04, 0.04});
  // One hypothesis: unchanged.
  ExpectAllNear(Adjusted({0.3}), {0.3});
  // Capped at 1: 0.9 * 2 / 1 = 1.8 -> min(1, ...) and 0.95 * 2 / 2 = 0.95;
  // multipletests([0.9, 0.95], method='fdr_bh')[1] = [0.95, 0.95].
  ExpectAllNear(Adjusted({0.9, 0.95}), {0.95, 0.95});
}

TEST(BenjaminiHochbergTest, TiesGetEqualAdjustedValues) {
  // multipletests([0.01, 0.01, 0.03, 0.03, 0.5], method='fdr_bh')[1] =
  // [0.025, 0.025, 0.0375, 0.0375, 0.5]; by hand 5 * 0.01 / 2 = 0.025,
  // 5 * 0.03 / 4 = 0.0375.
  ExpectAllNear(Adjusted({0.01, 0.01, 0.03, 0.03, 0.5}),
                {0.025, 0.025, 0.0375, 0.0375, 0.5});
  ExpectAllNear(Adjusted({0.03, 0.5, 0.01, 0.03, 0.01}),
                {0.0375, 0.5, 0.025, 0.0375, 0.025});
}

TEST(BenjaminiHochbergTest, NanCountsAsOneAndStaysInTheFamily) {
  // A comparison without data (NaN) is still one of the m: the same as
  // p = 1. multipletests([0.02, 1.0, 0.001], method='fdr_bh')[1] =
  // [0.03, 1.0, 0.003] (m = 3; R's p.adjust would instead drop the NA
  // and use m = 2).
  ExpectAllNear(Adjusted({0.02, kNaN, 0.001}), {0.03, 1.0, 0.003});
  // Out-of-range p-values carry no evidence either.
  ExpectAllNear(Adjusted({0.02, 1.5, 0.001}), {0.03, 1.0, 0.003});
  ExpectAllNear(Adjusted({0.02, -0.1, 0.001}), {0.03, 1.0, 0.003});
  ExpectAllNear(Adjusted({kNaN, kNaN}), {1.0, 1.0});
}

TEST(BenjaminiHochbergTest, InPlaceAndEdges) {
  std::vector<double> p = {0.01, 0.04, 0.03, 0.005, 0.2};
  BenjaminiHochberg(p, p);  // Same span.
  ExpectAllNear(p, {0.025, 0.05, 0.05, 0.025, 0.2});

  std::vector<double> none;
  BenjaminiHochberg(none, none);  // Nothing to do, nothing to crash.

  std::vector<double> wrong_size(2, 0.5);
  BenjaminiHochberg(std::vector<double>{0.01, 0.02, 0.03}, wrong_size);
  EXPECT_TRUE(std::isnan(wrong_size[0]));
  EXPECT_TRUE(std::isnan(wrong_size[1]));
}

// Holm: expected values from statsmodels 0.15.0 with SciPy 1.10.1,
//   statsmodels.stats.multitest.multipletests(p, method='holm')[1],
// run for this test, and the hand calculation beside each case.

std::vector<double> HolmAdjusted(const std::vector<double>& p) {
  std::vector<double> out(p.size(), -1);
  Holm(p, out);
  return out;
}

TEST(HolmTest, MatchesStatsmodels) {
  // Sorted: 0.005, 0.01, 0.03, 0.04, 0.2 (m = 5); (m - i + 1) p_(i) =
  // 0.025, 0.04, 0.09, 0.08, 0.2; running maximum: 0.025, 0.04, 0.09,
  // 0.09, 0.2. multipletests([0.01, 0.04, 0.03, 0.005, 0.2],
  // method='holm')[1] = [0.04, 0.09, 0.09, 0.025, 0.2].
  ExpectAllNear(HolmAdjusted({0.01, 0.04, 0.03, 0.005, 0.2}),
                {0.04, 0.09, 0.09, 0.025, 0.2});
  // multipletests([0.04] * 4, method='holm')[1] = [0.16] * 4: 4 * 0.04,
  // then the running maximum keeps it.
  ExpectAllNear(HolmAdjusted({0.04, 0.04, 0.04, 0.04}),
                {0.16, 0.16, 0.16, 0.16});
  // Capped at 1: 3 * 0.3 = 0.9, 2 * 0.4 = 0.8 -> 0.9, 0.6 -> 0.9.
  // multipletests([0.3, 0.6, 0.4], method='holm')[1] =
  // [0.8999999999999999] * 3.
  ExpectAllNear(HolmAdjusted({0.3, 0.6, 0.4}),
                {0.8999999999999999, 0.8999999999999999, 0.8999999999999999});
  ExpectAllNear(HolmAdjusted({0.9, 0.95}), {1.0, 1.0});
  ExpectAllNear(HolmAdjusted({0.3}), {0.3});
}

TEST(HolmTest, TiesNanAndInPlace) {
  // multipletests([0.01, 0.01, 0.03, 0.03, 0.5], method='holm')[1] =
  // [0.05, 0.05, 0.09, 0.09, 0.5]: 5 * 0.01, max(0.05, 4 * 0.01),
  // 3 * 0.03, max(0.09, 2 * 0.03), 0.5.
  ExpectAllNear(HolmAdjusted({0.01, 0.01, 0.03, 0.03, 0.5}),
                {0.05, 0.05, 0.09, 0.09, 0.5});
  // NaN counts as 1 and stays in the family (m = 3):
  // multipletests([0.02, 1.0, 0.001], method='holm')[1] = [0.04, 1.0, 0.003].
  ExpectAllNear(HolmAdjusted({0.02, kNaN, 0.001}), {0.04, 1.0, 0.003});
  ExpectAllNear(HolmAdjusted({0.02, 7.0, 0.001}), {0.04, 1.0, 0.003});

  std::vector<double> p = {0.01, 0.04, 0.03, 0.005, 0.2};
  Holm(p, p);  // Same span.
  ExpectAllNear(p, {0.04, 0.09, 0.09, 0.025, 0.2});
  std::vector<double> none;
  Holm(none, none);
  std::vector<double> wrong_size(2, 0.5);
  Holm(std::vector<double>{0.01, 0.02, 0.03}, wrong_size);
  EXPECT_TRUE(std::isnan(wrong_size[0]));
  EXPECT_TRUE(std::isnan(wrong_size[1]));
}

}  // namespace
}  // namespace rankwatch::metrics
