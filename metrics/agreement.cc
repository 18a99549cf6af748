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

// The jackknife's leave-one-out alphas without recomputing each from
// scratch (issue 41: recomputing is O(k^2) per figure, O(k^3) for the
// ordinal metric, so O(k^5) in all; 8 judges grading 0-63 made a scrape
// take 13 s). Leaving out one item graded (i, j) takes one from o[i][j] and
// o[j][i] and one value from the margins of i and j; everything else stays.
//
// The interval and ordinal differences are squared differences of
// positions: (c - d)^2, and for the ordinal metric (P_c - P_d)^2 with P_c
// the midrank S_{c-1} + m_c / 2 (S the cumulative margins), since the
// values between c and d less half of theirs is P_d - P_c. Leaving the
// item out moves every position by a step s_c = [c > i] + [c > j] +
// ([c = i] + [c = j]) / 2 (none for interval), so with Q = P - s:
//   D' = sum o'_cd (Q_c - Q_d)^2
//      = D - 4 sum_c s_c R_c + sum o_cd (s_c - s_d)^2 - 2 [i != j] X_ij,
//   E' = sum m'_c m'_d (Q_c - Q_d)^2
//      = E - 4 sum_c s_c G_c + 2 (T sum m s^2 - (sum m s)^2)
//        - 2 sum_d m_d (X_id + X_jd) + 2 [i != j] X_ij,
// where X_cd = (Q_c - Q_d)^2, R_c = sum_d o_cd (P_c - P_d) and G_c =
// m_c (T P_c - sum_d m_d P_d), both computed once. Nominal: D' = D - 2
// [i != j], E' = E - 2 (T - m_i + T - m_j) + 2 [i != j]. Each figure is
// then O(k) after O(k^2) once: O(k^3) in all instead of O(k^5), the same
// value in exact arithmetic (the counts are integers, the positions
// multiples of 1/2: exact in doubles while n^4 stays below 2^49 or so,
// beyond which both forms round).
class LeaveOneOut {
 public:
  LeaveOneOut(const std::vector<double>& o, int k, AlphaMetric metric)
      : o_(o), k_(k), metric_(metric) {
    const size_t n = static_cast<size_t>(k);
    m_.assign(n, 0.0);
    for (size_t c = 0; c < n; ++c) {
      for (size_t d = 0; d < n; ++d) m_[c] += o_[c * n + d];
      total_ += m_[c];
      if (m_[c] > 0) ++nonzero_;
    }
    pos_.assign(n, 0.0);
    double below = 0;
    for (size_t c = 0; c < n; ++c) {
      pos_[c] = metric_ == AlphaMetric::kOrdinal ? below + m_[c] / 2
                                                 : static_cast<double>(c);
      below += m_[c];
    }
    // Row suffix sums of o: sum_{d >= e} o_cd at [c * (k + 1) + e].
    suffix_.assign(n * (n + 1), 0.0);
    for (size_t c = 0; c < n; ++c) {
      for (size_t e = n; e-- > 0;) {
        suffix_[c * (n + 1) + e] = suffix_[c * (n + 1) + e + 1] + o_[c * n + e];
      }
    }
    double weighted = 0;  // sum_d m_d P_d.
    for (size_t c = 0; c < n; ++c) weighted += m_[c] * pos_[c];
    r_.assign(n, 0.0);
    g_.assign(n, 0.0);
    for (size_t c = 0; c < n; ++c) {
      for (size_t d = 0; d < n; ++d) {
        if (c == d) continue;
        r_[c] += o_[c * n + d] * (pos_[c] - pos_[d]);
        observed_ += o_[c * n + d] * Difference(c, d);
        expected_ += m_[c] * m_[d] * Difference(c, d);
      }
      g_[c] = m_[c] * (total_ * pos_[c] - weighted);
    }
    s_.assign(n, 0.0);
    q_.assign(n, 0.0);
  }

