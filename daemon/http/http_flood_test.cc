// HttpServer under connection floods (issue 15): a scrape of a 200 KB
// /metrics-like body must be answered within 1 s while 1,000 slow-header
// connections (one byte every 500 ms) and 10,000 idle connections are held
// open against the server. All on loopback; the client sockets live in this
// process (about 11,000 fds beside the server's 4,096 at most), so the test
// needs an open-file limit of about 16,000 and is skipped below that.
//
// The floods come from many loopback source addresses (127.0.x.y, all of
// which reach a server on 127.0.0.1 on Linux), so that both the per-client
// and the total connection caps are exercised; the scrapes come from
// 127.0.0.1. Each case prints the median and maximum scrape latency.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/http/http_server.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::http {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

constexpr int kSlowConnections = 1000;
constexpr int kIdleConnections = 10000;
constexpr milliseconds kTrickleInterval(500);
constexpr int kScrapes = 20;
constexpr milliseconds kScrapeBound(1000);
// A failed scrape is given up after this long (and fails the test).
constexpr milliseconds kScrapeTimeout(5000);
// Connections per flood source address: 100 idle connections from each of
// 100 addresses, 100 slow ones from each of 10.
constexpr int kPerSource = 100;
// What the test process holds beside the server's connections (at most
// 4,096) and a margin.
constexpr rlim_t kFdsNeeded = kSlowConnections + kIdleConnections + 4096 + 512;

// A 200 KB body: about what a daemon with a few hundred series serves.
std::string MetricsBody() {
  std::string body;
  for (int i = 0; body.size() < 200 * 1024; ++i) {
    body += "rankwatch_precision_bucket{variant=\"A\",k=\"" +
            std::to_string(i) + "\",le=\"0.1\"} " + std::to_string(i * 7) +
            "\n";
  }
  return body;
}

// Client sockets held open by the test; closed on destruction.
class SocketSet {
 public:
  SocketSet() = default;
  SocketSet(const SocketSet&) = delete;
  SocketSet& operator=(const SocketSet&) = delete;
  ~SocketSet() {
    for (int fd : fds_) ::close(fd);
  }

  // Opens `count` non-blocking connections to 127.0.0.1:`port`, from
  // source addresses 127.0.`subnet`.1, .2, ... with `per_source` each.
  // False when a socket cannot be made (fd limit).
  bool Open(int port, int count, int subnet, int per_source = kPerSource) {
    for (int i = 0; i < count; ++i) {
      const int fd =
          ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) return false;
      fds_.push_back(fd);
      sockaddr_in source{};
      source.sin_family = AF_INET;
      source.sin_addr.s_addr =
          htonl((127u << 24) | (static_cast<uint32_t>(subnet) << 8) |
                static_cast<uint32_t>(1 + i / per_source));
      if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) !=
          0) {
        return false;
      }
      sockaddr_in server{};
      server.sin_family = AF_INET;
      server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      server.sin_port = htons(static_cast<uint16_t>(port));
      // In progress is fine: the kernel completes the handshake.
      (void)::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server));
    }
    return true;
  }

  // Sends the next byte of a request head that never ends to every socket
  // (errors ignored: the server may have dropped it).
  void Trickle(size_t step) {
    static constexpr char kHead[] =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    const char c = step < sizeof(kHead) - 1 ? kHead[step] : 'a';
    for (int fd : fds_) (void)::send(fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }

 private:
  std::vector<int> fds_;
};

