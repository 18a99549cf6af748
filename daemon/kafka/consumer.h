// KafkaIngest: reads the results and judgments topics into a Pipeline, with
// at-least-once delivery.
//
// * One consumer group. In impression mode both topics are subscribed (they
//   must be keyed by request_id and have equal partition counts, so a
//   request's events meet in one replica; the range assignor keeps equal
//   partition numbers together). In qrels mode the judgments topic is read
//   whole by every replica, from the beginning, by a second, group-less
//   consumer (a table, like Kafka Streams' GlobalKTable); the results topic
//   goes through the group, and only after the table has caught up.
// * Commits, per partition, only offsets below the oldest event a pending
//   request still needs (OffsetTracker), periodically, on revocation and on
//   shutdown. Each commit carries the watermark and the consumed position in
//   its metadata: a new owner restores the watermark and skips, as
//   replayed, what its predecessor had already reflected.
// * On revocation, pending state fed from the revoked partitions is dropped
//   (the new owner re-reads it from the committed offsets).
//
// Threading: Run() is the consumer thread. The pipeline and the Stats are
// shared with the metrics endpoint under the mutex given to Attach(); Run()
// takes it for short batches of messages. ready() is lock-free.
#ifndef RANKWATCH_DAEMON_KAFKA_CONSUMER_H_
#define RANKWATCH_DAEMON_KAFKA_CONSUMER_H_

#include <librdkafka/rdkafkacpp.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "daemon/kafka/kafka_status.h"
#include "daemon/kafka/offset_tracker.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::kafka {

// Sends rejected events to a Kafka topic: the original payload and key,
// with the reason in headers (rankwatch-reason, rankwatch-detail,
// rankwatch-source-topic, rankwatch-source-partition,
// rankwatch-source-offset).
class KafkaDeadLetterSink : public stream::DeadLetterSink {
 public:
  // `properties` are the consumer's librdkafka properties (bootstrap,
  // security, ...); `stats` counts delivery reports.
  static StatusOr<std::unique_ptr<KafkaDeadLetterSink>> Create(
      const config::KafkaConfig& kafka, const std::string& topic,
      KafkaStatus* stats);
  ~KafkaDeadLetterSink() override;

  // The key of the message being processed, copied into its dead letter.
  void set_current_key(std::string_view key) { current_key_ = key; }
  void Write(stream::Topic topic, stream::RejectReason reason,
             std::string_view detail, std::string_view payload,
             stream::EventOrigin origin) override;
  // Serves delivery reports.
  void Poll();
  void Flush(int timeout_ms);

 private:
  class DeliveryReport;
  KafkaDeadLetterSink() = default;

  std::string topic_;
  KafkaStatus* stats_ = nullptr;
  std::unique_ptr<DeliveryReport> report_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::string_view current_key_;
};

class KafkaIngest final : public stream::ReleaseListener {
 public:
  // Validates and applies the Kafka configuration. Connection problems show
  // later, as errors counted while Run() retries.
  static StatusOr<std::unique_ptr<KafkaIngest>> Create(
      const config::Config& config);
  ~KafkaIngest() override;

  // The pipeline to feed (created with this object as ReleaseListener),
  // the mutex that guards it and status(), and an optional dead-letter sink.
  void Attach(stream::Pipeline* pipeline, std::mutex* mu,
              KafkaDeadLetterSink* dead_letters);

  // Consumes until `stop` is true; then commits the safe offsets and leaves
  // the group. Returns an error only when consuming cannot start.
  Status Run(const std::atomic<bool>& stop);

  // True once partitions are assigned (and, in qrels mode, the table has
  // caught up) and the loop is consuming.
  bool ready() const;
  // Read under the mutex.
  const KafkaStatus& status() const { return status_; }
  KafkaStatus* mutable_status() { return &status_; }

  // stream::ReleaseListener: called by the pipeline on the consumer thread.
  void OnReleased(stream::EventOrigin origin) override;

 private:
  class RebalanceHandler;
  class EventHandler;
  class CommitHandler;
  class MaybeLock;

  explicit KafkaIngest(const config::Config& config);
  Status Init();
  Status LoadTable(const std::atomic<bool>& stop);
  void CheckPartitionCounts();
  void Handle(RdKafka::Message* message, bool from_table);
  void Periodic(int64_t now_ms, bool force_commit);
  void MarkCaughtUpSources();
  void OnStatistics(const std::string& json);
  void Commit(const std::vector<int32_t>& slots, bool sync);
  void UpdatePartitionStats();
  void OnAssign(const std::vector<RdKafka::TopicPartition*>& partitions);
  void OnRevoke(const std::vector<RdKafka::TopicPartition*>& partitions,
                bool lost);
  int TopicIndex(std::string_view topic) const;
  const std::string& TopicName(int32_t topic_index) const;

  config::Config config_;
  stream::Pipeline* pipeline_ = nullptr;
  std::mutex* mu_ = nullptr;
  bool lock_held_ = false;  // Consumer thread only: does it hold *mu_?
  KafkaDeadLetterSink* dead_letters_ = nullptr;
  std::unique_ptr<RebalanceHandler> rebalance_handler_;
  std::unique_ptr<EventHandler> event_handler_;
  std::unique_ptr<CommitHandler> commit_handler_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  std::unique_ptr<RdKafka::KafkaConsumer> table_consumer_;  // qrels mode.
  OffsetTracker tracker_;
  std::map<int32_t, int64_t> replay_end_;  // Slot -> predecessor position.
  std::map<int32_t, int64_t> committed_;   // Slot -> last committed offset.
  std::map<int32_t, int64_t> table_positions_;  // qrels table partitions.
  // Slot -> (fetched from a reachable leader, when last reported).
  std::map<int32_t, std::pair<bool, int64_t>> fetch_healthy_;
  std::atomic<int64_t> last_loop_ms_{0};
  KafkaStatus status_;
  std::array<int32_t, 2> topic_partitions_{};  // Partition count per topic.
  bool table_loaded_ = false;                  // qrels mode.
  std::atomic<bool> ready_{false};
  bool assigned_ = false;
  int64_t last_commit_ms_ = 0;
  int64_t last_tick_ms_ = 0;
  int64_t last_stats_ms_ = 0;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_CONSUMER_H_
