// Rank correlation of two paired samples: Kendall's tau-b and Spearman's
// rho with their two-sided p-values, computed as SciPy 1.10 computes them
// (scipy.stats.kendalltau(x, y) with its defaults variant='b',
// method='auto', and scipy.stats.spearmanr(x, y)). `rankwatch compare` uses
// them to ask whether two measures order systems alike (Voorhees, SIGIR
// 1998, used Kendall's tau for this) and whether two runs score queries
// alike.
//
// Both return nullopt, "undefined", where SciPy returns NaN for the
// coefficient: the spans differ in size, fewer than two pairs, a value is
// NaN, or either sample is constant. Infinite values are ranked like any
// other.
//
// KendallTauBCoefficient and SpearmanRhoCoefficient compute the
// coefficients alone into caller-owned scratch buffers, so that the
// ranking-metric engine (metrics/measures.h: the per-list `spearman` and
// `kendall_tau` measures) does not allocate per list once warmed up.
//
// Pure functions; thread-safe (a scratch buffer belongs to one thread).
#ifndef RANKWATCH_METRICS_RANK_CORRELATION_H_
#define RANKWATCH_METRICS_RANK_CORRELATION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace rankwatch::metrics {

struct RankCorrelation {
  // In [-1, 1].
  double coefficient = 0;
  // Two-sided p-value of the hypothesis of no association. NaN only where
  // SciPy's is too (spearmanr with two pairs: no degrees of freedom).
  double p_value = 0;
};

// Kendall's tau-b (Kendall, Biometrika 33(3), 1945): (C - D) /
// sqrt((P - X) (P - Y)), with C and D the concordant and discordant pairs,
// P = n (n - 1) / 2, X and Y the pairs tied in x and in y. The p-value is
// exact when there are no ties and n <= 33 (or C or D is at most 1), from
// the distribution of the number of inversions (Kendall, Rank Correlation
// Methods, 4th ed., 1970); otherwise the normal approximation of C - D with
// the tie-corrected variance (Kendall 1970, eq. 4.4). O(n log n).
[[nodiscard]] std::optional<RankCorrelation> KendallTauB(
    std::span<const double> x, std::span<const double> y);

// Spearman's rho (Spearman, Am. J. Psychol. 15(1), 1904): Pearson's
// correlation of the ranks, tied values taking their average rank. The
// p-value treats t = rho sqrt((n - 2) / ((1 + rho) (1 - rho))) as Student's
// t with n - 2 degrees of freedom (0 when |rho| = 1 and n > 2; NaN when
// n = 2).
[[nodiscard]] std::optional<RankCorrelation> SpearmanRho(
    std::span<const double> x, std::span<const double> y);

// Both coefficients with exact permutation p-values, for samples of a few
// systems (compare's measure agreement, the judges' rankings of runs),
// where the asymptotic p-values are far off: with 3 runs in one order,
// SciPy's Spearman p is 0 and its tie-corrected Kendall p 0.16, where
// only 2 of the 3! orderings are as extreme (p = 1/3). The p-value is the
// share of the n! orderings of `y` against `x` whose coefficient is at
// least as far from 0 as the observed one (two-sided; ties kept as they
// are). Each nullopt where the functions above return it, and both for n
// above kMaxExactPermutationN (8: 40,320 orderings).
inline constexpr size_t kMaxExactPermutationN = 8;
struct ExactRankCorrelations {
  std::optional<RankCorrelation> kendall;
  std::optional<RankCorrelation> spearman;
};
[[nodiscard]] ExactRankCorrelations ExactPermutationCorrelations(
    std::span<const double> x, std::span<const double> y);

// Yilmaz, Aslam and Robertson's AP rank correlation (tau_AP, SIGIR 2008),
// of the ranking by `estimated` against the ranking by `reference`
// (higher first in both): tau_AP = 2 / (N - 1) sum_{i=2..N} C(i) / (i - 1)
// - 1, where C(i) counts the items above the i-th of the estimated ranking
// that the reference ranks above it too. Unlike Kendall's tau it weighs a
// swap at the top more than one at the bottom, and it is asymmetric: the
// reference is the trusted ranking (the human judges' when comparing
// judges). A pair the reference ties counts half; items the estimated
// ranking ties keep their order in the spans. nullopt for spans of
// different sizes, fewer than two items or a NaN.
[[nodiscard]] std::optional<double> TauAp(std::span<const double> reference,
                                          std::span<const double> estimated);

// Working memory of the coefficient functions. Reusing one keeps them free
// of allocations once its buffers have grown to the largest sample seen.
// Owned by the caller; not thread-safe; its contents between calls mean
// nothing.
struct RankCorrelationScratch {
  std::vector<size_t> order;
  std::vector<double> first;
  std::vector<double> second;
  std::vector<double> third;
  std::vector<int64_t> counts;  // OrderGradeCorrelations: per grade.
  std::vector<int64_t> tree;    // OrderGradeCorrelations: Fenwick tree.
  std::vector<double> x;        // OrderGradeCorrelations' fallback.
  std::vector<double> y;
};

// The coefficient of KendallTauB (the same value), without its p-value:
// O(n log n), no allocation once `scratch` is warm.
[[nodiscard]] std::optional<double> KendallTauBCoefficient(
    std::span<const double> x, std::span<const double> y,
    RankCorrelationScratch* scratch);

// The coefficient of SpearmanRho (the same value), without its p-value:
// O(n log n), no allocation once `scratch` is warm.
[[nodiscard]] std::optional<double> SpearmanRhoCoefficient(
    std::span<const double> x, std::span<const double> y,
    RankCorrelationScratch* scratch);

// Spearman's rho and Kendall's tau-b between a list's order and the grades
// of its items, `grades` given in list order (top first): the coefficients
// of x = -position, y = grade, so a list with higher grades first scores
// +1. Each nullopt where the functions above return it (fewer than two
// items, constant grades). The same values, bit for bit, as
// SpearmanRhoCoefficient and KendallTauBCoefficient of those x and y, in
// O(n log G) for G = max - min + 1 grades (counts per grade and a Fenwick
// tree, Knight's method on x without ties) when G <= 4096, else through
// them. No allocation once `scratch` is warm.
struct OrderGradeCorrelation {
  std::optional<double> spearman;
  std::optional<double> kendall_tau;
};
OrderGradeCorrelation OrderGradeCorrelations(std::span<const int32_t> grades,
                                             RankCorrelationScratch* scratch);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_RANK_CORRELATION_H_
