// KafkaCollector: the Kafka consumer's KafkaStatus as metric families:
// lag and offsets per topic-partition, assigned partitions per topic,
// errors by name, commits, rebalances, dead letters, replayed events and
// readiness. Per-topic series of the configured topics and the fixed
// `result` label values are exported from the start, at 0.
//
// Reads the status without synchronization: Collect() runs with the
// daemon's mutex held (see probe.h). The status must outlive it.
#ifndef RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/kafka/kafka_status.h"

namespace rankwatch::exporter {

class KafkaCollector : public Collector {
 public:
  explicit KafkaCollector(const kafka::KafkaStatus* status) : status_(status) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  void CollectPartitions(std::vector<prometheus::MetricFamily>* out) const;
  void CollectCounters(std::vector<prometheus::MetricFamily>* out) const;

  const kafka::KafkaStatus* status_;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
