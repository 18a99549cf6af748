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

// The indices of `p` in ascending order of p. Stable, so tied p-values keep
// their input order; their adjusted values come out equal anyway (the
// running minimum or maximum of the step-up and step-down procedures).
std::vector<size_t> AscendingOrder(const std::vector<double>& p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&p](size_t a, size_t b) { return p[a] < p[b]; });
  return order;
}

// What both adjustments start from: the sanitized p-values, copied first
// (`adjusted` may alias `p_values`), and their ascending order. False, with
// `adjusted` all NaN, when the sizes differ.
bool Prepare(std::span<const double> p_values, std::span<double> adjusted,
             std::vector<double>* p, std::vector<size_t>* order) {
  if (adjusted.size() != p_values.size()) {
    std::fill(adjusted.begin(), adjusted.end(),
              std::numeric_limits<double>::quiet_NaN());
    return false;
  }
  p->resize(p_values.size());
  std::transform(p_values.begin(), p_values.end(), p->begin(), Sanitized);
  *order = AscendingOrder(*p);
  return true;
}

}  // namespace

void BenjaminiHochberg(std::span<const double> p_values,
                       std::span<double> adjusted) {
  std::vector<double> p;
  std::vector<size_t> order;
  if (!Prepare(p_values, adjusted, &p, &order)) return;
  const size_t m = p.size();
  // Step-up from the largest: adjusted_(i) = min(adjusted_(i+1), m p_(i) / i).
  double running = 1;
  for (size_t rank = m; rank >= 1; --rank) {
    const size_t i = order[rank - 1];
    running = std::min(
        running, static_cast<double>(m) * p[i] / static_cast<double>(rank));
    adjusted[i] = running;
  }
}

void Holm(std::span<const double> p_values, std::span<double> adjusted) {
  std::vector<double> p;
  std::vector<size_t> order;
  if (!Prepare(p_values, adjusted, &p, &order)) return;
  const size_t m = p.size();
  // Step-down from the smallest: adjusted_(i) = max(adjusted_(i-1),
  // (m - i + 1) p_(i)), capped at 1.
  double running = 0;
  for (size_t rank = 1; rank <= m; ++rank) {
    const size_t i = order[rank - 1];
    running = std::max(running,
                       std::min(1.0, static_cast<double>(m - rank + 1) * p[i]));
    adjusted[i] = running;
  }
}

}  // namespace rankwatch::metrics
