// BasicAuth: HTTP basic authentication (RFC 7617) of HttpServer's paths,
// with one username and password. The probes /healthz and /readyz stay
// open, so that a kubelet or load balancer needs no credentials.
//
// Only the SHA-256 digest of "username:password" is kept, and a request's
// credentials are compared digest to digest with CRYPTO_memcmp: the time
// taken says nothing about how much of the password matched, nor its
// length. Nothing here logs a credential.
//
// A plain value: immutable after construction; thread-safe to read.
#ifndef RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_
#define RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/http/http_message.h"

namespace rankwatch::http {

class BasicAuth {
 public:
  BasicAuth(std::string_view username, std::string_view password);

  // Whether `path` is served without credentials.
  static bool Exempt(std::string_view path);

  // Whether `request` may be served: an exempt path, or an Authorization
  // header "Basic base64(username:password)" with these credentials.
  bool Allows(const HttpRequest& request) const;

  // The 401 answer, with its WWW-Authenticate challenge.
  static HttpResponse Challenge();

 private:
  std::array<unsigned char, 32> digest_;
};

// The bytes encoded by `text` in standard base64 with padding (RFC 4648
// section 4); nullopt when it is not exactly that.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_
