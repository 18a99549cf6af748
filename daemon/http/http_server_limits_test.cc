// HttpServer's defences of issue 24, one finding each: shared renderings,
// the response budget, the request queue caps, resets on timeouts, the
// IPv6 /64 client key, the Host check, cross-site POSTs, '%' in paths,
// nosniff, Expect: 100-continue and the injected clock. Each test fails on
// the server before that change.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "daemon/http/connection_table.h"
#include "daemon/http/http_server.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"

namespace rankwatch::http {
namespace {

using rankwatch::testing::HttpFetch;
using rankwatch::testing::HttpGet;
using rankwatch::testing::HttpResult;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// A connected, blocking client socket from `source` (a loopback address)
// to 127.0.0.1:port, with a receive buffer of `rcvbuf` bytes (0: default);
// -1 on failure.
int Connect(int port, const char* source = "127.0.0.1", int rcvbuf = 0) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  }
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n =
        send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What arrives on `fd` within `timeout` (until the peer closes).
std::string ReadFor(int fd, milliseconds timeout) {
  std::string out;
  const Steady::time_point end = Steady::now() + timeout;
  while (Steady::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<milliseconds>(end - Steady::now());
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <=
        0) {
      break;
    }
    char buffer[65536];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

std::string Request(const std::string& method, const std::string& path,
                    const std::string& extra = "") {
  return method + " " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra +
         "\r\n";
}

// Counts the calls of a handler that waits until released (or a time
// out), so that requests pile up behind it.
class Gate {
 public:
  HttpResponse Pass(std::string body) {
    ++calls_;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return open_; });
    return HttpResponse::Text(200, std::move(body));
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int calls() const { return calls_.load(); }

 private:
  std::atomic<int> calls_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

std::unique_ptr<HttpServer> Start(const HttpLimits& limits, int threads = 2,
                                  const HttpSecurity& security = {},
                                  const Clock* clock = SystemClock::Get()) {
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("127.0.0.1:0", threads, limits, security, clock);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

// Waits until `done` holds, up to 5 s.
template <typename F>
bool WaitFor(F done) {
  const Steady::time_point end = Steady::now() + std::chrono::seconds(5);
  while (!done()) {
    if (Steady::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

// Concurrent scrapes of one path share one rendering: 20 clients asking
// while it renders cost one handler call, and each gets the whole body.
TEST(HttpServerLimitsTest, ConcurrentScrapesShareOneRendering) {
  auto server = Start(HttpLimits(), 2);
  ASSERT_NE(server, nullptr);
  Gate gate;
  server->Handle("/metrics", [&](const HttpRequest&) {
    return gate.Pass(std::string(100000, 'm'));
  });
  std::vector<std::thread> clients;
  std::atomic<int> whole{0};
  for (int i = 0; i < 20; ++i) {
    clients.emplace_back([&, i] {
      // From 20 addresses: no per-client cap is involved.
      const std::string source = "127.0.1." + std::to_string(i + 1);
      const int fd = Connect(server->port(), source.c_str());
      if (fd < 0 || !SendAll(fd, Request("GET", "/metrics"))) return;
      const std::string reply = ReadFor(fd, std::chrono::seconds(10));
      if (reply.find("200 OK") != std::string::npos && reply.size() > 100000 &&
          reply.compare(reply.size() - 100000, 100000,
                        std::string(100000, 'm')) == 0) {
        ++whole;
      }
      close(fd);
    });
  }
  // All 20 requests are in: one renders, the rest joined it.
  ASSERT_TRUE(WaitFor([&] { return server->stats().shared_responses == 19; }))
      << server->stats().shared_responses;
  gate.Open();
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(gate.calls(), 1);
  EXPECT_EQ(whole.load(), 20);
  // A later scrape renders afresh (nothing is cached once delivered).
  StatusOr<HttpResult> again = HttpGet("127.0.0.1", server->port(), "/metrics");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(gate.calls(), 2);
  // Released once the server's loop has seen its last write complete,
  // which may come just after the client has read the last byte.
  EXPECT_TRUE(WaitFor([&] { return server->stats().response_bytes_held == 0; }))
      << server->stats().response_bytes_held;
}

// Readers that never read hold response bytes up to the budget; beyond it
// new requests are 503 without rendering, and once they leave the server
// serves again with nothing held.
TEST(HttpServerLimitsTest, ResponseBudgetRefusesBeyondAndRecovers) {
  HttpLimits limits;
  limits.response_budget_bytes = 3 * 1000 * 1000;
  limits.send_buffer_bytes = 4096;
  auto server = Start(limits, 2);
  ASSERT_NE(server, nullptr);
  std::atomic<int> renders{0};
  // POST: never shared, so each stalled reader holds its own 1 MB.
  server->Handle("/big", {"POST"}, [&](const HttpRequest&) {
    ++renders;
    return HttpResponse::Text(200, std::string(1000 * 1000, 'b'));
  });
  std::vector<int> stalled;
  for (int i = 0; i < 3; ++i) {
    const std::string source = "127.0.2." + std::to_string(i + 1);
    const int fd = Connect(server->port(), source.c_str(), 1024);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, Request("POST", "/big")));
    stalled.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] {
    return server->stats().response_bytes_held >= 3 * 1000 * 1000;
  })) << server->stats().response_bytes_held;
  StatusOr<HttpResult> refused =
      HttpFetch("POST", "127.0.0.1", server->port(), "/big");
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("Retry-After"), "1");
  EXPECT_EQ(renders.load(), 3);  // The refused one was never rendered.
  EXPECT_EQ(
      server->stats().overloads[static_cast<size_t>(Overload::kResponseBudget)],
      1u);
  for (int fd : stalled) close(fd);
  ASSERT_TRUE(WaitFor([&] { return server->stats().response_bytes_held == 0; }))
      << server->stats().response_bytes_held;
  StatusOr<HttpResult> served =
      HttpFetch("POST", "127.0.0.1", server->port(), "/big");
  ASSERT_TRUE(served.ok());
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(served->body.size(), 1000u * 1000u);
}

// One client's burst of requests waits in a bounded share of the queue: the
// one past its cap is 503 at once, another client still gets in, and the
// whole queue is bounded too.
TEST(HttpServerLimitsTest, QueueCapsPerClientAndInAll) {
  HttpLimits limits;
  limits.max_queued_per_client = 2;
  limits.max_queued_requests = 3;
  auto server = Start(limits, 1);
  ASSERT_NE(server, nullptr);
  Gate gate;
  server->Handle("/slow", {"POST"},
                 [&](const HttpRequest&) { return gate.Pass("done\n"); });
  std::vector<int> fds;
  // 127.0.3.1: one running (its own count: queued or running), one queued.
  for (int i = 0; i < 2; ++i) {
    const int fd = Connect(server->port(), "127.0.3.1");
    ASSERT_TRUE(SendAll(fd, Request("POST", "/slow")));
    fds.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] { return gate.calls() == 1; }));
  // Its third is over its cap.
  const int third = Connect(server->port(), "127.0.3.1");
  ASSERT_TRUE(SendAll(third, Request("POST", "/slow")));
  const std::string refused = ReadFor(third, std::chrono::seconds(3));
  EXPECT_NE(refused.find("HTTP/1.1 503 "), std::string::npos) << refused;
  close(third);
  // Two more clients fill the queue (1 queued + 2 = 3); a fourth client's
  // request is over the total.
  for (const char* source : {"127.0.3.2", "127.0.3.3"}) {
    const int fd = Connect(server->port(), source);
    ASSERT_TRUE(SendAll(fd, Request("POST", "/slow")));
    fds.push_back(fd);
  }
  std::this_thread::sleep_for(milliseconds(200));
  const int over = Connect(server->port(), "127.0.3.4");
  ASSERT_TRUE(SendAll(over, Request("POST", "/slow")));
  const std::string full = ReadFor(over, std::chrono::seconds(3));
  EXPECT_NE(full.find("HTTP/1.1 503 "), std::string::npos) << full;
  close(over);
  const HttpStats stats = server->stats();
  EXPECT_EQ(stats.overloads[static_cast<size_t>(Overload::kClientQueueFull)],
            1u);
  EXPECT_EQ(stats.overloads[static_cast<size_t>(Overload::kQueueFull)], 1u);
  gate.Open();
  for (int fd : fds) {
    EXPECT_NE(ReadFor(fd, std::chrono::seconds(5)).find("200 OK"),
              std::string::npos);
    close(fd);
  }
  EXPECT_EQ(gate.calls(), 4);
}

