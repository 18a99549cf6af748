#include "daemon/kafka/consumer.h"

#include <librdkafka/rdkafka.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/clock.h"

namespace rankwatch::kafka {

namespace {

constexpr int kBatch = 512;         // Messages handled per lock hold.
constexpr int kPollMs = 100;        // Blocking wait outside the lock.
constexpr int64_t kTickMs = 200;    // Idle-window checks.
constexpr int64_t kStatsMs = 1000;  // Lag and position refresh.
constexpr int kMetadataTimeoutMs = 10'000;
constexpr int64_t kStallMs = 10'000;  // Not "consuming" past this.
// librdkafka statistics, which tell which partitions are actively fetched
// from a reachable leader; older statistics count as unknown.
constexpr char kStatsIntervalMs[] = "1000";
constexpr int64_t kStatsStaleMs = 5000;

int64_t NowMs() { return SystemClock::Get()->NowMillis(); }

// Applies `properties` to `conf`; errors name the property, never its value
// (it may be a secret).
Status SetAll(RdKafka::Conf* conf,
              const std::map<std::string, std::string>& properties) {
  std::string err;
  for (const auto& [name, value] : properties) {
    if (conf->set(name, value, err) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("kafka.properties." + name + ": " + err);
    }
  }
  return Status::Ok();
}

// The consumer's properties: rankwatch's defaults, then the user's, then
// what correctness requires (offsets are committed only by rankwatch).
StatusOr<std::unique_ptr<RdKafka::Conf>> BaseConf(
    const config::KafkaConfig& kafka, const std::string& group_id,
    bool subscribe_range) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::map<std::string, std::string> defaults = {
      {"statistics.interval.ms", kStatsIntervalMs},
      {"bootstrap.servers", kafka.bootstrap_servers},
      {"group.id", group_id},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
      {"client.id", "rankwatch"},
  };
  // Equal partition numbers of the two topics must go to one consumer.
  if (subscribe_range) defaults["partition.assignment.strategy"] = "range";
  RW_RETURN_IF_ERROR(SetAll(conf.get(), defaults));
  RW_RETURN_IF_ERROR(SetAll(conf.get(), kafka.properties));
  auto it = kafka.properties.find("enable.auto.commit");
  if (it != kafka.properties.end() && it->second != "false") {
    spdlog::warn(
        "kafka.properties.enable.auto.commit is ignored: rankwatch commits "
        "only offsets whose events are reflected in its metrics");
  }
  RW_RETURN_IF_ERROR(
      SetAll(conf.get(), {{"enable.auto.commit", "false"},
                          {"enable.auto.offset.store", "false"}}));
  return conf;
}

// Commit metadata: "wm=<watermark ms>;end=<next offset consumed>".
std::string EncodeMetadata(int64_t watermark_ms, int64_t end) {
  std::string s;
  if (watermark_ms != INT64_MIN) s += "wm=" + std::to_string(watermark_ms);
  if (end >= 0) {
    if (!s.empty()) s += ';';
    s += "end=" + std::to_string(end);
  }
  return s;
}

// Splits with std::find rather than string_view::find: with link-time
// optimization GCC 12 misreads the latter's memchr bound (-Wstringop-overread).
void DecodeMetadata(std::string_view s, int64_t* watermark_ms, int64_t* end) {
  while (!s.empty()) {
    const auto semi_it = std::find(s.begin(), s.end(), ';');
    const size_t semi = semi_it == s.end()
                            ? std::string_view::npos
                            : static_cast<size_t>(semi_it - s.begin());
    const std::string_view item = s.substr(0, semi);
    const auto eq_it = std::find(item.begin(), item.end(), '=');
    if (eq_it != item.end()) {
      const size_t eq = static_cast<size_t>(eq_it - item.begin());
      const std::string_view key = item.substr(0, eq);
      const std::string_view value = item.substr(eq + 1);
      int64_t v;
      auto [p, ec] =
          std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec == std::errc() && p == value.data() + value.size()) {
        if (key == "wm") *watermark_ms = v;
        if (key == "end") *end = v;
      }
    }
    if (semi == std::string_view::npos) break;
    s.remove_prefix(semi + 1);
  }
}

}  // namespace

