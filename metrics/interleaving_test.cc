// Tests of metrics/interleaving.h.
//
// Where the expected figures come from:
//   * the interleaver's hand examples: the coin flips are the top bits of
//     the first outputs of Xoshiro256(seed), computed offline by a Python
//     transcription of the reference xoshiro256** / splitmix64 C code
//     (Blackman and Vigna), independent of base/random.cc:
//       seed 1: 1, 1, 1, 0, ...   seed 2: 0, 1, 0, 1, ...
//       seed 7: 1, 0, 1, 1, ...   (1: the first team picks)
//     and the picks are then worked by hand beside each test;
//   * the sign test: SciPy 1.10.1, scipy.stats.binomtest(k, n, 0.5).pvalue,
//     written beside each literal;
//   * the mixture likelihood ratio: mpmath 1.4.1 at 40 digits,
//     log(beta(a + x, a + y)) - log(beta(a, a)) + (x + y) * log(2), with
//     x the second team's wins and y the first's, written beside each
//     literal;
//   * the randomized tests check invariants and binomial bounds (stated
//     beside each), with a fixed seed printed on failure.
#include "metrics/interleaving.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "metrics/metrics_test_util.h"

namespace rankwatch::metrics {
namespace {

using Views = std::vector<std::string_view>;

InterleavedList Interleave(const Views& first, const Views& second,
                           size_t max_length, uint64_t seed) {
  Xoshiro256 rng(seed);
  InterleavedList out;
  TeamDraftInterleave(first, second, max_length, &rng, &out);
  return out;
}

// ---------------------------------------------------------------------------
// TeamDraftInterleave: hand-worked examples.

TEST(TeamDraftInterleaveTest, HandExampleRunsUntilARankingHasNoNewDoc) {
  // first = a b c d, second = b a e f; seed 2 coins 0, 1, 0.
  //   picks 0-0: coin 0 -> second picks b
  //   picks 0-1: first has fewer -> a
  //   picks 1-1: coin 1 -> first: a, b taken -> c
  //   picks 2-1: second: b, a taken -> e
  //   picks 2-2: coin 0 -> second: f
  //   second's docs (b, a, e, f) are all in the list -> stop, although
  //   first's d is not (and first has fewer picks).
  const Views first = {"a", "b", "c", "d"};
  const Views second = {"b", "a", "e", "f"};
  const InterleavedList out = Interleave(first, second, 10, 2);
  EXPECT_EQ(out.docs, (Views{"b", "a", "c", "e", "f"}));
  EXPECT_EQ(out.teams, (std::vector<uint8_t>{1, 0, 0, 1, 1}));
}

TEST(TeamDraftInterleaveTest, HandExampleStopsAtMaxLength) {
  // Same rankings, seed 1 coins 1, 1: first a; second b; coin 1 -> first
  // c; the list is full at 3.
  const Views first = {"a", "b", "c", "d"};
  const Views second = {"b", "a", "e", "f"};
  const InterleavedList out = Interleave(first, second, 3, 1);
  EXPECT_EQ(out.docs, (Views{"a", "b", "c"}));
  EXPECT_EQ(out.teams, (std::vector<uint8_t>{0, 1, 0}));
}

TEST(TeamDraftInterleaveTest, HandExampleStopsWhenSecondHasNoNewDoc) {
  // first = a b c d e, second = c a; seed 7 coin 1: first a; second c;
  // second's docs (c, a) are all in the list -> stop, though first still
  // has b, d, e (Radlinski et al.'s loop needs both to have a new doc).
  const Views first = {"a", "b", "c", "d", "e"};
  const Views second = {"c", "a"};
  const InterleavedList out = Interleave(first, second, 10, 7);
  EXPECT_EQ(out.docs, (Views{"a", "c"}));
  EXPECT_EQ(out.teams, (std::vector<uint8_t>{0, 1}));
}

TEST(TeamDraftInterleaveTest, EmptyInputsAndZeroLength) {
  const Views some = {"a", "b"};
  EXPECT_TRUE(Interleave({}, some, 10, 1).docs.empty());
  EXPECT_TRUE(Interleave(some, {}, 10, 1).docs.empty());
  EXPECT_TRUE(Interleave(some, some, 0, 1).docs.empty());
}

TEST(TeamDraftInterleaveTest, ClearsTheOutputFirst) {
  Xoshiro256 rng(1);
  InterleavedList out;
  out.docs = {"stale"};
  out.teams = {1};
  const Views first = {"a"};
  TeamDraftInterleave(first, first, 10, &rng, &out);
  EXPECT_EQ(out.docs, (Views{"a"}));
  EXPECT_EQ(out.teams.size(), 1u);
}

TEST(TeamDraftInterleaveTest, IdenticalRankingsGiveTheRanking) {
  // Each pick is the highest-ranked doc not yet in the list of the same
  // ranking, i.e. the next one, whichever team picks.
  const Views ranking = {"a", "b", "c", "d", "e", "f", "g"};
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    EXPECT_EQ(Interleave(ranking, ranking, 100, seed).docs, ranking);
    EXPECT_EQ(Interleave(ranking, ranking, 4, seed).docs,
              (Views{"a", "b", "c", "d"}));
  }
}

// ---------------------------------------------------------------------------
// TeamDraftInterleave: invariants on random inputs.

// A random ranking of up to `max_size` distinct docs drawn from a pool of
// `pool` names (small, so that the two rankings overlap often).
Views RandomRanking(const std::vector<std::string>& pool, size_t max_size,
                    Xoshiro256* rng) {
  std::vector<size_t> order(pool.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Fisher-Yates.
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng->Below(i)]);
  }
  const size_t size = rng->Below(max_size + 1);
  Views ranking;
  for (size_t i = 0; i < size; ++i) ranking.push_back(pool[order[i]]);
  return ranking;
}

