#include "metrics/agreement.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "metrics/ab_stats.h"

namespace rankwatch::metrics {

namespace {

// The two judges' grades as a k x k table of counts, k the spread of the
// grades: counts[(x - min) * k + (y - min)].
struct Table {
  int k = 0;
  int64_t n = 0;
  std::vector<double> counts;
};

std::optional<Table> Tabulate(const GradePairs& pairs) {
  if (pairs.items() < 2) return std::nullopt;
  int64_t lo = INT64_MAX;
  int64_t hi = INT64_MIN;
  for (const auto& [xy, count] : pairs.counts()) {
    lo = std::min<int64_t>({lo, xy.first, xy.second});
    hi = std::max<int64_t>({hi, xy.first, xy.second});
  }
  if (hi - lo + 1 > kMaxAgreementCategories) return std::nullopt;
  Table t;
  t.k = static_cast<int>(hi - lo + 1);
  t.n = pairs.items();
  t.counts.assign(static_cast<size_t>(t.k * t.k), 0.0);
  for (const auto& [xy, count] : pairs.counts()) {
    t.counts[static_cast<size_t>((xy.first - lo) * t.k + (xy.second - lo))] =
        static_cast<double>(count);
  }
  return t;
}

std::optional<GradePairs> PairsOf(std::span<const int> x,
                                  std::span<const int> y) {
  if (x.size() != y.size()) return std::nullopt;
  GradePairs pairs;
  for (size_t i = 0; i < x.size(); ++i) pairs.Add(x[i], y[i]);
  return pairs;
}

double Z(double confidence) { return NormalQuantile(1 - (1 - confidence) / 2); }

double KappaWeight(KappaWeights weights, int i, int j, int k) {
  const double d = std::abs(i - j) / static_cast<double>(k - 1);
  switch (weights) {
    case KappaWeights::kNone:
      return i == j ? 1.0 : 0.0;
    case KappaWeights::kLinear:
      return 1 - d;
    case KappaWeights::kQuadratic:
      return 1 - d * d;
  }
  return 0;
}

// Alpha from a symmetric coincidence matrix `o` (k x k); nullopt when there
// is no expected disagreement.
std::optional<double> AlphaOf(const std::vector<double>& o, int k,
                              AlphaMetric metric) {
  std::vector<double> margin(static_cast<size_t>(k), 0.0);
  double total = 0;
  for (int c = 0; c < k; ++c) {
    for (int d = 0; d < k; ++d) margin[c] += o[static_cast<size_t>(c * k + d)];
    total += margin[c];
  }
  if (total < 2) return std::nullopt;
  auto delta = [&](int c, int d) {
    switch (metric) {
      case AlphaMetric::kNominal:
        return c == d ? 0.0 : 1.0;
      case AlphaMetric::kInterval:
        return static_cast<double>((c - d) * (c - d));
      case AlphaMetric::kOrdinal: {
        const int a = std::min(c, d), b = std::max(c, d);
        double between = 0;
        for (int g = a; g <= b; ++g) between += margin[g];
        const double v = between - (margin[a] + margin[b]) / 2;
        return v * v;
      }
    }
    return 0.0;
  };
  double observed = 0, expected = 0;
  for (int c = 0; c < k; ++c) {
    for (int d = 0; d < k; ++d) {
      if (c == d) continue;  // Every difference function is 0 there.
      const double dl = delta(c, d);
      observed += o[static_cast<size_t>(c * k + d)] * dl;
      expected += margin[c] * margin[d] * dl;
    }
  }
  if (!(expected > 0)) return std::nullopt;
  return 1 - (total - 1) * observed / expected;
}

}  // namespace

void GradePairs::Add(int x, int y, int64_t delta) {
  int64_t& count = counts_[{x, y}];
  const int64_t before = count;
  count = std::max<int64_t>(0, count + delta);
  items_ += count - before;
  if (count == 0) counts_.erase({x, y});
}

void GradePairs::Merge(const GradePairs& other) {
  for (const auto& [xy, count] : other.counts_) Add(xy.first, xy.second, count);
}

std::optional<AgreementEstimate> CohenKappa(std::span<const int> x,
                                            std::span<const int> y,
                                            KappaWeights weights,
                                            double confidence) {
  const std::optional<GradePairs> pairs = PairsOf(x, y);
  if (!pairs) return std::nullopt;
  return CohenKappa(*pairs, weights, confidence);
}

std::optional<AgreementEstimate> KrippendorffAlpha(std::span<const int> x,
                                                   std::span<const int> y,
                                                   AlphaMetric metric,
                                                   double confidence) {
  const std::optional<GradePairs> pairs = PairsOf(x, y);
  if (!pairs) return std::nullopt;
  return KrippendorffAlpha(*pairs, metric, confidence);
}

std::optional<AgreementEstimate> CohenKappa(const GradePairs& pairs,
                                            KappaWeights weights,
                                            double confidence) {
  const std::optional<Table> t = Tabulate(pairs);
  if (!t || t->k < 2) return std::nullopt;
  const int k = t->k;
  const double n = static_cast<double>(t->n);
  std::vector<double> row(static_cast<size_t>(k), 0.0);
  std::vector<double> col(static_cast<size_t>(k), 0.0);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double p = t->counts[static_cast<size_t>(i * k + j)] / n;
      row[i] += p;
      col[j] += p;
    }
  }
  double observed = 0, expected = 0;
  std::vector<double> wbar_row(static_cast<size_t>(k), 0.0);
  std::vector<double> wbar_col(static_cast<size_t>(k), 0.0);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double w = KappaWeight(weights, i, j, k);
      observed += w * t->counts[static_cast<size_t>(i * k + j)] / n;
      expected += w * row[i] * col[j];
      wbar_row[i] += col[j] * w;
      wbar_col[j] += row[i] * w;
    }
  }
  if (!(1 - expected > 1e-15)) return std::nullopt;
  const double kappa = (observed - expected) / (1 - expected);
  double sum = 0;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double p = t->counts[static_cast<size_t>(i * k + j)] / n;
      const double d = KappaWeight(weights, i, j, k) -
                       (wbar_row[i] + wbar_col[j]) * (1 - kappa);
      sum += p * d * d;
    }
  }
  const double c = kappa - expected * (1 - kappa);
  const double variance =
      std::max(0.0, sum - c * c) / (n * (1 - expected) * (1 - expected));
  AgreementEstimate e;
  e.estimate = kappa;
  e.std_error = std::sqrt(variance);
  e.lower = kappa - Z(confidence) * e.std_error;
  e.upper = std::min(1.0, kappa + Z(confidence) * e.std_error);
  return e;
}

