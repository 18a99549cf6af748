#include "daemon/kafka/consumer.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "daemon/kafka/commit_metadata.h"
#include "daemon/kafka/kafka_conf.h"
#include "daemon/kafka/rdkafka_handles.h"

namespace rankwatch::kafka {

namespace {

constexpr int kBatch = 512;         // Messages per poll round.
constexpr int kPollMs = 100;        // Blocking wait outside the lock.
constexpr int64_t kTickMs = 200;    // Idle-window checks.
constexpr int64_t kStatsMs = 1000;  // Lag and position refresh.
constexpr int kMetadataTimeoutMs = 10'000;
// The start-up metadata requests: attempts this long, kMetadataTimeoutMs
// in all, the client's callbacks served between them.
constexpr int kMetadataAttemptMs = 500;
constexpr int kFlushTimeoutMs = 2000;  // Dead letters at shutdown.
// At most one log line per this interval about readiness changes; the
// latest state is logged once the interval has passed.
constexpr int64_t kReadinessLogMs = 1000;

}  // namespace

// Statistics and client errors, served inside consume() and close().
// One per client.
class KafkaIngest::EventHandler : public RdKafka::EventCb {
 public:
  EventHandler(KafkaIngest* owner, Client client)
      : owner_(owner), client_(client) {}
  void event_cb(RdKafka::Event& event) override {
    if (event.type() == RdKafka::Event::EVENT_STATS) {
      owner_->OnStatistics(client_, event.str());
      return;
    }
    if (event.type() != RdKafka::Event::EVENT_ERROR) return;
    // Transient errors (a broker down) are retried by librdkafka; they are
    // counted and logged, never fatal.
    const std::unique_lock<std::mutex> lock = owner_->CallbackLock();
    owner_->errors_.Report(event.err(), "client", event.str());
    owner_->OnClientError(client_, event.err(), event.str());
  }

 private:
  KafkaIngest* owner_;
  Client client_;
};

// Results of asynchronous commits, served inside consume() and close().
class KafkaIngest::CommitHandler : public RdKafka::OffsetCommitCb {
 public:
  explicit CommitHandler(KafkaIngest* owner) : owner_(owner) {}
  void offset_commit_cb(
      RdKafka::ErrorCode err,
      std::vector<RdKafka::TopicPartition*>& offsets) override {
    if (err == RdKafka::ERR__NO_OFFSET) return;  // Nothing to commit.
    const std::unique_lock<std::mutex> lock = owner_->CallbackLock();
    if (err != RdKafka::ERR_NO_ERROR) {
      ++owner_->status_.commits_failed;
      owner_->errors_.Log("offset commit failed", RdKafka::err2str(err));
      return;
    }
    ++owner_->status_.commits_ok;
    for (const RdKafka::TopicPartition* tp : offsets) {
      const int t = owner_->TopicIndex(tp->topic());
      if (t >= 0 && tp->err() == RdKafka::ERR_NO_ERROR) {
        owner_->book_.MarkCommitted(SlotOf(t, tp->partition()), tp->offset());
      }
    }
  }

