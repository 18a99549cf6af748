#include "daemon/kafka/cluster_check.h"

#include <chrono>
#include <string>
#include <vector>

#include "daemon/kafka/kafka_test_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

using Level = ClusterFinding::Level;
using std::chrono::milliseconds;
using std::chrono::seconds;

config::KafkaConfig KafkaAt(const std::string& bootstrap) {
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = bootstrap;
  kafka.group_id = "rankwatch-check";
  return kafka;
}

// One broker with results (3 partitions) and judgments (2): the metadata
// lists both and the broker; nothing else exists on a fresh mock.
TEST(FetchClusterMetadataTest, ListsBrokersAndTopicsOfTheMockCluster) {
  auto cluster = testing::StartCluster({{"results", 3}, {"judgments", 2}});
  ASSERT_NE(cluster, nullptr);
  StatusOr<ClusterMetadata> md =
      FetchClusterMetadata(KafkaAt(cluster->bootstrap_servers()), seconds(10));
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  ASSERT_EQ(md->brokers.size(), 1u);
  EXPECT_EQ(md->brokers[0].id, 1);
  EXPECT_EQ("127.0.0.1:" + std::to_string(md->brokers[0].port),
            cluster->bootstrap_servers());
  ASSERT_EQ(md->topics.size(), 2u);
  EXPECT_EQ(md->topics.at("results").partitions, 3);
  EXPECT_EQ(md->topics.at("judgments").partitions, 2);
  EXPECT_EQ(md->topics.at("results").error, "");
  // Listing every topic created none (a request by name would, on the
  // mock): a second listing still has two.
  md = FetchClusterMetadata(KafkaAt(cluster->bootstrap_servers()), seconds(10));
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->topics.size(), 2u);
}

// Nothing listens on port 1: refused at once, reported at the first
// attempt's end (0.5 s), long before the 10 s bound.
TEST(FetchClusterMetadataTest, UnreachableFailsFastWithTheCause) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ClusterMetadata> md =
      FetchClusterMetadata(KafkaAt("127.0.0.1:1"), seconds(10));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(md.status().message(),
            "cannot reach kafka at 127.0.0.1:1 (Connection refused)");
  EXPECT_LT(took, seconds(5));
}

// A mock broker set down refuses connections, like a stopped broker.
TEST(FetchClusterMetadataTest, BrokerDownIsUnreachable) {
  auto cluster = testing::StartCluster({{"results", 1}});
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->SetBrokerDown(-1).ok());
  StatusOr<ClusterMetadata> md =
      FetchClusterMetadata(KafkaAt(cluster->bootstrap_servers()), seconds(10));
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.status().message(), "cannot reach kafka at " +
                                       cluster->bootstrap_servers() +
                                       " (Connection refused)");
}

TEST(FetchClusterMetadataTest, RefusedPropertyIsInvalidArgument) {
  config::KafkaConfig kafka = KafkaAt("127.0.0.1:1");
  kafka.properties["fetch.wait.max.ms"] = "later";
  StatusOr<ClusterMetadata> md = FetchClusterMetadata(kafka, seconds(10));
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.status().code(), StatusCode::kInvalidArgument);
}

ClusterMetadata TwoBrokers() {
  ClusterMetadata md;
  md.brokers = {{1, "k1", 9092}, {2, "k2", 9093}};
  md.topics["results"] = {4, ""};
  md.topics["judgments"] = {4, ""};
  md.topics["__consumer_offsets"] = {50, ""};
  return md;
}

config::Config ConfigAt(const std::string& bootstrap) {
  config::Config config;
  config.kafka.bootstrap_servers = bootstrap;
  return config;
}

TEST(CheckClusterTest, EverythingThere) {
  const std::vector<ClusterFinding> f =
      CheckCluster(ConfigAt("k1:9092"), TwoBrokers());
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].level, Level::kOk);
  EXPECT_EQ(f[0].message,
            "kafka: reached k1:9092, 2 brokers: 1 at k1:9092, 2 at k2:9093");
  EXPECT_EQ(f[1].message,
            "kafka: topic 'results' (kafka.results_topic): 4 partitions");
  EXPECT_EQ(f[2].message,
            "kafka: topic 'judgments' (kafka.judgments_topic): 4 partitions");
  EXPECT_EQ(f[2].level, Level::kOk);
}

// A misspelt topic is an error naming the existing one (1 edit away);
// a name far from every topic gets no suggestion.
TEST(CheckClusterTest, MissingTopicIsAnErrorWithTheClosestName) {
  config::Config config = ConfigAt("k1:9092");
  config.kafka.judgments_topic = "judgment";
  config.kafka.results_topic = "impressions";
  const std::vector<ClusterFinding> f = CheckCluster(config, TwoBrokers());
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1].level, Level::kError);
  EXPECT_EQ(f[1].message,
            "kafka: topic 'impressions' (kafka.results_topic) not found at "
            "k1:9092");
  EXPECT_EQ(f[2].level, Level::kError);
  EXPECT_EQ(f[2].message,
            "kafka: topic 'judgment' (kafka.judgments_topic) not found at "
            "k1:9092 (did you mean 'judgments'?)");
}

// Impression mode joins a request's events in one replica: 4 and 2
// partitions warn (the daemon's own start-up warning); qrels mode reads
// the judgments whole, so it does not care.
TEST(CheckClusterTest, PartitionCountsDifferInImpressionModeOnly) {
  ClusterMetadata md = TwoBrokers();
  md.topics["judgments"].partitions = 2;
  md.topics["results"].partitions = 1;
  config::Config config = ConfigAt("k1:9092");
  std::vector<ClusterFinding> f = CheckCluster(config, md);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1].message,
            "kafka: topic 'results' (kafka.results_topic): 1 partition");
  EXPECT_EQ(f[3].level, Level::kWarning);
  EXPECT_EQ(f[3].message,
            "kafka: topics 'results' (1 partition) and 'judgments' (2 "
            "partitions) differ in partition count: a request's results and "
            "judgments can land in different replicas and never meet");
  config.join.mode = config::JoinMode::kQrels;
  f = CheckCluster(config, md);
  EXPECT_EQ(f.size(), 3u);
}

TEST(CheckClusterTest, DeadLetterTopicAndTopicErrorsWarn) {
  ClusterMetadata md = TwoBrokers();
  md.topics["results"].error = "LEADER_NOT_AVAILABLE";
  config::Config config = ConfigAt("k1:9092");
  config.dead_letter.topic = "rankwatch-dead";
  const std::vector<ClusterFinding> f = CheckCluster(config, md);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[1].level, Level::kWarning);
  EXPECT_EQ(f[1].message,
            "kafka: topic 'results' (kafka.results_topic): "
            "LEADER_NOT_AVAILABLE");
  EXPECT_EQ(f[2].level, Level::kOk);
  EXPECT_EQ(f[4].level, Level::kWarning);
  EXPECT_EQ(f[4].message,
            "kafka: topic 'rankwatch-dead' (dead_letter.topic) not found at "
            "k1:9092: the first dead letter creates it only where the broker "
            "auto-creates topics");
}

}  // namespace
}  // namespace rankwatch::kafka
