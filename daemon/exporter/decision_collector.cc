#include "daemon/exporter/decision_collector.h"

#include <string>
#include <utility>

#include "daemon/exporter/families.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

enum Family {
  kDecision,
  kSinceLook,
  kInput,
  kInputLower,
  kInputUpper,
  kMargin,
  kEffectChanges,
  kEffectChangedAt,
  kMinimumMet,
  kNumFamilies,
};

std::vector<MetricFamily> MakeFamilies() {
  std::vector<MetricFamily> f;
  f.reserve(kNumFamilies);
  f.push_back(MakeFamily(
      "rankwatch_ab_decision",
      "The experiment's decision for the treatment, a state set: 1 for the "
      "current one (ship, no_ship, keep_running, invalid)",
      MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_ab_decision_since_look",
                         "The look that first gave the current decision",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_decision_input",
      "What a primary series or guardrail says to the decision: +1 supports "
      "shipping (better, non-inferior), -1 blocks it (worse, inferior), 0 "
      "neither yet",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_decision_ci_lower",
      "Lower end of the always-valid interval the decision read for the "
      "series (Bonferroni-corrected over several primary series)",
      MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_ab_decision_ci_upper",
                         "Upper end of the always-valid interval the decision "
                         "read for the series",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_guardrail_margin",
      "A guardrail's configured non-inferiority margin: absolute in the "
      "series' units, or relative as a fraction of the baseline's mean",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_decision_effect_changes",
      "Times the series' estimate left its running always-valid interval "
      "(an effect that changed; the interval restarts from that look)",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_decision_effect_changed_timestamp_seconds",
      "Event time of the series' latest effect change (only once it had one)",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_ab_decision_minimum_met",
      "1 once the experiment has its minimum sample (min_lists per arm and "
      "min_duration since its first list), 0 before: no call but a guardrail "
      "breach until then",
      MetricType::Gauge));
  return f;
}

}  // namespace

void DecisionCollector::Collect(const stream::PipelineSnapshot& snapshot,
                                std::vector<MetricFamily>* out) const {
  const std::vector<stream::Decision>& decisions = snapshot.decisions;
  if (decisions.empty()) return;
  std::vector<MetricFamily> f = MakeFamilies();
  for (const stream::Decision& d : decisions) {
    const Labels labels = {{"experiment", d.name},
                           {"variant", d.treatment},
                           {"baseline", d.baseline}};
    for (int v = 0; v < stream::kNumDecisionValues; ++v) {
      const auto value = static_cast<stream::DecisionValue>(v);
      Labels state = labels;
      state.push_back(
          {"decision", std::string(stream::DecisionValueName(value))});
      AddGauge(&f[kDecision], std::move(state), value == d.value ? 1 : 0);
    }
    AddGauge(&f[kSinceLook], labels, static_cast<double>(d.since_look));
    AddGauge(&f[kMinimumMet], labels, d.minimum.met() ? 1 : 0);
    for (const stream::DecisionInput& in : d.inputs) {
      Labels series = labels;
      series.push_back({"measure", MeasureLabel(in.ref)});
      series.push_back({"k", CutoffLabel(in.ref.cutoff)});
      if (in.guardrail) {
        // The configured margin: the fraction when relative, else the
        // absolute margin (which the input holds as configured).
        Labels margin = series;
        margin.push_back({"kind", in.relative ? "relative" : "absolute"});
        AddGauge(&f[kMargin], std::move(margin),
                 in.relative ? in.relative_margin : in.margin);
      }
      series.push_back({"role", in.guardrail ? "guardrail" : "primary"});
      AddGauge(&f[kInput], series, stream::InputSign(in.state));
      AddGauge(&f[kEffectChanges], series,
               static_cast<double>(in.effect_changes));
      if (in.effect_changes > 0) {
        AddGauge(&f[kEffectChangedAt], series,
                 static_cast<double>(in.effect_changed_ms) / 1000);
      }
      if (in.has_interval) {
        AddGauge(&f[kInputLower], series, in.interval.lower);
        AddGauge(&f[kInputUpper], std::move(series), in.interval.upper);
      }
    }
  }
  for (MetricFamily& family : f) {
    if (!family.metric.empty()) out->push_back(std::move(family));
  }
}

}  // namespace rankwatch::exporter
