#include "metrics/interleaving.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <unordered_set>

#include "base/numeric.h"
#include "metrics/boost_policy.h"
#include "metrics/numeric_internal.h"

namespace rankwatch::metrics {
namespace {

// Boost.Math's no-throw, double-precision policy: see metrics/boost_policy.h.
using internal::DoublePolicy;
using Binomial = boost::math::binomial_distribution<double, DoublePolicy>;

double LogGamma(double x) { return boost::math::lgamma(x, DoublePolicy()); }

// log B(x, y) = lgamma(x) + lgamma(y) - lgamma(x + y). Boost has no log
// beta, and beta() itself underflows to 0 past a few hundred decided
// impressions; the lgamma differences lose only about n log n * eps in
// absolute terms (3e-9 at n = 1e6), far below what a p-value needs.
double LogBeta(double x, double y) {
  return LogGamma(x) + LogGamma(y) - LogGamma(x + y);
}

// The next index at or after *next whose doc is not yet in `taken`;
// ranking.size() when there is none. Advances *next past taken docs (they
// stay taken, so no later call needs to look at them again).
size_t NextNew(std::span<const std::string_view> ranking,
               const std::unordered_set<std::string_view>& taken,
               size_t* next) {
  while (*next < ranking.size() && taken.contains(ranking[*next])) ++*next;
  return *next;
}

// Radlinski et al.'s step 1: the team with fewer picks picks; on equal
// picks a fair coin (the top bit of the generator's output; 1: the first
// team picks).
uint8_t PickingTeam(const std::array<size_t, 2>& team_size, Xoshiro256* rng) {
  if (team_size[0] != team_size[1]) return team_size[0] < team_size[1] ? 0 : 1;
  return (rng->Next() >> 63) == 1 ? 0 : 1;
}

}  // namespace

void TeamDraftInterleave(std::span<const std::string_view> first,
                         std::span<const std::string_view> second,
                         size_t max_length, Xoshiro256* rng,
                         InterleavedList* out) {
  out->docs.clear();
  out->teams.clear();
  // A hash set rather than a scan of out->docs: the scan is quadratic in
  // the list length, and a caller may interleave long rankings.
  std::unordered_set<std::string_view> taken;
  taken.reserve(std::min(max_length, first.size() + second.size()));
  const std::array<std::span<const std::string_view>, 2> rankings = {first,
                                                                     second};
  std::array<size_t, 2> next = {0, 0};
  std::array<size_t, 2> team_size = {0, 0};
  while (out->docs.size() < max_length) {
    // Radlinski et al.'s loop condition: both rankings still have a doc
    // not in the list.
    if (NextNew(rankings[0], taken, &next[0]) == first.size() ||
        NextNew(rankings[1], taken, &next[1]) == second.size()) {
      break;
    }
    const uint8_t team = PickingTeam(team_size, rng);
    const std::string_view doc = rankings[team][next[team]];
    taken.insert(doc);
    out->docs.push_back(doc);
    out->teams.push_back(team);
    ++team_size[team];
  }
}

InterleavingOutcome CreditClicks(std::span<const uint8_t> teams,
                                 std::span<const Grade> clicks,
                                 Grade threshold) {
  std::array<int64_t, 2> credit = {0, 0};
  const size_t n = std::min(teams.size(), clicks.size());
  for (size_t r = 0; r < n; ++r) {
    // A negative grade (kUnjudged) is never a click, whatever the
    // threshold; a team other than 0 or 1 contributes to neither.
    if (clicks[r] < 0 || clicks[r] < threshold || teams[r] > 1) continue;
    ++credit[teams[r]];
  }
  if (credit[0] == 0 && credit[1] == 0) return InterleavingOutcome::kNoClick;
  if (credit[0] == credit[1]) return InterleavingOutcome::kTie;
  return credit[0] > credit[1] ? InterleavingOutcome::kFirstWins
                               : InterleavingOutcome::kSecondWins;
}

void InterleavingCounts::Add(InterleavingOutcome outcome) {
  ++impressions;
  switch (outcome) {
    case InterleavingOutcome::kNoClick:
      ++no_click;
      return;
    case InterleavingOutcome::kTie:
      ++ties;
      return;
    case InterleavingOutcome::kFirstWins:
      ++wins[0];
      return;
    case InterleavingOutcome::kSecondWins:
      ++wins[1];
      return;
  }
}

void InterleavingCounts::Merge(const InterleavingCounts& other) {
  impressions += other.impressions;
  wins[0] += other.wins[0];
  wins[1] += other.wins[1];
  ties += other.ties;
  no_click += other.no_click;
}

double Preference(const InterleavingCounts& counts) {
  const int64_t clicked = counts.clicked();
  if (clicked <= 0) return kNaN;
  // Chapelle et al. (TOIS 2012, Sec. 3.2): a tie counts half a win for
  // each team.
  return (static_cast<double>(counts.wins[1]) +
          static_cast<double>(counts.ties) / 2) /
             static_cast<double>(clicked) -
         0.5;
}

double SignTestPValue(int64_t first_wins, int64_t second_wins) {
  if (first_wins < 0 || second_wins < 0) return kNaN;
  const double n =
      static_cast<double>(first_wins) + static_cast<double>(second_wins);
  if (n == 0) return 1;
  // Under 1/2 the binomial is symmetric, so the outcomes at most as likely
  // as the observed k are those at most min(k, n - k) from either end, and
  // SciPy's two-sided binomtest reduces to 2 P(X <= min(k, n - k)), capped
  // at 1 (reached at k = n / 2, where both tails overlap at the mode). The
  // cdf comes from the incomplete beta, so a tiny tail keeps its relative
  // accuracy.
  const double k = static_cast<double>(std::min(first_wins, second_wins));
  return std::min(1.0, 2 * boost::math::cdf(Binomial(n, 0.5), k));
}

double BetaPriorShape(double prior_sd) {
  if (!(prior_sd > 0) || !(prior_sd < 0.5)) return kNaN;
  // Beta(a, a) has mean 1/2 and variance 1 / (4 (2a + 1)).
  return (1 / (4 * prior_sd * prior_sd) - 1) / 2;
}

double PreferenceLogLikelihoodRatio(int64_t first_wins, int64_t second_wins,
                                    double a) {
  if (first_wins < 0 || second_wins < 0 || !(a > 0) || !std::isfinite(a)) {
    return kNaN;
  }
  if (first_wins == 0 && second_wins == 0) return 0;
  // The Beta(a, a)-mixture of Bernoulli(p) likelihoods over the likelihood
  // at p = 1/2 (Robbins, "Statistical methods related to the law of the
  // iterated logarithm", Ann. Math. Statist. 41(5), 1970):
  //   LR_n = B(a + x, a + n - x) / B(a, a) / 2^-n.
  const double x = static_cast<double>(second_wins);
  const double y = static_cast<double>(first_wins);
  return LogBeta(a + x, a + y) - LogBeta(a, a) + (x + y) * std::numbers::ln2;
}

SequentialPreferenceTest::SequentialPreferenceTest(double prior_sd)
    : a_(BetaPriorShape(prior_sd)) {}

void SequentialPreferenceTest::Look(const InterleavingCounts& counts) {
  if (counts.decided() <= 0) return;  // LR_0 = 1: nothing to learn.
  ++looks_;
  const double log_lr =
      PreferenceLogLikelihoodRatio(counts.wins[0], counts.wins[1], a_);
  if (std::isnan(log_lr)) {
    // An invalid prior (or negative counts): no p-value, and the running
    // minimum cannot be trusted either.
    look_p_value_ = kNaN;
    p_value_ = kNaN;
    return;
  }
  // Ville's inequality: P(sup_n LR_n >= 1 / alpha) <= alpha under p = 1/2,
  // so min(1, 1 / LR) of any look, and their running minimum, are valid
  // p-values. exp(-log LR) underflows to 0 only for an overwhelming LR.
  look_p_value_ = std::min(1.0, std::exp(-log_lr));
  if (!std::isnan(p_value_)) p_value_ = std::min(p_value_, look_p_value_);
}

int PreferenceVerdict(double sequential_p_value, double preference,
                      double alpha) {
  if (!(sequential_p_value < alpha)) return 0;  // Also NaN.
  if (preference > 0) return 1;
  if (preference < 0) return -1;
  return 0;
}

}  // namespace rankwatch::metrics
