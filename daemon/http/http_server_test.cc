#include "daemon/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
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
#include "tests/testing/busy_port.h"
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
    // A readiness-like handler whose answer the test flips.
    server_->Handle("/readyz", [this](const HttpRequest&) {
      return ready_.load() ? HttpResponse::Text(200, "ready\n")
                           : HttpResponse::Text(503, "not ready\n");
    });
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

// A path registered for POST (as POST /-/reload) serves POST only; its
// request body is discarded.
TEST_F(HttpServerTest, PathWithItsOwnMethods) {
  server_->Handle("/-/reload", {"POST"}, [](const HttpRequest& request) {
    return HttpResponse::Text(200, request.method + " done\n");
  });
  StatusOr<HttpResult> post = HttpFetch("POST", kLocalhost, server_->port(),
                                        "/-/reload", {{"Content-Length", "0"}});
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->status, 200);
  EXPECT_EQ(post->body, "POST done\n");
  StatusOr<HttpResult> get = Get("/-/reload");
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->Header("Allow"), "POST");
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
  // Each /count request was rendered or joined a rendering in flight
  // (issue 24: concurrent requests for one path share it); the joins
  // counted also include /metrics requests.
  const uint64_t shared = server_->stats().shared_responses;
  EXPECT_LE(served.load(), kThreads * kRequestsPerThread * 4 / 5);
  EXPECT_GE(served.load() + static_cast<int>(shared),
            kThreads * kRequestsPerThread * 4 / 5);
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
  // The response gets one write while stopping, so the client may see it
  // or a closed connection, but is never left waiting.
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
  rankwatch::testing::BusyPort taken;
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

// A blocking client socket connected to 127.0.0.1:`port` from `source`
// (any 127.0.0.0/8 address reaches it on Linux); closed on destruction.
class RawClient {
 public:
  RawClient(int port, const char* source = kLocalhost) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<uint16_t>(port));
    connected_ =
        fd_ >= 0 &&
        ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)) == 0 &&
        ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0;
    // Lets the server's I/O thread accept it before the next one comes.
    rankwatch::testing::SleepFor(milliseconds(30));
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(data.size());
  }

  // What the server sends until it closes, or nullopt if it is still open
  // after `timeout`.
  std::optional<std::string> ReadUntilClosed(milliseconds timeout) {
    std::string data;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const auto left = std::chrono::duration_cast<milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() < 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) != 1) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return data;  // Closed (or reset).
      data.append(buffer, static_cast<size_t>(n));
    }
  }

  // Whether the server has closed the connection, without waiting.
  bool ClosedByServer() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return false;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK) <= 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::unique_ptr<HttpServer> StartWithLimits(const HttpLimits& limits) {
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("127.0.0.1:0", 2, limits);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  (*server)->Handle("/healthz", HealthHandler());
  return std::move(server).value();
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

TEST(HttpServerLimitsTest, IdleConnectionIsClosed) {
  HttpLimits limits;
  limits.idle_timeout = milliseconds(300);
  std::unique_ptr<HttpServer> server = StartWithLimits(limits);
  ASSERT_NE(server, nullptr);
  const auto start = std::chrono::steady_clock::now();
  RawClient client(server->port());
  ASSERT_TRUE(client.connected());
  EXPECT_EQ(client.ReadUntilClosed(seconds(3)), std::string());
  // 300 ms, checked every 50 ms.
  EXPECT_GE(MillisSince(start), 290);
  EXPECT_LT(MillisSince(start), 1000);
}

TEST(HttpServerLimitsTest, TricklingCannotExtendTheHeaderDeadline) {
  HttpLimits limits;
  limits.header_timeout = milliseconds(400);
  std::unique_ptr<HttpServer> server = StartWithLimits(limits);
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  ASSERT_TRUE(client.connected());
  const std::string head =
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::string> reply;
  // One byte every 100 ms, well inside any per-read timeout.
  for (size_t i = 0; !reply.has_value() && MillisSince(start) < 3000; ++i) {
    client.Send(std::string(1, i < head.size() ? head[i] : 'a'));
    reply = client.ReadUntilClosed(milliseconds(100));
  }
  ASSERT_TRUE(reply.has_value()) << "still open after 3 s";
  EXPECT_GE(MillisSince(start), 390);
  EXPECT_LT(MillisSince(start), 1000);
  EXPECT_TRUE(reply->starts_with("HTTP/1.1 408 ") || reply->empty()) << *reply;
}

TEST(HttpServerLimitsTest, SlowBodyIsCutAtTheRequestDeadline) {
  HttpLimits limits;
  limits.request_timeout = milliseconds(500);
  std::unique_ptr<HttpServer> server = StartWithLimits(limits);
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  ASSERT_TRUE(client.connected());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      client.Send("POST /healthz HTTP/1.1\r\nHost: "
                  "localhost\r\nContent-Length: 100\r\n\r\n"));
  std::optional<std::string> reply;
  while (!reply.has_value() && MillisSince(start) < 3000) {
    client.Send("x");
    reply = client.ReadUntilClosed(milliseconds(100));
  }
  ASSERT_TRUE(reply.has_value()) << "still open after 3 s";
  EXPECT_GE(MillisSince(start), 490);
  EXPECT_LT(MillisSince(start), 1100);
}

