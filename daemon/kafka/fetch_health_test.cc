#include "daemon/kafka/fetch_health.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

// The shape of librdkafka's statistics, cut down to the fields read.
constexpr char kStats[] = R"json({
  "name": "rankwatch#consumer-1",
  "brokers": {
    "127.0.0.1:9092/1": {"nodeid": 1, "state": "UP", "source": "learned"},
    "127.0.0.1:9093/2": {"nodeid": 2, "state": "DOWN", "source": "learned"},
    "GroupCoordinator": {"nodeid": 2, "state": "UP", "source": "logical"}
  },
  "topics": {
    "results": {"partitions": {
      "0": {"partition": 0, "leader": 1, "fetch_state": "active"},
      "1": {"partition": 1, "leader": 2, "fetch_state": "active"},
      "2": {"partition": 2, "leader": 1, "fetch_state": "offset-query"},
      "-1": {"partition": -1, "leader": -1, "fetch_state": "none"}
    }},
    "judgments": {"partitions": {
      "3": {"partition": 3, "leader": 7, "fetch_state": "active"},
      "4": {"partition": 4, "fetch_state": "active"}
    }}
  }
})json";

TEST(ParseFetchHealthTest, LeaderUpAndActiveIsHealthy) {
  const std::vector<PartitionFetchHealth> got = ParseFetchHealth(kStats);
  ASSERT_EQ(got.size(), 4u);
  // results/0: active, broker 1 UP.
  EXPECT_EQ(got[0].topic, "results");
  EXPECT_EQ(got[0].partition, 0);
  EXPECT_TRUE(got[0].healthy);
  // results/1: broker 2 DOWN; its logical alias being UP does not count.
  EXPECT_EQ(got[1].partition, 1);
  EXPECT_FALSE(got[1].healthy);
  // results/2: not fetching yet.
  EXPECT_EQ(got[2].partition, 2);
  EXPECT_FALSE(got[2].healthy);
  // judgments/3: leader 7 unknown. judgments/4 has no leader field: left
  // out, as is the internal partition -1.
  EXPECT_EQ(got[3].topic, "judgments");
  EXPECT_EQ(got[3].partition, 3);
  EXPECT_FALSE(got[3].healthy);
}

TEST(ParseFetchHealthTest, MalformedInputGivesNothing) {
  EXPECT_TRUE(ParseFetchHealth("").empty());
  EXPECT_TRUE(ParseFetchHealth("{not json").empty());
  EXPECT_TRUE(ParseFetchHealth("[1, 2]").empty());
  EXPECT_TRUE(ParseFetchHealth(R"({"brokers": {}})").empty());
  EXPECT_TRUE(
      ParseFetchHealth(R"({"topics": {"t": {"partitions": 3}}})").empty());
}

TEST(ParseFetchHealthTest, SkipsPartitionsBeyondInt32AndWrongTypes) {
  const std::vector<PartitionFetchHealth> got = ParseFetchHealth(R"({
    "brokers": {"b": {"nodeid": 1, "state": "UP"}},
    "topics": {"t": {"partitions": {
      "a": {"partition": 2147483648, "leader": 1, "fetch_state": "active"},
      "b": {"partition": "5", "leader": 1, "fetch_state": "active"},
      "c": {"partition": 2147483647, "leader": 1, "fetch_state": "active"}
    }}}})");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].partition, 2147483647);
  EXPECT_TRUE(got[0].healthy);
}

TEST(FetchHealthTableTest, HealthyUntilStale) {
  FetchHealthTable table;
  EXPECT_FALSE(table.Healthy(3, 0));  // Never reported.
  table.Record(3, true, 1000);
  EXPECT_TRUE(table.Healthy(3, 1000));
  EXPECT_TRUE(table.Healthy(3, 1000 + FetchHealthTable::kStaleMs - 1));
  EXPECT_FALSE(table.Healthy(3, 1000 + FetchHealthTable::kStaleMs));
  table.Record(3, false, 7000);
  EXPECT_FALSE(table.Healthy(3, 7000));
  table.Record(3, true, 8000);
  EXPECT_TRUE(table.Healthy(3, 8000));
  EXPECT_FALSE(table.Healthy(2, 8000));
}

