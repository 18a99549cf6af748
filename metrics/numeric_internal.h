// What the .cc files of rankwatch::metrics share for plain arithmetic: the
// mean of a span (NaN and infinity are base/numeric.h's).
// Private to the library (no public header includes it). Constants and pure
// functions only; thread-safe.
#ifndef RANKWATCH_METRICS_NUMERIC_INTERNAL_H_
#define RANKWATCH_METRICS_NUMERIC_INTERNAL_H_

#include <limits>
#include <span>

#include "base/numeric.h"

namespace rankwatch::metrics::internal {

// The arithmetic mean; NaN for an empty span (0 / 0).
inline double Mean(std::span<const double> values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace rankwatch::metrics::internal

#endif  // RANKWATCH_METRICS_NUMERIC_INTERNAL_H_
