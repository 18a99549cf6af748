// Assertions shared by the metrics tests (test-only; not part of the
// library).
#ifndef RANKWATCH_METRICS_METRICS_TEST_UTIL_H_
#define RANKWATCH_METRICS_METRICS_TEST_UTIL_H_

#include <cmath>

#include "gtest/gtest.h"

namespace rankwatch::metrics {

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

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_METRICS_TEST_UTIL_H_
