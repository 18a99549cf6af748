#include "daemon/http/http_server.h"

#include <civetweb.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

#include "base/strings.h"
#include "daemon/http/gzip.h"

namespace rankwatch::http {

namespace {

// Below this size gzip's framing (18 bytes) and CPU outweigh the savings.
constexpr size_t kMinGzipBytes = 256;
// A client that sends its request this slowly is dropped, freeing a worker.
constexpr char kRequestTimeoutMs[] = "10000";
constexpr int kMaxThreads = 64;
// How often Stop() wakes civetweb's accept loop while waiting for it.
constexpr std::chrono::milliseconds kPokeInterval(5);

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
         c == '_';
}

// Checks "host:port" before civetweb sees it: civetweb reads more into the
// string than we allow (a list of ports, an 's' suffix for TLS, 'r' for
// redirects) and reports mistakes only as "failed to setup server ports".
Status ValidateListen(std::string_view listen) {
  const auto error = [&](std::string_view why) {
    return Status::InvalidArgument("bad HTTP listen address '" +
                                   std::string(listen) +
                                   "': " + std::string(why));
  };
  const size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return error("expected host:port");
  const std::string_view host = listen.substr(0, colon);
  const std::string_view port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5) return error("bad port");
  int port_value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return error("bad port");
    port_value = port_value * 10 + (c - '0');
  }
  if (port_value > 65535) return error("port over 65535");
  if (host.empty()) return error("empty host");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return error("bad IPv6 host");
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
          c != '.') {
        return error("bad IPv6 host");
      }
    }
    return Status::Ok();
  }
  for (char c : host) {
    if (!IsHostChar(c)) {
      return error("bad host (IPv6 addresses go in brackets: [::1]:9464)");
    }
  }
  return Status::Ok();
}

void InitCivetwebOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

// The address a client of `listen` (validated) connects to: the host, or
// the loopback address of its family for a wildcard host.
std::string ConnectHost(std::string_view listen) {
  std::string_view host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
    return host == "::" ? "::1" : std::string(host);
  }
  return host == "0.0.0.0" ? "127.0.0.1" : std::string(host);
}

// Resolves the server's own address for PokeAcceptLoop(); false when it
// cannot (Stop() is then only slower).
bool ResolvePokeAddress(std::string_view listen, const mg_server_port& port,
                        sockaddr_storage* address, socklen_t* length) {
  addrinfo hints{};
  // The family civetweb bound (a name may resolve to both).
  hints.ai_family = port.protocol == 2 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(ConnectHost(listen).c_str(),
                  std::to_string(port.port).c_str(), &hints, &found) != 0) {
    return false;
  }
  const bool ok = found != nullptr && found->ai_addrlen <= sizeof(*address);
  if (ok) {
    std::memcpy(address, found->ai_addr, found->ai_addrlen);
    *length = found->ai_addrlen;
  }
  freeaddrinfo(found);
  return ok;
}

HttpRequest ToRequest(const mg_request_info& info) {
  HttpRequest request;
  request.method = info.request_method != nullptr ? info.request_method : "";
  const char* path =
      info.local_uri != nullptr ? info.local_uri : info.request_uri;
  request.path = path != nullptr ? path : "";
  for (int i = 0; i < info.num_headers; ++i) {
    const mg_header& h = info.http_headers[i];
    request.headers.emplace_back(h.name != nullptr ? h.name : "",
                                 h.value != nullptr ? h.value : "");
  }
  return request;
}

int SendInternalError(mg_connection* conn) {
  mg_send_http_error(conn, 500, "%s", "internal error\n");
  return 500;
}

}  // namespace

