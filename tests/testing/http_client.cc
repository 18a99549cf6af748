#include "tests/testing/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/strings.h"

namespace rankwatch::testing {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Owns a socket descriptor.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Milliseconds left until `deadline`, at least 0.
int RemainingMs(SteadyClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - SteadyClock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on `fd`; false on timeout or error.
bool WaitFor(int fd, short events, SteadyClock::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    const int n = ::poll(&p, 1, RemainingMs(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

std::string Errno(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

StatusOr<Socket> Connect(const std::string& host, int port,
                         SteadyClock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(),
                               &hints, &addresses);
  if (rc != 0) {
    return Status::Unavailable("resolve " + host + ": " + gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family,
                      a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      a->ai_protocol));
    if (s.fd() < 0) {
      error = Errno("socket");
      continue;
    }
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0 &&
        errno != EINPROGRESS) {
      error = Errno("connect");
      continue;
    }
    if (!WaitFor(s.fd(), POLLOUT, deadline)) {
      error = "connect: timed out";
      continue;
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) {
      error = std::string("connect: ") + std::strerror(so_error);
      continue;
    }
    ::freeaddrinfo(addresses);
    return s;
  }
  ::freeaddrinfo(addresses);
  return Status::Unavailable(host + ":" + std::to_string(port) + ": " + error);
}

Status SendAll(int fd, std::string_view data,
               SteadyClock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFor(fd, POLLOUT, deadline)) {
        return Status::Unavailable("send: timed out");
      }
    } else {
      return Status::IoError(Errno("send"));
    }
  }
  return Status::Ok();
}

// Appends what the peer sent next to *buffer; false at end of stream.
StatusOr<bool> ReadSome(int fd, std::string* buffer,
                        SteadyClock::time_point deadline) {
  char chunk[65536];
  while (true) {
    if (!WaitFor(fd, POLLIN, deadline)) {
      return Status::Unavailable("read: timed out");
    }
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer->append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) return false;
    if (errno == EAGAIN || errno == EINTR) continue;
    if (errno == ECONNRESET) return false;
    return Status::IoError(Errno("recv"));
  }
}

// How the end of the body is known.
enum class Framing { kNone, kLength, kChunked, kClose };

struct Head {
  int status = 0;
  HttpHeaders headers;
  size_t body_start = 0;
  Framing framing = Framing::kClose;
  size_t content_length = 0;
};

// Parses the status line and headers once they are complete in `data`;
// nullopt while incomplete.
StatusOr<std::optional<Head>> ParseHead(std::string_view data,
                                        bool head_request) {
  const size_t end = data.find("\r\n\r\n");
  if (end == std::string_view::npos) return std::optional<Head>();
  Head head;
  head.body_start = end + 4;
  std::string_view lines = data.substr(0, end + 2);
  const size_t first_end = lines.find("\r\n");
  const std::string_view status_line = lines.substr(0, first_end);
  lines.remove_prefix(first_end + 2);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 ||
      status_line[8] != ' ') {
    return Status::InvalidArgument("bad status line: " +
                                   std::string(status_line));
  }
  for (size_t i = 9; i < 12; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(status_line[i]))) {
      return Status::InvalidArgument("bad status code");
    }
    head.status = head.status * 10 + (status_line[i] - '0');
  }
  while (!lines.empty()) {
    const size_t eol = lines.find("\r\n");
    const std::string_view line = lines.substr(0, eol);
    lines.remove_prefix(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return Status::InvalidArgument("bad header line: " + std::string(line));
    }
    head.headers.emplace_back(std::string(TrimBlanks(line.substr(0, colon))),
                              std::string(TrimBlanks(line.substr(colon + 1))));
  }
  const bool no_body = head_request || head.status / 100 == 1 ||
                       head.status == 204 || head.status == 304;
  head.framing = Framing::kClose;
  for (const auto& [name, value] : head.headers) {
    if (EqualsIgnoreCase(name, "Transfer-Encoding") &&
        EqualsIgnoreCase(value, "chunked")) {
      head.framing = Framing::kChunked;
    } else if (EqualsIgnoreCase(name, "Content-Length") &&
               head.framing != Framing::kChunked) {
      head.framing = Framing::kLength;
      const auto [end, ec] = std::from_chars(
          value.data(), value.data() + value.size(), head.content_length);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return Status::InvalidArgument("bad Content-Length: " + value);
      }
    }
  }
  if (no_body) head.framing = Framing::kNone;
  return std::optional<Head>(std::move(head));
}

