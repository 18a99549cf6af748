// IngestState: what the Kafka consumer (`rankwatch run`) reports about
// itself for /metrics and /readyz, as plain data. (Named apart from
// base/status.h's Status, an operation's outcome, and from daemon/page/,
// the status page.) The consumer thread updates it and the scrape reads
// it, both under the daemon's mutex; the struct itself is not
// synchronized. /readyz reads its readiness inputs from a ReadinessBoard
// the consumer publishes them to, without the daemon's mutex.
//
// Topics are Kafka topic names. Counters only grow; a value the consumer
// does not know yet is left at its default and not exported.
//
// Readiness (readiness(), ready()) is the one predicate behind /readyz and
// the gauges rankwatch_consumer_ready and rankwatch_consumer_ready_reason,
// a pure function of the state and a monotonic `now` that the caller
// injects. Fetch progress, one of its inputs, is tracked per partition by
// FetchProgressTable from messages and librdkafka's statistics
// (fetch_health.h ParseFetchStatistics); see docs/operations.md, "Readiness".
#ifndef RANKWATCH_DAEMON_KAFKA_INGEST_STATE_H_
#define RANKWATCH_DAEMON_KAFKA_INGEST_STATE_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::kafka {

// One assigned topic-partition.
struct PartitionStatus {
  std::string topic;
  int32_t partition = 0;
  int64_t lag = -1;               // Messages behind the high watermark.
  int64_t committed_offset = -1;  // Last committed offset.
  int64_t high_watermark = -1;    // Broker's end offset.
};

// Why the consumer is (not) ready: a fixed set, each exported as a series
// of rankwatch_consumer_ready_reason. In the order the predicate checks
// them, except kBrokerUnreachable, which also replaces kNotConsuming and
// kNotAssigned while no broker can be reached (see ready_reason()).
enum class ReadyReason {
  kReady,
  kNotConsuming,       // Starting, loading the qrels table, or shut down.
  kNotAssigned,        // No partitions: joining the group or rebalancing.
  kLoopStalled,        // The consume loop has not polled for kStallMs.
  kBrokerUnreachable,  // Every broker down while unassigned; or no fetch
                       // for the bound and the leader is not UP.
  kFetchStalled,       // No fetch for the bound; the leader is UP (frozen?).
  // Durable state: a partition's state could not be restored (changelog
  // unreadable, a corrupt or newer checkpoint, a lost one); the partition
  // is paused rather than counted from zero.
  kStateUnavailable,
};
inline constexpr std::array<ReadyReason, 7> kAllReadyReasons = {
    ReadyReason::kReady,
    ReadyReason::kNotConsuming,
    ReadyReason::kNotAssigned,
    ReadyReason::kLoopStalled,
    ReadyReason::kBrokerUnreachable,
    ReadyReason::kFetchStalled,
    ReadyReason::kStateUnavailable};
// "ready", "not_consuming", ...: the label value of the reason series.
std::string_view ReadyReasonName(ReadyReason reason);

// The assigned partition that has gone longest without fetch progress.
struct FetchLag {
  std::string topic;
  int32_t partition = 0;
  int64_t progress_mono_ms = 0;  // Its latest fetch progress.
  bool leader_up = true;         // Its leader was UP at the last statistics.
};

// librdkafka reports every broker a consumer knows down
// (ERR__ALL_BROKERS_DOWN: each connection attempt failed, or each
// connection was lost), and none has answered since.
struct BrokersDown {
  std::string bootstrap;  // kafka.bootstrap_servers, for the message.
  // Why, from the client's last connection error ("Connection refused",
  // "Failed to resolve 'kafka:9092': ...", "SASL authentication error:
  // ..."; ConnectionErrorCause() in error_reporter.h).
  std::string cause;
  // Some broker answered earlier: the cluster was lost, not never found.
  bool reached_before = false;
};

struct IngestState {
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
  // kafka.not_ready_after: a partition without fetch progress for longer
  // than this makes the consumer not ready.
  int64_t not_ready_after_ms = 30'000;
  // The stalest assigned partition; none while nothing is assigned (or in
  // a status that no loop drives).
  std::optional<FetchLag> stalest_fetch;
  // Set while no broker can be reached (see BrokersDown), cleared as soon
  // as one answers. While the consumer has no partitions (starting,
  // joining the group, or after losing them) it makes the reason
  // kBrokerUnreachable at once, instead of kNotConsuming or kNotAssigned:
  // a broker that cannot be reached is not a rebalance. While partitions
  // are assigned, the fetch bound (not_ready_after_ms) decides as before,
  // so that a broker restart shorter than the bound keeps the replica
  // ready.
  std::optional<BrokersDown> brokers_down;
  // Durable state: why a partition's state is unavailable (the first
  // one); empty when every assigned partition's state is in place.
  std::string state_problem;

