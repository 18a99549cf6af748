#include "daemon/server/daemon.h"

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "daemon/exporter/kafka_collector.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/http/handlers.h"

namespace rankwatch::server {

namespace {
constexpr int kHttpThreads = 4;
}  // namespace

exporter::BuildInfo MakeBuildInfo(const config::Config& config) {
  return exporter::BuildInfo{
      RANKWATCH_VERSION, RANKWATCH_REVISION,
      std::string(config::JoinModeName(config.join.mode))};
}

StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const config::Config& config) {
  std::unique_ptr<Daemon> d(new Daemon(config));
  RW_RETURN_IF_ERROR(d->Init());
  return d;
}

Daemon::~Daemon() {
  // The server's handlers use the pipeline: stop serving first.
  if (http_) http_->Stop();
}

Status Daemon::Init() {
  StatusOr<std::unique_ptr<kafka::KafkaIngest>> ingest =
      kafka::KafkaIngest::Create(config_, clock_);
  if (!ingest.ok()) return ingest.status();
  ingest_ = std::move(ingest).value();
  if (!config_.dead_letter.topic.empty()) {
    auto sink = kafka::KafkaDeadLetterSink::Create(
        config_.kafka, config_.dead_letter.topic, ingest_->mutable_status(),
        clock_);
    if (!sink.ok()) return sink.status();
    dead_letters_ = std::move(sink).value();
  }
  StatusOr<std::unique_ptr<stream::Pipeline>> pipeline =
      stream::Pipeline::Create(config_, clock_, ingest_.get(),
                               dead_letters_.get());
  if (!pipeline.ok()) return pipeline.status();
  pipeline_ = std::move(pipeline).value();
  ingest_->Attach(pipeline_.get(), &mu_, dead_letters_.get());
  probe_ = exporter::MakeDaemonProbe(pipeline_.get(), &ingest_->status(),
                                     MakeBuildInfo(config_), clock_);

  StatusOr<std::unique_ptr<http::HttpServer>> http =
      http::HttpServer::Start(config_.http.listen, kHttpThreads);
  if (!http.ok()) return http.status();
  http_ = std::move(http).value();
  http_->Handle("/metrics", exporter::MetricsHandler([this] {
                  std::lock_guard<std::mutex> lock(mu_);
                  return probe_->Collect();
                }));
  http_->Handle("/healthz", http::HealthHandler());
  // The same predicate as the gauges rankwatch_consumer_ready and
  // rankwatch_consumer_ready_reason, with the reason in the body.
  http_->Handle("/readyz",
                exporter::ReadinessHandler(&ingest_->status(), &mu_, clock_));
  spdlog::info("serving /metrics, /healthz and /readyz on port {}",
               http_->port());
  return Status::Ok();
}

Status Daemon::Run(const std::atomic<bool>& stop) {
  Status s = ingest_->Run(stop);
  http_->Stop();
  return s;
}

}  // namespace rankwatch::server