// A response the client never takes is dropped with a reset at the write
// deadline: the kernel's copy goes too (a plain close would leave it
// queued, outside every cap, and the client would read it whole).
TEST(HttpServerLimitsTest, TimedOutWriterIsReset) {
  HttpLimits limits;
  limits.write_timeout = milliseconds(300);
  limits.send_buffer_bytes = 4096;
  auto server = Start(limits, 1);
  ASSERT_NE(server, nullptr);
  server->Handle("/big", [](const HttpRequest&) {
    return HttpResponse::Text(200, std::string(4 << 20, 'x'));
  });
  const int fd = Connect(server->port(), "127.0.0.1", 1024);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, Request("GET", "/big")));
  std::this_thread::sleep_for(milliseconds(1000));  // Past the deadline.
  // Drain: the reset ends the stream with ECONNRESET, not after 4 MiB.
  size_t total = 0;
  int error = 0;
  char buffer[65536];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) {
      error = errno;
      break;
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
  }
  close(fd);
  EXPECT_EQ(error, ECONNRESET);
  EXPECT_LT(total, size_t{4} << 20);
}

TEST(HttpServerLimitsTest, ClientKeysCountIpv6By64) {
  const auto v6 = [](const char* text) {
    sockaddr_storage s{};
    auto& a = reinterpret_cast<sockaddr_in6&>(s);
    a.sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &a.sin6_addr);
    return s;
  };
  sockaddr_storage v4{};
  auto& a4 = reinterpret_cast<sockaddr_in&>(v4);
  a4.sin_family = AF_INET;
  inet_pton(AF_INET, "192.0.2.7", &a4.sin_addr);
  EXPECT_EQ(ClientKey(v4), "192.0.2.7");
  EXPECT_EQ(ClientKey(v6("2001:db8:1:2::1")), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientKey(v6("2001:db8:1:2:ffff:ffff:ffff:ffff")),
            "2001:db8:1:2::/64");
  EXPECT_EQ(ClientKey(v6("2001:db8:1:3::1")), "2001:db8:1:3::/64");
  // A dual-stack socket's IPv4 client is that IPv4 address.
  EXPECT_EQ(ClientKey(v6("::ffff:192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(ClientAddress(v6("::ffff:192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(ClientAddress(v6("2001:db8:1:2::1")), "2001:db8:1:2::1");
}

// The server on [::1] counts its clients by /64: ::1 is one /64, so the
// per-client cap holds for it (a live check of ClientKey on the accept
// path).
TEST(HttpServerLimitsTest, Ipv6ClientsAreCappedBy64) {
  HttpLimits limits;
  limits.max_connections_per_client = 2;
  StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start("[::1]:0", 1, limits);
  if (!server.ok())
    GTEST_SKIP() << "no IPv6 loopback: " << server.status().ToString();
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_port = htons(static_cast<uint16_t>((*server)->port()));
    to.sin6_addr = in6addr_loopback;
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
    fds.push_back(fd);
  }
  // The oldest idle one is shed for the third: it reads end of stream.
  pollfd p{fds[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 3000), 1);
  char c;
  EXPECT_LE(recv(fds[0], &c, 1, 0), 0);
  for (int fd : fds) close(fd);
}

TEST(HttpServerLimitsTest, HostHeaderIsChecked) {
  auto server = Start(HttpLimits(), 1);
  ASSERT_NE(server, nullptr);
  server->Handle(
      "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); });
  const int port = server->port();
  const auto status = [&](const std::string& host) {
    StatusOr<HttpResult> r = HttpGet("127.0.0.1", port, "/x", {{"Host", host}});
    return r.ok() ? r->status : -1;
  };
  EXPECT_EQ(status("127.0.0.1:" + std::to_string(port)), 200);
  EXPECT_EQ(status("localhost:" + std::to_string(port)), 200);
  EXPECT_EQ(status("attacker.example:" + std::to_string(port)), 403);
  EXPECT_EQ(server->stats().forbidden[static_cast<size_t>(Forbidden::kHost)],
            1u);
  HttpSecurity security;
  security.allowed_hosts = {"rankwatch.example"};
  auto named = Start(HttpLimits(), 1, security);
  ASSERT_NE(named, nullptr);
  named->Handle(
      "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); });
  StatusOr<HttpResult> r = HttpGet("127.0.0.1", named->port(), "/x",
                                   {{"Host", "rankwatch.example"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  r = HttpGet("127.0.0.1", named->port(), "/x", {{"Host", "localhost"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);
}

TEST(HttpServerLimitsTest, PostsFromWebPagesAreRefused) {
  auto server = Start(HttpLimits(), 1);
  ASSERT_NE(server, nullptr);
  std::atomic<int> calls{0};
  server->Handle("/-/act", {"POST"}, [&](const HttpRequest&) {
    ++calls;
    return HttpResponse::Text(200, "done\n");
  });
  server->Handle("/page", [](const HttpRequest&) {
    return HttpResponse::Text(200, "page\n");
  });
  const int port = server->port();
  const auto post = [&](const rankwatch::testing::HttpHeaders& headers) {
    StatusOr<HttpResult> r =
        HttpFetch("POST", "127.0.0.1", port, "/-/act", headers);
    return r.ok() ? r->status : -1;
  };
  EXPECT_EQ(post({{"Origin", "http://evil.example"}}), 403);
  EXPECT_EQ(post({{"Origin", "null"}}), 403);
  EXPECT_EQ(post({{"Sec-Fetch-Site", "cross-site"}}), 403);
  EXPECT_EQ(post({{"Sec-Fetch-Site", "same-site"}}), 403);
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(post({}), 200);  // curl, Prometheus, kubectl.
  EXPECT_EQ(post({{"Sec-Fetch-Site", "none"}}), 200);  // Typed by the user.
  EXPECT_EQ(calls.load(), 2);
  // A GET with Origin is a read, answered as ever.
  StatusOr<HttpResult> get =
      HttpGet("127.0.0.1", port, "/page", {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(
      server->stats().forbidden[static_cast<size_t>(Forbidden::kCrossSite)],
      4u);
}

// Probes answer everyone, but only a known client (auth off, or valid
// credentials) is told the details (issue 24: /readyz named topics and
// partitions to anyone). The handler sees which it is.
TEST(HttpServerLimitsTest, HandlersKnowWhetherTheClientIsAuthenticated) {
  const auto known = [](const HttpRequest& request) {
    return HttpResponse::Text(200,
                              request.authenticated ? "known\n" : "stranger\n");
  };
  auto open = Start(HttpLimits(), 1);
  ASSERT_NE(open, nullptr);
  open->Handle("/readyz", known);
  StatusOr<HttpResult> r = HttpGet("127.0.0.1", open->port(), "/readyz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body, "known\n");  // No authentication configured.

  HttpSecurity security;
  security.users = {{"prom", "pw"}};
  auto guarded = Start(HttpLimits(), 1, security);
  ASSERT_NE(guarded, nullptr);
  guarded->Handle("/readyz", known);
  r = HttpGet("127.0.0.1", guarded->port(), "/readyz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "stranger\n");
  // base64("prom:pw") = "cHJvbTpwdw==" (RFC 4648, by hand).
  r = HttpGet("127.0.0.1", guarded->port(), "/readyz",
              {{"Authorization", "Basic cHJvbTpwdw=="}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body, "known\n");
}

TEST(HttpServerLimitsTest, PercentEncodedPathIsRefused) {
  auto server = Start(HttpLimits(), 1);
  ASSERT_NE(server, nullptr);
  std::atomic<int> calls{0};
  server->Handle("/-/reload", {"POST"}, [&](const HttpRequest&) {
    ++calls;
    return HttpResponse::Text(200, "reloaded\n");
  });
  StatusOr<HttpResult> r =
      HttpFetch("POST", "127.0.0.1", server->port(), "/-%2Freload");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServerLimitsTest, EveryResponseIsNosniff) {
  auto server = Start(HttpLimits(), 1);
  ASSERT_NE(server, nullptr);
  server->Handle("/ok", [](const HttpRequest&) {
    return HttpResponse::Text(200, "ok\n");
  });
  const int port = server->port();
  for (const char* path : {"/ok", "/missing", "/bad%"}) {
    StatusOr<HttpResult> r = HttpGet("127.0.0.1", port, path);
    ASSERT_TRUE(r.ok()) << path;
    EXPECT_EQ(r->Header("X-Content-Type-Options"), "nosniff") << path;
  }
  StatusOr<HttpResult> r = HttpFetch("DELETE", "127.0.0.1", port, "/ok");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->Header("X-Content-Type-Options"), "nosniff");
}

// curl sends "Expect: 100-continue" before a body over 1 KiB and waits a
// second for the interim answer: it comes at once.
TEST(HttpServerLimitsTest, ExpectContinueIsAnswered) {
  auto server = Start(HttpLimits(), 1);
  ASSERT_NE(server, nullptr);
  server->Handle("/-/reload", {"POST"}, [](const HttpRequest&) {
    return HttpResponse::Text(200, "reloaded\n");
  });
  const int fd = Connect(server->port());
  ASSERT_TRUE(SendAll(fd, Request("POST", "/-/reload",
                                  "Content-Length: 5\r\n"
                                  "Expect: 100-continue\r\n")));
  const std::string interim = ReadFor(fd, milliseconds(500));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(SendAll(fd, "hello"));
  const std::string reply = ReadFor(fd, std::chrono::seconds(3));
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  close(fd);
}

// Deadlines and the Date header come from the injected clock: an idle
// connection is closed when the fake clock passes its timeout, not before,
// with no real waiting.
TEST(HttpServerLimitsTest, UsesTheInjectedClock) {
  // 2026-11-26T00:00:00Z = 1795651200 s (date -u -d @1795651200).
  FakeClock clock(int64_t{1795651200} * 1000);
  HttpLimits limits;
  limits.idle_timeout = std::chrono::hours(1);
  auto server = Start(limits, 1, HttpSecurity(), &clock);
  ASSERT_NE(server, nullptr);
  server->Handle(
      "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); });
  StatusOr<HttpResult> r = HttpGet("127.0.0.1", server->port(), "/x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Header("Date"), "Thu, 26 Nov 2026 00:00:00 GMT");
  const int idle = Connect(server->port());
  ASSERT_GE(idle, 0);
  pollfd p{idle, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 300), 0);  // Real time passes: still open.
  clock.Advance(3600 * 1000 + 1);
  ASSERT_EQ(poll(&p, 1, 3000), 1);  // The next tick closes it.
  char c;
  EXPECT_EQ(recv(idle, &c, 1, 0), 0);
  close(idle);
}

}  // namespace
}  // namespace rankwatch::http
