// HttpLimits: the bounds of HttpServer (connections, deadlines, sizes,
// queues, memory, TLS handshakes), and Overload, why a request or a
// connection was turned away at one of them. Shared by the server, its
// worker pool and its I/O loop.
//
// Plain values; thread-safe to read.
#ifndef RANKWATCH_DAEMON_HTTP_HTTP_LIMITS_H_
#define RANKWATCH_DAEMON_HTTP_HTTP_LIMITS_H_

#include <chrono>
#include <cstddef>
#include <string_view>

namespace rankwatch::http {

// The server's bounds. The defaults are what the daemon runs with
// (documented in docs/operations.md, "HTTP endpoint under load"); tests
// shrink them.
struct HttpLimits {
  // Open connections in all; lowered at Start() to fit the open-file limit
  // (less 256 descriptors for the rest of the daemon).
  size_t max_connections = 4096;
  // Open connections from one client IP address. A scraper needs one or
  // two; kubelet probes a few.
  size_t max_connections_per_client = 64;
  // A connection that sends no byte in this long is closed.
  std::chrono::milliseconds idle_timeout{5000};
  // The request head must be complete this long after its first byte...
  std::chrono::milliseconds header_timeout{5000};
  // ... and the body (discarded: no endpoint takes one) this long after it.
  std::chrono::milliseconds request_timeout{10000};
  // The response must be taken by the client this long after it is ready.
  std::chrono::milliseconds write_timeout{10000};
  // A longer request head is 431 (400 if its request line is unfinished).
  // Prometheus sends about 300 bytes.
  size_t max_head_bytes = 8192;
  // A longer request body is 413.
  size_t max_body_bytes = 65536;
  // Complete requests waiting for a worker (or for a rendering they
  // joined), in all and from one client; 503 beyond either. A scrape needs
  // one; the per-client cap keeps one client's burst from delaying others.
  size_t max_queued_requests = 256;
  size_t max_queued_per_client = 8;
  // Bytes of responses held until their clients take them, in all (a
  // shared rendering counts once); new requests beyond it are 503 without
  // rendering. 64 MiB holds about 30 renderings of a 2 MB /metrics.
  size_t response_budget_bytes = size_t{64} << 20;
  // The kernel's send buffer per connection (SO_SNDBUF, which the kernel
  // doubles): what a client that never reads can hold in the kernel. 64
  // KiB moves a 2 MB body in well under a second at LAN round trips.
  int send_buffer_bytes = 65536;
  // Full TLS handshakes accepted per second from one client (a token
  // bucket of this size); beyond, its new connections are reset before
  // any TLS work. A scraper makes one per scrape.
  int tls_handshakes_per_second_per_client = 20;
};

// Why a request or connection was turned away for load (HttpStats).
enum class Overload {
  kResponseBudget,    // 503: response_budget_bytes held.
  kQueueFull,         // 503: max_queued_requests waiting.
  kClientQueueFull,   // 503: max_queued_per_client of its client waiting.
  kTlsHandshakeRate,  // Connection reset: its client's handshake rate.
};
inline constexpr int kNumOverloads = 4;
std::string_view OverloadName(Overload reason);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HTTP_LIMITS_H_
