// Sensitivity of team-draft multileaving (issue 28, item 5): impressions to
// a correct decision among 3 and 5 rankers of known quality, multileaving
// against pairwise interleaving and against an A/B/n test on the same amount
// of traffic, and false decisions when all rankers are equal. The figures
// of docs/statistics.md ("Multileaving sensitivity") come from this program:
//
//   RANKWATCH_SENSITIVITY_EXPERIMENTS=100
//   build/tests/multileaving_sensitivity_test
//
// (default: 6 experiments per scenario, enough for the assertions below).
//
// The traffic is sim::SyntheticTraffic (rankers: true grade + Gaussian
// noise of the ranker's sigma over 200 queries x 40 docs; position-based
// clicks, about 3 judgments per request). One experiment runs
//   * multileaving: every impression merges all N rankers
//     (metrics::TeamDraftMultileave), clicks credited per team;
//   * pairwise interleaving: the same number of impressions spread in turn
//     over the N (N - 1) / 2 pairs, each pair its own team-draft
//     interleaved traffic (as N (N - 1) / 2 two-ranker experiments);
//   * A/B/n: every impression is one ranker's own list, the ranker drawn
//     uniformly at random per request (the generator's variant choice),
//     scored as bench/interleaving_sensitivity.cc scores its A/B arm: nDCG@10
//     by metrics::Evaluator on the clicks as binary grades (that bench's
//     better A/B measure and the daemon's default primary); per pair the
//     always-valid mSPRT of the difference of means (metrics::SequentialTest,
//     level 0.95, mixing sd 0.05: the daemon's defaults);
// all with the daemon's statistics: per pair an always-valid test (the
// interleaving methods: the Beta-mixture test, prior sd 0.05), Benjamini-
// Hochberg across the pairs at alpha 0.05 (a verdict: adjusted p < alpha,
// signed by the point preference or difference), a look every 100
// impressions, at most kCap impressions. Measured: the
// impressions until a winner (a ranker significantly better than every
// other) is declared and whether it is the true best, and until every pair
// is decided. With equal rankers: the experiments with any decision.
//
// Seeds: experiment e of a scenario with base b runs multileaving on traffic
// seed b + e, pairwise interleaving of pair k on 100 (b + e) + k and A/B/n on
// kAbSeedOffset + b + e.
//
// A failure prints the seed of the experiment set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/sim/synthetic.h"
#include "metrics/ab_stats.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"
#include "metrics/multileaving.h"
#include "metrics/multiple_testing.h"
#include "metrics/running_stats.h"

namespace rankwatch {
namespace {

constexpr double kAlpha = 0.05;
constexpr int64_t kCap = 30'000;
constexpr int64_t kLookEvery = 100;
constexpr int64_t kStartMs = 1'700'000'000'000;
// A/B/n traffic seeds: apart from the multileaving (< 2,000) and pairwise
// (< 200,000) ones.
constexpr uint64_t kAbSeedOffset = 1'000'000;

int Experiments() {
  const char* env = std::getenv("RANKWATCH_SENSITIVITY_EXPERIMENTS");
  const int n = env == nullptr ? 0 : std::atoi(env);
  return n > 0 ? n : 6;
}

std::string Name(size_t i) {
  return std::string(1, static_cast<char>('A' + i));
}

// The clicked ranks of a request: the highest judgment per rank.
std::vector<metrics::Grade> ClicksOf(const sim::RequestTruth& truth) {
  std::vector<metrics::Grade> clicks(truth.ranked_grades.size(),
                                     metrics::kUnjudged);
  for (const auto& [rank, relevance] : truth.judged) {
    clicks[rank] = std::max(clicks[rank], relevance);
  }
  return clicks;
}

// What one experiment gave: impressions at the first look with a winner
// (and which), at the first look with every pair decided; -1: not within
// the cap. any_decision: some pair decided at some look.
struct Outcome {
  int64_t winner_at = -1;
  int winner = -1;
  int64_t all_at = -1;
  bool all_correct = false;
  bool any_decision = false;
};

// Records one look's verdicts (PairIndex order; +1: the second of the pair
// is better) and winner (-1: none) in `out`.
void Record(const std::vector<int>& verdicts, int winner, int64_t impressions,
            const std::vector<double>& sigmas, Outcome* out) {
  const size_t n = sigmas.size();
  bool all = true;
  bool correct = true;
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      const int verdict = verdicts[metrics::PairIndex(x, y, n)];
      if (verdict != 0) out->any_decision = true;
      all = all && verdict != 0;
      // The second is better when its noise is lower.
      const int truth = sigmas[y] < sigmas[x] ? 1 : -1;
      correct = correct && verdict == truth;
    }
  }
  if (out->winner_at < 0 && winner >= 0) {
    out->winner_at = impressions;
    out->winner = winner;
  }
  if (out->all_at < 0 && all) {
    out->all_at = impressions;
    out->all_correct = correct;
  }
}

