#include "metrics/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "metrics/ab_stats.h"

namespace rankwatch::metrics {
namespace {

// SciPy's kendalltau(method='auto') uses the exact distribution without
// ties up to this many pairs (scipy/stats/_stats_py.py, 1.10).
constexpr size_t kKendallExactMaxSize = 33;

// OrderGradeCorrelations counts per grade up to this many distinct grade
// values between the lowest and highest (32 KiB of counts each).
constexpr int64_t kDenseGradeRange = 4096;

bool Comparable(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) return false;
  }
  return true;
}

// Statistics of the groups of equal values in `sorted` (ascending), as
// SciPy's count_rank_tie: the tied pairs sum t (t - 1) / 2, and the sums
// t (t - 1) (t - 2) and t (t - 1) (2 t + 5) of the variance formula.
struct TieStats {
  int64_t pairs = 0;
  double v0 = 0;
  double v1 = 0;
};

TieStats CountTies(std::span<const double> sorted) {
  TieStats stats;
  size_t start = 0;
  for (size_t i = 1; i <= sorted.size(); ++i) {
    if (i < sorted.size() && sorted[i] == sorted[start]) continue;
    const auto t = static_cast<int64_t>(i - start);
    const auto td = static_cast<double>(t);
    stats.pairs += t * (t - 1) / 2;
    stats.v0 += td * (td - 1) * (td - 2);
    stats.v1 += td * (td - 1) * (2 * td + 5);
    start = i;
  }
  return stats;
}

// Number of pairs i < j with values[i] > values[j] (strictly), by merge
// sort; sorts `values`.
int64_t CountInversions(std::span<double> values, std::span<double> scratch,
                        size_t begin, size_t end) {
  if (end - begin < 2) return 0;
  const size_t middle = begin + (end - begin) / 2;
  int64_t inversions = CountInversions(values, scratch, begin, middle) +
                       CountInversions(values, scratch, middle, end);
  size_t left = begin;
  size_t right = middle;
  size_t out = begin;
  while (left < middle && right < end) {
    if (values[right] < values[left]) {
      inversions += static_cast<int64_t>(middle - left);
      scratch[out++] = values[right++];
    } else {
      scratch[out++] = values[left++];
    }
  }
  while (left < middle) scratch[out++] = values[left++];
  while (right < end) scratch[out++] = values[right++];
  std::copy(scratch.begin() + static_cast<std::ptrdiff_t>(begin),
            scratch.begin() + static_cast<std::ptrdiff_t>(end),
            values.begin() + static_cast<std::ptrdiff_t>(begin));
  return inversions;
}

double Factorial(int64_t n) {
  double product = 1;
  for (int64_t k = 2; k <= n; ++k) product *= static_cast<double>(k);
  return product;
}

// Two-sided exact p-value of Kendall's statistic without ties: n items
// with c concordant pairs (SciPy's _kendall_p_exact, after Kendall 1970:
// the number of permutations of n with at most c inversions, by the
// recurrence of their generating function prod_j (1 + q + ... + q^(j-1))).
// Only called with n <= 33 or min(c, P - c) <= 1.
double KendallExactPValue(int64_t n, int64_t c) {
  c = std::min(c, n * (n - 1) / 2 - c);
  double p = 1;
  if (n <= 2) {
    p = 1;
  } else if (c == 0) {
    p = n < 171 ? 2 / Factorial(n) : 0;
  } else if (c == 1) {
    p = n < 172 ? 2 / Factorial(n - 1) : 0;
  } else if (4 * c == n * (n - 1)) {
    p = 1;
  } else {
    // counts[k]: permutations of j items with exactly k inversions, k <= c.
    std::vector<double> counts(static_cast<size_t>(c) + 1, 0.0);
    counts[0] = counts[1] = 1;
    for (int64_t j = 3; j <= n; ++j) {
      std::partial_sum(counts.begin(), counts.end(), counts.begin());
      if (j <= c) {
        const std::vector<double> prefix = counts;
        for (int64_t k = j; k <= c; ++k) {
          counts[static_cast<size_t>(k)] -= prefix[static_cast<size_t>(k - j)];
        }
      }
    }
    p = 2 * std::accumulate(counts.begin(), counts.end(), 0.0) / Factorial(n);
  }
  return std::clamp(p, 0.0, 1.0);
}

