// TlsContext: the server side of HTTPS for HttpServer, on OpenSSL 3. It
// holds the certificate chain and private key (and, for client-certificate
// authentication, the trusted client CAs) in an SSL_CTX and makes one
// non-blocking TLS session per accepted connection; the server's I/O loop
// drives the handshake, reads and writes through the Tls* helpers below.
//
// Policy (issue 24): TLS 1.2 minimum (1.0 and 1.1 are deprecated by RFC
// 8996), or 1.3 only; TLS 1.2 suites limited to ECDHE with AES-GCM or
// ChaCha20-Poly1305 (forward secrecy and AEAD, Mozilla's "intermediate"
// list) unless configured, with the server's preference; TLS 1.3 with
// OpenSSL's default suites (all AEAD); no session tickets; renegotiation
// refused, so that a client cannot make the server redo a handshake's work
// on an established connection.
//
// Certificate rotation: Reload() builds a new SSL_CTX from the files and
// swaps it in; ReloadIfChanged() does so only when a file changed (checked
// with stat(), so that a symlink swap, as cert-manager and kubelet do, is
// seen). A failed reload keeps the context in use.
//
// Ownership: the TlsContext owns the current SSL_CTX through a shared
// reference; each session (TlsSession) holds its own reference to the
// SSL_CTX it was made from, so sessions may outlive a reload and the
// TlsContext itself. Thread-safety: every member function may be called
// from any thread, concurrently (NewSession on the I/O thread while another
// thread reloads); reloads are serialized. A session is used by one thread
// at a time (the I/O thread).
#ifndef RANKWATCH_DAEMON_HTTP_TLS_H_
#define RANKWATCH_DAEMON_HTTP_TLS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// The TLS 1.2 suites offered when TlsOptions::cipher_suites is empty.
inline constexpr char kDefaultTls12CipherSuites[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

struct TlsOptions {
  // PEM certificate chain (leaf first) and unencrypted PEM private key.
  std::string cert_file;
  std::string key_file;
  // PEM CA bundle: when set, clients must present a certificate signed by
  // one of these CAs (mutual TLS), else the handshake fails.
  std::string client_ca_file;
  // The lowest protocol version accepted: "1.2" or "1.3".
  std::string min_version = "1.2";
  // TLS 1.2 suites in OpenSSL's cipher-list syntax; empty for
  // kDefaultTls12CipherSuites. TLS 1.3 suites are not configurable.
  std::string cipher_suites;
};

class TlsContext {
 public:
  // Loads `options`' files and checks that the key matches the certificate.
  // InvalidArgument with a one-line reason naming the value or file (bad
  // version or cipher list; file missing, unreadable, not PEM, encrypted
  // key, key not matching the certificate, CA bundle without a
  // certificate).
  [[nodiscard]] static StatusOr<std::unique_ptr<TlsContext>> Create(
      const TlsOptions& options);
  // Create() with the default policy and no client authentication.
  [[nodiscard]] static StatusOr<std::unique_ptr<TlsContext>> Create(
      const std::string& cert_file, const std::string& key_file);

  // What Create() checks without reading the files: min_version and
  // cipher_suites (each name in the list must match a TLS 1.2 suite, so a
  // misspelt one is not silently dropped). For check-config.
  [[nodiscard]] static Status ValidateOptions(const TlsOptions& options);

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  ~TlsContext();

  // A server session on the connected socket `fd`, made from the current
  // SSL_CTX; null when OpenSSL is out of memory.
  TlsSession NewSession(int fd) const;

  // Re-reads the files into a new SSL_CTX and makes it current; on error the
  // current one stays and the error names the file, as Create()'s do.
  [[nodiscard]] Status Reload();
  // Reload() with new options (paths, version, suites), which replace the
  // current ones only on success.
  [[nodiscard]] Status Reload(const TlsOptions& options);
  // Reload() when a file differs (device, inode, size or modification time,
  // through symlinks) from when the current SSL_CTX was loaded: true if it
  // reloaded, false if nothing changed. A failed reload is tried again on
  // the next call, and returns its error each time until the files load
  // (the caller rate-limits its log).
  [[nodiscard]] StatusOr<bool> ReloadIfChanged();

  // The current leaf certificate's notAfter, in seconds since the Unix
  // epoch (for the expiry gauge).
  int64_t not_after_unix_seconds() const;

 private:
  // What identifies one version of a file.
  struct FileStamp {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_seconds = 0;
    int64_t mtime_nanoseconds = 0;
    bool operator==(const FileStamp&) const = default;
  };
  // One loaded configuration.
  struct Loaded {
    std::shared_ptr<SSL_CTX> ctx;
    int64_t not_after = 0;
    std::vector<FileStamp> stamps;  // Of files(options), in that order.
  };

  TlsContext() = default;

  static std::vector<std::string> Files(const TlsOptions& options);
  static StatusOr<std::vector<FileStamp>> Stamp(const TlsOptions& options);
  static StatusOr<Loaded> Load(const TlsOptions& options);
  // Makes `loaded` current; reload_mu_ held.
  void Install(const TlsOptions& options, Loaded loaded);
  std::shared_ptr<SSL_CTX> Current() const;

  // Serializes reloads; guards options_ and stamps_.
  std::mutex reload_mu_;
  TlsOptions options_;
  std::vector<FileStamp> stamps_;

  // Guards ctx_ and not_after_; held only to copy or swap them, never
  // while loading files, so NewSession does not wait for a reload.
  mutable std::mutex mu_;
  std::shared_ptr<SSL_CTX> ctx_;
  int64_t not_after_ = 0;
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