 private:
  KafkaIngest* owner_;
};

KafkaIngest::KafkaIngest(const config::Config& config, const Clock* clock)
    : config_(config),
      clock_(clock),
      event_clock_(clock),
      errors_(&status_, clock) {}

KafkaIngest::~KafkaIngest() = default;

StatusOr<std::unique_ptr<KafkaIngest>> KafkaIngest::Create(
    const config::Config& config, const Clock* clock) {
  std::unique_ptr<KafkaIngest> ingest(new KafkaIngest(config, clock));
  RW_RETURN_IF_ERROR(ingest->Init());
  return ingest;
}

Status KafkaIngest::Init() {
  status_.topics = {config_.kafka.results_topic, config_.kafka.judgments_topic};
  status_.not_ready_after_ms = config_.kafka.not_ready_after.count();
  PublishReadiness();
  RebalanceListener* listener = this;  // A private base: converted here.
  rebalance_handler_ =
      std::make_unique<RebalanceHandler>(listener, kMetadataTimeoutMs);
  event_handler_ = std::make_unique<EventHandler>(this, kGroupClient);
  table_event_handler_ = std::make_unique<EventHandler>(this, kTableClient);
  commit_handler_ = std::make_unique<CommitHandler>(this);
  const bool qrels = config_.join.mode == config::JoinMode::kQrels;
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ConsumerConf(config_.kafka, config_.kafka.group_id, !qrels);
  if (!conf.ok()) return conf.status();
  RW_RETURN_IF_ERROR(
      SetCallback(conf->get(), "rebalance_cb", rebalance_handler_.get()));
  RW_RETURN_IF_ERROR(
      SetCallback(conf->get(), "event_cb", event_handler_.get()));
  RW_RETURN_IF_ERROR(
      SetCallback(conf->get(), "offset_commit_cb", commit_handler_.get()));
  std::string err;
  consumer_.reset(RdKafka::KafkaConsumer::create(conf->get(), err));
  if (!consumer_) return Status::InvalidArgument("kafka consumer: " + err);
  if (config_.kafka.durable_state) {
    StatusOr<std::unique_ptr<Changelog>> changelog =
        Changelog::Create(config_.kafka);
    if (!changelog.ok()) return changelog.status();
    changelog_ = std::move(changelog).value();
  }
  if (qrels) {
    // Group-less in effect: assigned by hand, never committed.
    StatusOr<std::unique_ptr<RdKafka::Conf>> table_conf = ConsumerConf(
        config_.kafka, config_.kafka.group_id + ".qrels-table", false);
    if (!table_conf.ok()) return table_conf.status();
    RW_RETURN_IF_ERROR(
        SetCallback(table_conf->get(), "event_cb", table_event_handler_.get()));
    table_consumer_.reset(
        RdKafka::KafkaConsumer::create(table_conf->get(), err));
    if (!table_consumer_) {
      return Status::InvalidArgument("kafka table consumer: " + err);
    }
  }
  return Status::Ok();
}

void KafkaIngest::Attach(stream::Pipeline* pipeline, std::mutex* mu,
                         KafkaDeadLetterSink* dead_letters) {
  pipeline_ = pipeline;
  mu_ = mu;
  dead_letters_ = dead_letters;
}

int KafkaIngest::TopicIndex(std::string_view topic) const {
  if (topic == config_.kafka.results_topic) return 0;
  if (topic == config_.kafka.judgments_topic) return 1;
  return -1;
}

const std::string& KafkaIngest::TopicName(int32_t topic_index) const {
  return topic_index == 0 ? config_.kafka.results_topic
                          : config_.kafka.judgments_topic;
}

void KafkaIngest::OnReleased(stream::EventOrigin origin) {
  book_.tracker().Release(origin.source, origin.offset);
}

// Warns when the two topics cannot be co-partitioned (impression mode), and
// records the partition counts. Without an answer (no broker reachable),
// a request is retried in attempts of kMetadataAttemptMs, up to
// kMetadataTimeoutMs for both topics, serving the client's callbacks in
// between: librdkafka's ERR__ALL_BROKERS_DOWN reaches the status (and the
// log) at once, and a stop is heard. True when every request was answered.
bool KafkaIngest::CheckPartitionCounts(const std::atomic<bool>& stop) {
  bool answered = true;
  int attempts_left = kMetadataTimeoutMs / kMetadataAttemptMs;
  // Callbacks only: nothing is subscribed or assigned yet.
  auto serve_callbacks = [&] {
    std::unique_ptr<RdKafka::Message> none(consumer_->consume(0));
    // The table consumer (qrels mode) connects from Init() on: served too,
    // or its statistics and errors queue up for as long as the broker is
    // away, and replay stale when the table loads.
    if (table_consumer_) {
      std::unique_ptr<RdKafka::Message> table(table_consumer_->consume(0));
    }
    std::lock_guard<std::mutex> lock(*mu_);
    LogReadiness(clock_->MonotonicMillis());
  };
  for (int t = 0; t < 2; ++t) {
    std::string err;
    std::unique_ptr<RdKafka::Topic> topic(
        RdKafka::Topic::create(consumer_.get(), TopicName(t), nullptr, err));
    if (!topic) {
      spdlog::warn("kafka: topic '{}': {}", TopicName(t), err);
      continue;
    }
    RdKafka::ErrorCode md_err = RdKafka::ERR_NO_ERROR;
    std::unique_ptr<RdKafka::Metadata> owned;
    do {
      RdKafka::Metadata* md = nullptr;
      md_err = consumer_->metadata(false, topic.get(), &md, kMetadataAttemptMs);
      owned.reset(md);
      --attempts_left;
      serve_callbacks();
      // Retried: no broker answered in time. Another error is final.
    } while ((md_err == RdKafka::ERR__TRANSPORT ||
              md_err == RdKafka::ERR__TIMED_OUT) &&
             attempts_left > 0 && !stop.load());
    if (md_err != RdKafka::ERR_NO_ERROR) {
      answered = false;
      std::lock_guard<std::mutex> lock(*mu_);
      errors_.Report(md_err, "metadata of " + TopicName(t));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(*mu_);
      MarkReachable(kGroupClient);
    }
    for (const RdKafka::TopicMetadata* tm : *owned->topics()) {
      if (tm->topic() == TopicName(t)) {
        topic_partitions_[t] = static_cast<int32_t>(tm->partitions()->size());
      }
    }
  }
  if (config_.join.mode == config::JoinMode::kImpression &&
      topic_partitions_[0] != topic_partitions_[1]) {
    spdlog::warn(
        "topics '{}' ({} partitions) and '{}' ({} partitions) differ in "
        "partition count: a request's results and judgments can land in "
        "different replicas and never meet. Key both by request_id with "
        "equal partition counts.",
        TopicName(0), topic_partitions_[0], TopicName(1), topic_partitions_[1]);
  }
  return answered;
}

Status KafkaIngest::LoadTable(const std::atomic<bool>& stop) {
  const std::string& topic = config_.kafka.judgments_topic;
  const int n = topic_partitions_[1];
  OwnedTopicPartitions parts;
  std::map<int32_t, int64_t> targets;
  for (int p = 0; p < n; ++p) {
    parts.Add(topic, p, RdKafka::Topic::OFFSET_BEGINNING);
    fetch_progress_.Track(SlotOf(1, p), clock_->MonotonicMillis());
    int64_t low = 0, high = 0;
    const RdKafka::ErrorCode err = table_consumer_->query_watermark_offsets(
        topic, p, &low, &high, kMetadataTimeoutMs);
    if (err != RdKafka::ERR_NO_ERROR) {
      // Loaded without waiting for this partition's end.
      std::lock_guard<std::mutex> lock(*mu_);
      errors_.Report(err, "end offset of the judgments table");
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(*mu_);
      MarkReachable(kTableClient);
    }
    if (high > low) targets[p] = high;
  }
  const RdKafka::ErrorCode err = table_consumer_->assign(parts.get());
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("cannot read the judgments topic '" + topic +
                               "': " + RdKafka::err2str(err));
  }
  spdlog::info("loading the qrels table from '{}' ({} partitions)", topic, n);
  auto caught_up = [&] {
    for (const auto& [p, high] : targets) {
      auto it = table_positions_.find(p);
      if (it == table_positions_.end() || it->second < high) return false;
    }
    return true;
  };
  while (!stop.load() && !caught_up()) {
    std::unique_ptr<RdKafka::Message> msg(table_consumer_->consume(kPollMs));
    std::lock_guard<std::mutex> lock(*mu_);
    poll_mono_ms_ = clock_->MonotonicMillis();
    event_clock_.Tick();
    Handle(msg.get(), /*from_table=*/true);
    LogReadiness(poll_mono_ms_);
  }
  std::lock_guard<std::mutex> lock(*mu_);
  spdlog::info("qrels table loaded: {} entries", pipeline_->table_entries());
  return Status::Ok();
}