// Trickles into `sockets` every kTrickleInterval until destroyed.
class Trickler {
 public:
  explicit Trickler(SocketSet* sockets)
      : thread_([this, sockets] {
          for (size_t step = 0; !stop_; ++step) {
            sockets->Trickle(step);
            const Steady::time_point next = Steady::now() + kTrickleInterval;
            while (!stop_ && Steady::now() < next) {
              std::this_thread::sleep_for(milliseconds(10));
            }
          }
        }) {}
  ~Trickler() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Latencies {
  std::vector<double> ms;  // Sorted; a failed scrape counts as the timeout.
  int failures = 0;
  double median() const {
    return (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  }
  double max() const { return ms.back(); }
};

// kScrapes sequential GETs of /metrics, 50 ms apart.
Latencies Scrape(int port, const std::string& expected_body) {
  Latencies result;
  for (int i = 0; i < kScrapes; ++i) {
    const Steady::time_point start = Steady::now();
    StatusOr<rankwatch::testing::HttpResult> r = rankwatch::testing::HttpGet(
        "127.0.0.1", port, "/metrics", {}, kScrapeTimeout);
    const double ms =
        std::chrono::duration<double, std::milli>(Steady::now() - start)
            .count();
    const bool ok = r.ok() && r->status == 200 && r->body == expected_body;
    if (!ok) {
      ++result.failures;
      std::printf("scrape %d failed after %.0f ms: %s\n", i, ms,
                  r.ok() ? ("status " + std::to_string(r->status)).c_str()
                         : r.status().ToString().c_str());
    }
    result.ms.push_back(ok ? ms : static_cast<double>(kScrapeTimeout.count()));
    rankwatch::testing::SleepFor(milliseconds(50));
  }
  std::sort(result.ms.begin(), result.ms.end());
  return result;
}

class HttpFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_max < kFdsNeeded) {
      GTEST_SKIP() << "needs an open-file hard limit of " << kFdsNeeded
                   << ", have " << limit.rlim_max;
    }
    StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Start("127.0.0.1:0", 4);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    server_->Handle("/metrics", [this](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = body_;
      return r;
    });
    // Start() raises the soft limit to the hard one.
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    ASSERT_GE(limit.rlim_cur, kFdsNeeded);
  }

  void Report(const char* flood, const Latencies& l) {
    std::printf(
        "%s: %d scrapes of %zu bytes, median %.1f ms, max %.1f ms, "
        "%d failed\n",
        flood, kScrapes, body_.size(), l.median(), l.max(), l.failures);
    RecordProperty("median_ms", std::to_string(l.median()));
    RecordProperty("max_ms", std::to_string(l.max()));
    EXPECT_EQ(l.failures, 0) << flood;
    EXPECT_LT(l.max(), static_cast<double>(kScrapeBound.count())) << flood;
  }

  const std::string body_ = MetricsBody();
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpFloodTest, NoFlood) {
  Report("no flood", Scrape(server_->port(), body_));
}

TEST_F(HttpFloodTest, SlowHeaderFlood) {
  SocketSet slow;
  ASSERT_TRUE(slow.Open(server_->port(), kSlowConnections, 2));
  Trickler trickler(&slow);
  // A few bytes in: every connection is past its first byte.
  rankwatch::testing::SleepFor(3 * kTrickleInterval);
  Report("1,000 slow-header connections", Scrape(server_->port(), body_));
}

TEST_F(HttpFloodTest, IdleFlood) {
  SocketSet idle;
  ASSERT_TRUE(idle.Open(server_->port(), kIdleConnections, 1));
  rankwatch::testing::SleepFor(milliseconds(500));
  Report("10,000 idle connections", Scrape(server_->port(), body_));
}

TEST_F(HttpFloodTest, SlowAndIdleFloods) {
  SocketSet slow;
  ASSERT_TRUE(slow.Open(server_->port(), kSlowConnections, 2));
  Trickler trickler(&slow);
  rankwatch::testing::SleepFor(3 * kTrickleInterval);
  // The idle flood arrives last: it is what has to shed the slow one.
  SocketSet idle;
  ASSERT_TRUE(idle.Open(server_->port(), kIdleConnections, 1));
  rankwatch::testing::SleepFor(milliseconds(500));
  Report("both floods", Scrape(server_->port(), body_));
}

// The same flood from the scraper's own address: the per-client cap sheds
// the client's own oldest idle connection for its new one.
TEST_F(HttpFloodTest, IdleFloodFromTheScrapersAddress) {
  SocketSet idle;
  ASSERT_TRUE(idle.Open(server_->port(), kIdleConnections / 10, 0,
                        kIdleConnections / 10));
  rankwatch::testing::SleepFor(milliseconds(500));
  Report("1,000 idle connections from 127.0.0.1",
         Scrape(server_->port(), body_));
}

// This process's resident memory, from /proc/self/status (kB).
int64_t ResidentKb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kb = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

