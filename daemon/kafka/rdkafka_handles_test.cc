#include "daemon/kafka/rdkafka_handles.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

// Leaks, double frees and mismatched frees show under ASan (CI's build).
TEST(RdKafkaHandlesTest, PartitionListOwnsMetadata) {
  PartitionList list = MakePartitionList(2);
  rd_kafka_topic_partition_t* tp =
      rd_kafka_topic_partition_list_add(list.get(), "results", 3);
  SetPartitionMetadata(tp, "wm=1;end=2");
  ASSERT_EQ(tp->metadata_size, 10u);
  EXPECT_EQ(
      std::string(static_cast<const char*>(tp->metadata), tp->metadata_size),
      "wm=1;end=2");
  SetPartitionMetadata(tp, "end=3");  // Replaces, freeing the old copy.
  EXPECT_EQ(tp->metadata_size, 5u);
  SetPartitionMetadata(tp, "");
  EXPECT_EQ(tp->metadata, nullptr);
  EXPECT_EQ(tp->metadata_size, 0u);
  SetPartitionMetadata(tp, "wm=9");
  EXPECT_EQ(list->cnt, 1);
}

TEST(RdKafkaHandlesTest, OwnedTopicPartitions) {
  OwnedTopicPartitions parts;
  parts.Add("judgments", 0, RdKafka::Topic::OFFSET_BEGINNING);
  parts.Add("judgments", 1, 17);
  ASSERT_EQ(parts.get().size(), 2u);
  EXPECT_EQ(parts.get()[1]->partition(), 1);
  EXPECT_EQ(parts.get()[1]->offset(), 17);
}

}  // namespace
}  // namespace rankwatch::kafka