// The highest-ranked doc of `ranking` not in docs[0, end); empty if none.
std::string_view HighestNew(const Views& ranking, const Views& docs,
                            size_t end) {
  for (std::string_view doc : ranking) {
    if (std::find(docs.begin(), docs.begin() + end, doc) ==
        docs.begin() + end) {
      return doc;
    }
  }
  return {};
}

size_t RankIn(const Views& ranking, std::string_view doc) {
  return std::find(ranking.begin(), ranking.end(), doc) - ranking.begin();
}

// Checks every property of Radlinski et al.'s Fig. 2 that does not depend
// on the coin.
void CheckInvariants(const Views& first, const Views& second, size_t max_length,
                     const InterleavedList& out) {
  const Views* rankings[2] = {&first, &second};
  ASSERT_EQ(out.docs.size(), out.teams.size());
  ASSERT_LE(out.docs.size(), max_length);
  int64_t size[2] = {0, 0};
  size_t last_rank[2] = {0, 0};
  bool any[2] = {false, false};
  for (size_t i = 0; i < out.docs.size(); ++i) {
    const uint8_t team = out.teams[i];
    ASSERT_LE(team, 1) << "position " << i;
    // Both rankings had a new doc before this pick (the loop condition).
    ASSERT_FALSE(HighestNew(first, out.docs, i).empty()) << "position " << i;
    ASSERT_FALSE(HighestNew(second, out.docs, i).empty()) << "position " << i;
    // The pick is its team's highest-ranked doc not yet in the list; this
    // also rules out duplicates.
    ASSERT_EQ(out.docs[i], HighestNew(*rankings[team], out.docs, i))
        << "position " << i;
    // Each team's docs keep their ranking's relative order.
    const size_t rank = RankIn(*rankings[team], out.docs[i]);
    if (any[team]) {
      ASSERT_GT(rank, last_rank[team]) << "position " << i;
    }
    last_rank[team] = rank;
    any[team] = true;
    // Team sizes differ by at most 1 after every prefix.
    ++size[team];
    ASSERT_LE(std::abs(size[0] - size[1]), 1) << "position " << i;
  }
  // No duplicates (implied above; checked directly too).
  Views sorted = out.docs;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // Stopped only when full or when a ranking had no new doc left.
  if (out.docs.size() < max_length) {
    const size_t n = out.docs.size();
    ASSERT_TRUE(HighestNew(first, out.docs, n).empty() ||
                HighestNew(second, out.docs, n).empty());
  }
}

