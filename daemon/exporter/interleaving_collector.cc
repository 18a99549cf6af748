#include "daemon/exporter/interleaving_collector.h"

#include <algorithm>
#include <array>
#include <utility>

#include "daemon/exporter/families.h"
#include "metrics/interleaving.h"
#include "metrics/multileaving.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr std::array<stream::VerdictState, 4> kStates = {
    stream::VerdictState::kNoData, stream::VerdictState::kInconclusive,
    stream::VerdictState::kBetter, stream::VerdictState::kWorse};

Labels ExperimentLabels(const config::InterleavingConfig& c) {
  return {{"experiment", c.name}};
}

Labels With(Labels labels, std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

// The four count families of one window's counts.
struct CountFamilies {
  MetricFamily impressions;
  MetricFamily wins;
  MetricFamily ties;
  MetricFamily no_click;

  void Add(const config::InterleavingConfig& e, const Labels& labels,
           const metrics::InterleavingCounts& c, bool counter) {
    auto add = counter ? AddCounter : AddGauge;
    add(&impressions, labels, static_cast<double>(c.impressions));
    for (size_t t = 0; t < 2; ++t) {
      add(&wins, With(labels, "team", e.teams[t]),
          static_cast<double>(c.wins[t]));
    }
    add(&ties, labels, static_cast<double>(c.ties));
    add(&no_click, labels, static_cast<double>(c.no_click));
  }
  void MoveTo(std::vector<MetricFamily>* out) {
    out->push_back(std::move(impressions));
    out->push_back(std::move(wins));
    out->push_back(std::move(ties));
    out->push_back(std::move(no_click));
  }
};

CountFamilies MakeCountFamilies(const std::string& prefix, const char* scope,
                                MetricType type) {
  const std::string what = std::string(" of the interleaved lists ") + scope;
  return {
      MakeFamily(prefix + "impressions" +
                     (type == MetricType::Counter ? "_total" : ""),
                 "Impressions (finalized lists)" + what, type),
      MakeFamily(
          prefix + "wins" + (type == MetricType::Counter ? "_total" : ""),
          "Impressions won by the team (more credited clicks)" + what, type),
      MakeFamily(
          prefix + "ties" + (type == MetricType::Counter ? "_total" : ""),
          "Impressions with clicks credited equally to both "
          "teams" +
              what,
          type),
      MakeFamily(
          prefix + "no_click" + (type == MetricType::Counter ? "_total" : ""),
          "Impressions without a click" + what, type)};
}

// One rendering of a snapshot. Its states are parallel to
// config.interleaving (one per configured experiment, in order): their
// `config` pointers point into the pipeline's configuration, so the
// snapshot's own is read instead.
class InterleavingRenderer {
 public:
  explicit InterleavingRenderer(const stream::PipelineSnapshot& snapshot)
      : s_(snapshot),
        window_labels_(WindowLabels(snapshot.interleaving_windows_ms)) {}

  void CollectTotals(std::vector<MetricFamily>* out) const;
  void CollectWindows(std::vector<MetricFamily>* out) const;
  void CollectTests(std::vector<MetricFamily>* out) const;
  void CollectPairs(std::vector<MetricFamily>* out) const;
  void CollectRanking(std::vector<MetricFamily>* out) const;

 private:
  size_t NumExperiments() const {
    return std::min(s_.interleaving.size(), s_.config.interleaving.size());
  }
  const stream::InterleavingState& StateOf(size_t e) const {
    return s_.interleaving[e];
  }
  const config::InterleavingConfig& ConfigOf(size_t e) const {
    return s_.config.interleaving[e];
  }

  const stream::PipelineSnapshot& s_;
  // Parallel to interleaving_windows_ms.
  const std::vector<std::string> window_labels_;
};

void InterleavingRenderer::CollectTotals(std::vector<MetricFamily>* out) const {
  MetricFamily info = MakeFamily(
      "rankwatch_interleaving_info",
      "1 per interleaving experiment: its interleaved variant, incumbent "
      "(first team) and challenger (second team)",
      MetricType::Gauge);
  // Counters: what this process counted (never backwards); the state's
  // counts since the experiment began are the window="all" gauges.
  CountFamilies totals =
      MakeCountFamilies("rankwatch_interleaving_", "counted by this process",
                        MetricType::Counter);
  for (size_t e = 0; e < NumExperiments(); ++e) {
    const config::InterleavingConfig& c = ConfigOf(e);
    AddGauge(&info,
             {{"experiment", c.name},
              {"variant", c.variant},
              {"incumbent", c.teams[0]},
              {"challenger", c.teams[1]}},
             1);
    totals.Add(c, ExperimentLabels(c), StateOf(e).flow, true);
  }
  out->push_back(std::move(info));
  totals.MoveTo(out);
  MetricFamily shape = MakeFamily(
      "rankwatch_interleaving_prior_shape",
      "a of the Beta(a, a) mixing prior of the sequential interleaving test "
      "(statistics.interleaving_prior_sd)",
      MetricType::Gauge);
  AddGauge(&shape, {}, s_.interleaving_prior_shape);
  out->push_back(std::move(shape));
  // The verdict's level, which the recording rules read; ExperimentCollector
  // exports it when A/B experiments are configured too.
  if (s_.config.experiments.empty()) {
    MetricFamily level = MakeFamily(
        "rankwatch_ab_confidence_level",
        "Confidence level of the A/B intervals and of the interleaving "
        "verdicts (statistics.level)",
        MetricType::Gauge);
    AddGauge(&level, {}, s_.config.statistics.level);
    out->push_back(std::move(level));
  }
}

void InterleavingRenderer::CollectWindows(
    std::vector<MetricFamily>* out) const {
  CountFamilies windows = MakeCountFamilies(
      "rankwatch_interleaving_window_", "over the window (all: since start)",
      MetricType::Gauge);
  MetricFamily preference = MakeFamily(
      "rankwatch_interleaving_preference",
      "Preference for the challenger: (challenger wins + ties/2) / clicked "
      "impressions - 1/2; NaN without a clicked impression",
      MetricType::Gauge);
  MetricFamily p_value = MakeFamily(
      "rankwatch_interleaving_p_value",
      "Two-sided sign test (exact binomial) of the challenger's wins among "
      "decided impressions; valid for one pre-planned look",
      MetricType::Gauge);
  for (size_t e = 0; e < NumExperiments(); ++e) {
    const stream::InterleavingState& s = StateOf(e);
    const Labels labels = ExperimentLabels(ConfigOf(e));
    auto add = [&](const std::string& window,
                   const metrics::InterleavingCounts& c) {
      const Labels l = With(labels, "window", window);
      windows.Add(ConfigOf(e), l, c, false);
      AddGauge(&preference, l, metrics::Preference(c));
      AddGauge(&p_value, l, metrics::SignTestPValue(c.wins[0], c.wins[1]));
    };
    add(kWindowAll, s.all);
    for (size_t w = 0; w < s.windows.size() && w < window_labels_.size(); ++w) {
      add(window_labels_[w], s.windows[w]);
    }
  }
  windows.MoveTo(out);
  out->push_back(std::move(preference));
  out->push_back(std::move(p_value));
}

void InterleavingRenderer::CollectTests(std::vector<MetricFamily>* out) const {
  MetricFamily sequential = MakeFamily(
      "rankwatch_interleaving_sequential_p_value",
      "Always-valid p-value of the Beta-mixture sequential test of the "
      "challenger's wins (running minimum over looks)",
      MetricType::Gauge);
  MetricFamily look = MakeFamily(
      "rankwatch_interleaving_sequential_look_p_value",
      "The latest look of the sequential test alone (what the recording "
      "rules compute across replicas)",
      MetricType::Gauge);
  MetricFamily looks =
      MakeFamily("rankwatch_interleaving_sequential_looks",
                 "Looks of the sequential test with a decided impression",
                 MetricType::Gauge);
  MetricFamily verdict = MakeFamily(
      "rankwatch_interleaving_verdict",
      "+1 the challenger is better, -1 worse, 0 inconclusive, from the "
      "always-valid p-value at 1 - statistics.level",
      MetricType::Gauge);
  MetricFamily state = MakeFamily(
      "rankwatch_interleaving_verdict_state",
      "The verdict's state, one series per state, 1 for the current one",
      MetricType::Gauge);
  for (size_t e = 0; e < NumExperiments(); ++e) {
    const stream::InterleavingState& s = StateOf(e);
    const Labels labels = ExperimentLabels(ConfigOf(e));
    AddGauge(&sequential, labels, s.sequential.p_value());
    AddGauge(&look, labels, s.sequential.look_p_value());
    AddGauge(&looks, labels, static_cast<double>(s.sequential.looks()));
    AddGauge(&verdict, labels, s.verdict);
    for (stream::VerdictState v : kStates) {
      AddGauge(&state,
               With(labels, "state", std::string(stream::VerdictStateName(v))),
               s.state == v ? 1 : 0);
    }
  }
  out->push_back(std::move(sequential));
  out->push_back(std::move(look));
  out->push_back(std::move(looks));
  out->push_back(std::move(verdict));
  out->push_back(std::move(state));
}

// The labels of the pair of teams x < y of `c`: experiment, first, second.
Labels PairLabels(const config::InterleavingConfig& c, size_t x, size_t y) {
  return {
      {"experiment", c.name}, {"first", c.teams[x]}, {"second", c.teams[y]}};
}

void InterleavingRenderer::CollectPairs(std::vector<MetricFamily>* out) const {
  MetricFamily wins = MakeFamily(
      "rankwatch_interleaving_pair_wins_total",
      "Impressions counted by this process on which the pair's `winner` "
      "(first or second) had more credited clicks than the other team",
      MetricType::Counter);
  MetricFamily ties = MakeFamily(
      "rankwatch_interleaving_pair_ties_total",
      "Impressions with clicks counted by this process on which both teams "
      "of the pair had as many credited clicks (zero included)",
      MetricType::Counter);
  MetricFamily preference = MakeFamily(
      "rankwatch_interleaving_pair_preference",
      "Preference for the pair's second team: (second wins + ties/2) / "
      "clicked impressions - 1/2; NaN without a clicked impression",
      MetricType::Gauge);
  MetricFamily sequential = MakeFamily(
      "rankwatch_interleaving_pair_sequential_p_value",
      "Always-valid p-value of the pair's sequential test (running minimum)",
      MetricType::Gauge);
  MetricFamily adjusted = MakeFamily(
      "rankwatch_interleaving_pair_adjusted_p_value",
      "The pair's sequential p-value after Benjamini-Hochberg across the "
      "experiment's pairs",
      MetricType::Gauge);
  MetricFamily verdict = MakeFamily(
      "rankwatch_interleaving_pair_verdict",
      "+1 the second team is better, -1 the first, 0 inconclusive (adjusted "
      "p-value below 1 - statistics.level)",
      MetricType::Gauge);
  for (size_t e = 0; e < NumExperiments(); ++e) {
    const stream::InterleavingState& s = StateOf(e);
    const size_t n = ConfigOf(e).teams.size();
    for (size_t x = 0; x + 1 < n; ++x) {
      for (size_t y = x + 1; y < n; ++y) {
        const size_t p = metrics::PairIndex(x, y, n);
        const Labels labels = PairLabels(ConfigOf(e), x, y);
        const metrics::InterleavingCounts& flow = s.flow_counts.pairs[p];
        AddCounter(&wins, With(labels, "winner", "first"),
                   static_cast<double>(flow.wins[0]));
        AddCounter(&wins, With(labels, "winner", "second"),
                   static_cast<double>(flow.wins[1]));
        AddCounter(&ties, labels, static_cast<double>(flow.ties));
        AddGauge(&preference, With(labels, "window", kWindowAll),
                 metrics::Preference(s.counts.pairs[p]));
        for (size_t w = 0;
             w < s.window_counts.size() && w < window_labels_.size(); ++w) {
          AddGauge(&preference, With(labels, "window", window_labels_[w]),
                   metrics::Preference(s.window_counts[w].pairs[p]));
        }
        // Before the first look there is no analysis: no test yet.
        const metrics::PairAnalysis a = p < s.analysis.pairs.size()
                                            ? s.analysis.pairs[p]
                                            : metrics::PairAnalysis{};
        AddGauge(&sequential, labels, a.sequential_p_value);
        AddGauge(&adjusted, labels, a.adjusted_p_value);
        AddGauge(&verdict, labels, a.verdict);
      }
    }
  }
  out->push_back(std::move(wins));
  out->push_back(std::move(ties));
  out->push_back(std::move(preference));
  out->push_back(std::move(sequential));
  out->push_back(std::move(adjusted));
  out->push_back(std::move(verdict));
}

void InterleavingRenderer::CollectRanking(
    std::vector<MetricFamily>* out) const {
  MetricFamily info =
      MakeFamily("rankwatch_interleaving_team_info",
                 "1 per team of an interleaving experiment; position 0 is the "
                 "incumbent, then the challengers in configuration order",
                 MetricType::Gauge);
  MetricFamily clicks = MakeFamily(
      "rankwatch_interleaving_clicks_total",
      "Clicks credited to the team (it contributed the clicked result), "
      "counted by this process",
      MetricType::Counter);
  MetricFamily copeland = MakeFamily(
      "rankwatch_interleaving_copeland_score",
      "Teams the team significantly beats minus teams that significantly "
      "beat it (Copeland 1951, on the pairs' adjusted verdicts)",
      MetricType::Gauge);
  MetricFamily rank = MakeFamily(
      "rankwatch_interleaving_rank",
      "The team's place in the ranking (1: best): by Copeland score, then "
      "by the point preferences, then configuration order",
      MetricType::Gauge);
  MetricFamily winner = MakeFamily(
      "rankwatch_interleaving_winner",
      "1 for the team that significantly beats every other team, else 0",
      MetricType::Gauge);
  for (size_t e = 0; e < NumExperiments(); ++e) {
    const stream::InterleavingState& s = StateOf(e);
    const config::InterleavingConfig& c = ConfigOf(e);
    const Labels labels = ExperimentLabels(c);
    for (size_t t = 0; t < c.teams.size(); ++t) {
      const Labels team = With(labels, "team", c.teams[t]);
      AddGauge(&info, With(team, "position", std::to_string(t)), 1);
      AddCounter(&clicks, team, static_cast<double>(s.flow_counts.clicks[t]));
      AddGauge(&winner, team, s.analysis.winner == static_cast<int>(t));
    }
    const metrics::MultileavingAnalysis& a = s.analysis;
    for (size_t i = 0; i < a.ranking.size(); ++i) {
      const Labels team = With(labels, "team", c.teams[a.ranking[i]]);
      AddGauge(&copeland, team, a.copeland[a.ranking[i]]);
      AddGauge(&rank, team, static_cast<double>(i + 1));
    }
  }
  out->push_back(std::move(info));
  out->push_back(std::move(clicks));
  out->push_back(std::move(copeland));
  out->push_back(std::move(rank));
  out->push_back(std::move(winner));
}

}  // namespace

void InterleavingCollector::Collect(const stream::PipelineSnapshot& snapshot,
                                    std::vector<MetricFamily>* out) const {
  if (snapshot.interleaving.empty()) return;
  const InterleavingRenderer r(snapshot);
  r.CollectTotals(out);
  r.CollectWindows(out);
  r.CollectTests(out);
  r.CollectPairs(out);
  r.CollectRanking(out);
}

}  // namespace rankwatch::exporter
