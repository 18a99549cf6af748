#include "daemon/server/daemon.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"

namespace rankwatch::server {
namespace {

using namespace std::chrono_literals;

config::Config ConfigFor(const std::string& bootstrap,
                         const std::string& listen = "127.0.0.1:0") {
  config::Config c;
  c.kafka.bootstrap_servers = bootstrap;
  c.kafka.group_id = "daemon-test";
  c.kafka.properties = {{"session.timeout.ms", "6000"},
                        {"heartbeat.interval.ms", "500"}};
  c.http.listen = listen;
  return c;
}

int HttpStatus(int port, const std::string& path) {
  auto r = testing::HttpGet("127.0.0.1", port, path);
  return r.ok() ? r->status : -1;
}

// The daemon answers /healthz as soon as it is created, before Kafka is
// reached, and reports ready (on /readyz and as the gauge alike) once it
// consumes; a stop request makes Run() return cleanly.
TEST(DaemonTest, HealthyAtOnceReadyWhenConsumingStopsCleanly) {
  auto cluster = sim::MockCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  ASSERT_TRUE((*cluster)->CreateTopic("results", 1).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("judgments", 1).ok());
  auto daemon = Daemon::Create(ConfigFor((*cluster)->bootstrap_servers()));
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  const int port = (*daemon)->http_port();
  ASSERT_GT(port, 0);
  EXPECT_EQ(HttpStatus(port, "/healthz"), 200);
  EXPECT_EQ(HttpStatus(port, "/readyz"), 503);  // Not consuming yet.

  std::atomic<bool> stop{false};
  rankwatch::Status run_status;
  std::thread runner([&] { run_status = (*daemon)->Run(stop); });
  // The first group join takes about 3 s on the mock cluster.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (HttpStatus(port, "/readyz") != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(HttpStatus(port, "/readyz"), 200);
  auto metrics = testing::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("\nrankwatch_consumer_ready 1\n"),
            std::string::npos);
  stop = true;
  runner.join();
  EXPECT_TRUE(run_status.ok()) << run_status.ToString();
}

// Polls /readyz every 100 ms until its status is `want` or `timeout` passes;
// returns the time it took, or nullopt on timeout.
std::optional<std::chrono::milliseconds> WaitForReadyz(
    int port, int want, std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < timeout) {
    if (HttpStatus(port, "/readyz") == want) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
    }
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

// /readyz's body and the readiness gauges agree on `reason`.
void ExpectReadiness(int port, const std::string& reason) {
  auto readyz = testing::HttpGet("127.0.0.1", port, "/readyz");
  ASSERT_TRUE(readyz.ok());
  if (reason == "ready") {
    EXPECT_EQ(readyz->body, "ready\n");
  } else {
    EXPECT_EQ(readyz->body.rfind("not ready (" + reason + "): ", 0), 0u)
        << readyz->body;
  }
  auto metrics = testing::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok());
  const std::string gauge = std::string("\nrankwatch_consumer_ready ") +
                            (reason == "ready" ? "1" : "0") + "\n";
  EXPECT_NE(metrics->body.find(gauge), std::string::npos) << reason;
  EXPECT_NE(metrics->body.find("\nrankwatch_consumer_ready_reason{reason=\"" +
                               reason + "\"} 1\n"),
            std::string::npos)
      << reason;
}