TEST(TeamDraftInterleaveTest, InvariantsOnRandomInputs) {
  constexpr uint64_t kSeed = 20240612;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  Xoshiro256 rng(kSeed);
  std::vector<std::string> pool;
  for (int i = 0; i < 25; ++i) pool.push_back("d" + std::to_string(i));
  InterleavedList out;
  for (int trial = 0; trial < 3000; ++trial) {
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    const Views first = RandomRanking(pool, 15, &rng);
    const Views second = RandomRanking(pool, 15, &rng);
    const size_t max_length = rng.Below(22);
    TeamDraftInterleave(first, second, max_length, &rng, &out);
    CheckInvariants(first, second, max_length, out);
    if (HasFatalFailure()) return;
  }
}

TEST(TeamDraftInterleaveTest, EachTeamPicksFirstAboutHalfTheTime) {
  // The first pick is the coin alone. Over n = 10000 lists the count of
  // first-team first picks is Binomial(n, 1/2): mean 5000, sd 50; allow 4
  // sd (two-sided chance 6e-5 for a fair coin).
  constexpr uint64_t kSeed = 99;
  Xoshiro256 rng(kSeed);
  // Disjoint rankings of 4: neither runs out within 6 picks.
  const Views first = {"a", "b", "c", "d"};
  const Views second = {"w", "x", "y", "z"};
  InterleavedList out;
  int64_t first_first = 0;
  int64_t second_of_pair_is_other = 0;
  constexpr int64_t kLists = 10000;
  for (int64_t i = 0; i < kLists; ++i) {
    TeamDraftInterleave(first, second, 6, &rng, &out);
    ASSERT_EQ(out.docs.size(), 6u);
    if (out.teams[0] == 0) ++first_first;
    if (out.teams[1] != out.teams[0]) ++second_of_pair_is_other;
  }
  EXPECT_NEAR(static_cast<double>(first_first), 5000, 200) << "seed " << kSeed;
  // The second pick always goes to the team that did not pick first.
  EXPECT_EQ(second_of_pair_is_other, kLists);
}

// ---------------------------------------------------------------------------
// CreditClicks.

TEST(CreditClicksTest, HandExamples) {
  const std::vector<uint8_t> teams = {0, 1, 0, 1};
  auto credit = [&](std::vector<Grade> clicks, Grade threshold) {
    return CreditClicks(teams, clicks, threshold);
  };
  // No click: grades below 1, or unjudged.
  EXPECT_EQ(credit({0, 0, 0, 0}, 1), InterleavingOutcome::kNoClick);
  EXPECT_EQ(credit({kUnjudged, kUnjudged, kUnjudged, kUnjudged}, 1),
            InterleavingOutcome::kNoClick);
  // Tie: one click each (ranks 1 and 2).
  EXPECT_EQ(credit({1, 1, 0, 0}, 1), InterleavingOutcome::kTie);
  // Tie with two each.
  EXPECT_EQ(credit({1, 3, 2, 1}, 1), InterleavingOutcome::kTie);
  // First wins 2 to 1 (ranks 1 and 3 for the first, rank 4 for the second).
  EXPECT_EQ(credit({1, 0, 1, 1}, 1), InterleavingOutcome::kFirstWins);
  // Second wins 1 to 0.
  EXPECT_EQ(credit({0, 2, 0, 0}, 1), InterleavingOutcome::kSecondWins);
  // Threshold 2: grade 1 is not a click; only rank 2 (second) counts.
  EXPECT_EQ(credit({1, 2, 1, 1}, 2), InterleavingOutcome::kSecondWins);
  // Threshold 2: grades 2 and 3 for the first, 1 for the second.
  EXPECT_EQ(credit({2, 1, 3, 0}, 2), InterleavingOutcome::kFirstWins);
  EXPECT_EQ(credit({1, 1, 1, 1}, 2), InterleavingOutcome::kNoClick);
}

TEST(CreditClicksTest, UnjudgedIsNeverAClick) {
  const std::vector<uint8_t> teams = {0, 1, 0, 1};
  // Threshold 0: grade 0 at rank 2 is a click for the second team; the
  // unjudged ranks 1 and 3 are not clicks for the first.
  const std::vector<Grade> clicks = {kUnjudged, 0, kUnjudged, kUnjudged};
  EXPECT_EQ(CreditClicks(teams, clicks, 0), InterleavingOutcome::kSecondWins);
  // Not even with a negative threshold.
  const std::vector<Grade> unjudged = {kUnjudged, kUnjudged, kUnjudged,
                                       kUnjudged};
  EXPECT_EQ(CreditClicks(teams, unjudged, -5), InterleavingOutcome::kNoClick);
}

