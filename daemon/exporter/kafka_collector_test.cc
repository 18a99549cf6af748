#include "daemon/exporter/kafka_collector.h"

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

std::string Scrape(const kafka::KafkaStatus& status) {
  std::vector<prometheus::MetricFamily> families;
  KafkaCollector(&status).Collect(&families);
  return SerializeText(families);
}

TEST(KafkaCollectorTest, FreshStatusExportsKnownSeriesAtZero) {
  kafka::KafkaStatus status;
  status.topics = {"search-results", "search-judgments"};
  const std::string text = Scrape(status);
  EXPECT_TRUE(HasLine(
      text, "rankwatch_assigned_partitions{topic=\"search-results\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_assigned_partitions{topic=\"search-judgments\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_replayed_events_total{topic=\"search-results\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"ok\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_commits_total{result=\"failed\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_dead_letters_total{result=\"produced\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_dead_letters_total{result=\"failed\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_rebalances_total 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_consumer_ready 0"));
  // No partition, no error: declared families without series.
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_consumer_lag_messages gauge"));
  EXPECT_TRUE(
      LinesWithPrefix(text, "rankwatch_consumer_lag_messages{").empty());
  EXPECT_TRUE(LinesWithPrefix(text, "rankwatch_kafka_errors_total{").empty());
}

TEST(KafkaCollectorTest, PartitionsCountersAndReadiness) {
  kafka::KafkaStatus status;
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
  EXPECT_TRUE(HasLine(text, "rankwatch_consumer_ready 1"));
  status.consuming = false;
  EXPECT_TRUE(HasLine(Scrape(status), "rankwatch_consumer_ready 0"));
}

// /readyz (as the daemon wires it) and the gauge answer alike in every
// state, stalls included.
TEST(KafkaCollectorTest, GaugeAndReadyzAgree) {
  kafka::KafkaStatus status;
  status.topics = {"results", "judgments"};
  FakeClock clock(1'700'000'000'000);
  std::mutex mu;
  const KafkaCollector collector(&status, &clock);
  const http::Handler readyz =
      http::ReadinessHandler(LockedReadiness(&status, &mu, &clock));
  auto check = [&](bool expected, const char* state) {
    std::vector<prometheus::MetricFamily> families;
    collector.Collect(&families);
    const std::string line =
        std::string("rankwatch_consumer_ready ") + (expected ? "1" : "0");
    EXPECT_TRUE(HasLine(SerializeText(families), line)) << state;
    EXPECT_EQ(readyz(http::HttpRequest{}).status, expected ? 200 : 503)
        << state;
  };
  check(false, "fresh");
  status.assigned = true;
  check(false, "assigned, not consuming");
  status.consuming = true;
  status.last_poll_mono_ms = clock.MonotonicMillis();
  check(true, "consuming");
  clock.Advance(kafka::KafkaStatus::kStallMs - 1);
  check(true, "polled 9.999 s ago");
  clock.Advance(1);
  check(false, "stalled 10 s");
  clock.Set(0);  // A wall-clock step does not matter.
  status.last_poll_mono_ms = clock.MonotonicMillis();
  check(true, "polled again");
  status.assigned = false;
  check(false, "revoked");
  status.assigned = true;
  status.consuming = false;
  check(false, "shut down");
}

}  // namespace
}  // namespace rankwatch::exporter
