#include "daemon/stream/experiments/decisions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "base/duration.h"
#include "base/rfc3339.h"
#include "base/saturating.h"
#include "base/strings.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

namespace {

// Looks where an arm has fewer lists (or, clustered, fewer non-empty unit
// buckets) give the Bonferroni-corrected tests no interval: the plug-in
// variance of a handful of values makes the earliest always-valid
// intervals too narrow (docs/statistics.md, "Decisions").
constexpr int64_t kMinCorrectedCount = 20;

std::string Plain(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", x);
  return buf;
}

// Seconds, rounded up: "52m10s".
std::string Wait(int64_t ms) {
  const int64_t seconds = SatAdd(ms, 999) / 1000;
  return FormatDuration(std::chrono::seconds(seconds));
}

// "+0.021 (+3.0%), 95% always-valid interval [+0.008, +0.034]".
std::string Figures(const DecisionInput& in) {
  std::string out = SignedFigure(in.difference);
  if (std::isfinite(in.relative_difference)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), " (%+.1f%%)", 100 * in.relative_difference);
    out += buf;
  }
  // The running interval restarts where the estimate left it (an effect
  // that changed), so it holds the estimate of every look it read; a look
  // without an interval (too few lists) can still leave the latest
  // estimate outside. Never print the two side by side without saying so.
  const bool holds = in.interval.Contains(in.difference);
  out += holds ? ", "
               : " at the latest look, outside the interval of the looks "
                 "before it; ";
  out += FormatPercent(in.level) + " always-valid interval " +
         SignedInterval(in.interval.lower, in.interval.upper);
  if (in.effect_changes > 0) {
    out += " (counted from " + FormatRfc3339Millis(in.effect_changed_ms) +
           ", when the effect changed)";
  }
  return out;
}

// The margin as a bound on the difference: -margin when higher is better.
double Bound(const DecisionInput& in) {
  return in.higher_is_better ? -in.margin : in.margin;
}

std::string MarginText(const DecisionInput& in) {
  std::string out = "the margin " + SignedFigure(Bound(in));
  if (in.relative) {
    out += " (" + FormatPercent(in.relative_margin) + " of the baseline's " +
           Plain(in.baseline_mean) + ")";
  }
  return out;
}

std::string InvalidSentence(const DecisionInput& in) {
  return (in.guardrail ? "guardrail " : "") + in.label +
         " has statistics that are not finite (baseline mean " +
         Plain(in.baseline_mean) + ", variance " + Plain(in.baseline_variance) +
         "; treatment mean " + Plain(in.treatment_mean) + ", variance " +
         Plain(in.treatment_variance) +
         "): a value overflowed its sums; bound the field (schema.fields[]."
         "min and max) and restart the experiment";
}

std::string InputSentence(const DecisionInput& in) {
  const std::string& s = in.label;
  switch (in.state) {
    case InputState::kInvalid:
      return InvalidSentence(in);
    case InputState::kNoData:
      return (in.guardrail ? "guardrail " : "") + s +
             " has too few lists for an interval yet (baseline " +
             std::to_string(in.baseline_count) + ", treatment " +
             std::to_string(in.treatment_count) + ")";
    case InputState::kBetter:
      return s + " is better: " + Figures(in) + " excludes 0";
    case InputState::kWorse:
      return s + " is worse: " + Figures(in) + " excludes 0";
    case InputState::kInconclusive:
      return s + " shows no significant difference yet: " + Figures(in) +
             " contains 0";
    case InputState::kNonInferior:
      return "guardrail " + s + " holds: " + Figures(in) + " stays " +
             (in.higher_is_better ? "above " : "below ") + MarginText(in);
    case InputState::kInferior:
      return "guardrail " + s + " is worse than its margin: " + Figures(in) +
             " lies " + (in.higher_is_better ? "below " : "above ") +
             MarginText(in);
    case InputState::kUndecided:
      return "guardrail " + s + " is undecided: " + Figures(in) +
             " reaches past " + MarginText(in);
  }
  return s;
}