TEST(CreditClicksTest, EmptyImpressionIsNoClick) {
  EXPECT_EQ(CreditClicks({}, {}, 1), InterleavingOutcome::kNoClick);
}

// ---------------------------------------------------------------------------
// InterleavingCounts and Preference.

TEST(InterleavingCountsTest, AddAndMerge) {
  InterleavingCounts a;
  a.Add(InterleavingOutcome::kNoClick);
  a.Add(InterleavingOutcome::kTie);
  a.Add(InterleavingOutcome::kFirstWins);
  a.Add(InterleavingOutcome::kFirstWins);
  a.Add(InterleavingOutcome::kSecondWins);
  EXPECT_EQ(a.impressions, 5);
  EXPECT_EQ(a.no_click, 1);
  EXPECT_EQ(a.ties, 1);
  EXPECT_EQ(a.wins[0], 2);
  EXPECT_EQ(a.wins[1], 1);
  EXPECT_EQ(a.decided(), 3);
  EXPECT_EQ(a.clicked(), 4);

  InterleavingCounts b;
  b.Add(InterleavingOutcome::kSecondWins);
  b.Add(InterleavingOutcome::kSecondWins);
  b.Add(InterleavingOutcome::kNoClick);
  a.Merge(b);
  EXPECT_EQ(a.impressions, 8);
  EXPECT_EQ(a.no_click, 2);
  EXPECT_EQ(a.ties, 1);
  EXPECT_EQ(a.wins[0], 2);
  EXPECT_EQ(a.wins[1], 3);

  // Merging an empty count changes nothing.
  a.Merge(InterleavingCounts{});
  EXPECT_EQ(a.impressions, 8);
  EXPECT_EQ(a.clicked(), 6);
}

InterleavingCounts Counts(int64_t first, int64_t second, int64_t ties,
                          int64_t no_click) {
  InterleavingCounts counts;
  counts.wins = {first, second};
  counts.ties = ties;
  counts.no_click = no_click;
  counts.impressions = first + second + ties + no_click;
  return counts;
}

TEST(PreferenceTest, HandValues) {
  // (5 + 2 / 2) / (3 + 5 + 2) - 1/2 = 0.6 - 0.5 = 0.1.
  EXPECT_DOUBLE_EQ(Preference(Counts(3, 5, 2, 7)), 0.1);
  // (1 + 0) / 5 - 1/2 = -0.3.
  EXPECT_DOUBLE_EQ(Preference(Counts(4, 1, 0, 0)), -0.3);
  // Ties only: (0 + 3 / 2) / 3 - 1/2 = 0.
  EXPECT_DOUBLE_EQ(Preference(Counts(0, 0, 3, 0)), 0);
  // All won by the second: 1 - 1/2.
  EXPECT_DOUBLE_EQ(Preference(Counts(0, 4, 0, 0)), 0.5);
  // No clicked impression: NaN.
  EXPECT_TRUE(std::isnan(Preference(Counts(0, 0, 0, 12))));
  EXPECT_TRUE(std::isnan(Preference(InterleavingCounts{})));
}

TEST(PreferenceVerdictTest, Signs) {
  EXPECT_EQ(PreferenceVerdict(0.01, 0.1, 0.05), 1);
  EXPECT_EQ(PreferenceVerdict(0.01, -0.1, 0.05), -1);
  EXPECT_EQ(PreferenceVerdict(0.2, 0.1, 0.05), 0);
  EXPECT_EQ(PreferenceVerdict(0.2, -0.1, 0.05), 0);
  EXPECT_EQ(PreferenceVerdict(0.05, 0.1, 0.05), 0);  // Strictly below.
  EXPECT_EQ(PreferenceVerdict(0.01, 0, 0.05), 0);
  EXPECT_EQ(PreferenceVerdict(kNaN, 0.1, 0.05), 0);
  EXPECT_EQ(PreferenceVerdict(0.01, kNaN, 0.05), 0);
}

