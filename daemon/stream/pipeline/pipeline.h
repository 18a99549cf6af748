// Pipeline: the streaming evaluation core end to end. Raw events in; decoded
// (EventDecoder), joined (ImpressionJoin or QrelsJoin), every finalized list
// scored (metrics::Evaluator) and folded into running means (Aggregator).
// Rejected events are counted by topic and reason, logged at a bounded rate
// and optionally copied to a dead-letter sink; nothing else is affected.
//
// The same Pipeline runs under `rankwatch replay` (files) and `rankwatch run`
// (Kafka): whatever it computes from a sequence of events does not depend on
// where they came from.
//
// Owned and driven by one thread; not thread-safe. The daemon serializes
// readers (scrapes) with its own mutex.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/rate_limiter.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/decode/event_decoder.h"
#include "daemon/stream/decode/events.h"
#include "daemon/stream/experiments/decisions.h"
#include "daemon/stream/experiments/experiments.h"
#include "daemon/stream/experiments/query_movers.h"
#include "daemon/stream/interleaving/interleaving_monitor.h"
#include "daemon/stream/join/join.h"
#include "daemon/stream/judges/judge_agreement.h"
#include "daemon/stream/judges/judge_monitor.h"
#include "daemon/stream/pipeline/pipeline_counters.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

// Receives rejected events, e.g. a file (replay) or a Kafka topic (daemon).
// `event` (payload and key together, see RawEvent) is valid during the call
// only: a sink copies what it keeps.
class DeadLetterSink {
 public:
  virtual ~DeadLetterSink() = default;
  virtual void Write(Topic topic, RejectReason reason, std::string_view detail,
                     RawEvent event, EventOrigin origin) = 0;
};

// Told when an event the pipeline retained is no longer needed.
class ReleaseListener {
 public:
  virtual ~ReleaseListener() = default;
  virtual void OnReleased(EventOrigin origin) = 0;
};

class QrelsJoin;

class Pipeline : private JoinListener {
 public:
  // Builds the pipeline for `config`, preloading join.qrels_file in qrels
  // mode. The optional sinks and `clock` must outlive the pipeline.
  static StatusOr<std::unique_ptr<Pipeline>> Create(
      const config::Config& config, const Clock* clock,
      ReleaseListener* releases = nullptr,
      DeadLetterSink* dead_letters = nullptr);
  ~Pipeline() override;

  // Decodes and processes one event. Returns true when the join retained it
  // (ReleaseListener::OnReleased follows later), false when it is done.
  // `fallback_timestamp_ms` stands in for a missing timestamp field. A
  // rejected event goes to the dead-letter sink with its own key (the key
  // is passed with the event, never remembered from a previous call).
  // The event by reference: 32 bytes by value went through the stack, where
  // the caller's 8-byte stores of its views were read back in 16-byte loads
  // (a store-forwarding stall per event, 4% of BM_PipelineEvents).
  bool OnPayload(Topic topic, const RawEvent& event, EventOrigin origin,
                 std::optional<int64_t> fallback_timestamp_ms = std::nullopt);
  // The same for an event without a key (replay, tests).
  bool OnPayload(Topic topic, std::string_view payload, EventOrigin origin,
                 std::optional<int64_t> fallback_timestamp_ms = std::nullopt) {
    return OnPayload(topic, RawEvent{payload, {}}, origin,
                     fallback_timestamp_ms);
  }
  // The same for events decoded elsewhere (replay merges two files).
  bool OnResults(const ResultsEvent& event, EventOrigin origin);
  bool OnJudgments(const JudgmentEvent& event, EventOrigin origin);
  // A valid event the schema says to skip (DecodeStatus::ignored).
  void OnIgnored(Topic topic);
  // `location` names the event in the log instead of its partition and
  // offset when set: replay passes "FILE:LINE".
  void OnRejected(Topic topic, const DecodeStatus& status, RawEvent event,
                  EventOrigin origin, std::string_view location = {});

  // Logs how many rejections the log's rate limit left out since it last
  // said (nothing when none): before the next one it lets through, and
  // at the end of a replay.
  void LogSuppressedRejections();

