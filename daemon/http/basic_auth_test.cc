#include "daemon/http/basic_auth.h"

#include <openssl/evp.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
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

// What OpenSSL's EVP_DecodeBlock alone would accept: blanks around the
// text, "=" inside the last group, the URL-safe alphabet.
TEST(Base64DecodeTest, RejectsWhatOpenSslAloneWouldAccept) {
  EXPECT_EQ(Base64Decode("    Zm9v"), std::nullopt);
  EXPECT_EQ(Base64Decode("Zm9v    "), std::nullopt);
  EXPECT_EQ(Base64Decode("Zm9v\r\n\t "), std::nullopt);
  EXPECT_EQ(Base64Decode("Zm=v"), std::nullopt);
  EXPECT_EQ(Base64Decode("=m9v"), std::nullopt);
  EXPECT_EQ(Base64Decode("===="), std::nullopt);
  EXPECT_EQ(Base64Decode("Zm9-"), std::nullopt);  // base64url's 62.
  EXPECT_EQ(Base64Decode("Zm9_"), std::nullopt);  // base64url's 63.
  EXPECT_EQ(Base64Decode(std::string_view("Zm\0v", 4)), std::nullopt);
}

HttpRequest Get(const std::string& path,
                std::optional<std::string> authorization) {
  HttpRequest request;
  request.method = "GET";
  request.path = path;
  request.client = "192.0.2.7";
  if (authorization.has_value()) {
    request.headers.emplace_back("Authorization", *authorization);
  }
  return request;
}

// "Basic " and "user:password" in base64, by OpenSSL's encoder (not the
// decoder under test), itself checked against RFC 7617's example below.
std::string BasicHeader(const std::string& user, const std::string& password) {
  const std::string plain = user + ":" + password;
  std::string encoded((plain.size() + 2) / 3 * 4 + 1, '\0');
  const int size =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                      reinterpret_cast<const unsigned char*>(plain.data()),
                      static_cast<int>(plain.size()));
  encoded.resize(static_cast<size_t>(size));
  return "Basic " + encoded;
}

HttpRequest Metrics(const std::string& user, const std::string& password) {
  return Get("/metrics", BasicHeader(user, password));
}

TEST(BasicHeaderTest, EncodesTheRfc7617Example) {
  EXPECT_EQ(BasicHeader("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
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

// Hashes made by tools other than the one under test.
//
// The published crypt_blowfish test vectors (Openwall's wrapper.c, as
// copied into php-src's ext/standard/tests/strings/crypt_blowfish.phpt).
constexpr char kUStarU[] =
    "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";  // "U*U"
constexpr char kEmpty[] =
    "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy";  // ""
// The password of this vector is these 72 bytes and then "chars after 72
// are ignored": bcrypt gives one hash for all.
constexpr char kLong[] =
    "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui";
constexpr char kLongPassword72[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
// "\xa3" under the three variants.
constexpr char kA3A[] =
    "$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq";
constexpr char kA3B[] =
    "$2b$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq";
constexpr char kA3Y[] =
    "$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq";
// `htpasswd -nbBC 5 user pass` (apache2-utils 2.4.71-1~deb12u1):
constexpr char kHtpasswdUserPass[] =
    "$2y$05$9D3RZhN8zNEwoD0HdNcERegCbIwxlBV9/Fzh7Qp3V0auR311I0ARm";
// `htpasswd -nbBC 4 scraper 'correct horse'` (the same):
constexpr char kHtpasswdScraper[] =
    "$2y$04$9gaxGEPHeiw0ZgNInHKAp.JMekbt8nvl0YE7PZwGd471mk6g80KkS";

BasicAuth MustCreate(const std::vector<BasicAuthUser>& users,
                     const Clock* clock = SystemClock::Get()) {
  StatusOr<BasicAuth> auth = BasicAuth::Create(users, clock);
  EXPECT_TRUE(auth.ok()) << auth.status().message();
  return std::move(auth).value();
}

TEST(BasicAuthBcryptTest, AcceptsPublishedVectors) {
  struct Case {
    const char* hash;
    std::string password;
  };
  const std::vector<Case> cases = {
      {kUStarU, "U*U"},
      {kEmpty, ""},
      {kLong, kLongPassword72},
      {kA3A, "\xa3"},
      {kA3B, "\xa3"},
      {kA3Y, "\xa3"},
      {kHtpasswdUserPass, "pass"},
      {kHtpasswdScraper, "correct horse"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.hash);
    const BasicAuth auth = MustCreate({{"u", c.hash}});
    EXPECT_EQ(auth.Check(Metrics("u", c.password)), AuthResult::kAllowed);
    EXPECT_EQ(auth.Check(Metrics("u", c.password + "x")), AuthResult::kDenied);
    EXPECT_EQ(auth.Check(Metrics("v", c.password)), AuthResult::kDenied);
  }
  // Other vectors of the same list, crossed: "U*U*" has its own hash.
  const BasicAuth auth = MustCreate({{"u", kUStarU}});
  EXPECT_EQ(auth.Check(Metrics("u", "U*U*")), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("u", "U*")), AuthResult::kDenied);
}

// bcrypt would accept any password that starts with the 72 bytes hashed
// (the published vector's own password is 98 bytes long); anything longer
// is refused, without running bcrypt.
TEST(BasicAuthBcryptTest, RefusesPasswordsLongerThan72Bytes) {
  const BasicAuth auth = MustCreate({{"u", kLong}});
  const std::string password73 = std::string(kLongPassword72) + "c";
  ASSERT_EQ(password73.size(), 73u);
  EXPECT_EQ(auth.Check(Metrics("u", password73)), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("u", std::string(kLongPassword72) +
                                        "chars after 72 are ignored")),
            AuthResult::kDenied);
  EXPECT_EQ(auth.bcrypt_verifications(), 0u);
  EXPECT_EQ(auth.Check(Metrics("u", kLongPassword72)), AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), 1u);
}

// crypt_rn reads a C string: "U*U\0anything" would pass as "U*U".
TEST(BasicAuthBcryptTest, RefusesPasswordsWithNul) {
  const BasicAuth auth = MustCreate({{"u", kUStarU}});
  EXPECT_EQ(auth.Check(Metrics("u", std::string("U*U\0x", 5))),
            AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("u", "U*U")), AuthResult::kAllowed);
}