Status KafkaIngest::Run(const std::atomic<bool>& stop) {
  bool answered = CheckPartitionCounts(stop);
  // The judgments table is read by partition: loaded before the cluster
  // answered, it would be empty, and results would be scored without
  // their labels. Wait for the broker (not ready: broker_unreachable).
  while (table_consumer_ && !answered && !stop.load()) {
    // A round that failed at once (an error other than a timeout) would
    // make this loop spin: a pause of kMetadataAttemptMs between rounds,
    // in steps that hear a stop.
    for (int step = 0; step < kMetadataAttemptMs / 50 && !stop.load(); ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    answered = CheckPartitionCounts(stop);
  }
  if (changelog_) {
    const Status prepared = PrepareChangelog(stop);
    if (stop.load()) {
      // Stopped while the changelog could not be prepared (a broker
      // unreachable, a topic to fix): a stop, not a failure.
      Shutdown();
      return Status::Ok();
    }
    RW_RETURN_IF_ERROR(prepared);
  }
  std::vector<std::string> topics = {config_.kafka.results_topic};
  if (table_consumer_) {
    RW_RETURN_IF_ERROR(LoadTable(stop));
  } else {
    topics.push_back(config_.kafka.judgments_topic);
  }
  const RdKafka::ErrorCode err = consumer_->subscribe(topics);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable(std::string("cannot subscribe: ") +
                               RdKafka::err2str(err));
  }
  {
    std::lock_guard<std::mutex> lock(*mu_);
    status_.consuming = true;
    status_.last_poll_mono_ms = clock_->MonotonicMillis();
    PublishReadiness();
  }
  while (!stop.load()) {
    std::unique_ptr<RdKafka::Message> first(consumer_->consume(kPollMs));
    {
      std::lock_guard<std::mutex> lock(*mu_);
      poll_mono_ms_ = clock_->MonotonicMillis();
      event_clock_.Tick();
      status_.last_poll_mono_ms = poll_mono_ms_;
      PublishReadiness();
      // Before a batch: a partition whose fetched data is queued locally
      // must hold event time back while another partition's batch is
      // handled.
      if (first->err() == RdKafka::ERR_NO_ERROR) MarkCaughtUpSources();
      Handle(first.get(), false);
    }
    HandleBatch(consumer_.get(), false);
    if (table_consumer_) HandleBatch(table_consumer_.get(), true);
    std::lock_guard<std::mutex> lock(*mu_);
    Periodic();
  }
  Shutdown();
  return Status::Ok();
}