  // Lets wall time close windows of an idle stream; call regularly.
  void AdvanceWallClock();
  // Finalizes everything pending (end of replay).
  void FinishAll();
  // Drops pending state of revoked partitions (see Join::DropPartitions).
  void DropPartitions(std::span<const int32_t> partitions);
  // See Join::RestoreWatermark. A watermark beyond the wall clock plus
  // events.max_future_skew (poisoned by a far-future timestamp, which
  // versions before 0.2 accepted) is ignored with a warning: returns false.
  [[nodiscard]] bool RestoreWatermark(int32_t source, int64_t watermark_ms);
  // Checkpoints of one shard: an input partition number (Kafka partition
  // n of both topics in impression mode; 0 in replay), whose state moves
  // with the partition when a rebalance gives it to another replica.
  //
  // EncodeShard appends to `out` a versioned record (kCheckpointVersion)
  // of everything that determines a figure of the shard: the event-time
  // progress of its sources, its pending requests, its aggregates (running
  // stats, histograms, window buckets, first-click delays), its per-unit
  // experiment sums and first lists, its covariate moments
  // (schema.covariate), its
  // interleaving counts and, with judges, the judges' agreement and
  // series (JudgeAgreement, JudgeMonitor: sections of their own, each
  // starting with its magic number). Series are named by what
  // their values mean (SeriesSpec::state_key), so a checkpoint written
  // under another configuration restores what still means the same and
  // leaves the rest to start afresh (docs/operations.md, "Durable state").
  // Not in a shard: process counters, the sequential tests' state and the
  // SRM's unit counts (with schema.unit).
  void EncodeShard(int32_t shard, std::string* out) const;
  // Restores `shard` from an EncodeShard record, replacing what it held.
  // A record of another format version, or corrupt, is an error naming
  // the cause; the shard is then left empty (the caller decides what to
  // do: the daemon stays unready rather than count from zero).
  [[nodiscard]] Status DecodeShard(int32_t shard, std::string_view record);
  // Forgets `shard` without scoring its pending requests (its partition
  // moved; its state lives on in its checkpoint).
  void DropShard(int32_t shard);
  static constexpr uint32_t kCheckpointVersion = 1;

  // Checkpoints proportional to change (docs/operations.md, "Durable
  // state"; pipeline_delta.cc). EncodeShardBase is EncodeShard, and the
  // shard's pending store starts remembering what changes from then on.
  // EncodeShardDelta appends a delta record (kDeltaVersion, a magic of
  // its own): what a restore of the shard's previous record (base or
  // delta) needs to reach its present state. Of the pending requests only
  // those created or changed since the previous record and the keys of
  // those released; of the aggregates' windows only the buckets changed
  // (Aggregator::EncodeShardChanges, and the interleaving experiments'
  // windows: a round of 5 s changes one or two of the 361 buckets an
  // hour's window holds); every other section whole
  // (running stats, sums, monitors: they grow with the label groups and
  // series, not with the traffic). Then a new epoch starts. It writes
  // nothing and returns false when the shard is not tracked (restored or
  // created since its last base): write a base then.
  // ApplyShardDelta applies a delta record onto the shard as restored from
  // the records before it: of version 2, or of version 1 (every window
  // written whole; what rankwatch wrote before version 2, read so that an
  // upgrade restores the chain its predecessor wrote). A version 1
  // binary refuses a version 2 delta with one line and restores the base
  // and the deltas before it, then reads the input again from their
  // offsets (a rollback re-reads input; it loses nothing). On an error
  // (one line naming the cause) the shard is left empty: restore the base
  // and the deltas that applied.
  void EncodeShardBase(int32_t shard, std::string* out);
  bool EncodeShardDelta(int32_t shard, std::string* out);
  [[nodiscard]] Status ApplyShardDelta(int32_t shard, std::string_view record);
  static constexpr uint32_t kDeltaVersion = 2;
  static constexpr uint32_t kDeltaVersionWholeWindows = 1;

  // See Join::AddSource and SetSourceIdle.
  void AddSource(int32_t source) {
    ++state_version_;
    join_->AddSource(source);
  }
  void SetSourceIdle(int32_t source, bool idle) {
    ++state_version_;
    join_->SetSourceIdle(source, idle);
  }

