#include "daemon/http/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include "base/rate_limiter.h"
#include "base/strings.h"

namespace rankwatch::http {

namespace {

using Digest = std::array<unsigned char, 32>;

Digest Sha256(std::string_view bytes) {
  Digest digest{};
  unsigned int size = 0;
  // Cannot fail for SHA-256 short of memory; a zero digest then matches
  // no credentials but those that also fail, and both are refused below.
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(),
                 nullptr) != 1) {
    digest.fill(0);
  }
  return digest;
}

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// bcrypt's own base64 alphabet (not RFC 4648's order).
constexpr std::string_view kBcryptAlphabet =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// "$2b$10$" + 22 characters of salt + 31 of hash.
constexpr size_t kBcryptHashSize = 60;
constexpr size_t kBcryptSaltEnd = 7 + 22;

// The cost of a well-formed bcrypt hash.
int BcryptCost(std::string_view hash) {
  return (hash[4] - '0') * 10 + (hash[5] - '0');
}

// Why `secret` (which starts with "$2") is not a bcrypt hash crypt_rn
// accepts and can ever reproduce; empty when it is one. Says nothing of
// the secret's characters.
std::string BcryptHashProblem(std::string_view secret) {
  if (secret.size() != kBcryptHashSize) {
    return "has " + std::to_string(secret.size()) + " characters, not 60";
  }
  // "$2x$" is crypt_blowfish's mode for hashes made by its old sign bug;
  // "$2$" is the first version. Neither is written by today's tools.
  if ((secret[2] != 'a' && secret[2] != 'b' && secret[2] != 'y') ||
      secret[3] != '$') {
    return "is not a $2a$, $2b$ or $2y$ hash";
  }
  if (secret[4] < '0' || secret[4] > '9' || secret[5] < '0' ||
      secret[5] > '9' || secret[6] != '$') {
    return "has no two-digit cost";
  }
  // crypt_rn refuses costs outside 04..31.
  const int cost = BcryptCost(secret);
  if (cost < 4 || cost > 31) {
    return "has cost " + std::to_string(cost) + ", not 04 to 31";
  }
  for (size_t i = 7; i < secret.size(); ++i) {
    if (kBcryptAlphabet.find(secret[i]) == std::string_view::npos) {
      return "has a character outside bcrypt's base64 alphabet";
    }
  }
  // The salt's 22 characters carry 128 bits and the hash's 31 carry 184,
  // so the last character of each has unused low bits (4 and 2). crypt_rn
  // ignores them and writes them as zero: a hash with them set would never
  // match any password.
  if (kBcryptAlphabet.find(secret[kBcryptSaltEnd - 1]) % 16 != 0 ||
      kBcryptAlphabet.find(secret.back()) % 4 != 0) {
    return "is not in canonical form (a character was altered)";
  }
  return "";
}

bool HasControlCharacter(std::string_view s) {
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// Whether `password` (without NUL, at most 72 bytes) hashed with bcrypt
// gives `hash`. Runs crypt_rn, which is thread-safe and takes its working
// memory from the caller.
bool BcryptMatches(const std::string& hash, std::string_view password) {
  // 32 KiB: on the heap rather than a worker thread's stack.
  auto data = std::make_unique<crypt_data>();
  const std::string phrase(password);
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), data.get(),
                             static_cast<int>(sizeof(crypt_data)));
  const bool matches = out != nullptr && std::strlen(out) == hash.size() &&
                       CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
  // The buffer held the key schedule derived from the password.
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return matches;
}

}  // namespace

std::string_view AuthResultName(AuthResult result) {
  switch (result) {
    case AuthResult::kAllowed:
      return "allowed";
    case AuthResult::kExempt:
      return "exempt";
    case AuthResult::kMissing:
      return "missing";
    case AuthResult::kDenied:
      return "denied";
  }
  return "unknown";
}

struct BasicAuth::State {
  struct User {
    std::string name;
    bool bcrypt = false;
    std::string hash;  // bcrypt users.
    Digest digest{};   // Plaintext users: SHA-256 of "name:password".
  };
  struct CacheEntry {
    size_t user = 0;
    Digest digest{};  // SHA-256 of "name:password" that bcrypt accepted.
  };

  State(std::vector<User> u, const Clock* clock)
      : users(std::move(u)), limiter(kFailedLoginLogsPerSecond, clock) {
    int decoy_cost = -1;
    for (size_t i = 0; i < users.size(); ++i) {
      if (users[i].bcrypt && BcryptCost(users[i].hash) > decoy_cost) {
        decoy_cost = BcryptCost(users[i].hash);
        decoy = i;
      }
    }
  }

  const User* Find(std::string_view name) const {
    for (const User& user : users) {
      if (user.name == name) return &user;
    }
    return nullptr;
  }

