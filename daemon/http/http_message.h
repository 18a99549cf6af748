// The request and response types of rankwatch's HTTP server (HttpServer in
// http_server.h) and of its request parser (request_parser.h): what a
// handler sees and returns.
//
// Plain values; a const object is safe to read from several threads.
#ifndef RANKWATCH_DAEMON_HTTP_HTTP_MESSAGE_H_
#define RANKWATCH_DAEMON_HTTP_HTTP_MESSAGE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rankwatch::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string path;    // Without the query string (never percent-encoded).
  HeaderList headers;  // As received.
  // The client's address without its port ("127.0.0.1", "::1"), as the
  // server accepted it: for logs and per-client limits, never trusted as
  // identity (a proxy hides the real client).
  std::string client;
  // Whether the client is known: no authentication is configured, or it
  // sent valid credentials (set by the server before the handler runs; a
  // probe path is served either way, with less detail to strangers).
  bool authenticated = false;

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

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HTTP_MESSAGE_H_