  // A configuration reload, between events: adopts `next` where it can
  // change live, keeping the state that stays valid (docs/configuration.md,
  // "Reloading"):
  //  - every label group with its request counts; each series (measure
  //    and cutoff) still computed keeps its running stats, histogram and
  //    window buckets (a new bucket width empties the windows; a change of
  //    metrics.definitions empties every series, of
  //    metrics.click_exclude_kinds the click measures'); new series start
  //    empty;
  //  - the join's pending requests and watermark; its bounds follow `next`;
  //  - the A/B and interleaving monitors are rebuilt and take over the
  //    sequential state of what is unchanged (ExperimentMonitor::AdoptState,
  //    InterleavingMonitor::AdoptState);
  //  - event limits, the reject log rate.
  // Keys that cannot change live (FixedKeysChanged) make it fail with
  // InvalidArgument, and an invalid metrics configuration with its
  // error; the running configuration then stays, untouched.
  [[nodiscard]] Status Reconfigure(const config::Config& next);
  // The keys of the pipeline's configuration that differ between `running`
  // and `next` and cannot change live, as YAML paths ("join.window"): the
  // schema, the join's mode, timing and qrels file, dead_letter, the label
  // dimensions (aggregation.segments, variants, segment_values) and, in
  // impression mode, metrics.definitions.relevance_threshold (the join's
  // click threshold). Decided by the table config::ConfigKeys().
  static std::vector<std::string> FixedKeysChanged(
      const config::Config& running, const config::Config& next);

  // A counter every call that can change what the pipeline holds bumps
  // (an event, a wall-clock advance, a look, a restore, a drop, a
  // reload): two reads of the same version read the same state, so a
  // read model computed from one serves every reader of that version
  // (SnapshotCache). Starts at 1.
  uint64_t state_version() const { return state_version_; }

  const config::Config& config() const { return config_; }
  const Aggregator& aggregator() const { return aggregator_; }
  // A/B comparisons, refreshed by AdvanceWallClock() (at most once per
  // kExperimentLookIntervalMs of wall time) and FinishAll().
  const ExperimentMonitor& experiments() const { return *experiments_; }
  static constexpr int64_t kExperimentLookIntervalMs = 1000;
  // Takes a look now if a request was finalized since the latest one, so
  // that a view rendered right after (/metrics, /api/v1/summary) shows A/B
  // figures of the same state as its means: the same n in every table
  // (issue 27). The sequential tests hold for any schedule of looks.
  void RefreshLook();
  // One decision per experiment and treatment, taken at each look.
  const DecisionBoard& decisions() const { return *decisions_; }
  // Interleaving experiments, refreshed with the A/B comparisons.
  const InterleavingMonitor& interleaving() const { return *interleaving_; }
  // The experiments' most frequent queries (statistics.tracked_queries).
  const QueryMovers& query_movers() const { return *movers_; }
  // With two judges or more: per pair of judges (PairIndex over
  // judges.names), the items both graded and those one graded (see
  // JudgeAgreement; in qrels mode, the judgments table's). Empty without.
  std::vector<metrics::JudgePairCounts> judge_agreement() const;
  // The same over the whole buckets of `window_ms` ending at
  // window_now_ms() (impression mode; the qrels table's labels have no
  // event time of their own: empty there).
  std::vector<metrics::JudgePairCounts> judge_agreement(
      int64_t window_ms) const;
  // Items the agreement did not count (JudgeAgreement::refused_items).
  int64_t judge_agreement_refused() const {
    return agreement_ ? agreement_->refused_items() : 0;
  }
  // With judges: each judge's measures, coverage and the PPI sums (see
  // JudgeMonitor); null without judges.
  const JudgeMonitor* judge_monitor() const { return judge_monitor_.get(); }
  const PipelineCounters& counters() const { return counters_; }
  // Whether judgments are read as clicks (impression mode with a click
  // measure or an interleaving experiment): the time to first click is
  // then reported.
  bool tracks_clicks() const;
  const JoinCounters& join_counters() const { return join_->counters(); }
  int64_t pending_requests() const { return join_->pending_requests(); }
  int64_t table_entries() const { return join_->table_entries(); }
  int64_t watermark_ms() const { return join_->watermark_ms(); }
  int64_t commit_watermark_ms(int32_t source) const {
    return join_->commit_watermark_ms(source);
  }
  // Event time at which sliding windows end ("now"): the watermark.
  int64_t window_now_ms() const;

 private:
  Pipeline(const config::Config& config, const Clock* clock,
           metrics::Evaluator evaluator, ReleaseListener* releases,
           DeadLetterSink* dead_letters);

  // A look of the A/B and interleaving monitors, windows ending now.
  void Look();
  // Whether a finalized request of `group` belongs to interleaving
  // experiment `experiment` (an index into config_.interleaving).
  bool IsInterleavingOf(int32_t experiment, uint32_t group) const;

