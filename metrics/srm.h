// Sample-ratio-mismatch (SRM) tests: does the traffic of an experiment's
// variants (units, or requests without units) match the split it was
// configured with? A broken assignment (a redirect that drops one arm's
// users, a bot filtered in one arm only) biases every comparison of the
// experiment, so platforms check this first.
//
// Two tests on the same counts:
//   * Pearson's chi-square goodness-of-fit test (fixed-sample);
//   * the sequential multinomial test of Lindon and Malek ("Anytime-Valid
//     Inference for Multinomial Count Data", NeurIPS 2022; the test of
//     Optimizely's open-source ssrm-test package): a Dirichlet-multinomial
//     Bayes factor against the configured split, whose inverse is an
//     always-valid p-value.
// docs/statistics.md gives the formulas.
//
// Free functions are pure and thread-safe; SequentialSrmTest is a value
// type, not thread-safe for concurrent mutation.
#ifndef RANKWATCH_METRICS_SRM_H_
#define RANKWATCH_METRICS_SRM_H_

#include <cstdint>
#include <span>
#include <vector>

namespace rankwatch::metrics {

// Significance level of the SRM alarm (p < 0.001, the usual strict SRM
// threshold: SRM checks run on every experiment all the time, so they must
// rarely fire by chance).
inline constexpr double kDefaultSrmLevel = 0.001;

// Dirichlet prior of the sequential test: alpha_i = concentration * share_i
// (the ssrm-test package's default). For a 50/50 split the prior standard
// deviation of a share is sqrt(0.25 / (c + 1)) = 0.005: the test is tuned to
// mismatches of about half a percentage point.
inline constexpr double kDefaultSrmConcentration = 10000;

enum class SrmStatus {
  kOk = 0,
  // Sizes differ, fewer than two arms, a negative count, a share that is
  // not positive and finite, or shares that do not sum to 1 within 1e-6.
  kInvalidInput,
  kNoData,  // All counts are 0.
};

struct SrmChiSquare {
  SrmStatus status = SrmStatus::kInvalidInput;
  double statistic = 0;            // sum (O_i - E_i)^2 / E_i, E_i = N share_i.
  int32_t degrees_of_freedom = 0;  // Arms - 1; 0 for kInvalidInput.
  double p_value = 1;              // P(chi2_df >= statistic); 1 unless kOk.
};

// Pearson's test of `counts` against `shares` (one per arm, summing to 1).
[[nodiscard]] SrmChiSquare TestSampleRatio(std::span<const int64_t> counts,
                                           std::span<const double> shares);

// The critical value of the chi-square statistic at `level` (e.g. 0.001)
// for `degrees_of_freedom` >= 1: the quantile 1 - level. NaN outside the
// domain. Exported so that Prometheus rules can test the fleet's summed
// counts exactly without a chi-square CDF of their own.
[[nodiscard]] double ChiSquareCritical(int32_t degrees_of_freedom,
                                       double level);

// log of the Dirichlet-multinomial Bayes factor of `counts` against the
// multinomial with probabilities `shares`, prior alpha_i = concentration *
// share_i:
//
//   log BF = lgamma(A) - lgamma(A + N) + sum_i [lgamma(alpha_i + n_i)
//            - lgamma(alpha_i) - n_i log(share_i)],   A = sum alpha_i.
//
// It depends on the counts only (not on their order), so it can be computed
// at any look from the totals. NaN for invalid input.
[[nodiscard]] double SrmLogBayesFactor(std::span<const int64_t> counts,
                                       std::span<const double> shares,
                                       double concentration);

// The always-valid SRM state of one experiment, fed at each look with the
// counts accumulated since the experiment started. The p-value is the
// running minimum of min(1, 1 / BF) over looks; by Ville's inequality,
// under the configured split it ever falls to alpha with probability at
// most alpha, however often it is read.
class SequentialSrmTest {
 public:
  explicit SequentialSrmTest(std::vector<double> shares,
                             double concentration = kDefaultSrmConcentration);

  // Records one look and returns kOk. Leaves the state unchanged and
  // returns kNoData when every count is 0 (no look yet), and kInvalidInput
  // for invalid counts or shares (see SrmStatus), an invalid concentration,
  // or a count that went down since the previous look (the counts are not
  // cumulative; Reset() for a new experiment).
  SrmStatus Update(std::span<const int64_t> counts);

  // Forgets every look.
  void Reset();

  double p_value() const { return p_value_; }
  // Looks with status kOk so far.
  int64_t looks() const { return looks_; }

 private:
  std::vector<double> shares_;
  double concentration_;
  std::vector<int64_t> last_counts_;
  double p_value_ = 1;
  int64_t looks_ = 0;
};

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_SRM_H_