// Looks at `counts` (pairs filled) with `tests`; updates `out`.
void Look(const metrics::MultileavingCounts& counts, int64_t impressions,
          const std::vector<double>& sigmas,
          std::vector<metrics::SequentialPreferenceTest>* tests, Outcome* out) {
  std::vector<double> p(tests->size());
  for (size_t k = 0; k < tests->size(); ++k) {
    (*tests)[k].Look(counts.pairs[k]);
    p[k] = (*tests)[k].p_value();
  }
  const metrics::MultileavingAnalysis a =
      metrics::AnalyzeMultileaving(counts, p, kAlpha);
  std::vector<int> verdicts;
  for (const metrics::PairAnalysis& pair : a.pairs) {
    verdicts.push_back(pair.verdict);
  }
  Record(verdicts, a.winner, impressions, sigmas, out);
}

// Looks at the A/B/n arms (per ranker, its requests' scores) with `tests`
// (per pair, baseline the first ranker): BH across the pairs' always-valid
// p-values and verdicts as AnalyzeMultileaving gives them, signed by the
// difference of the means; the winner beats every other.
void LookAb(const std::vector<metrics::RunningStats>& arms, int64_t impressions,
            const std::vector<double>& sigmas,
            std::vector<metrics::SequentialTest>* tests, Outcome* out) {
  const size_t n = arms.size();
  std::vector<double> p(tests->size());
  std::vector<double> difference(tests->size());
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      const size_t k = metrics::PairIndex(x, y, n);
      // A look without data (a ranker with < 2 requests) changes nothing.
      (void)(*tests)[k].Update(metrics::Summarize(arms[x]),
                               metrics::Summarize(arms[y]));
      p[k] = (*tests)[k].p_value();
      difference[k] = arms[y].mean() - arms[x].mean();
    }
  }
  std::vector<double> adjusted(p.size());
  metrics::BenjaminiHochberg(p, adjusted);
  std::vector<int> verdicts(p.size());
  std::vector<int> copeland(n, 0);  // Significant wins minus losses.
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      const size_t k = metrics::PairIndex(x, y, n);
      verdicts[k] =
          metrics::PreferenceVerdict(adjusted[k], difference[k], kAlpha);
      copeland[y] += verdicts[k];
      copeland[x] -= verdicts[k];
    }
  }
  int winner = -1;
  for (size_t t = 0; t < n; ++t) {
    if (copeland[t] == static_cast<int>(n) - 1) winner = static_cast<int>(t);
  }
  Record(verdicts, winner, impressions, sigmas, out);
}

// The traffic of `teams`: interleaved (2), multileaved (more), or with
// `ab`, each request one team's own list, the team drawn uniformly.
sim::SyntheticConfig Traffic(uint64_t seed, const std::vector<double>& sigmas,
                             const std::vector<size_t>& teams,
                             bool ab = false) {
  sim::SyntheticConfig c;
  c.seed = seed;
  c.variants.clear();
  for (size_t t : teams) c.variants.push_back({Name(t), sigmas[t], 1.0});
  if (ab) return c;
  c.interleave_share = 1;
  if (teams.size() == 2) {
    c.interleave = Name(teams[1]);
  } else {
    for (size_t t : teams) c.multileave.push_back(Name(t));
  }
  return c;
}

Outcome Multileaving(uint64_t seed, const std::vector<double>& sigmas) {
  const size_t n = sigmas.size();
  std::vector<size_t> all(n);
  for (size_t t = 0; t < n; ++t) all[t] = t;
  auto traffic = sim::SyntheticTraffic::Create(Traffic(seed, sigmas, all));
  EXPECT_TRUE(traffic.ok()) << traffic.status().ToString();
  metrics::MultileavingCounts counts(n);
  std::vector<metrics::SequentialPreferenceTest> tests(metrics::NumPairs(n));
  std::vector<int64_t> credit(n);
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  Outcome out;
  for (int64_t i = 1; i <= kCap && out.all_at < 0; ++i) {
    traffic->NextRequest(kStartMs + i * 10, &results, &judgments, &truth);
    metrics::CreditTeams(truth.teams, ClicksOf(truth), 1, credit);
    counts.Add(credit);
    if (i % kLookEvery == 0) Look(counts, i, sigmas, &tests, &out);
  }
  return out;
}

