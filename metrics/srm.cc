#include "metrics/srm.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "base/numeric.h"
#include "metrics/boost_policy.h"
#include "metrics/numeric_internal.h"

namespace rankwatch::metrics {
namespace {

using internal::DoublePolicy;
using ChiSquared = boost::math::chi_squared_distribution<double, DoublePolicy>;

// How far the shares may sum from 1: they come from a configured split
// normalized in double, so a few ulps, not a typo in the configuration.
constexpr double kShareSumTolerance = 1e-6;

bool ValidShares(std::span<const double> shares) {
  if (shares.size() < 2) return false;
  double total = 0;
  for (double share : shares) {
    if (!(share > 0) || !std::isfinite(share)) return false;
    total += share;
  }
  return std::fabs(total - 1) <= kShareSumTolerance;
}

bool ValidCounts(std::span<const int64_t> counts,
                 std::span<const double> shares) {
  if (counts.size() != shares.size()) return false;
  return std::all_of(counts.begin(), counts.end(),
                     [](int64_t n) { return n >= 0; });
}

// The total as a double: int64 counts may sum past INT64_MAX, and every
// formula below is in double anyway.
double Total(std::span<const int64_t> counts) {
  double total = 0;
  for (int64_t n : counts) total += static_cast<double>(n);
  return total;
}

double LogGamma(double x) { return boost::math::lgamma(x, DoublePolicy()); }

}  // namespace

SrmChiSquare TestSampleRatio(std::span<const int64_t> counts,
                             std::span<const double> shares) {
  SrmChiSquare result;
  if (!ValidShares(shares) || !ValidCounts(counts, shares)) return result;
  result.degrees_of_freedom = static_cast<int32_t>(shares.size() - 1);
  const double total = Total(counts);
  if (total == 0) {
    result.status = SrmStatus::kNoData;
    return result;
  }
  // Pearson's X^2 = sum (O_i - E_i)^2 / E_i with E_i = N share_i,
  // chi-square with arms - 1 degrees of freedom under the split (the
  // shares are given, not estimated).
  double statistic = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = total * shares[i];
    const double deviation = static_cast<double>(counts[i]) - expected;
    statistic += deviation * deviation / expected;
  }
  result.status = SrmStatus::kOk;
  result.statistic = statistic;
  // The upper tail by the complement, which keeps its relative accuracy
  // when tiny (1 - cdf would round to 0 below about 1e-16).
  result.p_value = boost::math::cdf(boost::math::complement(
      ChiSquared(result.degrees_of_freedom), statistic));
  return result;
}

double ChiSquareCritical(int32_t degrees_of_freedom, double level) {
  if (degrees_of_freedom < 1 || !(level > 0) || !(level < 1)) return kNaN;
  return boost::math::quantile(
      boost::math::complement(ChiSquared(degrees_of_freedom), level));
}

double SrmLogBayesFactor(std::span<const int64_t> counts,
                         std::span<const double> shares, double concentration) {
  if (!ValidShares(shares) || !ValidCounts(counts, shares) ||
      !(concentration > 0) || !std::isfinite(concentration)) {
    return kNaN;
  }
  // The Dirichlet-multinomial marginal likelihood of the counts over the
  // multinomial one under the split (Lindon and Malek, NeurIPS
  // 2022): the multinomial coefficients cancel, leaving
  //   B(alpha + n) / B(alpha) / prod share_i^n_i
  // with B the multivariate beta function. Order-free, so it can be
  // computed from the totals at any look; for sequential increments it is
  // the product of the per-look posterior-predictive ratios that the
  // ssrm-test package accumulates.
  double alpha_total = 0;
  double log_bf = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double alpha = concentration * shares[i];
    const double n = static_cast<double>(counts[i]);
    alpha_total += alpha;
    if (counts[i] == 0) continue;  // Adds lgamma(a) - lgamma(a) - 0.
    log_bf += LogGamma(alpha + n) - LogGamma(alpha) - n * std::log(shares[i]);
  }
  const double total = Total(counts);
  if (total == 0) return 0;
  log_bf += LogGamma(alpha_total) - LogGamma(alpha_total + total);
  return log_bf;
}

SequentialSrmTest::SequentialSrmTest(std::vector<double> shares,
                                     double concentration)
    : shares_(std::move(shares)), concentration_(concentration) {}

SrmStatus SequentialSrmTest::Update(std::span<const int64_t> counts) {
  if (!ValidShares(shares_) || !ValidCounts(counts, shares_) ||
      !(concentration_ > 0) || !std::isfinite(concentration_)) {
    return SrmStatus::kInvalidInput;
  }
  if (!last_counts_.empty()) {
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] < last_counts_[i]) return SrmStatus::kInvalidInput;
    }
  }
  if (Total(counts) == 0) return SrmStatus::kNoData;
  const double log_bf = SrmLogBayesFactor(counts, shares_, concentration_);
  if (std::isnan(log_bf)) return SrmStatus::kInvalidInput;
  last_counts_.assign(counts.begin(), counts.end());
  ++looks_;
  // min(1, 1 / BF) = exp(-max(0, log BF)); the running minimum over looks
  // is the always-valid p-value, since 1 / BF is the inverse of a
  // nonnegative martingale under the split (Ville's inequality).
  p_value_ = std::min(p_value_, std::exp(-std::max(0.0, log_bf)));
  return SrmStatus::kOk;
}

void SequentialSrmTest::Reset() {
  last_counts_.clear();
  p_value_ = 1;
  looks_ = 0;
}

}  // namespace rankwatch::metrics