// Ranks 1..n into `ranks`, ties taking their average
// (scipy.stats.rankdata's default); `order` is scratch.
void AverageRanks(std::span<const double> values,
                  std::vector<size_t>* order_out,
                  std::vector<double>* ranks_out) {
  std::vector<size_t>& order = *order_out;
  order.resize(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double>& ranks = *ranks_out;
  ranks.resize(values.size());
  size_t start = 0;
  for (size_t i = 1; i <= order.size(); ++i) {
    if (i < order.size() && values[order[i]] == values[order[start]]) {
      continue;
    }
    // Positions start..i-1 hold ranks start+1..i; their average.
    const double rank = (static_cast<double>(start + 1 + i)) / 2;
    for (size_t k = start; k < i; ++k) ranks[order[k]] = rank;
    start = i;
  }
}

bool Constant(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(),
                     [&](double v) { return v == values[0]; });
}

// The pair counts of Kendall's tau-b, in O(n log n) (Knight, JASA 61(314),
// 1966): sort by x then y, count the joint and x ties in runs, count the
// discordant pairs as inversions of y by merge sort, then the y ties in the
// now sorted y.
struct KendallCounts {
  TieStats x_ties;
  TieStats y_ties;
  int64_t joint_ties = 0;
  int64_t discordant = 0;
  int64_t total = 0;  // n (n - 1) / 2.
};

KendallCounts CountKendall(std::span<const double> x, std::span<const double> y,
                           RankCorrelationScratch* scratch) {
  const size_t size = x.size();
  std::vector<size_t>& order = scratch->order;
  order.resize(size);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
  });
  std::vector<double>& xs = scratch->first;
  std::vector<double>& ys = scratch->second;
  xs.resize(size);
  ys.resize(size);
  for (size_t i = 0; i < size; ++i) {
    xs[i] = x[order[i]];
    ys[i] = y[order[i]];
  }
  KendallCounts counts;
  // Pairs tied in both: runs of equal (x, y) in the lexicographic order.
  size_t start = 0;
  for (size_t i = 1; i <= size; ++i) {
    if (i < size && xs[i] == xs[start] && ys[i] == ys[start]) continue;
    const auto t = static_cast<int64_t>(i - start);
    counts.joint_ties += t * (t - 1) / 2;
    start = i;
  }
  counts.x_ties = CountTies(xs);
  // Sorted by x then y, a pair is discordant exactly when its y values are
  // inverted: pairs tied in x are in y order, pairs tied in y not inverted.
  scratch->third.resize(size);
  counts.discordant = CountInversions(ys, scratch->third, 0, size);
  counts.y_ties = CountTies(ys);  // ys is now sorted.
  const auto n = static_cast<int64_t>(size);
  counts.total = n * (n - 1) / 2;
  return counts;
}

// tau-b from the counts; nullopt when x or y is constant.
std::optional<double> TauB(const KendallCounts& k) {
  if (k.x_ties.pairs == k.total || k.y_ties.pairs == k.total) {
    return std::nullopt;
  }
  // total = C + D + (X - J) + (Y - J) + J, J the joint ties.
  const int64_t c_minus_d = k.total - k.x_ties.pairs - k.y_ties.pairs +
                            k.joint_ties - 2 * k.discordant;
  return std::clamp(
      static_cast<double>(c_minus_d) /
          std::sqrt(static_cast<double>(k.total - k.x_ties.pairs)) /
          std::sqrt(static_cast<double>(k.total - k.y_ties.pairs)),
      -1.0, 1.0);
}

// Spearman's rho from the average ranks of x and y (into scratch->first and
// scratch->second); nullopt when x or y is constant.
std::optional<double> Rho(std::span<const double> x, std::span<const double> y,
                          RankCorrelationScratch* scratch) {
  if (Constant(x) || Constant(y)) return std::nullopt;
  AverageRanks(x, &scratch->order, &scratch->first);
  AverageRanks(y, &scratch->order, &scratch->second);
  const std::vector<double>& rx = scratch->first;
  const std::vector<double>& ry = scratch->second;
  const double n = static_cast<double>(x.size());
  const double mean_rank = (n + 1) / 2;
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    const double dx = rx[i] - mean_rank;
    const double dy = ry[i] - mean_rank;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

}  // namespace

std::optional<double> KendallTauBCoefficient(std::span<const double> x,
                                             std::span<const double> y,
                                             RankCorrelationScratch* scratch) {
  if (!Comparable(x, y)) return std::nullopt;
  return TauB(CountKendall(x, y, scratch));
}

