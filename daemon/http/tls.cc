#include "daemon/http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>
#include <vector>

namespace rankwatch::http {

namespace {

// OpenSSL's default TLS 1.3 suites (TLS_DEFAULT_CIPHERSUITES), all AEAD,
// set explicitly so that a system-wide openssl.cnf cannot widen them.
constexpr char kTls13CipherSuites[] =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
    "TLS_AES_128_GCM_SHA256";

// Session-ID context: required for a session to be resumed when client
// certificates are verified; any constant names "this server".
constexpr unsigned char kSessionIdContext[] = "rankwatch";

// OpenSSL's reason for the oldest error queued on this thread, and clears
// the queue; `fallback` when nothing is queued.
std::string PopError(std::string_view fallback) {
  const unsigned long code = ERR_peek_error();
  ERR_clear_error();
  if (code == 0) return std::string(fallback);
  const char* reason = ERR_reason_error_string(code);
  if (reason != nullptr) return reason;
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

// Never prompts for the passphrase of an encrypted key on the terminal: a
// daemon has none. The key is then refused with a clear error.
int NoPassphrase(char*, int, int, void*) { return 0; }

// A file OpenSSL is about to read: its own errors ("no such file" from the
// BIO layer, "no start line") do not always say which, so errno first.
Status CheckReadable(std::string_view what, const std::string& path) {
  if (path.empty()) {
    return Status::InvalidArgument(std::string(what) + " file not set");
  }
  if (access(path.c_str(), R_OK) != 0) {
    return Status::InvalidArgument(std::string(what) + " file '" + path +
                                   "': " + std::strerror(errno));
  }
  return Status::Ok();
}

// The files of `options` with what each is, in a fixed order.
std::vector<std::pair<std::string_view, std::string>> NamedFiles(
    const TlsOptions& options) {
  std::vector<std::pair<std::string_view, std::string>> files = {
      {"TLS certificate", options.cert_file}, {"TLS key", options.key_file}};
  if (!options.client_ca_file.empty()) {
    files.emplace_back("TLS client CA", options.client_ca_file);
  }
  return files;
}

StatusOr<int> MinVersion(const std::string& version) {
  if (version == "1.2") return TLS1_2_VERSION;
  if (version == "1.3") return TLS1_3_VERSION;
  return Status::InvalidArgument("TLS minimum version '" + version +
                                 "': must be \"1.2\" or \"1.3\"");
}

bool IsCipherListSeparator(char c) {
  // OpenSSL's ITEM_SEP in ssl/ssl_ciph.c.
  return c == ':' || c == ' ' || c == ';' || c == ',';
}

// Sets the TLS 1.2 cipher list `list` on `ctx`. OpenSSL ignores names that
// match nothing as long as one matches, so a misspelt suite would silently
// vanish: each name that adds suites (no !, -, + or @ prefix) is first
// tried alone.
Status SetCipherList(SSL_CTX* ctx, const std::string& list) {
  const std::string quoted = "TLS cipher suites '" + list + "': ";
  size_t begin = 0;
  while (begin < list.size()) {
    size_t end = begin;
    while (end < list.size() && !IsCipherListSeparator(list[end])) ++end;
    const std::string name = list.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty() ||
        std::string_view("!-+@").find(name[0]) != std::string_view::npos) {
      continue;
    }
    if (SSL_CTX_set_cipher_list(ctx, name.c_str()) != 1) {
      ERR_clear_error();
      return Status::InvalidArgument(quoted + "'" + name +
                                     "' matches no TLS 1.2 cipher suite");
    }
  }
  ERR_clear_error();
  if (SSL_CTX_set_cipher_list(ctx, list.c_str()) != 1) {
    return Status::InvalidArgument(quoted + "no TLS 1.2 cipher suite (" +
                                   PopError("empty list") + ")");
  }
  return Status::Ok();
}

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// The protocol policy of tls.h on a fresh `ctx`, and `options`' version and
// suites.
Status SetPolicy(SSL_CTX* ctx, const TlsOptions& options) {
  StatusOr<int> min_version = MinVersion(options.min_version);
  if (!min_version.ok()) return min_version.status();
  RW_RETURN_IF_ERROR(SetCipherList(ctx, options.cipher_suites.empty()
                                            ? kDefaultTls12CipherSuites
                                            : options.cipher_suites));
  if (SSL_CTX_set_min_proto_version(ctx, *min_version) != 1 ||
      SSL_CTX_set_ciphersuites(ctx, kTls13CipherSuites) != 1) {
    return Status::Internal("cannot set the TLS protocol policy: " +
                            PopError("unknown error"));
  }
  // Session tickets are off: a ticket is the session's secrets encrypted
  // under a key the SSL_CTX makes once and keeps, so with tickets on, one
  // key for the process lifetime would decrypt every resumed session (and,
  // in TLS 1.2, the traffic of every session it ever sealed), which undoes
  // forward secrecy. SSL_OP_NO_TICKET alone would still send TLS 1.3
  // tickets (stateful ones), hence num_tickets 0. TLS 1.2 sessions still
  // resume by session ID from the SSL_CTX's own cache (entries expire after
  // 300 s and are dropped with the SSL_CTX on reload); a scraper on a kept
  // connection does not handshake again anyway.
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (SSL_CTX_set_num_tickets(ctx, 0) != 1 ||
      SSL_CTX_set_session_id_context(ctx, kSessionIdContext,
                                     sizeof(kSessionIdContext) - 1) != 1) {
    return Status::Internal("cannot turn TLS session tickets off: " +
                            PopError("unknown error"));
  }
  // Partial writes keep the I/O loop's accounting per record; released
  // buffers keep thousands of quiet connections small.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_default_passwd_cb(ctx, NoPassphrase);
  return Status::Ok();
}

Status KeyMismatch(const TlsOptions& options) {
  ERR_clear_error();
  return Status::InvalidArgument("TLS key file '" + options.key_file +
                                 "' does not match the certificate '" +
                                 options.cert_file + "'");
}

Status UseCertificateAndKey(SSL_CTX* ctx, const TlsOptions& options) {
  const std::string& cert_file = options.cert_file;
  const std::string& key_file = options.key_file;
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status::InvalidArgument("TLS certificate file '" + cert_file +
                                   "': not a PEM certificate chain (" +
                                   PopError("unknown error") + ")");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) !=
      1) {
    const unsigned long code = ERR_peek_last_error();
    // A key that does not match is reported here already.
    if (ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH ||
        ERR_GET_REASON(code) == X509_R_KEY_TYPE_MISMATCH) {
      return KeyMismatch(options);
    }
    return Status::InvalidArgument("TLS key file '" + key_file +
                                   "': not an unencrypted PEM private key (" +
                                   PopError("unknown error") + ")");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) return KeyMismatch(options);
  return Status::Ok();
}