// ---------------------------------------------------------------------------
// Fidelity (Radlinski et al. 2008; Hofmann, Whiteson and de Rijke, "A
// probabilistic method for inferring preferences from clicks", CIKM 2011):
// clicks that do not depend on the team give no preference.

// Clicks each rank r (0-based) with probability 0.6 / (r + 1), whatever
// the doc or team: position bias only.
std::vector<Grade> PositionClicks(size_t length, Xoshiro256* rng) {
  std::vector<Grade> clicks(length);
  for (size_t r = 0; r < length; ++r) {
    clicks[r] = rng->Uniform() < 0.6 / static_cast<double>(r + 1) ? 1 : 0;
  }
  return clicks;
}

// Simulates `impressions` impressions of `first` against `second` with
// position-only clicks.
InterleavingCounts SimulateRandomClicks(const Views& first, const Views& second,
                                        int64_t impressions, uint64_t seed) {
  Xoshiro256 rng(seed);
  InterleavedList out;
  InterleavingCounts counts;
  for (int64_t i = 0; i < impressions; ++i) {
    TeamDraftInterleave(first, second, 10, &rng, &out);
    const std::vector<Grade> clicks = PositionClicks(out.docs.size(), &rng);
    counts.Add(CreditClicks(out.teams, clicks, 1));
  }
  return counts;
}

// Under team-independent clicks each clicked impression scores 0, 1/2 or
// 1 for the second team with mean 1/2, so the preference has mean 0 and
// sd at most 1 / (2 sqrt(clicked)); the decided wins of the second team
// are Binomial(decided, 1/2). Both are allowed 4 sd.
void ExpectNoPreference(const InterleavingCounts& counts) {
  ASSERT_GT(counts.clicked(), 1000);
  const double clicked = static_cast<double>(counts.clicked());
  EXPECT_LE(std::fabs(Preference(counts)), 4 * 0.5 / std::sqrt(clicked));
  const double decided = static_cast<double>(counts.decided());
  EXPECT_LE(std::fabs(static_cast<double>(counts.wins[1]) - decided / 2),
            4 * 0.5 * std::sqrt(decided));
}

TEST(InterleavingFidelityTest, RandomClicksGiveNoPreference) {
  constexpr uint64_t kSeed = 2008;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  const Views first = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const Views second = {"c", "k", "a", "l", "m", "b", "n", "o", "p", "q"};
  const InterleavingCounts counts =
      SimulateRandomClicks(first, second, 20000, kSeed);
  ExpectNoPreference(counts);
}

TEST(InterleavingFidelityTest, IdenticalRankingsGiveNoPreference) {
  // With first == second the list is the ranking itself, but the teams are
  // still assigned by the coin (positions 2k and 2k + 1 go one to each
  // team), so a single click is a win for whichever team drew that
  // position: the outcome is symmetric, not always a tie.
  constexpr uint64_t kSeed = 2012;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  const Views ranking = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const InterleavingCounts counts =
      SimulateRandomClicks(ranking, ranking, 20000, kSeed);
  ExpectNoPreference(counts);
  // A click on both docs of each drafted pair is always a tie.
  Xoshiro256 rng(kSeed);
  InterleavedList out;
  for (int i = 0; i < 200; ++i) {
    TeamDraftInterleave(ranking, ranking, 10, &rng, &out);
    const size_t pairs = 1 + rng.Below(5);
    std::vector<Grade> clicks(out.docs.size(), 0);
    for (size_t r = 0; r < 2 * pairs; ++r) clicks[r] = 1;
    ASSERT_EQ(CreditClicks(out.teams, clicks, 1), InterleavingOutcome::kTie)
        << "impression " << i;
  }
}

// ---------------------------------------------------------------------------
// SignTestPValue against SciPy 1.10.1.

