// RebalanceHandler: the consumer group's rebalance callback. It does the
// librdkafka side of a rebalance (fetching what the previous owners
// committed, assign/unassign in the eager or cooperative protocol, with
// every error checked) and tells a RebalanceListener, which keeps the
// bookkeeping (KafkaIngest with its PartitionBook).
//
// Order: OnAssigned runs before the partitions are assigned (so that no
// message of theirs is handled first); OnRevoked runs before they are
// unassigned (so that the listener can still commit their offsets).
//
// Thread-safety: librdkafka calls rebalance_cb on the thread that polls
// the consumer (consume() or close()), and so the listener's methods run
// there. The listener and the consumer must outlive the handler's use.
#ifndef RANKWATCH_DAEMON_KAFKA_REBALANCE_H_
#define RANKWATCH_DAEMON_KAFKA_REBALANCE_H_

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::kafka {

// A partition being assigned, with what its previous owner committed.
struct AssignedPartition {
  std::string topic;
  int32_t partition = 0;
  int64_t committed_offset = -1;  // -1: nothing committed, or unknown.
  std::string metadata;           // The commit's metadata.
  // Set by the listener: where to start reading (a restored checkpoint's
  // offset; -1: the committed offset), and whether to hold the partition
  // paused (its state could not be restored).
  int64_t start_offset = -1;
  bool pause = false;
};

struct RevokedPartition {
  std::string topic;
  int32_t partition = 0;
};

class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  virtual void OnAssigned(std::vector<AssignedPartition>& partitions) = 0;
  // `lost`: the partitions may already belong to another consumer; their
  // offsets must not be committed.
  virtual void OnRevoked(const std::vector<RevokedPartition>& partitions,
                         bool lost) = 0;
  // After the assignment changed: whether any partition is assigned.
  virtual void OnAssignmentChanged(bool assigned) = 0;
  // A librdkafka error during a rebalance (`context` says which step).
  virtual void OnRebalanceError(RdKafka::ErrorCode err,
                                std::string_view context) = 0;
};

class RebalanceHandler : public RdKafka::RebalanceCb {
 public:
  // `committed_timeout_ms` bounds the wait for the committed offsets.
  RebalanceHandler(RebalanceListener* listener, int committed_timeout_ms)
      : listener_(listener), committed_timeout_ms_(committed_timeout_ms) {}

  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override;

 private:
  void Assign(RdKafka::KafkaConsumer* consumer,
              const std::vector<RdKafka::TopicPartition*>& partitions);
  void Revoke(RdKafka::KafkaConsumer* consumer,
              const std::vector<RdKafka::TopicPartition*>& partitions);
  std::vector<AssignedPartition> Committed(
      RdKafka::KafkaConsumer* consumer,
      const std::vector<RdKafka::TopicPartition*>& partitions);
  // Reports a failed assign/unassign; true when it succeeded.
  bool Check(RdKafka::Error* error, std::string_view context);
  bool Check(RdKafka::ErrorCode err, std::string_view context);

  RebalanceListener* listener_;
  int committed_timeout_ms_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_REBALANCE_H_
