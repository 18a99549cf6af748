// A small strict parser of HTTP/1.x request heads (RFC 9112 sections 2-5),
// for HttpServer: the request line (method, request target, version) and
// the header fields, nothing else. Strict where leniency has bitten other
// servers (request smuggling, header injection): every line must end in
// CRLF, no whitespace between a field name and its colon, no obsolete line
// folding, no control characters in values, one Host in HTTP/1.1, at most
// one Content-Length value and no Transfer-Encoding (rankwatch never needs
// a request body, so chunked bodies are refused rather than parsed).
//
// A '%' in the path is refused (400): no path served needs one, and
// decoding would let an encoded path slip past a front proxy's rules on the
// raw one ("/-%2Freload"). The query string and any fragment are dropped
// (the server dispatches on the exact path). An absolute-form
// target ("http://host/path") is reduced to its path.
//
// Pure functions of their input; thread-safe. A fuzz target calls
// ParseRequestHead directly (tests/fuzz/).
#ifndef RANKWATCH_DAEMON_HTTP_REQUEST_PARSER_H_
#define RANKWATCH_DAEMON_HTTP_REQUEST_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "daemon/http/http_message.h"

namespace rankwatch::http {

// More header fields than this is ResourceExhausted (431). Prometheus sends
// 5; civetweb, which served before, allowed 64.
inline constexpr size_t kMaxRequestHeaders = 64;
// A longer method is refused; the longest registered one is 17 characters
// ("VERSION-CONTROL").
inline constexpr size_t kMaxMethodBytes = 20;
// The largest Content-Length accepted as a number (18 digits: below 2^63).
inline constexpr size_t kMaxContentLengthDigits = 18;

// The length of the request head at the start of `data`, through the empty
// line that ends it ("\r\n\r\n", or "\n\n" and "\n\r\n" so that a client
// using bare LF gets a 400 from ParseRequestHead instead of a timeout); 0
// when no empty line has arrived yet.
size_t FindHeadEnd(std::string_view data);

// Parses one request head, `head` being exactly what FindHeadEnd measured.
// A malformed head is InvalidArgument (answered 400) and too many header
// fields ResourceExhausted (431), each with a one-line reason that echoes
// input only through Printable().
[[nodiscard]] StatusOr<HttpRequest> ParseRequestHead(std::string_view head);

// The Content-Length of a request ParseRequestHead accepted (0 without
// one).
uint64_t ContentLength(const HttpRequest& request);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_REQUEST_PARSER_H_
