// TlsContext alone (issue 24): its protocol policy, session tickets,
// certificate rotation and client certificates, against an in-process
// OpenSSL client over a socketpair (both ends non-blocking, stepped in turn
// by one thread, the server's through TlsHandshake as the I/O loop does).
// The certificates are made per run by the `openssl` tool; expected serials
// and expiry times come from the commands that made them (-set_serial, and
// `openssl x509 -enddate`), never from TlsContext.
#include "daemon/http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::http {
namespace {

using rankwatch::testing::CommandResult;
using rankwatch::testing::RunCommand;

// The `openssl` tool, found on $PATH by env(1).
CommandResult Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/env", "openssl"});
  return RunCommand(args, std::chrono::seconds(60));
}

// The certificate's notAfter in Unix seconds, from `openssl x509 -enddate`
// (ISO 8601, UTC) and the proleptic Gregorian calendar of <chrono>.
int64_t EndDate(const std::string& cert) {
  const CommandResult r = Openssl(
      {"x509", "-in", cert, "-noout", "-enddate", "-dateopt", "iso_8601"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  // "notAfter=2026-11-28 00:24:51Z"
  EXPECT_EQ(std::sscanf(r.out.c_str(), "notAfter=%d-%d-%d %d:%d:%dZ", &y, &mo,
                        &d, &h, &mi, &s),
            6)
      << r.out;
  const std::chrono::sys_days day =
      std::chrono::year(y) / std::chrono::month(static_cast<unsigned>(mo)) /
      std::chrono::day(static_cast<unsigned>(d));
  return day.time_since_epoch() / std::chrono::seconds(1) + h * 3600 + mi * 60 +
         s;
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct CtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SessionFree {
  void operator()(SSL_SESSION* session) const { SSL_SESSION_free(session); }
};
using SessionPtr = std::unique_ptr<SSL_SESSION, SessionFree>;

struct ClientConfig {
  int max_version = 0;      // 0: up to TLS 1.3.
  std::string cipher_list;  // TLS 1.2 suites offered; "": OpenSSL's.
  std::string cert_file;    // A client certificate, with its key.
  std::string key_file;
  SSL_SESSION* resume = nullptr;  // A session to resume.
};

struct Exchange {
  TlsResult server = TlsResult::kError;  // TlsHandshake's last result.
  std::string server_error;              // OpenSSL's reason, if it failed.
  bool client_done = false;  // The client's side of the handshake ended.
  // The client read the server's first bytes: both sides accepted the
  // handshake (in TLS 1.3 the client finishes before the server has
  // checked its certificate).
  bool exchanged = false;
  long serial = -1;  // Of the certificate the server presented.
  std::string version;
  std::string cipher;
  bool reused = false;
  SessionPtr session;  // The client's, after the exchange.
};

// A TLS 1.2 client offering `cipher_list` (OpenSSL's default when empty).
ClientConfig Tls12(const std::string& cipher_list = "") {
  ClientConfig config;
  config.max_version = TLS1_2_VERSION;
  config.cipher_list = cipher_list;
  return config;
}

// One handshake of an OpenSSL client configured by `config` with a session
// of `context`, then "ok" from the server to the client.
Exchange Connect(const TlsContext& context, const ClientConfig& config) {
  Exchange out;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
                   fds) != 0) {
    ADD_FAILURE() << "socketpair";
    return out;
  }
  TlsSession server = context.NewSession(fds[0]);
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  // The client offers whatever the test asks; the server decides.
  SSL_CTX_set_security_level(ctx.get(), 0);
  if (config.max_version != 0) {
    SSL_CTX_set_max_proto_version(ctx.get(), config.max_version);
  }
  if (!config.cipher_list.empty()) {
    EXPECT_EQ(SSL_CTX_set_cipher_list(ctx.get(), config.cipher_list.c_str()), 1)
        << config.cipher_list;
  }
  if (!config.cert_file.empty()) {
    EXPECT_EQ(SSL_CTX_use_certificate_file(ctx.get(), config.cert_file.c_str(),
                                           SSL_FILETYPE_PEM),
              1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx.get(), config.key_file.c_str(),
                                          SSL_FILETYPE_PEM),
              1);
  }
  TlsSession client(SSL_new(ctx.get()));
  SSL_set_fd(client.get(), fds[1]);
  SSL_set_connect_state(client.get());
  if (config.resume != nullptr) SSL_set_session(client.get(), config.resume);

  bool client_ok = false, client_failed = false;
  bool server_ok = false, server_failed = false;
  for (int i = 0; i < 1000 && !((client_ok || client_failed) &&
                                (server_ok || server_failed));
       ++i) {
    if (!client_ok && !client_failed) {
      ERR_clear_error();
      const int rc = SSL_do_handshake(client.get());
      const int error = SSL_get_error(client.get(), rc);
      if (rc == 1) {
        client_ok = true;
      } else if (error != SSL_ERROR_WANT_READ &&
                 error != SSL_ERROR_WANT_WRITE) {
        client_failed = true;
        ::shutdown(fds[1], SHUT_WR);  // After its alert, if any.
      }
    }
    if (server != nullptr && !server_ok && !server_failed) {
      out.server = TlsHandshake(server.get());
      if (out.server == TlsResult::kDone) {
        server_ok = true;
      } else if (out.server != TlsResult::kWantRead &&
                 out.server != TlsResult::kWantWrite) {
        server_failed = true;
        out.server_error = TlsLastError();
        ::shutdown(fds[0], SHUT_WR);
      }
    }
  }
  ERR_clear_error();
  out.client_done = client_ok;
  if (client_ok) {
    const X509* peer = SSL_get0_peer_certificate(client.get());
    if (peer != nullptr) {
      out.serial = ASN1_INTEGER_get(X509_get0_serialNumber(peer));
    }
    out.version = SSL_get_version(client.get());
    out.cipher = SSL_get_cipher_name(client.get());
    out.reused = SSL_session_reused(client.get()) == 1;
  }
  if (client_ok && server_ok) {
    size_t n = 0;
    EXPECT_EQ(TlsWrite(server.get(), "ok", 2, &n), TlsResult::kDone);
    char buffer[16];
    for (int i = 0; i < 100; ++i) {
      ERR_clear_error();
      const int rc = SSL_read_ex(client.get(), buffer, sizeof(buffer), &n);
      if (rc == 1) {
        out.exchanged = std::string(buffer, n) == "ok";
        break;
      }
      if (SSL_get_error(client.get(), rc) != SSL_ERROR_WANT_READ) break;
    }
    ERR_clear_error();
    out.session.reset(SSL_get1_session(client.get()));
    // Closed cleanly: OpenSSL drops from its cache the session of a
    // connection freed without close_notify.
    TlsShutdown(server.get());
    TlsShutdown(client.get());
  }
  client.reset();
  server.reset();
  ::close(fds[0]);
  ::close(fds[1]);
  return out;
}