  // Group labels in checkpoints, through the aggregator. With `staged`,
  // Read() checks the labels against `limits` (valid UTF-8, within
  // max_id_length) and keeps them there, creating no group: it returns
  // kStagedGroup + their place, resolved once the whole record decoded.
  struct StagedLabels {
    std::string variant;
    std::vector<std::string> segments;
  };
  class AggregatorGroups : public GroupCodec {
   public:
    explicit AggregatorGroups(Aggregator* aggregator,
                              std::vector<StagedLabels>* staged = nullptr,
                              const CheckpointLimits* limits = nullptr)
        : aggregator_(aggregator), staged_(staged), limits_(limits) {}
    void Write(uint32_t group, ByteWriter* out) const override;
    uint32_t Read(ByteReader* in) const override;

   private:
    Aggregator* aggregator_;
    std::vector<StagedLabels>* staged_;
    const CheckpointLimits* limits_;
  };
  // What DecodeShard read before it changes anything that outlives the
  // shard: the groups it creates wait here until every section decoded.
  struct StagedRestore {
    std::vector<StagedLabels> labels;
    Aggregator::StagedShard aggregates;
    Aggregator::StagedShard judge_aggregates;  // JudgeMonitor's.
  };

  // What a record holds: the whole state (EncodeShard), or a delta whose
  // join section (Join::ApplyShardDelta) applies onto the shard's pending
  // requests, its aggregates written whole (version 1) or as changes
  // (version 2: Aggregator::StageShardChanges).
  enum class RecordKind { kWhole, kDeltaWhole, kDelta };
  // Every section of a checkpoint record after its header.
  [[nodiscard]] Status DecodeSections(int32_t shard, ByteReader* in,
                                      const CheckpointLimits& limits,
                                      StagedRestore* staged, RecordKind kind);
  // Decodes the sections after a record's header and creates the groups
  // they name; on an error the shard is left empty.
  [[nodiscard]] Status RestoreSections(int32_t shard, ByteReader* in,
                                       RecordKind kind);
  // Every section but the join's (sources and pending requests); with
  // `changes`, a delta's (the interleaving windows' changes).
  void EncodeShardSections(int32_t shard, ByteWriter* w,
                           bool changes = false) const;
  // Forgets every section of the shard but the join's (and but those
  // with sliding windows, aggregates and interleaving, with
  // `keep_windows`: a delta of version 2 applies onto them).
  void DropShardSections(int32_t shard, bool keep_windows = false);
  // The shard's state is in a record: its windows' changes count from
  // here.
  void MarkShardRecorded(int32_t shard);
  // The checkpoint's sections after the movers (agreement, judges).
  [[nodiscard]] Status DecodeJudgeSections(
      int32_t shard, ByteReader* in, const CheckpointLimits& limits,
      Aggregator::StagedShard* judge_aggregates);

  // JoinListener.
  void OnFinalized(const FinalizedRequest& request) override;
  void OnReleased(EventOrigin origin) override;

  config::Config config_;
  const Clock* clock_;
  std::optional<EventDecoder> decoder_;  // Rebuilt by Reconfigure().
  metrics::Evaluator evaluator_;
  Aggregator aggregator_;
  // Rebuilt by Reconfigure(): they point into config_.
  std::unique_ptr<ExperimentMonitor> experiments_;
  std::unique_ptr<DecisionBoard> decisions_;
  std::unique_ptr<InterleavingMonitor> interleaving_;
  std::unique_ptr<QueryMovers> movers_;
  std::unique_ptr<Join> join_;
  // Impression mode with two judges or more (JudgeAgreement).
  std::unique_ptr<JudgeAgreement> agreement_;
  // With judges (JudgeMonitor).
  std::unique_ptr<JudgeMonitor> judge_monitor_;
  const QrelsJoin* qrels_join_ = nullptr;  // join_, in qrels mode.
  ReleaseListener* releases_;
  DeadLetterSink* dead_letters_;
  RateLimiter reject_log_limit_;
  int64_t reported_suppressed_ = 0;  // Of reject_log_limit_.suppressed().
  PipelineCounters counters_;
  ResultsEvent results_scratch_;
  JudgmentEvent judgments_scratch_;
  metrics::ListScores scores_;
  // The click measures' scores when some judgment kinds are not clicks.
  metrics::ListScores click_scores_;
  std::vector<double> values_;
  uint64_t state_version_ = 1;
  int64_t last_look_ms_ = INT64_MIN;   // Monotonic time of the latest look.
  bool finalized_since_look_ = false;  // A request finalized since then.
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_H_
