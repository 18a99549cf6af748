// HostPolicy: which Host header values HttpServer answers, against DNS
// rebinding. A web page the operator visits can make its browser resolve
// the attacker's name to 127.0.0.1 and then read a daemon bound to
// loopback as if it were the attacker's own site; the only trace of the
// attack on the wire is that name in the Host header. So a request whose
// Host is a name the policy does not know is refused (403).
//
// Always allowed: no Host (HTTP/1.0 tools; a browser always sends one) and
// an IP literal ("127.0.0.1:9464", "[::1]", "10.1.2.3": rebinding needs a
// name, and kubelet probes and Prometheus' pod discovery use addresses).
// Names: those of `allowed` (http.allowed_hosts, compared without port,
// ASCII case and a trailing dot; "*" allows any). With an empty list the
// default depends on the listen address: bound to loopback, "localhost"
// and the listen host; bound to any other address or a wildcard, any name
// (the names clients use are not known: set http.allowed_hosts to them).
//
// A plain value: immutable after Create(); thread-safe to read.
#ifndef RANKWATCH_DAEMON_HTTP_HOST_POLICY_H_
#define RANKWATCH_DAEMON_HTTP_HOST_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::http {

class HostPolicy {
 public:
  // `listen_host`: the host part of the listen address (an IPv6 address
  // with or without brackets, an IPv4 address or a name).
  static HostPolicy Create(std::string_view listen_host,
                           const std::vector<std::string>& allowed);

  // Whether a request with this Host header value (nullopt: none) is
  // answered.
  bool Allows(std::optional<std::string_view> host) const;

  // Whether any name is allowed.
  bool any() const { return any_; }

 private:
  bool any_ = false;
  std::vector<std::string> names_;  // Normalized: lower case, no dot at end.
};

// The host of a Host header value without its port, lower case, without a
// trailing dot; an IPv6 literal without its brackets.
std::string HostWithoutPort(std::string_view host);

// Whether `host` (without port or brackets) is an IPv4 or IPv6 literal.
bool IsIpLiteral(std::string_view host);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HOST_POLICY_H_
