#include "daemon/exporter/metrics_handler.h"

#include <prometheus/check_names.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/probe.h"
#include "daemon/http/gunzip_test_util.h"
#include "daemon/http/gzip.h"
#include "daemon/http/http_server.h"
#include "daemon/kafka/ingest_state.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::exporter {
namespace {

using testing::FeedGroups;
using testing::HasLine;
using testing::ScaleConfig;

// A daemon-like setup: a pipeline fed with `variants` x `locales` groups, a
// Kafka status with partitions, and the probe over both.
class Daemon {
 public:
  Daemon(int variants, int locales,
         const config::Config& config = ScaleConfig()) {
    StatusOr<std::unique_ptr<stream::Pipeline>> p =
        stream::Pipeline::Create(config, &clock_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
    FeedGroups(pipeline_.get(), variants, locales);
    pipeline_->OnPayload(stream::Topic::kResults, "[1]", {0, 1'000'000});
    kafka_.topics = {"results", "judgments"};
    kafka_.assigned = kafka_.consuming = true;
    kafka_.partitions = {{"results", 0, 3, 10, 13}, {"judgments", 0, 0, 5, 5}};
    kafka_.errors = {{"_TRANSPORT", 1}};
    probe_ = MakeDaemonProbe(&kafka_, {"0.1.0", "", "impression"});
  }

  // Every family but process_*: those change from one scrape to the next
  // (CPU, memory, fds), and the tests here compare scrapes;
  // process_collector_test.cc tests them.
  std::vector<prometheus::MetricFamily> Collect() {
    std::vector<prometheus::MetricFamily> families = CollectAll();
    std::erase_if(families, [](const prometheus::MetricFamily& f) {
      return f.name.starts_with("process_");
    });
    return families;
  }

  // As the daemon scrapes: copies under the lock, renders without it.
  std::vector<prometheus::MetricFamily> CollectAll() {
    stream::PipelineSnapshot snapshot;
    Probe::GuardedFamilies guarded;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stream::TakeSnapshot(*pipeline_, &snapshot);
      guarded = probe_->CollectGuarded();
    }
    return probe_->Render(snapshot, std::move(guarded));
  }

 private:
  FakeClock clock_{1'700'000'000'000};
  std::mutex mu_;
  std::unique_ptr<stream::Pipeline> pipeline_;
  kafka::IngestState kafka_;
  std::unique_ptr<Probe> probe_;
};

TEST(MetricsHandlerTest, ServesTextFormat) {
  Daemon daemon(2, 2);
  const http::Handler handler =
      MetricsHandler([&daemon] { return daemon.Collect(); });
  http::HttpRequest request;
  request.method = "GET";
  request.path = "/metrics";
  const http::HttpResponse response = handler(request);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response.body, SerializeText(daemon.Collect()));
  EXPECT_TRUE(HasLine(response.body,
                      "rankwatch_build_info{version=\"0.1.0\",revision="
                      "\"unknown\",mode=\"impression\"} 1"));
  EXPECT_TRUE(HasLine(response.body,
                      "rankwatch_events_rejected_total{topic=\"results\","
                      "reason=\"malformed_json\"} 1"));
  EXPECT_TRUE(HasLine(response.body, "rankwatch_consumer_ready 1"));
}

TEST(MetricsHandlerTest, OverHttpWithGzip) {
  Daemon daemon(2, 2);
  StatusOr<std::unique_ptr<http::HttpServer>> server =
      http::HttpServer::Start("127.0.0.1:0", 2);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Handle("/metrics",
                    MetricsHandler([&daemon] { return daemon.Collect(); }));
  const std::string expected = SerializeText(daemon.Collect());
  StatusOr<rankwatch::testing::HttpResult> plain =
      rankwatch::testing::HttpGet("127.0.0.1", (*server)->port(), "/metrics");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->Header("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(plain->body, expected);
  StatusOr<rankwatch::testing::HttpResult> gzipped =
      rankwatch::testing::HttpGet("127.0.0.1", (*server)->port(), "/metrics",
                                  {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gzipped.ok()) << gzipped.status().ToString();
  EXPECT_EQ(gzipped->Header("Content-Encoding"), "gzip");
  EXPECT_EQ(http::GunzipForTest(gzipped->body),
            std::optional<std::string>(expected));
}

TEST(MetricsHandlerTest, NamesFollowPrometheusConventions) {
  Daemon daemon(2, 2);
  std::set<std::string> names;
  for (const prometheus::MetricFamily& f : daemon.Collect()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate family";
    EXPECT_TRUE(prometheus::CheckMetricName(f.name));
    EXPECT_TRUE(f.name.starts_with("rankwatch_"));
    EXPECT_EQ(f.name.ends_with("_total"),
              f.type == prometheus::MetricType::Counter);
    EXPECT_FALSE(f.help.empty());
    EXPECT_EQ(f.help.find_first_of("\\\n"), std::string::npos);
    for (const prometheus::ClientMetric& m : f.metric) {
      for (const prometheus::ClientMetric::Label& l : m.label) {
        EXPECT_TRUE(prometheus::CheckLabelName(l.name)) << l.name;
        EXPECT_NE(l.name, "le");
      }
    }
  }
}

// The client libraries' process metrics, after rankwatch_build_info.
TEST(MetricsHandlerTest, ProbeExportsProcessMetrics) {
  Daemon daemon(1, 1);
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& f : daemon.CollectAll()) {
    names.push_back(f.name);
  }
  ASSERT_GE(names.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 7),
            (std::vector<std::string>{
                "rankwatch_build_info", "process_cpu_seconds_total",
                "process_resident_memory_bytes", "process_virtual_memory_bytes",
                "process_open_fds", "process_max_fds",
                "process_start_time_seconds"}));
}

TEST(MetricsHandlerTest, PromtoolAcceptsTheOutput) {
#ifndef RANKWATCH_PROMTOOL
  GTEST_SKIP() << "promtool not found at configure time";
#else
  Daemon daemon(3, 2);
  const std::string text = SerializeText(daemon.Collect());
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60), text);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  // No lint problem either (promtool reports them with exit code 3).
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
#endif
}

}  // namespace
}  // namespace rankwatch::exporter