TEST(SignTestPValueTest, MatchesScipyBinomtest) {
  // No decided impression.
  EXPECT_EQ(SignTestPValue(0, 0), 1.0);
  // scipy.stats.binomtest(0, 1, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(1, 0), 1.0);
  // scipy.stats.binomtest(1, 1, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(0, 1), 1.0);
  // scipy.stats.binomtest(1, 2, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(1, 1), 1.0);
  // scipy.stats.binomtest(1, 3, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(2, 1), 1.0);
  // scipy.stats.binomtest(3, 10, 0.5).pvalue = 0.34375
  EXPECT_TRUE(RelativelyNear(SignTestPValue(7, 3), 0.34375, 1e-12));
  // scipy.stats.binomtest(7, 10, 0.5).pvalue = 0.34375
  EXPECT_TRUE(RelativelyNear(SignTestPValue(3, 7), 0.34375, 1e-12));
  // scipy.stats.binomtest(5, 10, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(5, 5), 1.0);
  // scipy.stats.binomtest(0, 10, 0.5).pvalue = 0.001953125
  EXPECT_TRUE(RelativelyNear(SignTestPValue(10, 0), 0.001953125, 1e-12));
  // scipy.stats.binomtest(10, 10, 0.5).pvalue = 0.001953125
  EXPECT_TRUE(RelativelyNear(SignTestPValue(0, 10), 0.001953125, 1e-12));
  // scipy.stats.binomtest(12, 20, 0.5).pvalue = 0.5034446716308594
  EXPECT_TRUE(RelativelyNear(SignTestPValue(8, 12), 0.5034446716308594, 1e-12));
  // scipy.stats.binomtest(40, 100, 0.5).pvalue = 0.05688793364098088
  EXPECT_TRUE(
      RelativelyNear(SignTestPValue(60, 40), 0.05688793364098088, 1e-10));
  // scipy.stats.binomtest(0, 60, 0.5).pvalue = 1.734723475976807e-18
  EXPECT_TRUE(
      RelativelyNear(SignTestPValue(60, 0), 1.734723475976807e-18, 1e-10));
  // scipy.stats.binomtest(5000, 9800, 0.5).pvalue = 0.04440414879984629
  EXPECT_TRUE(
      RelativelyNear(SignTestPValue(4800, 5000), 0.04440414879984629, 1e-9));
  // scipy.stats.binomtest(4900, 9800, 0.5).pvalue = 1.0
  EXPECT_DOUBLE_EQ(SignTestPValue(4900, 4900), 1.0);
  // scipy.stats.binomtest(4700, 9800, 0.5).pvalue = 5.5532609648277366e-05
  EXPECT_TRUE(
      RelativelyNear(SignTestPValue(5100, 4700), 5.5532609648277366e-05, 1e-9));
  // scipy.stats.binomtest(501000, 1000000, 0.5).pvalue = 0.045608299865389515
  EXPECT_TRUE(RelativelyNear(SignTestPValue(499000, 501000),
                             0.045608299865389515, 1e-8));
  // scipy.stats.binomtest(0, 1000, 0.5).pvalue = 1.8665272370064378e-301
  EXPECT_TRUE(
      RelativelyNear(SignTestPValue(1000, 0), 1.8665272370064378e-301, 1e-10));
}

TEST(SignTestPValueTest, NegativeCountsAreNaN) {
  EXPECT_TRUE(std::isnan(SignTestPValue(-1, 3)));
  EXPECT_TRUE(std::isnan(SignTestPValue(3, -1)));
}

// ---------------------------------------------------------------------------
// The sequential test.

