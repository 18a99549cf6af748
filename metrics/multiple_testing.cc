#include "metrics/multiple_testing.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

namespace rankwatch::metrics {
namespace {

// A p-value that carries no evidence: NaN (a comparison without data) and,
// defensively, anything outside [0, 1].
double Sanitized(double p) { return p >= 0 && p <= 1 ? p : 1.0; }

}  // namespace

void BenjaminiHochberg(std::span<const double> p_values,
                       std::span<double> adjusted) {
  if (adjusted.size() != p_values.size()) {
    std::fill(adjusted.begin(), adjusted.end(),
              std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const size_t m = p_values.size();
  // Copied first: `adjusted` may alias `p_values`.
  std::vector<double> p(m);
  std::transform(p_values.begin(), p_values.end(), p.begin(), Sanitized);
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  // Stable, so tied p-values keep their input order; their adjusted values
  // come out equal anyway (the step-up minimum below).
  std::stable_sort(order.begin(), order.end(),
                   [&p](size_t a, size_t b) { return p[a] < p[b]; });
  // Step-up from the largest: adjusted_(i) = min(adjusted_(i+1), m p_(i) / i).
  double running = 1;
  for (size_t rank = m; rank >= 1; --rank) {
    const size_t i = order[rank - 1];
    running = std::min(
        running, static_cast<double>(m) * p[i] / static_cast<double>(rank));
    adjusted[i] = running;
  }
}

}  // namespace rankwatch::metrics
