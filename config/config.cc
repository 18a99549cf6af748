#include "config/config.h"

#include <algorithm>

namespace rankwatch::config {

std::string_view JoinModeName(JoinMode m) {
  switch (m) {
    case JoinMode::kImpression:
      return "impression";
    case JoinMode::kQrels:
      return "qrels";
  }
  return "?";
}

std::string_view LogFormatName(LogFormat f) {
  switch (f) {
    case LogFormat::kText:
      return "text";
    case LogFormat::kJson:
      return "json";
  }
  return "text";
}

std::string_view CombineRuleName(CombineRule r) {
  switch (r) {
    case CombineRule::kMax:
      return "max";
    case CombineRule::kLast:
      return "last";
  }
  return "?";
}

// Whether `ref` is one of the series that metrics: computes.
bool IsConfiguredSeries(const MetricsConfig& metrics, const SeriesRef& ref) {
  if (std::find(metrics.measures.begin(), metrics.measures.end(),
                ref.measure) == metrics.measures.end()) {
    return false;
  }
  if (ref.cutoff == 0) return metrics::HasUncutVariant(ref.measure);
  return metrics::HasCutoffVariant(ref.measure) &&
         std::find(metrics.cutoffs.begin(), metrics.cutoffs.end(),
                   ref.cutoff) != metrics.cutoffs.end();
}

// ndcg@10 when computed, else the first quality series in the order of
// metrics.measures, at its smallest cutoff.
std::vector<SeriesRef> DefaultPrimary(const MetricsConfig& metrics) {
  const SeriesRef ndcg10{metrics::Measure::kNdcg, 10};
  if (IsConfiguredSeries(metrics, ndcg10)) return {ndcg10};
  std::vector<int32_t> cutoffs = metrics.cutoffs;
  std::sort(cutoffs.begin(), cutoffs.end());
  for (metrics::Measure m : metrics.measures) {
    // A primary series must have a value for every list.
    if (!metrics::IsQualityMeasure(m) || !metrics::DefinedForEveryList(m)) {
      continue;
    }
    if (metrics::HasCutoffVariant(m) && !cutoffs.empty()) {
      return {SeriesRef{m, cutoffs.front()}};
    }
    if (metrics::HasUncutVariant(m)) return {SeriesRef{m, 0}};
  }
  return {};
}

std::string FormatSeriesRef(const SeriesRef& r) {
  std::string out(metrics::MeasureName(r.measure));
  if (r.cutoff > 0) out += "@" + std::to_string(r.cutoff);
  return out;
}

}  // namespace rankwatch::config
