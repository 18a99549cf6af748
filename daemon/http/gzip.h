// Gzip content coding for HTTP responses: whether a request's
// Accept-Encoding allows gzip, and compression of a body into one gzip
// member (RFC 1952) with zlib.
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_DAEMON_HTTP_GZIP_H_
#define RANKWATCH_DAEMON_HTTP_GZIP_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch::http {

// Whether an Accept-Encoding header value allows the gzip coding (RFC 9110
// section 12.5.3): "gzip" or "x-gzip" with a q-value above 0, or "*" with
// one when gzip is not listed. Coding names are case-insensitive.
bool AcceptsGzip(std::string_view accept_encoding);

// Compresses `data` at zlib's fastest level: metrics text compresses about
// tenfold even so, and a scrape should cost the daemon little CPU (the
// Prometheus Go client makes the same choice).
[[nodiscard]] StatusOr<std::string> GzipCompress(std::string_view data);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_GZIP_H_
