#include "daemon/server/daemon.h"

#include <atomic>
#include <chrono>
#include <memory>
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

int Status(int port, const std::string& path) {
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
  EXPECT_EQ(Status(port, "/healthz"), 200);
  EXPECT_EQ(Status(port, "/readyz"), 503);  // Not consuming yet.

  std::atomic<bool> stop{false};
  rankwatch::Status run_status;
  std::thread runner([&] { run_status = (*daemon)->Run(stop); });
  // The first group join takes about 3 s on the mock cluster.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (Status(port, "/readyz") != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(Status(port, "/readyz"), 200);
  auto metrics = testing::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("\nrankwatch_consumer_ready 1\n"),
            std::string::npos);
  stop = true;
  runner.join();
  EXPECT_TRUE(run_status.ok()) << run_status.ToString();
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
