// HttpServer: the daemon's small HTTP/1.1 server for its operational
// endpoints (/metrics, /healthz, /readyz, the status page), on Linux epoll.
// It listens on one address, dispatches on the exact request path to
// registered handlers, serves only each path's methods (GET and HEAD
// unless registered otherwise; 405 for others, 404 for unknown paths), and
// gzip-compresses bodies of 256 bytes or more when the request's
// Accept-Encoding allows it. No files, no keep-alive: one request per
// connection keeps Stop() prompt and a scraper cannot hold a worker.
// Optionally HTTPS (TLS 1.2+, tls.h) and basic authentication of every
// path but /healthz and /readyz (basic_auth.h), see HttpSecurity.
//
// Built to stay up under hostile or broken clients (issues 15 and 24). One
// I/O thread accepts, reads and writes every connection without blocking;
// only complete requests reach the `threads` workers, so a slow client
// never holds a worker. Connections are capped in total and per client
// (its address; an IPv6 client's /64) (HttpLimits); at a cap the server
// sheds the oldest idle connection, then the oldest slow one
// (ConnectionTable), so that a new scrape always gets in. Deadlines count
// from the first byte of the request, so trickling cannot extend them, and
// a connection that sends nothing is dropped after an idle timeout;
// connections closed for a timeout or shed are reset (SO_LINGER 0), so
// their unsent data leaves the kernel at once.
//
// Memory does not grow with clients that never read: concurrent GET and
// HEAD requests for the same representation share one rendering and one
// buffer (single flight: a request arriving while its path renders joins
// that rendering), the bytes held for responses not yet taken are capped
// (HttpLimits::response_budget_bytes; beyond it 503 without rendering), the
// kernel's send buffer per connection is fixed, and complete requests wait
// for a worker in a bounded queue with a per-client cap (503 beyond), so
// that one client cannot push another's scrape past its timeout. With TLS
// the I/O thread also runs each handshake, non-blocking, and full
// handshakes per client are rate-limited; the certificate is re-read when
// its files change or on ReloadTls(), and swapped atomically.
//
// Every response carries X-Content-Type-Options: nosniff. A request whose
// Host names an unknown host is 403 (HostPolicy, against DNS rebinding). A
// request with a method other than GET and HEAD (POST /-/reload) is refused
// (403) when it carries Origin or a Sec-Fetch-Site other than none or
// same-origin: a web page cannot make the operator's browser send it.
//
// Ownership: Start() returns the server; destroying it stops it. Handlers
// are owned by the server and destroyed with it. The clock must outlive it.
//
// Thread-safety: handlers run on the worker threads, several at once, so a
// handler synchronizes its own access to shared state (the metrics handler
// locks the daemon's mutex). Handle() and ReloadTls() may be called at any
// time, also while serving. Stop() and the destructor wait until in-flight
// handlers return; never call them from a handler.
#ifndef RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
#define RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "daemon/http/basic_auth.h"
#include "daemon/http/host_policy.h"
#include "daemon/http/http_limits.h"
#include "daemon/http/http_message.h"
#include "daemon/http/listen_socket.h"
#include "daemon/http/tls.h"
#include "daemon/http/worker_pool.h"

