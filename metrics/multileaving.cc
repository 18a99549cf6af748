#include "metrics/multileaving.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "metrics/multiple_testing.h"

namespace rankwatch::metrics {
namespace {

// The team to pick among the `tied` teams with the fewest picks. Two tied
// teams: the top bit of the generator's output, as TeamDraftInterleave's
// coin (1: the lower index), so that two rankings give its lists.
uint8_t PickAmong(std::span<const uint8_t> tied, Xoshiro256* rng) {
  if (tied.size() == 1) return tied[0];
  if (tied.size() == 2) return (rng->Next() >> 63) == 1 ? tied[0] : tied[1];
  return tied[rng->Below(tied.size())];
}

}  // namespace

void TeamDraftMultileave(
    std::span<const std::span<const std::string_view>> rankings,
    size_t max_length, Xoshiro256* rng, InterleavedList* out) {
  out->docs.clear();
  out->teams.clear();
  const size_t n = std::min<size_t>(rankings.size(), 255);
  if (n == 0) return;
  size_t total = 0;
  for (size_t t = 0; t < n; ++t) total += rankings[t].size();
  std::unordered_set<std::string_view> taken;
  taken.reserve(std::min(max_length, total));
  std::vector<size_t> next(n, 0);
  std::vector<size_t> picks(n, 0);
  std::vector<uint8_t> tied;
  tied.reserve(n);
  while (out->docs.size() < max_length) {
    // As Radlinski et al.'s loop: every ranking still has a new doc, so
    // that each team keeps its fair share of every rank.
    bool exhausted = false;
    for (size_t t = 0; t < n && !exhausted; ++t) {
      while (next[t] < rankings[t].size() &&
             taken.contains(rankings[t][next[t]])) {
        ++next[t];
      }
      exhausted = next[t] == rankings[t].size();
    }
    if (exhausted) break;
    // Schuth et al.'s Algorithm 1: a team among those with the fewest
    // picks, uniformly.
    const size_t fewest = *std::min_element(picks.begin(), picks.end());
    tied.clear();
    for (size_t t = 0; t < n; ++t) {
      if (picks[t] == fewest) tied.push_back(static_cast<uint8_t>(t));
    }
    const uint8_t team = PickAmong(tied, rng);
    const std::string_view doc = rankings[team][next[team]];
    taken.insert(doc);
    out->docs.push_back(doc);
    out->teams.push_back(team);
    ++picks[team];
  }
}

int64_t CreditTeams(std::span<const uint8_t> teams,
                    std::span<const Grade> clicks, Grade threshold,
                    std::span<int64_t> credit) {
  std::fill(credit.begin(), credit.end(), 0);
  int64_t total = 0;
  const size_t n = std::min(teams.size(), clicks.size());
  for (size_t r = 0; r < n; ++r) {
    // As CreditClicks: a negative grade (kUnjudged) is never a click.
    if (clicks[r] < 0 || clicks[r] < threshold || teams[r] >= credit.size()) {
      continue;
    }
    ++credit[teams[r]];
    ++total;
  }
  return total;
}

void MultileavingCounts::Add(std::span<const int64_t> credit) {
  const size_t n = teams();
  ++impressions;
  int64_t clicked = 0;
  for (size_t t = 0; t < n && t < credit.size(); ++t) {
    clicks[t] += credit[t];
    clicked += credit[t];
  }
  // Every pair sees the impression: its outcome is no_click for all pairs
  // or, with a click, a win or a tie for each.
  InterleavingOutcome none = InterleavingOutcome::kNoClick;
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      InterleavingCounts& pair = pairs[PairIndex(x, y, n)];
      if (clicked == 0) {
        pair.Add(none);
        continue;
      }
      const int64_t cx = x < credit.size() ? credit[x] : 0;
      const int64_t cy = y < credit.size() ? credit[y] : 0;
      pair.Add(cx == cy  ? InterleavingOutcome::kTie
               : cx > cy ? InterleavingOutcome::kFirstWins
                         : InterleavingOutcome::kSecondWins);
    }
  }
  if (clicked == 0) ++no_click;
}