// Readiness means consuming: with the only broker down, or up but not
// answering (responses delayed by 100 s, as a frozen process), /readyz and
// the gauges turn not ready once no fetch has progressed for
// kafka.not_ready_after (3 s here), with the reason; ready again as soon as
// the broker answers. A session timeout of 30 s keeps the assignment
// through the outages, so that the fetch check is what decides.
TEST(DaemonTest, NotReadyWhileTheBrokerIsDownOrFrozen) {
  auto cluster = sim::MockCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  ASSERT_TRUE((*cluster)->CreateTopic("results", 1).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("judgments", 1).ok());
  config::Config config = ConfigFor((*cluster)->bootstrap_servers());
  config.kafka.not_ready_after = 3s;
  config.kafka.properties["session.timeout.ms"] = "30000";
  config.kafka.properties["reconnect.backoff.max.ms"] = "500";
  auto daemon = Daemon::Create(config);
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  const int port = (*daemon)->http_port();
  // Stops and joins the consumer thread however the test ends.
  struct Runner {
    std::atomic<bool> stop{false};
    std::thread thread;
    ~Runner() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  } runner;
  runner.thread = std::thread([&] { (void)(*daemon)->Run(runner.stop); });
  ASSERT_TRUE(WaitForReadyz(port, 200, 30s).has_value());
  ExpectReadiness(port, "ready");

  // Progress is at most ~1.5 s old when the broker goes (statistics every
  // 1 s, each reporting a fetch answered < 0.5 s before), and statistics
  // report the stall within 1 s more: not ready after 1.5 s to 4 s; 1 s and
  // 6 s leave room for a loaded machine.
  ASSERT_TRUE((*cluster)->SetBrokerDown(1).ok());
  std::optional<std::chrono::milliseconds> took = WaitForReadyz(port, 503, 15s);
  ASSERT_TRUE(took.has_value());
  std::printf("broker down: not ready after %lld ms\n",
              static_cast<long long>(took->count()));
  EXPECT_GE(*took, 1s);
  EXPECT_LE(*took, 6s);
  ExpectReadiness(port, "broker_unreachable");
  ASSERT_TRUE((*cluster)->SetBrokerUp(1).ok());
  took = WaitForReadyz(port, 200, 15s);
  ASSERT_TRUE(took.has_value());
  std::printf("broker up: ready after %lld ms\n",
              static_cast<long long>(took->count()));
  ExpectReadiness(port, "ready");

  ASSERT_TRUE((*cluster)->SetBrokerRtt(1, 100'000).ok());
  took = WaitForReadyz(port, 503, 15s);
  ASSERT_TRUE(took.has_value());
  std::printf("broker frozen: not ready after %lld ms\n",
              static_cast<long long>(took->count()));
  EXPECT_GE(*took, 1s);
  EXPECT_LE(*took, 6s);
  ExpectReadiness(port, "fetch_stalled");
  ASSERT_TRUE((*cluster)->SetBrokerRtt(1, 0).ok());
  took = WaitForReadyz(port, 200, 15s);
  ASSERT_TRUE(took.has_value());
  std::printf("broker answering again: ready after %lld ms\n",
              static_cast<long long>(took->count()));
  ExpectReadiness(port, "ready");
}

// /healthz and /readyz answer while another thread holds the pipeline's
// lock (a consumer busy with a message, a reload, a scrape's copy): they
// read nothing it guards (issue 41). Before, /readyz waited for it.
TEST(DaemonTest, HealthAndReadinessAnswerWhileThePipelineIsLocked) {
  auto daemon = Daemon::Create(ConfigFor("127.0.0.1:1"));
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  const int port = (*daemon)->http_port();
  std::unique_lock<std::mutex> held = (*daemon)->LockPipelineForTest();
  const auto start = std::chrono::steady_clock::now();
  auto health = testing::HttpGet("127.0.0.1", port, "/healthz", {}, 1s);
  auto ready = testing::HttpGet("127.0.0.1", port, "/readyz", {}, 1s);
  const auto took = std::chrono::steady_clock::now() - start;
  held.unlock();
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_EQ(health->status, 200);
  // Not consuming: Run() was never called.
  EXPECT_EQ(ready->status, 503);
  EXPECT_NE(ready->body.find("not_consuming"), std::string::npos)
      << ready->body;
  EXPECT_LT(took, 1s);
}

// A port already taken is an error of Create(), not of the configuration
// (the CLI maps it to exit code 1, which systemd restarts after).
TEST(DaemonTest, BusyPortIsAnErrorThatIsNotInvalidArgument) {
  auto first = Daemon::Create(ConfigFor("127.0.0.1:1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string taken =
      "127.0.0.1:" + std::to_string((*first)->http_port());
  auto second = Daemon::Create(ConfigFor("127.0.0.1:1", taken));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().code(), StatusCode::kInvalidArgument)
      << second.status().ToString();
  EXPECT_NE(second.status().message().find(taken), std::string::npos)
      << second.status().ToString();
}

}  // namespace
}  // namespace rankwatch::server
