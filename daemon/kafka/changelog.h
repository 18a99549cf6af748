// Changelog: rankwatch's durable state in Kafka (kafka.durable_state). Each
// input partition's state (stream::Pipeline::EncodeShard) is written as a
// checkpoint record to a compacted topic, keyed by the partition number,
// and read back where the partition is assigned next.
//
// A record carries the input offsets it covers (the next offset to read of
// the partition in each topic) inside it: a checkpoint and its offsets are
// one atomic write on any broker, so a restore always starts from a state
// and the offsets that state reflects, whatever crashed when. (Kafka
// transactions would tie the group's offset commit to the write instead;
// librdkafka's mock cluster does not store transactional offset commits,
// and a zombie's open transaction blocks read_committed readers. The
// group's offsets are still committed after each checkpoint, with a
// pointer to its record: lag shows, and a pointer without a readable
// record means the state was lost.)
//
// Partition p's records go to changelog partition p modulo the topic's
// partition count; the topic is created with as many partitions as the
// input topics when missing, compacted, with segments rolled every minute
// so that compaction keeps its size near the state's. A partition's newest
// checkpoint is the last record with its key from the committed pointer on.
//
// Thread-safety: none; the consumer thread owns it. Its calls block for
// at most their timeout.
#ifndef RANKWATCH_DAEMON_KAFKA_CHANGELOG_H_
#define RANKWATCH_DAEMON_KAFKA_CHANGELOG_H_

#include <librdkafka/rdkafkacpp.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::kafka {

// The framing of a checkpoint record around the pipeline's shard state.
struct CheckpointRecord {
  int32_t partition = 0;
  // Next offset to read of the partition in the results and the judgments
  // topic; -1 when the topic is not read by the group (qrels mode).
  std::array<int64_t, 2> offsets{-1, -1};
  std::string_view state;  // Pipeline::EncodeShard's bytes.
};
// Appends the record's bytes to `out`: header, then `record.state`.
void EncodeCheckpointRecord(const CheckpointRecord& record, std::string* out);
// Reads a record; `state` points into `bytes`.
StatusOr<CheckpointRecord> DecodeCheckpointRecord(std::string_view bytes);
// Checkpoints above this size are refused by the producer (the topic is
// created to take them; docs/operations.md, "Durable state").
inline constexpr int64_t kMaxCheckpointBytes = 64 << 20;
// A checkpoint record not acknowledged within this fails its round.
inline constexpr int kCheckpointTimeoutMs = 30'000;

class Changelog {
 public:
  // Builds the clients (no connection yet).
  static StatusOr<std::unique_ptr<Changelog>> Create(
      const config::KafkaConfig& kafka);
  ~Changelog();

  // Makes sure the topic exists: created compacted with `partitions`
  // partitions when missing (where the broker takes CreateTopics; the
  // mock cluster creates it on first use), its cleanup policy checked
  // where the broker answers DescribeConfigs. An error says what to fix.
  [[nodiscard]] Status Prepare(int32_t partitions, int timeout_ms);

  // Where a record was written.
  struct Written {
    int32_t partition = -1;  // Of the changelog topic.
    int64_t offset = -1;
  };
  // Writes each record (input partition, bytes) and waits for the
  // broker's acknowledgements. On success `written` is parallel to
  // `records`.
  [[nodiscard]] Status Write(
      const std::vector<std::pair<int32_t, std::string>>& records,
      int timeout_ms, std::vector<Written>* written);
  // The same without waiting: Send() hands the records to the producer
  // (copied) and returns at once; Collect() serves the producer's delivery
  // reports and, once every record of the round is acknowledged or has
  // failed (after kCheckpointTimeoutMs at most), returns the round's
  // result as Write() would; nullopt while some are in flight. One round
  // at a time: Send() again only after Collect() returned a result.
  [[nodiscard]] Status Send(
      const std::vector<std::pair<int32_t, std::string>>& records);
  std::optional<Status> Collect(std::vector<Written>* written);
  // Waits up to `timeout_ms` for the round in flight, then Collect()s it:
  // its result, or an error when it timed out. Write() is Send() then
  // Await().
  [[nodiscard]] Status Await(int timeout_ms, std::vector<Written>* written);

  // The newest checkpoint of input `partition` from changelog offset
  // `from` on (-1: from the start), or nullopt when there is none. When
  // `from` lies beyond the end (the topic was deleted and created again),
  // there is none.
  StatusOr<std::optional<std::string>> ReadLatest(int32_t partition,
                                                  int64_t from, int timeout_ms);

  const std::string& topic() const { return topic_; }
  int32_t partitions() const { return partitions_; }
  // The changelog partition of input `partition`.
  int32_t PartitionOf(int32_t partition) const {
    return partitions_ > 0 ? partition % partitions_ : 0;
  }

 private:
  class Deliveries;
  explicit Changelog(std::string topic);
  // The topic's partition count from metadata; 0 when it does not exist.
  StatusOr<int32_t> PartitionCount(int timeout_ms);
  Status CreateTopic(int32_t partitions, int timeout_ms);
  // A metadata request that lets the cluster create the topic (the mock
  // cluster, which has no CreateTopics).
  Status AutoCreate(int timeout_ms);
  // The topic's cleanup policy (an error unless compacted) and segment.ms
  // (a warning when compaction would wait long for a segment to roll).
  Status CheckCleanupPolicy(int timeout_ms);
  void WarnOnSlowSegments(std::string_view segment_ms) const;

  std::string topic_;
  std::unique_ptr<config::KafkaConfig> kafka_;  // For AutoCreate().
  int32_t partitions_ = 0;
  std::unique_ptr<Deliveries> deliveries_;
  std::vector<int32_t> sent_partitions_;  // Input partitions of the round.
  std::unique_ptr<RdKafka::Producer> producer_;
  std::unique_ptr<RdKafka::KafkaConsumer> reader_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_CHANGELOG_H_