TEST(BasicAuthTest, SeveralUsers) {
  const BasicAuth auth = MustCreate({
      {"alice", kHtpasswdUserPass},  // bcrypt of "pass".
      {"bob", "hunter2"},            // Plaintext.
      {"carol", kUStarU},            // bcrypt of "U*U".
      {"dave", "$1$not-bcrypt"},     // Plaintext: not "$2".
  });
  EXPECT_EQ(auth.Check(Metrics("alice", "pass")), AuthResult::kAllowed);
  EXPECT_EQ(auth.Check(Metrics("bob", "hunter2")), AuthResult::kAllowed);
  EXPECT_EQ(auth.Check(Metrics("carol", "U*U")), AuthResult::kAllowed);
  EXPECT_EQ(auth.Check(Metrics("dave", "$1$not-bcrypt")), AuthResult::kAllowed);
  // Each password is its own user's only.
  EXPECT_EQ(auth.Check(Metrics("alice", "hunter2")), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("bob", "pass")), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("carol", "pass")), AuthResult::kDenied);
  // A bcrypt user's hash is not its password.
  EXPECT_EQ(auth.Check(Metrics("alice", kHtpasswdUserPass)),
            AuthResult::kDenied);
  // Unknown users, names compared exactly.
  EXPECT_EQ(auth.Check(Metrics("mallory", "pass")), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("Alice", "pass")), AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("", "pass")), AuthResult::kDenied);
  // The first ':' splits (RFC 7617): "alice:pass" as a name is unknown, and
  // "bob" with password "hunter2:x" is wrong.
  EXPECT_EQ(auth.Check(Metrics("bob", "hunter2:x")), AuthResult::kDenied);
}