std::optional<std::string_view> HttpRequest::Header(
    std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads) {
  RW_RETURN_IF_ERROR(ValidateListen(listen));
  if (threads < 1 || threads > kMaxThreads) {
    return Status::InvalidArgument("HTTP worker threads must be in 1.." +
                                   std::to_string(kMaxThreads) + ", not " +
                                   std::to_string(threads));
  }
  InitCivetwebOnce();
  std::unique_ptr<HttpServer> server(new HttpServer());
  const std::string num_threads = std::to_string(threads);
  const char* options[] = {"listening_ports",
                           listen.c_str(),
                           "num_threads",
                           num_threads.c_str(),
                           "request_timeout_ms",
                           kRequestTimeoutMs,
                           "enable_keep_alive",
                           "no",
                           nullptr};
  mg_callbacks callbacks{};
  callbacks.begin_request = &HttpServer::OnBeginRequest;
  callbacks.log_message = &HttpServer::OnLogMessage;
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = options;
  unsigned error_code = 0;
  char error_text[256] = "";
  mg_error_data error{&error_code, error_text, sizeof(error_text)};
  server->context_ = mg_start2(&init, &error);

  std::string log;
  {
    std::lock_guard<std::mutex> lock(server->log_mu_);
    server->started_ = true;
    log.swap(server->startup_log_);
  }
  if (server->context_ == nullptr) {
    // The log holds the cause ("cannot bind to ...: Address already in
    // use"); civetweb's own error text only says which step failed.
    return Status::Unavailable("cannot serve HTTP on " + listen + ": " +
                               (log.empty() ? std::string(error_text) : log));
  }
  mg_server_port port{};
  if (mg_get_server_ports(server->context_, 1, &port) != 1) {
    return Status::Internal("HTTP server on " + listen +
                            " reports no listening port");
  }
  server->port_ = port.port;
  if (!ResolvePokeAddress(listen, port, &server->poke_address_,
                          &server->poke_address_length_)) {
    server->poke_address_length_ = 0;
  }
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (context_ == nullptr) return;
  // mg_stop() sets a stop flag and joins civetweb's threads, which check
  // the flag only between polls of up to 2 s: connections wake them.
  std::atomic<bool> stopped{false};
  std::thread stopper;
  try {
    stopper = std::thread([this, &stopped] {
      mg_stop(context_);
      stopped = true;
    });
  } catch (const std::system_error&) {
    mg_stop(context_);  // No thread to spare: slower, but stops all the same.
    context_ = nullptr;
    return;
  }
  while (!stopped) {
    PokeAcceptLoop();
    std::this_thread::sleep_for(kPokeInterval);
  }
  stopper.join();
  context_ = nullptr;
}

void HttpServer::PokeAcceptLoop() const {
  if (poke_address_length_ == 0) return;
  const int fd = socket(poke_address_.ss_family,
                        SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // Non-blocking: the SYN is all it takes; refused once civetweb closed
  // its listening socket.
  (void)connect(fd, reinterpret_cast<const sockaddr*>(&poke_address_),
                poke_address_length_);
  close(fd);
}

void HttpServer::Handle(const std::string& path, Handler handler) {
  std::unique_lock<std::shared_mutex> lock(handlers_mu_);
  handlers_[path] = std::move(handler);
}

int HttpServer::OnBeginRequest(mg_connection* conn) {
  auto* server =
      static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
  // Nothing may unwind through civetweb's C frames.
  try {
    const HttpRequest request = ToRequest(*mg_get_request_info(conn));
    HttpResponse response = server->Dispatch(request);
    MaybeCompress(request, &response);
    return Send(conn, request, response);
  } catch (const std::exception& e) {
    spdlog::error("http: {}", e.what());
    return SendInternalError(conn);
  } catch (...) {
    spdlog::error("http: unknown exception");
    return SendInternalError(conn);
  }
}

int HttpServer::OnLogMessage(const mg_connection* conn, const char* message) {
  auto* server =
      static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
  if (server != nullptr && message != nullptr) {
    server->RecordLogMessage(message);
  }
  return 1;  // Handled: civetweb prints nothing itself.
}

void HttpServer::RecordLogMessage(const char* message) {
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    if (!started_) {
      if (!startup_log_.empty()) startup_log_ += "; ";
      startup_log_ += message;
      return;
    }
  }
  spdlog::warn("http: {}", message);
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) const {
  Handler handler;
  {
    std::shared_lock<std::shared_mutex> lock(handlers_mu_);
    const auto it = handlers_.find(request.path);
    if (it == handlers_.end()) return HttpResponse::Text(404, "not found\n");
    if (request.method != "GET" && request.method != "HEAD") {
      HttpResponse r = HttpResponse::Text(405, "method not allowed\n");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    // A copy, so that Handle() may replace it while it runs.
    handler = it->second;
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

int HttpServer::Send(mg_connection* conn, const HttpRequest& request,
                     const HttpResponse& response) {
  mg_response_header_start(conn, response.status);
  mg_response_header_add(conn, "Content-Type", response.content_type.c_str(),
                         -1);
  const std::string length = std::to_string(response.body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  for (const auto& [name, value] : response.headers) {
    mg_response_header_add(conn, name.c_str(), value.c_str(), -1);
  }
  mg_response_header_send(conn);
  // HEAD: the same headers, Content-Length included, but no body.
  if (request.method != "HEAD" && !response.body.empty()) {
    mg_write(conn, response.body.data(), response.body.size());
  }
  return response.status;
}

}  // namespace rankwatch::http