// Clients must then present a certificate that chains to a CA of the
// bundle; the CAs' names are sent in the CertificateRequest so that a
// client with several certificates picks the right one.
Status UseClientCa(SSL_CTX* ctx, const std::string& ca_file) {
  const auto not_a_bundle = [&ca_file] {
    return Status::InvalidArgument("TLS client CA file '" + ca_file +
                                   "': not a PEM certificate bundle (" +
                                   PopError("no certificate found") + ")");
  };
  if (SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) != 1) {
    return not_a_bundle();
  }
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str());
  if (names == nullptr) return not_a_bundle();
  SSL_CTX_set_client_CA_list(ctx, names);  // Takes `names`.
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                     nullptr);
  return Status::Ok();
}

StatusOr<int64_t> NotAfter(SSL_CTX* ctx, const std::string& cert_file) {
  // The certificate set last by use_certificate_chain_file: the leaf.
  const X509* leaf = SSL_CTX_get0_certificate(ctx);
  std::tm tm{};
  if (leaf == nullptr || ASN1_TIME_to_tm(X509_get0_notAfter(leaf), &tm) != 1) {
    return Status::InvalidArgument("TLS certificate file '" + cert_file +
                                   "': unreadable notAfter (" +
                                   PopError("unknown error") + ")");
  }
  return static_cast<int64_t>(timegm(&tm));
}

TlsResult ResultOf(SSL* ssl, int rc) {
  switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
      return TlsResult::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return TlsResult::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return TlsResult::kClosed;
    case SSL_ERROR_SYSCALL:
      // EOF without close_notify is kClosed (SSL_OP_IGNORE_UNEXPECTED_EOF);
      // here a socket error, or EOF in the handshake.
      if (ERR_peek_error() == 0 && errno == 0) return TlsResult::kClosed;
      return TlsResult::kError;
    case SSL_ERROR_SSL:
      // Someone spoke plain HTTP to the HTTPS port: answered in plain text.
      if (ERR_GET_REASON(ERR_peek_error()) == SSL_R_HTTP_REQUEST) {
        return TlsResult::kPlainHttp;
      }
      return TlsResult::kError;
    default:
      return TlsResult::kError;
  }
}

}  // namespace

void SslFree::operator()(SSL* ssl) const { SSL_free(ssl); }

Status TlsContext::ValidateOptions(const TlsOptions& options) {
  StatusOr<int> min_version = MinVersion(options.min_version);
  if (!min_version.ok()) return min_version.status();
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, SslCtxFree> scratch(
      SSL_CTX_new(TLS_server_method()));
  if (scratch == nullptr) {
    return Status::Internal("cannot create a TLS context: " +
                            PopError("out of memory"));
  }
  return SetPolicy(scratch.get(), options);
}

StatusOr<std::vector<TlsContext::FileStamp>> TlsContext::Stamp(
    const TlsOptions& options) {
  std::vector<FileStamp> stamps;
  for (const auto& [what, path] : NamedFiles(options)) {
    // stat, not lstat: a file replaced by swapping a symlink (cert-manager's
    // ..data) is a new target with the same path.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      return Status::InvalidArgument(std::string(what) + " file '" + path +
                                     "': " + std::strerror(errno));
    }
    stamps.push_back({st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                      st.st_mtim.tv_nsec});
  }
  return stamps;
}