// Issue 24: 1,000 clients that send GET /metrics and never read (receive
// buffers of 1 KiB), from 17 addresses under every per-client cap, against
// a 2 MB body. Before, every request was rendered and held whole (the
// issue measured 852 MB of RSS and no scrape answered for 35 s); now they
// share renderings, the bytes held stay under the budget, a new client's
// scrape is answered within a second all along, and nothing is held once
// they leave.
TEST(HttpStalledReaderTest, ReadersThatNeverReadCostBoundedMemory) {
  constexpr int kReaders = 1000;
  constexpr size_t kBudget = size_t{64} << 20;
  std::string body = "rankwatch_ndcg_sum{variant=\"A\"} 1\n";
  while (body.size() < 2 * 1000 * 1000) body += body;
  body.resize(2 * 1000 * 1000);
  HttpLimits limits;
  limits.response_budget_bytes = kBudget;
  StatusOr<std::unique_ptr<HttpServer>> started =
      HttpServer::Start("127.0.0.1:0", 4, limits);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  HttpServer& server = **started;
  std::atomic<int> renders{0};
  server.Handle("/metrics", [&](const HttpRequest&) {
    ++renders;
    // About what rendering a 2 MB registry costs.
    rankwatch::testing::SleepFor(milliseconds(20));
    return HttpResponse::Text(200, body);
  });
  const int64_t before_kb = ResidentKb();

  std::vector<int> readers;
  for (int i = 0; i < kReaders; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    readers.push_back(fd);
    const int small = 1024;
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr =
        htonl((127u << 24) | (7u << 8) | static_cast<uint32_t>(2 + i / 60));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<uint16_t>(server.port()));
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)),
              0);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
    const std::string request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  // Scrapes from a new address while the readers hold their responses;
  // the bytes held are sampled between them.
  uint64_t max_held = 0;
  int64_t max_kb = 0;
  Latencies l;
  for (int i = 0; i < kScrapes; ++i) {
    max_held = std::max(max_held, server.stats().response_bytes_held);
    max_kb = std::max(max_kb, ResidentKb());
    const Steady::time_point start = Steady::now();
    StatusOr<rankwatch::testing::HttpResult> r = rankwatch::testing::HttpGet(
        "127.0.0.1", server.port(), "/metrics", {}, kScrapeTimeout);
    const double ms =
        std::chrono::duration<double, std::milli>(Steady::now() - start)
            .count();
    const bool ok = r.ok() && r->status == 200 && r->body.size() == body.size();
    if (!ok) ++l.failures;
    l.ms.push_back(ok ? ms : static_cast<double>(kScrapeTimeout.count()));
    rankwatch::testing::SleepFor(milliseconds(50));
  }
  std::sort(l.ms.begin(), l.ms.end());
  for (int fd : readers) ::close(fd);
  const bool released = [&] {
    for (int i = 0; i < 500; ++i) {
      if (server.stats().response_bytes_held == 0) return true;
      rankwatch::testing::SleepFor(milliseconds(10));
    }
    return false;
  }();
  // The server gives freed heap back at its next sweep (50 ms).
  rankwatch::testing::SleepFor(milliseconds(300));
  const int64_t after_kb = ResidentKb();
  const HttpStats stats = server.stats();
  std::printf(
      "1,000 readers that never read a 2 MB /metrics: %d renderings, %lu "
      "shared, max held %.1f MiB, RSS %.1f -> max %.1f -> %.1f MiB after; "
      "%d scrapes from a new client: median %.1f ms, max %.1f ms, %d "
      "failed\n",
      renders.load(), static_cast<unsigned long>(stats.shared_responses),
      static_cast<double>(max_held) / (1 << 20),
      static_cast<double>(before_kb) / 1024, static_cast<double>(max_kb) / 1024,
      static_cast<double>(after_kb) / 1024, kScrapes, l.median(), l.max(),
      l.failures);
  EXPECT_EQ(l.failures, 0);
  EXPECT_LT(l.max(), static_cast<double>(kScrapeBound.count()));
  // The budget, plus at most one rendering per worker started before it
  // was reached.
  EXPECT_LE(max_held, kBudget + 4 * body.size());
#if !defined(__SANITIZE_ADDRESS__)
  // The process grew by what it holds, not by a response per reader (2
  // GB). Under ASan freed memory waits in its quarantine (256 MB), so the
  // figure says nothing there: bench/README.md has the Release figures.
  EXPECT_LT(max_kb - before_kb, static_cast<int64_t>(kBudget / 1024));
  // And gives it back once they leave (the test's own 2 MB body and
  // threads stay).
  EXPECT_LT(after_kb - before_kb, 16 * 1024);
#endif
  EXPECT_TRUE(released) << stats.response_bytes_held;
  EXPECT_GT(stats.shared_responses, 0u);
}

}  // namespace
}  // namespace rankwatch::http
