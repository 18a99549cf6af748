#include "daemon/sim/mock_cluster.h"

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "daemon/sim/kafka_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

// Clients reconnect quickly after a broker comes back (the default backoff
// grows to 10 s).
const std::map<std::string, std::string> kFastReconnect = {
    {"reconnect.backoff.ms", "50"}, {"reconnect.backoff.max.ms", "500"}};

std::unique_ptr<MockCluster> StartCluster(int brokers) {
  StatusOr<std::unique_ptr<MockCluster>> cluster = MockCluster::Start(brokers);
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  return cluster.ok() ? std::move(cluster).value() : nullptr;
}

std::string Value(int i) { return "message-" + std::to_string(i); }

// Produces messages [from, to) with distinct keys, serving delivery reports.
void ProduceRange(RdKafka::Producer* producer, const std::string& topic,
                  int from, int to) {
  for (int i = from; i < to; ++i) {
    testutil::ProduceOne(producer, topic, "key-" + std::to_string(i), Value(i));
    producer->poll(0);
  }
}

// Consumes into `seen` until it holds `expected` values or `timeout`.
void ConsumeInto(RdKafka::KafkaConsumer* consumer, std::set<std::string>* seen,
                 int64_t* received, size_t expected, milliseconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  while (seen->size() < expected && steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(50));
    if (m->err() != RdKafka::ERR_NO_ERROR) continue;
    seen->emplace(static_cast<const char*>(m->payload()), m->len());
    ++*received;
  }
}

std::unique_ptr<RdKafka::KafkaConsumer> MakeGroupConsumer(
    const std::string& bootstrap, const std::string& group) {
  std::map<std::string, std::string> properties = kFastReconnect;
  properties.insert({{"bootstrap.servers", bootstrap},
                     {"group.id", group},
                     {"session.timeout.ms", "6000"},
                     {"auto.offset.reset", "earliest"}});
  std::unique_ptr<RdKafka::Conf> conf = testutil::MakeConf(properties);
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  EXPECT_NE(consumer, nullptr) << error;
  return consumer;
}

TEST(MockClusterTest, GroupConsumerGetsEverythingAcrossABrokerOutage) {
  constexpr int kBatch = 1000;
  std::unique_ptr<MockCluster> cluster = StartCluster(3);
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->broker_count(), 3);
  EXPECT_EQ(std::count(cluster->bootstrap_servers().begin(),
                       cluster->bootstrap_servers().end(), ','),
            2);
  EXPECT_EQ(cluster->bootstrap_servers().rfind("127.0.0.1:", 0), 0u);
  ASSERT_TRUE(cluster->CreateTopic("events", 4).ok());
  EXPECT_EQ(cluster->CreateTopic("events", 4).code(),
            StatusCode::kAlreadyExists);

  testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer = testutil::MakeProducer(
      cluster->bootstrap_servers(), &report, kFastReconnect);
  ASSERT_NE(producer, nullptr);
  ProduceRange(producer.get(), "events", 0, kBatch);
  EXPECT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.delivered, kBatch);

  std::unique_ptr<RdKafka::KafkaConsumer> consumer =
      MakeGroupConsumer(cluster->bootstrap_servers(), "mock-cluster-test");
  ASSERT_NE(consumer, nullptr);
  const auto subscribed = steady_clock::now();
  ASSERT_EQ(consumer->subscribe({"events"}), RdKafka::ERR_NO_ERROR);
  std::set<std::string> seen;
  int64_t received = 0;
  ConsumeInto(consumer.get(), &seen, &received, kBatch, seconds(10));
  const auto joined_ms =
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - subscribed)
          .count();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBatch));
  EXPECT_EQ(received, kBatch);
  std::printf("first batch consumed %lld ms after subscribe (group join)\n",
              static_cast<long long>(joined_ms));

  // Broker 1 goes away while production continues: messages for the
  // partitions it leads wait in the producer until it comes back.
  ASSERT_TRUE(cluster->SetBrokerDown(1).ok());
  ProduceRange(producer.get(), "events", kBatch, 2 * kBatch);
  ConsumeInto(consumer.get(), &seen, &received, 3 * kBatch, milliseconds(1500));
  ASSERT_TRUE(cluster->SetBrokerUp(1).ok());
  ProduceRange(producer.get(), "events", 2 * kBatch, 3 * kBatch);
  const auto outage_end = steady_clock::now();
  ConsumeInto(consumer.get(), &seen, &received, 3 * kBatch, seconds(15));
  producer->poll(0);
  EXPECT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  std::printf("recovered %lld ms after the broker came back\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(
                                         steady_clock::now() - outage_end)
                                         .count()));
  EXPECT_EQ(report.failed, 0) << report.last_error;
  EXPECT_EQ(report.delivered, 3 * kBatch);
  EXPECT_EQ(seen.size(), static_cast<size_t>(3 * kBatch));
  for (int i = 0; i < 3 * kBatch; ++i) {
    ASSERT_TRUE(seen.count(Value(i)) > 0) << "lost " << Value(i);
  }
  consumer->close();
}

