// The "probe" (after Redpanda's): metric registration kept apart from the
// code that counts. The pipeline and the Kafka consumer keep plain integer
// counters in their own structs; at scrape time the probe's collectors read
// that state and build prometheus::MetricFamily values from it. The hot
// path never touches a Prometheus object.
//
// A Collector turns one piece of state into families; a Probe is the
// ordered list of collectors the daemon exposes. New metrics (e.g. A/B
// comparisons) are a new Collector added to the probe.
//
// Ownership: the probe owns its collectors; collectors only point to the
// state they read, which must outlive them.
//
// Thread-safety: Probe::Collect() reads state owned by other threads, so
// the caller holds the daemon's mutex (the one the consumer thread holds
// while it feeds the pipeline) for the duration of the call, and for
// nothing else: serializing and compressing the result happen after the
// lock is released. Collect() does not block and does not throw except
// std::bad_alloc.
#ifndef RANKWATCH_DAEMON_EXPORTER_PROBE_H_
#define RANKWATCH_DAEMON_EXPORTER_PROBE_H_

#include <prometheus/metric_family.h>

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::exporter {

// A source of metric families read at scrape time.
class Collector {
 public:
  virtual ~Collector() = default;
  // Appends this collector's families to *out. Family names must not
  // collide with those of other collectors of the same probe.
  virtual void Collect(std::vector<prometheus::MetricFamily>* out) const = 0;
};

class Probe {
 public:
  void Add(std::unique_ptr<Collector> collector);
  // All collectors' families, in the order the collectors were added.
  std::vector<prometheus::MetricFamily> Collect() const;

 private:
  std::vector<std::unique_ptr<Collector>> collectors_;
};

// What `rankwatch_build_info` reports.
struct BuildInfo {
  std::string version;   // RANKWATCH_VERSION.
  std::string revision;  // Git commit; "unknown" when empty.
  std::string mode;      // Join mode: "impression" or "qrels".
};

// rankwatch_build_info{version,revision,mode} 1.
class BuildInfoCollector : public Collector {
 public:
  explicit BuildInfoCollector(BuildInfo info) : info_(std::move(info)) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  BuildInfo info_;
};

// The daemon's probe: build info, the process_* metrics, the pipeline's state
// and, when `kafka` is not null, the consumer's (its readiness at `clock`'s
// monotonic now). `pipeline`, `kafka` and `clock` must outlive the probe.
std::unique_ptr<Probe> MakeDaemonProbe(const stream::Pipeline* pipeline,
                                       const kafka::IngestState* kafka,
                                       BuildInfo build,
                                       const Clock* clock = SystemClock::Get());

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_PROBE_H_
