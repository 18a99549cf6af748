// Sensitivity of team-draft interleaving against A/B tests (issue 12): how
// many impressions each method needs to reach a confident decision between
// two rankers, on the synthetic traffic's ranking and click model.
//
// The traffic is sim::SyntheticTraffic itself (daemon/sim/synthetic.h), not
// a re-implementation: its rankers (true grade + Gaussian noise of the
// variant's sigma over a fixed catalog of 200 queries x 40 docs), its
// position-based click model (calibrated to 3 judgments per request) and,
// for interleaving, its team-draft interleaved requests. The figures are
// read from RequestTruth (ranks clicked, team per rank), never from the
// JSON. One experiment runs
//   * an A/B test: requests assigned 50/50 to A and B at random, each
//     request scored by metrics::Evaluator on its clicks as binary grades
//     (clicked docs grade 1, the others unjudged, as the daemon scores
//     impressions): ctr@10 (= success@10 on clicks) and nDCG@10 (0 without
//     a click, the default zero_relevant: score_zero); each measure is
//     watched by its own always-valid mSPRT (metrics::SequentialTest,
//     level 0.95, mixing sd 0.05: the daemon's defaults);
//   * an interleaving test on separate traffic whose every request is A
//     and B interleaved: clicks credited by metrics::CreditClicks, the
//     outcome counts watched by metrics::SequentialPreferenceTest (prior
//     sd 0.05, the daemon's default), decided at p <= alpha.
// All tests look every --look-every impressions (an impression is one
// request, whichever arm) and stop at the first look with p <= alpha or at
// the horizon cap. The same is repeated with B equal to A (the false
// decision rate within the cap). A pilot run of the same traffic measures
// the true differences and the fixed-horizon sample sizes (80% power).
//
// Usage: interleaving_sensitivity [--experiments N] [--seed S]
//          [--sigma-a X] [--sigma-b X] [--look-every N] [--cap N]
//          [--pilot N] [--threads N] [--judgments-per-request X]
// Single-purpose benchmark program; see bench/README.md and
// docs/statistics.md ("Interleaving sensitivity") for the figures.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "daemon/sim/synthetic.h"
#include "metrics/ab_stats.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"
#include "metrics/running_stats.h"