// Takes the pipeline mutex unless this thread already holds it: librdkafka
// runs rebalance and commit callbacks inside consume(), which the loop calls
// both with and without the lock.
class KafkaIngest::MaybeLock {
 public:
  explicit MaybeLock(KafkaIngest* owner) : owner_(owner) {
    if (!owner_->lock_held_ && owner_->mu_ != nullptr) {
      owner_->mu_->lock();
      owner_->lock_held_ = true;
      locked_ = true;
    }
  }
  ~MaybeLock() {
    if (locked_) {
      owner_->lock_held_ = false;
      owner_->mu_->unlock();
    }
  }

 private:
  KafkaIngest* owner_;
  bool locked_ = false;
};

class KafkaIngest::RebalanceHandler : public RdKafka::RebalanceCb {
 public:
  explicit RebalanceHandler(KafkaIngest* owner) : owner_(owner) {}
  void rebalance_cb(
      RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
      std::vector<RdKafka::TopicPartition*>& partitions) override {
    switch (err) {
      case RdKafka::ERR__ASSIGN_PARTITIONS:
        owner_->OnAssign(partitions);
        return;
      case RdKafka::ERR__REVOKE_PARTITIONS:
        owner_->OnRevoke(partitions, consumer->assignment_lost());
        return;
      default:
        break;
    }
    spdlog::error("rebalance failed: {}", RdKafka::err2str(err));
    MaybeLock lock(owner_);
    ++owner_->status_.errors[RdKafka::err2str(err)];
    consumer->unassign();
  }

 private:
  KafkaIngest* owner_;
};

class KafkaIngest::EventHandler : public RdKafka::EventCb {
 public:
  explicit EventHandler(KafkaIngest* owner) : owner_(owner) {}
  void event_cb(RdKafka::Event& event) override {
    if (event.type() == RdKafka::Event::EVENT_STATS) {
      MaybeLock lock(owner_);
      owner_->OnStatistics(event.str());
      return;
    }
    if (event.type() != RdKafka::Event::EVENT_ERROR) return;
    // Transient errors (a broker down) are retried by librdkafka; they are
    // counted and logged, never fatal.
    spdlog::warn("kafka: {}: {}", RdKafka::err2str(event.err()), event.str());
    MaybeLock lock(owner_);
    ++owner_->status_.errors[rd_kafka_err2name(
        static_cast<rd_kafka_resp_err_t>(event.err()))];
  }

 private:
  KafkaIngest* owner_;
};

class KafkaIngest::CommitHandler : public RdKafka::OffsetCommitCb {
 public:
  explicit CommitHandler(KafkaIngest* owner) : owner_(owner) {}
  void offset_commit_cb(
      RdKafka::ErrorCode err,
      std::vector<RdKafka::TopicPartition*>& offsets) override {
    MaybeLock lock(owner_);
    if (err == RdKafka::ERR__NO_OFFSET) return;  // Nothing to commit.
    if (err != RdKafka::ERR_NO_ERROR) {
      ++owner_->status_.commits_failed;
      spdlog::warn("offset commit failed: {}", RdKafka::err2str(err));
      return;
    }
    ++owner_->status_.commits_ok;
    for (const RdKafka::TopicPartition* tp : offsets) {
      const int t = owner_->TopicIndex(tp->topic());
      if (t >= 0 && tp->err() == RdKafka::ERR_NO_ERROR) {
        owner_->committed_[SlotOf(t, tp->partition())] = tp->offset();
      }
    }
  }

 private:
  KafkaIngest* owner_;
};

class KafkaDeadLetterSink::DeliveryReport : public RdKafka::DeliveryReportCb {
 public:
  explicit DeliveryReport(KafkaDeadLetterSink* sink) : sink_(sink) {}
  void dr_cb(RdKafka::Message& message) override {
    // Delivery reports are served from Poll() on the consumer thread, which
    // holds the pipeline mutex then.
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++sink_->stats_->dead_letters_produced;
    } else {
      ++sink_->stats_->dead_letters_failed;
      spdlog::warn("dead letter not delivered: {}", message.errstr());
    }
  }

 private:
  KafkaDeadLetterSink* sink_;
};

