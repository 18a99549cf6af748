// Tests of metrics/multileaving.h.
//
// Where the expected figures come from:
//   * credit and pairwise outcomes: hand-worked impressions, the working
//     written beside each;
//   * the interval: the Wald formula worked by hand (z = 1.959964 for
//     95%, from tables);
//   * Benjamini-Hochberg, verdicts, Copeland scores: worked by hand;
//   * the multileaver: invariants of Schuth et al.'s Algorithm 1, its
//     agreement with TeamDraftInterleave for two rankings, and the fairness
//     of every rank (simulation, binomial bounds stated beside the test,
//     seeds printed on failure);
//   * error rates under equal rankers: simulation with the multileaver and
//     a position-biased click model, seeds printed.
#include "metrics/multileaving.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

using Views = std::vector<std::string_view>;

TEST(MultileavingTest, PairIndexIsRowOrder) {
  // Four teams: (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
  EXPECT_EQ(NumPairs(4), 6u);
  EXPECT_EQ(NumPairs(2), 1u);
  EXPECT_EQ(NumPairs(8), 28u);
  EXPECT_EQ(PairIndex(0, 1, 4), 0u);
  EXPECT_EQ(PairIndex(0, 3, 4), 2u);
  EXPECT_EQ(PairIndex(1, 2, 4), 3u);
  EXPECT_EQ(PairIndex(1, 3, 4), 4u);
  EXPECT_EQ(PairIndex(2, 3, 4), 5u);
  EXPECT_EQ(PairIndex(6, 7, 8), 27u);
}

// Three teams A = 0, B = 1, C = 2, clicks at grade >= 1.
//   1: teams A B C A B, grades 1 0 1 1 0: A 2 (ranks 1, 4), B 0, C 1.
//      (A,B) A wins; (A,C) A wins; (B,C) C wins.
//   2: teams B C A, grades 0 0 0: no click.
//   3: teams C A B C, grades 1 1 unjudged 0: C 1, A 1, B 0 (unjudged is
//      never a click). (A,B) A wins; (A,C) tie; (B,C) C wins.
//   4: teams A B C, grades 0 2 0: B 1. (A,B) B wins; (A,C) tie (both 0 on
//      a clicked impression); (B,C) B wins.
// Totals: 4 impressions, 1 no_click, clicks A 3, B 1, C 2;
//   (A,B): A 2, B 1, ties 0;  (A,C): A 1, C 0, ties 2;
//   (B,C): B 1, C 2, ties 0.
TEST(MultileavingTest, HandWorkedCreditAndPairs) {
  struct Impression {
    std::vector<uint8_t> teams;
    std::vector<Grade> grades;
  };
  const std::vector<Impression> impressions = {
      {{0, 1, 2, 0, 1}, {1, 0, 1, 1, 0}},
      {{1, 2, 0}, {0, 0, 0}},
      {{2, 0, 1, 2}, {1, 1, kUnjudged, 0}},
      {{0, 1, 2}, {0, 2, 0}},
  };
  const std::vector<std::vector<int64_t>> want_credit = {
      {2, 0, 1}, {0, 0, 0}, {1, 0, 1}, {0, 1, 0}};
  MultileavingCounts counts(3);
  for (size_t i = 0; i < impressions.size(); ++i) {
    std::vector<int64_t> credit(3, -7);  // Overwritten.
    const int64_t total =
        CreditTeams(impressions[i].teams, impressions[i].grades, 1, credit);
    EXPECT_EQ(credit, want_credit[i]) << "impression " << i + 1;
    EXPECT_EQ(total, want_credit[i][0] + want_credit[i][1] + want_credit[i][2]);
    counts.Add(credit);
  }
  EXPECT_EQ(counts.impressions, 4);
  EXPECT_EQ(counts.no_click, 1);
  EXPECT_EQ(counts.clicks, (std::vector<int64_t>{3, 1, 2}));
  const InterleavingCounts& ab = counts.pairs[PairIndex(0, 1, 3)];
  const InterleavingCounts& ac = counts.pairs[PairIndex(0, 2, 3)];
  const InterleavingCounts& bc = counts.pairs[PairIndex(1, 2, 3)];
  EXPECT_EQ(ab.wins[0], 2);
  EXPECT_EQ(ab.wins[1], 1);
  EXPECT_EQ(ab.ties, 0);
  EXPECT_EQ(ac.wins[0], 1);
  EXPECT_EQ(ac.wins[1], 0);
  EXPECT_EQ(ac.ties, 2);
  EXPECT_EQ(bc.wins[0], 1);
  EXPECT_EQ(bc.wins[1], 2);
  EXPECT_EQ(bc.ties, 0);
  for (const InterleavingCounts& p : counts.pairs) {
    EXPECT_EQ(p.impressions, 4);
    EXPECT_EQ(p.no_click, 1);
  }
  EXPECT_TRUE(counts.Consistent());
  // Preferences of the second of each pair: (A,B) (1 + 0) / 3 - 1/2 =
  // -1/6; (A,C) (0 + 2/2) / 3 - 1/2 = -1/6; (B,C) (2 + 0) / 3 - 1/2 = 1/6.
  EXPECT_NEAR(Preference(ab), -1.0 / 6, 1e-12);
  EXPECT_NEAR(Preference(ac), -1.0 / 6, 1e-12);
  EXPECT_NEAR(Preference(bc), 1.0 / 6, 1e-12);

  // Merging two halves gives the whole.
  MultileavingCounts half1(3);
  MultileavingCounts half2(3);
  half1.Add(want_credit[0]);
  half1.Add(want_credit[1]);
  half2.Add(want_credit[2]);
  half2.Add(want_credit[3]);
  half1.Merge(half2);
  EXPECT_EQ(half1.clicks, counts.clicks);
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(half1.pairs[p].wins, counts.pairs[p].wins) << p;
    EXPECT_EQ(half1.pairs[p].ties, counts.pairs[p].ties) << p;
    EXPECT_EQ(half1.pairs[p].impressions, counts.pairs[p].impressions) << p;
  }
}