namespace rankwatch {
namespace {

using metrics::RunningStats;

constexpr double kAlpha = 0.05;
constexpr int64_t kStartMs = 1'700'000'000'000;
constexpr int64_t kStepMs = 10;
constexpr int64_t kUndecided = INT64_MAX;

struct Options {
  int experiments = 200;
  uint64_t seed = 1;
  double sigma_a = 1.0;
  double sigma_b = 0.85;
  double judgments_per_request = 3.0;  // SyntheticConfig's default.
  int64_t look_every = 50;
  int64_t cap = 100'000;
  int64_t pilot = 400'000;
  int threads = 2;
};

// A method's outcome in one experiment: the impressions at the deciding
// look (kUndecided within the cap) and the direction (+1: B better).
struct Decision {
  int64_t impressions = kUndecided;
  int direction = 0;
};

enum Method { kAbCtr, kAbNdcg, kInterleaving, kMethods };
constexpr std::array<const char*, kMethods> kMethodNames = {
    "A/B, ctr@10", "A/B, nDCG@10 from clicks", "team-draft interleaving"};

using Outcome = std::array<Decision, kMethods>;

sim::SyntheticConfig TrafficConfig(uint64_t seed, const Options& o,
                                   double sigma_b, bool interleave) {
  sim::SyntheticConfig c;
  c.seed = seed;
  c.judgments_per_request = o.judgments_per_request;
  c.catalog_seed = 1;  // One fixed query set for every experiment.
  c.variants = {{"A", o.sigma_a, 1.0}, {"B", sigma_b, 1.0}};
  c.segment_values.clear();
  c.segment_weights.clear();
  if (interleave) {
    c.interleave = "B";
    c.interleave_share = 1;
  }
  return c;
}

sim::SyntheticTraffic MakeTraffic(const sim::SyntheticConfig& config) {
  StatusOr<sim::SyntheticTraffic> traffic =
      sim::SyntheticTraffic::Create(config);
  if (!traffic.ok()) {
    std::fprintf(stderr, "interleaving_sensitivity: %s\n",
                 traffic.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(traffic).value();
}

// One A/B experiment: both measures until each is decided or the cap.
std::pair<Decision, Decision> RunAb(uint64_t seed, const Options& o,
                                    double sigma_b) {
  sim::SyntheticTraffic traffic =
      MakeTraffic(TrafficConfig(seed, o, sigma_b, false));
  metrics::Evaluator evaluator =
      *metrics::Evaluator::Create({10}, metrics::Definitions{});
  std::array<std::array<RunningStats, 2>, 2> stats;  // [measure][arm]
  std::array<metrics::SequentialTest, 2> tests;
  std::array<Decision, 2> decisions;
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  std::vector<metrics::Grade> ranked;
  std::vector<metrics::Grade> judged;
  metrics::ListScores scores;
  for (int64_t n = 1; n <= o.cap; ++n) {
    traffic.NextRequest(kStartMs + n * kStepMs, &results, &judgments, &truth);
    sim::ClickGrades(truth, &ranked, &judged);
    evaluator.Evaluate(ranked, judged, &scores);
    stats[0][truth.variant_index].Add(scores.at[0].success);
    stats[1][truth.variant_index].Add(scores.at[0].ndcg);
    if (n % o.look_every != 0) continue;
    bool open = false;
    for (int m = 0; m < 2; ++m) {
      if (decisions[m].impressions != kUndecided) continue;
      const metrics::ArmSummary a = metrics::Summarize(stats[m][0]);
      const metrics::ArmSummary b = metrics::Summarize(stats[m][1]);
      const metrics::SequentialLook look = tests[m].Update(a, b);
      if (tests[m].p_value() <= kAlpha) {
        decisions[m] = {n, look.difference > 0 ? 1 : -1};
      } else {
        open = true;
      }
    }
    if (!open) break;
  }
  return {decisions[0], decisions[1]};
}

Decision RunInterleaving(uint64_t seed, const Options& o, double sigma_b) {
  sim::SyntheticTraffic traffic =
      MakeTraffic(TrafficConfig(seed, o, sigma_b, true));
  metrics::InterleavingCounts counts;
  metrics::SequentialPreferenceTest test;
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  std::vector<metrics::Grade> clicks;
  std::vector<metrics::Grade> judged;
  for (int64_t n = 1; n <= o.cap; ++n) {
    traffic.NextRequest(kStartMs + n * kStepMs, &results, &judgments, &truth);
    sim::ClickGrades(truth, &clicks, &judged);
    counts.Add(metrics::CreditClicks(truth.teams, clicks, 1));
    if (n % o.look_every != 0) continue;
    test.Look(counts);
    const int verdict = metrics::PreferenceVerdict(
        test.p_value(), metrics::Preference(counts), kAlpha);
    if (verdict != 0) return {n, verdict};
  }
  return {};
}

// Seeds: experiment e's A/B traffic has seed + 2e, its interleaved traffic
// seed + 2e + 1; the null scenario reuses them.
Outcome RunExperiment(int e, const Options& o, double sigma_b) {
  Outcome out;
  const uint64_t ab_seed = o.seed + 2 * static_cast<uint64_t>(e);
  std::tie(out[kAbCtr], out[kAbNdcg]) = RunAb(ab_seed, o, sigma_b);
  out[kInterleaving] = RunInterleaving(ab_seed + 1, o, sigma_b);
  return out;
}

std::vector<Outcome> RunScenario(const Options& o, double sigma_b) {
  std::vector<Outcome> outcomes(o.experiments);
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int e = next++; e < o.experiments; e = next++) {
      outcomes[e] = RunExperiment(e, o, sigma_b);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return outcomes;
}

// ---------------------------------------------------------------------------
// The pilot: true means and standard deviations per arm, and the
// interleaving outcome rates, from one long run of each traffic.

struct Pilot {
  std::array<RunningStats, 2> true_ndcg;  // Graded, from the true grades.
  std::array<RunningStats, 2> ctr;
  std::array<RunningStats, 2> click_ndcg;
  metrics::InterleavingCounts counts;
};

Pilot RunPilot(const Options& o) {
  Pilot p;
  // Seeds outside the experiments' range.
  const uint64_t seed = o.seed + 2 * static_cast<uint64_t>(o.experiments) + 7;
  sim::SyntheticTraffic ab =
      MakeTraffic(TrafficConfig(seed, o, o.sigma_b, false));
  sim::SyntheticTraffic il =
      MakeTraffic(TrafficConfig(seed + 1, o, o.sigma_b, true));
  metrics::Evaluator evaluator =
      *metrics::Evaluator::Create({10}, metrics::Definitions{});
  std::string results;
  std::vector<sim::TimedJudgment> judgments;
  sim::RequestTruth truth;
  std::vector<metrics::Grade> ranked;
  std::vector<metrics::Grade> judged;
  metrics::ListScores scores;
  for (int64_t n = 1; n <= o.pilot; ++n) {
    ab.NextRequest(kStartMs + n * kStepMs, &results, &judgments, &truth);
    const int v = truth.variant_index;
    evaluator.Evaluate(truth.ranked_grades, ab.query_grades(truth.query_index),
                       &scores);
    p.true_ndcg[v].Add(scores.at[0].ndcg);
    sim::ClickGrades(truth, &ranked, &judged);
    evaluator.Evaluate(ranked, judged, &scores);
    p.ctr[v].Add(scores.at[0].success);
    p.click_ndcg[v].Add(scores.at[0].ndcg);

    il.NextRequest(kStartMs + n * kStepMs, &results, &judgments, &truth);
    sim::ClickGrades(truth, &ranked, &judged);
    p.counts.Add(metrics::CreditClicks(truth.teams, ranked, 1));
  }
  return p;
}

// (z_{1 - alpha/2} + z_{0.8})^2: a two-sided fixed-horizon test at alpha
// with 80% power.
double PowerFactor() {
  const double z =
      metrics::NormalQuantile(1 - kAlpha / 2) + metrics::NormalQuantile(0.8);
  return z * z;
}

// Impressions (both arms) of a fixed-horizon two-sample z test with 80%
// power for the pilot's difference: 2 n per arm, n = z^2 (sa^2 + sb^2) / d^2.
double FixedHorizonAb(const std::array<RunningStats, 2>& s) {
  const double d = s[1].mean() - s[0].mean();
  return 2 * PowerFactor() * (s[0].variance() + s[1].variance()) / (d * d);
}

// Impressions of a fixed-horizon sign test with 80% power: decided
// impressions n with (z_a/2 * 1/2 + z_b * sqrt(p (1 - p)))^2 / (p - 1/2)^2
// (the normal approximation of the binomial), over the decided share.
double FixedHorizonInterleaving(const metrics::InterleavingCounts& c) {
  const double decided = static_cast<double>(c.decided());
  const double p = static_cast<double>(c.wins[1]) / decided;
  const double z = metrics::NormalQuantile(1 - kAlpha / 2) * 0.5 +
                   metrics::NormalQuantile(0.8) * std::sqrt(p * (1 - p));
  const double n = z * z / ((p - 0.5) * (p - 0.5));
  return n / (decided / static_cast<double>(c.impressions));
}

void PrintPilot(const Options& o, const Pilot& p) {
  auto line = [&](const char* name, const std::array<RunningStats, 2>& s) {
    const double d = s[1].mean() - s[0].mean();
    const double se = std::sqrt(s[0].variance() / s[0].count() +
                                s[1].variance() / s[1].count());
    std::printf("| %s | %.4f | %.4f | %+.4f +- %.4f | %.3f / %.3f |\n", name,
                s[0].mean(), s[1].mean(), d, se, s[0].stddev(), s[1].stddev());
  };
  std::printf(
      "Pilot: %lld A/B requests and %lld interleaved requests (sigma A "
      "%.2f, B %.2f)\n\n",
      static_cast<long long>(o.pilot), static_cast<long long>(o.pilot),
      o.sigma_a, o.sigma_b);
  std::printf("| measure | A | B | B - A (+- s.e.) | sd A / B |\n");
  std::printf("|---|---|---|---|---|\n");
  line("true nDCG@10 (graded)", p.true_ndcg);
  line("ctr@10", p.ctr);
  line("nDCG@10 from clicks", p.click_ndcg);
  const metrics::InterleavingCounts& c = p.counts;
  const double decided = static_cast<double>(c.decided());
  std::printf(
      "\nInterleaving: wins A %lld, B %lld, ties %lld, no click %lld; "
      "P(B wins | decided) %.4f, decided share %.4f, preference %+.4f\n\n",
      static_cast<long long>(c.wins[0]), static_cast<long long>(c.wins[1]),
      static_cast<long long>(c.ties), static_cast<long long>(c.no_click),
      c.wins[1] / decided, decided / static_cast<double>(c.impressions),
      metrics::Preference(c));
  std::printf(
      "Fixed horizon (two-sided %.2f, 80%% power, normal approximation, "
      "pilot effect sizes), impressions: ctr@10 %.0f, nDCG@10 from clicks "
      "%.0f, interleaving %.0f\n\n",
      kAlpha, FixedHorizonAb(p.ctr), FixedHorizonAb(p.click_ndcg),
      FixedHorizonInterleaving(c));
}

// ---------------------------------------------------------------------------
// The table.

// The nearest-rank quantile (the ceil(q N)-th smallest), kUndecided
// counting as larger than any cap.
int64_t Quantile(std::vector<int64_t> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

std::string Impressions(int64_t n, int64_t cap) {
  if (n == kUndecided) return "> " + std::to_string(cap);
  return std::to_string(n);
}

void PrintScenario(const Options& o, const std::vector<Outcome>& better,
                   const std::vector<Outcome>& null, double seconds) {
  std::printf(
      "%d experiments per scenario, looks every %lld impressions, cap %lld "
      "impressions, alpha %.2f; %.0f s\n\n",
      o.experiments, static_cast<long long>(o.look_every),
      static_cast<long long>(o.cap), kAlpha, seconds);
  std::printf(
      "| method | median impressions to decision | quartiles | decided B "
      "better | decided A better | undecided at cap | false decisions when "
      "B = A |\n|---|---|---|---|---|---|---|\n");
  std::array<int64_t, kMethods> medians{};
  for (int m = 0; m < kMethods; ++m) {
    std::vector<int64_t> n;
    int right = 0;
    int wrong = 0;
    for (const Outcome& out : better) {
      n.push_back(out[m].impressions);
      right += out[m].direction > 0;
      wrong += out[m].direction < 0;
    }
    int false_decisions = 0;
    for (const Outcome& out : null) false_decisions += out[m].direction != 0;
    medians[m] = Quantile(n, 0.5);
    const double total = static_cast<double>(better.size());
    std::printf("| %s | %s | %s .. %s | %.3f | %.3f | %.3f | %.3f (%d/%zu) |\n",
                kMethodNames[m], Impressions(medians[m], o.cap).c_str(),
                Impressions(Quantile(n, 0.25), o.cap).c_str(),
                Impressions(Quantile(n, 0.75), o.cap).c_str(), right / total,
                wrong / total, (total - right - wrong) / total,
                false_decisions / static_cast<double>(null.size()),
                false_decisions, null.size());
  }
  for (int m : {kAbCtr, kAbNdcg}) {
    if (medians[m] == kUndecided || medians[kInterleaving] == kUndecided) {
      std::printf(
          "\nMedian ratio %s / interleaving: not measurable (a "
          "median beyond the cap)\n",
          kMethodNames[m]);
    } else {
      std::printf("\nMedian ratio %s / interleaving: %.1f\n", kMethodNames[m],
                  static_cast<double>(medians[m]) /
                      static_cast<double>(medians[kInterleaving]));
    }
  }
}

int Main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Impressions to a confident decision: A/B against team-draft "
      "interleaving, on synthetic clicks"};
  const CLI::Range positive(int64_t{1}, int64_t{1} << 40);
  const CLI::Range sigma(0.0, 100.0);
  app.add_option("--experiments", o.experiments, "experiments per method")
      ->check(positive);
  app.add_option("--seed", o.seed, "first traffic seed");
  app.add_option("--sigma-a", o.sigma_a, "ranking noise of A")->check(sigma);
  app.add_option("--sigma-b", o.sigma_b, "ranking noise of B")->check(sigma);
  app.add_option("--look-every", o.look_every, "impressions between looks")
      ->check(positive);
  app.add_option("--cap", o.cap, "impressions before giving up")
      ->check(positive);
  app.add_option("--pilot", o.pilot, "requests of the true-effect pilot")
      ->check(positive);
  app.add_option("--threads", o.threads)->check(positive);
  app.add_option("--judgments-per-request", o.judgments_per_request)
      ->check(CLI::Range(0.01, 100.0));
  CLI11_PARSE(app, argc, argv);
  const auto start = std::chrono::steady_clock::now();
  std::printf(
      "interleaving_sensitivity: sigma A %.2f, B %.2f; %.2f judgments per "
      "request; experiments %d; traffic seeds %llu..%llu (A/B even "
      "offsets, interleaving odd), catalog seed 1\n\n",
      o.sigma_a, o.sigma_b, o.judgments_per_request, o.experiments,
      static_cast<unsigned long long>(o.seed),
      static_cast<unsigned long long>(o.seed + 2 * o.experiments - 1));
  PrintPilot(o, RunPilot(o));
  std::fflush(stdout);
  const std::vector<Outcome> better = RunScenario(o, o.sigma_b);
  const std::vector<Outcome> null = RunScenario(o, o.sigma_a);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  PrintScenario(o, better, null, seconds);
  return 0;
}

}  // namespace
}  // namespace rankwatch

int main(int argc, char** argv) { return rankwatch::Main(argc, argv); }
