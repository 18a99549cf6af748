#include "daemon/http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace rankwatch::http {

namespace {

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

StatusOr<std::unique_ptr<TlsContext>> TlsContext::Create(
    const std::string& cert_file, const std::string& key_file) {
  RW_RETURN_IF_ERROR(CheckReadable("TLS certificate", cert_file));
  RW_RETURN_IF_ERROR(CheckReadable("TLS key", key_file));
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    return Status::Internal("cannot create a TLS context: " +
                            PopError("out of memory"));
  }
  std::unique_ptr<TlsContext> context(new TlsContext(ctx));
  // RFC 8996: TLS 1.0 and 1.1 are deprecated.
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Partial writes keep the I/O loop's accounting per record; released
  // buffers keep thousands of quiet connections small.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_default_passwd_cb(ctx, NoPassphrase);
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
      ERR_clear_error();
      return Status::InvalidArgument("TLS key file '" + key_file +
                                     "' does not match the certificate '" +
                                     cert_file + "'");
    }
    return Status::InvalidArgument("TLS key file '" + key_file +
                                   "': not an unencrypted PEM private key (" +
                                   PopError("unknown error") + ")");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS key file '" + key_file +
                                   "' does not match the certificate '" +
                                   cert_file + "'");
  }
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsSession TlsContext::NewSession(int fd) const {
  ERR_clear_error();
  TlsSession ssl(SSL_new(ctx_));
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