// What the consumer has fetched already, without waiting. Each message is
// handled as soon as it is returned: a rebalance served by the next
// consume() must find every earlier message handled.
// Polled through the C API, as consume() does, without the RdKafka::Message
// that consume() allocates around each message.
void KafkaIngest::HandleBatch(RdKafka::KafkaConsumer* consumer,
                              bool from_table) {
  rd_kafka_t* client = consumer->c_ptr();
  poll_mono_ms_ = clock_->MonotonicMillis();
  event_clock_.Tick();
  // One lock for the batch, not one per message: the callbacks that its
  // polls serve (a rebalance among them) run here, after every earlier
  // message was handled, and see batch_locked_ (CallbackLock).
  std::lock_guard<std::mutex> lock(*mu_);
  batch_locked_ = true;
  for (int i = 0; i < kBatch; ++i) {
    const MessagePtr m(rd_kafka_consumer_poll(client, 0));
    if (m == nullptr || m->err == RD_KAFKA_RESP_ERR__TIMED_OUT) break;
    Handle(m.get(), from_table);
  }
  batch_locked_ = false;
}

thread_local bool KafkaIngest::batch_locked_ = false;

std::unique_lock<std::mutex> KafkaIngest::CallbackLock() {
  if (batch_locked_) return std::unique_lock<std::mutex>();
  return std::unique_lock<std::mutex>(*mu_);
}

