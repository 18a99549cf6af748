// KafkaCollector: the Kafka consumer's KafkaStatus as metric families:
// lag and offsets per topic-partition, assigned partitions per topic,
// errors by name, commits, rebalances, dead letters, replayed events and
// readiness. Per-topic series of the configured topics and the fixed
// `result` label values are exported from the start, at 0.
//
// Readiness has one definition, KafkaStatus::ready(): the gauge
// rankwatch_consumer_ready exports it and /readyz answers it (through
// LockedReadiness below), both at the clock's monotonic now.
//
// Reads the status without synchronization: Collect() runs with the
// daemon's mutex held (see probe.h). The status and the clock must outlive
// the collector.
#ifndef RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_

#include <functional>
#include <mutex>
#include <vector>

#include "base/clock.h"
#include "daemon/exporter/probe.h"
#include "daemon/kafka/kafka_status.h"

namespace rankwatch::exporter {

class KafkaCollector : public Collector {
 public:
  explicit KafkaCollector(const kafka::KafkaStatus* status,
                          const Clock* clock = SystemClock::Get())
      : status_(status), clock_(clock) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  void CollectPartitions(std::vector<prometheus::MetricFamily>* out) const;
  void CollectCounters(std::vector<prometheus::MetricFamily>* out) const;

  const kafka::KafkaStatus* status_;
  const Clock* clock_;
};

// What /readyz asks: status->ready() at the clock's monotonic now, read
// under `mu` (the mutex that guards the status). Thread-safe; the
// arguments must outlive the function.
std::function<bool()> LockedReadiness(const kafka::KafkaStatus* status,
                                      std::mutex* mu, const Clock* clock);

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
