#include "daemon/kafka/rebalance.h"

#include <chrono>
#include <string>
#include <vector>

#include "daemon/kafka/kafka_conf.h"
#include "daemon/kafka/kafka_test_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

// Records what the handler reports.
class RecordingListener : public RebalanceListener {
 public:
  void OnAssigned(std::vector<AssignedPartition>& partitions) override {
    assigned.insert(assigned.end(), partitions.begin(), partitions.end());
  }
  void OnRevoked(const std::vector<RevokedPartition>& partitions,
                 bool lost) override {
    revoked.insert(revoked.end(), partitions.begin(), partitions.end());
    revoked_lost = lost;
  }
  void OnAssignmentChanged(bool now) override { changes.push_back(now); }
  void OnRebalanceError(RdKafka::ErrorCode err, std::string_view) override {
    errors.push_back(err);
  }

  std::vector<AssignedPartition> assigned;
  std::vector<RevokedPartition> revoked;
  bool revoked_lost = true;
  std::vector<bool> changes;
  std::vector<RdKafka::ErrorCode> errors;
};

// Commits `offset` with `metadata` for topic/partition as `group`, without
// joining it.
void CommitAsGroup(const std::string& bootstrap, const std::string& group,
                   const std::string& topic, int32_t partition, int64_t offset,
                   const std::string& metadata) {
  std::unique_ptr<RdKafka::Conf> conf = sim::testutil::MakeConf(
      {{"bootstrap.servers", bootstrap}, {"group.id", group}});
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  ASSERT_NE(consumer, nullptr) << error;
  PartitionList list = MakePartitionList(1);
  rd_kafka_topic_partition_t* tp =
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  tp->offset = offset;
  SetPartitionMetadata(tp, metadata);
  ASSERT_EQ(rd_kafka_commit(consumer->c_ptr(), list.get(), /*async=*/0),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  consumer->close();
}

TEST(RebalanceHandlerTest, AssignsWithCommittedOffsetsThenRevokesOnClose) {
  std::unique_ptr<sim::MockCluster> cluster =
      testing::StartCluster({{"results", 2}});
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  sim::testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer =
      sim::testutil::MakeProducer(bootstrap, &report);
  for (int i = 0; i < 10; ++i) {
    sim::testutil::ProduceOne(producer.get(), "results", "k", "v");
  }
  producer->flush(10'000);
  CommitAsGroup(bootstrap, "g", "results", 1, 5, "wm=7;end=9");

  RecordingListener listener;
  RebalanceHandler handler(&listener, 10'000);
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = bootstrap;
  kafka.properties = {{"session.timeout.ms", "6000"}};
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ConsumerConf(kafka, "g", /*range_assignor=*/true);
  ASSERT_TRUE(conf.ok());
  ASSERT_TRUE(SetCallback(conf->get(), "rebalance_cb", &handler).ok());
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf->get(), error));
  ASSERT_NE(consumer, nullptr) << error;
  ASSERT_EQ(consumer->subscribe({"results"}), RdKafka::ERR_NO_ERROR);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (listener.changes.empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(100));
  }
  ASSERT_EQ(listener.assigned.size(), 2u);
  for (const AssignedPartition& p : listener.assigned) {
    EXPECT_EQ(p.topic, "results");
    if (p.partition == 1) {
      EXPECT_EQ(p.committed_offset, 5);
      EXPECT_EQ(p.metadata, "wm=7;end=9");
    } else {
      EXPECT_EQ(p.partition, 0);
      EXPECT_EQ(p.committed_offset, -1);  // Nothing committed.
      EXPECT_EQ(p.metadata, "");
    }
  }
  ASSERT_EQ(listener.changes, std::vector<bool>{true});

  EXPECT_EQ(consumer->close(), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(listener.revoked.size(), 2u);
  EXPECT_FALSE(listener.revoked_lost);
  EXPECT_EQ(listener.changes, (std::vector<bool>{true, false}));
  EXPECT_TRUE(listener.errors.empty());
}

}  // namespace
}  // namespace rankwatch::kafka
