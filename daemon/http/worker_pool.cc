#include "daemon/http/worker_pool.h"

#include <unistd.h>

#include <system_error>

#include "daemon/http/gzip.h"
#include "daemon/http/response_format.h"

namespace rankwatch::http {

ResponseBytes::ResponseBytes(std::string bytes, std::atomic<uint64_t>* held)
    : bytes_(std::move(bytes)), held_(held) {
  held_->fetch_add(bytes_.size());
}

ResponseBytes::~ResponseBytes() { held_->fetch_sub(bytes_.size()); }

void Wake(int event_fd) {
  const uint64_t one = 1;
  (void)!write(event_fd, &one, sizeof(one));
}

std::string FlightKey(const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") return "";
  const std::optional<std::string_view> accept =
      request.Header("Accept-Encoding");
  const bool gzip = accept.has_value() && AcceptsGzip(*accept);
  return request.method + (gzip ? " gzip " : " identity ") +
         (request.authenticated ? "known " : "stranger ") + request.path;
}

WorkerPool::WorkerPool(const Responder* responder, int wake_fd,
                       const HttpLimits& limits, std::atomic<uint64_t>* held,
                       const Clock* clock)
    : responder_(responder),
      wake_fd_(wake_fd),
      limits_(limits),
      held_(held),
      clock_(clock) {}

WorkerPool::~WorkerPool() { Stop(); }

Status WorkerPool::Start(int threads) {
  try {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
  } catch (const std::system_error& e) {
    Stop();
    return Status::Internal(std::string("cannot start HTTP workers: ") +
                            e.what());
  }
  return Status::Ok();
}

std::optional<Overload> WorkerPool::Submit(int fd, HttpRequest request,
                                           const std::string& client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= limits_.max_queued_requests) {
      return Overload::kQueueFull;
    }
    size_t& mine = per_client_[client];
    if (mine >= limits_.max_queued_per_client) {
      return Overload::kClientQueueFull;
    }
    ++mine;
    queue_.push_back({fd, std::move(request), client});
  }
  cv_.notify_one();
  return std::nullopt;
}

std::vector<std::pair<int, SharedBytes>> WorkerPool::TakeDone() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(done_, {});
}

std::vector<int> WorkerPool::DropQueued() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> fds;
  for (const Job& job : queue_) {
    fds.push_back(job.fd);
    ReleaseLocked(job.client);
  }
  queue_.clear();
  return fds;
}

bool WorkerPool::Quiet() {
  std::lock_guard<std::mutex> lock(mu_);
  return running_ == 0 && queue_.empty() && done_.empty();
}

void WorkerPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void WorkerPool::ReleaseLocked(const std::string& client) {
  const auto it = per_client_.find(client);
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
}

void WorkerPool::PublishLocked(int fd, const std::string& client,
                               SharedBytes bytes) {
  done_.emplace_back(fd, std::move(bytes));
  ReleaseLocked(client);
}

void WorkerPool::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping.
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    SharedBytes bytes = Serve(job);
    lock.lock();
    if (bytes != nullptr) PublishLocked(job.fd, job.client, std::move(bytes));
    --running_;
    Wake(wake_fd_);
  }
}

SharedBytes WorkerPool::Serve(Job& job) {
  const bool head = job.request.method == "HEAD";
  if (std::optional<HttpResponse> early = responder_->Screen(&job.request)) {
    return Make(responder_->Format(*early, head));
  }
  const std::string key = FlightKey(job.request);
  {
    // Joining, or else opening, a flight under one lock: two workers must
    // never both render the same key.
    std::lock_guard<std::mutex> lock(mu_);
    if (!key.empty()) {
      const auto it = flights_.find(key);
      if (it != flights_.end()) {
        it->second.push_back({job.fd, job.client});
        ++shared_;
        return nullptr;
      }
    }
    if (held_->load() >= limits_.response_budget_bytes) {
      ++over_budget_;
      return Make(FormatError(503, "busy: too many responses not yet taken",
                              clock_->NowMillis()));
    }
    if (!key.empty()) flights_.emplace(key, std::vector<Waiter>());
  }
  SharedBytes bytes = Make(responder_->Respond(job.request));
  if (key.empty()) return bytes;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = flights_.find(key);
  for (const Waiter& w : it->second) PublishLocked(w.fd, w.client, bytes);
  flights_.erase(it);
  return bytes;
}

SharedBytes WorkerPool::Make(std::string bytes) {
  return std::make_shared<const ResponseBytes>(std::move(bytes), held_);
}

}  // namespace rankwatch::http
