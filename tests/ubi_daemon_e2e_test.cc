// OpenSearch User Behavior Insights through `rankwatch run` (issue 30): the
// sample query records and events of tests/data/ubi, produced as they are
// to the daemon's topics on librdkafka's mock cluster, give the measures
// of `rankwatch replay` over the same documents (whose values
// tests/ubi_replay_test.cc works out by hand), and a bad event is rejected
// on its own. So does the excerpt of OpenSearch's own published UBI file
// (issue 44: generator records ranked by their impressions, plugin records,
// a demo app's events), whose replay tests/ubi_producers_test.cc checks
// against a reference computation.
#include <simdjson.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kafka_events.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/ubi_bulk.h"

using rankwatch::testing::RankwatchBinary;
using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::Event;
using testing::Producer;
using testing::ReadFile;
using testing::Scrape;
using testing::WaitFor;

constexpr int kPartitions = 4;
const std::string kData = std::string(SourceTree()) + "/tests/data/ubi";

// The search of the samples, 2025-01-23T13:18:22Z
// (date -u -d 2025-01-23T13:18:22Z +%s -> 1737638302): the Kafka record
// time; each document's own timestamp field is its event time.
constexpr int64_t kSearchMs = 1'737'638'302'000;
// Past every window of the samples (2025-01-23T15:00:00Z).
constexpr int64_t kAfterMs = 1'737'644'400'000;

constexpr char kBadEvent[] =
    R"({"action_name":"click","query_id":"d194b734-70a4-41dc-b103-b26a56a277b5","timestamp":"2025-01-23T13:19:30Z","event_attributes":{"object":{"object_id":"B07KN5JP3H"},"position":{"ordinal":"5"}}})";

// The lines of a JSON-lines file as events of one topic, keyed by their
// query_id (both topics keyed alike, so that a query and its events meet
// on one partition).
std::vector<Event> Lines(const std::string& path, bool results) {
  std::vector<Event> out;
  std::istringstream in(ReadFile(path));
  simdjson::dom::parser parser;
  for (std::string line; std::getline(in, line);) {
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(simdjson::padded_string(line)).get(doc),
              simdjson::SUCCESS)
        << line;
    out.push_back({results, std::string(std::string_view(doc["query_id"])),
                   line, kSearchMs});
  }
  return out;
}

class UbiDaemonE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"ubi_queries", "ubi_events"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kPartitions).ok());
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
};

TEST_F(UbiDaemonE2eTest, SampleDocumentsGiveReplaysMeasures) {
  const std::string config = dir_.Write("ubi.yaml", R"(
schema:
  preset: ubi
  unit: client_id
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                                        R"("
  group_id: g-ubi
  results_topic: ubi_queries
  judgments_topic: ubi_events
  commit_interval: 500ms
  properties:
    session.timeout.ms: "6000"
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
join:
  allowed_lateness: 2s
  idle_timeout: 1h
http:
  listen: 127.0.0.1:0
)" + std::string(testing::kAbMetrics));
  testing::DaemonProcess daemon(RankwatchBinary(), dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();

  std::vector<Event> events = Lines(kData + "/replay/queries.jsonl", true);
  for (Event& e : Lines(kData + "/replay/events.jsonl", false)) {
    events.push_back(std::move(e));
  }
  events.push_back(
      {false, "d194b734-70a4-41dc-b103-b26a56a277b5", kBadEvent, kSearchMs});
  Producer producer(cluster_->bootstrap_servers(), "ubi_queries", "ubi_events",
                    {}, kPartitions);
  producer.SendAll(events);
  ASSERT_TRUE(
      testing::WaitConsumed({&daemon}, static_cast<double>(events.size())))
      << daemon.log();
  // UBI sentinels on every partition of both topics move event time past
  // the samples' windows (a click, so that it counts however ignored
  // actions are handled).
  for (int p = 0; p < kPartitions; ++p) {
    const std::string id = "sentinel-" + std::to_string(p);
    const std::string t = std::to_string(kAfterMs);
    producer.Send(
        {true, id,
         R"({"query_id":")" + id +
             R"(","query_response_hit_ids":["s"],"timestamp":)" + t + "}",
         kAfterMs},
        p);
    producer.Send(
        {false, id,
         R"({"action_name":"click","query_id":")" + id + R"(","timestamp":)" +
             t + R"(,"event_attributes":{"object":{"object_id":"s"}}})",
         kAfterMs},
        p);
  }
  producer.Flush();
  ASSERT_TRUE(WaitFor([&] { return daemon.Finalized() >= 2; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();

  const Scrape s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), 2);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"topic", "judgments"}, {"reason", "wrong_type"}}),
            1);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total"), 1);
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total"), 0);
  testing::ExpectSameAsReplay(
      {s}, testing::ReplayJson(RankwatchBinary(), dir_, config, events),
      {"default", "B"});
}

