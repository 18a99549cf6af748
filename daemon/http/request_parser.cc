#include "daemon/http/request_parser.h"

#include <string>

#include "base/strings.h"

namespace rankwatch::http {

namespace {

// RFC 9110 section 5.6.2: tchar.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9')) {
    return true;
  }
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// RFC 9110 section 5.5: field-vchar, SP and HTAB (obs-text allowed).
bool IsFieldValueChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

Status Bad(std::string_view why) {
  return Status::InvalidArgument("bad request: " + std::string(why));
}

Status Bad(std::string_view why, std::string_view input) {
  return Bad(std::string(why) + " '" + Printable(input) + "'");
}

// Splits off the next CRLF-terminated line of `*rest`.
StatusOr<std::string_view> NextLine(std::string_view* rest) {
  const size_t lf = rest->find('\n');
  if (lf == std::string_view::npos) return Bad("incomplete request head");
  if (lf == 0 || (*rest)[lf - 1] != '\r') {
    return Bad("line not ended by CRLF");
  }
  const std::string_view line = rest->substr(0, lf - 1);
  if (line.find('\r') != std::string_view::npos) return Bad("stray CR");
  rest->remove_prefix(lf + 1);
  return line;
}

// The path of an origin-form or absolute-form target, without query or
// fragment. No path rankwatch serves needs percent-encoding, and decoding
// it would let "/-%2Freload" reach the handler of "/-/reload" past a front
// proxy's rules on the raw path: a '%' in the path is refused instead.
StatusOr<std::string> ParsePath(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() &&
        EqualsIgnoreCase(target.substr(0, scheme.size()), scheme)) {
      const std::string_view rest = target.substr(scheme.size());
      const size_t slash = rest.find_first_of("/?#");
      if (slash == std::string_view::npos) return std::string("/");
      target = rest.substr(slash);
      if (target.front() != '/') return std::string("/");
    }
  }
  if (target.empty() || target.front() != '/') {
    return Bad("request target must start with '/'", target);
  }
  target = target.substr(0, target.find_first_of("?#"));
  if (target.find('%') != std::string_view::npos) {
    return Bad("percent-encoded path (no path served needs one)", target);
  }
  return std::string(target);
}

// "HTTP/1.0" or "HTTP/1.1": the minor version, or an error.
StatusOr<int> ParseVersion(std::string_view version) {
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" ||
      version[6] != '.' || version[5] < '0' || version[5] > '9' ||
      version[7] < '0' || version[7] > '9') {
    return Bad("bad HTTP version", version);
  }
  if (version[5] != '1') return Bad("unsupported HTTP version", version);
  return version[7] - '0';
}

Status ParseRequestLine(std::string_view line, HttpRequest* request,
                        int* minor_version) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 =
      sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Bad("request line is not 'METHOD target HTTP/1.x'", line);
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!IsToken(method) || method.size() > kMaxMethodBytes) {
    return Bad("bad method", method);
  }
  for (char c : target) {
    if (c <= ' ' || c == 0x7f) return Bad("bad character in request target");
  }
  StatusOr<int> minor = ParseVersion(line.substr(sp2 + 1));
  if (!minor.ok()) return minor.status();
  StatusOr<std::string> path = ParsePath(target);
  if (!path.ok()) return path.status();
  request->method = std::string(method);
  request->path = std::move(path).value();
  *minor_version = *minor;
  return Status::Ok();
}

Status ParseHeaderLine(std::string_view line, HttpRequest* request) {
  if (line.front() == ' ' || line.front() == '\t') {
    return Bad("obsolete line folding");
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Bad("header without ':'", line);
  const std::string_view name = line.substr(0, colon);
  if (!IsToken(name)) return Bad("bad header name", name);
  const std::string_view value = TrimBlanks(line.substr(colon + 1));
  for (char c : value) {
    if (!IsFieldValueChar(c)) {
      return Bad("control character in header", name);
    }
  }
  if (request->headers.size() == kMaxRequestHeaders) {
    return Status::ResourceExhausted("bad request: more than " +
                                     std::to_string(kMaxRequestHeaders) +
                                     " header fields");
  }
  request->headers.emplace_back(std::string(name), std::string(value));
  return Status::Ok();
}

bool IsContentLength(std::string_view value) {
  if (value.empty() || value.size() > kMaxContentLengthDigits) return false;
  for (char c : value) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The checks across fields (RFC 9112 sections 3.2 and 6).
Status CheckFields(const HttpRequest& request, int minor_version) {
  int hosts = 0;
  std::optional<std::string_view> length;
  for (const auto& [name, value] : request.headers) {
    if (EqualsIgnoreCase(name, "Host")) ++hosts;
    if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Bad("request bodies with a transfer coding are not supported");
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      if (!IsContentLength(value)) return Bad("bad Content-Length", value);
      if (length.has_value() && *length != value) {
        return Bad("conflicting Content-Length headers");
      }
      length = value;
    }
  }
  if (hosts > 1) return Bad("more than one Host header");
  if (hosts == 0 && minor_version >= 1) return Bad("HTTP/1.1 without Host");
  return Status::Ok();
}

}  // namespace

size_t FindHeadEnd(std::string_view data) {
  for (size_t lf = data.find('\n'); lf != std::string_view::npos;
       lf = data.find('\n', lf + 1)) {
    if (lf + 1 < data.size() && data[lf + 1] == '\n') return lf + 2;
    if (lf + 2 < data.size() && data[lf + 1] == '\r' && data[lf + 2] == '\n') {
      return lf + 3;
    }
  }
  return 0;
}

StatusOr<HttpRequest> ParseRequestHead(std::string_view head) {
  HttpRequest request;
  std::string_view rest = head;
  StatusOr<std::string_view> line = NextLine(&rest);
  if (!line.ok()) return line.status();
  if (line->empty()) return Bad("empty request line");
  int minor_version = 0;
  RW_RETURN_IF_ERROR(ParseRequestLine(*line, &request, &minor_version));
  while (true) {
    line = NextLine(&rest);
    if (!line.ok()) return line.status();
    if (line->empty()) break;
    RW_RETURN_IF_ERROR(ParseHeaderLine(*line, &request));
  }
  if (!rest.empty()) return Bad("data after the request head");
  RW_RETURN_IF_ERROR(CheckFields(request, minor_version));
  return request;
}

uint64_t ContentLength(const HttpRequest& request) {
  const std::optional<std::string_view> value =
      request.Header("Content-Length");
  uint64_t length = 0;
  if (!value.has_value()) return 0;
  for (char c : *value) length = length * 10 + static_cast<uint64_t>(c - '0');
  return length;
}

}  // namespace rankwatch::http
