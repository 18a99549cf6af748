// KafkaCollector: the Kafka consumer's KafkaStatus as metric families:
// lag and offsets per topic-partition, assigned partitions per topic,
// errors by name, commits, rebalances, dead letters, replayed events and
// readiness. Per-topic series of the configured topics, the fixed `result`
// label values and every readiness reason are exported from the start.
//
// Readiness has one definition, KafkaStatus::ready_reason(): the gauges
// rankwatch_consumer_ready and rankwatch_consumer_ready_reason export it
// and /readyz answers it (ReadinessHandler below), all at the clock's
// monotonic now.
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
#include "daemon/http/http_server.h"
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

// /readyz: 200 "ready" when status->ready() at the clock's monotonic now,
// else 503 with status->ReadinessMessage() ("not ready (<reason>): ..."),
// one line; to a request that is not authenticated (basic auth on, no
// valid credentials) only "not ready", without the reason's topics. Reads the
// status under `mu` (the mutex that guards it). Thread-safe; the arguments must
// outlive the handler.
http::Handler ReadinessHandler(const kafka::KafkaStatus* status, std::mutex* mu,
                               const Clock* clock);

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_KAFKA_COLLECTOR_H_