// Whether `in` is one the decision's reasons name: what made it, and for
// keep_running what still holds it back.
bool Explains(DecisionValue value, const DecisionInput& in) {
  switch (value) {
    case DecisionValue::kInvalid:
      return in.state == InputState::kInvalid;
    case DecisionValue::kNoShip:
      return in.state == InputState::kWorse ||
             in.state == InputState::kInferior;
    case DecisionValue::kShip:
      return in.state == InputState::kBetter || in.guardrail;
    case DecisionValue::kKeepRunning:
      return true;
  }
  return true;
}

std::string SrmSentence(const SrmState& srm) {
  std::string counts;
  std::string shares;
  for (size_t i = 0; i < srm.variants.size(); ++i) {
    if (i > 0) {
      counts += ", ";
      shares += "/";
    }
    counts += srm.variants[i] + " " +
              std::to_string(i < srm.counts.size() ? srm.counts[i] : 0);
    shares += Plain(100 * (i < srm.shares.size() ? srm.shares[i] : 0));
  }
  char p[32];
  std::snprintf(p, sizeof(p), "%.3g", srm.sequential.p_value());
  return "sample ratio mismatch: " + counts + " against the configured " +
         shares + " split (always-valid p = " + p +
         "); fix the assignment before reading any figure of this experiment";
}

bool Clustered(const metrics::ArmSummary& a) { return a.clusters > 0; }

bool EnoughForCorrected(const metrics::ArmSummary& a) {
  return a.count >= kMinCorrectedCount &&
         (!Clustered(a) || a.clusters >= kMinCorrectedCount);
}

bool FiniteArm(const metrics::ArmSummary& a) {
  return std::isfinite(a.mean) && std::isfinite(a.variance);
}

// The event time when `count` of `min` lists are reached at the rate of
// `count` over `elapsed_ms` since `first_ms`; -1 when unknown.
int64_t ListsMetAt(int64_t count, int64_t min, int64_t first_ms,
                   int64_t elapsed_ms) {
  if (count >= min) return first_ms;
  if (count <= 0 || elapsed_ms <= 0) return -1;
  const double at =
      static_cast<double>(first_ms) +
      std::ceil(static_cast<double>(min) * static_cast<double>(elapsed_ms) /
                static_cast<double>(count));
  return at < 9e18 ? static_cast<int64_t>(at) : -1;
}

}  // namespace

std::string_view DecisionValueName(DecisionValue v) {
  switch (v) {
    case DecisionValue::kKeepRunning:
      return "keep_running";
    case DecisionValue::kShip:
      return "ship";
    case DecisionValue::kNoShip:
      return "no_ship";
    case DecisionValue::kInvalid:
      return "invalid";
  }
  return "keep_running";
}

int InputSign(InputState s) {
  switch (s) {
    case InputState::kBetter:
    case InputState::kNonInferior:
      return 1;
    case InputState::kWorse:
    case InputState::kInferior:
      return -1;
    case InputState::kInvalid:  // Nothing can ship on it.
      return -1;
    case InputState::kNoData:
    case InputState::kInconclusive:
    case InputState::kUndecided:
      return 0;
  }
  return 0;
}

std::string_view InputStateName(InputState s) {
  switch (s) {
    case InputState::kNoData:
      return "no_data";
    case InputState::kBetter:
      return "better";
    case InputState::kWorse:
      return "worse";
    case InputState::kInconclusive:
      return "inconclusive";
    case InputState::kNonInferior:
      return "non_inferior";
    case InputState::kInferior:
      return "inferior";
    case InputState::kUndecided:
      return "undecided";
    case InputState::kInvalid:
      return "invalid";
  }
  return "no_data";
}

DecisionValue Decide(bool sample_ratio_mismatch,
                     std::span<const InputState> primaries,
                     std::span<const InputState> guardrails, bool minimum_met) {
  if (sample_ratio_mismatch) return DecisionValue::kInvalid;
  const auto any = [](std::span<const InputState> states, InputState s) {
    return std::find(states.begin(), states.end(), s) != states.end();
  };
  if (any(primaries, InputState::kInvalid) ||
      any(guardrails, InputState::kInvalid)) {
    return DecisionValue::kInvalid;
  }
  // A guardrail beyond its margin may stop an experiment early: harm needs
  // no minimum sample to be acted on.
  if (any(guardrails, InputState::kInferior)) return DecisionValue::kNoShip;
  if (!minimum_met) return DecisionValue::kKeepRunning;
  if (any(primaries, InputState::kWorse)) return DecisionValue::kNoShip;
  const bool guardrails_hold =
      std::all_of(guardrails.begin(), guardrails.end(),
                  [](InputState s) { return s == InputState::kNonInferior; });
  if (any(primaries, InputState::kBetter) && guardrails_hold) {
    return DecisionValue::kShip;
  }
  return DecisionValue::kKeepRunning;
}

