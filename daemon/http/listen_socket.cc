#include "daemon/http/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/strings.h"

namespace rankwatch::http {

std::string ListenHost(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon == std::string::npos ? 0 : colon);
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

namespace {

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
         c == '_';
}

// The addresses to bind for `listen` (host:port, validated; [IPv6]:port):
// getaddrinfo's return code, `*host` the host part.
int ResolveListen(const std::string& listen, std::string* host,
                  addrinfo** found) {
  const size_t colon = listen.rfind(':');
  *host = ListenHost(listen);
  const std::string port =
      colon == std::string::npos ? std::string() : listen.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  return getaddrinfo(host->c_str(), port.c_str(), &hints, found);
}

}  // namespace

// Checks "host:port": one port, a host of name characters or a bracketed
// IPv6 address.
Status ValidateListen(std::string_view listen) {
  const auto error = [&](std::string_view why) {
    return Status::InvalidArgument("bad HTTP listen address '" +
                                   Printable(listen) +
                                   "': " + std::string(why));
  };
  const size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return error("expected host:port");
  const std::string_view host = listen.substr(0, colon);
  const std::string_view port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5) return error("bad port");
  int port_value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return error("bad port");
    port_value = port_value * 10 + (c - '0');
  }
  if (port_value > 65535) return error("port over 65535");
  if (host.empty()) return error("empty host");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return error("bad IPv6 host");
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
          c != '.') {
        return error("bad IPv6 host");
      }
    }
    return Status::Ok();
  }
  for (char c : host) {
    if (!IsHostChar(c)) {
      return error("bad host (IPv6 addresses go in brackets: [::1]:9464)");
    }
  }
  return Status::Ok();
}

// A non-blocking listening socket on `listen` (validated).
StatusOr<int> Listen(const std::string& listen) {
  const auto unavailable = [&](const std::string& why) {
    return Status::Unavailable("cannot serve HTTP on " + listen + ": " + why);
  };
  std::string host;
  addrinfo* found = nullptr;
  const int rc = ResolveListen(listen, &host, &found);
  if (rc != 0) return unavailable(gai_strerror(rc));
  // IPv4 first: "localhost" then means 127.0.0.1, which clients try first.
  std::vector<const addrinfo*> candidates;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) candidates.push_back(a);
  }
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET6) candidates.push_back(a);
  }
  std::string why = "no address";
  int fd = -1;
  for (const addrinfo* a : candidates) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    // Rebinding while old connections sit in TIME_WAIT (a restart).
    const int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::listen(fd, SOMAXCONN) == 0) {
      break;
    }
    why = std::string("cannot bind: ") + std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) return unavailable(why);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
}

// Raises the soft open-file limit to the hard one; returns the soft limit.
uint64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      spdlog::info("http: raised the open-file limit from {} to {}", before,
                   limit.rlim_cur);
    } else {
      spdlog::warn("http: cannot raise the open-file limit from {}: {}", before,
                   std::strerror(errno));
      limit.rlim_cur = before;
    }
  }
  return limit.rlim_cur;
}

Status CheckListenAddress(const std::string& listen) {
  std::string host;
  addrinfo* found = nullptr;
  const int rc = ResolveListen(listen, &host, &found);
  if (rc != 0) {
    return Status::InvalidArgument("cannot resolve '" +
                                   Printable(host, std::string_view::npos) +
                                   "': " + gai_strerror(rc));
  }
  freeaddrinfo(found);
  return Status::Ok();
}

}  // namespace rankwatch::http