std::optional<double> SpearmanRhoCoefficient(std::span<const double> x,
                                             std::span<const double> y,
                                             RankCorrelationScratch* scratch) {
  if (!Comparable(x, y)) return std::nullopt;
  return Rho(x, y, scratch);
}

OrderGradeCorrelation OrderGradeCorrelations(std::span<const int32_t> grades,
                                             RankCorrelationScratch* scratch) {
  const size_t size = grades.size();
  if (size < 2) return {};
  const auto [min_it, max_it] =
      std::minmax_element(grades.begin(), grades.end());
  const int64_t lowest = *min_it;
  const int64_t range = int64_t{*max_it} - lowest + 1;
  if (range == 1) return {};  // Constant grades.
  if (range > kDenseGradeRange) {
    scratch->x.resize(size);
    scratch->y.resize(size);
    for (size_t i = 0; i < size; ++i) {
      scratch->x[i] = -static_cast<double>(i + 1);
      scratch->y[i] = static_cast<double>(grades[i]);
    }
    // Copies: the coefficient functions reuse the scratch's other buffers.
    return {SpearmanRhoCoefficient(scratch->x, scratch->y, scratch),
            KendallTauBCoefficient(scratch->x, scratch->y, scratch)};
  }
  const auto slot = [&](int32_t g) { return static_cast<size_t>(g - lowest); };
  std::vector<int64_t>& counts = scratch->counts;
  std::vector<int64_t>& tree = scratch->tree;
  counts.assign(static_cast<size_t>(range), 0);
  tree.assign(static_cast<size_t>(range) + 1, 0);
  // Seen items with grade slot < s: the Fenwick prefix sum over 1..s.
  const auto seen_below = [&](size_t s) {
    int64_t sum = 0;
    for (size_t i = s; i > 0; i &= i - 1) sum += tree[i];
    return sum;
  };
  // Kendall: x = -position has no ties and falls down the list, so an
  // earlier item with a higher grade is a concordant pair, one with a lower
  // grade a discordant pair.
  int64_t c_minus_d = 0;
  for (size_t j = 0; j < size; ++j) {
    const size_t s = slot(grades[j]);
    const int64_t below = seen_below(s);
    const int64_t above = static_cast<int64_t>(j) - seen_below(s + 1);
    c_minus_d += above - below;
    for (size_t i = s + 1; i < tree.size(); i += i & (~i + 1)) ++tree[i];
    ++counts[s];
  }
  const auto n = static_cast<int64_t>(size);
  const int64_t total = n * (n - 1) / 2;
  int64_t y_tie_pairs = 0;
  for (const int64_t t : counts) y_tie_pairs += t * (t - 1) / 2;
  OrderGradeCorrelation result;
  // As TauB with no x ties, in the same order of operations.
  result.kendall_tau = std::clamp(
      static_cast<double>(c_minus_d) / std::sqrt(static_cast<double>(total)) /
          std::sqrt(static_cast<double>(total - y_tie_pairs)),
      -1.0, 1.0);
  // Spearman: the average rank of grade slot s is (items below) +
  // (count + 1) / 2, kept in `tree` now that Kendall is done; x's rank at
  // position j is n - j. Summed as Rho sums.
  int64_t below = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    tree[s] = 2 * below + counts[s] + 1;  // Twice the average rank.
    below += counts[s];
  }
  const double nd = static_cast<double>(n);
  const double mean_rank = (nd + 1) / 2;
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (size_t j = 0; j < size; ++j) {
    const double dx =
        static_cast<double>(n - static_cast<int64_t>(j)) - mean_rank;
    const double dy =
        static_cast<double>(tree[slot(grades[j])]) / 2 - mean_rank;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  result.spearman = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  return result;
}

