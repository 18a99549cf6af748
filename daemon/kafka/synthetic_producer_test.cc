#include "daemon/kafka/synthetic_producer.h"

#include <signal.h>
#include <simdjson.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/kafka/kafka_test_util.h"
#include "daemon/kafka/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::kafka {
namespace {

using std::chrono::seconds;

constexpr int kPartitions = 4;

struct Fixture {
  std::unique_ptr<MockCluster> cluster;

  Fixture() {
    StatusOr<std::unique_ptr<MockCluster>> started = MockCluster::Start(1);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return;
    cluster = std::move(started).value();
    EXPECT_TRUE(cluster->CreateTopic("results", kPartitions).ok());
    EXPECT_TRUE(cluster->CreateTopic("judgments", kPartitions).ok());
  }
};

int64_t TimestampOf(const std::string& json) {
  simdjson::dom::parser parser;
  return parser.parse(json)["timestamp"].get_int64().value();
}

// Checks what landed in the topics against the run's counts: every event
// keyed by its request id, stamped with its event time, and a request's
// judgments in the partition number of its results.
void CheckTopics(const MockCluster& cluster, const ProduceStats& stats) {
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      cluster.bootstrap_servers(), "results", kPartitions,
      static_cast<size_t>(stats.results_events), seconds(10));
  const std::vector<testutil::ConsumedMessage> judgments = testutil::ConsumeAll(
      cluster.bootstrap_servers(), "judgments", kPartitions,
      static_cast<size_t>(stats.judgment_events), seconds(10));
  ASSERT_EQ(static_cast<int64_t>(results.size()), stats.results_events);
  ASSERT_EQ(static_cast<int64_t>(judgments.size()), stats.judgment_events);
  std::map<std::string, int32_t> partition_of;
  for (const testutil::ConsumedMessage& m : results) {
    EXPECT_NE(m.value.find("\"request_id\":\"" + m.key + "\""),
              std::string::npos);
    EXPECT_EQ(m.timestamp_ms, TimestampOf(m.value));
    EXPECT_TRUE(partition_of.emplace(m.key, m.partition).second);
  }
  for (const testutil::ConsumedMessage& m : judgments) {
    EXPECT_EQ(m.timestamp_ms, TimestampOf(m.value));
    ASSERT_TRUE(partition_of.count(m.key) > 0) << m.key;
    EXPECT_EQ(partition_of[m.key], m.partition);
  }
}

TEST(SyntheticProducerTest, FastModeSimulatesTheClock) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create({});
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.fast = true;
  options.rate = 1000;
  options.start_ms = 1'700'000'000'000;
  options.duration_ms = 3000;  // Of event time: 3000 requests.
  int progress_calls = 0;
  options.progress_interval_ms = 0;
  options.progress = [&](const ProduceStats&) { ++progress_calls; };
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->requests, 3000);
  EXPECT_EQ(stats->results_events, 3000);
  EXPECT_NEAR(static_cast<double>(stats->judgment_events) / 3000, 3.0, 0.2);
  EXPECT_EQ(stats->delivered, stats->events());
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  EXPECT_EQ(stats->first_event_ms, options.start_ms);
  EXPECT_EQ(stats->last_event_ms, options.start_ms + 2999);
  EXPECT_GT(progress_calls, 0);
  CheckTopics(*f.cluster, *stats);
}

TEST(SyntheticProducerTest, RealtimeModeHoldsJudgmentsUntilDue) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  SyntheticConfig config;
  config.click_delay_mean_ms = 100;
  config.purchase_delay_mean_ms = 200;
  config.max_delay_ms = 400;
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create(config);
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.rate = 200;
  options.duration_ms = 1000;
  int64_t max_queued = 0;
  options.progress_interval_ms = 0;
  options.progress = [&](const ProduceStats& s) {
    max_queued = std::max(max_queued, s.queued_judgments);
  };
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const int64_t before_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_NEAR(static_cast<double>(stats->requests), 200, 10);
  EXPECT_GE(stats->elapsed_seconds, 1.0);
  EXPECT_LT(stats->elapsed_seconds, 3.0);
  EXPECT_GT(max_queued, 0);  // Judgments waited for their time.
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  EXPECT_GE(stats->first_event_ms, before_ms);
  CheckTopics(*f.cluster, *stats);
}