// The certificates, made once for the suite: A and B (P-256, serials 0xA1
// and 0xB2, valid 2 and 30 days), an RSA one, an unrelated key, and two
// CAs each with a client certificate.
class TlsContextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new rankwatch::testing::TempDir();
    MakeSelfSigned("a", "ec", "0xA1", "2");
    MakeSelfSigned("b", "ec", "0xB2", "30");
    MakeSelfSigned("rsa", "rsa", "0xC3", "2");
    Run({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", Path("other.key")});
    MakeSelfSigned("ca1", "ec", "0x1", "10");
    MakeSelfSigned("ca2", "ec", "0x2", "10");
    const std::string ext =
        dir_->Write("client.ext", "extendedKeyUsage=clientAuth\n");
    for (const std::string ca : {"ca1", "ca2"}) {
      const std::string name = "client-" + ca;
      Run({"req", "-new", "-newkey", "ec", "-pkeyopt",
           "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=" + name,
           "-keyout", Path(name + ".key"), "-out", Path(name + ".csr")});
      Run({"x509", "-req", "-in", Path(name + ".csr"), "-CA", Path(ca + ".pem"),
           "-CAkey", Path(ca + ".key"), "-set_serial", "7", "-days", "2",
           "-extfile", ext, "-out", Path(name + ".pem")});
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static void Run(const std::vector<std::string>& args) {
    const CommandResult r = Openssl(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
  }
  static void MakeSelfSigned(const std::string& name, const std::string& type,
                             const std::string& serial,
                             const std::string& days) {
    std::vector<std::string> args = {"req", "-x509", "-newkey"};
    if (type == "rsa") {
      args.push_back("rsa:2048");
    } else {
      args.insert(args.end(), {"ec", "-pkeyopt", "ec_paramgen_curve:P-256"});
    }
    args.insert(args.end(), {"-nodes", "-set_serial", serial, "-days", days,
                             "-subj", "/CN=rankwatch-" + name, "-keyout",
                             Path(name + ".key"), "-out", Path(name + ".pem")});
    Run(args);
  }
  static std::string Path(const std::string& name) {
    return dir_->path() + "/" + name;
  }
  static TlsOptions Options(const std::string& name) {
    TlsOptions options;
    options.cert_file = Path(name + ".pem");
    options.key_file = Path(name + ".key");
    return options;
  }
  static std::unique_ptr<TlsContext> MustCreate(const TlsOptions& options) {
    StatusOr<std::unique_ptr<TlsContext>> context = TlsContext::Create(options);
    EXPECT_TRUE(context.ok()) << context.status().ToString();
    return context.ok() ? std::move(context).value() : nullptr;
  }

  // Replaces `to` by a copy of `from` as an atomic rename, as a careful
  // writer does (and as a symlink swap looks through stat).
  static void Replace(const std::string& from, const std::string& to) {
    const std::string temporary = to + ".tmp";
    std::filesystem::copy_file(
        from, temporary, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(temporary, to);
  }

  static rankwatch::testing::TempDir* dir_;
};

rankwatch::testing::TempDir* TlsContextTest::dir_ = nullptr;

// The finding of issue 24: `openssl s_client -tls1_2 -cipher AES128-SHA`
// (static RSA key exchange, CBC, SHA-1) negotiated. Only ECDHE with an
// AEAD is accepted in TLS 1.2 now, with the server's order.
TEST_F(TlsContextTest, DefaultTls12SuitesAreEcdheWithAead) {
  const std::unique_ptr<TlsContext> context = MustCreate(Options("rsa"));
  ASSERT_NE(context, nullptr);
  for (const char* weak :
       {"AES128-SHA", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA",
        "ECDHE-RSA-AES256-SHA384", "DHE-RSA-AES128-GCM-SHA256"}) {
    const Exchange e = Connect(*context, Tls12(weak));
    EXPECT_EQ(e.server, TlsResult::kError) << weak;
    EXPECT_EQ(e.server_error, "no shared cipher") << weak;
    EXPECT_FALSE(e.client_done) << weak;
  }
  for (const char* modern :
       {"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-RSA-CHACHA20-POLY1305"}) {
    const Exchange e = Connect(*context, Tls12(modern));
    EXPECT_EQ(e.server, TlsResult::kDone) << modern;
    EXPECT_TRUE(e.exchanged) << modern;
    EXPECT_EQ(e.version, "TLSv1.2");
    EXPECT_EQ(e.cipher, modern);
  }
  // The server's preference: AES128-GCM comes first in Mozilla's list.
  const Exchange preferred = Connect(
      *context, Tls12("ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384:"
                      "ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA"));
  EXPECT_EQ(preferred.cipher, "ECDHE-RSA-AES128-GCM-SHA256");
  // TLS 1.3 by default, with OpenSSL's first suite.
  const Exchange tls13 = Connect(*context, {});
  EXPECT_TRUE(tls13.exchanged);
  EXPECT_EQ(tls13.version, "TLSv1.3");
  EXPECT_EQ(tls13.cipher, "TLS_AES_256_GCM_SHA384");
}

TEST_F(TlsContextTest, EcdsaCertificateSuites) {
  const std::unique_ptr<TlsContext> context = MustCreate(Options("a"));
  ASSERT_NE(context, nullptr);
  EXPECT_TRUE(
      Connect(*context, Tls12("ECDHE-ECDSA-AES128-GCM-SHA256")).exchanged);
  EXPECT_TRUE(
      Connect(*context, Tls12("ECDHE-ECDSA-CHACHA20-POLY1305")).exchanged);
  EXPECT_EQ(Connect(*context, Tls12("ECDHE-ECDSA-AES128-SHA")).server,
            TlsResult::kError);
}

TEST_F(TlsContextTest, ConfiguredSuitesAndMinimumVersion) {
  TlsOptions options = Options("rsa");
  options.cipher_suites = "ECDHE-RSA-AES256-GCM-SHA384";
  std::unique_ptr<TlsContext> context = MustCreate(options);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(Connect(*context, Tls12("ECDHE-RSA-AES128-GCM-SHA256")).server,
            TlsResult::kError);
  EXPECT_EQ(Connect(*context, Tls12("ECDHE-RSA-AES256-GCM-SHA384")).cipher,
            "ECDHE-RSA-AES256-GCM-SHA384");

  options = Options("rsa");
  options.min_version = "1.3";
  context = MustCreate(options);
  ASSERT_NE(context, nullptr);
  const Exchange tls12 =
      Connect(*context, Tls12("ECDHE-RSA-AES128-GCM-SHA256"));
  EXPECT_EQ(tls12.server, TlsResult::kError);
  EXPECT_FALSE(tls12.client_done);
  const Exchange tls13 = Connect(*context, {});
  EXPECT_TRUE(tls13.exchanged);
  EXPECT_EQ(tls13.version, "TLSv1.3");
}

TEST_F(TlsContextTest, BadVersionOrSuitesAreOneLineErrors) {
  struct Case {
    std::string min_version;
    std::string cipher_suites;
    std::string message;
  };
  const Case cases[] = {
      {"1.1", "", "TLS minimum version '1.1': must be \"1.2\" or \"1.3\""},
      {"TLSv1.2", "",
       "TLS minimum version 'TLSv1.2': must be \"1.2\" or \"1.3\""},
      {"", "", "TLS minimum version '': must be \"1.2\" or \"1.3\""},
      {"1.2", "RC4-NOPE",
       "TLS cipher suites 'RC4-NOPE': 'RC4-NOPE' matches no TLS 1.2 cipher "
       "suite"},
      // A misspelt name beside a good one (OpenSSL alone would drop it).
      {"1.2", "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA265",
       "TLS cipher suites "
       "'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA265': "
       "'ECDHE-RSA-AES128-GCM-SHA265' matches no TLS 1.2 cipher suite"},
      // TLS 1.3 suites are not set here.
      {"1.2", "TLS_AES_128_GCM_SHA256",
       "TLS cipher suites 'TLS_AES_128_GCM_SHA256': 'TLS_AES_128_GCM_SHA256' "
       "matches no TLS 1.2 cipher suite"},
  };
  for (const Case& c : cases) {
    TlsOptions options = Options("rsa");
    options.min_version = c.min_version;
    options.cipher_suites = c.cipher_suites;
    const Status created = TlsContext::Create(options).status();
    EXPECT_EQ(created.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(created.message(), c.message);
    const Status validated = TlsContext::ValidateOptions(options);
    EXPECT_EQ(validated.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(validated.message(), c.message);
  }
  // Only removals: no suite left.
  TlsOptions options = Options("rsa");
  options.cipher_suites = "!ALL";
  const Status none = TlsContext::ValidateOptions(options);
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.message().rfind("TLS cipher suites '!ALL': no TLS 1.2 cipher "
                                 "suite (",
                                 0),
            0u)
      << none.message();
  EXPECT_EQ(none.message().find('\n'), std::string::npos);
  // Good ones, files unread.
  EXPECT_TRUE(TlsContext::ValidateOptions(TlsOptions()).ok());
  options.min_version = "1.3";
  options.cipher_suites = "ECDHE+AESGCM:!aNULL:@STRENGTH";
  EXPECT_TRUE(TlsContext::ValidateOptions(options).ok());
}

// No session ticket, in TLS 1.2 or 1.3: the client's session has none, and
// a TLS 1.3 session is not resumable at all. TLS 1.2 sessions resume by ID
// from the context's cache, which a reload empties.
TEST_F(TlsContextTest, NoSessionTickets) {
  const std::unique_ptr<TlsContext> context = MustCreate(Options("a"));
  ASSERT_NE(context, nullptr);
  const Exchange tls13 = Connect(*context, {});
  ASSERT_TRUE(tls13.exchanged);
  ASSERT_NE(tls13.session, nullptr);
  EXPECT_EQ(SSL_SESSION_has_ticket(tls13.session.get()), 0);
  EXPECT_EQ(SSL_SESSION_is_resumable(tls13.session.get()), 0);

  const Exchange tls12 = Connect(*context, Tls12());
  ASSERT_TRUE(tls12.exchanged);
  ASSERT_NE(tls12.session, nullptr);
  EXPECT_EQ(SSL_SESSION_has_ticket(tls12.session.get()), 0);
  unsigned int id_length = 0;
  SSL_SESSION_get_id(tls12.session.get(), &id_length);
  EXPECT_GT(id_length, 0u);
  ClientConfig resume;
  resume.max_version = TLS1_2_VERSION;
  resume.resume = tls12.session.get();
  const Exchange resumed = Connect(*context, resume);
  EXPECT_TRUE(resumed.exchanged);
  EXPECT_TRUE(resumed.reused);
  ASSERT_TRUE(context->Reload().ok());
  const Exchange after_reload = Connect(*context, resume);
  EXPECT_TRUE(after_reload.exchanged);
  EXPECT_FALSE(after_reload.reused);
}

TEST_F(TlsContextTest, NotAfterIsTheCertificateExpiry) {
  const int64_t now = NowSeconds();
  for (const auto& [name, days] : {std::pair{"a", 2}, std::pair{"b", 30}}) {
    const std::unique_ptr<TlsContext> context = MustCreate(Options(name));
    ASSERT_NE(context, nullptr);
    EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path(name) + ".pem"))
        << name;
    // And about -days from when the suite made it.
    EXPECT_LE(context->not_after_unix_seconds(), now + days * 86400) << name;
    EXPECT_GT(context->not_after_unix_seconds(), now + days * 86400 - 600)
        << name;
  }
}

// cert-manager's rotation: new files renamed over the old, then a reload.
TEST_F(TlsContextTest, ReloadIfChangedRotatesTheCertificate) {
  rankwatch::testing::TempDir live;
  TlsOptions options;
  options.cert_file = live.path() + "/tls.crt";
  options.key_file = live.path() + "/tls.key";
  Replace(Path("a.pem"), options.cert_file);
  Replace(Path("a.key"), options.key_file);
  const std::unique_ptr<TlsContext> context = MustCreate(options);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(Connect(*context, {}).serial, 0xA1);
  EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path("a.pem")));
  StatusOr<bool> reloaded = context->ReloadIfChanged();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_FALSE(*reloaded);

  // A session made before the rotation keeps A's context.
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const TlsSession before = context->NewSession(fds[0]);

  Replace(Path("b.pem"), options.cert_file);
  Replace(Path("b.key"), options.key_file);
  reloaded = context->ReloadIfChanged();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(*reloaded);
  const Exchange b = Connect(*context, {});
  EXPECT_TRUE(b.exchanged);
  EXPECT_EQ(b.serial, 0xB2);
  EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path("b.pem")));
  reloaded = context->ReloadIfChanged();
  ASSERT_TRUE(reloaded.ok());
  EXPECT_FALSE(*reloaded);
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(ASN1_INTEGER_get(
                X509_get0_serialNumber(SSL_get_certificate(before.get()))),
            0xA1);
  ::close(fds[0]);
  ::close(fds[1]);

  // A key of another certificate: refused, B stays.
  Replace(Path("other.key"), options.key_file);
  const std::string mismatch = "TLS key file '" + options.key_file +
                               "' does not match the certificate '" +
                               options.cert_file + "'";
  const Status failed = context->Reload();
  EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.message(), mismatch);
  EXPECT_EQ(Connect(*context, {}).serial, 0xB2);
  // The change is still pending: each poll tries again and says why.
  for (int i = 0; i < 2; ++i) {
    reloaded = context->ReloadIfChanged();
    EXPECT_EQ(reloaded.status().message(), mismatch);
  }
  EXPECT_EQ(Connect(*context, {}).serial, 0xB2);
  EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path("b.pem")));
  // A missing file likewise.
  std::filesystem::remove(options.cert_file);
  EXPECT_EQ(context->ReloadIfChanged().status().message(),
            "TLS certificate file '" + options.cert_file +
                "': No such file or directory");
  EXPECT_EQ(Connect(*context, {}).serial, 0xB2);
  // Once the pair matches again, the next poll loads it.
  Replace(Path("a.pem"), options.cert_file);
  Replace(Path("a.key"), options.key_file);
  reloaded = context->ReloadIfChanged();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(*reloaded);
  EXPECT_EQ(Connect(*context, {}).serial, 0xA1);
  EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path("a.pem")));
}