TEST(MultileavingTest, TeamsPastTheExperimentAreNobodys) {
  std::vector<int64_t> credit(2);
  const std::vector<uint8_t> teams = {0, 5, 1};
  const std::vector<Grade> grades = {1, 1, 1};
  EXPECT_EQ(CreditTeams(teams, grades, 1, credit), 2);
  EXPECT_EQ(credit, (std::vector<int64_t>{1, 1}));
}

TEST(MultileavingTest, InconsistentCountsAreDetected) {
  MultileavingCounts c(3);
  c.Add(std::vector<int64_t>{1, 0, 0});
  EXPECT_TRUE(c.Consistent());
  c.pairs[1].ties = 1;  // One more outcome than impressions.
  EXPECT_FALSE(c.Consistent());
  MultileavingCounts wrong_size(3);
  wrong_size.pairs.pop_back();
  EXPECT_FALSE(wrong_size.Consistent());
}

// (A,B) above: scores -1/2, -1/2, +1/2; mean -1/6; sum of squares 3/4;
// sample variance (3/4 - 3 / 36) / 2 = 1/3; standard error sqrt(1/9) =
// 1/3; half width 1.959964 / 3 = 0.653321.
TEST(MultileavingTest, PreferenceIntervalHandWorked) {
  InterleavingCounts c;
  c.wins = {2, 1};
  c.impressions = 4;
  c.no_click = 1;
  const ConfidenceInterval ci = PreferenceInterval(c, 0.95);
  EXPECT_NEAR(ci.lower, -1.0 / 6 - 0.653321, 1e-6);
  EXPECT_NEAR(ci.upper, -1.0 / 6 + 0.653321, 1e-6);
  // Every score equal: zero width. One clicked impression: infinite.
  InterleavingCounts same;
  same.wins = {0, 5};
  EXPECT_DOUBLE_EQ(PreferenceInterval(same, 0.95).lower, 0.5);
  EXPECT_DOUBLE_EQ(PreferenceInterval(same, 0.95).upper, 0.5);
  InterleavingCounts one;
  one.ties = 1;
  EXPECT_TRUE(std::isinf(PreferenceInterval(one, 0.95).lower));
}