InputState PrimaryState(const metrics::ConfidenceInterval& ci,
                        bool has_interval, bool higher_is_better) {
  if (!has_interval) return InputState::kNoData;
  const int verdict = metrics::Verdict(
      ci, higher_is_better ? metrics::Direction::kHigherIsBetter
                           : metrics::Direction::kLowerIsBetter);
  return verdict > 0   ? InputState::kBetter
         : verdict < 0 ? InputState::kWorse
                       : InputState::kInconclusive;
}

InputState GuardrailState(const metrics::ConfidenceInterval& ci,
                          bool has_interval, bool higher_is_better,
                          double margin) {
  if (!has_interval || !std::isfinite(margin)) return InputState::kNoData;
  // Higher is better: the treatment may lose at most `margin`, so the
  // difference must stay above -margin; lower is better: below +margin.
  if (higher_is_better) {
    if (ci.lower > -margin) return InputState::kNonInferior;
    if (ci.upper < -margin) return InputState::kInferior;
  } else {
    if (ci.upper < margin) return InputState::kNonInferior;
    if (ci.lower > margin) return InputState::kInferior;
  }
  return InputState::kUndecided;
}

MinimumSample MinimumSampleAt(int64_t baseline_lists, int64_t treatment_lists,
                              int64_t first_list_ms, int64_t now_ms,
                              const config::ExperimentConfig& e) {
  MinimumSample m;
  m.baseline_lists = baseline_lists;
  m.treatment_lists = treatment_lists;
  m.min_lists = e.min_lists;
  m.min_duration_ms = e.min_duration.count();
  if (first_list_ms == ExperimentMonitor::kNoEventTime) return m;
  m.first_list_ms = first_list_ms;
  m.elapsed_ms = std::max<int64_t>(0, SatSub(now_ms, first_list_ms));
  const int64_t baseline_at =
      ListsMetAt(baseline_lists, m.min_lists, first_list_ms, m.elapsed_ms);
  const int64_t treatment_at =
      ListsMetAt(treatment_lists, m.min_lists, first_list_ms, m.elapsed_ms);
  if (baseline_at >= 0 && treatment_at >= 0) {
    m.met_at_ms = std::max(
        {baseline_at, treatment_at, SatAdd(first_list_ms, m.min_duration_ms)});
  }
  return m;
}

std::string MinimumSentence(const MinimumSample& m) {
  const char* unit = m.units ? "units" : "lists";
  std::string out = "minimum sample not reached: ";
  if (m.baseline_lists < m.min_lists || m.treatment_lists < m.min_lists) {
    out += "baseline " + std::to_string(m.baseline_lists) + " and treatment " +
           std::to_string(m.treatment_lists) + " of the minimum " +
           std::to_string(m.min_lists) + " " + unit + " per arm";
    if (m.elapsed_ms < m.min_duration_ms) out += ", ";
  }
  if (m.elapsed_ms < m.min_duration_ms) {
    out += FormatDuration(Duration(m.elapsed_ms / 1000 * 1000)) +
           " since the first list of the minimum " +
           FormatDuration(Duration(m.min_duration_ms));
  }
  if (m.met_at_ms >= 0) {
    out += "; at the current rate met at about " +
           FormatRfc3339Millis(m.met_at_ms) + " (in " +
           Wait(SatSub(m.met_at_ms, SatAdd(m.first_list_ms, m.elapsed_ms))) +
           ")";
  } else {
    out += std::string("; no ") + unit + " yet to tell when it will be met";
  }
  return out;
}

