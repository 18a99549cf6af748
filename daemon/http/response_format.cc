#include "daemon/http/response_format.h"

#include <spdlog/spdlog.h>

#include <ctime>

#include "base/strings.h"

namespace rankwatch::http {

namespace {

bool HasLineBreak(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";  // Optional (RFC 9112 section 4).
  }
}

std::string HttpDate(int64_t unix_ms) {
  const std::time_t now = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[40];
  const size_t n =
      std::strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(text, n);
}

std::string FormatResponse(const HttpResponse& response, bool head_only,
                           int64_t unix_ms) {
  std::string out;
  // One allocation for a large body (a 2 MB /metrics), not a doubling
  // series of them: headers take a few hundred bytes.
  out.reserve(512 + (head_only ? 0 : response.body.size()));
  out += "HTTP/1.1 " + std::to_string(response.status) + " ";
  out += ReasonPhrase(response.status);
  out += "\r\nDate: " + HttpDate(unix_ms);
  out += "\r\nContent-Type: " + response.content_type;
  out += "\r\nContent-Length: " + std::to_string(response.body.size());
  // No response is to be read as another type than it says (an error
  // echoing input must not become a script or a page).
  out += "\r\nX-Content-Type-Options: nosniff";
  out += "\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) {
    // A handler's header must not split the response.
    if (HasLineBreak(name) || HasLineBreak(value)) {
      spdlog::error("http: dropped a response header with a line break: {}",
                    Printable(name));
      continue;
    }
    out += name + ": " + value + "\r\n";
  }
  out += "\r\n";
  if (!head_only) out += response.body;
  return out;
}

std::string FormatError(int status, std::string_view reason, int64_t unix_ms) {
  HttpResponse response =
      HttpResponse::Text(status, std::string(reason) + "\n");
  if (status == 503) response.headers.emplace_back("Retry-After", "1");
  return FormatResponse(response, false, unix_ms);
}

}  // namespace rankwatch::http