TEST(BetaPriorShapeTest, Values) {
  // (1 / (4 * 0.05^2) - 1) / 2 = (100 - 1) / 2.
  EXPECT_DOUBLE_EQ(BetaPriorShape(0.05), 49.5);
  // (1 / (4 * 0.25^2) - 1) / 2 = (4 - 1) / 2.
  EXPECT_DOUBLE_EQ(BetaPriorShape(0.25), 1.5);
  // Beta(1, 1), the uniform prior, has variance 1/12: sd = sqrt(1/12).
  EXPECT_NEAR(BetaPriorShape(std::sqrt(1.0 / 12)), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(BetaPriorShape(kDefaultInterleavingPriorSd), 49.5);
  EXPECT_TRUE(std::isnan(BetaPriorShape(0)));
  EXPECT_TRUE(std::isnan(BetaPriorShape(0.5)));
  EXPECT_TRUE(std::isnan(BetaPriorShape(-0.1)));
  EXPECT_TRUE(std::isnan(BetaPriorShape(kNaN)));
}

TEST(PreferenceLogLikelihoodRatioTest, HandValues) {
  EXPECT_EQ(PreferenceLogLikelihoodRatio(0, 0, 49.5), 0);
  // Uniform prior a = 1: LR_n = x! y! / (n + 1)! * 2^n.
  // One decided impression: 1! 0! / 2! * 2 = 1, log 0.
  EXPECT_NEAR(PreferenceLogLikelihoodRatio(0, 1, 1), 0, 1e-14);
  // Two won by the second: 2! / 3! * 4 = 4/3, log(4/3).
  EXPECT_NEAR(PreferenceLogLikelihoodRatio(0, 2, 1), std::log(4.0 / 3.0),
              1e-14);
}

TEST(PreferenceLogLikelihoodRatioTest, MatchesMpmath) {
  // Arguments: (first wins y, second wins x, a); expected
  // mpmath.log(mpmath.beta(a + x, a + y)) - mpmath.log(mpmath.beta(a, a))
  //   + (x + y) * mpmath.log(2), mp.dps = 40.
  struct Case {
    int64_t first, second;
    double a, expected;
  };
  const Case cases[] = {
      {0, 2, 1, 0.28768207245178093},
      {3, 7, 49.5, 0.025743219096941035},
      {7, 3, 49.5, 0.025743219096941035},
      {40, 60, 49.5, 0.66145564509033055},
      {60, 40, 49.5, 0.66145564509033055},
      {100, 150, 49.5, 2.9726205701978149},
      {480, 520, 49.5, -0.47705729048433853},
      {4700, 5100, 49.5, 5.7796077361438624},
      {2, 3, 0.5, -0.98082925301172624},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << c.first << " " << c.second << " a " << c.a);
    // Absolute: the lgamma differences cancel about n log n.
    EXPECT_NEAR(PreferenceLogLikelihoodRatio(c.first, c.second, c.a),
                c.expected, 1e-9);
  }
}

TEST(PreferenceLogLikelihoodRatioTest, InvalidArgumentsAreNaN) {
  EXPECT_TRUE(std::isnan(PreferenceLogLikelihoodRatio(1, 2, 0)));
  EXPECT_TRUE(std::isnan(PreferenceLogLikelihoodRatio(1, 2, -1)));
  EXPECT_TRUE(std::isnan(PreferenceLogLikelihoodRatio(1, 2, kNaN)));
  EXPECT_TRUE(std::isnan(PreferenceLogLikelihoodRatio(-1, 2, 49.5)));
}

TEST(SequentialPreferenceTestTest, RunningMinimumOverLooks) {
  SequentialPreferenceTest test;  // prior sd 0.05: a = 49.5.
  EXPECT_DOUBLE_EQ(test.prior_shape(), 49.5);
  EXPECT_EQ(test.p_value(), 1);
  EXPECT_EQ(test.look_p_value(), 1);
  EXPECT_EQ(test.looks(), 0);

  // Ties and no-clicks only: no decided impression, not a look.
  test.Look(Counts(0, 0, 5, 20));
  EXPECT_EQ(test.looks(), 0);
  EXPECT_EQ(test.p_value(), 1);

  // min(1, exp(-2.9726205701978149)) = 0.05116904241190805 (mpmath above).
  test.Look(Counts(100, 150, 5, 20));
  EXPECT_EQ(test.looks(), 1);
  EXPECT_TRUE(RelativelyNear(test.look_p_value(), 0.05116904241190805, 1e-8));
  EXPECT_TRUE(RelativelyNear(test.p_value(), 0.05116904241190805, 1e-8));

  // log LR = -0.477 < 0: this look alone gives 1; the minimum stays.
  test.Look(Counts(480, 520, 9, 30));
  EXPECT_EQ(test.looks(), 2);
  EXPECT_EQ(test.look_p_value(), 1);
  EXPECT_TRUE(RelativelyNear(test.p_value(), 0.05116904241190805, 1e-8));

  // min(1, exp(-5.7796077361438624)) = 0.0030899272373161512.
  test.Look(Counts(4700, 5100, 40, 100));
  EXPECT_EQ(test.looks(), 3);
  EXPECT_TRUE(RelativelyNear(test.look_p_value(), 0.0030899272373161512, 1e-8));
  EXPECT_TRUE(RelativelyNear(test.p_value(), 0.0030899272373161512, 1e-8));
}

