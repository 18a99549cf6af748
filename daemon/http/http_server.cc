#include "daemon/http/http_server.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <utility>

#include "daemon/http/gzip.h"
#include "daemon/http/io_loop.h"
#include "daemon/http/listen_socket.h"
#include "daemon/http/response_format.h"
#include "daemon/http/worker_pool.h"

namespace rankwatch::http {

namespace {

// Below this size gzip's framing (18 bytes) and CPU outweigh the savings.
constexpr size_t kMinGzipBytes = 256;
constexpr int kMaxThreads = 64;
// Descriptors left to the rest of the daemon (Kafka sockets, files, logs)
// when the open-file limit caps the connections.
constexpr uint64_t kFdReserve = 256;

}  // namespace

HttpServer::HttpServer() = default;

std::string_view OverloadName(Overload reason) {
  switch (reason) {
    case Overload::kResponseBudget:
      return "response_budget";
    case Overload::kQueueFull:
      return "queue_full";
    case Overload::kClientQueueFull:
      return "client_queue_full";
    case Overload::kTlsHandshakeRate:
      return "tls_handshake_rate";
  }
  return "unknown";
}

std::string_view ForbiddenName(Forbidden reason) {
  switch (reason) {
    case Forbidden::kHost:
      return "host";
    case Forbidden::kCrossSite:
      return "cross_site";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads) {
  return Start(listen, threads, HttpLimits());
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads, const HttpLimits& limits) {
  return Start(listen, threads, limits, HttpSecurity());
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads, const HttpLimits& limits,
    const HttpSecurity& security, const Clock* clock) {
  RW_RETURN_IF_ERROR(ValidateListen(listen));
  std::unique_ptr<TlsContext> tls;
  if (!security.tls.cert_file.empty() || !security.tls.key_file.empty()) {
    StatusOr<std::unique_ptr<TlsContext>> context =
        TlsContext::Create(security.tls);
    if (!context.ok()) return context.status();
    tls = std::move(context).value();
  }
  std::optional<BasicAuth> auth;
  if (!security.users.empty()) {
    StatusOr<BasicAuth> created = BasicAuth::Create(security.users, clock);
    if (!created.ok()) return created.status();
    auth.emplace(std::move(created).value());
  }
  if (threads < 1 || threads > kMaxThreads) {
    return Status::InvalidArgument("HTTP worker threads must be in 1.." +
                                   std::to_string(kMaxThreads) + ", not " +
                                   std::to_string(threads));
  }
  if (limits.max_connections < 1 || limits.max_connections_per_client < 1 ||
      limits.max_queued_requests < 1 || limits.max_queued_per_client < 1 ||
      limits.response_budget_bytes < 1 ||
      limits.tls_handshakes_per_second_per_client < 1) {
    return Status::InvalidArgument("HTTP limits must be positive");
  }
  HttpLimits effective = limits;
  const uint64_t files = RaiseFileLimit();
  const uint64_t fit = files > 2 * kFdReserve ? files - kFdReserve : files / 2;
  if (effective.max_connections > fit) {
    spdlog::warn("http: open-file limit {} allows {} connections, not {}",
                 files, fit, effective.max_connections);
    effective.max_connections = static_cast<size_t>(fit);
  }

  StatusOr<int> listen_fd = Listen(listen);
  if (!listen_fd.ok()) return listen_fd.status();
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = *listen_fd;
  bool ok = epoll_fd >= 0 && wake_fd >= 0 &&
            epoll_ctl(epoll_fd, EPOLL_CTL_ADD, *listen_fd, &event) == 0;
  event.data.fd = wake_fd;
  ok = ok && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &event) == 0;
  if (!ok) {
    const Status error = Status::Internal("cannot serve HTTP on " + listen +
                                          ": epoll: " + std::strerror(errno));
    close(*listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
    return error;
  }

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->port_ = BoundPort(*listen_fd);
  server->tls_ = tls != nullptr;
  server->clock_ = clock;
  server->hosts_ =
      HostPolicy::Create(ListenHost(listen), security.allowed_hosts);
  server->tls_context_ = std::move(tls);
  if (auth.has_value()) {
    server->auth_.emplace(std::move(auth).value());
    if (!server->tls_) {
      spdlog::warn(
          "http: basic authentication without TLS sends the password in "
          "clear text");
    }
  }
  const Responder* responder = server.get();  // Private base: in scope here.
  server->workers_ = std::make_unique<WorkerPool>(responder, wake_fd, effective,
                                                  &server->held_bytes_, clock);
  server->io_ = std::make_unique<IoLoop>(
      *listen_fd, epoll_fd, wake_fd, effective, server->workers_.get(),
      server->tls_context_.get(), clock, &server->held_bytes_);
  RW_RETURN_IF_ERROR(server->workers_->Start(threads));
  try {
    server->io_thread_ = std::thread([io = server->io_.get()] { io->Run(); });
  } catch (const std::system_error& e) {
    return Status::Internal(std::string("cannot start the HTTP thread: ") +
                            e.what());
  }
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (io_thread_.joinable()) {
    io_->RequestStop();
    io_thread_.join();  // Returns once no handler runs.
  }
  if (workers_ != nullptr) workers_->Stop();
}

HttpStats HttpServer::stats() const {
  HttpStats stats;
  stats.tls_handshake_errors = io_->tls_handshake_errors();
  stats.unauthorized_requests = unauthorized_.load();
  for (int i = 0; i < kNumOverloads; ++i) {
    stats.overloads[i] = io_->overloads(static_cast<Overload>(i));
  }
  stats.overloads[static_cast<size_t>(Overload::kResponseBudget)] +=
      workers_->over_budget();
  for (int i = 0; i < kNumForbidden; ++i) {
    stats.forbidden[i] = forbidden_[i].load();
  }
  stats.shared_responses = workers_->shared();
  stats.response_bytes_held = held_bytes_.load();
  stats.tls_reloads = io_->tls_reloads();
  stats.tls_reload_errors = io_->tls_reload_errors();
  if (tls_context_ != nullptr) {
    stats.tls_certificate_not_after = tls_context_->not_after_unix_seconds();
  }
  return stats;
}

Status HttpServer::ReloadTls() {
  if (tls_context_ == nullptr) return Status::Ok();
  const Status reloaded = tls_context_->Reload();
  io_->CountTlsReload(reloaded.ok());
  return reloaded;
}

void HttpServer::Handle(const std::string& path, Handler handler) {
  Handle(path, {"GET", "HEAD"}, std::move(handler));
}

void HttpServer::Handle(const std::string& path,
                        std::vector<std::string> methods, Handler handler) {
  std::unique_lock<std::shared_mutex> lock(handlers_mu_);
  handlers_[path] = Route{std::move(methods), std::move(handler)};
}

std::optional<HttpResponse> HttpServer::Screen(
    HttpRequest* mutable_request) const {
  const HttpRequest& request = *mutable_request;
  if (!hosts_.Allows(request.Header("Host"))) {
    ++forbidden_[static_cast<size_t>(Forbidden::kHost)];
    return HttpResponse::Text(
        403, "forbidden: this Host is not served (http.allowed_hosts)\n");
  }
  if (request.method != "GET" && request.method != "HEAD") {
    // A browser marks what a page sends: Origin on every cross-origin
    // request (and on same-origin POSTs), Sec-Fetch-Site on all. curl,
    // kubectl and Prometheus send neither.
    const std::optional<std::string_view> site =
        request.Header("Sec-Fetch-Site");
    if (request.Header("Origin").has_value() ||
        (site.has_value() && *site != "none" && *site != "same-origin")) {
      ++forbidden_[static_cast<size_t>(Forbidden::kCrossSite)];
      return HttpResponse::Text(
          403, "forbidden: not from a web page (Origin or Sec-Fetch-Site)\n");
    }
  }
  mutable_request->authenticated = !auth_.has_value();
  if (auth_.has_value()) {
    switch (auth_->Check(request)) {
      case AuthResult::kAllowed:
        mutable_request->authenticated = true;
        break;
      case AuthResult::kExempt:
        break;
      case AuthResult::kMissing:
      case AuthResult::kDenied:
        ++unauthorized_;
        return BasicAuth::Challenge();
    }
  }
  return std::nullopt;
}

std::string HttpServer::Format(const HttpResponse& response,
                               bool head_only) const {
  return FormatResponse(response, head_only, clock_->NowMillis());
}

std::string HttpServer::Respond(const HttpRequest& request) const {
  // Nothing may escape a worker thread.
  try {
    HttpResponse response = Dispatch(request);
    MaybeCompress(request, &response);
    return Format(response, request.method == "HEAD");
  } catch (const std::exception& e) {
    spdlog::error("http: {}", e.what());
  } catch (...) {
    spdlog::error("http: unknown exception");
  }
  return FormatError(500, "internal error", clock_->NowMillis());
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) const {
  Handler handler;
  {
    std::shared_lock<std::shared_mutex> lock(handlers_mu_);
    const auto it = handlers_.find(request.path);
    if (it == handlers_.end()) return HttpResponse::Text(404, "not found\n");
    const std::vector<std::string>& methods = it->second.methods;
    if (std::find(methods.begin(), methods.end(), request.method) ==
        methods.end()) {
      HttpResponse r = HttpResponse::Text(405, "method not allowed\n");
      std::string allow;
      for (const std::string& method : methods) {
        allow += (allow.empty() ? "" : ", ") + method;
      }
      r.headers.emplace_back("Allow", allow);
      return r;
    }
    // A copy, so that Handle() may replace it while it runs.
    handler = it->second.handler;
  }
  try {
    return handler(request);
  } catch (const std::exception& e) {
    spdlog::error("http: handler of {} failed: {}", request.path, e.what());
  } catch (...) {
    spdlog::error("http: handler of {} failed", request.path);
  }
  return HttpResponse::Text(500, "internal error\n");
}

void HttpServer::MaybeCompress(const HttpRequest& request,
                               HttpResponse* response) {
  if (response->body.size() < kMinGzipBytes) return;
  // The representation depends on Accept-Encoding: caches must know.
  response->headers.emplace_back("Vary", "Accept-Encoding");
  const std::optional<std::string_view> accept =
      request.Header("Accept-Encoding");
  if (!accept.has_value() || !AcceptsGzip(*accept)) return;
  StatusOr<std::string> compressed = GzipCompress(response->body);
  if (!compressed.ok()) {
    // Still correct uncompressed.
    spdlog::warn("http: {}", compressed.status().message());
    return;
  }
  response->body = std::move(compressed).value();
  response->headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace rankwatch::http