Outcome Pairwise(uint64_t seed, const std::vector<double>& sigmas) {
  const size_t n = sigmas.size();
  std::vector<sim::SyntheticTraffic> pairs;
  for (size_t x = 0; x + 1 < n; ++x) {
    for (size_t y = x + 1; y < n; ++y) {
      auto t = sim::SyntheticTraffic::Create(
          Traffic(seed * 100 + metrics::PairIndex(x, y, n), sigmas, {x, y}));
      EXPECT_TRUE(t.ok()) << t.status().ToString();
      pairs.push_back(std::move(*t));
    }
  }
  metrics::MultileavingCounts counts(n);
  std::vector<metrics::SequentialPreferenceTest> tests(pairs.size());
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  Outcome out;
  for (int64_t i = 1; i <= kCap && out.all_at < 0; ++i) {
    const size_t k = static_cast<size_t>(i) % pairs.size();
    pairs[k].NextRequest(kStartMs + i * 10, &results, &judgments, &truth);
    counts.pairs[k].Add(metrics::CreditClicks(truth.teams, ClicksOf(truth), 1));
    if (i % kLookEvery == 0) Look(counts, i, sigmas, &tests, &out);
  }
  return out;
}

Outcome AbN(uint64_t seed, const std::vector<double>& sigmas) {
  const size_t n = sigmas.size();
  std::vector<size_t> all(n);
  for (size_t t = 0; t < n; ++t) all[t] = t;
  auto traffic =
      sim::SyntheticTraffic::Create(Traffic(seed, sigmas, all, /*ab=*/true));
  EXPECT_TRUE(traffic.ok()) << traffic.status().ToString();
  auto evaluator = metrics::Evaluator::Create({10}, metrics::Definitions{});
  EXPECT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  std::vector<metrics::RunningStats> arms(n);
  std::vector<metrics::SequentialTest> tests(metrics::NumPairs(n));
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  std::vector<metrics::Grade> ranked;
  std::vector<metrics::Grade> judged;
  metrics::ListScores scores;
  Outcome out;
  for (int64_t i = 1; i <= kCap && out.all_at < 0; ++i) {
    traffic->NextRequest(kStartMs + i * 10, &results, &judgments, &truth);
    sim::ClickGrades(truth, &ranked, &judged);
    evaluator->Evaluate(ranked, judged, &scores);
    arms[truth.variant_index].Add(scores.at[0].ndcg);  // nDCG@10.
    if (i % kLookEvery == 0) LookAb(arms, i, sigmas, &tests, &out);
  }
  return out;
}

struct Summary {
  int experiments = 0;
  int winners = 0;  // Declared within the cap.
  int correct_winners = 0;
  int all_decided = 0;
  int all_correct = 0;
  int any_decision = 0;
  std::vector<int64_t> winner_at;
  std::vector<int64_t> all_at;
};

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median impressions to the winner over all the experiments, those
// without one within the cap counting as kCap + 1: a method that rarely
// decides cannot look fast by its few lucky experiments.
int64_t MedianToWinner(const Summary& s) {
  std::vector<int64_t> v = s.winner_at;
  v.resize(static_cast<size_t>(s.experiments), kCap + 1);
  return Median(v);
}

