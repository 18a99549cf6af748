#include "daemon/server/daemon.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>
#include <utility>

#include "base/clock.h"
#include "base/duration.h"
#include "config/config_loader.h"
#include "daemon/exporter/http_collector.h"
#include "daemon/exporter/kafka_collector.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/http/handlers.h"
#include "daemon/page/handlers.h"

namespace rankwatch::server {

namespace {

constexpr int kHttpThreads = 4;
// How often Run() looks for a reload asked by a signal.
constexpr std::chrono::milliseconds kReloadPoll(100);

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

std::vector<std::string> ReloadRefusedKeys(const config::Config& running,
                                           const config::Config& next) {
  // The consumer, the endpoint (config::ConfigKeys()), then the pipeline.
  std::vector<std::string> keys =
      config::FixedKeysChanged(running, next, config::KeyOwner::kServer);
  for (std::string& k : stream::Pipeline::FixedKeysChanged(running, next)) {
    keys.push_back(std::move(k));
  }
  return keys;
}

http::HttpLimits HttpLimitsOf(const config::HttpConfig& http) {
  http::HttpLimits limits;
  limits.response_budget_bytes =
      static_cast<size_t>(http.response_budget_bytes);
  return limits;
}

http::HttpSecurity HttpSecurityOf(const config::HttpConfig& http) {
  http::HttpSecurity security;
  security.tls.cert_file = http.tls.cert_file;
  security.tls.key_file = http.tls.key_file;
  security.tls.client_ca_file = http.tls.client_ca;
  security.tls.min_version = http.tls.min_version;
  security.tls.cipher_suites = http.tls.cipher_suites;
  // The single user first, then basic_auth.users.
  if (!http.basic_auth.username.empty()) {
    security.users.push_back(
        {http.basic_auth.username, http.basic_auth.password});
  }
  for (const auto& [name, secret] : http.basic_auth.users) {
    security.users.push_back({name, secret});
  }
  security.allowed_hosts = http.allowed_hosts;
  return security;
}

exporter::BuildInfo MakeBuildInfo(const config::Config& config) {
  return exporter::BuildInfo{
      RANKWATCH_VERSION, RANKWATCH_REVISION,
      std::string(config::JoinModeName(config.join.mode))};
}

namespace {

// The first figures come only once event time passes the first request's
// plus join.window (or join.qrels_delay) and join.allowed_lateness: half an
// hour with the defaults. Said at start (issue 43), as the page and
// /api/v1/summary say it (pipeline.first_figures_due_ms).
void LogFirstFiguresDue(const config::JoinConfig& join) {
  const bool impression = join.mode == config::JoinMode::kImpression;
  const Duration wait = impression ? join.window : join.qrels_delay;
  spdlog::info(
      "the first figures come when event time passes the first request's "
      "plus {} ({} {} and join.allowed_lateness {}); the status page and "
      "/api/v1/summary say when",
      FormatDuration(wait + join.allowed_lateness),
      impression ? "join.window" : "join.qrels_delay", FormatDuration(wait),
      FormatDuration(join.allowed_lateness));
}

}  // namespace

StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const config::Config& config,
                                                 DaemonOptions options) {
  std::unique_ptr<Daemon> d(new Daemon(config, std::move(options)));
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
        config_.kafka, config_.dead_letter.topic,
        config_.events.max_event_bytes, ingest_->mutable_status(), clock_);
    if (!sink.ok()) return sink.status();
    dead_letters_ = std::move(sink).value();
  }
  StatusOr<std::unique_ptr<stream::Pipeline>> pipeline =
      stream::Pipeline::Create(config_, ingest_->event_clock(), ingest_.get(),
                               dead_letters_.get());
  if (!pipeline.ok()) return pipeline.status();
  pipeline_ = std::move(pipeline).value();
  ingest_->Attach(pipeline_.get(), &mu_, dead_letters_.get());
  reload_status_.last_success_ms = clock_->NowMillis();

  StatusOr<std::unique_ptr<http::HttpServer>> http = http::HttpServer::Start(
      config_.http.listen, kHttpThreads, HttpLimitsOf(config_.http),
      HttpSecurityOf(config_.http), clock_);
  if (!http.ok()) return http.status();
  http_ = std::move(http).value();
  BuildProbe();  // Before /metrics serves it; it reads the server's counts.
  // Under mu_ only copies: the pipeline's counts, when no reader has taken
  // this version yet (after a look, as TakeSnapshot()), and the families
  // of the state mu_ guards (the ingest's status, the reloads'). Without
  // it: the figures computed from the counts, once per version
  // (SnapshotCache), the families rendered, serialized and compressed
  // (probe.h).
  http_->Handle("/metrics", exporter::MetricsHandler([this] {
                  stream::SnapshotCache::Ticket ticket;
                  exporter::Probe::GuardedFamilies guarded;
                  {
                    std::lock_guard<std::mutex> lock(mu_);
                    ticket = BeginSnapshotLocked();
                    guarded = probe_->CollectGuarded();
                  }
                  const stream::SnapshotCache::Snapshot snapshot =
                      snapshots_.Finish(std::move(ticket));
                  return probe_->Render(*snapshot, std::move(guarded));
                }));
  // Neither takes mu_: a scrape or a consumer busy with a message holds
  // them up no more than any other request.
  http_->Handle("/healthz", http::HealthHandler());
  // The same predicate as the gauges rankwatch_consumer_ready and
  // rankwatch_consumer_ready_reason, with the reason in the body, from the
  // inputs the consumer thread publishes as it changes them
  // (kafka::ReadinessBoard).
  http_->Handle("/readyz", http::ReadinessHandler([this] {
                  const kafka::ReadinessBoard::Readiness r =
                      ingest_->readiness().At(clock_->MonotonicMillis());
                  return http::Readiness{r.ready, r.message};
                }));
  // The summary copies under mu_ and computes and renders without it.
  page::RegisterHandlers(
      http_.get(),
      [this](page::SummaryState* out) {
        stream::SnapshotCache::Ticket ticket;
        {
          std::lock_guard<std::mutex> lock(mu_);
          ticket = BeginSnapshotLocked();
          out->kafka = ingest_->status();
        }
        out->shared = snapshots_.Finish(std::move(ticket));
      },
      clock_);
  reload_enabled_ = config_.http.enable_reload;
  // Other methods: 405 with "Allow: POST", and cross-site requests 403,
  // from the server.
  http_->Handle("/-/reload", {"POST"}, [this](const http::HttpRequest&) {
    if (!reload_enabled_.load()) {
      // As Prometheus answers without --web.enable-lifecycle.
      return http::HttpResponse::Text(
          403, "reload is disabled (http.enable_reload); SIGHUP reloads\n");
    }
    // The reply names keys, never a file, a line or a value: those are
    // in the log (Reload()).
    std::string reply;
    const bool ok = Reload(&reply).ok();
    return http::HttpResponse::Text(ok ? 200 : 500, reply + "\n");
  });
  spdlog::info("serving /, /metrics, /healthz and /readyz over {} on port {}",
               http_->tls() ? "HTTPS" : "HTTP", http_->port());
  LogFirstFiguresDue(config_.join);
  return Status::Ok();
}

