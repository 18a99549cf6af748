// KafkaStatus: what the Kafka consumer (`rankwatch run`) reports about
// itself for /metrics and /readyz, as plain data. The consumer thread
// updates it and the scrape and /readyz read it, all under the daemon's
// mutex; the struct itself is not synchronized.
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

  bool assigned = false;  // The group gave this consumer partitions.
  // The consume loop runs without a fatal error (in qrels mode, once the
  // judgments table has loaded).
  bool consuming = false;
  // Monotonic time (Clock::MonotonicMillis) of the loop's latest poll;
  // kUnwatched in a status that no loop drives.
  static constexpr int64_t kUnwatched = INT64_MIN;
  int64_t last_poll_mono_ms = kUnwatched;
  // A loop that has not polled for this long is stalled: not ready.
  static constexpr int64_t kStallMs = 10'000;

  // The one readiness predicate: what /readyz answers and what the gauge
  // rankwatch_consumer_ready exports. Assigned, consuming, and polled less
  // than kStallMs before `now_mono_ms`.
  bool ready(int64_t now_mono_ms) const {
    return assigned && consuming &&
           (last_poll_mono_ms == kUnwatched ||
            now_mono_ms - last_poll_mono_ms < kStallMs);
  }

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
