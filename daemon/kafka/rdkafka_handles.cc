#include "daemon/kafka/rdkafka_handles.h"

#include <cstdlib>
#include <cstring>

namespace rankwatch::kafka {

void SetPartitionMetadata(rd_kafka_topic_partition_t* tp,
                          std::string_view metadata) {
  std::free(tp->metadata);
  tp->metadata = nullptr;
  tp->metadata_size = 0;
  if (metadata.empty()) return;
  // malloc: rd_kafka_topic_partition_list_destroy frees it with free().
  tp->metadata = std::malloc(metadata.size());
  if (tp->metadata == nullptr) return;
  std::memcpy(tp->metadata, metadata.data(), metadata.size());
  tp->metadata_size = metadata.size();
}

}  // namespace rankwatch::kafka
