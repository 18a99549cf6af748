// KafkaIngest: reads the results and judgments topics into a Pipeline, with
// at-least-once delivery. This is the consume loop; its pieces live beside
// it: kafka_conf (client properties), rebalance (the group's rebalance
// callback), partition_book (per-partition offsets across rebalances),
// commit_metadata (what a commit carries), fetch_health (librdkafka's
// statistics), dead_letter_sink and error_reporter.
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
// * Durable state (kafka.durable_state): instead of the two points above,
//   every kafka.checkpoint_interval, on revocation and on shutdown, each
//   assigned partition whose position moved is checkpointed into the
//   changelog (changelog.h) with the offsets its state covers (a base, or
//   a delta of what changed since the record before: EncodeChainRecord),
//   and the group's offsets are committed to those offsets with a pointer
//   to the chain's base. On assignment each partition's newest base and
//   its deltas are restored (Pipeline::DecodeShard, ApplyShardDelta;
//   checkpoint_chain.h) and reading resumes at the last one's offsets; one that
//   cannot be restored is paused and the replica is not ready
//   (state_unavailable) rather than counting from zero. A revoked
//   partition's state is dropped (Pipeline::DropShard): it lives on in
//   its checkpoint.
// * Events the broker deleted before they were read (retention shorter
//   than an outage: reading resumes below a partition's log start) are
//   lost; they are counted and logged once per partition and assignment
//   (PartitionBook::SettleStart), and so are those deleted while a replica
//   lagged behind the retention (a gap in a partition's offsets below its
//   log start: PartitionBook::DeletedInGap).
// * Intervals and timeouts (tick, statistics, commits, staleness, stall)
//   run on the injected clock's monotonic time.
// * Readiness (IngestState::ready_reason): the loop tracks fetch progress
//   per assigned partition (a message, or statistics showing an active
//   fetch from an UP leader that answered recently), publishes the stalest
//   partition into the status, and logs readiness changes with the reason.
//   Each client's brokers as a whole are tracked too: librdkafka's
//   ERR__ALL_BROKERS_DOWN (within a second of the first failed connection)
//   marks them unreachable until one answers (UP in statistics, metadata,
//   a message, an assignment), published as IngestState::brokers_down. The
//   start-up metadata requests serve the callbacks between short attempts,
//   so that this shows before the consume loop runs.
//
// Threading: Run() is the consumer thread. The pipeline and the status are
// shared with the HTTP threads under the mutex given to Attach(). The
// consumer thread holds it while it handles a message, or a batch of
// them, or does its periodic work, and not while it calls consume() or
// close(): the callbacks served there (rebalance, statistics and errors,
// commit results), which run on the consumer thread inside those calls,
// take the mutex themselves. A batch's polls (timeout 0, under the lock)
// serve them too: there they see that their thread holds it
// (CallbackLock), and the assignment's checkpoint reads release it. State no
// other thread sees (the PartitionBook, fetch health and progress, the
// table's positions) is touched by the consumer thread only and needs no lock.
#ifndef RANKWATCH_DAEMON_KAFKA_CONSUMER_H_
#define RANKWATCH_DAEMON_KAFKA_CONSUMER_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/kafka/changelog.h"
#include "daemon/kafka/checkpoint_chain.h"
#include "daemon/kafka/dead_letter_sink.h"
#include "daemon/kafka/error_reporter.h"
#include "daemon/kafka/fetch_health.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/kafka/partition_book.h"
#include "daemon/kafka/rebalance.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::kafka {

