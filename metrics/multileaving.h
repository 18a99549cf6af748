// Team-draft multileaving: N >= 2 rankers (teams) merged into one list, the
// credit of clicks to the teams, and the pairwise statistics of the
// outcome. Two teams are the interleaving of metrics/interleaving.h, whose
// counts and tests each pair of teams reuses.
//
//   * The multileaver is Schuth, Sietsma, Whiteson, Lefortier and de Rijke,
//     "Multileaved comparisons for fast online evaluation" (CIKM 2014),
//     Algorithm 1 (team-draft multileaving): while the list is not full,
//     a team among those with the fewest picks so far (uniformly at random
//     on ties) adds its highest ranked document not yet in the list. Each
//     round is thus a random order of the teams. As Radlinski et al.'s
//     interleaver, it stops once some ranking has no new document left.
//   * An impression's credit (Schuth et al., Sec. 3.1): each clicked result
//     counts for the team that contributed it. For a pair of teams (X, Y)
//     and an impression with at least one click, X wins when more clicks
//     are credited to X than to Y, Y wins in the opposite case, and it is
//     a tie when both have as many (zero included). An impression without
//     any click is no_click, once, for every pair.
//   * Per pair the statistics of metrics/interleaving.h (preference of Y,
//     the second of the pair, over X; sign test; always-valid sequential
//     test), Benjamini-Hochberg across the N (N - 1) / 2 pairs, a verdict
//     per pair, the Copeland ranking (Copeland, "A reasonable social
//     welfare function", U. Michigan seminar, 1951: a team's score is the
//     teams it beats minus the teams that beat it) on the significant
//     verdicts, and a winner when one team significantly beats all others.
//
// docs/statistics.md ("Multileaving") writes these out.
//
// Free functions are pure and thread-safe; the structs are value types,
// not synchronized.
#ifndef RANKWATCH_METRICS_MULTILEAVING_H_
#define RANKWATCH_METRICS_MULTILEAVING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "metrics/ab_stats.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"
#include "metrics/pairs.h"

namespace rankwatch::metrics {

// The most teams an experiment may multileave: 28 pairs. Beyond that the
// pairwise tests need too many impressions each to say anything, and the
// window buckets grow with the pairs.
inline constexpr size_t kMaxMultileavingTeams = 8;

// Team-draft multileaving of `rankings` (each without duplicates, rank 1
// first; at most 255 of them) into at most `max_length` docs; random
// choices from `rng`. out->teams[i] is the index of the ranking that
// contributed out->docs[i]. With two rankings the coin is drawn as
// TeamDraftInterleave draws it, so both give the same list for the same
// generator state. `out` is cleared first; its views point into the inputs.
void TeamDraftMultileave(
    std::span<const std::span<const std::string_view>> rankings,
    size_t max_length, Xoshiro256* rng, InterleavedList* out);

// Credits one impression: rank r (0-based) was contributed by teams[r] and
// is clicked when clicks[r] >= threshold (a negative grade, kUnjudged, is
// never a click). credit[t] is set to team t's clicks (a team index at or
// past credit.size() is nobody's). Returns the credited clicks.
int64_t CreditTeams(std::span<const uint8_t> teams,
                    std::span<const Grade> clicks, Grade threshold,
                    std::span<int64_t> credit);

// The counts of a multileaving experiment. Mergeable: counts of disjoint
// sets of impressions add. pairs[PairIndex(x, y)] holds the pair's
// outcomes as a two-team experiment whose first team is x: wins[0] are
// x's wins, wins[1] y's; its impressions and no_click are the
// experiment's.
struct MultileavingCounts {
  int64_t impressions = 0;
  int64_t no_click = 0;
  std::vector<int64_t> clicks;            // Per team: credited clicks.
  std::vector<InterleavingCounts> pairs;  // Per pair, in PairIndex order.

  MultileavingCounts() = default;
  explicit MultileavingCounts(size_t teams)
      : clicks(teams, 0), pairs(NumPairs(teams)) {}
  size_t teams() const { return clicks.size(); }
  // One impression with `credit` (per team, size teams()).
  void Add(std::span<const int64_t> credit);
  void Merge(const MultileavingCounts& other);
  // Whether the pairs add up: each pair's outcomes sum to impressions and
  // its no_click is the experiment's (a decoded checkpoint's check).
  [[nodiscard]] bool Consistent() const;
};

// Wald interval, at confidence `level`, of the preference of a pair:
// per clicked impression the score is +1/2 (second team wins), -1/2
// (first wins) or 0 (tie), whose mean is Preference(counts); the interval
// is mean +- z sqrt(sample variance / n). Infinite without two clicked
// impressions; of zero width when every score is equal.
[[nodiscard]] ConfidenceInterval PreferenceInterval(
    const InterleavingCounts& counts, double level);

// The analysis of one look at a multileaving experiment.
struct PairAnalysis {
  size_t first = 0;  // Team indexes, first < second.
  size_t second = 0;
  double preference = 0;  // Of second over first (NaN without clicks).
  ConfidenceInterval interval;
  double p_value = 1;             // Sign test (fixed horizon).
  double sequential_p_value = 1;  // Always-valid, this pair alone.
  double adjusted_p_value = 1;    // Benjamini-Hochberg over the pairs.
  // +1 second significantly better, -1 first better, 0 neither.
  int verdict = 0;
};

struct MultileavingAnalysis {
  std::vector<PairAnalysis> pairs;  // PairIndex order.
  // Per team: significant wins minus significant losses (Copeland).
  std::vector<int> copeland;
  // Per team: teams it is preferred over minus teams preferred over it,
  // by the point preference alone (no significance): the tie-breaker.
  std::vector<int> point_copeland;
  std::vector<size_t> ranking;  // Team indexes, best first.
  int winner = -1;  // The team that significantly beats every other, or -1.
};

// The analysis of `counts` given each pair's always-valid p-value
// (sequential_p_values, PairIndex order, size NumPairs(teams)): BH-adjusted
// p-values, verdicts at `alpha` (adjusted p < alpha, signed by the
// preference), Copeland scores, the ranking (by Copeland score, then point
// Copeland score, then configuration order) and the winner. The intervals
// are at level 1 - alpha.
[[nodiscard]] MultileavingAnalysis AnalyzeMultileaving(
    const MultileavingCounts& counts,
    std::span<const double> sequential_p_values, double alpha);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_MULTILEAVING_H_