// The counts of HandWorkedCreditAndPairs with given sequential p-values,
// at alpha 0.05.
//   p = (0.001, 0.04, 0.5) for (A,B), (A,C), (B,C): BH sorted 0.001, 0.04,
//   0.5 -> 3 * 0.001 / 1 = 0.003, 3 * 0.04 / 2 = 0.06, 3 * 0.5 / 3 = 0.5
//   (already increasing). Verdicts: (A,B) 0.003 < 0.05 with preference
//   -1/6: -1 (A better); (A,C) 0.06: 0; (B,C) 0.5: 0. Copeland A +1,
//   B -1, C 0. Point Copeland (signs of the preferences -, -, +): A +2,
//   B -2, C 0. Ranking A, C, B; no winner (A beats only one of two).
//   p = (0.001, 0.02, 0.5): adjusted 0.003, 0.03, 0.5: (A,C) -1 too.
//   Copeland A 2, B -1, C -1; B and C tie, point Copeland C 0 > B -2:
//   ranking A, C, B; A beats both: the winner.
TEST(MultileavingTest, AnalysisHandWorked) {
  MultileavingCounts counts(3);
  for (const std::vector<int64_t>& credit : std::vector<std::vector<int64_t>>{
           {2, 0, 1}, {0, 0, 0}, {1, 0, 1}, {0, 1, 0}}) {
    counts.Add(credit);
  }
  const MultileavingAnalysis a =
      AnalyzeMultileaving(counts, std::vector<double>{0.001, 0.04, 0.5}, 0.05);
  ASSERT_EQ(a.pairs.size(), 3u);
  EXPECT_NEAR(a.pairs[0].adjusted_p_value, 0.003, 1e-12);
  EXPECT_NEAR(a.pairs[1].adjusted_p_value, 0.06, 1e-12);
  EXPECT_NEAR(a.pairs[2].adjusted_p_value, 0.5, 1e-12);
  EXPECT_EQ(a.pairs[0].verdict, -1);
  EXPECT_EQ(a.pairs[1].verdict, 0);
  EXPECT_EQ(a.pairs[2].verdict, 0);
  EXPECT_EQ(a.pairs[2].first, 1u);
  EXPECT_EQ(a.pairs[2].second, 2u);
  EXPECT_EQ(a.copeland, (std::vector<int>{1, -1, 0}));
  EXPECT_EQ(a.point_copeland, (std::vector<int>{2, -2, 0}));
  EXPECT_EQ(a.ranking, (std::vector<size_t>{0, 2, 1}));
  EXPECT_EQ(a.winner, -1);

  const MultileavingAnalysis b =
      AnalyzeMultileaving(counts, std::vector<double>{0.001, 0.02, 0.5}, 0.05);
  EXPECT_NEAR(b.pairs[1].adjusted_p_value, 0.03, 1e-12);
  EXPECT_EQ(b.pairs[1].verdict, -1);
  EXPECT_EQ(b.copeland, (std::vector<int>{2, -1, -1}));
  EXPECT_EQ(b.ranking, (std::vector<size_t>{0, 2, 1}));
  EXPECT_EQ(b.winner, 0);
}

TEST(MultileavingTest, TwoTeamsAnalysisIsTheInterleavingVerdict) {
  MultileavingCounts counts(2);
  for (int i = 0; i < 30; ++i) counts.Add(std::vector<int64_t>{0, 1});
  for (int i = 0; i < 5; ++i) counts.Add(std::vector<int64_t>{1, 0});
  const double p = 0.01;
  const MultileavingAnalysis a =
      AnalyzeMultileaving(counts, std::vector<double>{p}, 0.05);
  EXPECT_EQ(a.pairs[0].adjusted_p_value, p);  // One hypothesis: unadjusted.
  EXPECT_EQ(a.pairs[0].verdict,
            PreferenceVerdict(p, Preference(counts.pairs[0]), 0.05));
  EXPECT_EQ(a.pairs[0].verdict, 1);
  EXPECT_EQ(a.ranking, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(a.winner, 1);
}

// ---------------------------------------------------------------------------
// The multileaver.

std::vector<std::span<const std::string_view>> Spans(
    const std::vector<Views>& rankings) {
  return {rankings.begin(), rankings.end()};
}

// Five docs a..e; three rankings that all start differently. Seed-free
// checks: whatever the order of the picks, the first round holds each
// team's top doc once.
TEST(TeamDraftMultileaveTest, FirstRoundHoldsEveryTeamsTopDoc) {
  const std::vector<Views> rankings = {
      {"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Xoshiro256 rng(seed);
    InterleavedList out;
    TeamDraftMultileave(Spans(rankings), 3, &rng, &out);
    ASSERT_EQ(out.docs.size(), 3u) << "seed " << seed;
    Views sorted = out.docs;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (Views{"a", "b", "c"})) << "seed " << seed;
    std::vector<uint8_t> teams = out.teams;
    std::sort(teams.begin(), teams.end());
    EXPECT_EQ(teams, (std::vector<uint8_t>{0, 1, 2})) << "seed " << seed;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(out.docs[i], rankings[out.teams[i]][0]) << "seed " << seed;
    }
  }
}