namespace rankwatch::http {

// HTTPS and basic authentication; each off when its fields are empty.
// Passwords are never logged.
struct HttpSecurity {
  TlsOptions tls;  // HTTPS when tls.cert_file is set (tls.h).
  // Basic authentication when any is set (basic_auth.h).
  std::vector<BasicAuthUser> users;
  // Host header names answered (HostPolicy); empty: the default.
  std::vector<std::string> allowed_hosts;
};

// Why a request was refused with 403 (HttpStats).
enum class Forbidden {
  kHost,       // A Host the HostPolicy does not allow.
  kCrossSite,  // A POST with Origin or a cross-site Sec-Fetch-Site.
};
inline constexpr int kNumForbidden = 2;
std::string_view ForbiddenName(Forbidden reason);

// Counts since Start(), and the state of the TLS certificate.
struct HttpStats {
  // TLS handshakes that failed (protocol errors, plain HTTP to the HTTPS
  // port, no shared version or cipher); not clients that just hung up.
  uint64_t tls_handshake_errors = 0;
  // Requests answered 401: missing or wrong credentials.
  uint64_t unauthorized_requests = 0;
  std::array<uint64_t, kNumOverloads> overloads{};  // By Overload.
  std::array<uint64_t, kNumForbidden> forbidden{};  // By Forbidden.
  // Requests answered from a rendering already in flight.
  uint64_t shared_responses = 0;
  // Bytes of responses held now (what response_budget_bytes caps).
  uint64_t response_bytes_held = 0;
  // Certificate reloads that took effect / failed (the old one stays).
  uint64_t tls_reloads = 0;
  uint64_t tls_reload_errors = 0;
  // The serving certificate's notAfter, Unix seconds; 0 without TLS.
  int64_t tls_certificate_not_after = 0;
};

class IoLoop;

class HttpServer : private Responder {
 public:
  // Listens on `listen` ("host:port"; host an IPv4 address, a bracketed
  // IPv6 address or a name, which binds its first IPv4 address, else its
  // first IPv6 one; port 0 picks any free port, see port()) with `threads`
  // worker threads. A malformed address is InvalidArgument; an address that
  // cannot be bound (busy port, foreign address) Unavailable. Raises the
  // process's soft open-file limit to its hard limit (logged).
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, int threads);
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, int threads, const HttpLimits& limits);
  // The same, with HTTPS and/or basic authentication. A certificate or key
  // that cannot be used (missing, unreadable, not PEM, not matching) is
  // InvalidArgument naming the file.
  // `clock` (monotonic time for deadlines, wall time for the Date header)
  // must outlive the server.
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, int threads, const HttpLimits& limits,
      const HttpSecurity& security, const Clock* clock = SystemClock::Get());

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer() override;

  // Serves GET and HEAD of exactly `path` (e.g. "/metrics") with `handler`,
  // replacing any handler of that path.
  void Handle(const std::string& path, Handler handler);
  // The same for the request methods `methods` (e.g. {"POST"}); other
  // methods are 405 with an Allow header listing these. A request body is
  // read and discarded, never passed to the handler.
  void Handle(const std::string& path, std::vector<std::string> methods,
              Handler handler);

  // The port actually bound (the one chosen when started with port 0).
  int port() const { return port_; }
  // Whether the server speaks HTTPS.
  bool tls() const { return tls_; }

  HttpStats stats() const;

  // Re-reads the TLS certificate, key and client CA (rotated in place) and
  // serves new connections with them; on error keeps the old ones and
  // returns why. Ok without TLS. The files are also re-read when they
  // change (checked every few seconds).
  [[nodiscard]] Status ReloadTls();

  // Stops listening, closes every connection and waits for in-flight
  // handlers to return; their responses get one non-blocking write. Takes
  // milliseconds beyond the handlers. Idempotent.
  void Stop();

 private:
  HttpServer();

  // The answer to `request` before any handler runs, if any: 403 for its
  // Host or a cross-site POST, 401 without valid credentials. Runs on a
  // worker thread (bcrypt is slow).
  // Sets request->authenticated.
  std::optional<HttpResponse> Screen(HttpRequest* request) const override;
  // The complete response bytes for `request`: dispatched, compressed when
  // allowed, formatted. Runs on a worker thread.
  std::string Respond(const HttpRequest& request) const override;
  // The bytes of `response` to `request` ("Connection: close", no body for
  // HEAD, the Date from the clock).
  std::string Format(const HttpResponse& response,
                     bool head_only) const override;
  // The handler's response, or 404 / 405 / 500.
  HttpResponse Dispatch(const HttpRequest& request) const;
  // Compresses the body when the request allows gzip and it pays off.
  static void MaybeCompress(const HttpRequest& request, HttpResponse* response);

  int port_ = 0;
  bool tls_ = false;
  const Clock* clock_ = nullptr;
  HostPolicy hosts_;
  std::optional<BasicAuth> auth_;
  mutable std::atomic<uint64_t> unauthorized_{0};
  mutable std::array<std::atomic<uint64_t>, kNumForbidden> forbidden_{};
  // Bytes of responses alive (ResponseBytes); outlives the workers and the
  // I/O loop, which hold them.
  std::atomic<uint64_t> held_bytes_{0};
  mutable std::shared_mutex handlers_mu_;
  struct Route {
    std::vector<std::string> methods;
    Handler handler;
  };
  std::map<std::string, Route, std::less<>> handlers_;

  std::unique_ptr<TlsContext> tls_context_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<IoLoop> io_;
  std::thread io_thread_;
};

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