// Kubernetes' secret volumes: tls.crt -> ..data/tls.crt, and ..data a
// symlink to a timestamped directory, swapped by a rename.
TEST_F(TlsContextTest, ReloadIfChangedFollowsASymlinkSwap) {
  rankwatch::testing::TempDir live;
  const std::string root = live.path();
  const auto publish = [&root](const std::string& version,
                               const std::string& name) {
    std::filesystem::create_directory(root + "/" + version);
    std::filesystem::copy_file(Path(name + ".pem"),
                               root + "/" + version + "/tls.crt");
    std::filesystem::copy_file(Path(name + ".key"),
                               root + "/" + version + "/tls.key");
    std::filesystem::create_directory_symlink(version, root + "/..data_tmp");
    std::filesystem::rename(root + "/..data_tmp", root + "/..data");
  };
  publish("..v1", "a");
  std::filesystem::create_symlink("..data/tls.crt", root + "/tls.crt");
  std::filesystem::create_symlink("..data/tls.key", root + "/tls.key");
  TlsOptions options;
  options.cert_file = root + "/tls.crt";
  options.key_file = root + "/tls.key";
  const std::unique_ptr<TlsContext> context = MustCreate(options);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(Connect(*context, {}).serial, 0xA1);
  publish("..v2", "b");
  StatusOr<bool> reloaded = context->ReloadIfChanged();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(*reloaded);
  EXPECT_EQ(Connect(*context, {}).serial, 0xB2);
  EXPECT_FALSE(context->ReloadIfChanged().value());
}