TEST_F(HttpServerTest, BodyIsReadThenAnswered) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(
      client.Send("POST /metrics HTTP/1.1\r\nHost: "
                  "localhost\r\nContent-Length: 5\r\n\r\nhello"));
  const std::optional<std::string> reply = client.ReadUntilClosed(seconds(5));
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->starts_with("HTTP/1.1 405 Method Not Allowed\r\n"))
      << *reply;
}

TEST_F(HttpServerTest, LargeBodyIs413) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(
      client.Send("POST /metrics HTTP/1.1\r\nHost: "
                  "localhost\r\nContent-Length: 65537\r\n\r\n"));
  const std::optional<std::string> reply = client.ReadUntilClosed(seconds(5));
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->starts_with("HTTP/1.1 413 ")) << *reply;
  EXPECT_TRUE(reply->ends_with("\r\n\r\nbad request: body over 65536 bytes\n"))
      << *reply;
}

TEST_F(HttpServerTest, OversizedHeadIs431) {
  StatusOr<HttpResult> r = Get("/healthz", {{"X-Big", std::string(9000, 'a')}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 431);
  EXPECT_EQ(r->body, "bad request: head over 8192 bytes\n");
  r = Get("/" + std::string(9000, 'a'));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, "bad request: request line too long\n");
}

TEST_F(HttpServerTest, MalformedRequestIs400WithAReason) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send("GET /healthz HTTP/1.1\r\n\r\n"));
  const std::optional<std::string> reply = client.ReadUntilClosed(seconds(5));
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->starts_with("HTTP/1.1 400 Bad Request\r\n")) << *reply;
  EXPECT_TRUE(reply->ends_with("\r\n\r\nbad request: HTTP/1.1 without Host\n"))
      << *reply;
}

TEST(HttpServerLimitsTest, AtTheCapTheOldestIdleConnectionIsShed) {
  HttpLimits limits;
  limits.max_connections = 4;
  std::unique_ptr<HttpServer> server = StartWithLimits(limits);
  ASSERT_NE(server, nullptr);
  RawClient slow(server->port());
  ASSERT_TRUE(slow.Send("G"));  // Slow: shed only after the idle ones.
  RawClient idle1(server->port());
  RawClient idle2(server->port());
  RawClient idle3(server->port());
  // A fifth connection, the scrape, gets in: idle1 makes room.
  StatusOr<HttpResult> r = HttpGet(kLocalhost, server->port(), "/healthz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(idle1.ReadUntilClosed(seconds(2)).has_value());
  EXPECT_FALSE(idle2.ClosedByServer());
  EXPECT_FALSE(idle3.ClosedByServer());
  EXPECT_FALSE(slow.ClosedByServer());
  // The scrape has gone: two more fit by shedding idle2 alone.
  RawClient idle4(server->port());
  RawClient idle5(server->port());
  EXPECT_TRUE(idle2.ReadUntilClosed(seconds(2)).has_value());
  EXPECT_FALSE(idle3.ClosedByServer());
  EXPECT_FALSE(slow.ClosedByServer());
  ASSERT_TRUE(idle3.Send("G"));
  ASSERT_TRUE(idle4.Send("G"));
  ASSERT_TRUE(idle5.Send("G"));
  rankwatch::testing::SleepFor(milliseconds(50));
  // Now all four are slow: the oldest (`slow`) makes room.
  r = HttpGet(kLocalhost, server->port(), "/healthz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(slow.ReadUntilClosed(seconds(2)).has_value());
  EXPECT_FALSE(idle3.ClosedByServer());
  EXPECT_FALSE(idle4.ClosedByServer());
}

TEST(HttpServerLimitsTest, AClientAtItsCapShedsItsOwnConnections) {
  HttpLimits limits;
  limits.max_connections_per_client = 2;
  std::unique_ptr<HttpServer> server = StartWithLimits(limits);
  ASSERT_NE(server, nullptr);
  RawClient scraper_idle(server->port(), kLocalhost);
  RawClient flood1(server->port(), "127.0.0.2");
  RawClient flood2(server->port(), "127.0.0.2");
  ASSERT_TRUE(flood1.connected());
  RawClient flood3(server->port(), "127.0.0.2");
  EXPECT_TRUE(flood1.ReadUntilClosed(seconds(2)).has_value());
  EXPECT_FALSE(flood2.ClosedByServer());
  EXPECT_FALSE(flood3.ClosedByServer());
  EXPECT_FALSE(scraper_idle.ClosedByServer());
  // The scraper's address has room for one more.
  StatusOr<HttpResult> r = HttpGet(kLocalhost, server->port(), "/healthz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(scraper_idle.ClosedByServer());
}

TEST(HttpServerStartTest, RaisesTheOpenFileLimit) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  std::unique_ptr<HttpServer> server = StartLocal();
  ASSERT_NE(server, nullptr);
  rlimit after{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, limit.rlim_max);
}

}  // namespace
}  // namespace rankwatch::http
