// Reload of the daemon's configuration: the keys refused, the metrics, and
// Daemon::Reload on a file (with a mock cluster; nothing is consumed).
#include <memory>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "daemon/server/daemon.h"
#include "daemon/server/reload_collector.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::server {
namespace {

TEST(ReloadRefusedKeysTest, NamesEveryKeyThatCannotChangeLive) {
  config::Config a;
  EXPECT_TRUE(ReloadRefusedKeys(a, a).empty());
  config::Config b = a;
  // Live: none of these is named.
  b.metrics.cutoffs = {1, 2};
  b.aggregation.windows = {std::chrono::minutes(15)};
  b.aggregation.bucket = std::chrono::seconds(30);
  b.aggregation.max_variants = 3;
  b.experiments = {{"x", "A", {"B"}}};
  b.statistics.level = 0.9;
  b.events.max_results = 10;
  b.join.max_pending_requests = 10;
  b.logging.level = "debug";
  b.logging.max_rejects_logged_per_second = 1;
  b.logging.format = config::LogFormat::kJson;  // Live (apply_logging).
  EXPECT_TRUE(ReloadRefusedKeys(a, b).empty());
  b.kafka.bootstrap_servers = "elsewhere:9092";
  b.kafka.group_id = "other";
  b.kafka.results_topic = "r2";
  b.kafka.properties["security.protocol"] = "ssl";
  b.http.listen = "0.0.0.0:1";
  b.http.basic_auth.username = "u";
  b.join.mode = config::JoinMode::kQrels;
  EXPECT_EQ(
      ReloadRefusedKeys(a, b),
      (std::vector<std::string>{
          "kafka.bootstrap_servers", "kafka.group_id", "kafka.results_topic",
          "kafka.properties", "http.listen", "http.basic_auth", "join.mode"}));
}

TEST(ReloadCollectorTest, ExportsAsPrometheusDoes) {
  ReloadStatus status;
  status.last_success_ms = 1'700'000'000'500;
  ReloadCollector collector(&status);
  std::vector<prometheus::MetricFamily> out;
  collector.Collect(&out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "rankwatch_config_last_reload_successful");
  EXPECT_EQ(out[0].metric[0].gauge.value, 1);
  EXPECT_EQ(out[1].name,
            "rankwatch_config_last_reload_success_timestamp_seconds");
  EXPECT_DOUBLE_EQ(out[1].metric[0].gauge.value, 1'700'000'000.5);
  EXPECT_EQ(out[2].name, "rankwatch_config_reloads_total");
  EXPECT_EQ(out[2].metric[0].counter.value, 0);

  status.RecordFailure();
  status.RecordSuccess(1'700'000'100'000);
  status.RecordFailure();
  out.clear();
  collector.Collect(&out);
  EXPECT_EQ(out[0].metric[0].gauge.value, 0);  // The latest failed.
  EXPECT_DOUBLE_EQ(out[1].metric[0].gauge.value, 1'700'000'100.0);
  EXPECT_EQ(out[2].metric[0].label[0].value, "success");
  EXPECT_EQ(out[2].metric[0].counter.value, 1);
  EXPECT_EQ(out[2].metric[1].label[0].value, "failure");
  EXPECT_EQ(out[2].metric[1].counter.value, 2);
}

class DaemonReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
  }
  std::string Yaml(const std::string& group, const std::string& cutoffs,
                   const std::string& http = "  enable_reload: true\n") {
    return "kafka:\n  bootstrap_servers: \"" + cluster_->bootstrap_servers() +
           "\"\n  group_id: " + group + "\nhttp:\n  listen: 127.0.0.1:0\n" +
           http + "metrics:\n  cutoffs: " + cutoffs + "\n";
  }
  // The daemon of the configuration file `path`, reloading from it; null
  // (with a failure) when it does not start.
  std::unique_ptr<Daemon> Start(const std::string& path) {
    StatusOr<config::Config> config = config::LoadConfigFile(path);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    if (!config.ok()) return nullptr;
    DaemonOptions options;
    options.config_path = path;
    StatusOr<std::unique_ptr<Daemon>> daemon = Daemon::Create(*config, options);
    EXPECT_TRUE(daemon.ok()) << daemon.status().ToString();
    return daemon.ok() ? std::move(daemon).value() : nullptr;
  }
  testing::Scrape Metrics(int port) {
    auto r = testing::HttpGet("127.0.0.1", port, "/metrics");
    EXPECT_TRUE(r.ok());
    return testing::Scrape::Parse(r.ok() ? r->body : "");
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
};

TEST_F(DaemonReloadTest, AppliesLiveChangesAndRefusesTheRest) {
  const std::string path = dir_.Write("c.yaml", Yaml("g", "[1]"));
  std::unique_ptr<Daemon> daemon = Start(path);
  ASSERT_NE(daemon, nullptr);
  const int port = daemon->http_port();
  testing::Scrape s = Metrics(port);
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful", {}), 1);
  EXPECT_GT(s.Sum("rankwatch_config_last_reload_success_timestamp_seconds", {}),
            1.7e9);

  dir_.Write("c.yaml", Yaml("g", "[1, 3]"));
  ASSERT_TRUE(daemon->Reload().ok());
  s = Metrics(port);
  EXPECT_EQ(s.Sum("rankwatch_config_reloads_total", {{"result", "success"}}),
            1);

  dir_.Write("c.yaml", "metrics: [");  // A YAML syntax error.
  EXPECT_FALSE(daemon->Reload().ok());
  dir_.Write("c.yaml", Yaml("another-group", "[1, 3, 5]"));
  const Status refused = daemon->Reload();
  EXPECT_NE(refused.message().find("kafka.group_id"), std::string::npos)
      << refused.message();
  s = Metrics(port);
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful", {}), 0);
  EXPECT_EQ(s.Sum("rankwatch_config_reloads_total", {{"result", "failure"}}),
            2);
}

TEST_F(DaemonReloadTest, OnlyPostReloads) {
  const std::string path = dir_.Write("c.yaml", Yaml("g", "[1]"));
  std::unique_ptr<Daemon> daemon = Start(path);
  ASSERT_NE(daemon, nullptr);
  const int port = daemon->http_port();
  auto get = testing::HttpGet("127.0.0.1", port, "/-/reload");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->Header("Allow"), "POST");
  dir_.Write("c.yaml", Yaml("g", "[1, 3, 5]"));
  auto post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload");
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 200) << post->body;
  const testing::Scrape s = Metrics(port);
  EXPECT_EQ(s.Sum("rankwatch_config_last_reload_successful", {}), 1);
  EXPECT_EQ(s.Sum("rankwatch_config_reloads_total", {{"result", "success"}}),
            1);
}

