#include "daemon/exporter/query_movers_collector.h"

#include <cmath>
#include <string>
#include <utility>

#include "daemon/exporter/families.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

enum Family {
  kTested,
  kSignificant,
  kInfo,
  kDifference,
  kContribution,
  kPValueBh,
  kNumFamilies,
};

std::vector<MetricFamily> MakeFamilies() {
  std::vector<MetricFamily> f;
  f.reserve(kNumFamilies);
  f.push_back(MakeFamily("rankwatch_query_movers_tested",
                         "Tracked queries of the comparison with enough lists "
                         "in both arms for a per-query Welch test",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_query_movers_significant",
      "Tracked queries whose treatment difference is significant after "
      "Benjamini-Hochberg across the tested queries, by direction",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_query_mover_info",
      "The query at a rank of the comparison's movers (by |contribution|; "
      "statistics.export_query_movers)",
      MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_query_mover_difference",
                         "Treatment mean minus baseline mean of the query at "
                         "this rank of the movers",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_query_mover_contribution",
      "Traffic share times difference of the query at this rank of the "
      "movers: its part of the overall difference",
      MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_query_mover_p_value_bh",
      "Welch p-value of the query at this rank, Benjamini-Hochberg adjusted "
      "across the tested queries; NaN when not tested",
      MetricType::Gauge));
  return f;
}

}  // namespace

void QueryMoversCollector::Collect(const stream::PipelineSnapshot& snapshot,
                                   std::vector<MetricFamily>* out) const {
  if (snapshot.movers_capacity == 0 || snapshot.config.experiments.empty()) {
    return;
  }
  const size_t top =
      static_cast<size_t>(snapshot.config.statistics.export_query_movers);
  const double alpha = 1 - snapshot.level;
  std::vector<MetricFamily> f = MakeFamilies();
  const std::vector<metrics::QueryMover> none;
  for (const stream::Comparison& c : snapshot.comparisons) {
    if (!c.primary || c.window >= 0) continue;
    const stream::SeriesSpec& series = snapshot.series[c.series];
    // The snapshot's own configuration (c.experiment points into the
    // pipeline's).
    const config::ExperimentConfig& e =
        snapshot.config.experiments[c.experiment_index];
    const Labels labels = {{"experiment", e.name},
                           {"variant", c.treatment},
                           {"baseline", e.baseline},
                           {"measure", series.name},
                           {"k", series.k_label}};
    // The snapshot holds the movers of every such comparison.
    const std::vector<metrics::QueryMover>* found =
        snapshot.FindMovers(c.experiment_index, c.treatment, c.series);
    const std::vector<metrics::QueryMover>& list =
        found != nullptr ? *found : none;
    int64_t tested = 0, worse = 0, better = 0;
    for (const metrics::QueryMover& m : list) {
      if (!m.tested) continue;
      ++tested;
      if (m.p_value_bh > alpha) continue;
      if (m.difference < 0) ++worse;
      if (m.difference > 0) ++better;
    }
    AddGauge(&f[kTested], labels, static_cast<double>(tested));
    Labels directed = labels;
    directed.push_back({"direction", "worse"});
    AddGauge(&f[kSignificant], directed, static_cast<double>(worse));
    directed.back().value = "better";
    AddGauge(&f[kSignificant], directed, static_cast<double>(better));
    for (size_t i = 0; i < list.size() && i < top; ++i) {
      const metrics::QueryMover& m = list[i];
      if (!std::isfinite(m.contribution)) break;  // One arm without lists.
      Labels ranked = labels;
      ranked.push_back({"rank", std::to_string(i + 1)});
      Labels info = ranked;
      info.push_back({"query", LabelText(m.query, kMaxQueryLabelBytes)});
      AddGauge(&f[kInfo], std::move(info), 1);
      AddGauge(&f[kDifference], ranked, m.difference);
      AddGauge(&f[kContribution], ranked, m.contribution);
      AddGauge(&f[kPValueBh], std::move(ranked), m.p_value_bh);
    }
  }
  for (MetricFamily& family : f) {
    if (!family.metric.empty()) out->push_back(std::move(family));
  }
}

}  // namespace rankwatch::exporter
