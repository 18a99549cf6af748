// Test helpers of the Kafka layer's tests: a mock cluster with topics, and
// reading what a group committed (offsets with metadata). Header-only; for
// tests only.
#ifndef RANKWATCH_DAEMON_KAFKA_KAFKA_TEST_CLUSTER_H_
#define RANKWATCH_DAEMON_KAFKA_KAFKA_TEST_CLUSTER_H_

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "daemon/kafka/rdkafka_handles.h"
#include "daemon/sim/kafka_test_util.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka::testing {

// One broker with `topics` (name -> partitions).
inline std::unique_ptr<sim::MockCluster> StartCluster(
    const std::map<std::string, int>& topics) {
  StatusOr<std::unique_ptr<sim::MockCluster>> cluster =
      sim::MockCluster::Start(1);
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  if (!cluster.ok()) return nullptr;
  for (const auto& [name, partitions] : topics) {
    EXPECT_TRUE((*cluster)->CreateTopic(name, partitions).ok()) << name;
  }
  return std::move(cluster).value();
}

struct CommittedOffset {
  int64_t offset = -1;
  std::string metadata;
};

// What `group` committed for `topic`/`partition`, read by a consumer of the
// group that does not join it.
inline CommittedOffset ReadCommitted(const std::string& bootstrap,
                                     const std::string& group,
                                     const std::string& topic,
                                     int32_t partition) {
  std::unique_ptr<RdKafka::Conf> conf = sim::testutil::MakeConf(
      {{"bootstrap.servers", bootstrap}, {"group.id", group}});
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  CommittedOffset out;
  if (consumer == nullptr) {
    ADD_FAILURE() << error;
    return out;
  }
  PartitionList list = MakePartitionList(1);
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer->c_ptr(), list.get(), 10'000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  const rd_kafka_topic_partition_t& tp = list->elems[0];
  out.offset = tp.offset;
  if (tp.metadata != nullptr) {
    out.metadata.assign(static_cast<const char*>(tp.metadata),
                        tp.metadata_size);
  }
  consumer->close();
  return out;
}

}  // namespace rankwatch::kafka::testing

#endif  // RANKWATCH_DAEMON_KAFKA_KAFKA_TEST_CLUSTER_H_
