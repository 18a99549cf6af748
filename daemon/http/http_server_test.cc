#include "daemon/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/http/gunzip_test_util.h"
#include "daemon/http/handlers.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::http {
namespace {

using rankwatch::testing::HttpFetch;
using rankwatch::testing::HttpGet;
using rankwatch::testing::HttpResult;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kLocalhost[] = "127.0.0.1";

// A body big enough to be compressed (over the 256-byte threshold).
std::string LargeBody() {
  std::string body;
  for (int i = 0; i < 500; ++i) {
    body += "rankwatch_precision_bucket{variant=\"A\",k=\"" +
            std::to_string(i) + "\",le=\"0.1\"} 1\n";
  }
  return body;
}

std::unique_ptr<HttpServer> StartLocal(int threads = 4) {
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("127.0.0.1:0", threads);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  EXPECT_GT((*server)->port(), 0);
  return std::move(server).value();
}

// A listening TCP socket on 127.0.0.1 and a free port; closed on
// destruction.
class ListeningSocket {
 public:
  ListeningSocket() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~ListeningSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartLocal();
    ASSERT_NE(server_, nullptr);
    server_->Handle("/metrics", [body = LargeBody()](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = body;
      return r;
    });
    server_->Handle("/healthz", HealthHandler());
    server_->Handle("/readyz",
                    ReadinessHandler([this] { return ready_.load(); }));
  }

  StatusOr<HttpResult> Get(
      const std::string& path,
      const rankwatch::testing::HttpHeaders& headers = {}) {
    return HttpGet(kLocalhost, server_->port(), path, headers);
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<bool> ready_{false};
};

TEST_F(HttpServerTest, ServesMetrics) {
  StatusOr<HttpResult> r = Get("/metrics");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r->body, LargeBody());
  EXPECT_EQ(r->Header("Content-Length"), std::to_string(LargeBody().size()));
  EXPECT_EQ(r->Header("Content-Encoding"), std::nullopt);
  EXPECT_EQ(r->Header("Vary"), "Accept-Encoding");
}

TEST_F(HttpServerTest, HealthzAlwaysOk) {
  StatusOr<HttpResult> r = Get("/healthz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok\n");
  EXPECT_EQ(r->Header("Content-Type"), "text/plain; charset=utf-8");
}

TEST_F(HttpServerTest, ReadyzFollowsCallback) {
  StatusOr<HttpResult> r = Get("/readyz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, "not ready\n");
  ready_ = true;
  r = Get("/readyz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ready\n");
}

TEST_F(HttpServerTest, UnknownPathIs404) {
  for (const char* path : {"/", "/metric", "/metrics/x", "/nope"}) {
    StatusOr<HttpResult> r = Get(path);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 404) << path;
  }
  StatusOr<HttpResult> r = HttpFetch("POST", kLocalhost, server_->port(), "/x");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
}

TEST_F(HttpServerTest, QueryStringIsNotPartOfThePath) {
  StatusOr<HttpResult> r = Get("/healthz?verbose=1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, OtherMethodsAre405) {
  for (const char* method : {"POST", "PUT", "DELETE"}) {
    StatusOr<HttpResult> r = HttpFetch(method, kLocalhost, server_->port(),
                                       "/metrics", {{"Content-Length", "0"}});
    ASSERT_TRUE(r.ok()) << method << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 405) << method;
    EXPECT_EQ(r->Header("Allow"), "GET, HEAD") << method;
  }
}

TEST_F(HttpServerTest, HeadHasHeadersButNoBody) {
  StatusOr<HttpResult> r =
      HttpFetch("HEAD", kLocalhost, server_->port(), "/metrics");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Length"), std::to_string(LargeBody().size()));
  EXPECT_EQ(r->body, "");
  // The connection carries nothing after the headers: a GET still works.
  StatusOr<HttpResult> get = Get("/metrics");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->body, LargeBody());
}

TEST_F(HttpServerTest, GzipWhenAccepted) {
  StatusOr<HttpResult> r = Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Encoding"), "gzip");
  EXPECT_EQ(r->Header("Vary"), "Accept-Encoding");
  EXPECT_EQ(r->Header("Content-Length"), std::to_string(r->body.size()));
  EXPECT_LT(r->body.size(), LargeBody().size() / 5);
  EXPECT_EQ(GunzipForTest(r->body), std::optional<std::string>(LargeBody()));
}

TEST_F(HttpServerTest, NoGzipWhenRefusedOrSmall) {
  for (const char* accept : {"identity", "gzip;q=0", "deflate, br"}) {
    StatusOr<HttpResult> r = Get("/metrics", {{"Accept-Encoding", accept}});
    ASSERT_TRUE(r.ok()) << accept << ": " << r.status().ToString();
    EXPECT_EQ(r->Header("Content-Encoding"), std::nullopt) << accept;
    EXPECT_EQ(r->body, LargeBody()) << accept;
  }
  // "ok\n" would only grow.
  StatusOr<HttpResult> r = Get("/healthz", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Header("Content-Encoding"), std::nullopt);
  EXPECT_EQ(r->body, "ok\n");
}