  // Alpha without one item graded (i, j); nullopt without expected
  // disagreement then.
  std::optional<double> Without(int i, int j) {
    if (i > j) std::swap(i, j);  // The matrix is symmetric.
    const size_t a = static_cast<size_t>(i), b = static_cast<size_t>(j);
    int nonzero = nonzero_;
    if (a == b) {
      if (m_[a] == 2) --nonzero;
    } else {
      nonzero -= (m_[a] == 1 ? 1 : 0) + (m_[b] == 1 ? 1 : 0);
    }
    const double total = total_ - 2;
    // With one category left (or none), D_e is 0, as AlphaOf finds.
    if (total < 2 || nonzero < 2) return std::nullopt;
    double observed = 0, expected = 0;
    if (metric_ == AlphaMetric::kNominal) {
      const double apart = a == b ? 0.0 : 2.0;
      observed = observed_ - apart;
      expected = expected_ - 2 * ((total_ - m_[a]) + (total_ - m_[b])) + apart;
    } else {
      Positions(a, b, &observed, &expected);
    }
    if (!(expected > 0)) return std::nullopt;
    return 1 - (total - 1) * observed / expected;
  }

 private:
  double Difference(size_t c, size_t d) const {
    if (metric_ == AlphaMetric::kNominal) return 1.0;
    const double v = pos_[c] - pos_[d];
    return v * v;
  }

  // D' and E' of the interval and ordinal metrics (see above).
  void Positions(size_t a, size_t b, double* observed, double* expected) {
    const size_t n = static_cast<size_t>(k_);
    const bool moves = metric_ == AlphaMetric::kOrdinal;
    double sr = 0, sg = 0, ms = 0, ms2 = 0, oss = 0;
    for (size_t c = 0; c < n; ++c) {
      s_[c] = !moves ? 0.0
                     : (c > a ? 1.0 : 0.0) + (c > b ? 1.0 : 0.0) +
                           ((c == a ? 0.5 : 0.0) + (c == b ? 0.5 : 0.0));
      q_[c] = pos_[c] - s_[c];
    }
    if (moves) {
      for (size_t c = 0; c < n; ++c) {
        sr += s_[c] * r_[c];
        sg += s_[c] * g_[c];
        ms += m_[c] * s_[c];
        ms2 += m_[c] * s_[c] * s_[c];
        // sum_d o_cd s_d, from the row's suffix sums.
        const double* row = &suffix_[c * (n + 1)];
        const double os =
            row[a + 1] + row[b + 1] + (o_[c * n + a] + o_[c * n + b]) / 2;
        oss += s_[c] * os;
      }
    }
    const double xab = (q_[a] - q_[b]) * (q_[a] - q_[b]);
    const double apart = a == b ? 0.0 : 2 * xab;
    *observed = observed_ - 4 * sr + (2 * ms2 - 2 * oss) - apart;
    double rows = 0;
    for (size_t d = 0; d < n; ++d) {
      rows += m_[d] * ((q_[a] - q_[d]) * (q_[a] - q_[d]) +
                       (q_[b] - q_[d]) * (q_[b] - q_[d]));
    }
    *expected =
        expected_ - 4 * sg + 2 * (total_ * ms2 - ms * ms) - 2 * rows + apart;
  }

  const std::vector<double>& o_;
  const int k_;
  const AlphaMetric metric_;
  std::vector<double> m_;       // Margins.
  std::vector<double> pos_;     // P_c.
  std::vector<double> suffix_;  // Row suffix sums of o.
  std::vector<double> r_, g_;   // R_c, G_c.
  std::vector<double> s_, q_;   // Scratch: s_c and Q_c of one figure.
  double total_ = 0;
  double observed_ = 0;  // D.
  double expected_ = 0;  // E.
  int nonzero_ = 0;      // Categories with a value.
};

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
  // so there are at most k^2 distinct leave-one-out figures, each O(k)
  // (LeaveOneOut).
  const double n = static_cast<double>(t->n);
  std::vector<std::pair<double, double>> loo;  // (alpha_(i), items alike)
  LeaveOneOut without(o, k, metric);
  bool defined = true;
  for (int i = 0; i < k && defined; ++i) {
    for (int j = 0; j < k && defined; ++j) {
      const double m = t->counts[static_cast<size_t>(i * k + j)];
      if (m == 0) continue;
      const std::optional<double> a = without.Without(i, j);
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