// Past every window of the excerpt and its allowed lateness below
// (2025-06-01T00:00:00Z; its latest event is of 2025-03-03).
constexpr int64_t kAfterExcerptMs = 1'748'736'000'000;

TEST_F(UbiDaemonE2eTest, OpenSearchExcerptGivesReplaysMeasures) {
  // The lateness lets every partition's events arrive in file order,
  // which is not event-time order, without any being late: replay's
  // conditions, so the figures must agree exactly.
  const std::string config = dir_.Write("ubi.yaml", R"(
schema:
  preset: ubi
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                                        R"("
  group_id: g-ubi-excerpt
  results_topic: ubi_queries
  judgments_topic: ubi_events
  commit_interval: 500ms
  properties:
    session.timeout.ms: "6000"
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
join:
  allowed_lateness: 1000h
  idle_timeout: 1h
http:
  listen: 127.0.0.1:0
)" + std::string(testing::kAbMetrics));
  testing::DaemonProcess daemon(RankwatchBinary(), dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();

  std::vector<Event> events;
  for (const testing::UbiDocument& d : testing::ReadUbiBulk(
           kData + "/opensearch-producers/search-relevance-excerpt.ndjson")) {
    events.push_back({d.query, d.query_id, d.json, kSearchMs});
  }
  Producer producer(cluster_->bootstrap_servers(), "ubi_queries", "ubi_events",
                    {}, kPartitions);
  producer.SendAll(events);
  ASSERT_TRUE(
      testing::WaitConsumed({&daemon}, static_cast<double>(events.size())))
      << daemon.log();
  for (int p = 0; p < kPartitions; ++p) {
    const std::string id = "sentinel-" + std::to_string(p);
    const std::string t = std::to_string(kAfterExcerptMs);
    producer.Send(
        {true, id,
         R"({"query_id":")" + id +
             R"(","query_response_hit_ids":["s"],"timestamp":)" + t + "}",
         kAfterExcerptMs},
        p);
    producer.Send(
        {false, id,
         R"({"action_name":"click","query_id":")" + id + R"(","timestamp":)" +
             t + R"(,"event_attributes":{"object":{"object_id":"s"}}})",
         kAfterExcerptMs},
        p);
  }
  producer.Flush();
  // 15 searches: 10 of the generator, 5 of the plugin (the README).
  ASSERT_TRUE(WaitFor([&] { return daemon.Finalized() >= 15; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();

  const Scrape s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), 15);
  EXPECT_EQ(s.Sum("rankwatch_requests_ranked_by_impressions_total"), 10);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"topic", "results"}, {"reason", "empty_results"}}),
            s.Sum("rankwatch_events_rejected_total"));
  const std::string replay =
      testing::ReplayJson(RankwatchBinary(), dir_, config, events);
  testing::ExpectSameAsReplay({s}, replay, {"default"});
  // The demo app's cart and purchase (of June 2024, query ids without a
  // record) may arrive after January 2025's events of their partition:
  // then late here (beyond even 1000 h), orphaned in replay's event-time
  // order. Counted either way.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay)).get(doc),
            simdjson::SUCCESS);
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total") +
                s.Sum("rankwatch_orphaned_judgments_total"),
            double(int64_t(doc["events"]["orphaned_judgments"])));
  EXPECT_EQ(s.Sum("rankwatch_requests_unranked_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_impressions_ignored_total"),
            double(int64_t(doc["events"]["ignored_impressions"])));
  EXPECT_EQ(s.Sum("rankwatch_position_mismatches_total"),
            double(int64_t(doc["events"]["position_mismatches"])));
}

}  // namespace
}  // namespace rankwatch
