// ReloadStatus and ReloadCollector: the outcome of configuration reloads
// (SIGHUP, POST /-/reload) as Prometheus itself exports its own:
//   rankwatch_config_last_reload_successful              gauge, 1 or 0
//   rankwatch_config_last_reload_success_timestamp_seconds
//   rankwatch_config_reloads_total{result="success|failure"}
// The load at startup counts as the first successful one (its time, no
// increment), so the gauge reads 1 and the timestamp is set from the start.
//
// Ownership: the collector reads a ReloadStatus the daemon owns, which must
// outlive it. Thread-safety: none of its own; the daemon updates the status
// and scrapes under the same mutex.
#ifndef RANKWATCH_DAEMON_SERVER_RELOAD_COLLECTOR_H_
#define RANKWATCH_DAEMON_SERVER_RELOAD_COLLECTOR_H_

#include <cstdint>
#include <vector>

#include "daemon/exporter/probe.h"

namespace rankwatch::server {

struct ReloadStatus {
  bool last_successful = true;
  int64_t last_success_ms = INT64_MIN;  // Wall clock; INT64_MIN: never.
  int64_t successes = 0;
  int64_t failures = 0;

  void RecordSuccess(int64_t now_ms) {
    last_successful = true;
    last_success_ms = now_ms;
    ++successes;
  }
  void RecordFailure() {
    last_successful = false;
    ++failures;
  }
};

class ReloadCollector : public exporter::Collector {
 public:
  explicit ReloadCollector(const ReloadStatus* status) : status_(status) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  const ReloadStatus* status_;
};

}  // namespace rankwatch::server

#endif  // RANKWATCH_DAEMON_SERVER_RELOAD_COLLECTOR_H_