// Commits what is safe, leaves the group (its revocation callback commits
// again and drops pending state), flushes dead letters.
void KafkaIngest::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(*mu_);
    status_.consuming = false;
    // Not ready because it stopped, whatever the brokers do from now (or
    // whatever state could not be prepared or restored).
    shut_down_ = true;
    status_.state_problem.clear();
    PublishReachability();
    PublishReadiness();
    if (changelog_) {
      Checkpoint(AssignedShards(), /*force=*/false);
    } else {
      Commit(book_.slots(), /*sync=*/true, /*final=*/true);
    }
  }
  const RdKafka::ErrorCode err = consumer_->close();
  const RdKafka::ErrorCode table_err =
      table_consumer_ ? table_consumer_->close() : RdKafka::ERR_NO_ERROR;
  std::lock_guard<std::mutex> lock(*mu_);
  if (err != RdKafka::ERR_NO_ERROR) errors_.Report(err, "close");
  if (table_err != RdKafka::ERR_NO_ERROR) {
    errors_.Report(table_err, "close the table consumer");
  }
  // Delivery reports update the status: under the lock.
  if (dead_letters_ != nullptr) dead_letters_->Flush(kFlushTimeoutMs);
}

void KafkaIngest::Handle(RdKafka::Message* msg, bool from_table) {
  Handle(static_cast<const rd_kafka_message_t*>(msg->c_ptr()), from_table);
}

// Through the C message: the C++ accessors of the topic name and key build
// a std::string per message.
void KafkaIngest::Handle(const rd_kafka_message_t* msg, bool from_table) {
  switch (msg->err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      break;
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return;
    default: {
      // As RdKafka::Message::errstr() reads it.
      const char* detail = rd_kafka_message_errstr(msg);
      errors_.Report(static_cast<RdKafka::ErrorCode>(msg->err), "consume",
                     detail == nullptr ? "" : detail);
      return;
    }
  }
  const Client client = from_table ? kTableClient : kGroupClient;
  if (reachability_[client].all_down) MarkReachable(client);
  const int t = TopicIndex(rd_kafka_topic_name(msg->rkt));
  if (t < 0) return;
  const int32_t slot = SlotOf(t, msg->partition);
  const int64_t offset = msg->offset;
  fetch_progress_.Progress(slot, poll_mono_ms_);
  if (!from_table && book_.AwaitingStart(slot)) SettleStart(slot, offset);
  stream::EventOrigin origin{slot, offset, false};
  if (book_.IsReplay(slot, offset)) {
    origin.replayed = true;
    origin.maybe_counted = !book_.StoppedCleanly(slot);
  }
  std::optional<int64_t> fallback;
  rd_kafka_timestamp_type_t timestamp_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  const int64_t timestamp = rd_kafka_message_timestamp(msg, &timestamp_type);
  if (timestamp_type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) fallback = timestamp;
  // Payload and key go to the pipeline together: a rejected event's dead
  // letter copies both (valid for this call only, like the message).
  const stream::RawEvent event{
      std::string_view(static_cast<const char*>(msg->payload), msg->len),
      msg->key == nullptr
          ? std::string_view()
          : std::string_view(static_cast<const char*>(msg->key), msg->key_len)};
  const stream::Topic topic =
      t == 0 ? stream::Topic::kResults : stream::Topic::kJudgments;
  if (from_table) {
    (void)pipeline_->OnPayload(topic, event, origin, fallback);
    table_positions_[msg->partition] = offset + 1;
    return;
  }
  OffsetTracker& tracker = book_.tracker();
  tracker.Retain(slot, offset);  // Before: the pipeline may release it.
  if (!pipeline_->OnPayload(topic, event, origin, fallback)) {
    tracker.Release(slot, offset);
  }
  const int64_t next = tracker.Consumed(slot, offset);
  // A gap: transaction markers, a compacted topic, or events deleted before
  // they were read (rare: one look at the cached log start per gap).
  if (next >= 0 && offset > next) SettleGap(slot, next, offset);
}