TEST(SequentialPreferenceTestTest, InvalidPriorGivesNaN) {
  SequentialPreferenceTest test(0.7);
  EXPECT_TRUE(std::isnan(test.prior_shape()));
  test.Look(Counts(3, 5, 0, 0));
  EXPECT_TRUE(std::isnan(test.p_value()));
  EXPECT_TRUE(std::isnan(test.look_p_value()));
}

// Under H0 (p = 1/2) the running-minimum p-value falls below alpha at some
// look with probability at most alpha (Ville's inequality), however often
// one looks; the sign test read at every look does not keep its level.
// 2000 experiments of 2000 decided impressions, looked at every 10: the
// rate of ever p < 0.05 must stay below 0.05 plus 3 binomial sd,
// 0.05 + 3 sqrt(0.05 * 0.95 / 2000) = 0.0646.
TEST(SequentialPreferenceTestTest, ValidUnderContinuousMonitoring) {
  constexpr uint64_t kSeed = 1970;
  constexpr int kExperiments = 2000;
  constexpr int kImpressions = 2000;
  constexpr int kEvery = 10;
  constexpr double kAlpha = 0.05;
  Xoshiro256 rng(kSeed);
  int sequential_rejections = 0;
  int naive_rejections = 0;
  for (int e = 0; e < kExperiments; ++e) {
    SequentialPreferenceTest test;
    InterleavingCounts counts;
    bool naive = false;
    for (int n = kEvery; n <= kImpressions; n += kEvery) {
      // Ten fair coins at once: the second team's wins among ten decided
      // impressions are the set bits of ten random bits.
      const int second = std::popcount(rng.Next() & 0x3FF);
      counts.wins[1] += second;
      counts.wins[0] += kEvery - second;
      counts.impressions += kEvery;
      test.Look(counts);
      // The naive reading: the fixed-horizon sign test at every 100th.
      if (n % 100 == 0 &&
          SignTestPValue(counts.wins[0], counts.wins[1]) < kAlpha) {
        naive = true;
      }
    }
    ASSERT_EQ(test.looks(), kImpressions / kEvery);
    if (test.p_value() < kAlpha) ++sequential_rejections;
    if (naive) ++naive_rejections;
  }
  const double sequential_rate =
      static_cast<double>(sequential_rejections) / kExperiments;
  const double naive_rate =
      static_cast<double>(naive_rejections) / kExperiments;
  const double margin = 3 * std::sqrt(kAlpha * (1 - kAlpha) / kExperiments);
  EXPECT_LT(sequential_rate, kAlpha + margin)
      << "seed " << kSeed << " naive " << naive_rate;
  // Peeking at the sign test 20 times inflates its level well past alpha:
  // this is what the sequential test is for.
  EXPECT_GT(naive_rate, kAlpha + margin)
      << "seed " << kSeed << " sequential " << sequential_rate;
  std::printf(
      "H0, %d experiments x %d decided, seed %llu: ever p < 0.05: "
      "sequential %.4f, sign test at 20 looks %.4f\n",
      kExperiments, kImpressions, static_cast<unsigned long long>(kSeed),
      sequential_rate, naive_rate);
}

TEST(SequentialPreferenceTestTest, DetectsAClearPreference) {
  // p = 0.6: the expected log LR after 2000 decided impressions is about
  // n KL(0.6 || 0.5) - (1/2) log(n / (8 a)) ~ 40 - 1, so nearly every
  // experiment ends far below 0.05. Require 95 of 100.
  constexpr uint64_t kSeed = 600;
  Xoshiro256 rng(kSeed);
  int detected = 0;
  for (int e = 0; e < 100; ++e) {
    SequentialPreferenceTest test;
    InterleavingCounts counts;
    for (int n = 1; n <= 2000; ++n) {
      ++counts.wins[rng.Uniform() < 0.6 ? 1 : 0];
      if (n % 10 == 0) test.Look(counts);
    }
    if (PreferenceVerdict(test.p_value(), Preference(counts), 0.05) == 1) {
      ++detected;
    }
  }
  EXPECT_GE(detected, 95) << "seed " << kSeed;
}

}  // namespace
}  // namespace rankwatch::metrics
