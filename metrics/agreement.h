// Agreement between two judges who graded the same items: Cohen's kappa
// (unweighted, and weighted for graded labels) and Krippendorff's alpha,
// each with an interval. `rankwatch compare --qrels A --qrels B` reports
// them for every pair of qrels files (issue 29: are an LLM judge's labels
// those of the human assessors?).
//
// Input: parallel spans of integer grades, x[i] and y[i] the two judges'
// grades of item i (a (query, doc) pair both judged). The categories are
// the integers from the smallest to the largest grade seen in either span,
// so a weighted kappa's distances are the grades' differences (a grade
// nobody gave still counts in the spread: 0, 1 and 3 are three categories
// of a four-point scale).
//
// Cohen's kappa (Cohen, Educ. Psychol. Meas. 20(1), 1960) and its weighted
// form (Cohen, Psychol. Bull. 70(4), 1968) with agreement weights w_ij =
// 1 - |i - j| / (k - 1) (linear) or 1 - (i - j)^2 / (k - 1)^2 (quadratic):
//   kappa = (p_o - p_e) / (1 - p_e),  p_o = sum w_ij p_ij,
//   p_e = sum w_ij p_i. p_.j,
// with the large-sample standard error of Fleiss, Cohen and Everitt
// (Psychol. Bull. 72(5), 1969, eq. 5):
//   var = [sum p_ij (w_ij - (wbar_i. + wbar_.j)(1 - kappa))^2
//          - (kappa - p_e (1 - kappa))^2] / (n (1 - p_e)^2),
//   wbar_i. = sum_j p_.j w_ij, wbar_.j = sum_i p_i. w_ij,
// and the interval kappa +- z se (the normal approximation; statsmodels'
// cohens_kappa computes the same figures), its upper end clipped at 1, the
// largest value kappa and alpha can take.
//
// Krippendorff's alpha (Krippendorff, Content Analysis, 4th ed., 2018,
// ch. 12) for two coders and no missing values: alpha = 1 - D_o / D_e,
// from the coincidence matrix of the pairable values (each item adds
// (x, y) and (y, x)), with the nominal, ordinal or interval difference
// function. Its interval is the jackknife's (leave one item out; Quenouille
// 1956, Tukey 1958): se^2 = (n - 1) / n sum (alpha_(i) - mean)^2 and
// alpha +- z se (clipped at 1), deterministic, unlike Krippendorff's
// bootstrap; NaN when leaving some item out leaves no disagreement to
// expect (one item alone holds a grade). Each leave-one-out figure comes
// from the whole table's sums in O(k) (k the spread of grades), so alpha
// with its interval costs O(k^3) at most, whatever the number of items
// (bench/README.md, "Judges' agreement in a scrape").
//
// All return nullopt where the figure is undefined: spans of different
// sizes, fewer than two items, or no expected disagreement (every grade the
// same: p_e = 1, D_e = 0). Grades must lie within 64 of each other (the
// categories are a dense table); beyond that, nullopt.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_AGREEMENT_H_
#define RANKWATCH_METRICS_AGREEMENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>

#include "metrics/measures.h"
#include "metrics/pairs.h"

namespace rankwatch::metrics {

// A figure with its standard error and a two-sided interval.
struct AgreementEstimate {
  double estimate = 0;
  double std_error = 0;
  double lower = 0;
  double upper = 0;
};

enum class KappaWeights {
  kNone,       // Cohen's kappa: only equal grades agree.
  kLinear,     // 1 - |i - j| / (k - 1).
  kQuadratic,  // 1 - (i - j)^2 / (k - 1)^2.
};

enum class AlphaMetric {
  kNominal,   // Different grades differ by 1.
  kOrdinal,   // By the count of values between them (Krippendorff's).
  kInterval,  // By the square of their difference.
};

// The largest spread of grades (max - min + 1) the functions accept.
inline constexpr int kMaxAgreementCategories = 64;

[[nodiscard]] std::optional<AgreementEstimate> CohenKappa(
    std::span<const int> x, std::span<const int> y, KappaWeights weights,
    double confidence = 0.95);

[[nodiscard]] std::optional<AgreementEstimate> KrippendorffAlpha(
    std::span<const int> x, std::span<const int> y, AlphaMetric metric,
    double confidence = 0.95);

// The items two judges both graded, as counts of each pair of grades (x
// the first judge's, y the second's): all the figures above need, so a
// live count can be kept item by item (added, and taken back when a label
// changes), merged over shards, and read at any time. The categories are
// the grades from the smallest to the largest of a pair counted now.
// A plain value; not thread-safe.
class GradePairs {
 public:
  // Adds `delta` items graded (x, y) (negative: takes them back; a count
  // never goes below 0).
  void Add(int x, int y, int64_t delta = 1);
  void Merge(const GradePairs& other);
  int64_t items() const { return items_; }
  // (x, y) -> items, ascending; no zero counts.
  const std::map<std::pair<int, int>, int64_t>& counts() const {
    return counts_;
  }
  bool operator==(const GradePairs&) const = default;

 private:
  std::map<std::pair<int, int>, int64_t> counts_;
  int64_t items_ = 0;
};

// The items two judges graded: both (with their grades), or one alone: a
// panel's agreement, live, keeps one per pair of judges (PairIndex order,
// metrics/pairs.h). A plain value; not thread-safe.
struct JudgePairCounts {
  GradePairs both;
  int64_t only_first = 0;
  int64_t only_second = 0;

  // Counts (sign 1) or takes back (-1) one item the first judge graded
  // `x` and the second `y` (kUnjudged: did not grade it).
  void Tally(Grade x, Grade y, int64_t sign = 1) {
    if (x != kUnjudged && y != kUnjudged) {
      both.Add(x, y, sign);
    } else if (x != kUnjudged) {
      only_first += sign;
    } else if (y != kUnjudged) {
      only_second += sign;
    }
  }
  void Merge(const JudgePairCounts& other) {
    both.Merge(other.both);
    only_first += other.only_first;
    only_second += other.only_second;
  }
  bool operator==(const JudgePairCounts&) const = default;
};

// The same figures from counted pairs (equal to the span forms' on the
// same items).
[[nodiscard]] std::optional<AgreementEstimate> CohenKappa(
    const GradePairs& pairs, KappaWeights weights, double confidence = 0.95);
[[nodiscard]] std::optional<AgreementEstimate> KrippendorffAlpha(
    const GradePairs& pairs, AlphaMetric metric, double confidence = 0.95);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_AGREEMENT_H_
