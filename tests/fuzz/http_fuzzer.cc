// libFuzzer target: the HTTP parsing rankwatch owns (daemon/http): the
// request head parser of the server (request_parser.h: FindHeadEnd,
// ParseRequestHead) and the Accept-Encoding negotiation (gzip.h
// AcceptsGzip) with the gzip body it leads to.
//
// Properties beyond "no crash":
//  - FindHeadEnd measures a prefix that ends with the empty line;
//  - a parsed head holds what the parser promises: a method of 1 to
//    kMaxMethodBytes bytes, at most kMaxRequestHeaders fields, field names
//    that are non-empty tokens, values without control characters but
//    HTAB; a path that starts with '/' and holds no '%' (percent-encoded
//    paths are refused) and no control character;
//    a rejection is one line (control characters escaped);
//  - AcceptsGzip ignores ASCII case (coding names and "q" are
//    case-insensitive, RFC 9110 section 12.5.3) and blanks after commas
//    (optional whitespace);
//  - GzipCompress output inflates back to its input (zlib, independently).
//
// Input: the bytes a client sent; they are also tried as an
// Accept-Encoding value and as a body.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/http/gunzip_test_util.h"
#include "daemon/http/gzip.h"
#include "daemon/http/request_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool HasControl(std::string_view s, bool allow_tab) {
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\t' && allow_tab) continue;
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `s` with a space after every ',' (an optional-whitespace variant).
std::string Spaced(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == ',') out += ' ';
  }
  return out;
}

void CheckHead(std::string_view data) {
  using namespace rankwatch::http;
  const size_t n = FindHeadEnd(data);
  FUZZ_CHECK(n <= data.size());
  if (n == 0) return;
  const std::string_view head = data.substr(0, n);
  FUZZ_CHECK(head.ends_with("\n\n") || head.ends_with("\n\r\n"));
  rankwatch::StatusOr<HttpRequest> request = ParseRequestHead(head);
  if (!request.ok()) {
    FUZZ_CHECK(!HasControl(request.status().message(), false));
    return;
  }
  FUZZ_CHECK(!request->method.empty());
  FUZZ_CHECK(request->method.size() <= kMaxMethodBytes);
  FUZZ_CHECK(request->headers.size() <= kMaxRequestHeaders);
  FUZZ_CHECK(!request->path.empty() && request->path.front() == '/');
  FUZZ_CHECK(request->path.find('%') == std::string::npos);
  FUZZ_CHECK(!HasControl(request->path, false));
  for (const auto& [name, value] : request->headers) {
    FUZZ_CHECK(!name.empty());
    FUZZ_CHECK(!HasControl(name, false));
    FUZZ_CHECK(name.find_first_of(": ") == std::string::npos);
    FUZZ_CHECK(!HasControl(value, true));
  }
  // The same head parses the same way again (no hidden state).
  rankwatch::StatusOr<HttpRequest> again = ParseRequestHead(head);
  FUZZ_CHECK(again.ok() && again->method == request->method &&
             again->path == request->path &&
             again->headers == request->headers);
  if (std::optional<std::string_view> ae = request->Header("accept-encoding")) {
    FUZZ_CHECK(AcceptsGzip(*ae) == AcceptsGzip(Lower(*ae)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rankwatch::http;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckHead(bytes);
  const bool accepts = AcceptsGzip(bytes);
  FUZZ_CHECK(AcceptsGzip(Lower(bytes)) == accepts);
  FUZZ_CHECK(AcceptsGzip(Spaced(bytes)) == accepts);
  rankwatch::StatusOr<std::string> gz = GzipCompress(bytes);
  FUZZ_CHECK(gz.ok());
  const std::optional<std::string> back = GunzipForTest(*gz);
  FUZZ_CHECK(back.has_value() && *back == bytes);
  return 0;
}
