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
// Checkpoints proportional to change (docs/operations.md, "Durable
// state"): a partition's records form chains. A base (CheckpointRecord,
// key "<p>", the whole state) is followed by deltas (DeltaRecord, key
// "<p>.<base offset>.<seq>", seq 1, 2, ...: the changes since the record
// before), each carrying the offsets it covers. Compaction keeps the
// newest base (same key) and every delta (keys unique); the deltas of a
// superseded base are deleted with tombstones once a newer base is
// acknowledged, or by a new owner when a crash came first. Restore: the
// newest base, then its deltas in order (checkpoint_chain.h).
//
// Partition p's records go to changelog partition p modulo the topic's
// partition count; the topic is created with as many partitions as the
// input topics when missing, compacted, with segments rolled every minute
// so that compaction keeps its size near the state's. A partition's newest
// base is the last record with its key from the committed pointer on.
//
// Thread-safety: none; the consumer thread owns it. Its calls block for
// at most their timeout.
#ifndef RANKWATCH_DAEMON_KAFKA_CHANGELOG_H_
#define RANKWATCH_DAEMON_KAFKA_CHANGELOG_H_

#include <librdkafka/rdkafkacpp.h>

#include <array>
#include <cstdint>
#include <functional>
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
// A partition's changes since the previous record of its chain.
struct DeltaRecord {
  int32_t partition = 0;
  std::array<int64_t, 2> offsets{-1, -1};  // As CheckpointRecord's.
  int64_t base_offset = -1;  // The changelog offset of its chain's base.
  uint32_t seq = 0;          // 1 for the first delta after the base.
  std::string_view state;    // Pipeline::EncodeShardDelta's bytes.
};
// Appends the record's bytes: header, a checksum of the state (Kafka's
// own CRC covers the wire and the disk; this one a delta applied to a
// state it was not cut from, or bytes written by someone else), state.
void EncodeDeltaRecord(const DeltaRecord& record, std::string* out);
// Reads a delta record; `state` points into `bytes`. A wrong magic,
// version or checksum, or a truncated record, is an error naming it.
StatusOr<DeltaRecord> DecodeDeltaRecord(std::string_view bytes);
// The record keys: a base's ("<p>", as before deltas existed) and a
// delta's ("<p>.<base offset>.<seq>").
std::string BaseKey(int32_t partition);
std::string DeltaKey(int32_t partition, int64_t base_offset, uint32_t seq);

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
  // A record with its own key; a tombstone (no value) deletes the key's
  // records from the compacted topic.
  struct Outgoing {
    int32_t partition = 0;  // The input partition.
    std::string key;
    std::optional<std::string> value;  // nullopt: a tombstone.
  };
  [[nodiscard]] Status Send(const std::vector<Outgoing>& records);
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
  // The records of input `partition` from changelog offset `from` on
  // (-1: from the start), from its newest base on (checkpoint_chain.h):
  // what a restore needs, held in memory (the base and the deltas after
  // it, never the history before it), and before it the keys alone of the
  // deltas not deleted (FoldChainRecord). Tombstones are left out.
  struct Stored {
    std::string key;
    int64_t offset = -1;
    std::string value;
  };
  StatusOr<std::vector<Stored>> ReadChain(int32_t partition, int64_t from,
                                          int timeout_ms);

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
  // Calls f(key, offset, value or null) for each record of changelog
  // partition PartitionOf(partition) from `from` on; nothing when there is
  // none (see ReadLatest).
  using Visitor = std::function<void(std::string_view key, int64_t offset,
                                     const std::string_view* value)>;
  Status Scan(int32_t partition, int64_t from, int timeout_ms,
              const Visitor& f);

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