void KafkaIngest::Periodic() {
  const int64_t now = clock_->MonotonicMillis();
  if (now - last_tick_mono_ms_ >= kTickMs) {
    last_tick_mono_ms_ = now;
    MarkCaughtUpSources();
    pipeline_->AdvanceWallClock();
    // A partition whose events were all deleted, with nothing new, sends
    // no message: its log start tells.
    if (book_.AwaitingStart()) {
      for (int32_t slot : book_.slots()) {
        if (book_.AwaitingStart(slot)) SettleStart(slot, -1);
      }
    }
  }
  if (dead_letters_ != nullptr) dead_letters_->Poll();
  if (now - last_stats_mono_ms_ >= kStatsMs) {
    last_stats_mono_ms_ = now;
    UpdatePartitionStats();
  }
  if (changelog_) {
    PollCheckpoint();
    // One round at a time: a round still in flight when the next is due
    // delays it until the broker has answered.
    if (!round_.has_value() && now - last_checkpoint_mono_ms_ >=
                                   config_.kafka.checkpoint_interval.count()) {
      last_checkpoint_mono_ms_ = now;
      (void)StartCheckpoint(AssignedShards(), /*force=*/false);
    }
  } else if (now - last_commit_mono_ms_ >=
             config_.kafka.commit_interval.count()) {
    last_commit_mono_ms_ = now;
    Commit(book_.slots(), /*sync=*/false);
  }
  PublishFetchProgress();
  PublishReplayed();
  LogReadiness(now);
}

int64_t KafkaIngest::CachedLogStart(int32_t slot) {
  int64_t low = -1, high = -1;
  // librdkafka's copy from the last fetch answer: no broker round trip.
  if (consumer_->get_watermark_offsets(TopicName(SlotTopic(slot)),
                                       SlotPartition(slot), &low,
                                       &high) != RdKafka::ERR_NO_ERROR ||
      low < 0) {
    return -1;  // Not known yet (no fetch answered).
  }
  return low;
}

void KafkaIngest::SettleGap(int32_t slot, int64_t next, int64_t offset) {
  const int64_t low = CachedLogStart(slot);
  const int64_t deleted = PartitionBook::DeletedInGap(next, offset, low);
  if (deleted <= 0) return;
  const std::string& topic = TopicName(SlotTopic(slot));
  status_.deleted_unread_events[topic] += deleted;
  // One line per gap: the broker deletes at its retention checks (every 5
  // minutes by default), so a replica that stays behind logs that often.
  spdlog::error(
      "kafka consumer: {} events of {} partition {} were deleted by the "
      "broker before they were read (its retention, or DeleteRecords): this "
      "replica fell behind the partition's log start {} while reading "
      "(offsets {} to {} lost; the client moved on to offset {}). Raise the "
      "topic's retention.ms or add replicas "
      "(rankwatch_events_deleted_unread_total)",
      deleted, topic, SlotPartition(slot), low, next, next + deleted - 1,
      offset);
}

void KafkaIngest::SettleStart(int32_t slot, int64_t first_offset) {
  const std::string& topic = TopicName(SlotTopic(slot));
  const int32_t partition = SlotPartition(slot);
  const int64_t low = CachedLogStart(slot);
  const int64_t deleted = book_.SettleStart(slot, first_offset, low);
  if (deleted <= 0) return;
  status_.deleted_unread_events[topic] += deleted;
  // One line per partition and assignment: the loss is the broker's, but
  // this replica is the one that can tell.
  spdlog::error(
      "kafka consumer: {} events of {} partition {} were deleted by the "
      "broker before they were read (its retention, or DeleteRecords): "
      "reading resumed below the partition's log start {}; what of them "
      "the partition's previous owner had not counted is lost "
      "(rankwatch_events_deleted_unread_total)",
      deleted, topic, partition, low);
}

void KafkaIngest::PublishReplayed() {
  // What the join skipped as replayed, by the topic it came from (results
  // events are skipped on arrival; judgments on arrival or with the
  // request they waited for).
  const stream::JoinCounters& j = pipeline_->join_counters();
  status_.replayed_events[config_.kafka.results_topic] =
      j.replayed - j.replayed_judgments;
  status_.replayed_events[config_.kafka.judgments_topic] = j.replayed_judgments;
}