// Reload(options): new settings only when they load.
TEST_F(TlsContextTest, ReloadWithNewOptions) {
  const std::unique_ptr<TlsContext> context = MustCreate(Options("a"));
  ASSERT_NE(context, nullptr);
  TlsOptions bad = Options("b");
  bad.min_version = "1.4";
  EXPECT_EQ(context->Reload(bad).message(),
            "TLS minimum version '1.4': must be \"1.2\" or \"1.3\"");
  EXPECT_EQ(Connect(*context, {}).serial, 0xA1);
  TlsOptions b13 = Options("b");
  b13.min_version = "1.3";
  ASSERT_TRUE(context->Reload(b13).ok());
  EXPECT_EQ(Connect(*context, {}).serial, 0xB2);
  EXPECT_EQ(Connect(*context, Tls12()).server, TlsResult::kError);
  // Reload() keeps the new options.
  ASSERT_TRUE(context->Reload().ok());
  EXPECT_EQ(Connect(*context, Tls12()).server, TlsResult::kError);
  EXPECT_EQ(context->not_after_unix_seconds(), EndDate(Path("b.pem")));
}

// NewSession on one thread while another reloads: every handshake sees A or
// B whole (under ASan: no session uses a freed SSL_CTX).
TEST_F(TlsContextTest, HandshakesDuringReloads) {
  const std::unique_ptr<TlsContext> context = MustCreate(Options("a"));
  ASSERT_NE(context, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread reloader([&] {
    for (int i = 0; i < 40; ++i) {
      if (!context->Reload(Options(i % 2 == 0 ? "b" : "a")).ok()) ++failures;
    }
    stop = true;
  });
  int handshakes = 0;
  while (!stop || handshakes < 5) {
    const Exchange e = Connect(*context, {});
    EXPECT_TRUE(e.exchanged);
    EXPECT_TRUE(e.serial == 0xA1 || e.serial == 0xB2) << e.serial;
    ++handshakes;
  }
  reloader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Connect(*context, {}).serial, 0xA1);  // The last reload's.
}