// Issue 24: POST /-/reload is off unless enabled, refused from web pages,
// behind basic authentication when that is on, and its failures are told
// in the log, not to the client.
TEST_F(DaemonReloadTest, ReloadEndpointIsOffByDefault) {
  const std::string path = dir_.Write("c.yaml", Yaml("g", "[1]", ""));
  std::unique_ptr<Daemon> daemon = Start(path);
  ASSERT_NE(daemon, nullptr);
  const int port = daemon->http_port();
  dir_.Write("c.yaml", Yaml("g", "[1, 3]", ""));
  auto post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload");
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 403);
  EXPECT_EQ(post->body,
            "reload is disabled (http.enable_reload); SIGHUP reloads\n");
  EXPECT_EQ(Metrics(port).Sum("rankwatch_config_reloads_total", {}), 0);
  // A reload (SIGHUP's path) that enables it makes the endpoint work.
  dir_.Write("c.yaml", Yaml("g", "[1, 3]"));
  ASSERT_TRUE(daemon->Reload().ok());
  post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload");
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 200) << post->body;
}

TEST_F(DaemonReloadTest, ReloadRefusesWebPagesAndNeedsCredentials) {
  // base64("prom:pw") = "cHJvbTpwdw==" (RFC 4648, by hand).
  const std::string path = dir_.Write(
      "c.yaml", Yaml("g", "[1]",
                     "  enable_reload: true\n  basic_auth: {username: prom, "
                     "password: pw}\n"));
  std::unique_ptr<Daemon> daemon = Start(path);
  ASSERT_NE(daemon, nullptr);
  const int port = daemon->http_port();
  const testing::HttpHeaders auth = {{"Authorization", "Basic cHJvbTpwdw=="}};
  auto post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload");
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 401);
  // What a page at another origin can send: a "simple" POST with Origin.
  for (const testing::HttpHeaders& extra : std::vector<testing::HttpHeaders>{
           {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}},
           {{"Sec-Fetch-Site", "cross-site"}},
           {{"Sec-Fetch-Site", "same-site"}}}) {
    testing::HttpHeaders headers = auth;
    headers.insert(headers.end(), extra.begin(), extra.end());
    post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload", headers);
    ASSERT_TRUE(post.ok());
    EXPECT_EQ(post->status, 403) << extra[0].first << ": " << extra[0].second;
  }
  // A DNS-rebinding page reads nothing either: its name is not served.
  testing::HttpHeaders rebound = auth;
  rebound.emplace_back("Host", "evil.example:" + std::to_string(port));
  auto metrics = testing::HttpGet("127.0.0.1", port, "/metrics", rebound);
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 403);
  // With credentials and no browser marks: reloaded; a failure is told in
  // a short body without the file's path or keys.
  post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload", auth);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 200) << post->body;
  dir_.Write("c.yaml", "metrics: [");
  post = testing::HttpFetch("POST", "127.0.0.1", port, "/-/reload", auth);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 500);
  EXPECT_EQ(post->body.find("c.yaml"), std::string::npos) << post->body;
  auto scraped = testing::HttpGet("127.0.0.1", port, "/metrics", auth);
  ASSERT_TRUE(scraped.ok());
  const testing::Scrape s = testing::Scrape::Parse(scraped->body);
  EXPECT_EQ(s.Sum("rankwatch_http_forbidden_requests_total",
                  {{"reason", "cross_site"}}),
            3);
  EXPECT_EQ(
      s.Sum("rankwatch_http_forbidden_requests_total", {{"reason", "host"}}),
      1);
}

}  // namespace
}  // namespace rankwatch::server
