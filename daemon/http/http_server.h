// HttpServer: the daemon's small HTTP/1.1 server for its operational
// endpoints (/metrics, /healthz, /readyz), on Linux epoll. It listens on
// one address, dispatches on the exact request path to registered handlers,
// serves only each path's methods (GET and HEAD unless registered
// otherwise; 405 for others, 404 for unknown paths), and
// gzip-compresses bodies of 256 bytes or more when the request's
// Accept-Encoding allows it. No files, no keep-alive: one request per
// connection keeps Stop() prompt and a scraper cannot hold a worker.
// Optionally HTTPS (TLS 1.2+, tls.h) and basic authentication of every
// path but /healthz and /readyz (basic_auth.h), see HttpSecurity.
//
// Built to stay up under hostile or broken clients (issue 15: with civetweb,
// 8 connections trickling header bytes or 10,000 idle ones silenced
// /metrics). One I/O thread accepts, reads and writes every connection
// without blocking; only complete requests reach the `threads` workers, so
// a slow client never holds a worker. Connections are capped in total and
// per client address (HttpLimits); at a cap the server sheds the oldest
// idle connection, then the oldest slow one (ConnectionTable), so that a
// new scrape always gets in. Deadlines count from the first byte of the
// request, so trickling cannot extend them, and a connection that sends
// nothing is dropped after an idle timeout. Responses are written by the
// I/O thread, not the workers: a client that does not read its response
// costs a buffer until the write deadline, never a worker. With TLS the
// I/O thread also runs each handshake, non-blocking: a connection is idle
// until its first handshake byte, then reading, and the handshake counts
// against the header deadline, so a slow handshake is shed and timed out
// like a slow request head.
//
// Ownership: Start() returns the server; destroying it stops it. Handlers
// are owned by the server and destroyed with it.
//
// Thread-safety: handlers run on the worker threads, several at once, so a
// handler synchronizes its own access to shared state (the metrics handler
// locks the daemon's mutex). Handle() may be called at any time, also while
// serving. Stop() and the destructor wait until in-flight handlers return;
// never call them from a handler.
#ifndef RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
#define RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_

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
#include <thread>
#include <vector>

#include "base/status.h"
#include "daemon/http/basic_auth.h"
#include "daemon/http/http_message.h"

namespace rankwatch::http {

class TlsContext;

// The server's bounds. The defaults are what the daemon runs with
// (documented in docs/operations.md, "HTTP endpoint under load"); tests
// shrink them.
struct HttpLimits {
  // Open connections in all; lowered at Start() to fit the open-file limit
  // (less 256 descriptors for the rest of the daemon).
  size_t max_connections = 4096;
  // Open connections from one client IP address. A scraper needs one or
  // two; kubelet probes a few.
  size_t max_connections_per_client = 64;
  // A connection that sends no byte in this long is closed.
  std::chrono::milliseconds idle_timeout{5000};
  // The request head must be complete this long after its first byte...
  std::chrono::milliseconds header_timeout{5000};
  // ... and the body (discarded: no endpoint takes one) this long after it.
  std::chrono::milliseconds request_timeout{10000};
  // The response must be taken by the client this long after it is ready.
  std::chrono::milliseconds write_timeout{10000};
  // A longer request head is 431 (400 if its request line is unfinished).
  // Prometheus sends about 300 bytes.
  size_t max_head_bytes = 8192;
  // A longer request body is 413.
  size_t max_body_bytes = 65536;
};

// HTTPS and basic authentication; each off when its fields are empty.
// Passwords are never logged.
struct HttpSecurity {
  std::string tls_cert_file;        // PEM certificate chain; TLS when set.
  std::string tls_key_file;         // PEM private key, unencrypted.
  std::string basic_auth_username;  // Basic authentication when set.
  std::string basic_auth_password;
};

// Counts since Start().
struct HttpStats {
  // TLS handshakes that failed (protocol errors, plain HTTP to the HTTPS
  // port, no shared version or cipher); not clients that just hung up.
  uint64_t tls_handshake_errors = 0;
  // Requests answered 401: missing or wrong credentials.
  uint64_t unauthorized_requests = 0;
};

class HttpServer {
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
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, int threads, const HttpLimits& limits,
      const HttpSecurity& security);

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

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

  // Stops listening, closes every connection and waits for in-flight
  // handlers to return; their responses get one non-blocking write. Takes
  // milliseconds beyond the handlers. Idempotent.
  void Stop();

 private:
  class IoLoop;
  class WorkerPool;

  HttpServer();

  // The complete response bytes for `request`: dispatched, compressed when
  // allowed, formatted. Runs on a worker thread.
  std::string Respond(const HttpRequest& request) const;
  // The handler's response, or 404 / 405 / 500.
  HttpResponse Dispatch(const HttpRequest& request) const;
  // Compresses the body when the request allows gzip and it pays off.
  static void MaybeCompress(const HttpRequest& request, HttpResponse* response);

  int port_ = 0;
  bool tls_ = false;
  std::optional<BasicAuth> auth_;
  mutable std::atomic<uint64_t> unauthorized_{0};
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

// Whether `listen` (host:port, as http.listen) resolves to an address to
// bind, without binding: what `check-config` checks. The error names the
// host and getaddrinfo's reason.
[[nodiscard]] Status CheckListenAddress(const std::string& listen);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
