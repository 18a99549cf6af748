// Daemon: `rankwatch run` assembled. It owns the streaming pipeline, the
// Kafka ingest that feeds it, the optional Kafka dead-letter sink, and the
// HTTP endpoint serving /metrics (from a probe reading the pipeline at
// scrape time), /healthz and /readyz.
//
// Threading: Run() consumes on the calling thread; HTTP handlers run on the
// server's worker threads and read the pipeline and the Kafka status under
// mu_ (/metrics and /readyz alike), which the ingest takes per message
// (see consumer.h). Create() and Run() are called from one thread.
//
// Time: the wall clock for event time, the monotonic clock for intervals,
// timeouts and readiness, both from SystemClock.
#ifndef RANKWATCH_DAEMON_SERVER_DAEMON_H_
#define RANKWATCH_DAEMON_SERVER_DAEMON_H_

#include <atomic>
#include <memory>
#include <mutex>

#include "base/clock.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/exporter/probe.h"
#include "daemon/http/http_server.h"
#include "daemon/kafka/consumer.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::server {

class Daemon {
 public:
  // Builds everything and starts listening on config.http.listen (so that
  // /healthz answers while Kafka is still connecting). A bad configuration
  // or a busy port is an error.
  static StatusOr<std::unique_ptr<Daemon>> Create(const config::Config& config);
  ~Daemon();

  // The bound HTTP port (the chosen one when listening on port 0).
  int http_port() const { return http_->port(); }

  // Consumes until `stop` is true, then commits, leaves the group and stops
  // serving. Returns an error only when consuming cannot start.
  Status Run(const std::atomic<bool>& stop);

 private:
  explicit Daemon(const config::Config& config) : config_(config) {}
  Status Init();

  config::Config config_;
  const Clock* clock_ = SystemClock::Get();
  std::mutex mu_;  // Guards the pipeline and the ingest's status.
  std::unique_ptr<kafka::KafkaIngest> ingest_;
  std::unique_ptr<kafka::KafkaDeadLetterSink> dead_letters_;
  std::unique_ptr<stream::Pipeline> pipeline_;
  std::unique_ptr<exporter::Probe> probe_;
  std::unique_ptr<http::HttpServer> http_;
};

// The version, revision and join mode reported by rankwatch_build_info.
exporter::BuildInfo MakeBuildInfo(const config::Config& config);

}  // namespace rankwatch::server

#endif  // RANKWATCH_DAEMON_SERVER_DAEMON_H_
