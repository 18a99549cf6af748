#include "daemon/exporter/kafka_collector.h"

#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/http/handlers.h"
#include "gtest/gtest.h"

namespace rankwatch::exporter {
namespace {

using testing::HasLine;
using testing::LinesWithPrefix;

std::string Scrape(const kafka::IngestState& status) {
  std::vector<prometheus::MetricFamily> families;
  KafkaCollector(&status).Collect(&families);
  return SerializeText(families);
}

TEST(KafkaCollectorTest, FreshStatusExportsKnownSeriesAtZero) {
  kafka::IngestState status;
  status.topics = {"search-results", "search-judgments"};
  const std::string text = Scrape(status);
  EXPECT_TRUE(HasLine(
      text, "rankwatch_assigned_partitions{topic=\"search-results\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_assigned_partitions{topic=\"search-judgments\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_replayed_events_total{topic=\"search-results\"} 0"));
  EXPECT_TRUE(HasLine(
      text,
      "rankwatch_events_deleted_unread_total{topic=\"search-judgments\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"ok\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"failed\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_dead_letters_total{result=\"produced\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_dead_letters_total{result=\"failed\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_rebalances_total 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_consumer_ready 0"));
  // Every reason, from the start.
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_consumer_ready_reason{").size(),
            7u);
  EXPECT_TRUE(HasLine(
      text, "rankwatch_consumer_ready_reason{reason=\"not_consuming\"} 1"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_consumer_ready_reason{reason=\"ready\"} 0"));
  // No partition, no error: declared families without series.
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_consumer_lag_messages gauge"));
  EXPECT_TRUE(
      LinesWithPrefix(text, "rankwatch_consumer_lag_messages{").empty());
  EXPECT_TRUE(LinesWithPrefix(text, "rankwatch_kafka_errors_total{").empty());
}

TEST(KafkaCollectorTest, PartitionsCountersAndReadiness) {
  kafka::IngestState status;
  status.topics = {"results", "judgments"};
  status.assigned = true;
  status.consuming = true;
  status.partitions = {{"results", 0, 12, 100, 112},
                       {"results", 3, 0, 50, 50},
                       {"judgments", 1, -1, -1, 7}};  // Lag not known yet.
  status.errors = {{"_TRANSPORT", 2}, {"_ALL_BROKERS_DOWN", 1}};
  status.commits_ok = 9;
  status.commits_failed = 1;
  status.rebalances = 2;
  status.dead_letters_produced = 5;
  status.dead_letters_failed = 1;
  status.replayed_events = {{"results", 40}};
  status.deleted_unread_events = {{"judgments", 31}};
  const std::string text = Scrape(status);
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_consumer_lag_messages{topic=\"results\","
                      "partition=\"0\"} 12"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_consumer_lag_messages{topic=\"results\","
                      "partition=\"3\"} 0"));
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_consumer_lag_messages{").size(),
            2u);
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_consumer_committed_offset{topic=\"results\","
                      "partition=\"0\"} 100"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_consumer_high_watermark_offset{topic="
                      "\"judgments\",partition=\"1\"} 7"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_assigned_partitions{topic=\"results\"} 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_assigned_partitions{topic=\"judgments\"} 1"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_kafka_errors_total{error=\"_TRANSPORT\"} 2"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_kafka_errors_total{error=\"_ALL_BROKERS_DOWN\"} 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"ok\"} 9"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"failed\"} 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_rebalances_total 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_dead_letters_total{result=\"produced\"} 5"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_replayed_events_total{topic=\"results\"} 40"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_replayed_events_total{topic=\"judgments\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_events_deleted_unread_total{topic=\"judgments\"} 31"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_events_deleted_unread_total{topic=\"results\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_consumer_ready 1"));
  status.consuming = false;
  EXPECT_TRUE(HasLine(Scrape(status), "rankwatch_consumer_ready 0"));
}

// /readyz (as the daemon wires it) and the gauges answer alike in every
// state, stalls included, with the reason in the body and in the reason
// series.
TEST(KafkaCollectorTest, GaugesAndReadyzAgree) {
  kafka::IngestState status;
  status.topics = {"results", "judgments"};
  status.not_ready_after_ms = 3000;
  FakeClock clock(1'700'000'000'000);
  std::mutex mu;
  const KafkaCollector collector(&status, &clock);
  // The probe the daemon gives /readyz (daemon/server/daemon.cc).
  const http::Handler readyz = http::ReadinessHandler([&] {
    std::lock_guard<std::mutex> lock(mu);
    const int64_t now = clock.MonotonicMillis();
    return http::Readiness{status.ready(now), status.ReadinessMessage(now)};
  });
  auto check = [&](const std::string& reason, const std::string& body) {
    std::vector<prometheus::MetricFamily> families;
    collector.Collect(&families);
    const std::string text = SerializeText(families);
    const bool ready = reason == "ready";
    EXPECT_TRUE(HasLine(
        text, std::string("rankwatch_consumer_ready ") + (ready ? "1" : "0")))
        << reason;
    EXPECT_TRUE(HasLine(
        text, "rankwatch_consumer_ready_reason{reason=\"" + reason + "\"} 1"))
        << reason;
    int ones = 0;
    for (const std::string& line :
         LinesWithPrefix(text, "rankwatch_consumer_ready_reason{")) {
      ones += line.ends_with(" 1") ? 1 : 0;
    }
    EXPECT_EQ(ones, 1) << reason;
    http::HttpRequest known;  // No auth configured, or valid credentials.
    known.authenticated = true;
    const http::HttpResponse r = readyz(known);
    EXPECT_EQ(r.status, ready ? 200 : 503) << reason;
    EXPECT_EQ(r.body, body + "\n") << reason;
    // With basic auth on, a stranger learns the code, not the topics.
    const http::HttpResponse stranger = readyz(http::HttpRequest{});
    EXPECT_EQ(stranger.status, r.status) << reason;
    EXPECT_EQ(stranger.body, ready ? "ready\n" : "not ready\n") << reason;
  };
  check("not_consuming",
        "not ready (not_consuming): not consuming (starting, loading the "
        "judgments table, or shut down)");
  status.consuming = true;
  check("not_assigned",
        "not ready (not_assigned): no partitions assigned (joining the "
        "consumer group or rebalancing)");
  status.assigned = true;
  status.last_poll_mono_ms = clock.MonotonicMillis();
  status.stalest_fetch =
      kafka::FetchLag{"results", 1, clock.MonotonicMillis(), true};
  check("ready", "ready");
  clock.Advance(3000);
  status.last_poll_mono_ms = clock.MonotonicMillis();
  check("ready", "ready");  // No fetch for exactly the bound: still ready.
  clock.Advance(1);
  status.last_poll_mono_ms = clock.MonotonicMillis();
  check("fetch_stalled",
        "not ready (fetch_stalled): no fetch for results/1 for 3s1ms "
        "(kafka.not_ready_after 3s): its leader broker does not answer");
  status.stalest_fetch->leader_up = false;
  check("broker_unreachable",
        "not ready (broker_unreachable): no fetch for results/1 for 3s1ms "
        "(kafka.not_ready_after 3s): its leader broker is unreachable");
  status.stalest_fetch->progress_mono_ms = clock.MonotonicMillis();
  status.stalest_fetch->leader_up = true;
  check("ready", "ready");  // Fetches resumed.
  clock.Advance(kafka::IngestState::kStallMs - 1);
  status.stalest_fetch->progress_mono_ms = clock.MonotonicMillis();
  check("ready", "ready");  // Polled 9.999 s ago.
  clock.Advance(1);
  status.stalest_fetch->progress_mono_ms = clock.MonotonicMillis();
  check("loop_stalled",
        "not ready (loop_stalled): the consume loop has not polled for 10s");
  clock.Set(0);  // A wall-clock step does not matter.
  status.last_poll_mono_ms = clock.MonotonicMillis();
  check("ready", "ready");
  status.assigned = false;
  check("not_assigned",
        "not ready (not_assigned): no partitions assigned (joining the "
        "consumer group or rebalancing)");
  status.assigned = true;
  status.consuming = false;
  check("not_consuming",
        "not ready (not_consuming): not consuming (starting, loading the "
        "judgments table, or shut down)");
  // Every broker down while starting, then while joining the group: the
  // broker, not a rebalance, is why (issue 25).
  status.brokers_down =
      kafka::BrokersDown{"127.0.0.1:1", "Connection refused", false};
  check("broker_unreachable",
        "not ready (broker_unreachable): cannot reach any bootstrap broker "
        "(127.0.0.1:1): Connection refused");
  status.consuming = true;
  status.assigned = false;
  check("broker_unreachable",
        "not ready (broker_unreachable): cannot reach any bootstrap broker "
        "(127.0.0.1:1): Connection refused");
  status.brokers_down.reset();
  check("not_assigned",
        "not ready (not_assigned): no partitions assigned (joining the "
        "consumer group or rebalancing)");
}

}  // namespace
}  // namespace rankwatch::exporter
