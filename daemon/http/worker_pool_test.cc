#include "daemon/http/worker_pool.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace rankwatch::http {
namespace {

// A responder whose renderings wait until released, counting them; a
// request for "/forbidden" is screened out.
class GatedResponder : public Responder {
 public:
  std::optional<HttpResponse> Screen(HttpRequest* request) const override {
    request->authenticated = true;
    if (request->path == "/forbidden") return HttpResponse::Text(403, "no\n");
    return std::nullopt;
  }
  std::string Respond(const HttpRequest& request) const override {
    ++renders_;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return open_; });
    return "rendered " + request.path;
  }
  std::string Format(const HttpResponse& response, bool) const override {
    return std::to_string(response.status) + " " + response.body;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int renders() const { return renders_.load(); }

 private:
  mutable std::atomic<int> renders_{0};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

HttpRequest Get(const std::string& path, bool gzip = false) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  if (gzip) r.headers.emplace_back("Accept-Encoding", "gzip");
  return r;
}

class WorkerPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
  void TearDown() override { close(wake_); }

  // The responses published so far, waiting up to 5 s for `n`.
  std::vector<std::pair<int, SharedBytes>> Collect(WorkerPool* pool, size_t n) {
    std::vector<std::pair<int, SharedBytes>> all;
    for (int i = 0; i < 500 && all.size() < n; ++i) {
      for (auto& done : pool->TakeDone()) all.push_back(std::move(done));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return all;
  }

  int wake_ = -1;
  FakeClock clock_;
  std::atomic<uint64_t> held_{0};
  GatedResponder responder_;
};

// Requests for one representation that arrive while it renders share the
// rendering and its bytes; another encoding renders on its own.
TEST_F(WorkerPoolTest, OneRenderingPerRepresentationInFlight) {
  HttpLimits limits;
  WorkerPool pool(&responder_, wake_, limits, &held_, &clock_);
  ASSERT_TRUE(pool.Start(2).ok());
  for (int fd = 10; fd < 15; ++fd) {
    ASSERT_FALSE(pool.Submit(fd, Get("/metrics"), "c" + std::to_string(fd)));
  }
  ASSERT_FALSE(pool.Submit(20, Get("/metrics", /*gzip=*/true), "c20"));
  for (int i = 0; i < 500 && pool.shared() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(pool.shared(), 4u);
  responder_.Open();
  const auto done = Collect(&pool, 6);
  ASSERT_EQ(done.size(), 6u);
  EXPECT_EQ(responder_.renders(), 2);  // identity and gzip.
  std::set<const ResponseBytes*> identity;
  for (const auto& [fd, bytes] : done) {
    EXPECT_EQ(bytes->bytes(), "rendered /metrics");
    if (fd != 20) identity.insert(bytes.get());
  }
  EXPECT_EQ(identity.size(), 1u);  // One buffer for the five of them.
  EXPECT_EQ(held_.load(), 2 * std::string("rendered /metrics").size());
}

TEST_F(WorkerPoolTest, QueueCapsAndScreening) {
  HttpLimits limits;
  limits.max_queued_requests = 2;
  limits.max_queued_per_client = 1;
  WorkerPool pool(&responder_, wake_, limits, &held_, &clock_);
  // Not started: everything waits in the queue.
  EXPECT_EQ(pool.Submit(1, Get("/a"), "x"), std::nullopt);
  EXPECT_EQ(pool.Submit(2, Get("/b"), "x"), Overload::kClientQueueFull);
  EXPECT_EQ(pool.Submit(3, Get("/forbidden"), "y"), std::nullopt);
  EXPECT_EQ(pool.Submit(4, Get("/c"), "z"), Overload::kQueueFull);
  responder_.Open();
  ASSERT_TRUE(pool.Start(1).ok());
  const auto done = Collect(&pool, 2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].second->bytes(), "rendered /a");  // Respond()'s bytes.
  EXPECT_EQ(done[1].second->bytes(), "403 no\n");
  // Their slots are free again.
  EXPECT_EQ(pool.Submit(5, Get("/b"), "x"), std::nullopt);
}

TEST_F(WorkerPoolTest, OverTheBudgetNothingRenders) {
  HttpLimits limits;
  limits.response_budget_bytes = 10;
  WorkerPool pool(&responder_, wake_, limits, &held_, &clock_);
  ASSERT_TRUE(pool.Start(1).ok());
  responder_.Open();
  ASSERT_FALSE(pool.Submit(1, Get("/a"), "x"));
  auto first = Collect(&pool, 1);
  ASSERT_EQ(first.size(), 1u);  // 11 bytes held now: over the budget.
  ASSERT_FALSE(pool.Submit(2, Get("/b"), "x"));
  auto refused = Collect(&pool, 1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(refused[0].second->bytes().starts_with("HTTP/1.1 503 "));
  EXPECT_EQ(responder_.renders(), 1);
  EXPECT_EQ(pool.over_budget(), 1u);
  EXPECT_EQ(held_.load(), first[0].second->bytes().size() +
                              refused[0].second->bytes().size());
  // The clients took their responses: nothing is held, the budget is free.
  first.clear();
  refused.clear();
  EXPECT_EQ(held_.load(), 0u);
  ASSERT_FALSE(pool.Submit(3, Get("/c"), "x"));
  const auto served = Collect(&pool, 1);
  ASSERT_EQ(served.size(), 1u);
  EXPECT_EQ(served[0].second->bytes(), "rendered /c");
}

TEST(FlightKeyTest, SeparatesWhatTheResponseDependsOn) {
  HttpRequest a = Get("/metrics");
  HttpRequest b = Get("/metrics", true);
  HttpRequest c = Get("/metrics");
  c.authenticated = true;
  HttpRequest head = Get("/metrics");
  head.method = "HEAD";
  HttpRequest post = Get("/-/reload");
  post.method = "POST";
  EXPECT_NE(FlightKey(a), FlightKey(b));
  EXPECT_NE(FlightKey(a), FlightKey(c));
  EXPECT_NE(FlightKey(a), FlightKey(head));
  EXPECT_EQ(FlightKey(a), FlightKey(Get("/metrics")));
  EXPECT_EQ(FlightKey(post), "");
}

}  // namespace
}  // namespace rankwatch::http