class KafkaIngest final : public stream::ReleaseListener,
                          private RebalanceListener {
 public:
  // Validates and applies the Kafka configuration. Connection problems show
  // later, as errors counted while Run() retries. `clock` must outlive the
  // object.
  static StatusOr<std::unique_ptr<KafkaIngest>> Create(
      const config::Config& config, const Clock* clock = SystemClock::Get());
  ~KafkaIngest() override;

  // The pipeline to feed (created with this object as ReleaseListener),
  // the mutex that guards it and status(), and an optional dead-letter sink.
  // Called once, before Run().
  void Attach(stream::Pipeline* pipeline, std::mutex* mu,
              KafkaDeadLetterSink* dead_letters);

  // The wall clock for the pipeline: `clock`'s wall time as of the last
  // poll round (the time its batch was received; also ticked in the
  // rebalance callbacks), so that the events of a batch share one reading
  // instead of reading the clock each. Lives as long as this object.
  const Clock* event_clock() const { return &event_clock_; }

  // Consumes until `stop` is true; then commits the safe offsets and leaves
  // the group. Returns an error only when consuming cannot start.
  Status Run(const std::atomic<bool>& stop);

  // Read under the mutex. Readiness is status().ready(now).
  const IngestState& status() const { return status_; }
  // The same readiness, published by the consumer thread as it changes:
  // read without the mutex (/readyz).
  const ReadinessBoard& readiness() const { return readiness_; }
  IngestState* mutable_status() { return &status_; }

  // stream::ReleaseListener: called by the pipeline on the consumer thread.
  void OnReleased(stream::EventOrigin origin) override;

 private:
  class EventHandler;
  class CommitHandler;

  KafkaIngest(const config::Config& config, const Clock* clock);
  Status Init();
  // The clients, for what their callbacks report.
  enum Client { kGroupClient = 0, kTableClient = 1 };

  Status LoadTable(const std::atomic<bool>& stop);
  bool CheckPartitionCounts(const std::atomic<bool>& stop);
  void HandleBatch(RdKafka::KafkaConsumer* consumer, bool from_table);
  // The mutex for a callback: taken, unless this thread holds it across
  // the polls of a batch (then the lock returned owns nothing).
  std::unique_lock<std::mutex> CallbackLock();
  // Whether this thread holds *mu_ across the polls of a batch
  // (HandleBatch): the callbacks those polls serve run on this thread,
  // inside them, and must not take it again. Per thread, so that a
  // callback served on any other thread still takes it.
  static thread_local bool batch_locked_;
  void Shutdown();
  // The methods below run with *mu_ held.
  void Handle(RdKafka::Message* message, bool from_table);
  void Handle(const rd_kafka_message_t* message, bool from_table);
  void Periodic();
  void MarkCaughtUpSources();
  // `final`: the last commit before this owner stops reading `slots`
  // (CommitMetadata::final).
  // Copies the join's replayed-event counts into the status.
  void PublishReplayed();
  // Records where each of `partitions` resumes (PartitionBook::ExpectStart).
  void ExpectStarts(const std::vector<AssignedPartition>& partitions);
  // Settles `slot`'s start at its first message since its assignment
  // (`first_offset`), or before any (-1) by its log start as librdkafka
  // last heard it: events the broker deleted before they were read are
  // counted (IngestState::deleted_unread_events) and logged.
  void SettleStart(int32_t slot, int64_t first_offset);
  // Counts and logs the events deleted unread in a gap of `slot`'s offsets
  // while reading: `next` expected, `offset` read (PartitionBook::
  // DeletedInGap).
  void SettleGap(int32_t slot, int64_t next, int64_t offset);
  // `slot`'s log start as librdkafka last heard it, -1 when not known.
  int64_t CachedLogStart(int32_t slot);
  void Commit(const std::vector<int32_t>& slots, bool sync, bool final = false);

  // Durable state. The changelog topic ready for use (retried until it is
  // or `stop`; the status says why meanwhile).
  Status PrepareChangelog(const std::atomic<bool>& stop);
  // The input partitions (shards) of `slots`, each once, in slot order.
  static std::vector<int32_t> ShardsOf(const std::vector<int32_t>& slots);
  // The input partitions (shards) assigned to the group consumer.
  std::vector<int32_t> AssignedShards() const;
  // Checkpoints `shards` (those whose position moved since their last
  // checkpoint, or all with `force`) and commits their offsets, waiting
  // for the broker (a round in flight first): on shutdown and revocation,
  // under *mu_.
  void Checkpoint(const std::vector<int32_t>& shards, bool force);
  // The periodic checkpoint without waiting: StartCheckpoint() hands a
  // round to the changelog (false when there is nothing to write or it
  // failed at once); PollCheckpoint(), called by every pass of the consume
  // loop, finishes it once the broker has answered (or the round timed
  // out), committing asynchronously. A broker that is slow or down never
  // holds the consume loop or *mu_. Under *mu_.
  bool StartCheckpoint(const std::vector<int32_t>& shards, bool force);
  void PollCheckpoint();
  // Waits for the round in flight, if any, and finishes it.
  void AwaitCheckpoint();
  void FinishCheckpoint(const Status& result,
                        const std::vector<Changelog::Written>& written,
                        bool sync);
  // The round in flight failed: each of its shards starts a new chain,
  // and its tombstones wait for the next round.
  void FailRound();
  // What restoring one shard found (read without the lock).
  struct Restore {
    int32_t shard = 0;
    std::optional<std::string> record;  // The newest base, if any.
    std::vector<std::string> deltas;    // Its deltas to apply, in order.
    // Why the deltas stop before the last one of the base (SelectChain).
    std::string chain_problem;
    // Every delta key read: deleted once this owner's base is written.
    std::vector<std::string> delta_keys;
    int64_t read_from = -1;  // The changelog offset read from (-1: start).
    std::string problem;     // Why it cannot be restored.
  };
  Restore ReadCheckpoint(int32_t shard,
                         const std::vector<AssignedPartition>& partitions);
  // Applies `restore` to the pipeline and the shard's partitions (start
  // offsets, or paused with the reason in the status); under *mu_.
  void ApplyRestore(const Restore& restore,
                    std::vector<AssignedPartition>& partitions);
  // Restores the base of `restore` and applies its deltas; on a delta that
  // does not apply, restores the base and the deltas before it again
  // (with the reason in *problem). The offsets the restored state covers.
  Status RestoreChain(const Restore& restore, std::array<int64_t, 2>* offsets,
                      std::string* problem);

  void PublishStateProblem();
  // Copies status_'s readiness inputs into readiness_; under *mu_, after
  // each change of one.
  void PublishReadiness() { readiness_.Publish(status_); }
  void UpdatePartitionStats();
  void PublishFetchProgress();
  void LogReadiness(int64_t now);
  // A client error `err` with librdkafka's `text`: a connection error's
  // cause is kept; ERR__ALL_BROKERS_DOWN marks the client's brokers down.
  void OnClientError(Client client, RdKafka::ErrorCode err,
                     const std::string& text);
  // A broker of `client` answered.
  void MarkReachable(Client client);
  // status_.brokers_down from the clients' states.
  void PublishReachability();

  // Statistics callback (consumer thread; takes the lock only to mark the
  // client's brokers reachable).
  void OnStatistics(Client client, const std::string& json);

  // RebalanceListener (consumer thread, inside consume() or close()).
  void OnAssigned(std::vector<AssignedPartition>& partitions) override;
  void OnRevoked(const std::vector<RevokedPartition>& partitions,
                 bool lost) override;
  void OnAssignmentChanged(bool assigned) override;
  void OnRebalanceError(RdKafka::ErrorCode err,
                        std::string_view context) override;

  int TopicIndex(std::string_view topic) const;
  const std::string& TopicName(int32_t topic_index) const;

  config::Config config_;
  const Clock* clock_;
  RoundClock event_clock_;  // Ticked by the consumer thread.
  stream::Pipeline* pipeline_ = nullptr;
  std::mutex* mu_ = nullptr;
  KafkaDeadLetterSink* dead_letters_ = nullptr;
  // Guarded by *mu_.
  IngestState status_;
  ReadinessBoard readiness_;  // Its own lock.
  ErrorReporter errors_;
  // Consumer thread only.
  std::unique_ptr<RebalanceHandler> rebalance_handler_;
  std::unique_ptr<EventHandler> event_handler_;
  std::unique_ptr<EventHandler> table_event_handler_;
  std::unique_ptr<CommitHandler> commit_handler_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  std::unique_ptr<RdKafka::KafkaConsumer> table_consumer_;  // qrels mode.
  std::unique_ptr<Changelog> changelog_;  // With kafka.durable_state.
  // Per shard: the positions its last checkpoint covers (results,
  // judgments), and why its state could not be restored.
  std::map<int32_t, std::array<int64_t, 2>> checkpointed_;
  std::map<int32_t, std::string> unrestored_;
  // Per shard: its chain in the changelog (checkpoint_chain.h).
  std::map<int32_t, ShardChain> chains_;
  // Deltas of superseded bases: deleted with the next round.
  std::vector<Changelog::Outgoing> tombstones_;
  // The periodic round in flight: its shards, the positions each record
  // covers, each record's delta number (0: a base), key and size, and
  // their bytes; the tombstones sent after them.
  struct CheckpointRound {
    std::vector<int32_t> shards;
    std::vector<std::array<int64_t, 2>> positions;
    std::vector<uint32_t> seqs;
    std::vector<std::string> keys;
    std::vector<int64_t> sizes;
    int64_t bytes = 0;
    std::vector<Changelog::Outgoing> tombstones;
  };
  // Encodes shard's next record of its chain (a base, or a delta while
  // the deltas since the base are smaller than it) into `records` and
  // `round`.
  void EncodeChainRecord(int32_t shard, const std::array<int64_t, 2>& at,
                         std::vector<Changelog::Outgoing>* records,
                         CheckpointRound* round);
  std::optional<CheckpointRound> round_;
  int64_t last_checkpoint_mono_ms_ = 0;
  PartitionBook book_;
  std::map<int32_t, int64_t> table_positions_;  // qrels table partitions.
  FetchHealthTable fetch_health_;
  // Written by the consumer thread, published into status_ under *mu_.
  FetchProgressTable fetch_progress_;
  std::array<int32_t, 2> topic_partitions_{};  // Partition count per topic.
  // Monotonic times of the periodic work.
  int64_t last_commit_mono_ms_ = 0;
  int64_t last_tick_mono_ms_ = 0;
  // The monotonic clock when the messages being handled were polled: the
  // time of their fetch progress, read once per poll round rather than per
  // message (a clock read per event was 1% of the consumer thread). The
  // consumer thread's own: read and written by it only.
  int64_t poll_mono_ms_ = 0;
  int64_t last_stats_mono_ms_ = 0;
  // What each client reports of its brokers (guarded by *mu_).
  struct Reachability {
    bool all_down = false;  // ERR__ALL_BROKERS_DOWN, none answered since.
    bool reached = false;   // Some broker answered once.
    std::string cause;      // Of the latest connection error.
  };
  std::array<Reachability, 2> reachability_;
  bool shut_down_ = false;  // Guarded by *mu_: reachability is not reported.
  // The readiness last logged, and when (guarded by *mu_).
  ReadyReason logged_reason_ = ReadyReason::kNotConsuming;
  std::optional<int64_t> last_readiness_log_mono_ms_;
  // Whether readiness was logged as ready once: before, joining the group
  // is the start, logged at info.
  bool ever_ready_ = false;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_CONSUMER_H_