void MultileavingCounts::Merge(const MultileavingCounts& other) {
  impressions += other.impressions;
  no_click += other.no_click;
  for (size_t t = 0; t < clicks.size() && t < other.clicks.size(); ++t) {
    clicks[t] += other.clicks[t];
  }
  for (size_t p = 0; p < pairs.size() && p < other.pairs.size(); ++p) {
    pairs[p].Merge(other.pairs[p]);
  }
}

bool MultileavingCounts::Consistent() const {
  if (impressions < 0 || no_click < 0 || no_click > impressions) return false;
  if (pairs.size() != NumPairs(clicks.size())) return false;
  for (int64_t c : clicks) {
    if (c < 0) return false;
  }
  for (const InterleavingCounts& p : pairs) {
    if (p.wins[0] < 0 || p.wins[1] < 0 || p.ties < 0) return false;
    if (p.impressions != impressions || p.no_click != no_click) return false;
    if (p.wins[0] + p.wins[1] + p.ties + p.no_click != impressions) {
      return false;
    }
  }
  return true;
}

ConfidenceInterval PreferenceInterval(const InterleavingCounts& counts,
                                      double level) {
  ConfidenceInterval ci;
  const double n = static_cast<double>(counts.clicked());
  if (n < 2 || !(level > 0) || !(level < 1)) return ci;
  const double mean = Preference(counts);
  // Scores +-1/2 on decided impressions, 0 on ties: the sum of squares
  // is decided / 4.
  const double sum_sq = static_cast<double>(counts.decided()) / 4;
  const double variance =
      std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));  // Sample.
  const double half =
      NormalQuantile(1 - (1 - level) / 2) * std::sqrt(variance / n);
  ci.lower = mean - half;
  ci.upper = mean + half;
  return ci;
}

MultileavingAnalysis AnalyzeMultileaving(
    const MultileavingCounts& counts,
    std::span<const double> sequential_p_values, double alpha) {
  MultileavingAnalysis a;
  const size_t n = counts.teams();
  const size_t m = counts.pairs.size();
  a.pairs.resize(m);
  std::vector<double> p(m, 1.0);
  for (size_t i = 0; i < m && i < sequential_p_values.size(); ++i) {
    p[i] = sequential_p_values[i];
  }
  std::vector<double> adjusted(m, 1.0);
  BenjaminiHochberg(p, adjusted);
  a.copeland.assign(n, 0);
  a.point_copeland.assign(n, 0);
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      const size_t i = PairIndex(x, y, n);
      const InterleavingCounts& c = counts.pairs[i];
      PairAnalysis& pa = a.pairs[i];
      pa.first = x;
      pa.second = y;
      pa.preference = Preference(c);
      pa.interval = PreferenceInterval(c, 1 - alpha);
      pa.p_value = SignTestPValue(c.wins[0], c.wins[1]);
      pa.sequential_p_value = p[i];
      pa.adjusted_p_value = adjusted[i];
      pa.verdict = PreferenceVerdict(adjusted[i], pa.preference, alpha);
      a.copeland[y] += pa.verdict;
      a.copeland[x] -= pa.verdict;
      // NaN (no clicked impression) compares false both ways: no point.
      const int point = pa.preference > 0 ? 1 : pa.preference < 0 ? -1 : 0;
      a.point_copeland[y] += point;
      a.point_copeland[x] -= point;
    }
  }
  a.ranking.resize(n);
  std::iota(a.ranking.begin(), a.ranking.end(), size_t{0});
  std::stable_sort(a.ranking.begin(), a.ranking.end(), [&](size_t u, size_t v) {
    if (a.copeland[u] != a.copeland[v]) {
      return a.copeland[u] > a.copeland[v];
    }
    return a.point_copeland[u] > a.point_copeland[v];
  });
  // Beating all N - 1 others significantly is a Copeland score of N - 1.
  if (n >= 2 && a.copeland[a.ranking[0]] == static_cast<int>(n) - 1) {
    a.winner = static_cast<int>(a.ranking[0]);
  }
  return a;
}

}  // namespace rankwatch::metrics