void KafkaIngest::PublishFetchProgress() {
  const std::optional<FetchProgressTable::Stalest> s =
      fetch_progress_.stalest();
  if (!s.has_value()) {
    status_.stalest_fetch.reset();
  } else {
    status_.stalest_fetch =
        FetchLag{TopicName(SlotTopic(s->slot)), SlotPartition(s->slot),
                 s->progress_mono_ms, s->leader_up};
  }
  PublishReadiness();
}

// Logs readiness changes with the reason, at most one line per
// kReadinessLogMs: a flapping broker does not flood the log, and the state
// in force is logged once the interval has passed.
void KafkaIngest::LogReadiness(int64_t now) {
  const ReadyReason reason = status_.ready_reason(now);
  if (reason == logged_reason_) return;
  if (last_readiness_log_mono_ms_.has_value() &&
      now - *last_readiness_log_mono_ms_ < kReadinessLogMs) {
    return;
  }
  logged_reason_ = reason;
  last_readiness_log_mono_ms_ = now;
  if (reason == ReadyReason::kReady) {
    ever_ready_ = true;
    spdlog::info("kafka consumer: ready");
  } else if (!ever_ready_ && (reason == ReadyReason::kNotConsuming ||
                              reason == ReadyReason::kNotAssigned)) {
    // Every start joins the group first: not a warning (it looked like a
    // failure on every demo start). An unreachable broker still warns.
    spdlog::info("kafka consumer: starting, {}", status_.ReadinessMessage(now));
  } else {
    spdlog::warn("kafka consumer: {}", status_.ReadinessMessage(now));
  }
}

void KafkaIngest::OnClientError(Client client, RdKafka::ErrorCode err,
                                const std::string& text) {
  Reachability& r = reachability_[client];
  if (IsConnectionError(err)) {
    r.cause = ConnectionErrorCause(text);
    // librdkafka reports every broker down once per outage: a later,
    // different cause (DNS fixed, now refused) is published by itself.
    if (r.all_down) PublishReachability();
  }
  if (err != RdKafka::ERR__ALL_BROKERS_DOWN) return;
  r.all_down = true;
  // "1/1 brokers are down" when no connection error came first.
  if (r.cause.empty()) r.cause = text;
  PublishReachability();
}

void KafkaIngest::MarkReachable(Client client) {
  Reachability& r = reachability_[client];
  r.reached = true;
  if (!r.all_down) return;
  r.all_down = false;
  PublishReachability();
}

void KafkaIngest::PublishReachability() {
  status_.brokers_down.reset();
  for (const Reachability& r : reachability_) {
    if (shut_down_ || !r.all_down) continue;
    status_.brokers_down =
        BrokersDown{config_.kafka.bootstrap_servers, r.cause, r.reached};
    break;
  }
  PublishReadiness();
}

// Records which partitions are fetched from a reachable leader, and when
// their fetcher last heard from it: an active fetch from an UP leader that
// answered rx_idle_ms ago is fetch progress at now - rx_idle_ms (fetches
// are long polls, answered even without data); and whether any broker of
// `client` is UP. Runs on the consumer thread and touches only its own
// state, but for the client's reachability (under the lock, served
// outside it).
void KafkaIngest::OnStatistics(Client client, const std::string& json) {
  const int64_t now = clock_->MonotonicMillis();
  const FetchStatistics statistics = ParseFetchStatistics(json);
  if (statistics.brokers_up > 0) {
    const std::unique_lock<std::mutex> lock = CallbackLock();
    MarkReachable(client);
  }
  for (const PartitionFetchHealth& p : statistics.partitions) {
    const int t = TopicIndex(p.topic);
    if (t >= 0) fetch_health_.Record(SlotOf(t, p.partition), p.healthy, now);
  }
  for (const BrokerFetch& f : statistics.brokers) {
    const int t = TopicIndex(f.topic);
    if (t < 0) continue;
    const int32_t slot = SlotOf(t, f.partition);
    fetch_progress_.SetLeaderUp(slot, f.broker_up);
    if (f.broker_up && f.rx_idle_ms >= 0 && fetch_health_.Healthy(slot, now)) {
      fetch_progress_.Progress(slot, now - f.rx_idle_ms);
    }
  }
}

