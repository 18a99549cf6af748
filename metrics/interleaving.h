// Team-draft interleaving: a reference interleaver, the credit of clicks to
// the two teams, and the statistics of the outcome.
//
//   * The interleaver is Radlinski, Kurup and Joachims, "How does
//     clickthrough data reflect retrieval quality?" (CIKM 2008), Fig. 2: the
//     team with fewer picks so far (a fair coin on ties) adds its highest
//     ranked document not yet in the list, until either ranking runs out of
//     new documents or the list is full. The daemon only observes
//     interleaved traffic (each result carries its team); the interleaver
//     is here so that users and tests have a correct one.
//   * An impression's outcome (Chapelle, Joachims, Radlinski and Yue,
//     "Large-scale validation and analysis of interleaved search
//     evaluation", ACM TOIS 30(1), 2012, Sec. 3): each clicked result is
//     credited to the team that contributed it; the team with more credited
//     clicks wins; equal credit with at least one click is a tie; no click
//     is no_click (it says nothing about the rankers).
//   * The preference of the second team (the challenger) over the first:
//     (wins_2 + ties / 2) / (wins_1 + wins_2 + ties) - 1/2, Chapelle et
//     al.'s Delta_AB with the sign of "second is better" (NaN without a
//     clicked impression).
//   * Fixed-horizon test: the two-sided sign (exact binomial) test of
//     wins_2 among the decided impressions (wins_1 + wins_2) against 1/2;
//     ties carry no sign and are left out.
//   * Always-valid test: with p the probability that a decided impression
//     is won by the second team, the Beta(a, a)-mixture likelihood ratio
//     against p = 1/2,
//        LR_n = B(a + x, a + n - x) / B(a, a) * 2^n   (n decided, x = wins_2),
//     is a nonnegative martingale under p = 1/2 (Robbins 1970), so by
//     Ville's inequality min(1, 1 / max over looks of LR) is a p-value
//     valid however often and whenever it is read. a is set from the prior
//     standard deviation s of p by Var = 1 / (4 (2a + 1)).
//
// docs/metrics.md ("Team-draft interleaving") writes these out; the
// statistics' tests compare with SciPy.
//
// Free functions are pure and thread-safe. SequentialPreferenceTest is a
// value type, not synchronized.
#ifndef RANKWATCH_METRICS_INTERLEAVING_H_
#define RANKWATCH_METRICS_INTERLEAVING_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "metrics/measures.h"

namespace rankwatch::metrics {

// ---------------------------------------------------------------------------
// The interleaver.

// An interleaved list: docs[i] was contributed by team teams[i] (0: the
// first ranking, 1: the second).
struct InterleavedList {
  std::vector<std::string_view> docs;
  std::vector<uint8_t> teams;
};

// Team-draft interleaving of `first` and `second` (each a ranking without
// duplicates, rank 1 first) into at most `max_length` docs; coin flips
// from `rng`. `out` is cleared first; its views point into the inputs.
void TeamDraftInterleave(std::span<const std::string_view> first,
                         std::span<const std::string_view> second,
                         size_t max_length, Xoshiro256* rng,
                         InterleavedList* out);

// ---------------------------------------------------------------------------
// One impression's outcome.

enum class InterleavingOutcome {
  kNoClick,    // No click on any result.
  kTie,        // Clicks, equally many credited to each team.
  kFirstWins,  // More clicks credited to the first team.
  kSecondWins,
};

// Credits the clicks of one impression: rank r (0-based) was contributed by
// teams[r] (0 or 1) and is clicked when clicks[r] >= threshold (a negative
// grade, kUnjudged, is never a click). `teams` and `clicks` have the same
// length.
[[nodiscard]] InterleavingOutcome CreditClicks(std::span<const uint8_t> teams,
                                               std::span<const Grade> clicks,
                                               Grade threshold);

// Counts of outcomes. Mergeable: counts of disjoint sets of impressions add.
struct InterleavingCounts {
  int64_t impressions = 0;  // All four outcomes.
  std::array<int64_t, 2> wins{};
  int64_t ties = 0;
  int64_t no_click = 0;

  void Add(InterleavingOutcome outcome);
  void Merge(const InterleavingCounts& other);
  int64_t decided() const { return wins[0] + wins[1]; }
  int64_t clicked() const { return wins[0] + wins[1] + ties; }
};

// (wins[1] + ties / 2) / clicked() - 1/2; NaN when clicked() is 0.
[[nodiscard]] double Preference(const InterleavingCounts& counts);

// Two-sided exact binomial (sign) test of `second_wins` successes out of
// first_wins + second_wins trials against 1/2: the probability under 1/2 of
// an outcome at most as likely as the observed one (SciPy's binomtest).
// 1 when there is no decided impression.
[[nodiscard]] double SignTestPValue(int64_t first_wins, int64_t second_wins);

// Default prior standard deviation of p (the second team's chance to win a
// decided impression) in the sequential test: interleaving effects on
// Chapelle et al.'s data are mostly a few hundredths of a preference.
inline constexpr double kDefaultInterleavingPriorSd = 0.05;

// a of the Beta(a, a) prior with standard deviation `prior_sd` in (0, 0.5):
// (1 / (4 sd^2) - 1) / 2. NaN outside the domain.
[[nodiscard]] double BetaPriorShape(double prior_sd);

// The log mixture likelihood ratio log LR_n of one look (see above) with
// prior shape `a` > 0; 0 when n = 0.
[[nodiscard]] double PreferenceLogLikelihoodRatio(int64_t first_wins,
                                                  int64_t second_wins,
                                                  double a);

// The always-valid test over looks. Each Look() takes the counts since the
// start (they must not decrease); p_value() is min(1, 1 / max LR) over all
// looks so far; look_p_value() the latest look alone (what Prometheus
// recording rules compute from the fleet's summed counters).
class SequentialPreferenceTest {
 public:
  explicit SequentialPreferenceTest(
      double prior_sd = kDefaultInterleavingPriorSd);

  void Look(const InterleavingCounts& counts);

  double p_value() const { return p_value_; }
  double look_p_value() const { return look_p_value_; }
  int64_t looks() const { return looks_; }  // Looks with a decided impression.
  double prior_shape() const { return a_; }

 private:
  double a_;
  double p_value_ = 1;
  double look_p_value_ = 1;
  int64_t looks_ = 0;
};

// +1 when the second team is better (sequential p-value below `alpha` and
// preference > 0), -1 when it is worse (p below alpha, preference < 0), 0
// otherwise.
[[nodiscard]] int PreferenceVerdict(double sequential_p_value,
                                    double preference, double alpha);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_INTERLEAVING_H_
