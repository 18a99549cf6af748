// NaN and infinity as the project's figures use them: a statistic that is
// undefined (a mean of nothing, an interval without a variance) is NaN,
// exported as such or written as null; an unbounded interval's end is
// infinite. One definition for every library (base is everyone's floor).
// Constants only; thread-safe.
#ifndef RANKWATCH_BASE_NUMERIC_H_
#define RANKWATCH_BASE_NUMERIC_H_

#include <limits>

namespace rankwatch {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_NUMERIC_H_
