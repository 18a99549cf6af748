// RAII owners for the librdkafka handles that rankwatch creates by hand:
// C partition lists and consumed messages, C++ TopicPartition vectors and
// RdKafka::Error results. (RdKafka::Conf, Message, Metadata, Topic, Producer
// and KafkaConsumer are held in plain std::unique_ptr.)
//
// Not thread-safe; each owner belongs to the thread that made it.
#ifndef RANKWATCH_DAEMON_KAFKA_RDKAFKA_HANDLES_H_
#define RANKWATCH_DAEMON_KAFKA_RDKAFKA_HANDLES_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <memory>
#include <string_view>
#include <vector>

namespace rankwatch::kafka {

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
// A C partition list; destroying it frees its elements' metadata too.
using PartitionList =
    std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

inline PartitionList MakePartitionList(size_t capacity) {
  return PartitionList(
      rd_kafka_topic_partition_list_new(static_cast<int>(capacity)));
}

struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const {
    rd_kafka_message_destroy(message);
  }
};
// A message of rd_kafka_consumer_poll (the C++ consume() wraps each in a
// heap-allocated RdKafka::Message: an allocation per event).
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

// Gives `tp` a copy of `metadata`, freed with its list.
void SetPartitionMetadata(rd_kafka_topic_partition_t* tp,
                          std::string_view metadata);

// The error of assign/unassign and the incremental variants; null is
// success.
using ErrorPtr = std::unique_ptr<RdKafka::Error>;

// A vector of TopicPartitions this object owns (librdkafka's C++ API passes
// them as raw pointers).
class OwnedTopicPartitions {
 public:
  OwnedTopicPartitions() = default;
  OwnedTopicPartitions(const OwnedTopicPartitions&) = delete;
  OwnedTopicPartitions& operator=(const OwnedTopicPartitions&) = delete;
  ~OwnedTopicPartitions() { RdKafka::TopicPartition::destroy(partitions_); }

  void Add(const std::string& topic, int32_t partition, int64_t offset) {
    partitions_.push_back(
        RdKafka::TopicPartition::create(topic, partition, offset));
  }
  const std::vector<RdKafka::TopicPartition*>& get() const {
    return partitions_;
  }

 private:
  std::vector<RdKafka::TopicPartition*> partitions_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_RDKAFKA_HANDLES_H_
