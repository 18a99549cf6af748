// The bytes of HttpServer's responses: status line, the headers every
// response carries (Date, Content-Type, Content-Length,
// X-Content-Type-Options: nosniff, Connection: close), the handler's
// headers (one with a line break is dropped: it would split the response)
// and the body.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_DAEMON_HTTP_RESPONSE_FORMAT_H_
#define RANKWATCH_DAEMON_HTTP_RESPONSE_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/http/http_message.h"

namespace rankwatch::http {

// The reason phrase of `status` ("" for one not listed: optional, RFC 9112
// section 4).
std::string_view ReasonPhrase(int status);

// An IMF-fixdate (RFC 9110 section 5.6.7) of `unix_ms`.
std::string HttpDate(int64_t unix_ms);

// The bytes of `response`, dated `unix_ms`; no body for HEAD.
std::string FormatResponse(const HttpResponse& response, bool head_only,
                           int64_t unix_ms);

// A plain-text `status` answer with `reason` as its body; a 503 says
// Retry-After: 1.
std::string FormatError(int status, std::string_view reason, int64_t unix_ms);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_RESPONSE_FORMAT_H_
