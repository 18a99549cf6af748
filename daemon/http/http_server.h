// HttpServer: the daemon's small HTTP/1.1 server for its operational
// endpoints (/metrics, /healthz, /readyz), on civetweb's C API. It listens on
// one address, dispatches on the exact request path to registered handlers,
// serves only GET and HEAD (405 otherwise, 404 for unknown paths), and
// gzip-compresses bodies of 256 bytes or more when the request's
// Accept-Encoding allows it. No files, no TLS, no keep-alive: one request
// per connection keeps Stop() prompt and a scraper cannot hold a worker.
//
// Ownership: Start() returns the server; destroying it stops it. Handlers
// are owned by the server and destroyed with it.
//
// Thread-safety: handlers run on civetweb's worker threads, several at once,
// so a handler synchronizes its own access to shared state (the metrics
// handler locks the daemon's mutex). Handle() may be called at any time,
// also while serving. Stop() and the destructor wait until in-flight
// handlers return; never call them from a handler.
#ifndef RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
#define RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_

#include <sys/socket.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

struct mg_connection;
struct mg_context;

namespace rankwatch::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string path;    // URL-decoded, without the query string.
  HeaderList headers;  // As received.

  // The value of the first header named `name` (ASCII case-insensitive).
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra headers. Content-Type, Content-Length, Content-Encoding, Date and
  // Connection are set by the server.
  HeaderList headers;

  // A plain-text response.
  static HttpResponse Text(int status, std::string body);
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  // Listens on `listen` ("host:port"; host an IPv4 address, a bracketed
  // IPv6 address or a name; port 0 picks any free port, see port()) with
  // `threads` worker threads. A malformed address is InvalidArgument; an
  // address that cannot be bound (busy port, foreign address) Unavailable.
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, int threads);

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  // Serves GET and HEAD of exactly `path` (e.g. "/metrics") with `handler`,
  // replacing any handler of that path.
  void Handle(const std::string& path, Handler handler);

  // The port actually bound (the one chosen when started with port 0).
  int port() const { return port_; }

  // Stops listening and waits for in-flight requests to finish (a response
  // still being written may be cut short). Usually milliseconds; up to 2 s
  // while a client holds a connection open without sending its request.
  // Idempotent.
  void Stop();

 private:
  HttpServer() = default;

  // civetweb callbacks; `conn` carries the server as context user data.
  static int OnBeginRequest(mg_connection* conn);
  static int OnLogMessage(const mg_connection* conn, const char* message);

  // The handler's response, or 404 / 405 / 500.
  HttpResponse Dispatch(const HttpRequest& request) const;
  // Compresses the body when the request allows gzip and it pays off.
  static void MaybeCompress(const HttpRequest& request, HttpResponse* response);
  // Writes the response; returns the status code for civetweb's log.
  static int Send(mg_connection* conn, const HttpRequest& request,
                  const HttpResponse& response);
  void RecordLogMessage(const char* message);
  // Connects to the server and hangs up: wakes civetweb's accept loop,
  // which otherwise sees the stop flag only between 2-second polls.
  void PokeAcceptLoop() const;

  mg_context* context_ = nullptr;
  int port_ = 0;
  // Where PokeAcceptLoop() connects; length 0 when unknown.
  sockaddr_storage poke_address_{};
  socklen_t poke_address_length_ = 0;

  mutable std::shared_mutex handlers_mu_;
  std::map<std::string, Handler, std::less<>> handlers_;

  // civetweb reports why it could not start only through its log callback:
  // messages are kept until Start() returns, then logged.
  std::mutex log_mu_;
  bool started_ = false;
  std::string startup_log_;
};

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HTTP_SERVER_H_
