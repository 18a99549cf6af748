#include "daemon/http/host_policy.h"

#include <arpa/inet.h>

#include <algorithm>

#include "base/strings.h"

namespace rankwatch::http {

namespace {

std::string Normalize(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

bool IsLoopback(std::string_view host) {
  const std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return Normalize(host) == "localhost";
}

}  // namespace

std::string HostWithoutPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return Normalize(host.substr(1, close == std::string_view::npos
                                        ? std::string_view::npos
                                        : close - 1));
  }
  const size_t colon = host.find(':');
  // More than one colon: an IPv6 address without brackets (no port).
  if (colon != std::string_view::npos &&
      host.find(':', colon + 1) == std::string_view::npos) {
    host = host.substr(0, colon);
  }
  return Normalize(host);
}

bool IsIpLiteral(std::string_view host) {
  const std::string h(host);
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, h.c_str(), &v4) == 1 ||
         inet_pton(AF_INET6, h.c_str(), &v6) == 1;
}

HostPolicy HostPolicy::Create(std::string_view listen_host,
                              const std::vector<std::string>& allowed) {
  HostPolicy policy;
  for (const std::string& name : allowed) {
    if (name == "*") policy.any_ = true;
    policy.names_.push_back(HostWithoutPort(name));
  }
  if (allowed.empty()) {
    const std::string host = HostWithoutPort(listen_host);
    if (IsLoopback(host)) {
      policy.names_.push_back("localhost");
      if (!IsIpLiteral(host)) policy.names_.push_back(host);
    } else {
      policy.any_ = true;
    }
  }
  return policy;
}

bool HostPolicy::Allows(std::optional<std::string_view> host) const {
  if (!host.has_value() || any_) return true;
  const std::string name = HostWithoutPort(*host);
  if (IsIpLiteral(name)) return true;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

}  // namespace rankwatch::http