StatusOr<std::unique_ptr<KafkaDeadLetterSink>> KafkaDeadLetterSink::Create(
    const config::KafkaConfig& kafka, const std::string& topic,
    KafkaStatus* stats) {
  std::unique_ptr<KafkaDeadLetterSink> sink(new KafkaDeadLetterSink());
  sink->topic_ = topic;
  sink->stats_ = stats;
  sink->report_ = std::make_unique<DeliveryReport>(sink.get());
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  // Consumer-only properties make a producer warn; pass the connection
  // and security ones through and let librdkafka reject the rest.
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", kafka.bootstrap_servers},
      {"client.id", "rankwatch-dead-letters"}};
  for (const auto& [k, v] : kafka.properties) {
    if (k.rfind("security.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("sasl.", 0) == 0 || k == "bootstrap.servers" ||
        k.rfind("socket.", 0) == 0) {
      props[k] = v;
    }
  }
  RW_RETURN_IF_ERROR(SetAll(conf.get(), props));
  std::string err;
  conf->set("dr_cb", sink->report_.get(), err);
  sink->producer_.reset(RdKafka::Producer::create(conf.get(), err));
  if (!sink->producer_) {
    return Status::InvalidArgument("dead-letter producer: " + err);
  }
  return sink;
}

KafkaDeadLetterSink::~KafkaDeadLetterSink() = default;

void KafkaDeadLetterSink::Write(stream::Topic topic,
                                stream::RejectReason reason,
                                std::string_view detail,
                                std::string_view payload,
                                stream::EventOrigin origin) {
  RdKafka::Headers* headers = RdKafka::Headers::create();
  const std::string_view reason_name = stream::RejectReasonName(reason);
  const std::string_view topic_name = stream::TopicName(topic);
  const std::string partition = std::to_string(SlotPartition(origin.partition));
  const std::string offset = std::to_string(origin.offset);
  headers->add("rankwatch-reason", reason_name.data(), reason_name.size());
  headers->add("rankwatch-detail", detail.data(), detail.size());
  headers->add("rankwatch-source-topic", topic_name.data(), topic_name.size());
  headers->add("rankwatch-source-partition", partition);
  headers->add("rankwatch-source-offset", offset);
  const RdKafka::ErrorCode err = producer_->produce(
      topic_, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
      const_cast<char*>(payload.data()), payload.size(),
      current_key_.empty() ? nullptr : current_key_.data(), current_key_.size(),
      0, headers, nullptr);
  if (err != RdKafka::ERR_NO_ERROR) {
    delete headers;  // Owned by the message only on success.
    ++stats_->dead_letters_failed;
  }
}

void KafkaDeadLetterSink::Poll() { producer_->poll(0); }

void KafkaDeadLetterSink::Flush(int timeout_ms) {
  producer_->flush(timeout_ms);
}

KafkaIngest::KafkaIngest(const config::Config& config) : config_(config) {}

KafkaIngest::~KafkaIngest() = default;

StatusOr<std::unique_ptr<KafkaIngest>> KafkaIngest::Create(
    const config::Config& config) {
  std::unique_ptr<KafkaIngest> ingest(new KafkaIngest(config));
  RW_RETURN_IF_ERROR(ingest->Init());
  return ingest;
}