// A partition read up to its end has nothing older to deliver: it must not
// hold event time back (else one quiet partition stalls every window). But
// only if its leader answers: a partition whose broker is down looks
// caught up (its last known end is stale) while its data waits.
void KafkaIngest::MarkCaughtUpSources() {
  const int64_t now = clock_->MonotonicMillis();
  auto caught_up = [](RdKafka::KafkaConsumer* consumer,
                      const std::string& topic, int32_t partition,
                      int64_t position) {
    int64_t low = 0, high = 0;
    if (consumer->get_watermark_offsets(topic, partition, &low, &high) !=
            RdKafka::ERR_NO_ERROR ||
        high < 0) {
      return false;  // Unknown yet: keep holding.
    }
    return std::max(position, low) >= high;
  };
  for (int32_t slot : book_.slots()) {
    pipeline_->SetSourceIdle(
        slot, fetch_health_.Healthy(slot, now) &&
                  caught_up(consumer_.get(), TopicName(SlotTopic(slot)),
                            SlotPartition(slot), book_.Position(slot)));
  }
  for (const auto& [partition, position] : table_positions_) {
    const int32_t slot = SlotOf(1, partition);
    pipeline_->SetSourceIdle(slot, fetch_health_.Healthy(slot, now) &&
                                       caught_up(table_consumer_.get(),
                                                 config_.kafka.judgments_topic,
                                                 partition, position));
  }
}

void KafkaIngest::Commit(const std::vector<int32_t>& slots, bool sync,
                         bool final) {
  const std::vector<PartitionBook::Commit> due = book_.CommitsDue(
      slots,
      [this](int32_t slot) { return pipeline_->commit_watermark_ms(slot); },
      final);
  if (due.empty()) return;
  PartitionList list = MakePartitionList(due.size());
  for (const PartitionBook::Commit& c : due) {
    rd_kafka_topic_partition_t* tp = rd_kafka_topic_partition_list_add(
        list.get(), TopicName(SlotTopic(c.slot)).c_str(),
        SlotPartition(c.slot));
    tp->offset = c.offset;
    SetPartitionMetadata(tp, c.metadata);
  }
  // Asynchronous commits report through CommitHandler; an error here means
  // the request was not even sent.
  const rd_kafka_resp_err_t err =
      rd_kafka_commit(consumer_->c_ptr(), list.get(), sync ? 0 : 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++status_.commits_failed;
    errors_.Log("offset commit failed", rd_kafka_err2str(err));
    return;
  }
  if (!sync) return;
  ++status_.commits_ok;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      errors_.Log("offset commit of a partition failed",
                  rd_kafka_err2str(tp.err));
      continue;
    }
    book_.MarkCommitted(SlotOf(TopicIndex(tp.topic), tp.partition), tp.offset);
  }
}

void KafkaIngest::UpdatePartitionStats() {
  status_.partitions.clear();
  auto add = [&](RdKafka::KafkaConsumer* consumer, const std::string& topic,
                 int32_t partition, int64_t position, int64_t committed) {
    PartitionStatus p;
    p.topic = topic;
    p.partition = partition;
    p.committed_offset = committed;
    int64_t low = 0, high = 0;
    if (consumer->get_watermark_offsets(topic, partition, &low, &high) ==
        RdKafka::ERR_NO_ERROR) {
      p.high_watermark = high;
      // Before the first message the consumer starts at the committed
      // offset, or at the beginning (auto.offset.reset=earliest).
      const int64_t at =
          position >= 0 ? position : (committed >= 0 ? committed : low);
      if (high >= 0) p.lag = std::max<int64_t>(0, high - at);
    }
    status_.partitions.push_back(p);
  };
  for (int32_t slot : book_.slots()) {
    add(consumer_.get(), TopicName(SlotTopic(slot)), SlotPartition(slot),
        book_.tracker().NextOffset(slot), book_.committed(slot));
  }
  for (const auto& [partition, position] : table_positions_) {
    add(table_consumer_.get(), config_.kafka.judgments_topic, partition,
        position, -1);
  }
}

}  // namespace rankwatch::kafka
