// TlsContext: the server side of HTTPS for HttpServer, on OpenSSL 3. It
// holds the certificate chain and private key loaded at startup and makes
// one non-blocking TLS session per accepted connection; the server's I/O
// loop drives the handshake, reads and writes through TlsStep().
//
// Only TLS 1.2 and 1.3 are offered (older versions are deprecated by RFC
// 8996); renegotiation is refused, so that a client cannot make the server
// redo a handshake's work on an established connection.
//
// Ownership: the context owns its SSL_CTX; sessions (TlsSession) hold a
// reference to it and may outlive it. Thread-safety: Create() and
// NewSession() may be called from any thread; a session is used by one
// thread at a time (the I/O thread).
#ifndef RANKWATCH_DAEMON_HTTP_TLS_H_
#define RANKWATCH_DAEMON_HTTP_TLS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"

// OpenSSL's types, without its headers in ours.
typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace rankwatch::http {

struct SslFree {
  void operator()(SSL* ssl) const;
};
using TlsSession = std::unique_ptr<SSL, SslFree>;

// What a non-blocking TLS call came to.
enum class TlsResult {
  kDone,       // Completed (for reads and writes: `n` bytes moved).
  kWantRead,   // Call again when the socket is readable.
  kWantWrite,  // Call again when the socket is writable.
  kClosed,     // The peer closed the TLS stream (close_notify or EOF).
  kPlainHttp,  // The handshake's first bytes were a plain HTTP request.
  kError,      // A protocol or socket error: close the connection.
};

class TlsContext {
 public:
  // Loads the PEM certificate chain `cert_file` and PEM private key
  // `key_file` and checks that they match. InvalidArgument with a one-line
  // reason naming the file (missing, unreadable, not PEM, encrypted key,
  // key not matching the certificate).
  [[nodiscard]] static StatusOr<std::unique_ptr<TlsContext>> Create(
      const std::string& cert_file, const std::string& key_file);

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  ~TlsContext();

  // A server session on the connected socket `fd`; null when OpenSSL is
  // out of memory.
  TlsSession NewSession(int fd) const;

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}

  SSL_CTX* ctx_;
};

// One step of the handshake; kDone once it is complete.
TlsResult TlsHandshake(SSL* ssl);
// Reads up to `size` bytes; kDone with `*n` > 0, or another result.
TlsResult TlsRead(SSL* ssl, char* buffer, size_t size, size_t* n);
// Writes up to `size` bytes (a partial write is kDone with `*n` < size).
TlsResult TlsWrite(SSL* ssl, const char* data, size_t size, size_t* n);
// Sends close_notify, once, without waiting for the peer's.
void TlsShutdown(SSL* ssl);
// OpenSSL's description of the latest error of this thread ("" if none),
// and clears the thread's error queue.
std::string TlsLastError();

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_TLS_H_