// Two rankings: the same list as TeamDraftInterleave for the same
// generator, on random inputs.
TEST(TeamDraftMultileaveTest, TwoRankingsAreTeamDraftInterleaving) {
  constexpr uint64_t kSeed = 20261126;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  Xoshiro256 inputs(kSeed);
  std::vector<std::string> pool;
  for (int i = 0; i < 30; ++i) pool.push_back("d" + std::to_string(i));
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Views> rankings(2);
    for (Views& r : rankings) {
      Views all(pool.begin(), pool.end());
      for (size_t i = all.size(); i > 1; --i) {
        std::swap(all[i - 1], all[inputs.Below(i)]);
      }
      all.resize(1 + inputs.Below(20));
      r = all;
    }
    const size_t max_length = inputs.Below(25);
    const uint64_t seed = inputs.Next();
    Xoshiro256 a(seed);
    Xoshiro256 b(seed);
    InterleavedList two;
    InterleavedList multi;
    TeamDraftInterleave(rankings[0], rankings[1], max_length, &a, &two);
    TeamDraftMultileave(Spans(rankings), max_length, &b, &multi);
    ASSERT_EQ(multi.docs, two.docs) << "trial " << trial;
    ASSERT_EQ(multi.teams, two.teams) << "trial " << trial;
  }
}

// Invariants of Algorithm 1 on random inputs (3 to 8 rankings): no
// duplicates; each pick is its team's highest-ranked new doc; after every
// prefix the teams' picks differ by at most one; it stops only when full
// or when some ranking has no new doc.
TEST(TeamDraftMultileaveTest, InvariantsOnRandomInputs) {
  constexpr uint64_t kSeed = 77;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  Xoshiro256 rng(kSeed);
  std::vector<std::string> pool;
  for (int i = 0; i < 25; ++i) pool.push_back("d" + std::to_string(i));
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 3 + rng.Below(6);
    std::vector<Views> rankings(n);
    for (Views& r : rankings) {
      Views all(pool.begin(), pool.end());
      for (size_t i = all.size(); i > 1; --i) {
        std::swap(all[i - 1], all[rng.Below(i)]);
      }
      all.resize(1 + rng.Below(15));
      r = all;
    }
    const size_t max_length = rng.Below(20);
    InterleavedList out;
    TeamDraftMultileave(Spans(rankings), max_length, &rng, &out);
    ASSERT_EQ(out.docs.size(), out.teams.size());
    ASSERT_LE(out.docs.size(), max_length);
    std::vector<size_t> picks(n, 0);
    const auto highest_new = [&](const Views& r, size_t end) {
      for (std::string_view d : r) {
        if (std::find(out.docs.begin(), out.docs.begin() + end, d) ==
            out.docs.begin() + end) {
          return d;
        }
      }
      return std::string_view();
    };
    for (size_t i = 0; i < out.docs.size(); ++i) {
      const uint8_t t = out.teams[i];
      ASSERT_LT(t, n);
      ASSERT_EQ(out.docs[i], highest_new(rankings[t], i))
          << "trial " << trial << " position " << i;
      // Only a team with the fewest picks picks.
      ASSERT_EQ(picks[t], *std::min_element(picks.begin(), picks.end()))
          << "trial " << trial << " position " << i;
      ++picks[t];
    }
    if (out.docs.size() < max_length) {
      bool some_exhausted = false;
      for (const Views& r : rankings) {
        some_exhausted |= highest_new(r, out.docs.size()).empty();
      }
      ASSERT_TRUE(some_exhausted) << "trial " << trial;
    }
  }
}