Status KafkaIngest::Init() {
  status_.topics = {config_.kafka.results_topic, config_.kafka.judgments_topic};
  rebalance_handler_ = std::make_unique<RebalanceHandler>(this);
  event_handler_ = std::make_unique<EventHandler>(this);
  commit_handler_ = std::make_unique<CommitHandler>(this);
  const bool qrels = config_.join.mode == config::JoinMode::kQrels;
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      BaseConf(config_.kafka, config_.kafka.group_id, !qrels);
  if (!conf.ok()) return conf.status();
  std::string err;
  (*conf)->set("rebalance_cb", rebalance_handler_.get(), err);
  (*conf)->set("event_cb", event_handler_.get(), err);
  (*conf)->set("offset_commit_cb", commit_handler_.get(), err);
  consumer_.reset(RdKafka::KafkaConsumer::create(conf->get(), err));
  if (!consumer_) return Status::InvalidArgument("kafka consumer: " + err);
  if (qrels) {
    // Group-less in effect: assigned by hand, never committed.
    StatusOr<std::unique_ptr<RdKafka::Conf>> table_conf =
        BaseConf(config_.kafka, config_.kafka.group_id + ".qrels-table", false);
    if (!table_conf.ok()) return table_conf.status();
    (*table_conf)->set("event_cb", event_handler_.get(), err);
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

bool KafkaIngest::ready() const {
  return ready_.load() && NowMs() - last_loop_ms_.load() < kStallMs;
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
  tracker_.Release(origin.partition, origin.offset);
}

// Warns when the two topics cannot be co-partitioned (impression mode), and
// records the partition counts for the metrics.
void KafkaIngest::CheckPartitionCounts() {
  for (int t = 0; t < 2; ++t) {
    std::string err;
    std::unique_ptr<RdKafka::Topic> topic(
        RdKafka::Topic::create(consumer_.get(), TopicName(t), nullptr, err));
    RdKafka::Metadata* md = nullptr;
    if (!topic ||
        consumer_->metadata(false, topic.get(), &md, kMetadataTimeoutMs) !=
            RdKafka::ERR_NO_ERROR) {
      continue;
    }
    std::unique_ptr<RdKafka::Metadata> owned(md);
    for (const RdKafka::TopicMetadata* tm : *md->topics()) {
      if (tm->topic() == TopicName(t)) {
        MaybeLock lock(this);
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
}

Status KafkaIngest::LoadTable(const std::atomic<bool>& stop) {
  const std::string& topic = config_.kafka.judgments_topic;
  const int n = topic_partitions_[1];
  std::vector<RdKafka::TopicPartition*> parts;
  std::map<int32_t, int64_t> targets;
  for (int p = 0; p < n; ++p) {
    parts.push_back(RdKafka::TopicPartition::create(
        topic, p, RdKafka::Topic::OFFSET_BEGINNING));
    int64_t low = 0, high = 0;
    if (table_consumer_->query_watermark_offsets(topic, p, &low, &high,
                                                 kMetadataTimeoutMs) ==
            RdKafka::ERR_NO_ERROR &&
        high > low) {
      targets[p] = high;
    }
  }
  const RdKafka::ErrorCode err = table_consumer_->assign(parts);
  RdKafka::TopicPartition::destroy(parts);
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
    last_loop_ms_ = NowMs();
    std::unique_ptr<RdKafka::Message> msg(table_consumer_->consume(kPollMs));
    MaybeLock lock(this);
    Handle(msg.get(), /*from_table=*/true);
  }
  MaybeLock lock(this);
  table_loaded_ = true;
  spdlog::info("qrels table loaded: {} entries", pipeline_->table_entries());
  return Status::Ok();
}

Status KafkaIngest::Run(const std::atomic<bool>& stop) {
  last_loop_ms_ = NowMs();
  CheckPartitionCounts();
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
  while (!stop.load()) {
    last_loop_ms_ = NowMs();
    std::unique_ptr<RdKafka::Message> first(consumer_->consume(kPollMs));
    MaybeLock lock(this);
    // Before a batch: a partition whose fetched data is queued locally must
    // hold event time back while another partition's batch is handled.
    if (first->err() == RdKafka::ERR_NO_ERROR) MarkCaughtUpSources();
    Handle(first.get(), false);
    for (int i = 0; i < kBatch; ++i) {
      std::unique_ptr<RdKafka::Message> m(consumer_->consume(0));
      if (m->err() == RdKafka::ERR__TIMED_OUT) break;
      Handle(m.get(), false);
    }
    if (table_consumer_) {
      for (int i = 0; i < kBatch; ++i) {
        std::unique_ptr<RdKafka::Message> m(table_consumer_->consume(0));
        if (m->err() == RdKafka::ERR__TIMED_OUT) break;
        Handle(m.get(), true);
      }
    }
    Periodic(NowMs(), false);
  }

  // Shutdown: commit what is safe, leave the group (its revocation
  // callback commits again and drops pending state), flush dead letters.
  ready_ = false;
  {
    MaybeLock lock(this);
    status_.consuming = false;
    Commit(tracker_.slots(), /*sync=*/true);
  }
  consumer_->close();
  if (table_consumer_) table_consumer_->close();
  if (dead_letters_ != nullptr) {
    MaybeLock lock(this);  // Delivery reports update the status.
    dead_letters_->Flush(2000);
  }
  return Status::Ok();
}

void KafkaIngest::Handle(RdKafka::Message* msg, bool from_table) {
  switch (msg->err()) {
    case RdKafka::ERR_NO_ERROR:
      break;
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__PARTITION_EOF:
      return;
    default:
      ++status_.errors[rd_kafka_err2name(
          static_cast<rd_kafka_resp_err_t>(msg->err()))];
      spdlog::warn("consume error: {}", msg->errstr());
      return;
  }
  // Through the C message: the C++ accessors of the topic name and key
  // build a std::string per message.
  const rd_kafka_message_t* c_msg =
      static_cast<const rd_kafka_message_t*>(msg->c_ptr());
  const int t = TopicIndex(rd_kafka_topic_name(c_msg->rkt));
  if (t < 0) return;
  const int32_t slot = SlotOf(t, msg->partition());
  const int64_t offset = msg->offset();
  stream::EventOrigin origin{slot, offset, false};
  if (auto it = replay_end_.find(slot);
      it != replay_end_.end() && offset < it->second) {
    origin.replayed = true;
    ++status_.replayed_events[TopicName(t)];
  }
  std::optional<int64_t> fallback;
  if (msg->timestamp().type !=
      RdKafka::MessageTimestamp::MSG_TIMESTAMP_NOT_AVAILABLE) {
    fallback = msg->timestamp().timestamp;
  }
  if (dead_letters_ != nullptr) {
    dead_letters_->set_current_key(
        c_msg->key == nullptr
            ? std::string_view()
            : std::string_view(static_cast<const char*>(c_msg->key),
                               c_msg->key_len));
  }
  const std::string_view payload(static_cast<const char*>(msg->payload()),
                                 msg->len());
  const stream::Topic topic =
      t == 0 ? stream::Topic::kResults : stream::Topic::kJudgments;
  if (from_table) {
    (void)pipeline_->OnPayload(topic, payload, origin, fallback);
    table_positions_[msg->partition()] = offset + 1;
    return;
  }
  tracker_.Retain(slot, offset);  // Before: the pipeline may release it.
  if (!pipeline_->OnPayload(topic, payload, origin, fallback)) {
    tracker_.Release(slot, offset);
  }
  tracker_.Consumed(slot, offset);
}

void KafkaIngest::Periodic(int64_t now_ms, bool force_commit) {
  if (now_ms - last_tick_ms_ >= kTickMs) {
    last_tick_ms_ = now_ms;
    MarkCaughtUpSources();
    pipeline_->AdvanceWallClock();
  }
  if (dead_letters_ != nullptr) dead_letters_->Poll();
  if (now_ms - last_stats_ms_ >= kStatsMs) {
    last_stats_ms_ = now_ms;
    UpdatePartitionStats();
  }
  if (force_commit ||
      now_ms - last_commit_ms_ >= config_.kafka.commit_interval.count()) {
    last_commit_ms_ = now_ms;
    Commit(tracker_.slots(), /*sync=*/false);
  }
}

// Records which partitions are fetched from a reachable leader, from
// librdkafka's statistics JSON: topics.<t>.partitions.<p>.fetch_state
// ("active") and .leader, and brokers.<b>.nodeid / .state ("UP") for the
// real (non-"logical") brokers.
void KafkaIngest::OnStatistics(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return;
  std::map<int64_t, bool> broker_up;
  simdjson::dom::object brokers;
  if (doc["brokers"].get(brokers) == simdjson::SUCCESS) {
    for (auto [name, b] : brokers) {
      int64_t id;
      std::string_view state, source;
      // "GroupCoordinator" is a logical alias that shares a node id.
      if (b["source"].get(source) == simdjson::SUCCESS && source == "logical") {
        continue;
      }
      if (b["nodeid"].get(id) == simdjson::SUCCESS &&
          b["state"].get(state) == simdjson::SUCCESS) {
        broker_up[id] = state == "UP";
      }
    }
  }
  simdjson::dom::object topics;
  if (doc["topics"].get(topics) != simdjson::SUCCESS) return;
  const int64_t now = NowMs();
  for (auto [topic_name, topic] : topics) {
    const int t = TopicIndex(std::string(topic_name));
    simdjson::dom::object parts;
    if (t < 0 || topic["partitions"].get(parts) != simdjson::SUCCESS) continue;
    for (auto [key, p] : parts) {
      int64_t partition, leader;
      std::string_view fetch_state;
      if (p["partition"].get(partition) != simdjson::SUCCESS || partition < 0 ||
          p["leader"].get(leader) != simdjson::SUCCESS ||
          p["fetch_state"].get(fetch_state) != simdjson::SUCCESS) {
        continue;
      }
      auto up = broker_up.find(leader);
      const bool healthy =
          fetch_state == "active" && up != broker_up.end() && up->second;
      fetch_healthy_[SlotOf(t, static_cast<int32_t>(partition))] = {healthy,
                                                                    now};
    }
  }
}

// A partition read up to its end has nothing older to deliver: it must not
// hold event time back (else one quiet partition stalls every window). But
// only if its leader answers: a partition whose broker is down looks
// caught up (its last known end is stale) while its data waits.
void KafkaIngest::MarkCaughtUpSources() {
  const int64_t now = NowMs();
  auto healthy = [&](int32_t slot) {
    auto it = fetch_healthy_.find(slot);
    return it != fetch_healthy_.end() && it->second.first &&
           now - it->second.second < kStatsStaleMs;
  };
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
  for (int32_t slot : tracker_.slots()) {
    int64_t position = tracker_.NextOffset(slot);
    if (position < 0) {
      auto it = committed_.find(slot);
      position = it == committed_.end() ? 0 : it->second;
    }
    pipeline_->SetSourceIdle(
        slot,
        healthy(slot) && caught_up(consumer_.get(), TopicName(SlotTopic(slot)),
                                   SlotPartition(slot), position));
  }
  for (const auto& [partition, position] : table_positions_) {
    pipeline_->SetSourceIdle(
        SlotOf(1, partition),
        healthy(SlotOf(1, partition)) &&
            caught_up(table_consumer_.get(), config_.kafka.judgments_topic,
                      partition, position));
  }
}

void KafkaIngest::Commit(const std::vector<int32_t>& slots, bool sync) {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(slots.size()));
  for (int32_t slot : slots) {
    const std::optional<int64_t> safe = tracker_.SafeOffset(slot);
    if (!safe) continue;
    auto it = committed_.find(slot);
    if (it != committed_.end() && it->second == *safe) continue;
    rd_kafka_topic_partition_t* tp = rd_kafka_topic_partition_list_add(
        list, TopicName(SlotTopic(slot)).c_str(), SlotPartition(slot));
    tp->offset = *safe;
    const std::string md = EncodeMetadata(pipeline_->commit_watermark_ms(),
                                          tracker_.NextOffset(slot));
    tp->metadata = std::malloc(md.size());  // Freed with the list.
    std::memcpy(tp->metadata, md.data(), md.size());
    tp->metadata_size = md.size();
  }
  if (list->cnt > 0) {
    const rd_kafka_resp_err_t err =
        rd_kafka_commit(consumer_->c_ptr(), list, sync ? 0 : 1);
    if (sync) {
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++status_.commits_ok;
        for (int i = 0; i < list->cnt; ++i) {
          const int t = TopicIndex(list->elems[i].topic);
          committed_[SlotOf(t, list->elems[i].partition)] =
              list->elems[i].offset;
        }
      } else {
        ++status_.commits_failed;
        spdlog::warn("offset commit failed: {}", rd_kafka_err2str(err));
      }
    }
  }
  rd_kafka_topic_partition_list_destroy(list);
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
  for (int32_t slot : tracker_.slots()) {
    auto it = committed_.find(slot);
    add(consumer_.get(), TopicName(SlotTopic(slot)), SlotPartition(slot),
        tracker_.NextOffset(slot), it == committed_.end() ? -1 : it->second);
  }
  for (const auto& [partition, position] : table_positions_) {
    add(table_consumer_.get(), config_.kafka.judgments_topic, partition,
        position, -1);
  }
  status_.assigned = assigned_;
  status_.consuming = true;
  ready_ = assigned_ && (!table_consumer_ || table_loaded_);
}

void KafkaIngest::OnAssign(
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  // What the previous owners committed: where to resume, how far their
  // watermark was, and how far they had read (to recognize replays).
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (const RdKafka::TopicPartition* tp : partitions) {
    rd_kafka_topic_partition_list_add(list, tp->topic().c_str(),
                                      tp->partition());
  }
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer_->c_ptr(), list, kMetadataTimeoutMs);
  int64_t watermark = INT64_MIN;
  {
    MaybeLock lock(this);
    ++status_.rebalances;
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& tp = list->elems[i];
      const int t = TopicIndex(tp.topic);
      if (t < 0) continue;
      const int32_t slot = SlotOf(t, tp.partition);
      tracker_.Assign(slot);
      // It holds event time back until it delivers or has caught up.
      pipeline_->AddSource(slot);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR || tp.offset < 0) continue;
      committed_[slot] = tp.offset;
      int64_t wm = INT64_MIN, end = -1;
      DecodeMetadata(std::string_view(static_cast<const char*>(tp.metadata),
                                      tp.metadata_size),
                     &wm, &end);
      watermark = std::max(watermark, wm);
      if (end > tp.offset) replay_end_[slot] = end;
    }
    if (watermark != INT64_MIN) (void)pipeline_->RestoreWatermark(watermark);
  }
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    spdlog::warn("cannot fetch committed offsets: {}", rd_kafka_err2str(err));
  }
  if (consumer_->rebalance_protocol() == "COOPERATIVE") {
    RdKafka::Error* e = consumer_->incremental_assign(partitions);
    delete e;
  } else {
    consumer_->assign(partitions);
  }
  assigned_ = !partitions.empty() || assigned_;
  spdlog::info("assigned {} partitions", partitions.size());
}

void KafkaIngest::OnRevoke(
    const std::vector<RdKafka::TopicPartition*>& partitions, bool lost) {
  std::vector<int32_t> slots;
  for (const RdKafka::TopicPartition* tp : partitions) {
    const int t = TopicIndex(tp->topic());
    if (t >= 0) slots.push_back(SlotOf(t, tp->partition()));
  }
  {
    MaybeLock lock(this);
    ++status_.rebalances;
    if (!lost) Commit(slots, /*sync=*/true);
    // The new owner re-reads these events from the committed offsets.
    pipeline_->DropPartitions(slots);
    for (int32_t slot : slots) {
      tracker_.Revoke(slot);
      replay_end_.erase(slot);
      committed_.erase(slot);
    }
  }
  if (consumer_->rebalance_protocol() == "COOPERATIVE") {
    RdKafka::Error* e = consumer_->incremental_unassign(partitions);
    delete e;
    assigned_ = !tracker_.slots().empty();
  } else {
    consumer_->unassign();
    assigned_ = false;
  }
  ready_ = false;
  spdlog::info("revoked {} partitions{}", partitions.size(),
               lost ? " (lost)" : "");
}

}  // namespace rankwatch::kafka
