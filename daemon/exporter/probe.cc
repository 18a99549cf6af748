#include "daemon/exporter/probe.h"

#include <utility>

#include "daemon/exporter/decision_collector.h"
#include "daemon/exporter/experiment_collector.h"
#include "daemon/exporter/families.h"
#include "daemon/exporter/interleaving_collector.h"
#include "daemon/exporter/kafka_collector.h"
#include "daemon/exporter/pipeline_collector.h"
#include "daemon/exporter/process_collector.h"
#include "daemon/exporter/query_movers_collector.h"

namespace rankwatch::exporter {

void Probe::Add(std::unique_ptr<Collector> collector) {
  collectors_.push_back(std::move(collector));
}

std::vector<prometheus::MetricFamily> Probe::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  for (const std::unique_ptr<Collector>& c : collectors_) c->Collect(&families);
  return families;
}

void BuildInfoCollector::Collect(
    std::vector<prometheus::MetricFamily>* out) const {
  prometheus::MetricFamily f =
      MakeFamily("rankwatch_build_info",
                 "Always 1; labels name the running build and join mode",
                 prometheus::MetricType::Gauge);
  AddGauge(&f,
           {{"version", info_.version},
            {"revision", info_.revision.empty() ? "unknown" : info_.revision},
            {"mode", info_.mode}},
           1);
  out->push_back(std::move(f));
}

std::unique_ptr<Probe> MakeDaemonProbe(const stream::Pipeline* pipeline,
                                       const kafka::IngestState* kafka,
                                       BuildInfo build, const Clock* clock) {
  auto probe = std::make_unique<Probe>();
  probe->Add(std::make_unique<BuildInfoCollector>(std::move(build)));
  probe->Add(std::make_unique<ProcessCollector>());
  probe->Add(std::make_unique<PipelineCollector>(pipeline));
  probe->Add(std::make_unique<ExperimentCollector>(pipeline));
  probe->Add(std::make_unique<DecisionCollector>(pipeline));
  probe->Add(std::make_unique<InterleavingCollector>(pipeline));
  probe->Add(std::make_unique<QueryMoversCollector>(pipeline));
  if (kafka != nullptr)
    probe->Add(std::make_unique<KafkaCollector>(kafka, clock));
  return probe;
}

}  // namespace rankwatch::exporter
