// Assertions shared by the metrics tests (test-only; not part of the
// library).
#ifndef RANKWATCH_METRICS_METRICS_TEST_UTIL_H_
#define RANKWATCH_METRICS_METRICS_TEST_UTIL_H_

#include <cmath>
#include <vector>

#include "base/numeric.h"
#include "gtest/gtest.h"
#include "metrics/numeric_internal.h"

namespace rankwatch::metrics {

// Not-a-number and infinity, as the tests write expected figures: the
// library's own.

// |actual - expected| <= relative * |expected|.
inline testing::AssertionResult RelativelyNear(double actual, double expected,
                                               double relative) {
  if (std::fabs(actual - expected) <= relative * std::fabs(expected)) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure()
         << "actual " << actual << " vs expected " << expected
         << " (relative error "
         << std::fabs(actual - expected) / std::fabs(expected) << " > "
         << relative << ")";
}

// The clustered regression-adjustment data set (drawn once with
// numpy.random.default_rng(2713), two decimals): 8 baseline and 9
// treatment units with 1 to 4 rows each and a per-unit effect on x and y,
// unit u in bucket u % 4 of B = 4 buckets per arm, every bucket used. Its
// statsmodels figures are written beside the tests that read it
// (regression_adjustment_test.cc,
// daemon/stream/experiments/experiments_test.cc).
struct ClusteredRow {
  int bucket;
  double y;
  double x;
};
inline const std::vector<ClusteredRow> kClusteredBaseline = {
    {0, 0.84, 0.44}, {0, 0.74, 0.49}, {0, 0.72, 0.46}, {0, 0.66, 0.49},
    {1, 0.55, 0.35}, {1, 0.52, 0.42}, {1, 0.43, 0.39}, {1, 0.40, 0.45},
    {2, 0.54, 0.46}, {2, 0.53, 0.37}, {2, 0.38, 0.36}, {2, 0.44, 0.38},
    {3, 0.37, 0.35}, {3, 0.38, 0.42}, {0, 0.63, 0.53}, {0, 0.66, 0.63},
    {0, 0.71, 0.56}, {0, 0.72, 0.55}, {1, 0.55, 0.44}, {1, 0.54, 0.42},
    {2, 0.41, 0.33}, {2, 0.32, 0.34}, {3, 0.73, 0.70}};
inline const std::vector<ClusteredRow> kClusteredTreatment = {
    {0, 0.67, 0.36}, {0, 0.60, 0.39}, {1, 0.42, 0.31}, {1, 0.56, 0.26},
    {1, 0.63, 0.32}, {2, 0.58, 0.55}, {2, 0.78, 0.69}, {2, 0.62, 0.64},
    {3, 0.29, 0.15}, {3, 0.39, 0.26}, {3, 0.63, 0.34}, {0, 0.42, 0.36},
    {1, 0.34, 0.33}, {2, 0.53, 0.49}, {3, 0.61, 0.43}, {3, 0.56, 0.46},
    {3, 0.61, 0.46}, {3, 0.75, 0.51}, {0, 0.68, 0.50}, {0, 0.68, 0.57},
    {0, 0.63, 0.63}};

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_METRICS_TEST_UTIL_H_
