#include "daemon/exporter/probe.h"

#include <utility>

#include "daemon/exporter/decision_collector.h"
#include "daemon/exporter/experiment_collector.h"
#include "daemon/exporter/families.h"
#include "daemon/exporter/interleaving_collector.h"
#include "daemon/exporter/judge_collector.h"
#include "daemon/exporter/kafka_collector.h"
#include "daemon/exporter/pipeline_collector.h"
#include "daemon/exporter/process_collector.h"
#include "daemon/exporter/query_movers_collector.h"

namespace rankwatch::exporter {

void Probe::Add(std::unique_ptr<Collector> collector) {
  entries_.push_back({std::move(collector), nullptr});
}

void Probe::Add(std::unique_ptr<SnapshotCollector> collector) {
  entries_.push_back({nullptr, std::move(collector)});
}

Probe::GuardedFamilies Probe::CollectGuarded() const {
  GuardedFamilies families(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Collector* c = entries_[i].live.get();
    if (c != nullptr && c->guarded()) c->Collect(&families[i]);
  }
  return families;
}

std::vector<prometheus::MetricFamily> Probe::Render(
    const stream::PipelineSnapshot& snapshot, GuardedFamilies guarded) const {
  std::vector<prometheus::MetricFamily> families;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.snapshot != nullptr) {
      e.snapshot->Collect(snapshot, &families);
    } else if (!e.live->guarded()) {
      e.live->Collect(&families);
    } else if (i < guarded.size()) {
      for (prometheus::MetricFamily& f : guarded[i]) {
        families.push_back(std::move(f));
      }
    }
  }
  return families;
}

std::vector<prometheus::MetricFamily> Probe::Collect(
    const stream::PipelineSnapshot& snapshot) const {
  return Render(snapshot, CollectGuarded());
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

std::unique_ptr<Probe> MakeDaemonProbe(const kafka::IngestState* kafka,
                                       BuildInfo build, const Clock* clock) {
  auto probe = std::make_unique<Probe>();
  probe->Add(std::make_unique<BuildInfoCollector>(std::move(build)));
  probe->Add(std::make_unique<ProcessCollector>());
  probe->Add(std::make_unique<PipelineCollector>());
  probe->Add(std::make_unique<ExperimentCollector>());
  probe->Add(std::make_unique<DecisionCollector>());
  probe->Add(std::make_unique<InterleavingCollector>());
  probe->Add(std::make_unique<QueryMoversCollector>());
  probe->Add(std::make_unique<JudgeCollector>());
  if (kafka != nullptr)
    probe->Add(std::make_unique<KafkaCollector>(kafka, clock));
  return probe;
}

}  // namespace rankwatch::exporter