  // Whether `credentials` ("name:password") of `user` were accepted by
  // bcrypt before. Reads every entry whatever it finds, and compares in
  // constant time: the time taken does not tell how close a guess came to
  // a remembered digest.
  bool Remembered(size_t user, const Digest& digest) {
    std::lock_guard<std::mutex> lock(mutex);
    bool found = false;
    for (const CacheEntry& entry : cache) {
      const bool same_digest =
          CRYPTO_memcmp(entry.digest.data(), digest.data(), digest.size()) == 0;
      found |= entry.user == user && same_digest;
    }
    return found;
  }

  void Remember(size_t user, const Digest& digest) {
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() < kCacheCapacity) {
      cache.push_back({user, digest});
      return;
    }
    cache[cache_next] = {user, digest};
    cache_next = (cache_next + 1) % kCacheCapacity;
  }

  bool RunBcrypt(const User& user, std::string_view password) {
    // crypt_rn reads a NUL-terminated passphrase: a NUL would end it early;
    // and bcrypt reads 72 bytes at most, ignoring the rest. Either way a
    // password other than the one hashed would pass on a prefix of it, so
    // such passwords are refused rather than cut (no bcrypt run needed).
    if (password.size() > kBcryptMaxPasswordBytes ||
        password.find('\0') != std::string_view::npos) {
      return false;
    }
    ++bcrypt_verifications;
    return BcryptMatches(user.hash, password);
  }

  // Whether `password` is `user`'s. `credentials` is "name:password".
  bool Verify(const User& user, std::string_view credentials,
              std::string_view password) {
    const Digest digest = Sha256(credentials);
    if (!user.bcrypt) {
      return CRYPTO_memcmp(digest.data(), user.digest.data(), digest.size()) ==
             0;
    }
    const size_t index = static_cast<size_t>(&user - users.data());
    if (Remembered(index, digest)) return true;
    // Two first requests of one credential at once both run bcrypt: rare,
    // and not worth a single-flight's bookkeeping.
    if (!RunBcrypt(user, password)) return false;
    Remember(index, digest);
    return true;
  }

  void LogFailure(const HttpRequest& request, std::string_view reason,
                  std::optional<std::string_view> name) {
    int64_t left_out = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!limiter.Allow()) return;
      left_out = limiter.suppressed() - suppressed_logged;
      suppressed_logged = limiter.suppressed();
    }
    const std::string who =
        name.has_value() ? "user \"" + Printable(*name) + "\"" : "no user";
    const std::string client = request.client.empty()
                                   ? "an unknown address"
                                   : Printable(request.client);
    if (left_out > 0) {
      spdlog::warn(
          "http: failed login ({}) of {} from {}; {} more failed logins "
          "before this one were not logged",
          reason, who, client, left_out);
    } else {
      spdlog::warn("http: failed login ({}) of {} from {}", reason, who,
                   client);
    }
  }

  const std::vector<User> users;
  // The bcrypt user of the highest cost, whose hash a name that is not
  // configured is checked against (the answer is ignored), so that such a
  // name costs as much time as a wrong password. None without bcrypt users.
  std::optional<size_t> decoy;
  std::atomic<uint64_t> bcrypt_verifications{0};

  std::mutex mutex;
  // Guarded by `mutex`: a ring of at most kCacheCapacity entries, the
  // oldest at `cache_next` once full.
  std::vector<CacheEntry> cache;
  size_t cache_next = 0;
  RateLimiter limiter;
  int64_t suppressed_logged = 0;  // limiter.suppressed() at the last line.
};

std::optional<std::string> Base64Decode(std::string_view text) {
  // EVP_DecodeBlock skips whitespace before and after the text, decodes
  // each "=" as a zero byte (it counts them in its length) and does not
  // insist on where they stand; so the shape is checked here first.
  if (text.size() % 4 != 0 ||
      text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return std::nullopt;
  }
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') {
    padding = text[text.size() - 2] == '=' ? 2 : 1;
  }
  for (size_t i = 0; i < text.size() - padding; ++i) {
    if (!IsBase64Char(text[i])) return std::nullopt;
  }
  std::string out(text.size() / 4 * 3, '\0');
  if (text.empty()) return out;
  const int size =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(text.data()),
                      static_cast<int>(text.size()));
  if (size < 0 || static_cast<size_t>(size) != out.size()) {
    return std::nullopt;
  }
  out.resize(out.size() - padding);
  return out;
}