std::optional<AgreementEstimate> KrippendorffAlpha(const GradePairs& pairs,
                                                   AlphaMetric metric,
                                                   double confidence) {
  const std::optional<Table> t = Tabulate(pairs);
  if (!t) return std::nullopt;
  const int k = t->k;
  // Coincidences: each item is pairable both ways.
  std::vector<double> o(t->counts.size(), 0.0);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double c = t->counts[static_cast<size_t>(i * k + j)];
      o[static_cast<size_t>(i * k + j)] += c;
      o[static_cast<size_t>(j * k + i)] += c;
    }
  }
  const std::optional<double> alpha = AlphaOf(o, k, metric);
  if (!alpha) return std::nullopt;
  AgreementEstimate e;
  e.estimate = *alpha;
  // The jackknife: leaving out an item depends only on its pair of grades,
  // so there are at most k^2 distinct leave-one-out figures.
  const double n = static_cast<double>(t->n);
  std::vector<std::pair<double, double>> loo;  // (alpha_(i), items alike)
  bool defined = true;
  for (int i = 0; i < k && defined; ++i) {
    for (int j = 0; j < k && defined; ++j) {
      const double m = t->counts[static_cast<size_t>(i * k + j)];
      if (m == 0) continue;
      o[static_cast<size_t>(i * k + j)] -= 1;
      o[static_cast<size_t>(j * k + i)] -= 1;
      const std::optional<double> a = AlphaOf(o, k, metric);
      o[static_cast<size_t>(i * k + j)] += 1;
      o[static_cast<size_t>(j * k + i)] += 1;
      if (!a) defined = false;
      if (a) loo.emplace_back(*a, m);
    }
  }
  if (!defined) {
    e.std_error = e.lower = e.upper = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  double mean = 0;
  for (const auto& [a, m] : loo) mean += m * a;
  mean /= n;
  double squares = 0;
  for (const auto& [a, m] : loo) squares += m * (a - mean) * (a - mean);
  e.std_error = std::sqrt((n - 1) / n * squares);
  e.lower = e.estimate - Z(confidence) * e.std_error;
  e.upper = std::min(1.0, e.estimate + Z(confidence) * e.std_error);
  return e;
}

}  // namespace rankwatch::metrics
