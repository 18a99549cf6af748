// Daemon: `rankwatch run` assembled. It owns the streaming pipeline, the
// Kafka ingest that feeds it, the optional Kafka dead-letter sink, and the
// HTTP endpoint serving /metrics (from a probe rendering a snapshot of the
// pipeline taken at scrape time), /healthz, /readyz and POST /-/reload.
//
// Reload (SIGHUP through DaemonOptions::reload_requested, or POST
// /-/reload) re-reads the configuration file: what can change live is
// applied to the pipeline (Pipeline::Reconfigure) under mu_, between two
// messages; a change of a key that cannot (ReloadRefusedKeys) or a file
// that does not load is refused with one log line, and the running
// configuration stays. Outcomes are exported by ReloadCollector.
//
// Threading: Run() consumes on the calling thread; HTTP handlers run on the
// server's worker threads. mu_ guards the pipeline and the Kafka status;
// the ingest takes it per message (see consumer.h). Under it a reader
// (/metrics, /api/v1/summary, the demo's terminal) only takes a look when
// lists were finalized since the last one (Pipeline::RefreshLook) and
// copies: the pipeline's counts and sums (stream::CopySnapshot, bounded:
// snapshot.h), once per state version, and the guarded collectors'
// families (probe.h). The statistics computed from the counts (judges'
// agreement, movers, PPI) and the rendering run without it, once per
// state version for all readers (stream::SnapshotCache: a second reader
// of the version waits for the first one's result, not for mu_).
// /healthz and /readyz never take mu_: readiness comes from the inputs
// the consumer publishes into kafka::ReadinessBoard.
// Reloads run on a thread of Run() (signals) or an HTTP worker, one at a
// time (reload_mu_). Create() and Run() are called from one thread.
//
// Time: the wall clock for event time, the monotonic clock for intervals,
// timeouts and readiness, both from SystemClock.
#ifndef RANKWATCH_DAEMON_SERVER_DAEMON_H_
#define RANKWATCH_DAEMON_SERVER_DAEMON_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/exporter/probe.h"
#include "daemon/http/http_server.h"
#include "daemon/kafka/consumer.h"
#include "daemon/server/reload_collector.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "daemon/stream/pipeline/snapshot_cache.h"

namespace rankwatch::server {

struct DaemonOptions {
  // The file `config` was loaded from, re-read by Reload(); empty: reload
  // is unavailable (an error).
  std::string config_path;
  // Replaces http.listen of every loaded file (`run --listen`).
  std::string listen_override;
  // Set by a signal handler (SIGHUP): Run() polls it and reloads. Must
  // outlive Run().
  std::atomic<bool>* reload_requested = nullptr;
  // Applies the logging section after a reload (level, format, rate); the
  // command line installs it (cli::SetupLogging). Without it only the level
  // follows.
  std::function<void(const config::LoggingConfig&)> apply_logging;
};

class Daemon {
 public:
  // Builds everything and starts listening on config.http.listen (so that
  // /healthz answers while Kafka is still connecting). A bad configuration
  // or a busy port is an error.
  static StatusOr<std::unique_ptr<Daemon>> Create(const config::Config& config,
                                                  DaemonOptions options = {});
  ~Daemon();

  // The bound HTTP port (the chosen one when listening on port 0).
  int http_port() const { return http_->port(); }

  // Consumes until `stop` is true, then commits, leaves the group and stops
  // serving. Returns an error only when consuming cannot start.
  Status Run(const std::atomic<bool>& stop);

  // Re-reads DaemonOptions::config_path and applies it (see above). An
  // error when the file does not load, a key that cannot change live
  // changed, or the pipeline refused it; each is logged in one line and
  // counted. `reply` (optional) gets one line for whoever asked (POST
  // /-/reload): the keys that changed, or why nothing did, by key names
  // only; file names, positions and values stay in the log (issue 24).
  Status Reload(std::string* reply = nullptr);

  // The pipeline's figures now, copied under mu_ after a look when lists
  // were finalized since the last one (Pipeline::RefreshLook) and
  // completed without it, shared with every reader of the same state
  // version: what /metrics, /api/v1/summary and the demo's terminal
  // render. Thread-safe.
  stream::SnapshotCache::Snapshot Snapshot();

  // For tests: holds the pipeline's lock, as a consumer busy with a
  // message or a reload does, until the returned lock is released.
  [[nodiscard]] std::unique_lock<std::mutex> LockPipelineForTest() {
    return std::unique_lock<std::mutex>(mu_);
  }

 private:
  Daemon(const config::Config& config, DaemonOptions options)
      : config_(config), options_(std::move(options)) {}
  Status Init();
  // The probe, with the reload and HTTP metrics: built once, before
  // /metrics serves it (its pipeline families render the configuration of
  // each snapshot, so a reload leaves it as it is).
  void BuildProbe();
  // Snapshot()'s first step, with mu_ held by the caller.
  stream::SnapshotCache::Ticket BeginSnapshotLocked();
  Status ReloadFailed(std::string message, std::string_view reply_text,
                      std::string* reply);

  std::mutex reload_mu_;   // One reload at a time; guards config_.
  config::Config config_;  // As running.
  const DaemonOptions options_;
  const Clock* clock_ = SystemClock::Get();
  std::mutex mu_;  // Guards the pipeline, the ingest's status and
                   // reload_status_.
  ReloadStatus reload_status_;
  // http.enable_reload as configured now (read by HTTP workers).
  std::atomic<bool> reload_enabled_{false};
  std::unique_ptr<kafka::KafkaIngest> ingest_;
  std::unique_ptr<kafka::KafkaDeadLetterSink> dead_letters_;
  std::unique_ptr<stream::Pipeline> pipeline_;
  stream::SnapshotCache snapshots_;               // Its own lock.
  std::unique_ptr<const exporter::Probe> probe_;  // Set before serving.
  std::unique_ptr<http::HttpServer> http_;
};

// The version, revision and join mode reported by rankwatch_build_info.
exporter::BuildInfo MakeBuildInfo(const config::Config& config);

// The HTTP server's limits and security as `http` configures them.
http::HttpLimits HttpLimitsOf(const config::HttpConfig& http);
http::HttpSecurity HttpSecurityOf(const config::HttpConfig& http);

// The keys that differ between `running` and `next` and cannot change
// while running, as YAML paths, in the order of config::ConfigKeys(): the
// Kafka consumer's (kafka.*), the HTTP endpoint's (http.* but
// http.enable_reload), then the pipeline's (Pipeline::FixedKeysChanged).
// Empty when `next` can be applied live.
std::vector<std::string> ReloadRefusedKeys(const config::Config& running,
                                           const config::Config& next);

}  // namespace rankwatch::server

#endif  // RANKWATCH_DAEMON_SERVER_DAEMON_H_