// Fairness (Schuth et al.'s requirement for an unbiased comparison): on
// rankings long enough never to run out, every team has probability 1/N
// to contribute each rank. With T trials the count of team t at rank r is
// Binomial(T, 1/N); the test allows 5 standard deviations (a false alarm
// probability below 1e-6 per cell, 3 * 8 + 5 * 8 cells).
TEST(TeamDraftMultileaveTest, EachTeamHasAFairShareOfEveryRank) {
  for (const size_t n : {3u, 5u}) {
    const uint64_t seed = 1000 + n;
    SCOPED_TRACE(testing::Message()
                 << "seed " << seed << ", " << n << " rankings");
    Xoshiro256 rng(seed);
    std::vector<std::string> pool;
    for (int i = 0; i < 40; ++i) pool.push_back("d" + std::to_string(i));
    // Overlapping rankings (the same pool, different orders): a team's
    // pick is often a doc another team ranks high too.
    std::vector<Views> rankings(n);
    for (Views& r : rankings) {
      Views all(pool.begin(), pool.end());
      for (size_t i = all.size(); i > 1; --i) {
        std::swap(all[i - 1], all[rng.Below(i)]);
      }
      r = all;
    }
    constexpr size_t kLength = 8;
    constexpr int kTrials = 20000;
    std::vector<std::vector<int>> count(kLength, std::vector<int>(n, 0));
    InterleavedList out;
    for (int trial = 0; trial < kTrials; ++trial) {
      TeamDraftMultileave(Spans(rankings), kLength, &rng, &out);
      ASSERT_EQ(out.docs.size(), kLength);
      for (size_t r = 0; r < kLength; ++r) ++count[r][out.teams[r]];
    }
    const double p = 1.0 / static_cast<double>(n);
    const double sd = std::sqrt(kTrials * p * (1 - p));
    for (size_t r = 0; r < kLength; ++r) {
      for (size_t t = 0; t < n; ++t) {
        EXPECT_NEAR(count[r][t], kTrials * p, 5 * sd)
            << "rank " << r + 1 << " team " << t;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Error rates under equal rankers.

// Every ranker draws its ranking of a 30-doc pool the same way (the
// relevance-sorted pool with random swaps), so no ranker is better; users
// click a shown doc with probability relevance * 0.8 / rank. With the
// sequential tests looked at every 50 impressions and BH across the pairs,
// an experiment ends with any nonzero verdict at most alpha of the time
// (a false discovery, since every pair is null): the test allows alpha +
// 3 binomial standard deviations over R experiments.
TEST(MultileavingErrorRateTest, EqualRankersFalseDecisionsAtMostAlpha) {
  for (const size_t n : {3u, 5u}) {
    const uint64_t seed = 4242 + n;
    SCOPED_TRACE(testing::Message()
                 << "seed " << seed << ", " << n << " equal rankers");
    Xoshiro256 rng(seed);
    std::vector<std::string> pool;
    std::vector<double> relevance;
    for (int i = 0; i < 30; ++i) {
      pool.push_back("d" + std::to_string(i));
      relevance.push_back(i < 5 ? 0.9 : i < 12 ? 0.4 : 0.05);
    }
    constexpr double kAlpha = 0.05;
    constexpr int kExperiments = 200;
    constexpr int kImpressions = 2000;
    int false_decisions = 0;
    std::vector<Views> rankings(n);
    InterleavedList out;
    std::vector<int64_t> credit(n);
    for (int x = 0; x < kExperiments; ++x) {
      MultileavingCounts counts(n);
      std::vector<SequentialPreferenceTest> tests(NumPairs(n));
      std::vector<double> p(NumPairs(n));
      bool decided = false;
      for (int i = 1; i <= kImpressions && !decided; ++i) {
        for (Views& r : rankings) {
          r.assign(pool.begin(), pool.end());
          for (int s = 0; s < 10; ++s) {
            const size_t a = rng.Below(15);
            std::swap(r[a], r[a + 1 + rng.Below(3)]);
          }
        }
        TeamDraftMultileave(Spans(rankings), 10, &rng, &out);
        std::fill(credit.begin(), credit.end(), 0);
        for (size_t r = 0; r < out.docs.size(); ++r) {
          const size_t doc = static_cast<size_t>(
              std::find(pool.begin(), pool.end(), out.docs[r]) - pool.begin());
          if (rng.Uniform() < relevance[doc] * 0.8 / (r + 1.0)) {
            ++credit[out.teams[r]];
          }
        }
        counts.Add(credit);
        if (i % 50 != 0) continue;
        for (size_t k = 0; k < tests.size(); ++k) {
          tests[k].Look(counts.pairs[k]);
          p[k] = tests[k].p_value();
        }
        const MultileavingAnalysis a = AnalyzeMultileaving(counts, p, kAlpha);
        for (const PairAnalysis& pair : a.pairs) decided |= pair.verdict != 0;
      }
      if (decided) ++false_decisions;
    }
    const double sd = std::sqrt(kExperiments * kAlpha * (1 - kAlpha));
    std::printf(
        "%zu equal rankers: %d of %d experiments with a false "
        "decision (seed %llu)\n",
        n, false_decisions, kExperiments,
        static_cast<unsigned long long>(seed));
    EXPECT_LE(false_decisions, kExperiments * kAlpha + 3 * sd);
  }
}

}  // namespace
}  // namespace rankwatch::metrics