std::optional<RankCorrelation> KendallTauB(std::span<const double> x,
                                           std::span<const double> y) {
  if (!Comparable(x, y)) return std::nullopt;
  RankCorrelationScratch scratch;
  const KendallCounts counts = CountKendall(x, y, &scratch);
  const std::optional<double> tau = TauB(counts);
  if (!tau) return std::nullopt;
  const TieStats& x_ties = counts.x_ties;
  const TieStats& y_ties = counts.y_ties;
  const int64_t discordant = counts.discordant;
  const int64_t total = counts.total;
  const size_t size = x.size();
  const auto n = static_cast<int64_t>(size);
  const int64_t c_minus_d =
      total - x_ties.pairs - y_ties.pairs + counts.joint_ties - 2 * discordant;
  RankCorrelation result;
  result.coefficient = *tau;
  const bool no_ties = x_ties.pairs == 0 && y_ties.pairs == 0;
  if (no_ties && (size <= kKendallExactMaxSize ||
                  std::min(discordant, total - discordant) <= 1)) {
    result.p_value = KendallExactPValue(n, total - discordant);
    return result;
  }
  // Variance of C - D under independence with ties (Kendall 1970, eq. 4.4).
  const double nd = static_cast<double>(n);
  const double m = nd * (nd - 1);
  double variance = (m * (2 * nd + 5) - x_ties.v1 - y_ties.v1) / 18 +
                    2 * static_cast<double>(x_ties.pairs) *
                        static_cast<double>(y_ties.pairs) / m;
  if (n > 2) variance += x_ties.v0 * y_ties.v0 / (9 * m * (nd - 2));
  const double z = static_cast<double>(c_minus_d) / std::sqrt(variance);
  result.p_value = 2 * NormalCdf(-std::fabs(z));
  return result;
}

std::optional<RankCorrelation> SpearmanRho(std::span<const double> x,
                                           std::span<const double> y) {
  if (!Comparable(x, y)) return std::nullopt;
  RankCorrelationScratch scratch;
  const std::optional<double> coefficient = Rho(x, y, &scratch);
  if (!coefficient) return std::nullopt;
  RankCorrelation result;
  result.coefficient = *coefficient;
  const double n = static_cast<double>(x.size());
  const double df = n - 2;
  if (df < 1) {
    result.p_value = std::numeric_limits<double>::quiet_NaN();
    return result;
  }
  const double rho = result.coefficient;
  const double t =
      std::fabs(rho) == 1
          ? std::copysign(std::numeric_limits<double>::infinity(), rho)
          : rho * std::sqrt(df / ((rho + 1) * (1 - rho)));
  result.p_value = StudentTTwoSidedPValue(t, df);
  return result;
}

std::optional<double> TauAp(std::span<const double> reference,
                            std::span<const double> estimated) {
  const size_t n = reference.size();
  if (n != estimated.size() || n < 2) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(reference[i]) || std::isnan(estimated[i])) {
      return std::nullopt;
    }
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return estimated[a] > estimated[b];
  });
  // O(N^2): N is a number of systems.
  double sum = 0;
  for (size_t i = 1; i < n; ++i) {
    double correct = 0;
    for (size_t j = 0; j < i; ++j) {
      const double above = reference[order[j]], here = reference[order[i]];
      correct += above > here ? 1.0 : above == here ? 0.5 : 0.0;
    }
    sum += correct / static_cast<double>(i);
  }
  return 2 * sum / static_cast<double>(n - 1) - 1;
}

ExactRankCorrelations ExactPermutationCorrelations(std::span<const double> x,
                                                   std::span<const double> y) {
  ExactRankCorrelations out;
  if (x.size() != y.size() || x.size() > kMaxExactPermutationN) return out;
  RankCorrelationScratch scratch;
  const std::optional<double> tau = KendallTauBCoefficient(x, y, &scratch);
  const std::optional<double> rho = SpearmanRhoCoefficient(x, y, &scratch);
  // Orderings whose coefficient equals the observed one up to rounding
  // count as extreme: the same ranks summed in another order.
  constexpr double kSlack = 1e-12;
  std::vector<size_t> order(y.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<double> permuted(y.size());
  int64_t orderings = 0;
  int64_t tau_extreme = 0;
  int64_t rho_extreme = 0;
  do {
    for (size_t i = 0; i < order.size(); ++i) permuted[i] = y[order[i]];
    ++orderings;
    if (tau) {
      const std::optional<double> t =
          KendallTauBCoefficient(x, permuted, &scratch);
      tau_extreme += t && std::abs(*t) >= std::abs(*tau) - kSlack;
    }
    if (rho) {
      const std::optional<double> r =
          SpearmanRhoCoefficient(x, permuted, &scratch);
      rho_extreme += r && std::abs(*r) >= std::abs(*rho) - kSlack;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  const auto share = [orderings](int64_t n) {
    return static_cast<double>(n) / static_cast<double>(orderings);
  };
  if (tau) out.kendall = RankCorrelation{*tau, share(tau_extreme)};
  if (rho) out.spearman = RankCorrelation{*rho, share(rho_extreme)};
  return out;
}

}  // namespace rankwatch::metrics
