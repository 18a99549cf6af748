#include "daemon/cli/demo_snapshot.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "daemon/cli/replay_report.h"
#include "daemon/exporter/families.h"
#include "daemon/exporter/query_movers_collector.h"
#include "metrics/ab_stats.h"
#include "metrics/interleaving.h"
#include "metrics/regression_adjustment.h"

namespace rankwatch::cli {

namespace {

// The verdict states share their order (stream::VerdictState).
Verdict VerdictOf(stream::VerdictState s) {
  switch (s) {
    case stream::VerdictState::kNoData:
      return Verdict::kNoData;
    case stream::VerdictState::kInconclusive:
      return Verdict::kInconclusive;
    case stream::VerdictState::kBetter:
      return Verdict::kBetter;
    case stream::VerdictState::kWorse:
      return Verdict::kWorse;
    case stream::VerdictState::kSampleRatioMismatch:
      return Verdict::kSampleRatioMismatch;
  }
  return Verdict::kNoData;
}

// The headline a series is, or headlines.size() when none.
size_t HeadlineOf(const stream::SeriesSpec& series,
                  const std::vector<Headline>& headlines) {
  const Headline h{series.name, series.k_label};
  return static_cast<size_t>(std::find(headlines.begin(), headlines.end(), h) -
                             headlines.begin());
}

// n, sum and sum of squares of one variant and headline.
struct Moments {
  double n = 0;
  double sum = 0;
  double squares = 0;
};

Estimate MeanInterval(const Moments& m, double z) {
  Estimate e;
  if (m.n <= 0) return e;
  e.value = m.sum / m.n;
  if (m.n < 2) {
    e.lower = -INFINITY;
    e.upper = INFINITY;
    return e;
  }
  const double variance =
      std::max(0.0, (m.squares - m.n * e.value * e.value) / (m.n - 1));
  const double half = z * std::sqrt(variance / m.n);
  e.lower = e.value - half;
  e.upper = e.value + half;
  return e;
}

// Per variant, what this process scored (the flows: the counters of
// /metrics), summed over the label groups (segments) of the variant. A
// variant appears once a group of it exists, before any list.
void FillVariants(const stream::PipelineSnapshot& p, DemoSnapshot* s) {
  const double z = metrics::NormalQuantile(0.5 + s->level / 2);
  const size_t num_headlines = s->headlines.size();
  std::map<std::string, std::vector<Moments>> by_variant;
  for (size_t g = 0; g < p.groups.size() && g < p.flows.size(); ++g) {
    const stream::GroupFlow& flow = p.flows[g];
    for (size_t i = 0; i < p.series.size() && i < flow.all.size(); ++i) {
      const size_t h = HeadlineOf(p.series[i], s->headlines);
      if (h == num_headlines) continue;
      std::vector<Moments>& m = by_variant[p.groups[g].variant];
      m.resize(num_headlines);
      m[h].n += static_cast<double>(flow.all[i].count);
      m[h].sum += flow.all[i].sum;
      m[h].squares += flow.all[i].sum_of_squares;
    }
  }
  for (auto& [variant, moments] : by_variant) {
    VariantFigures v;
    v.variant = variant;
    v.lists = static_cast<int64_t>(moments.empty() ? 0 : moments[0].n);
    for (const Moments& m : moments) v.headlines.push_back(MeanInterval(m, z));
    s->variants.push_back(std::move(v));
  }
}

// The top movers of `c` as exported: the first
// statistics.export_query_movers, up to the first without a contribution
// (an arm without lists), the query cut as its label is.
std::vector<MoverFigures> Movers(const stream::PipelineSnapshot& p,
                                 const stream::Comparison& c) {
  std::vector<MoverFigures> out;
  const std::vector<metrics::QueryMover>* movers =
      p.FindMovers(c.experiment_index, c.treatment, c.series);
  if (movers == nullptr) return out;
  const size_t top = static_cast<size_t>(
      std::max<int32_t>(p.config.statistics.export_query_movers, 0));
  for (size_t i = 0; i < movers->size() && i < top; ++i) {
    const metrics::QueryMover& m = (*movers)[i];
    if (!std::isfinite(m.contribution)) break;
    out.push_back(
        {exporter::LabelText(
             m.query, exporter::QueryMoversCollector::kMaxQueryLabelBytes),
         m.difference, m.contribution});
  }
  return out;
}

AdjustedFigures Adjusted(const stream::AdjustedComparison& a) {
  AdjustedFigures out;
  out.status = std::string(metrics::AdjustmentStatusName(a.status));
  for (const stream::NamedFigure& f : stream::AdjustedFigures(a)) {
    const std::string_view name = f.name;
    if (name == "difference") {
      out.difference.value = f.value;
      out.look.value = f.value;
    } else if (name == "sequential_ci_lower") {
      out.difference.lower = f.value;
    } else if (name == "sequential_ci_upper") {
      out.difference.upper = f.value;
    } else if (name == "sequential_look_ci_lower") {
      out.look.lower = f.value;
    } else if (name == "sequential_look_ci_upper") {
      out.look.upper = f.value;
    } else if (name == "variance_ratio") {
      out.variance_ratio = f.value;
    }
  }
  return out;
}

// The window-"all" comparisons of a quality series among the headlines
// (those with a verdict), by experiment and treatment, then in headline
// order.
void FillAb(const stream::PipelineSnapshot& p, DemoSnapshot* s) {
  const std::vector<config::ExperimentConfig>& experiments =
      p.config.experiments;
  for (const stream::Comparison& c : p.comparisons) {
    if (c.window >= 0 || !c.has_sequential || !c.quality ||
        c.experiment_index >= experiments.size() ||
        c.series >= p.series.size()) {
      continue;
    }
    const size_t h = HeadlineOf(p.series[c.series], s->headlines);
    if (h == s->headlines.size()) continue;
    const config::ExperimentConfig& e = experiments[c.experiment_index];
    AbFigures ab;
    ab.experiment = e.name;
    ab.baseline = e.baseline;
    ab.treatment = c.treatment;
    ab.headline = s->headlines[h];
    const bool both = c.baseline_arm.count > 0 && c.treatment_arm.count > 0;
    const double difference = both ? c.welch.difference : NAN;
    ab.difference = {difference, c.sequential.interval().lower,
                     c.sequential.interval().upper};
    ab.look = {difference, c.look.interval.lower, c.look.interval.upper};
    ab.verdict = VerdictOf(c.state);
    ab.movers = Movers(p, c);
    if (c.has_adjusted && p.adjusted()) {
      ab.has_adjusted = true;
      ab.adjusted = Adjusted(c.adjusted);
    }
    s->ab.push_back(std::move(ab));
  }
  auto rank = [&](const AbFigures& x) {
    return std::find(s->headlines.begin(), s->headlines.end(), x.headline) -
           s->headlines.begin();
  };
  std::stable_sort(
      s->ab.begin(), s->ab.end(), [&](const AbFigures& a, const AbFigures& b) {
        return std::forward_as_tuple(a.experiment, a.treatment, rank(a)) <
               std::forward_as_tuple(b.experiment, b.treatment, rank(b));
      });
}

void FillSrm(const stream::PipelineSnapshot& p, DemoSnapshot* s) {
  const std::vector<config::ExperimentConfig>& experiments =
      p.config.experiments;
  for (size_t x = 0; x < experiments.size() && x < p.srm.size(); ++x) {
    s->srm.push_back({experiments[x].name, p.srm[x].detected,
                      p.srm[x].sequential.p_value()});
  }
}

void FillDecisions(const stream::PipelineSnapshot& p, DemoSnapshot* s) {
  for (const stream::Decision& d : p.decisions) {
    DecisionFigures out;
    out.experiment = d.name;
    out.baseline = d.baseline;
    out.treatment = d.treatment;
    out.value = std::string(stream::DecisionValueName(d.value));
    out.minimum_met = d.minimum.met();
    out.baseline_lists = d.minimum.baseline_lists;
    out.treatment_lists = d.minimum.treatment_lists;
    out.min_lists = d.minimum.min_lists;
    out.elapsed_ms = d.minimum.elapsed_ms;
    out.min_duration_ms = d.minimum.min_duration_ms;
    for (const stream::DecisionInput& in : d.inputs) {
      DecisionInputFigures f;
      f.guardrail = in.guardrail;
      f.series = {exporter::MeasureLabel(in.ref),
                  exporter::CutoffLabel(in.ref.cutoff)};
      f.input = stream::InputSign(in.state);
      f.effect_changes = in.effect_changes;
      f.effect_changed_ms = in.effect_changed_ms;
      if (in.has_interval) {
        f.lower = in.interval.lower;
        f.upper = in.interval.upper;
      }
      if (in.guardrail) {
        // As configured: the fraction when relative, else the absolute
        // margin.
        f.relative = in.relative;
        f.margin = in.relative ? in.relative_margin : in.margin;
      }
      out.inputs.push_back(std::move(f));
    }
    // Primary series first (the board lists them so already).
    std::stable_sort(
        out.inputs.begin(), out.inputs.end(),
        [](const DecisionInputFigures& a, const DecisionInputFigures& b) {
          return !a.guardrail && b.guardrail;
        });
    s->decisions.push_back(std::move(out));
  }
}

// The interleaving experiments: the first pair's preference since the
// state began, the sequential p-value, the impressions this process
// counted; with more than two teams, the ranking once a look made one.
void FillInterleaving(const stream::PipelineSnapshot& p, DemoSnapshot* s) {
  const std::vector<config::InterleavingConfig>& configs =
      p.config.interleaving;
  for (size_t i = 0; i < p.interleaving.size() && i < configs.size(); ++i) {
    const stream::InterleavingState& state = p.interleaving[i];
    const config::InterleavingConfig& c = configs[i];
    if (c.teams.size() < 2) continue;
    InterleavingFigures il;
    il.experiment = c.name;
    il.incumbent = c.teams[0];
    il.challenger = c.teams[1];
    il.preference = metrics::Preference(state.all);
    il.p_value = state.sequential.p_value();
    il.impressions = state.flow.impressions;
    il.verdict = VerdictOf(state.state);
    s->interleaving.push_back(std::move(il));
    const metrics::MultileavingAnalysis& a = state.analysis;
    if (a.ranking.size() > 2) {
      std::vector<std::string>& ranking = s->multileaving_ranking[c.name];
      for (size_t team : a.ranking) {
        if (team < c.teams.size()) ranking.push_back(c.teams[team]);
      }
    }
    if (a.winner >= 0 && static_cast<size_t>(a.winner) < c.teams.size()) {
      s->multileaving_winner[c.name] = c.teams[static_cast<size_t>(a.winner)];
    }
  }
}

}  // namespace

DemoSnapshot DemoSnapshotOf(const stream::PipelineSnapshot& p,
                            const std::vector<Headline>& headlines) {
  DemoSnapshot s;
  s.headlines = headlines;
  s.level = p.config.statistics.level;
  s.covariate = p.covariate;
  for (const int64_t n : p.counters.consumed) s.events_consumed += n;
  FillVariants(p, &s);
  FillAb(p, &s);
  FillSrm(p, &s);
  FillDecisions(p, &s);
  FillInterleaving(p, &s);
  s.set_aside = FormatSetAside(p);
  return s;
}

}  // namespace rankwatch::cli