stream::SnapshotCache::Snapshot Daemon::Snapshot() {
  stream::SnapshotCache::Ticket ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = BeginSnapshotLocked();
  }
  return snapshots_.Finish(std::move(ticket));
}

stream::SnapshotCache::Ticket Daemon::BeginSnapshotLocked() {
  // The A/B figures of the state the means are read from (issue 27).
  pipeline_->RefreshLook();
  return snapshots_.Begin(*pipeline_);
}

void Daemon::BuildProbe() {
  std::unique_ptr<exporter::Probe> probe = exporter::MakeDaemonProbe(
      &ingest_->status(), MakeBuildInfo(config_), clock_);
  probe->Add(std::make_unique<ReloadCollector>(&reload_status_));
  probe->Add(std::make_unique<exporter::HttpCollector>(http_.get()));
  probe_ = std::move(probe);
}

Status Daemon::ReloadFailed(std::string message, std::string_view reply_text,
                            std::string* reply) {
  spdlog::error("{}", message);
  if (reply != nullptr) reply->assign(reply_text);
  std::lock_guard<std::mutex> lock(mu_);
  reload_status_.RecordFailure();
  return Status::InvalidArgument(std::move(message));
}

Status Daemon::Reload(std::string* reply) {
  std::lock_guard<std::mutex> reload_lock(reload_mu_);
  if (options_.config_path.empty()) {
    return ReloadFailed("reload failed: the daemon has no configuration file",
                        "reload failed: the daemon has no configuration file",
                        reply);
  }
  StatusOr<config::Config> next = config::LoadConfigFile(options_.config_path);
  if (!next.ok()) {
    return ReloadFailed("reload failed, keeping the running configuration: " +
                            next.status().message(),
                        "reload failed, keeping the running configuration: "
                        "the file does not load (rankwatch check-config and "
                        "the log say where and why)",
                        reply);
  }
  if (!options_.listen_override.empty()) {
    next->http.listen = options_.listen_override;
  }
  const std::vector<std::string> refused = ReloadRefusedKeys(config_, *next);
  if (!refused.empty()) {
    const std::string what = JoinKeys(refused) +
                             ", which cannot change while running (restart "
                             "to apply)";
    return ReloadFailed("reload refused, keeping the running configuration: " +
                            options_.config_path + " changes " + what,
                        "reload refused, keeping the running configuration: "
                        "the file changes " +
                            what,
                        reply);
  }
  const std::vector<std::string> changed = config::ChangedKeys(config_, *next);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Status s = pipeline_->Reconfigure(*next);
    if (!s.ok()) {
      spdlog::error("reload failed, keeping the running configuration: {}",
                    s.message());
      reload_status_.RecordFailure();
      if (reply != nullptr) {
        *reply =
            "reload failed, keeping the running configuration: the pipeline "
            "refused it (the log says why)";
      }
      return s;
    }
    config_ = *std::move(next);
    reload_enabled_ = config_.http.enable_reload;
    reload_status_.RecordSuccess(clock_->NowMillis());
  }
  // A rotated certificate (cert-manager renews files in place). The files
  // are also watched; this makes a reload take effect at once.
  if (const Status tls = http_->ReloadTls(); !tls.ok()) {
    spdlog::error("reload: keeping the previous TLS certificate: {}",
                  tls.message());
  }
  if (options_.apply_logging) {
    options_.apply_logging(config_.logging);
  } else {
    spdlog::set_level(spdlog::level::from_str(config_.logging.level));
  }
  // What changed, by key (issue 43): a reload that changed nothing says so.
  const std::string what =
      changed.empty() ? "nothing changed" : "changed " + JoinKeys(changed);
  spdlog::info("configuration reloaded from {}: {}", options_.config_path,
               what);
  if (reply != nullptr) *reply = "configuration reloaded: " + what;
  return Status::Ok();
}

Status Daemon::Run(const std::atomic<bool>& stop) {
  std::atomic<bool> done{false};
  std::thread reloader;
  if (options_.reload_requested != nullptr) {
    reloader = std::thread([this, &done] {
      while (!done.load()) {
        if (options_.reload_requested->exchange(false)) (void)Reload();
        std::this_thread::sleep_for(kReloadPoll);
      }
    });
  }
  Status s = ingest_->Run(stop);
  done.store(true);
  if (reloader.joinable()) reloader.join();
  http_->Stop();
  return s;
}

}  // namespace rankwatch::server