StatusOr<TlsContext::Loaded> TlsContext::Load(const TlsOptions& options) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (raw == nullptr) {
    return Status::Internal("cannot create a TLS context: " +
                            PopError("out of memory"));
  }
  Loaded loaded;
  loaded.ctx = std::shared_ptr<SSL_CTX>(raw, SslCtxFree());
  // The options first: a bad version or suite is reported as such, whatever
  // the files.
  RW_RETURN_IF_ERROR(SetPolicy(raw, options));
  for (const auto& [what, path] : NamedFiles(options)) {
    RW_RETURN_IF_ERROR(CheckReadable(what, path));
  }
  // Stamped before reading: a file that changes while it is read is seen
  // as changed by the next ReloadIfChanged.
  StatusOr<std::vector<FileStamp>> stamps = Stamp(options);
  if (!stamps.ok()) return stamps.status();
  loaded.stamps = std::move(stamps).value();
  RW_RETURN_IF_ERROR(UseCertificateAndKey(raw, options));
  if (!options.client_ca_file.empty()) {
    RW_RETURN_IF_ERROR(UseClientCa(raw, options.client_ca_file));
  }
  StatusOr<int64_t> not_after = NotAfter(raw, options.cert_file);
  if (!not_after.ok()) return not_after.status();
  loaded.not_after = *not_after;
  return loaded;
}

void TlsContext::Install(const TlsOptions& options, Loaded loaded) {
  options_ = options;
  stamps_ = std::move(loaded.stamps);
  std::shared_ptr<SSL_CTX> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::exchange(ctx_, std::move(loaded.ctx));
    not_after_ = loaded.not_after;
  }
  // `old` is freed here, outside mu_, unless sessions still hold it.
}

StatusOr<std::unique_ptr<TlsContext>> TlsContext::Create(
    const TlsOptions& options) {
  StatusOr<Loaded> loaded = Load(options);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<TlsContext> context(new TlsContext());
  std::lock_guard<std::mutex> lock(context->reload_mu_);
  context->Install(options, std::move(loaded).value());
  return context;
}

StatusOr<std::unique_ptr<TlsContext>> TlsContext::Create(
    const std::string& cert_file, const std::string& key_file) {
  TlsOptions options;
  options.cert_file = cert_file;
  options.key_file = key_file;
  return Create(options);
}

TlsContext::~TlsContext() = default;

Status TlsContext::Reload() {
  std::lock_guard<std::mutex> lock(reload_mu_);
  const TlsOptions options = options_;
  StatusOr<Loaded> loaded = Load(options);
  if (!loaded.ok()) return loaded.status();
  Install(options, std::move(loaded).value());
  return Status::Ok();
}

Status TlsContext::Reload(const TlsOptions& options) {
  std::lock_guard<std::mutex> lock(reload_mu_);
  StatusOr<Loaded> loaded = Load(options);
  if (!loaded.ok()) return loaded.status();
  Install(options, std::move(loaded).value());
  return Status::Ok();
}

StatusOr<bool> TlsContext::ReloadIfChanged() {
  std::lock_guard<std::mutex> lock(reload_mu_);
  StatusOr<std::vector<FileStamp>> stamps = Stamp(options_);
  if (!stamps.ok()) return stamps.status();
  if (*stamps == stamps_) return false;
  const TlsOptions options = options_;
  StatusOr<Loaded> loaded = Load(options);
  if (!loaded.ok()) return loaded.status();
  Install(options, std::move(loaded).value());
  return true;
}

int64_t TlsContext::not_after_unix_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return not_after_;
}

std::shared_ptr<SSL_CTX> TlsContext::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ctx_;
}

TlsSession TlsContext::NewSession(int fd) const {
  // The session takes its own reference to the SSL_CTX (SSL_new up-refs
  // it), so a reload after this does not affect it.
  const std::shared_ptr<SSL_CTX> ctx = Current();
  ERR_clear_error();
  TlsSession ssl(SSL_new(ctx.get()));
  if (ssl == nullptr || SSL_set_fd(ssl.get(), fd) != 1) {
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_accept_state(ssl.get());
  return ssl;
}

TlsResult TlsHandshake(SSL* ssl) {
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_do_handshake(ssl);
  return rc == 1 ? TlsResult::kDone : ResultOf(ssl, rc);
}

TlsResult TlsRead(SSL* ssl, char* buffer, size_t size, size_t* n) {
  ERR_clear_error();
  errno = 0;
  *n = 0;
  const int rc = SSL_read_ex(ssl, buffer, size, n);
  return rc == 1 ? TlsResult::kDone : ResultOf(ssl, rc);
}

TlsResult TlsWrite(SSL* ssl, const char* data, size_t size, size_t* n) {
  ERR_clear_error();
  errno = 0;
  *n = 0;
  const int rc = SSL_write_ex(ssl, data, size, n);
  return rc == 1 ? TlsResult::kDone : ResultOf(ssl, rc);
}

void TlsShutdown(SSL* ssl) {
  ERR_clear_error();
  (void)SSL_shutdown(ssl);
  ERR_clear_error();
}

std::string TlsLastError() { return PopError(""); }

}  // namespace rankwatch::http
