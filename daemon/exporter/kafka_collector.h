// KafkaCollector: the Kafka consumer's IngestState as metric families:
// lag and offsets per topic-partition, assigned partitions per topic,
// errors by name, commits, rebalances, dead letters, replayed events and
// readiness. Per-topic series of the configured topics, the fixed `result`
// label values and every readiness reason are exported from the start.
//
// Readiness has one definition, IngestState::ready_reason(): the gauges
// rankwatch_consumer_ready and rankwatch_consumer_ready_reason export it
// and /readyz answers it (http::ReadinessHandler, which the daemon gives
// the same status), both at the clock's monotonic now.
//
// Reads the status without synchronization: Collect() runs with the
// daemon's mutex held (see probe.h). The status and the clock must outlive
// the collector.
#ifndef RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_

#include <vector>

#include "base/clock.h"
#include "daemon/exporter/probe.h"
#include "daemon/kafka/ingest_state.h"

namespace rankwatch::exporter {

class KafkaCollector : public Collector {
 public:
  explicit KafkaCollector(const kafka::IngestState* status,
                          const Clock* clock = SystemClock::Get())
      : status_(status), clock_(clock) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  void CollectPartitions(std::vector<prometheus::MetricFamily>* out) const;
  void CollectCounters(std::vector<prometheus::MetricFamily>* out) const;
  void CollectTopicEvents(std::vector<prometheus::MetricFamily>* out) const;

  const kafka::IngestState* status_;
  const Clock* clock_;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
