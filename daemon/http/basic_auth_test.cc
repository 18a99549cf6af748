#include "daemon/http/basic_auth.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace rankwatch::http {
namespace {

// RFC 4648 section 10's test vectors.
TEST(Base64DecodeTest, Rfc4648Vectors) {
  EXPECT_EQ(Base64Decode(""), std::optional<std::string>(""));
  EXPECT_EQ(Base64Decode("Zg=="), std::optional<std::string>("f"));
  EXPECT_EQ(Base64Decode("Zm8="), std::optional<std::string>("fo"));
  EXPECT_EQ(Base64Decode("Zm9v"), std::optional<std::string>("foo"));
  EXPECT_EQ(Base64Decode("Zm9vYg=="), std::optional<std::string>("foob"));
  EXPECT_EQ(Base64Decode("Zm9vYmE="), std::optional<std::string>("fooba"));
  EXPECT_EQ(Base64Decode("Zm9vYmFy"), std::optional<std::string>("foobar"));
}

TEST(Base64DecodeTest, RejectsMalformed) {
  EXPECT_EQ(Base64Decode("Zg"), std::nullopt);        // No padding.
  EXPECT_EQ(Base64Decode("Zg=a"), std::nullopt);      // Data after "=".
  EXPECT_EQ(Base64Decode("Z==="), std::nullopt);      // Three "=".
  EXPECT_EQ(Base64Decode("Zg==Zm9v"), std::nullopt);  // "=" mid-text.
  EXPECT_EQ(Base64Decode("Zm9*"), std::nullopt);      // Not the alphabet.
  EXPECT_EQ(Base64Decode("Zm9v YmFy"), std::nullopt);
}

HttpRequest Get(const std::string& path,
                std::optional<std::string> authorization) {
  HttpRequest request;
  request.method = "GET";
  request.path = path;
  if (authorization.has_value()) {
    request.headers.emplace_back("Authorization", *authorization);
  }
  return request;
}

// RFC 7617 section 2's example: "Aladdin:open sesame" is
// QWxhZGRpbjpvcGVuIHNlc2FtZQ==.
TEST(BasicAuthTest, AcceptsTheRfcExample) {
  const BasicAuth auth("Aladdin", "open sesame");
  EXPECT_TRUE(
      auth.Allows(Get("/metrics", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")));
  // The scheme is case-insensitive; extra spaces are tolerated.
  EXPECT_TRUE(
      auth.Allows(Get("/metrics", "basic   QWxhZGRpbjpvcGVuIHNlc2FtZQ== ")));
}

TEST(BasicAuthTest, RefusesWrongOrMissingCredentials) {
  const BasicAuth auth("Aladdin", "open sesame");
  EXPECT_FALSE(auth.Allows(Get("/metrics", std::nullopt)));
  // "Aladdin:open sesamf", one bit off.
  EXPECT_FALSE(
      auth.Allows(Get("/metrics", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZg==")));
  // "Aladdin:" (empty password).
  EXPECT_FALSE(auth.Allows(Get("/metrics", "Basic QWxhZGRpbjo=")));
  EXPECT_FALSE(
      auth.Allows(Get("/metrics", "Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQ==")));
  EXPECT_FALSE(auth.Allows(Get("/metrics", "Basic")));
  EXPECT_FALSE(auth.Allows(Get("/metrics", "Basic not-base64!")));
  EXPECT_FALSE(auth.Allows(Get("/", std::nullopt)));
  EXPECT_FALSE(auth.Allows(Get("/no-such-path", std::nullopt)));
}

TEST(BasicAuthTest, ProbesAreOpen) {
  const BasicAuth auth("Aladdin", "open sesame");
  EXPECT_TRUE(auth.Allows(Get("/healthz", std::nullopt)));
  EXPECT_TRUE(auth.Allows(Get("/readyz", std::nullopt)));
  EXPECT_FALSE(auth.Allows(Get("/healthz/", std::nullopt)));
}

TEST(BasicAuthTest, ChallengeNamesTheRealm) {
  const HttpResponse r = BasicAuth::Challenge();
  EXPECT_EQ(r.status, 401);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(r.headers[0].second, "Basic realm=\"rankwatch\"");
}

}  // namespace
}  // namespace rankwatch::http
