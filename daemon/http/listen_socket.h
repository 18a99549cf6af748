// The listening socket of HttpServer: checking, resolving and binding
// "host:port" (http.listen), the port bound, and the open-file limit that
// bounds the connections.
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_DAEMON_HTTP_LISTEN_SOCKET_H_
#define RANKWATCH_DAEMON_HTTP_LISTEN_SOCKET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch::http {

// Checks "host:port": one port up to 65535, a host of name characters or a
// bracketed IPv6 address. InvalidArgument naming the address.
[[nodiscard]] Status ValidateListen(std::string_view listen);

// A non-blocking listening socket on `listen` (validated), IPv4 first for
// a name; Unavailable when it cannot be bound (busy port, foreign address).
[[nodiscard]] StatusOr<int> Listen(const std::string& listen);

// The port `fd` is bound to (0 if unknown).
int BoundPort(int fd);

// The host part of `listen`, without brackets ("127.0.0.1", "::1",
// "localhost").
std::string ListenHost(const std::string& listen);

// Raises the process's soft open-file limit to its hard one (logged);
// returns the soft limit then in force.
uint64_t RaiseFileLimit();

// Whether `listen` (host:port, as http.listen) resolves to an address to
// bind, without binding: what `check-config` checks. The error names the
// host and getaddrinfo's reason.
[[nodiscard]] Status CheckListenAddress(const std::string& listen);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_LISTEN_SOCKET_H_