TEST_F(TlsContextTest, ClientCertificatesWhenAClientCaIsSet) {
  TlsOptions options = Options("a");
  options.client_ca_file = Path("ca1.pem");
  const std::unique_ptr<TlsContext> context = MustCreate(options);
  ASSERT_NE(context, nullptr);
  for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    ClientConfig client;
    client.max_version = version;
    const Exchange none = Connect(*context, client);
    EXPECT_EQ(none.server, TlsResult::kError) << version;
    EXPECT_FALSE(none.exchanged) << version;

    client.cert_file = Path("client-ca1.pem");
    client.key_file = Path("client-ca1.key");
    const Exchange signed_by_ca = Connect(*context, client);
    EXPECT_EQ(signed_by_ca.server, TlsResult::kDone) << version;
    EXPECT_TRUE(signed_by_ca.exchanged) << version;

    client.cert_file = Path("client-ca2.pem");
    client.key_file = Path("client-ca2.key");
    const Exchange other_ca = Connect(*context, client);
    EXPECT_EQ(other_ca.server, TlsResult::kError) << version;
    EXPECT_FALSE(other_ca.exchanged) << version;
  }
  // Without a client CA, a client certificate is not asked for.
  const std::unique_ptr<TlsContext> open = MustCreate(Options("a"));
  ASSERT_NE(open, nullptr);
  EXPECT_TRUE(Connect(*open, {}).exchanged);
}

TEST_F(TlsContextTest, UnusableClientCaFile) {
  TlsOptions options = Options("a");
  options.client_ca_file = Path("missing.pem");
  Status s = TlsContext::Create(options).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "TLS client CA file '" + Path("missing.pem") +
                             "': No such file or directory");
  options.client_ca_file = Path("ca1.key");
  s = TlsContext::Create(options).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("TLS client CA file '" + Path("ca1.key") +
                                  "': not a PEM certificate bundle (",
                              0),
            0u)
      << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace rankwatch::http