StatusOr<BasicAuth> BasicAuth::Create(const std::vector<BasicAuthUser>& users,
                                      const Clock* clock) {
  if (clock == nullptr) {
    return Status::InvalidArgument("basic auth: no clock");
  }
  if (users.empty()) {
    return Status::InvalidArgument("basic auth: no users configured");
  }
  std::vector<State::User> checked;
  std::set<std::string_view> names;
  for (const BasicAuthUser& user : users) {
    const std::string what =
        "basic auth: user \"" + Printable(user.name) + "\"";
    if (user.name.empty()) {
      return Status::InvalidArgument("basic auth: a user has an empty name");
    }
    if (user.name.find(':') != std::string::npos) {
      return Status::InvalidArgument(
          what + ": ':' is not allowed in a name (RFC 7617)");
    }
    if (HasControlCharacter(user.name)) {
      return Status::InvalidArgument(what + ": control character in the name");
    }
    if (!names.insert(user.name).second) {
      return Status::InvalidArgument(what + ": configured twice");
    }
    if (user.secret.empty()) {
      return Status::InvalidArgument(what + ": empty password");
    }
    State::User entry;
    entry.name = user.name;
    // A secret starting with "$2" is meant as a bcrypt hash: taking a
    // mistyped or unsupported one ("$2x$") as a plaintext password would
    // leave the user unable to log in, or worse, make the hash the password.
    if (user.secret.starts_with("$2")) {
      const std::string problem = BcryptHashProblem(user.secret);
      if (!problem.empty()) {
        return Status::InvalidArgument(what + ": the bcrypt hash " + problem);
      }
      entry.bcrypt = true;
      entry.hash = user.secret;
    } else {
      entry.digest = Sha256(user.name + ":" + user.secret);
    }
    checked.push_back(std::move(entry));
  }
  return BasicAuth(std::make_unique<State>(std::move(checked), clock));
}

BasicAuth::BasicAuth(std::unique_ptr<State> state) : state_(std::move(state)) {}

BasicAuth::BasicAuth(std::string_view username, std::string_view password) {
  State::User user;
  user.name = std::string(username);
  user.digest = Sha256(std::string(username) + ":" + std::string(password));
  std::vector<State::User> users;
  users.push_back(std::move(user));
  state_ = std::make_unique<State>(std::move(users), SystemClock::Get());
}

BasicAuth::BasicAuth(BasicAuth&& other) noexcept = default;
BasicAuth& BasicAuth::operator=(BasicAuth&& other) noexcept = default;
BasicAuth::~BasicAuth() = default;

bool BasicAuth::Exempt(std::string_view path) {
  return path == "/healthz" || path == "/readyz";
}

AuthResult BasicAuth::Check(const HttpRequest& request) const {
  if (!Exempt(request.path)) return CheckCredentials(request, /*log=*/true);
  // A probe with valid credentials is told more (/readyz's reasons).
  if (!request.Header("Authorization").has_value()) return AuthResult::kExempt;
  // Not logged: the probe is served anyway.
  return CheckCredentials(request, /*log=*/false) == AuthResult::kAllowed
             ? AuthResult::kAllowed
             : AuthResult::kExempt;
}

AuthResult BasicAuth::CheckCredentials(const HttpRequest& request,
                                       bool log) const {
  const std::optional<std::string_view> header =
      request.Header("Authorization");
  if (!header.has_value()) return AuthResult::kMissing;
  // credentials = auth-scheme 1*SP token68 (RFC 9110 section 11.4); the
  // scheme is case-insensitive.
  const std::string_view value = TrimBlanks(*header);
  const size_t space = value.find(' ');
  if (space == std::string_view::npos ||
      !EqualsIgnoreCase(value.substr(0, space), "Basic")) {
    if (log) state_->LogFailure(request, "not basic credentials", std::nullopt);
    return AuthResult::kDenied;
  }
  const std::optional<std::string> credentials =
      Base64Decode(TrimBlanks(value.substr(space)));
  // user-pass = user-id ":" password (RFC 7617 section 2). Without a ':'
  // the whole could be a password: it is not logged.
  const size_t colon =
      credentials.has_value() ? credentials->find(':') : std::string::npos;
  if (colon == std::string::npos) {
    if (log) state_->LogFailure(request, "malformed credentials", std::nullopt);
    return AuthResult::kDenied;
  }
  const std::string_view name = std::string_view(*credentials).substr(0, colon);
  const std::string_view password =
      std::string_view(*credentials).substr(colon + 1);
  const State::User* user = state_->Find(name);
  if (user == nullptr) {
    if (state_->decoy.has_value()) {
      (void)state_->RunBcrypt(state_->users[*state_->decoy], password);
    }
    if (log) state_->LogFailure(request, "unknown user", name);
    return AuthResult::kDenied;
  }
  if (!state_->Verify(*user, *credentials, password)) {
    if (log) {
      state_->LogFailure(
          request,
          user->bcrypt && password.size() > kBcryptMaxPasswordBytes
              ? "password longer than bcrypt's 72 bytes"
              : "wrong password",
          name);
    }
    return AuthResult::kDenied;
  }
  return AuthResult::kAllowed;
}

bool BasicAuth::Allows(const HttpRequest& request) const {
  const AuthResult result = Check(request);
  return result == AuthResult::kAllowed || result == AuthResult::kExempt;
}

HttpResponse BasicAuth::Challenge() {
  HttpResponse response = HttpResponse::Text(401, "unauthorized\n");
  response.headers.emplace_back("WWW-Authenticate",
                                "Basic realm=\"rankwatch\"");
  return response;
}

uint64_t BasicAuth::bcrypt_verifications() const {
  return state_->bcrypt_verifications.load();
}

}  // namespace rankwatch::http