// Trimmed from librdkafka 2.0.2's statistics of a consumer of the mock
// cluster: the real broker serves results-0 and results-1; the logical
// GroupCoordinator (same node) serves none and is skipped; a second broker,
// down, serves judgments-0.
TEST(ParseBrokerFetchesTest, TopparsOfRealBrokers) {
  const std::string json = R"({
    "brokers": {
      "127.0.0.1:33573/1": {"name": "127.0.0.1:33573/1", "nodeid": 1,
        "source": "learned", "state": "UP", "rxidle": 397489,
        "toppars": {
          "results-0": {"topic": "results", "partition": 0},
          "results-1": {"topic": "results", "partition": 1}}},
      "GroupCoordinator": {"name": "GroupCoordinator", "nodeid": 1,
        "source": "logical", "state": "UP", "rxidle": 5,
        "toppars": {"x-0": {"topic": "x", "partition": 0}}},
      "127.0.0.1:33574/2": {"nodeid": 2, "source": "learned",
        "state": "TRY_CONNECT", "rxidle": -1,
        "toppars": {
          "judgments-0": {"topic": "judgments", "partition": 0},
          "bad": {"topic": "judgments", "partition": -1},
          "no-topic": {"partition": 3}}}
    },
    "topics": {}
  })";
  const std::vector<BrokerFetch> got = ParseBrokerFetches(json);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].topic, "results");
  EXPECT_EQ(got[0].partition, 0);
  EXPECT_TRUE(got[0].broker_up);
  EXPECT_EQ(got[0].rx_idle_ms, 397);  // 397489 us.
  EXPECT_EQ(got[1].partition, 1);
  EXPECT_EQ(got[2].topic, "judgments");
  EXPECT_FALSE(got[2].broker_up);
  EXPECT_EQ(got[2].rx_idle_ms, -1);
  EXPECT_TRUE(ParseBrokerFetches("{not json").empty());
  EXPECT_TRUE(ParseBrokerFetches("{\"brokers\": []}").empty());
}

// The brokers a client is connected to: the bootstrap one (configured)
// and learned ones in state UP; not the logical GroupCoordinator, not the
// internal broker, not one in another state. Seen in librdkafka 2.0.2's
// statistics of a consumer of 127.0.0.1:1 (a closed port): the bootstrap
// broker in INIT between attempts, nothing else.
TEST(ParseFetchStatisticsTest, BrokersUp) {
  EXPECT_EQ(ParseFetchStatistics(R"({"brokers": {
      "127.0.0.1:1/bootstrap": {"nodeid": -1, "source": "configured",
                                "state": "INIT"},
      "GroupCoordinator": {"nodeid": -1, "source": "logical",
                           "state": "INIT"}}})")
                .brokers_up,
            0);
  EXPECT_EQ(ParseFetchStatistics(R"({"brokers": {
      "127.0.0.1:9092/bootstrap": {"source": "configured", "state": "UP"},
      "127.0.0.1:9092/1": {"source": "learned", "state": "UP"},
      "127.0.0.1:9093/2": {"source": "learned", "state": "DOWN"},
      "GroupCoordinator": {"source": "logical", "state": "UP"},
      ":0/internal": {"source": "internal", "state": "UP"}}})")
                .brokers_up,
            2);
  EXPECT_EQ(ParseFetchStatistics(R"({"brokers": {
      "b": {"source": "learned", "state": "TRY_CONNECT"},
      "c": {"state": "UP"}}})")
                .brokers_up,
            0);
  EXPECT_EQ(ParseFetchStatistics("{not json").brokers_up, 0);
}

}  // namespace
}  // namespace rankwatch::kafka
