#include "daemon/http/basic_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cctype>
#include <cstdint>

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

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    uint32_t group = 0;
    int padding = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      // "=" only at the end, at most two, and nothing after it.
      if (c == '=' && last && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++padding;
        group <<= 6;
        continue;
      }
      const int value = Base64Value(c);
      if (value < 0 || padding > 0) return std::nullopt;
      group = (group << 6) | static_cast<uint32_t>(value);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (padding < 2) out.push_back(static_cast<char>((group >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(group & 0xff));
  }
  return out;
}

BasicAuth::BasicAuth(std::string_view username, std::string_view password)
    : digest_(Sha256(std::string(username) + ":" + std::string(password))) {}

bool BasicAuth::Exempt(std::string_view path) {
  return path == "/healthz" || path == "/readyz";
}

bool BasicAuth::Allows(const HttpRequest& request) const {
  if (Exempt(request.path)) return true;
  const std::optional<std::string_view> header =
      request.Header("Authorization");
  if (!header.has_value()) return false;
  // credentials = auth-scheme 1*SP token68 (RFC 9110 section 11.4); the
  // scheme is case-insensitive.
  std::string_view value = *header;
  const size_t space = value.find(' ');
  if (space == std::string_view::npos ||
      !EqualsIgnoreCase(value.substr(0, space), "Basic")) {
    return false;
  }
  value.remove_prefix(space);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  const std::optional<std::string> credentials = Base64Decode(value);
  if (!credentials.has_value()) return false;
  const Digest digest = Sha256(*credentials);
  return CRYPTO_memcmp(digest.data(), digest_.data(), digest.size()) == 0;
}

HttpResponse BasicAuth::Challenge() {
  HttpResponse response = HttpResponse::Text(401, "unauthorized\n");
  response.headers.emplace_back("WWW-Authenticate",
                                "Basic realm=\"rankwatch\"");
  return response;
}

}  // namespace rankwatch::http
