// The "probe" (after Redpanda's): metric registration kept apart from the
// code that counts. The pipeline and the Kafka consumer keep plain integer
// counters in their own structs; at scrape time the probe's collectors read
// that state and build prometheus::MetricFamily values from it. The hot
// path never touches a Prometheus object.
//
// Two kinds of collectors:
//   SnapshotCollector  renders the pipeline's families from a
//                      stream::PipelineSnapshot, the read model whose
//                      counts are copied from the pipeline under the
//                      daemon's lock and whose statistics are computed
//                      after it (snapshot.h), configuration included; it
//                      reads nothing else.
//   Collector          reads other state at scrape time: the Kafka
//                      consumer's status, the reloads', the HTTP server's
//                      counters, /proc, the build. guarded() says whether
//                      that state is guarded by the daemon's lock.
// A Probe is the ordered list of collectors the daemon exposes. New
// metrics of the pipeline (e.g. A/B comparisons) are a new
// SnapshotCollector added to the probe.
//
// A scrape takes two steps so that the daemon's lock is held only while
// plain values are copied:
//   under the lock     Pipeline::RefreshLook() (a look, only when lists
//                      were finalized since the last one),
//                      stream::CopySnapshot() (the pipeline's counts and
//                      sums, once per state version: SnapshotCache),
//                      Probe::CollectGuarded() (the guarded collectors:
//                      a few families, per Kafka partition at most)
//   without the lock   stream::CompleteSnapshot() (agreement, movers, PPI;
//                      once per state version, shared by the scrapes that
//                      read it), Probe::Render(): the snapshot collectors'
//                      families, the unguarded collectors', and the
//                      guarded ones gathered in step 1, in the order the
//                      collectors were added; then serialization and gzip.
//
// Ownership: the probe owns its collectors; a Collector only points to
// the state it reads, which must outlive it. Snapshot collectors hold no
// state of the pipeline (nothing of its configuration either), so a probe
// stays valid across reloads and is built once.
//
// Thread-safety: CollectGuarded() runs with the daemon's mutex held (the
// one the consumer thread holds while it feeds the pipeline and updates
// the Kafka status); Render() reads no guarded state and may run on any
// thread, concurrently with itself. Collect() takes both steps, for a
// caller whose guarded state no other thread writes. None blocks or
// throws except std::bad_alloc. Snapshot collectors read the snapshot's
// configuration, never the pointers its comparisons and interleaving
// states hold into the pipeline's (which a reload frees).
#ifndef RANKWATCH_DAEMON_EXPORTER_PROBE_H_
#define RANKWATCH_DAEMON_EXPORTER_PROBE_H_

#include <prometheus/metric_family.h>

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

// A source of metric families that reads live state at scrape time.
class Collector {
 public:
  virtual ~Collector() = default;
  // Whether Collect() reads state guarded by the daemon's mutex (the
  // Kafka status, the reloads'): Probe::CollectGuarded() calls it, under
  // the lock. Otherwise (atomics, /proc, constants) Probe::Render() calls
  // it, without. Guarded unless the collector says otherwise.
  virtual bool guarded() const { return true; }
  // Appends this collector's families to *out. Family names must not
  // collide with those of other collectors of the same probe.
  virtual void Collect(std::vector<prometheus::MetricFamily>* out) const = 0;
};

// A source of metric families rendered from the pipeline's read model.
class SnapshotCollector {
 public:
  virtual ~SnapshotCollector() = default;
  // Appends the families of `snapshot` to *out (names as for Collector).
  virtual void Collect(const stream::PipelineSnapshot& snapshot,
                       std::vector<prometheus::MetricFamily>* out) const = 0;
};

class Probe {
 public:
  // What CollectGuarded() gathered: one list per collector, in the order
  // they were added (empty for the others).
  using GuardedFamilies = std::vector<std::vector<prometheus::MetricFamily>>;

  void Add(std::unique_ptr<Collector> collector);
  void Add(std::unique_ptr<SnapshotCollector> collector);

  // Step 1 of a scrape, with the daemon's mutex held: the families of the
  // guarded collectors.
  GuardedFamilies CollectGuarded() const;
  // Step 2, without the lock: all collectors' families, in the order the
  // collectors were added: the snapshot collectors' rendered from
  // `snapshot`, the guarded ones' from `guarded`, the others' read now.
  std::vector<prometheus::MetricFamily> Render(
      const stream::PipelineSnapshot& snapshot, GuardedFamilies guarded) const;
  // Both steps, for a caller whose guarded state no other thread writes
  // (tests, benchmarks).
  std::vector<prometheus::MetricFamily> Collect(
      const stream::PipelineSnapshot& snapshot) const;

 private:
  // One of the two is set.
  struct Entry {
    std::unique_ptr<Collector> live;
    std::unique_ptr<SnapshotCollector> snapshot;
  };
  std::vector<Entry> entries_;
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
  bool guarded() const override { return false; }
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  BuildInfo info_;
};

// The daemon's probe: build info, the process_* metrics, the pipeline's
// families (rendered from a snapshot) and, when `kafka` is not null, the
// consumer's (its readiness at `clock`'s monotonic now). `kafka` and
// `clock` must outlive the probe.
std::unique_ptr<Probe> MakeDaemonProbe(const kafka::IngestState* kafka,
                                       BuildInfo build,
                                       const Clock* clock = SystemClock::Get());

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_PROBE_H_