std::vector<std::string> DecisionReasons(DecisionValue value,
                                         std::span<const DecisionInput> inputs,
                                         const SrmState* srm,
                                         const MinimumSample* minimum) {
  std::vector<std::string> out;
  if (value == DecisionValue::kInvalid && srm != nullptr && srm->detected) {
    out.push_back(SrmSentence(*srm));
    return out;
  }
  if (minimum != nullptr && !minimum->met() &&
      value == DecisionValue::kKeepRunning) {
    out.push_back(MinimumSentence(*minimum));
  }
  for (const DecisionInput& in : inputs) {
    if (Explains(value, in)) out.push_back(InputSentence(in));
  }
  if (value == DecisionValue::kKeepRunning &&
      (minimum == nullptr || minimum->met())) {
    const bool any_better =
        std::any_of(inputs.begin(), inputs.end(), [](const DecisionInput& in) {
          return in.state == InputState::kBetter;
        });
    if (any_better) {
      out.insert(out.begin(),
                 "a primary series is better, but not every guardrail holds "
                 "yet");
    }
  }
  return out;
}

DecisionBoard::DecisionBoard(
    const std::vector<config::ExperimentConfig>* experiments,
    const config::StatisticsConfig& statistics,
    std::vector<config::ResultFieldConfig> fields)
    : experiments_(experiments),
      statistics_(statistics),
      fields_(std::move(fields)) {}

DecisionBoard::Corrected* DecisionBoard::CorrectedTest(
    size_t experiment, const std::string& treatment, const std::string& series,
    size_t primaries) {
  for (Corrected& c : corrected_) {
    if (c.experiment == experiment && c.treatment == treatment &&
        c.series == series) {
      return &c;
    }
  }
  metrics::SequentialOptions options;
  options.level = 1 - (1 - statistics_.level) / static_cast<double>(primaries);
  options.mixing_stddev = statistics_.mixture_sd;
  options.min_count = kMinCorrectedCount;
  corrected_.push_back(
      {experiment, treatment, series, metrics::SequentialTest(options), -1});
  return &corrected_.back();
}

void DecisionBoard::Update(const ExperimentMonitor& monitor,
                           const std::vector<SeriesSpec>& series,
                           int64_t now_ms) {
  std::vector<Decision> next;
  for (size_t x = 0; x < experiments_->size(); ++x) {
    const config::ExperimentConfig& e = (*experiments_)[x];
    for (const std::string& t : e.treatments) {
      Decision d;
      d.experiment = x;
      d.name = e.name;
      d.baseline = e.baseline;
      d.treatment = t;
      Decide(monitor, series, now_ms, &d);
      // The "since" of the same decision at the previous look.
      d.since_look = monitor.looks();
      d.since_event_ms = now_ms;
      for (const Decision& old : decisions_) {
        if (old.experiment == x && old.treatment == t && old.value == d.value) {
          d.since_look = old.since_look;
          // A look before any event has no event time (INT64_MIN): the
          // first look with one dates the decision (a keep_running held
          // since the start would otherwise show no time at all).
          d.since_event_ms =
              old.since_event_ms == std::numeric_limits<int64_t>::min()
                  ? now_ms
                  : old.since_event_ms;
        }
      }
      next.push_back(std::move(d));
    }
  }
  decisions_ = std::move(next);
}

void DecisionBoard::Fill(const config::SeriesRef& ref, const Comparison* c,
                         const std::vector<Comparison>& comparisons,
                         const std::vector<SeriesSpec>& series,
                         DecisionInput* in) const {
  in->ref = ref;
  in->series = config::FormatSeriesRef(ref);
  in->label = c != nullptr ? series[c->series].label : config::SeriesLabel(ref);
  in->level = statistics_.level;
  // The configured direction: the measure's, or the field's `better` (the
  // computed series says the same; a series not computed, after a reload,
  // has none to read).
  in->higher_is_better = metrics::HigherIsBetter(ref.measure);
  for (const config::ResultFieldConfig& f : fields_) {
    if (f.name == ref.field) in->higher_is_better = f.higher_is_better;
  }
  if (c == nullptr) return;
  in->higher_is_better = series[c->series].higher_is_better;
  in->comparison = static_cast<size_t>(c - comparisons.data());
  in->baseline_count = c->baseline_arm.count;
  in->treatment_count = c->treatment_arm.count;
  in->baseline_mean = c->baseline_arm.mean;
  in->baseline_variance = c->baseline_arm.variance;
  in->treatment_mean = c->treatment_arm.mean;
  in->treatment_variance = c->treatment_arm.variance;
  in->difference = c->welch.difference;
  in->relative_difference = c->welch.has_relative_difference
                                ? c->welch.relative_difference
                                : std::nan("");
  in->has_interval = c->sequential.looks() > 0;
  in->interval = c->sequential.interval();
  in->effect_changes = c->sequential.changes();
  in->effect_changed_ms = c->effect_changed_ms;
}