TEST_F(HttpServerTest, HandlerExceptionIs500) {
  server_->Handle("/throw", [](const HttpRequest&) -> HttpResponse {
    throw std::runtime_error("boom");
  });
  StatusOr<HttpResult> r = Get("/throw");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 500);
  // The server keeps serving.
  r = Get("/healthz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, HandlerSeesRequest) {
  server_->Handle("/echo", [](const HttpRequest& request) {
    return HttpResponse::Text(
        200, request.method + " " + request.path + " " +
                 std::string(request.Header("x-probe").value_or("none")));
  });
  StatusOr<HttpResult> r = Get("/echo", {{"X-Probe", "42"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "GET /echo 42");
}

TEST_F(HttpServerTest, ConcurrentRequests) {
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 25;
  std::atomic<int> served{0};
  server_->Handle("/count", [&served](const HttpRequest&) {
    ++served;
    return HttpResponse::Text(200, LargeBody());
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRequestsPerThread; ++i) {
        const bool gzip = (t + i) % 2 == 0;
        StatusOr<HttpResult> r = Get(
            i % 5 == 0 ? "/metrics" : "/count",
            gzip ? rankwatch::testing::HttpHeaders{{"Accept-Encoding", "gzip"}}
                 : rankwatch::testing::HttpHeaders{});
        if (!r.ok() || r->status != 200) continue;
        const std::optional<std::string> body =
            gzip ? GunzipForTest(r->body) : r->body;
        if (body == LargeBody()) ++ok;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kRequestsPerThread);
  EXPECT_EQ(served.load(), kThreads * kRequestsPerThread * 4 / 5);
}

TEST_F(HttpServerTest, StopWaitsForRequestInFlight) {
  std::atomic<bool> entered{false};
  std::atomic<bool> finished{false};
  server_->Handle("/slow", [&](const HttpRequest&) {
    entered = true;
    rankwatch::testing::SleepFor(milliseconds(300));
    finished = true;
    return HttpResponse::Text(200, "slow\n");
  });
  const int port = server_->port();
  std::optional<StatusOr<HttpResult>> result;
  std::thread client([&] {
    result.emplace(HttpGet(kLocalhost, port, "/slow", {}, seconds(10)));
  });
  ASSERT_TRUE(
      rankwatch::testing::WaitFor([&] { return entered.load(); }, seconds(10)));
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  // Stop() returned only after the handler did: nothing it uses is
  // destroyed under it.
  EXPECT_TRUE(finished.load());
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  client.join();
  ASSERT_TRUE(result.has_value());
  // civetweb stops writing once stopping, so the client may see the
  // response or a closed connection, but is never left waiting.
  if (result->ok()) {
    EXPECT_EQ((*result)->status, 200);
  }
  // Nothing listens any more; Stop() again is a no-op.
  EXPECT_FALSE(HttpGet(kLocalhost, port, "/healthz", {}, seconds(2)).ok());
  server_->Stop();
}

TEST(HttpServerStartTest, StopIsPrompt) {
  std::unique_ptr<HttpServer> server = StartLocal();
  ASSERT_NE(server, nullptr);
  server->Handle("/healthz", HealthHandler());
  ASSERT_TRUE(HttpGet(kLocalhost, server->port(), "/healthz").ok());
  // civetweb alone notices a stop only between 2-second polls.
  const auto start = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
}

TEST(HttpServerStartTest, PortIsFreeAgainAfterStop) {
  std::unique_ptr<HttpServer> first = StartLocal();
  ASSERT_NE(first, nullptr);
  const int port = first->port();
  first.reset();
  StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start("127.0.0.1:" + std::to_string(port), 1);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)->port(), port);
}

TEST(HttpServerStartTest, BusyPortIsAnError) {
  ListeningSocket taken;
  ASSERT_GT(taken.port(), 0);
  const std::string listen = "127.0.0.1:" + std::to_string(taken.port());
  StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(listen, 2);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(server.status().message().find(listen), std::string::npos)
      << server.status().message();
  EXPECT_NE(server.status().message().find("in use"), std::string::npos)
      << server.status().message();
}

TEST(HttpServerStartTest, ForeignAddressIsAnError) {
  // TEST-NET-3 (RFC 5737): never assigned to a local interface.
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("203.0.113.7:0", 1);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kUnavailable)
      << server.status().ToString();
}

TEST(HttpServerStartTest, MalformedAddressIsInvalidArgument) {
  for (const char* listen :
       {"", "9464", "127.0.0.1", "127.0.0.1:", ":9464", "127.0.0.1:99999",
        "127.0.0.1:9464s", "127.0.0.1:9464,9465", "::1:9464", "[]:9464",
        "[::1:9464", "host name:9464", "127.0.0.1:-1"}) {
    StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(listen, 1);
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument)
        << listen << ": " << server.status().ToString();
  }
}

TEST(HttpServerStartTest, BadThreadCountIsInvalidArgument) {
  for (int threads : {0, -1, 1000}) {
    StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Start("127.0.0.1:0", threads);
    ASSERT_FALSE(server.ok()) << threads;
    EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(HttpServerStartTest, HostNamesResolve) {
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("localhost:0", 1);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Handle("/healthz", HealthHandler());
  StatusOr<HttpResult> r = HttpGet(kLocalhost, (*server)->port(), "/healthz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace rankwatch::http
