#include "daemon/http/http_message.h"

#include "base/strings.h"

namespace rankwatch::http {

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

}  // namespace rankwatch::http
