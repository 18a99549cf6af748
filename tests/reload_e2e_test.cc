// End to end: a `rankwatch run` process reloads its configuration on SIGHUP
// and on POST /-/reload (docs/configuration.md, "Reloading"), against an
// in-process mock Kafka cluster. What can change live does, keeping the
// counts of the series that stay; an invalid file or a key that cannot
// change live is refused and counted; SIGHUP never stops the process.
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/http_client.h"
#include "tests/testing/kafka_events.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::kT0;
using testing::Scrape;
using testing::WaitFor;

constexpr int kPartitions = 4;

class ReloadE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kPartitions).ok());
    }
  }

  // The configuration file, rewritten in place by each call.
  std::string WriteConfig(const std::string& group, const std::string& cutoffs,
                          const std::string& windows) {
    return dir_.Write("rankwatch.yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                            R"("
  group_id: )" + group + R"(
  commit_interval: 500ms
  properties:
    session.timeout.ms: "6000"
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
join:
  window: 2s
  allowed_lateness: 2s
  idle_timeout: 1h
http:
  listen: 127.0.0.1:0
  enable_reload: true
metrics:
  cutoffs: )" + cutoffs + R"(
  measures: [precision]
aggregation:
  windows: )" + windows + R"(
)");
  }

  // Scored lists of variants A and B in the precision series at cutoff k.
  static double Count(const Scrape& s, const std::string& k) {
    return s.Sum("rankwatch_precision_count", {{"variant", "A"}, {"k", k}}) +
           s.Sum("rankwatch_precision_count", {{"variant", "B"}, {"k", k}});
  }
  static double Reloads(const Scrape& s, const std::string& result) {
    return s.Sum("rankwatch_config_reloads_total", {{"result", result}});
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
};

TEST_F(ReloadE2eTest, SighupReloadKeepsStateAndRefusesWhatCannotChange) {
  const std::string config = WriteConfig("g-reload", "[1]", "[5m]");
  testing::DaemonProcess daemon(RankwatchBinary(), dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  Scrape s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful"), 1);
  EXPECT_GT(s.Sum("rankwatch_config_last_reload_success_timestamp_seconds"),
            1.7e9);
  EXPECT_EQ(Reloads(s, "success"), 0);

  // 40 lists (20 per variant, requests 0..39 served in kT0 + [0, 2 s)),
  // closed by sentinels at kT0 + 10 s.
  testing::Producer producer(cluster_->bootstrap_servers());
  producer.SendAll(testing::Requests(0, 40, false));
  producer.Sentinels(kT0 + 10'000);
  ASSERT_TRUE(WaitFor([&] { return Count(daemon.Metrics(), "1") >= 40; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();

  // SIGHUP: cutoff 3 and window 15m added. P@1 keeps its 40 lists; P@3
  // and the 15m window exist from now on, empty.
  WriteConfig("g-reload", "[1, 3]", "[5m, 15m]");
  daemon.process().Signal(SIGHUP);
  ASSERT_TRUE(
      WaitFor([&] { return Reloads(daemon.Metrics(), "success") == 1; }, 10s))
      << daemon.log();
  s = daemon.Metrics();
  EXPECT_EQ(Count(s, "1"), 40);
  EXPECT_TRUE(s.Has("rankwatch_precision_count", {{"k", "3"}}));
  EXPECT_EQ(Count(s, "3"), 0);
  EXPECT_TRUE(s.Has("rankwatch_precision_mean", {{"window", "15m"}}));
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful"), 1);

  // 40 more lists (requests 300..339, kT0 + [15 s, 17 s)): both series.
  producer.SendAll(testing::Requests(300, 40, false));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(WaitFor([&] { return Count(daemon.Metrics(), "3") >= 40; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();
  s = daemon.Metrics();
  EXPECT_EQ(Count(s, "1"), 80);
  EXPECT_EQ(Count(s, "3"), 40);

  // An invalid file: refused, the running configuration stays.
  dir_.Write("rankwatch.yaml", "metrics: [\n");
  daemon.process().Signal(SIGHUP);
  ASSERT_TRUE(
      WaitFor([&] { return Reloads(daemon.Metrics(), "failure") == 1; }, 10s))
      << daemon.log();
  s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful"), 0);
  EXPECT_EQ(Count(s, "3"), 40);
  EXPECT_TRUE(s.Has("rankwatch_precision_mean", {{"window", "15m"}}));

  // Another consumer group: refused with one line naming the key.
  WriteConfig("g-other", "[1, 3, 5]", "[5m, 15m]");
  daemon.process().Signal(SIGHUP);
  ASSERT_TRUE(
      WaitFor([&] { return Reloads(daemon.Metrics(), "failure") == 2; }, 10s))
      << daemon.log();
  EXPECT_FALSE(daemon.Metrics().Has("rankwatch_precision_count", {{"k", "5"}}));
  EXPECT_NE(daemon.log().find("reload refused, keeping the running "
                              "configuration: " +
                              config + " changes kafka.group_id, which"),
            std::string::npos)
      << daemon.log();

  // SIGHUP never stops it; SIGTERM still does, cleanly.
  EXPECT_TRUE(daemon.process().Running());
  daemon.process().Signal(SIGTERM);
  EXPECT_EQ(daemon.process().Wait(15s), 0) << daemon.log();
}

TEST_F(ReloadE2eTest, PostReloads) {
  const std::string config = WriteConfig("g-post", "[1]", "[5m]");
  testing::DaemonProcess daemon(RankwatchBinary(), dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  auto get = testing::HttpGet("127.0.0.1", daemon.port(), "/-/reload");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->Header("Allow"), "POST");  // Only POST reloads.
  // One POST: its status and body ({-1, the error} when the request
  // itself failed).
  using Reply = std::pair<int, std::string>;
  const auto post = [&]() -> Reply {
    auto r =
        testing::HttpFetch("POST", "127.0.0.1", daemon.port(), "/-/reload");
    if (!r.ok()) return {-1, r.status().ToString()};
    return {r->status, r->body};
  };
  WriteConfig("g-post", "[1, 5]", "[5m]");
  // The reply says what changed, by key (issue 43).
  EXPECT_EQ(post(),
            Reply(200, "configuration reloaded: changed metrics.cutoffs\n"));
  Scrape s = daemon.Metrics();
  EXPECT_EQ(Reloads(s, "success"), 1);
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful"), 1);
  // The same file again: nothing changed, and the reply says so.
  EXPECT_EQ(post(), Reply(200, "configuration reloaded: nothing changed\n"));
  // A refused one answers 500 naming the keys (issue 43), never the file
  // or a value: those go to the log only (issue 24).
  WriteConfig("g-other", "[1, 5]", "[5m]");
  EXPECT_EQ(post(),
            Reply(500,
                  "reload refused, keeping the running configuration: the "
                  "file changes kafka.group_id, which cannot change while "
                  "running (restart to apply)\n"));
  EXPECT_EQ(Reloads(daemon.Metrics(), "failure"), 1);
  // A file that does not load: where and why are in the log.
  dir_.Write("rankwatch.yaml", "metrics: [\n");
  EXPECT_EQ(post(),
            Reply(500,
                  "reload failed, keeping the running configuration: the "
                  "file does not load (rankwatch check-config and the log "
                  "say where and why)\n"));
  EXPECT_EQ(Reloads(daemon.Metrics(), "failure"), 2);
  EXPECT_TRUE(WaitFor(
      [&] {
        return daemon.log().find("changes kafka.group_id") != std::string::npos;
      },
      5s))
      << daemon.log();
}

}  // namespace
}  // namespace rankwatch
