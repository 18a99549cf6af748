#include "metrics/running_stats.h"

#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

TEST(RunningStatsTest, MeanAndVarianceOfKnownSample) {
  // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, squared deviations sum to 32, so the
  // population variance is 32 / 8 = 4 and the sample variance 32 / 7.
  RunningStats s;
  for (double x : {2, 4, 4, 4, 5, 5, 7, 9}) s.Add(x);
  EXPECT_EQ(s.count(), 8);
  EXPECT_DOUBLE_EQ(s.mean(), 5.0);
  EXPECT_DOUBLE_EQ(s.population_variance(), 4.0);
  EXPECT_DOUBLE_EQ(s.variance(), 32.0 / 7);
  EXPECT_DOUBLE_EQ(s.sum(), 40.0);
  EXPECT_DOUBLE_EQ(s.sum_of_squares(), 4 + 16 * 3 + 25 * 2 + 49 + 81);
}

TEST(RunningStatsTest, StableForLargeOffsets) {
  // 1e9 + {4, 7, 13, 16}: deviations -6, -3, 3, 6 -> sample variance 90/3.
  // The naive sum-of-squares formula loses every digit here.
  RunningStats s;
  for (double x : {4, 7, 13, 16}) s.Add(1e9 + x);
  EXPECT_DOUBLE_EQ(s.mean(), 1e9 + 10);
  EXPECT_NEAR(s.variance(), 30.0, 1e-6);
}

TEST(RunningStatsTest, MergeEqualsSequential) {
  const std::vector<double> xs = {0.1, 0.9,  0.35, 0.0, 1.0,
                                  0.5, 0.25, 0.75, 0.6, 0.125};
  for (size_t split = 0; split <= xs.size(); ++split) {
    RunningStats all, left, right;
    for (size_t i = 0; i < xs.size(); ++i) {
      all.Add(xs[i]);
      (i < split ? left : right).Add(xs[i]);
    }
    RunningStats merged = left;
    merged.Merge(right);
    EXPECT_EQ(merged.count(), all.count());
    EXPECT_NEAR(merged.mean(), all.mean(), 1e-15);
    EXPECT_NEAR(merged.variance(), all.variance(), 1e-15);
    EXPECT_NEAR(merged.sum(), all.sum(), 1e-15);
    EXPECT_NEAR(merged.sum_of_squares(), all.sum_of_squares(), 1e-15);
  }
}

TEST(RunningStatsTest, EmptyAndSingle) {
  RunningStats s;
  EXPECT_EQ(s.variance(), 0);
  EXPECT_EQ(s.population_variance(), 0);
  s.Add(0.5);
  EXPECT_EQ(s.mean(), 0.5);
  EXPECT_EQ(s.variance(), 0);
  RunningStats empty;
  s.Merge(empty);
  EXPECT_EQ(s.count(), 1);
  empty.Merge(s);
  EXPECT_EQ(empty.mean(), 0.5);
}

}  // namespace
}  // namespace rankwatch::metrics
