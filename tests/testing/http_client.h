// A tiny blocking HTTP/1.1 client for tests: one request per connection
// ("Connection: close"), Content-Length, chunked and read-to-close bodies.
// Bodies are returned as sent (a gzip body stays compressed).
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_TESTS_TESTING_HTTP_CLIENT_H_
#define RANKWATCH_TESTS_TESTING_HTTP_CLIENT_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace rankwatch::testing {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResult {
  int status = 0;
  HttpHeaders headers;  // In the order received.
  std::string body;     // De-chunked; not decompressed.

  // The first header named `name` (ASCII case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
};

// Sends `method` `path` to host:port and reads the whole response, failing
// (Unavailable, IoError, InvalidArgument for a malformed response) rather
// than waiting past `timeout` in total. Sends "Host: host:port" unless
// `headers` has a Host of its own.
StatusOr<HttpResult> HttpFetch(
    const std::string& method, const std::string& host, int port,
    const std::string& path, const HttpHeaders& headers = {},
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

// HttpFetch("GET", ...).
StatusOr<HttpResult> HttpGet(
    const std::string& host, int port, const std::string& path,
    const HttpHeaders& headers = {},
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_HTTP_CLIENT_H_