TEST(BasicAuthTest, CheckTellsWhy) {
  const BasicAuth auth = MustCreate({{"bob", "hunter2"}});
  EXPECT_EQ(auth.Check(Get("/healthz", std::nullopt)), AuthResult::kExempt);
  EXPECT_EQ(auth.Check(Get("/metrics", std::nullopt)), AuthResult::kMissing);
  EXPECT_EQ(auth.Check(Get("/metrics", "Basic")), AuthResult::kDenied);
  // "bobhunter2", no ':' (`printf bobhunter2 | base64`).
  EXPECT_EQ(auth.Check(Get("/metrics", "Basic Ym9iaHVudGVyMg==")),
            AuthResult::kDenied);
  EXPECT_EQ(auth.Check(Metrics("bob", "hunter2")), AuthResult::kAllowed);
  EXPECT_FALSE(auth.Allows(Get("/metrics", std::nullopt)));
  EXPECT_TRUE(auth.Allows(Get("/readyz", std::nullopt)));
  // A probe path with valid credentials is a known client (it may be told
  // more); with wrong ones it is still served, as to anyone.
  HttpRequest readyz = Metrics("bob", "hunter2");
  readyz.path = "/readyz";
  EXPECT_EQ(auth.Check(readyz), AuthResult::kAllowed);
  readyz = Metrics("bob", "wrong");
  readyz.path = "/readyz";
  EXPECT_EQ(auth.Check(readyz), AuthResult::kExempt);
  EXPECT_EQ(AuthResultName(AuthResult::kAllowed), "allowed");
  EXPECT_EQ(AuthResultName(AuthResult::kExempt), "exempt");
  EXPECT_EQ(AuthResultName(AuthResult::kMissing), "missing");
  EXPECT_EQ(AuthResultName(AuthResult::kDenied), "denied");
}

// Each bad configuration is refused with one line that names the user and
// never shows the secret.
TEST(BasicAuthCreateTest, RefusesBadUsers) {
  struct Case {
    std::vector<BasicAuthUser> users;
    std::string expected_in_message;
  };
  const std::string bcrypt = kUStarU;
  std::string altered_salt = bcrypt;
  altered_salt[28] = 'C';  // The salt's last character: low bits set.
  std::string altered_hash = bcrypt;
  altered_hash[59] = 'X';  // The hash's last character: low bits set.
  std::string bad_character = bcrypt;
  bad_character[40] = '+';  // RFC 4648's, not bcrypt's.
  const std::vector<Case> cases = {
      {{}, "no users"},
      {{{"", "pw"}}, "empty name"},
      {{{"a:b", "pw"}}, "\"a:b\": ':' is not allowed"},
      {{{"a\nb", "pw"}}, "\"a\\nb\": control character"},
      {{{"a\x7f", "pw"}}, "\"a\\x7f\": control character"},
      {{{"a", "pw"}, {"b", "pw2"}, {"a", bcrypt}}, "\"a\": configured twice"},
      {{{"a", ""}}, "\"a\": empty password"},
      {{{"a", bcrypt.substr(0, 59)}}, "\"a\": the bcrypt hash has 59"},
      {{{"a", bcrypt + "x"}}, "\"a\": the bcrypt hash has 61"},
      {{{"a", "$2x$" + bcrypt.substr(4)}}, "\"a\": the bcrypt hash is not a"},
      {{{"a", "$2$05$" + bcrypt.substr(7) + "x"}}, "hash is not a $2a$"},
      {{{"a", "$2a$03$" + bcrypt.substr(7)}}, "cost 3, not 04 to 31"},
      {{{"a", "$2a$32$" + bcrypt.substr(7)}}, "cost 32, not 04 to 31"},
      {{{"a", "$2a$5x$" + bcrypt.substr(7)}}, "no two-digit cost"},
      {{{"a", bad_character}}, "outside bcrypt's base64 alphabet"},
      {{{"a", altered_salt}}, "not in canonical form"},
      {{{"a", altered_hash}}, "not in canonical form"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected_in_message);
    const StatusOr<BasicAuth> auth =
        BasicAuth::Create(c.users, SystemClock::Get());
    ASSERT_FALSE(auth.ok());
    const std::string message = auth.status().message();
    EXPECT_EQ(auth.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(message.find(c.expected_in_message), std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const BasicAuthUser& user : c.users) {
      if (user.secret.size() < 5) continue;  // "pw" is in "empty password".
      EXPECT_EQ(message.find(user.secret.substr(7)), std::string::npos)
          << message;
    }
  }
  EXPECT_FALSE(BasicAuth::Create({{"a", "pw"}}, nullptr).ok());
}

// A wrong password always costs bcrypt; a right one only the first time.
TEST(BasicAuthBcryptTest, RemembersOnlySuccesses) {
  const BasicAuth auth = MustCreate({{"u", kUStarU}, {"p", "plain"}});
  EXPECT_EQ(auth.bcrypt_verifications(), 0u);
  EXPECT_EQ(auth.Check(Metrics("u", "U*U")), AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), 1u);
  EXPECT_EQ(auth.Check(Metrics("u", "U*U")), AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), 1u);
  for (uint64_t i = 1; i <= 3; ++i) {
    EXPECT_EQ(auth.Check(Metrics("u", "U*V")), AuthResult::kDenied);
    EXPECT_EQ(auth.bcrypt_verifications(), 1u + i);
  }
  // An unknown user costs one bcrypt too (against a configured hash), so
  // that it takes as long as a wrong password.
  EXPECT_EQ(auth.Check(Metrics("nobody", "U*U")), AuthResult::kDenied);
  EXPECT_EQ(auth.bcrypt_verifications(), 5u);
  // Plaintext users never run bcrypt.
  EXPECT_EQ(auth.Check(Metrics("p", "plain")), AuthResult::kAllowed);
  EXPECT_EQ(auth.Check(Metrics("p", "wrong")), AuthResult::kDenied);
  EXPECT_EQ(auth.bcrypt_verifications(), 5u);
  // Still remembered after the failures.
  EXPECT_EQ(auth.Check(Metrics("u", "U*U")), AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), 5u);
}

