#include "metrics/ppi.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "metrics/ab_stats.h"
#include "metrics/numeric_internal.h"

namespace rankwatch::metrics {

namespace {

using internal::Mean;

bool HasNan(std::span<const double> v) {
  return std::any_of(v.begin(), v.end(),
                     [](double x) { return std::isnan(x); });
}

}  // namespace

std::optional<PpiMeanEstimate> PpiMean(std::span<const double> truth,
                                       std::span<const double> predicted,
                                       std::span<const double> unlabeled,
                                       double confidence, bool tune) {
  const size_t n = truth.size();
  const size_t big_n = unlabeled.size();
  if (n < 2 || big_n < 1 || predicted.size() != n || HasNan(truth) ||
      HasNan(predicted) || HasNan(unlabeled)) {
    return std::nullopt;
  }
  const double dn = static_cast<double>(n);
  const double dbig = static_cast<double>(big_n);
  const double mean_y = Mean(truth);
  const double mean_f = Mean(predicted);
  const double mean_u = Mean(unlabeled);
  double lambda = 1;
  if (tune) {
    double cov = 0;
    for (size_t i = 0; i < n; ++i) {
      cov += (truth[i] - mean_y) * (predicted[i] - mean_f);
    }
    cov /= dn;
    const double mean_all = (mean_f * dn + mean_u * dbig) / (dn + dbig);
    double var_all = 0;
    for (double f : predicted) var_all += (f - mean_all) * (f - mean_all);
    for (double f : unlabeled) var_all += (f - mean_all) * (f - mean_all);
    var_all /= dn + dbig - 1;
    lambda = var_all > 0 ? cov / ((1 + dn / dbig) * var_all) : 0;
    lambda = std::clamp(lambda, 0.0, 1.0);
  }
  PpiMeanEstimate e;
  e.lambda = lambda;
  e.estimate = lambda * mean_u + (mean_y - lambda * mean_f);
  double var_u = 0;
  for (double f : unlabeled) var_u += (f - mean_u) * (f - mean_u);
  var_u /= dbig;
  const double mean_r = mean_y - lambda * mean_f;
  double var_r = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = truth[i] - lambda * predicted[i] - mean_r;
    var_r += r * r;
  }
  var_r /= dn;
  const double z = NormalQuantile(1 - (1 - confidence) / 2);
  e.std_error = std::sqrt(lambda * lambda * var_u / dbig + var_r / dn);
  e.lower = e.estimate - z * e.std_error;
  e.upper = e.estimate + z * e.std_error;
  double var_y = 0;
  for (double y : truth) var_y += (y - mean_y) * (y - mean_y);
  var_y /= dn - 1;
  e.classical = mean_y;
  e.classical_std_error = std::sqrt(var_y / dn);
  e.classical_lower = mean_y - z * e.classical_std_error;
  e.classical_upper = mean_y + z * e.classical_std_error;
  e.naive = (mean_f * dn + mean_u * dbig) / (dn + dbig);
  return e;
}

std::optional<PpiMeanEstimate> PpiMean(const PpiMoments& m, double confidence,
                                       bool tune) {
  if (m.n < 2 || m.others < 1) return std::nullopt;
  const double dn = static_cast<double>(m.n);
  const double dbig = static_cast<double>(m.others);
  const double mean_y = m.sum_y / dn;
  const double mean_f = m.sum_f / dn;
  const double mean_u = m.sum_u / dbig;
  if (!std::isfinite(mean_y + mean_f + mean_u + m.sum_yy + m.sum_ff + m.sum_yf +
                     m.sum_uu)) {
    return std::nullopt;
  }
  // Population (divisor n) moments of the labelled items; rounding can
  // take a variance a hair below 0.
  const double var_y = std::max(m.sum_yy / dn - mean_y * mean_y, 0.0);
  const double var_f = std::max(m.sum_ff / dn - mean_f * mean_f, 0.0);
  const double cov = m.sum_yf / dn - mean_y * mean_f;
  double lambda = 1;
  if (tune) {
    const double mean_all = (m.sum_f + m.sum_u) / (dn + dbig);
    const double var_all =
        std::max((m.sum_ff + m.sum_uu - (dn + dbig) * mean_all * mean_all) /
                     (dn + dbig - 1),
                 0.0);
    lambda = var_all > 0 ? cov / ((1 + dn / dbig) * var_all) : 0;
    lambda = std::clamp(lambda, 0.0, 1.0);
  }
  PpiMeanEstimate e;
  e.lambda = lambda;
  e.estimate = lambda * mean_u + (mean_y - lambda * mean_f);
  const double var_u = std::max(m.sum_uu / dbig - mean_u * mean_u, 0.0);
  const double var_r =
      std::max(var_y + lambda * lambda * var_f - 2 * lambda * cov, 0.0);
  const double z = NormalQuantile(1 - (1 - confidence) / 2);
  e.std_error = std::sqrt(lambda * lambda * var_u / dbig + var_r / dn);
  e.lower = e.estimate - z * e.std_error;
  e.upper = e.estimate + z * e.std_error;
  e.classical = mean_y;
  e.classical_std_error = std::sqrt(var_y * dn / (dn - 1) / dn);
  e.classical_lower = mean_y - z * e.classical_std_error;
  e.classical_upper = mean_y + z * e.classical_std_error;
  e.naive = (m.sum_f + m.sum_u) / (dn + dbig);
  return e;
}

}  // namespace rankwatch::metrics
