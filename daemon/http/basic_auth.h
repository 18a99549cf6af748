// BasicAuth: HTTP basic authentication (RFC 7617) of HttpServer's paths,
// for one or more users, as the Prometheus exporter-toolkit's web config
// (`basic_auth_users: {name: bcrypt-hash}`). The probes /healthz and
// /readyz stay open, so that a kubelet or load balancer needs no
// credentials.
//
// A user's secret is either a bcrypt hash ("$2a$", "$2b$" or "$2y$",
// verified with libxcrypt's crypt_rn) or a plaintext password, of which only
// the SHA-256 digest of "name:password" is kept. Both are compared in
// constant time (CRYPTO_memcmp): the time taken says nothing about how much
// of a password or hash matched.
//
// bcrypt is slow on purpose (cost 10 takes 50-100 ms) and a scraper sends
// the same credentials every 15 s, so successful bcrypt verifications are
// remembered (a bounded cache of SHA-256 digests of "name:password");
// failures never are, so that every wrong password costs the full bcrypt
// time. A name that is not configured is checked against a configured hash
// all the same, so that the time taken does not tell which names exist.
//
// Failed logins (wrong password, unknown user, malformed credentials; not a
// request without an Authorization header, which is how every browser
// starts) are logged with spdlog at warn, at most kFailedLoginLogsPerSecond
// a second, with the user name and the client's address, never the
// password.
//
// Ownership: the Clock given to Create() must outlive the BasicAuth.
// Thread-safety: Check() and Allows() may be called from several threads at
// once (the cache and the log limiter are guarded by a mutex). Movable, not
// copyable; a moved-from BasicAuth may only be destroyed or assigned to.
#ifndef RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_
#define RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "daemon/http/http_message.h"

namespace rankwatch::http {

struct BasicAuthUser {
  std::string name;
  // A bcrypt hash ("$2a$", "$2b$" or "$2y$", as `htpasswd -nBC 10 name`
  // writes) or else a plaintext password.
  std::string secret;
};

// What Check() decided about a request.
enum class AuthResult {
  kAllowed,  // Credentials of a configured user.
  kExempt,   // A path served without credentials (/healthz, /readyz).
  kMissing,  // No Authorization header: answer with Challenge().
  kDenied,   // Wrong, unknown or malformed credentials: Challenge() too.
};

// "allowed", "exempt", "missing" or "denied", for logs and tests.
std::string_view AuthResultName(AuthResult result);

class BasicAuth {
 public:
  // Successful bcrypt verifications remembered; the oldest goes first. A
  // handful of scrapers and operators need far fewer.
  static constexpr size_t kCacheCapacity = 64;
  // Failed logins logged per second at most; the rest are counted and the
  // next line logged says how many were left out.
  static constexpr int32_t kFailedLoginLogsPerSecond = 5;
  // bcrypt reads at most 72 bytes of a password and ignores the rest.
  static constexpr size_t kBcryptMaxPasswordBytes = 72;

  // InvalidArgument (one line, naming the user but never the secret) when
  // `users` is empty, a name is empty, repeated, or holds ':' (RFC 7617
  // section 2: the user-pass split would be ambiguous) or a control
  // character, a secret is empty, or a secret starting with "$2" is not a
  // well-formed bcrypt hash ("$2a$", "$2b$" or "$2y$", cost 04 to 31, 53
  // characters of bcrypt's base64). `clock` (for the log rate limit) must
  // not be null and must outlive the BasicAuth.
  static StatusOr<BasicAuth> Create(const std::vector<BasicAuthUser>& users,
                                    const Clock* clock);

  // One user with a plaintext password, unchecked, on the system clock.
  // Kept until HttpServer calls Create(); new code should use Create().
  BasicAuth(std::string_view username, std::string_view password);

  BasicAuth(BasicAuth&& other) noexcept;
  BasicAuth& operator=(BasicAuth&& other) noexcept;
  ~BasicAuth();

  // Whether `path` is served without credentials.
  static bool Exempt(std::string_view path);

  // Whether `request` may be served, see AuthResult. Logs failed logins.
  // An exempt path with valid credentials is kAllowed (a handler may tell
  // an authenticated client more), with none or invalid ones kExempt.
  AuthResult Check(const HttpRequest& request) const;

  // Check() is kAllowed or kExempt.
  bool Allows(const HttpRequest& request) const;

  // The 401 answer, with its WWW-Authenticate challenge.
  static HttpResponse Challenge();

  // bcrypt computations run so far (a verification served from the cache
  // runs none), for tests and metrics.
  uint64_t bcrypt_verifications() const;

 private:
  struct State;

  explicit BasicAuth(std::unique_ptr<State> state);
  // Check() without the exemption: kAllowed, kMissing or kDenied; failures
  // logged when `log`.
  AuthResult CheckCredentials(const HttpRequest& request, bool log) const;

  std::unique_ptr<State> state_;
};

// The bytes encoded by `text` in standard base64 with padding (RFC 4648
// section 4); nullopt when it is not exactly that.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_BASIC_AUTH_H_
