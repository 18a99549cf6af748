// IoLoop: HttpServer's I/O thread. It owns the listening socket and every
// connection: accepts (shedding at the connection caps, ConnectionTable;
// resetting a client over its TLS handshake rate), reads request heads and
// bodies without blocking, runs TLS handshakes, hands complete requests to
// the WorkerPool (503 when its queues refuse them), writes the responses
// it finishes, and closes connections at their deadlines (reset when a
// response is left unsent). It also re-reads changed TLS files and gives
// freed response memory back to the system after a burst.
//
// Ownership: takes the descriptors it is given and closes them; the pool,
// the TLS context, the clock and `held` must outlive it. Thread-safety:
// Run() is the thread; RequestStop() and the counters may be called from
// any thread, nothing else.
#ifndef RANKWATCH_DAEMON_HTTP_IO_LOOP_H_
#define RANKWATCH_DAEMON_HTTP_IO_LOOP_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/clock.h"
#include "daemon/http/http_limits.h"
#include "daemon/http/tls.h"
#include "daemon/http/worker_pool.h"

namespace rankwatch::http {

class IoLoop {
 public:
  // `tls` is null for plain HTTP. `held` counts the response bytes alive.
  IoLoop(int listen_fd, int epoll_fd, int wake_fd, const HttpLimits& limits,
         WorkerPool* pool, TlsContext* tls, const Clock* clock,
         std::atomic<uint64_t>* held);
  ~IoLoop();
  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  // Serves until RequestStop(), then closes every connection, giving the
  // responses of handlers still running one write.
  void Run();
  void RequestStop();

  uint64_t tls_handshake_errors() const;
  uint64_t overloads(Overload reason) const;
  uint64_t tls_reloads() const;
  uint64_t tls_reload_errors() const;
  // Counts a certificate reload done elsewhere (HttpServer::ReloadTls).
  void CountTlsReload(bool ok);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_IO_LOOP_H_