void DecisionBoard::Decide(const ExperimentMonitor& monitor,
                           const std::vector<SeriesSpec>& series,
                           int64_t now_ms, Decision* d) {
  const config::ExperimentConfig& e = (*experiments_)[d->experiment];
  const std::vector<Comparison>& comparisons = monitor.comparisons();
  const auto find = [&](const config::SeriesRef& ref) -> const Comparison* {
    for (const Comparison& c : comparisons) {
      if (c.experiment_index != d->experiment || c.treatment != d->treatment ||
          c.window != -1 || !c.has_sequential || c.series >= series.size()) {
        continue;
      }
      if (RefOf(series[c.series]) == ref) return &c;
    }
    return nullptr;
  };
  // Not finite (an overflowed sum of squares): invalid, never "too few
  // lists", which would keep an earlier interval standing.
  const auto state_of_finite = [](const Comparison* c, InputState state) {
    if (c != nullptr && c->baseline_arm.count > 0 &&
        c->treatment_arm.count > 0 &&
        (!FiniteArm(c->baseline_arm) || !FiniteArm(c->treatment_arm))) {
      return InputState::kInvalid;
    }
    return state;
  };
  std::vector<InputState> primary_states;
  for (const config::SeriesRef& ref : e.primary) {
    DecisionInput in;
    const Comparison* c = find(ref);
    Fill(ref, c, comparisons, series, &in);
    if (c != nullptr && e.primary.size() > 1) {
      // k primary series: each at level 1 - alpha / k.
      Corrected* test = CorrectedTest(d->experiment, d->treatment, in.series,
                                      e.primary.size());
      if (EnoughForCorrected(c->baseline_arm) &&
          EnoughForCorrected(c->treatment_arm)) {
        const int64_t before = test->test.changes();
        (void)test->test.Update(c->baseline_arm, c->treatment_arm);
        if (test->test.changes() > before) test->changed_ms = now_ms;
      }
      in.level = test->test.options().level;
      in.has_interval = test->test.looks() > 0;
      in.interval = test->test.interval();
      in.effect_changes = test->test.changes();
      in.effect_changed_ms = test->changed_ms;
    }
    in.state = state_of_finite(
        c, PrimaryState(in.interval, in.has_interval, in.higher_is_better));
    primary_states.push_back(in.state);
    d->inputs.push_back(std::move(in));
  }
  std::vector<InputState> guardrail_states;
  for (const config::GuardrailConfig& g : e.guardrails) {
    DecisionInput in;
    in.guardrail = true;
    const Comparison* c = find(g.series);
    Fill(g.series, c, comparisons, series, &in);
    in.relative = g.relative;
    in.relative_margin = g.relative ? g.margin : 0;
    in.margin = g.relative ? g.margin * std::fabs(in.baseline_mean) : g.margin;
    in.state =
        state_of_finite(c, GuardrailState(in.interval, in.has_interval,
                                          in.higher_is_better, in.margin));
    guardrail_states.push_back(in.state);
    d->inputs.push_back(std::move(in));
  }
  const SrmState* srm = d->experiment < monitor.srm().size()
                            ? &monitor.srm()[d->experiment]
                            : nullptr;
  d->minimum = MinimumOf(monitor, srm, now_ms, *d);
  d->value = stream::Decide(srm != nullptr && srm->detected, primary_states,
                            guardrail_states, d->minimum.met());
  d->reasons = DecisionReasons(d->value, d->inputs, srm, &d->minimum);
}