TEST(SyntheticProducerTest, StopFlagEndsARunWithoutLimits) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create({});
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.rate = 100;
  std::atomic<bool> stop{false};
  options.progress_interval_ms = 300;
  options.progress = [&](const ProduceStats&) { stop = true; };
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok());
  StatusOr<ProduceStats> stats = (*producer)->Run(&stop);
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->requests, 10);
  EXPECT_LT(stats->requests, 100);
  EXPECT_TRUE(stats->ok());
}

TEST(SyntheticProducerTest, RejectsBadOptions) {
  auto create = [](ProduceOptions options) {
    return SyntheticProducer::Create(std::move(options),
                                     *SyntheticTraffic::Create({}))
        .status();
  };
  ProduceOptions options;
  EXPECT_EQ(create(options).code(),
            StatusCode::kInvalidArgument);  // No
                                            // bootstrap.
  options.bootstrap_servers = "127.0.0.1:1";
  options.rate = 0;
  EXPECT_EQ(create(options).code(), StatusCode::kInvalidArgument);
  options.rate = 10;
  options.properties["no.such.property"] = "1";
  const Status bad_property = create(options);
  EXPECT_EQ(bad_property.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_property.message().find("no.such.property"), std::string::npos);
}

TEST(ProduceSyntheticCommandTest, ProducesAndPrintsASummary) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RANKWATCH_BINARY, "produce-synthetic", "--bootstrap",
           f.cluster->bootstrap_servers(), "--fast", "--requests", "500",
           "--seed", "7", "--variants", "A,B:0.5", "--regress-variant", "B",
           "--regress-after", "1s", "-X", "linger.ms=1"},
          seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("requests=500 results=500 judgments=", 0), 0u)
      << result.out;
  EXPECT_NE(result.out.find("delivery_errors=0 undelivered=0"),
            std::string::npos);
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "results", kPartitions, 500, seconds(10));
  ASSERT_EQ(results.size(), 500u);
  std::set<std::string> variants;
  for (const auto& m : results) {
    EXPECT_EQ(m.key.rfind("req-7-", 0), 0u);
    variants.insert(m.value.substr(m.value.find("\"variant\":") + 10, 3));
  }
  EXPECT_EQ(variants, (std::set<std::string>{"\"A\"", "\"B\""}));
}

TEST(ProduceSyntheticCommandTest, SigtermStopsAnUnboundedRun) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  rankwatch::testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  rankwatch::testing::ChildProcess producer(
      {RANKWATCH_BINARY, "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--rate", "200", "--status-interval",
       "0s"},
      out, dir.path() + "/err");
  ASSERT_TRUE(producer.started());
  rankwatch::testing::SleepFor(std::chrono::milliseconds(700));
  producer.Signal(SIGTERM);
  EXPECT_EQ(producer.Wait(seconds(10)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(dir.path() + "/err");
  const std::string summary = rankwatch::testing::ReadFile(out);
  EXPECT_EQ(summary.rfind("requests=", 0), 0u) << summary;
  EXPECT_NE(summary.find("delivery_errors=0 undelivered=0"), std::string::npos);
}

TEST(ProduceSyntheticCommandTest, BadUsageExitsTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--rate", "0"},
        {"--duration", "soon"},
        {"--regress-variant", "C"},
        {"-X", "novalue"},
        {"--duration", "1s", "--requests", "5"}}) {
    std::vector<std::string> argv = {RANKWATCH_BINARY, "produce-synthetic",
                                     "--bootstrap", "127.0.0.1:1"};
    argv.insert(argv.end(), args.begin(), args.end());
    const rankwatch::testing::CommandResult result =
        rankwatch::testing::RunCommand(argv, seconds(10));
    EXPECT_EQ(result.exit_code, 2) << args[0] << ": " << result.err;
  }
}

}  // namespace
}  // namespace rankwatch::kafka