// The cache holds kCacheCapacity credentials; the oldest leaves first.
TEST(BasicAuthBcryptTest, CacheIsBounded) {
  std::vector<BasicAuthUser> users;
  const size_t n = BasicAuth::kCacheCapacity + 1;
  for (size_t i = 0; i < n; ++i) {
    users.push_back({"user" + std::to_string(i), kHtpasswdScraper});
  }
  const BasicAuth auth = MustCreate(users);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(auth.Check(Metrics(users[i].name, "correct horse")),
              AuthResult::kAllowed);
  }
  EXPECT_EQ(auth.bcrypt_verifications(), n);
  // The newest is remembered; the first was evicted by the last.
  EXPECT_EQ(auth.Check(Metrics(users[n - 1].name, "correct horse")),
            AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), n);
  EXPECT_EQ(auth.Check(Metrics(users[0].name, "correct horse")),
            AuthResult::kAllowed);
  EXPECT_EQ(auth.bcrypt_verifications(), n + 1);
}

// Several worker threads at once (run under ASan/UBSan in CI): every
// answer right, and bcrypt run once per failure plus once per thread at
// most for the first success.
TEST(BasicAuthBcryptTest, ConcurrentChecks) {
  const BasicAuth auth = MustCreate({{"scraper", kHtpasswdScraper}});
  constexpr int kThreads = 4;
  constexpr int kRounds = 10;
  std::atomic<int> wrong_answers{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&auth, &wrong_answers] {
      for (int i = 0; i < kRounds; ++i) {
        if (auth.Check(Metrics("scraper", "correct horse")) !=
            AuthResult::kAllowed) {
          ++wrong_answers;
        }
        if (i % 5 == 0 && auth.Check(Metrics("scraper", "wrong horse")) !=
                              AuthResult::kDenied) {
          ++wrong_answers;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong_answers.load(), 0);
  const uint64_t failures = kThreads * (kRounds / 5);
  EXPECT_GE(auth.bcrypt_verifications(), failures + 1);
  EXPECT_LE(auth.bcrypt_verifications(), failures + kThreads);
}

// Makes the default logger write "level message" lines into a string for
// the test's duration, then restores the one before.
class FailedLoginLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%l %v");
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("basic_auth_test", sink));
  }
  void TearDown() override { spdlog::set_default_logger(saved_); }

  std::vector<std::string> Lines() {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  FakeClock clock_{1'700'000'000'000};
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> saved_;
};

