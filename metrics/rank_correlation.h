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
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_RANK_CORRELATION_H_
#define RANKWATCH_METRICS_RANK_CORRELATION_H_

#include <optional>
#include <span>

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

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_RANK_CORRELATION_H_
