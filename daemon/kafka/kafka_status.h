// KafkaStatus: what the Kafka consumer (`rankwatch run`) reports about
// itself for /metrics and /readyz, as plain data. The consumer thread
// updates it and the scrape reads it, both under the daemon's mutex; the
// struct itself is not synchronized.
//
// Topics are Kafka topic names. Counters only grow; a value the consumer
// does not know yet is left at its default and not exported.
#ifndef RANKWATCH_DAEMON_KAFKA_KAFKA_STATUS_H_
#define RANKWATCH_DAEMON_KAFKA_KAFKA_STATUS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rankwatch::kafka {

// One assigned topic-partition.
struct PartitionStatus {
  std::string topic;
  int32_t partition = 0;
  int64_t lag = -1;               // Messages behind the high watermark.
  int64_t committed_offset = -1;  // Last offset committed.
  int64_t high_watermark = -1;    // Broker's end offset.
};

struct KafkaStatus {
  // The configured topics (results, judgments): per-topic series are
  // exported for each, at 0 until something happens.
  std::vector<std::string> topics;

  bool assigned = false;   // The group gave this consumer partitions.
  bool consuming = false;  // Polling without a fatal error.
  bool ready() const { return assigned && consuming; }

  // Assigned partitions with their offsets; replaced on every rebalance.
  std::vector<PartitionStatus> partitions;
  std::map<std::string, int64_t> errors;  // By librdkafka error name.
  int64_t commits_ok = 0;
  int64_t commits_failed = 0;
  int64_t rebalances = 0;
  int64_t dead_letters_produced = 0;
  int64_t dead_letters_failed = 0;
  // Events re-read after a restart or rebalance and skipped because the
  // metrics already reflect them, per topic.
  std::map<std::string, int64_t> replayed_events;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_KAFKA_STATUS_H_