MinimumSample DecisionBoard::MinimumOf(const ExperimentMonitor& monitor,
                                       const SrmState* srm, int64_t now_ms,
                                       const Decision& d) const {
  const config::ExperimentConfig& e = (*experiments_)[d.experiment];
  // The sample-ratio counts: units with schema.unit, else lists.
  int64_t baseline = 0;
  int64_t treatment = 0;
  if (srm != nullptr) {
    for (size_t i = 0; i < srm->variants.size() && i < srm->counts.size();
         ++i) {
      if (srm->variants[i] == e.baseline) baseline = srm->counts[i];
      if (srm->variants[i] == d.treatment) treatment = srm->counts[i];
    }
  }
  MinimumSample m = MinimumSampleAt(
      baseline, treatment, monitor.FirstListMs(d.experiment), now_ms, e);
  m.units = monitor.units();
  return m;
}

void WriteMinimumJson(const MinimumSample& m, JsonWriter* out) {
  out->Key("minimum");
  out->BeginObject();
  out->Key("baseline_lists");
  out->Int(m.baseline_lists);
  out->Key("treatment_lists");
  out->Int(m.treatment_lists);
  out->Key("min_lists");
  out->Int(m.min_lists);
  out->Key("units");
  out->Bool(m.units);
  out->Key("elapsed_ms");
  out->Int(m.elapsed_ms);
  out->Key("min_duration_ms");
  out->Int(m.min_duration_ms);
  out->Key("met");
  out->Bool(m.met());
  out->Key("met_at_ms");
  out->Int(m.met_at_ms);
  out->EndObject();
}

void WriteDecisionJson(const Decision& d, JsonWriter* out) {
  out->BeginObject();
  out->Key("treatment");
  out->String(d.treatment);
  out->Key("value");
  out->String(DecisionValueName(d.value));
  out->Key("reasons");
  out->StringArray(d.reasons);
  out->Key("since_look");
  out->Int(d.since_look);
  out->Key("since_event_ms");
  // INT64_MIN until the first event time: null, which readers (the status
  // page) show as "–", not a date they cannot represent (issue 43).
  out->TimeOrNull(d.since_event_ms);
  WriteMinimumJson(d.minimum, out);
  // The inputs whose effect changed (issue 42): what the reasons, the demo
  // and the page name.
  out->Key("effect_changes");
  out->BeginArray();
  for (const DecisionInput& in : d.inputs) {
    if (in.effect_changes == 0) continue;
    out->BeginObject();
    out->Key("series");
    out->String(in.series);
    out->Key("label");
    out->String(in.label);
    out->Key("changes");
    out->Int(in.effect_changes);
    out->Key("event_ms");
    out->Int(in.effect_changed_ms);
    out->EndObject();
  }
  out->EndArray();
  out->Key("inputs");
  out->BeginArray();
  for (const DecisionInput& in : d.inputs) {
    out->BeginObject();
    out->Key("role");
    out->String(in.guardrail ? "guardrail" : "primary");
    out->Key("series");
    out->String(in.series);
    out->Key("label");
    out->String(in.label);
    out->Key("state");
    out->String(InputStateName(in.state));
    out->Key("baseline_count");
    out->Int(in.baseline_count);
    out->Key("treatment_count");
    out->Int(in.treatment_count);
    out->Key("difference");
    out->Double(in.difference);
    out->Key("relative_difference");
    out->Double(in.relative_difference);  // null when undefined.
    out->Key("ci_lower");
    out->Double(in.has_interval ? in.interval.lower : std::nan(""));
    out->Key("ci_upper");
    out->Double(in.has_interval ? in.interval.upper : std::nan(""));
    out->Key("level");
    out->Double(in.level);
    out->Key("effect_changes");
    out->Int(in.effect_changes);
    out->Key("effect_changed_ms");
    out->Int(in.effect_changed_ms);
    if (in.guardrail) {
      out->Key("margin");
      out->Double(in.margin);
      out->Key("relative_margin");
      out->Double(in.relative ? in.relative_margin : std::nan(""));
    }
    out->EndObject();
  }
  out->EndArray();
  out->EndObject();
}

void DecisionBoard::AdoptState(const DecisionBoard& previous) {
  // Update() carries "since" from decisions_: start from the old ones,
  // matched by experiment name (its index may have moved).
  decisions_.clear();
  for (const Decision& old : previous.decisions_) {
    for (size_t x = 0; x < experiments_->size(); ++x) {
      if ((*experiments_)[x].name != old.name) continue;
      Decision kept = old;
      kept.experiment = x;
      decisions_.push_back(std::move(kept));
    }
  }
}

}  // namespace rankwatch::stream
