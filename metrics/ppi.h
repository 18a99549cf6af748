// Prediction-powered inference for a mean (Angelopoulos, Bates, Fannjiang,
// Jordan and Zrnic, Science 382, 2023), with the power tuning of PPI++
// (Angelopoulos, Duchi and Zrnic, arXiv 2311.01453, 2023): an estimate of
// the mean a trusted judge would give over every item, from the trusted
// judge's labels on a few items and a cheap judge's (an LLM's) on all. The
// cheap judge's errors are measured on the items both labelled and
// subtracted, so the estimate is unbiased however biased the cheap judge,
// provided the items the trusted judge labelled are a uniform random
// sample of all (issue 29; docs/compare.md says when it helps).
//
// With n labelled items (truth y_i and the cheap judge's f_i) and N other
// items (the cheap judge's f~_j only):
//   estimate = lambda mean(f~) + mean(y - lambda f),
//   se^2 = lambda^2 var(f~) / N + var(y - lambda f) / n,
// the variances with divisor N and n, the interval estimate +- z se, and
//   lambda = cov(y, f) / ((1 + n / N) var(f and f~ together)),
// clipped to [0, 1] (cov with divisor n, var with n + N - 1): the weight
// that minimizes the variance, 0 when the cheap judge tells nothing (the
// estimate is then the classical mean of y), 1 for plain PPI. These are
// ppi_py's ppi_mean_ci and ppi_mean_pointestimate (lam=None) figures.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_PPI_H_
#define RANKWATCH_METRICS_PPI_H_

#include <cstdint>
#include <optional>
#include <span>

namespace rankwatch::metrics {

struct PpiMeanEstimate {
  double estimate = 0;
  double std_error = 0;
  double lower = 0;
  double upper = 0;
  double lambda = 1;  // The power-tuning weight used.
  // The trusted labels alone: their mean, with its standard error (divisor
  // n - 1) and interval; the baseline PPI should beat.
  double classical = 0;
  double classical_std_error = 0;
  double classical_lower = 0;
  double classical_upper = 0;
  // The cheap judge alone over all n + N items: biased as the judge is.
  double naive = 0;
};

// The sums PpiMean needs, additive over items: what a live pipeline keeps
// per shard and window (they merge by adding) instead of the items.
struct PpiMoments {
  // Labelled items: truth y, the cheap judge's f.
  int64_t n = 0;
  double sum_y = 0;
  double sum_yy = 0;
  double sum_f = 0;
  double sum_ff = 0;
  double sum_yf = 0;
  // The other items: the cheap judge's f~ only.
  int64_t others = 0;
  double sum_u = 0;
  double sum_uu = 0;

  void AddLabelled(double y, double f) {
    ++n;
    sum_y += y;
    sum_yy += y * y;
    sum_f += f;
    sum_ff += f * f;
    sum_yf += y * f;
  }
  void AddOther(double u) {
    ++others;
    sum_u += u;
    sum_uu += u * u;
  }
  bool operator==(const PpiMoments&) const = default;
};

// `truth[i]` and `predicted[i]` of the labelled items, `unlabeled` the cheap
// judge's figures of the others. `tune`: PPI++'s lambda; false: lambda = 1.
// nullopt with fewer than two labelled items, no other item, spans of
// different sizes or a NaN.
[[nodiscard]] std::optional<PpiMeanEstimate> PpiMean(
    std::span<const double> truth, std::span<const double> predicted,
    std::span<const double> unlabeled, double confidence = 0.95,
    bool tune = true);

// The same from the items' sums (equal to the span form's up to rounding:
// the variances come from sums of squares, whose cancellation is
// negligible for figures in [0, 1]). nullopt as above.
[[nodiscard]] std::optional<PpiMeanEstimate> PpiMean(const PpiMoments& m,
                                                     double confidence = 0.95,
                                                     bool tune = true);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_PPI_H_