// Decodes a complete chunked body from `data` into *body; false while
// incomplete.
StatusOr<bool> DecodeChunked(std::string_view data, std::string* body) {
  body->clear();
  while (true) {
    const size_t eol = data.find("\r\n");
    if (eol == std::string_view::npos) return false;
    std::string_view size_text = data.substr(0, eol);
    size_text = size_text.substr(0, size_text.find(';'));  // Extensions.
    size_t size = 0;
    if (size_text.empty()) return Status::InvalidArgument("bad chunk size");
    for (char c : TrimBlanks(size_text)) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) {
        return Status::InvalidArgument("bad chunk size");
      }
      size = size * 16 +
             static_cast<size_t>(std::isdigit(static_cast<unsigned char>(c))
                                     ? c - '0'
                                     : std::tolower(c) - 'a' + 10);
    }
    data.remove_prefix(eol + 2);
    if (size == 0) {
      // Trailers, then an empty line.
      while (true) {
        const size_t end = data.find("\r\n");
        if (end == std::string_view::npos) return false;
        data.remove_prefix(end + 2);
        if (end == 0) return true;
      }
    }
    if (data.size() < size + 2) return false;
    body->append(data.substr(0, size));
    data.remove_prefix(size + 2);
  }
}

// Whether `data` holds the whole response; fills *result when it does.
StatusOr<bool> Complete(std::string_view data, const Head& head, bool at_eof,
                        HttpResult* result) {
  const std::string_view body = data.substr(head.body_start);
  switch (head.framing) {
    case Framing::kNone:
      result->body.clear();
      return true;
    case Framing::kLength:
      if (body.size() < head.content_length) return false;
      result->body = std::string(body.substr(0, head.content_length));
      return true;
    case Framing::kChunked:
      return DecodeChunked(body, &result->body);
    case Framing::kClose:
      if (!at_eof) return false;
      result->body = std::string(body);
      return true;
  }
  return false;
}

std::string RequestText(const std::string& method, const std::string& host,
                        int port, const std::string& path,
                        const HttpHeaders& headers) {
  std::string text = method + " " + path + " HTTP/1.1\r\n";
  // A Host among `headers` replaces the default (a test of Host checks).
  const bool own_host = std::any_of(
      headers.begin(), headers.end(),
      [](const auto& h) { return EqualsIgnoreCase(h.first, "Host"); });
  if (!own_host) text += "Host: " + host + ":" + std::to_string(port) + "\r\n";
  text += "Connection: close\r\n";
  for (const auto& [name, value] : headers) {
    text += name + ": " + value + "\r\n";
  }
  return text + "\r\n";
}

}  // namespace

std::optional<std::string> HttpResult::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

StatusOr<HttpResult> HttpFetch(const std::string& method,
                               const std::string& host, int port,
                               const std::string& path,
                               const HttpHeaders& headers,
                               std::chrono::milliseconds timeout) {
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  StatusOr<Socket> socket = Connect(host, port, deadline);
  if (!socket.ok()) return socket.status();
  RW_RETURN_IF_ERROR(SendAll(
      socket->fd(), RequestText(method, host, port, path, headers), deadline));
  std::string data;
  std::optional<Head> head;
  bool at_eof = false;
  while (true) {
    if (!head.has_value()) {
      StatusOr<std::optional<Head>> parsed = ParseHead(data, method == "HEAD");
      if (!parsed.ok()) return parsed.status();
      head = std::move(parsed).value();
    }
    if (head.has_value()) {
      HttpResult result;
      StatusOr<bool> complete = Complete(data, *head, at_eof, &result);
      if (!complete.ok()) return complete.status();
      if (*complete) {
        result.status = head->status;
        result.headers = head->headers;
        return result;
      }
    }
    if (at_eof) {
      return Status::IoError(
          "connection closed before the end of the "
          "response (" +
          std::to_string(data.size()) + " bytes read)");
    }
    StatusOr<bool> more = ReadSome(socket->fd(), &data, deadline);
    if (!more.ok()) return more.status();
    at_eof = !*more;
  }
}

StatusOr<HttpResult> HttpGet(const std::string& host, int port,
                             const std::string& path,
                             const HttpHeaders& headers,
                             std::chrono::milliseconds timeout) {
  return HttpFetch("GET", host, port, path, headers, timeout);
}

}  // namespace rankwatch::testing
