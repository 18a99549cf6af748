// WorkerPool: HttpServer's bounded pool of threads that run handlers, with
// the queue of complete requests and the renderings in flight.
//
// Requests wait in one queue, capped in all and per client (HttpLimits);
// Submit() refuses beyond either, so that one client's burst cannot push
// another's scrape past its timeout. A GET or HEAD that arrives while the
// same representation renders for another client joins that rendering
// (single flight) and gets the same bytes: concurrent scrapes of a large
// /metrics cost one render and one buffer. Response bytes are shared
// (ResponseBytes) and counted in `held` while any connection holds them;
// at the response budget a new request is answered 503 without rendering.
//
// Ownership: the responder, the clock and `held` must outlive the pool;
// Stop() (or the destructor) joins the threads. Thread-safety: every
// method may be called from any thread; the responder is called from
// several workers at once.
#ifndef RANKWATCH_DAEMON_HTTP_WORKER_POOL_H_
#define RANKWATCH_DAEMON_HTTP_WORKER_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "daemon/http/http_limits.h"
#include "daemon/http/http_message.h"

namespace rankwatch::http {

// Response bytes, shared by the connections that asked for the same
// rendering, counted in `held` while alive. Immutable; thread-safe.
class ResponseBytes {
 public:
  ResponseBytes(std::string bytes, std::atomic<uint64_t>* held);
  ~ResponseBytes();
  ResponseBytes(const ResponseBytes&) = delete;
  ResponseBytes& operator=(const ResponseBytes&) = delete;

  const std::string& bytes() const { return bytes_; }

 private:
  const std::string bytes_;
  std::atomic<uint64_t>* const held_;
};
using SharedBytes = std::shared_ptr<const ResponseBytes>;

// What the pool asks of the server for each request; called from several
// workers at once.
class Responder {
 public:
  virtual ~Responder() = default;
  // The answer before any handler runs (403, 401), if any; sets
  // request->authenticated.
  virtual std::optional<HttpResponse> Screen(HttpRequest* request) const = 0;
  // The complete response bytes of the handler's answer.
  virtual std::string Respond(const HttpRequest& request) const = 0;
  // The bytes of `response`.
  virtual std::string Format(const HttpResponse& response,
                             bool head_only) const = 0;
};

// Wakes the I/O loop waiting on `event_fd` (an eventfd).
void Wake(int event_fd);

class WorkerPool {
 public:
  // Finished responses are announced on `wake_fd`.
  WorkerPool(const Responder* responder, int wake_fd, const HttpLimits& limits,
             std::atomic<uint64_t>* held, const Clock* clock);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  [[nodiscard]] Status Start(int threads);

  // Queues `request` of connection `fd` from `client` (its caps' key); the
  // Overload when a queue cap refuses it.
  std::optional<Overload> Submit(int fd, HttpRequest request,
                                 const std::string& client);

  // Finished responses (fd, bytes), oldest first.
  std::vector<std::pair<int, SharedBytes>> TakeDone();

  // Drops the jobs not started; returns their connections.
  std::vector<int> DropQueued();

  // Whether no handler runs and no response waits to be taken.
  bool Quiet();

  void Stop();

  // Requests that joined a rendering in flight; requests refused for the
  // response budget.
  uint64_t shared() const { return shared_.load(); }
  uint64_t over_budget() const { return over_budget_.load(); }

 private:
  struct Job {
    int fd;
    HttpRequest request;
    std::string client;
  };
  struct Waiter {
    int fd;
    std::string client;
  };

  void Run();
  // The response to `job`, or null when it joined a rendering in flight
  // (which publishes it).
  SharedBytes Serve(Job& job);
  SharedBytes Make(std::string bytes);
  // Under mu_.
  void ReleaseLocked(const std::string& client);
  void PublishLocked(int fd, const std::string& client, SharedBytes bytes);

  const Responder* const responder_;
  const int wake_fd_;
  const HttpLimits limits_;
  std::atomic<uint64_t>* const held_;
  const Clock* const clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  // Requests queued, running or waiting on a flight, per client key.
  std::unordered_map<std::string, size_t> per_client_;
  // Renderings in flight by FlightKey(), with the requests that joined.
  std::unordered_map<std::string, std::vector<Waiter>> flights_;
  std::vector<std::pair<int, SharedBytes>> done_;
  int running_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> shared_{0};
  std::atomic<uint64_t> over_budget_{0};
  std::vector<std::thread> threads_;
};

// Which rendering `request` can share: its method, encoding, whether its
// client is known, and path (what its response depends on once screened);
// "" when it cannot be shared (a method with effects).
std::string FlightKey(const HttpRequest& request);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_WORKER_POOL_H_