TEST_F(FailedLoginLogTest, NamesUserAndClientNeverThePassword) {
  const BasicAuth auth =
      MustCreate({{"alice", kUStarU}, {"bob", "hunter2"}}, &clock_);
  EXPECT_EQ(auth.Check(Metrics("alice", "guess-one")), AuthResult::kDenied);
  clock_.Advance(1000);
  EXPECT_EQ(auth.Check(Metrics("bob", "guess-two")), AuthResult::kDenied);
  clock_.Advance(1000);
  EXPECT_EQ(auth.Check(Metrics("mallory", "guess-three")), AuthResult::kDenied);
  clock_.Advance(1000);
  // No ':': the decoded text may be a password (`printf bobguess-four |
  // base64`).
  EXPECT_EQ(auth.Check(Get("/metrics", "Basic Ym9iZ3Vlc3MtZm91cg==")),
            AuthResult::kDenied);
  clock_.Advance(1000);
  // Neither a missing header (a browser's first request), an exempt path
  // nor a success is logged.
  EXPECT_EQ(auth.Check(Get("/metrics", std::nullopt)), AuthResult::kMissing);
  EXPECT_EQ(auth.Check(Get("/healthz", "Basic Zm9v")), AuthResult::kExempt);
  EXPECT_EQ(auth.Check(Metrics("bob", "hunter2")), AuthResult::kAllowed);

  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 4u) << out_.str();
  EXPECT_EQ(lines[0],
            "warning http: failed login (wrong password) of user \"alice\" "
            "from 192.0.2.7");
  EXPECT_EQ(lines[1],
            "warning http: failed login (wrong password) of user \"bob\" "
            "from 192.0.2.7");
  EXPECT_EQ(lines[2],
            "warning http: failed login (unknown user) of user \"mallory\" "
            "from 192.0.2.7");
  EXPECT_EQ(lines[3],
            "warning http: failed login (malformed credentials) of no user "
            "from 192.0.2.7");
  EXPECT_EQ(out_.str().find("guess"), std::string::npos);
  EXPECT_EQ(out_.str().find("hunter2"), std::string::npos);
}

TEST_F(FailedLoginLogTest, NameIsPrintableAndBounded) {
  const BasicAuth auth = MustCreate({{"bob", "hunter2"}}, &clock_);
  HttpRequest request =
      Metrics("evil\nwarning forged line\x1b[2J" + std::string(200, 'x'), "pw");
  request.client = "2001:db8::1";
  EXPECT_EQ(auth.Check(request), AuthResult::kDenied);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u) << out_.str();
  // Printable()'s default bound: 60 bytes of the name (28 before the
  // x's), then "...".
  EXPECT_EQ(lines[0],
            "warning http: failed login (unknown user) of user "
            "\"evil\\nwarning forged line\\x1b[2J" +
                std::string(32, 'x') + "...\" from 2001:db8::1");
}

TEST_F(FailedLoginLogTest, RateLimitedWithCountOfWhatWasLeftOut) {
  const BasicAuth auth = MustCreate({{"bob", "hunter2"}}, &clock_);
  constexpr int kFailures = 20;
  for (int i = 0; i < kFailures; ++i) {
    EXPECT_EQ(auth.Check(Metrics("bob", "attempt-" + std::to_string(i))),
              AuthResult::kDenied);
    clock_.Advance(10);  // 200 ms in all: one window.
  }
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(),
            static_cast<size_t>(BasicAuth::kFailedLoginLogsPerSecond))
      << out_.str();
  clock_.Advance(1000);
  EXPECT_EQ(auth.Check(Metrics("bob", "attempt-last")), AuthResult::kDenied);
  lines = Lines();
  ASSERT_EQ(lines.size(),
            static_cast<size_t>(BasicAuth::kFailedLoginLogsPerSecond) + 1)
      << out_.str();
  // 20 - 5 = 15 left out of the first window.
  EXPECT_EQ(lines.back(),
            "warning http: failed login (wrong password) of user \"bob\" "
            "from 192.0.2.7; 15 more failed logins before this one were not "
            "logged");
  // The count is not repeated.
  clock_.Advance(1000);
  EXPECT_EQ(auth.Check(Metrics("bob", "attempt-after")), AuthResult::kDenied);
  lines = Lines();
  EXPECT_EQ(lines.back(),
            "warning http: failed login (wrong password) of user \"bob\" "
            "from 192.0.2.7");
  EXPECT_EQ(out_.str().find("attempt"), std::string::npos);
}

TEST_F(FailedLoginLogTest, SaysWhenAPasswordIsTooLongForBcrypt) {
  const BasicAuth auth = MustCreate({{"u", kLong}}, &clock_);
  EXPECT_EQ(auth.Check(Metrics("u", std::string(kLongPassword72) + "c")),
            AuthResult::kDenied);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u) << out_.str();
  EXPECT_EQ(lines[0],
            "warning http: failed login (password longer than bcrypt's 72 "
            "bytes) of user \"u\" from 192.0.2.7");
}

}  // namespace
}  // namespace rankwatch::http