TEST(MockClusterTest, InjectedRequestErrorsReachClients) {
  std::unique_ptr<MockCluster> cluster = StartCluster(1);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->CreateTopic("t", 1).ok());
  testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer =
      testutil::MakeProducer(cluster->bootstrap_servers(), &report,
                             {{"linger.ms", "0"}, {"retry.backoff.ms", "10"}});
  ASSERT_NE(producer, nullptr);
  // Warm up: metadata and connection.
  testutil::ProduceOne(producer.get(), "t", "k", "warm-up");
  ASSERT_EQ(producer->flush(5000), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(report.delivered, 1);

  constexpr int16_t kProduceApi = 0;
  // Retriable errors are retried away...
  ASSERT_TRUE(cluster
                  ->PushRequestErrors(kProduceApi,
                                      {RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                                       RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS})
                  .ok());
  testutil::ProduceOne(producer.get(), "t", "k", "retried");
  ASSERT_EQ(producer->flush(5000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.delivered, 2);
  EXPECT_EQ(report.failed, 0);

  // ...a permanent one fails the delivery.
  ASSERT_TRUE(cluster
                  ->PushRequestErrors(kProduceApi,
                                      {RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE})
                  .ok());
  testutil::ProduceOne(producer.get(), "t", "k", "refused");
  ASSERT_EQ(producer->flush(5000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.failed, 1);

  // Cleared errors never fire.
  ASSERT_TRUE(cluster
                  ->PushRequestErrors(kProduceApi,
                                      {RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE})
                  .ok());
  ASSERT_TRUE(cluster->ClearRequestErrors(kProduceApi).ok());
  testutil::ProduceOne(producer.get(), "t", "k", "after-clear");
  ASSERT_EQ(producer->flush(5000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.delivered, 3);
  EXPECT_EQ(report.failed, 1);

  const std::vector<testutil::ConsumedMessage> read = testutil::ConsumeAll(
      cluster->bootstrap_servers(), "t", 1, 3, seconds(10));
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[1].value, "retried");
  EXPECT_EQ(read[2].value, "after-clear");
}

TEST(MockClusterTest, LeaderMovesAndCoordinator) {
  std::unique_ptr<MockCluster> cluster = StartCluster(3);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->CreateTopic("t", 2).ok());
  EXPECT_TRUE(cluster->SetPartitionLeader("t", 0, 3).ok());
  EXPECT_TRUE(cluster->SetPartitionLeader("t", 1, 3).ok());
  EXPECT_TRUE(cluster->SetCoordinator("group", "g", 2).ok());
  EXPECT_TRUE(cluster->SetBrokerRtt(-1, 0).ok());
  // Brokers 1 and 2 down: broker 3 leads everything, so producing works.
  ASSERT_TRUE(cluster->SetBrokerDown(1).ok());
  ASSERT_TRUE(cluster->SetBrokerDown(2).ok());
  testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer =
      testutil::MakeProducer(cluster->bootstrap_servers(), &report);
  ASSERT_NE(producer, nullptr);
  for (int i = 0; i < 20; ++i) {
    testutil::ProduceOne(producer.get(), "t", std::to_string(i), Value(i));
  }
  ASSERT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.delivered, 20);
}

TEST(MockClusterTest, RejectsBadArguments) {
  EXPECT_EQ(MockCluster::Start(0).status().code(),
            StatusCode::kInvalidArgument);
  std::unique_ptr<MockCluster> cluster = StartCluster(1);
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->CreateTopic("", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster->CreateTopic("t", 0).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(cluster->SetBrokerDown(7).ok());
  ASSERT_TRUE(cluster->CreateTopic("t", 2).ok());
  EXPECT_EQ(cluster->SetPartitionLeader("t", 2, 1).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster->SetPartitionLeader("t", 1, 9).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster->PushRequestErrors(-1, {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster->SetCoordinator("team", "g", 1).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rankwatch::sim