  // The one readiness predicate, at monotonic time `now_mono_ms`: the first
  // reason that holds, in the order of ReadyReason.
  ReadyReason ready_reason(int64_t now_mono_ms) const;
  bool ready(int64_t now_mono_ms) const {
    return ready_reason(now_mono_ms) == ReadyReason::kReady;
  }
  // One line for /readyz and the log: "ready", or "not ready (<reason>):
  // <why, with figures>".
  std::string ReadinessMessage(int64_t now_mono_ms) const;

  // Assigned partitions with their offsets; replaced on every rebalance.
  std::vector<PartitionStatus> partitions;
  std::map<std::string, int64_t> errors;  // By librdkafka error name.
  int64_t commits_ok = 0;
  int64_t commits_failed = 0;
  int64_t rebalances = 0;
  // Durable state: checkpoint rounds written (each with its offset
  // commit), failed, and the bytes of the latest round.
  int64_t checkpoints_ok = 0;
  int64_t checkpoints_failed = 0;
  int64_t checkpoint_bytes = 0;
  int64_t partitions_restored = 0;  // Shards restored from checkpoints.
  // Restores that stopped at a delta that did not apply (corrupt, out of
  // order): the base and the deltas before it were restored, and the
  // input read again from their offsets.
  int64_t checkpoint_deltas_refused = 0;
  int64_t dead_letters_produced = 0;
  int64_t dead_letters_failed = 0;
  // Events re-read after a restart or rebalance and skipped because the
  // metrics already reflect them, per topic.
  std::map<std::string, int64_t> replayed_events;
  // Events deleted by the broker (retention, DeleteRecords) before this
  // replica read them: reading resumed below a partition's log start.
  // Per topic. What of them a previous owner had not counted is lost.
  std::map<std::string, int64_t> deleted_unread_events;
};

// What /readyz reads (issue 41): the readiness inputs of an IngestState
// (consuming, assigned, the latest poll, the stalest fetch, the brokers'
// reachability, the durable state's problem, the fetch bound), published
// by the consumer thread whenever it changes one and read by the HTTP
// threads under this board's own mutex, never the daemon's: neither a
// scrape nor a consumer busy with a message holds /readyz up.
// Thread-safety: Publish() and At() may be called from any threads.
class ReadinessBoard {
 public:
  // Copies `state`'s readiness inputs (the caller holds the lock that
  // guards `state`). Allocates only when a text grows.
  void Publish(const IngestState& state);

  struct Readiness {
    bool ready = false;
    std::string message;  // IngestState::ReadinessMessage().
  };
  // The published state's readiness at monotonic time `now_mono_ms`;
  // before any Publish(), a default IngestState's (not consuming).
  Readiness At(int64_t now_mono_ms) const;

 private:
  mutable std::mutex mu_;
  IngestState inputs_;  // Only the readiness inputs are set.
};

// What librdkafka's statistics JSON says of one topic-partition's fetcher:
// Per assigned partition (by slot), when fetches last made progress: a
// message received, or statistics showing an active fetch from an UP
// leader that answered recently. A newly tracked partition counts as
// progressing from then (its fetcher starts). Plain state, not
// thread-safe: the consumer thread owns it.
class FetchProgressTable {
 public:
  // Starts tracking `slot` at `now_mono_ms` unless tracked already.
  void Track(int32_t slot, int64_t now_mono_ms);
  void Untrack(int32_t slot);
  // Fetch progress of `slot` at `at_mono_ms` (ignored if untracked or
  // older than what is known).
  void Progress(int32_t slot, int64_t at_mono_ms);
  // What the latest statistics said of `slot`'s leader.
  void SetLeaderUp(int32_t slot, bool up);

  struct Stalest {
    int32_t slot = 0;
    int64_t progress_mono_ms = 0;
    bool leader_up = true;
  };
  // The tracked slot with the oldest progress; none if nothing is tracked.
  std::optional<Stalest> stalest() const;

 private:
  struct Entry {
    int64_t progress_mono_ms = 0;
    bool leader_up = true;
  };
  std::map<int32_t, Entry> slots_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_INGEST_STATE_H_