Summary RunScenario(const char* method, const std::vector<double>& sigmas,
                    uint64_t seed) {
  Summary s;
  const size_t best = static_cast<size_t>(
      std::min_element(sigmas.begin(), sigmas.end()) - sigmas.begin());
  for (int e = 0; e < Experiments(); ++e) {
    const uint64_t experiment_seed = seed + static_cast<uint64_t>(e);
    const std::string m = method;
    const Outcome o =
        m == "multileaving" ? Multileaving(experiment_seed, sigmas)
        : m == "pairwise"   ? Pairwise(experiment_seed, sigmas)
                            : AbN(kAbSeedOffset + experiment_seed, sigmas);
    ++s.experiments;
    if (o.winner_at >= 0) {
      ++s.winners;
      s.winner_at.push_back(o.winner_at);
      if (o.winner == static_cast<int>(best)) ++s.correct_winners;
    }
    if (o.all_at >= 0) {
      ++s.all_decided;
      s.all_at.push_back(o.all_at);
      if (o.all_correct) ++s.all_correct;
    }
    if (o.any_decision) ++s.any_decision;
  }
  std::string label;
  for (double sigma : sigmas) {
    label += (label.empty() ? "" : ",") + std::to_string(sigma).substr(0, 4);
  }
  std::printf(
      "%-13s sigmas %-26s seed %llu: winner in %d/%d (correct %d), median "
      "%lld impressions; all pairs in %d/%d (all correct %d), median %lld; "
      "any decision %d/%d\n",
      method, label.c_str(), static_cast<unsigned long long>(seed), s.winners,
      s.experiments, s.correct_winners,
      static_cast<long long>(Median(s.winner_at)), s.all_decided, s.experiments,
      s.all_correct, static_cast<long long>(Median(s.all_at)), s.any_decision,
      s.experiments);
  return s;
}

// Three rankers of known quality (noise 1.0, 0.85, 0.7: C best): every
// declared winner is C, and multileaving needs fewer impressions than
// pairwise interleaving and than an A/B/n test of the same traffic (with
// 100 experiments: medians 2,000, 3,500 and 7,500).
TEST(MultileavingSensitivityTest, ThreeRankers) {
  const std::vector<double> sigmas = {1.0, 0.85, 0.7};
  const Summary m = RunScenario("multileaving", sigmas, 500);
  const Summary p = RunScenario("pairwise", sigmas, 500);
  const Summary a = RunScenario("A/B/n", sigmas, 500);
  EXPECT_EQ(m.correct_winners, m.winners);
  EXPECT_EQ(p.correct_winners, p.winners);
  EXPECT_EQ(a.correct_winners, a.winners);
  EXPECT_EQ(m.winners, m.experiments);
  EXPECT_EQ(a.winners, a.experiments);
  ASSERT_FALSE(m.winner_at.empty());
  EXPECT_LT(Median(m.winner_at),
            p.winner_at.empty() ? kCap + 1 : Median(p.winner_at));
  EXPECT_LT(MedianToWinner(m), MedianToWinner(a));
}

// Five rankers (noise 1.0, 0.85, 0.7, 1.2, 0.95: C best, D worst; with
// 100 experiments the medians to the winner are 2,800 for multileaving and
// 10,300 for both pairwise interleaving and A/B/n).
TEST(MultileavingSensitivityTest, FiveRankers) {
  const std::vector<double> sigmas = {1.0, 0.85, 0.7, 1.2, 0.95};
  const Summary m = RunScenario("multileaving", sigmas, 700);
  const Summary p = RunScenario("pairwise", sigmas, 700);
  const Summary a = RunScenario("A/B/n", sigmas, 700);
  EXPECT_EQ(m.correct_winners, m.winners);
  EXPECT_EQ(p.correct_winners, p.winners);
  EXPECT_EQ(a.correct_winners, a.winners);
  ASSERT_FALSE(m.winner_at.empty());
  EXPECT_LT(Median(m.winner_at),
            p.winner_at.empty() ? kCap + 1 : Median(p.winner_at));
  EXPECT_LT(MedianToWinner(m), MedianToWinner(a));
}

// Equal rankers: any decision is false. At most alpha of the experiments
// may decide (Ville's inequality, then BH under the global null), plus 3
// binomial standard deviations; for multileaving and for A/B/n.
TEST(MultileavingSensitivityTest, EqualRankersRarelyDecide) {
  for (const size_t n : {3u, 5u}) {
    const std::vector<double> sigmas(n, 1.0);
    const Summary m = RunScenario("multileaving", sigmas, 900 + n);
    const Summary a = RunScenario("A/B/n", sigmas, 900 + n);
    const double e = m.experiments;
    EXPECT_LE(m.any_decision,
              e * kAlpha + 3 * std::sqrt(e * kAlpha * (1 - kAlpha)))
        << "seed " << 900 + n;
    const double ea = a.experiments;
    EXPECT_LE(a.any_decision,
              ea * kAlpha + 3 * std::sqrt(ea * kAlpha * (1 - kAlpha)))
        << "A/B/n, seed " << kAbSeedOffset + 900 + n;
  }
}

}  // namespace
}  // namespace rankwatch
