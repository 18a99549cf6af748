#include "daemon/kafka/changelog.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "base/byte_codec.h"
#include "base/string_index.h"
#include "daemon/kafka/checkpoint_chain.h"
#include "daemon/kafka/kafka_conf.h"

namespace rankwatch::kafka {

namespace {

constexpr uint32_t kRecordMagic = 0x4c435752;  // "RWCL"
constexpr uint32_t kRecordVersion = 1;
constexpr uint32_t kDeltaMagic = 0x44435752;  // "RWCD"
constexpr uint32_t kDeltaVersion = 1;
constexpr int kDescribeTimeoutMs = 1500;
// A metadata request of Prepare(): short, so that an unreachable cluster
// makes an attempt fail fast and the caller's retry loop hears a stop (the
// topic's creation keeps Prepare's longer timeout).
constexpr int kMetadataProbeMs = 1000;

// What the topic is created with besides its partitions (docs/operations.md,
// "Durable state", "The topic"). Compaction cleans rolled segments only,
// and a broker's defaults roll a segment at 1 GiB or after 7 days: at
// 240 KB/s of checkpoints that is several GiB on disk before the first
// cleaning, for a state of a few MB. Rolling every minute lets the cleaner
// keep the topic near the state's size (the active segment holds a minute
// of checkpoints). A segment must hold the largest record
// (max.message.bytes), so segment.bytes is twice it. The cleaner starts at
// the broker's usual dirty ratio, set here so that a broker tuned for
// other topics does not change it.
struct TopicSetting {
  const char* name;
  const char* value;
};
const TopicSetting kTopicSettings[] = {
    {"cleanup.policy", "compact"},        {"max.message.bytes", "67108864"},
    {"segment.bytes", "134217728"},       {"segment.ms", "60000"},
    {"min.cleanable.dirty.ratio", "0.5"},
};
static_assert(kMaxCheckpointBytes == 67108864);
// A segment.ms above this on an existing topic is reported: its disk grows
// that long before compaction can clean anything.
constexpr int64_t kMaxAdvisedSegmentMs = 60 * 60 * 1000;

// Pause between attempts at a transient error.
constexpr int64_t kRetryMs = 200;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// An admin request's event, waited for on its own queue.
struct AdminCall {
  explicit AdminCall(rd_kafka_t* rk) : queue(rd_kafka_queue_new(rk)) {}
  ~AdminCall() {
    if (event != nullptr) rd_kafka_event_destroy(event);
    rd_kafka_queue_destroy(queue);
  }
  rd_kafka_event_t* Wait(int timeout_ms) {
    event = rd_kafka_queue_poll(queue, timeout_ms);
    return event;
  }
  rd_kafka_queue_t* queue;
  rd_kafka_event_t* event = nullptr;
};

// What to do when the broker refuses `action` on the changelog topic: one
// line an operator can act on.
std::string NotAuthorized(const std::string& topic, const char* action) {
  return std::string("not authorized to ") + action + " changelog topic '" +
         topic + "': grant this client's principal CREATE, DESCRIBE, " +
         "DESCRIBE_CONFIGS, READ and WRITE on topic '" + topic +
         "' (or create it yourself: cleanup.policy=compact, segment.ms=60000, "
         "max.message.bytes=67108864, the input topics' partition count), or "
         "set kafka.durable_state: false to run without durable state "
         "(figures restart with each process; docs/operations.md, \"Durable "
         "state\")";
}

rd_kafka_AdminOptions_t* Options(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                                 int timeout_ms) {
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, op);
  char errstr[256];
  (void)rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, errstr,
                                                  sizeof(errstr));
  return options;
}

// The checksum of a delta: its state's hash and its header's, so that a
// delta moved to another place of another chain does not pass either.
uint64_t DeltaChecksum(const DeltaRecord& record) {
  return HashBytes(record.state) ^
         HashBytes(DeltaKey(record.partition, record.base_offset, record.seq) +
                   "/" + std::to_string(record.offsets[0]) + "/" +
                   std::to_string(record.offsets[1]));
}

}  // namespace

void EncodeCheckpointRecord(const CheckpointRecord& record, std::string* out) {
  ByteWriter w(out);
  w.Fixed32(kRecordMagic);
  w.Fixed32(kRecordVersion);
  w.Varint(static_cast<uint64_t>(record.partition));
  w.I64(record.offsets[0]);
  w.I64(record.offsets[1]);
  out->append(record.state);
}

StatusOr<CheckpointRecord> DecodeCheckpointRecord(std::string_view bytes) {
  ByteReader r(bytes);
  if (r.Fixed32() != kRecordMagic) {
    return Status::InvalidArgument("not a rankwatch checkpoint record");
  }
  const uint32_t version = r.Fixed32();
  if (r.ok() && version != kRecordVersion) {
    return Status::InvalidArgument(
        "checkpoint record version " + std::to_string(version) +
        ", this rankwatch reads version " + std::to_string(kRecordVersion));
  }
  CheckpointRecord record;
  record.partition = static_cast<int32_t>(r.Varint());
  record.offsets[0] = r.I64();
  record.offsets[1] = r.I64();
  if (!r.ok()) return r.status();
  record.state = bytes.substr(bytes.size() - r.remaining());
  return record;
}

void EncodeDeltaRecord(const DeltaRecord& record, std::string* out) {
  ByteWriter w(out);
  w.Fixed32(kDeltaMagic);
  w.Fixed32(kDeltaVersion);
  w.Varint(static_cast<uint64_t>(record.partition));
  w.I64(record.offsets[0]);
  w.I64(record.offsets[1]);
  w.I64(record.base_offset);
  w.Varint(record.seq);
  w.Fixed64(DeltaChecksum(record));
  out->append(record.state);
}

StatusOr<DeltaRecord> DecodeDeltaRecord(std::string_view bytes) {
  ByteReader r(bytes);
  if (r.Fixed32() != kDeltaMagic) {
    return Status::InvalidArgument("not a rankwatch checkpoint delta record");
  }
  const uint32_t version = r.Fixed32();
  if (r.ok() && version != kDeltaVersion) {
    return Status::InvalidArgument(
        "checkpoint delta version " + std::to_string(version) +
        ", this rankwatch reads version " + std::to_string(kDeltaVersion));
  }
  DeltaRecord record;
  const uint64_t partition = r.Varint();
  if (partition > INT32_MAX) r.Fail("a partition out of range");
  record.partition = static_cast<int32_t>(partition);
  record.offsets[0] = r.I64();
  record.offsets[1] = r.I64();
  record.base_offset = r.I64();
  const uint64_t seq = r.Varint();
  if (seq == 0 || seq > UINT32_MAX) r.Fail("a sequence number out of range");
  record.seq = static_cast<uint32_t>(seq);
  const uint64_t checksum = r.Fixed64();
  if (!r.ok()) return r.status();
  record.state = bytes.substr(bytes.size() - r.remaining());
  if (checksum != DeltaChecksum(record)) {
    return Status::InvalidArgument(
        "checksum mismatch: the delta is corrupt or truncated");
  }
  return record;
}

std::string BaseKey(int32_t partition) { return std::to_string(partition); }

std::string DeltaKey(int32_t partition, int64_t base_offset, uint32_t seq) {
  return std::to_string(partition) + "." + std::to_string(base_offset) + "." +
         std::to_string(seq);
}

// Delivery reports of a round (Send): each message's opaque is the round's
// generation (high 32 bits) and its index, so that a late report of an
// earlier round that failed early is not taken for this round's.
class Changelog::Deliveries : public RdKafka::DeliveryReportCb {
 public:
  struct Report {
    bool done = false;
    RdKafka::ErrorCode err = RdKafka::ERR_NO_ERROR;
    int32_t partition = -1;
    int64_t offset = -1;
  };
  void dr_cb(RdKafka::Message& message) override {
    const uint64_t opaque = reinterpret_cast<uintptr_t>(message.msg_opaque());
    const size_t i = static_cast<size_t>(opaque & 0xffffffffu);
    if ((opaque >> 32) != generation || i >= reports.size()) return;
    reports[i] = {true, message.err(), message.partition(), message.offset()};
  }
  void* Opaque(size_t i) const {
    return reinterpret_cast<void*>(
        static_cast<uintptr_t>((uint64_t{generation} << 32) | i));
  }
  std::vector<Report> reports;
  uint32_t generation = 0;
};

Changelog::Changelog(std::string topic) : topic_(std::move(topic)) {}

Changelog::~Changelog() {
  if (reader_) reader_->close();
}

StatusOr<std::unique_ptr<Changelog>> Changelog::Create(
    const config::KafkaConfig& kafka) {
  std::unique_ptr<Changelog> c(new Changelog(kafka.changelog()));
  c->kafka_ = std::make_unique<config::KafkaConfig>(kafka);
  c->deliveries_ = std::make_unique<Deliveries>();
  StatusOr<std::unique_ptr<RdKafka::Conf>> pconf =
      ProducerConf(kafka, "rankwatch-changelog", kMaxCheckpointBytes);
  if (!pconf.ok()) return pconf.status();
  // Idempotent (no duplicates or reordering on retries), compressed (a
  // checkpoint repeats doc ids and labels).
  // No automatic creation: a broker's default topic would have the delete
  // policy (Prepare creates the topic compacted instead).
  // A round in flight fails after kCheckpointTimeoutMs (a broker down)
  // rather than librdkafka's 5 minutes: the next interval tries again.
  RW_RETURN_IF_ERROR(
      SetAll(pconf->get(),
             {{"enable.idempotence", "true"},
              {"compression.type", "lz4"},
              {"linger.ms", "0"},
              {"message.timeout.ms", std::to_string(kCheckpointTimeoutMs)},
              {"allow.auto.create.topics", "false"}}));
  RW_RETURN_IF_ERROR(SetCallback(pconf->get(), "dr_cb", c->deliveries_.get()));
  std::string err;
  c->producer_.reset(RdKafka::Producer::create(pconf->get(), err));
  if (!c->producer_) {
    return Status::InvalidArgument("changelog producer: " + err);
  }
  StatusOr<std::unique_ptr<RdKafka::Conf>> rconf =
      ConsumerConf(kafka, kafka.group_id + ".changelog-reader", false);
  if (!rconf.ok()) return rconf.status();
  RW_RETURN_IF_ERROR(SetAll(rconf->get(), {{"enable.partition.eof", "true"},
                                           {"fetch.max.bytes", "134217728"}}));
  c->reader_.reset(RdKafka::KafkaConsumer::create(rconf->get(), err));
  if (!c->reader_) return Status::InvalidArgument("changelog reader: " + err);
  return c;
}

StatusOr<int32_t> Changelog::PartitionCount(int timeout_ms) {
  std::string err;
  std::unique_ptr<RdKafka::Topic> topic(
      RdKafka::Topic::create(producer_.get(), topic_, nullptr, err));
  if (!topic) return Status::Internal("changelog topic handle: " + err);
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode code =
      producer_->metadata(false, topic.get(), &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> md(raw);
  if (code != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("metadata of changelog topic '" + topic_ +
                               "': " + RdKafka::err2str(code));
  }
  for (const RdKafka::TopicMetadata* t : *md->topics()) {
    if (t->topic() != topic_) continue;
    if (t->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) return 0;
    if (t->err() != RdKafka::ERR_NO_ERROR) {
      return Status::Unavailable("changelog topic '" + topic_ +
                                 "': " + RdKafka::err2str(t->err()));
    }
    return static_cast<int32_t>(t->partitions()->size());
  }
  return 0;
}

Status Changelog::CreateTopic(int32_t partitions, int timeout_ms) {
  rd_kafka_t* rk = producer_->c_ptr();
  char errstr[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(
      topic_.c_str(), partitions, -1, errstr, sizeof(errstr));
  if (topic == nullptr) return Status::InvalidArgument(errstr);
  for (const TopicSetting& setting : kTopicSettings) {
    (void)rd_kafka_NewTopic_set_config(topic, setting.name, setting.value);
  }
  AdminCall call(rk);
  rd_kafka_AdminOptions_t* options =
      Options(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout_ms);
  rd_kafka_CreateTopics(rk, &topic, 1, options, call.queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(topic);
  rd_kafka_event_t* event = call.Wait(timeout_ms + 1000);
  if (event == nullptr) return Status::Unavailable("CreateTopics timed out");
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(rd_kafka_event_error_string(event));
  }
  size_t n = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(
      rd_kafka_event_CreateTopics_result(event), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
        err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
      return Status::InvalidArgument(NotAuthorized(topic_, "create"));
    }
    if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      // Created meanwhile (or not yet in this client's metadata): its
      // settings are someone else's, and checked.
      return Status::AlreadyExists(topic_);
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(
          rd_kafka_topic_result_error_string(results[i]));
    }
  }
  spdlog::info(
      "created changelog topic '{}' ({} partitions, compacted, segments "
      "rolled every minute)",
      topic_, partitions);
  return Status::Ok();
}

Status Changelog::AutoCreate(int timeout_ms) {
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ProducerConf(*kafka_, "rankwatch-changelog-create", 0);
  if (!conf.ok()) return conf.status();
  RW_RETURN_IF_ERROR(
      SetAll(conf->get(), {{"allow.auto.create.topics", "true"}}));
  std::string err;
  std::unique_ptr<RdKafka::Producer> producer(
      RdKafka::Producer::create(conf->get(), err));
  if (!producer) return Status::Internal(err);
  std::unique_ptr<RdKafka::Topic> topic(
      RdKafka::Topic::create(producer.get(), topic_, nullptr, err));
  if (!topic) return Status::Internal(err);
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode code =
      producer->metadata(false, topic.get(), &raw, timeout_ms);
  delete raw;
  return code == RdKafka::ERR_NO_ERROR
             ? Status::Ok()
             : Status::Unavailable(RdKafka::err2str(code));
}

Status Changelog::CheckCleanupPolicy(int timeout_ms) {
  rd_kafka_t* rk = producer_->c_ptr();
  rd_kafka_ConfigResource_t* resource =
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic_.c_str());
  AdminCall call(rk);
  rd_kafka_AdminOptions_t* options =
      Options(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeout_ms);
  rd_kafka_DescribeConfigs(rk, &resource, 1, options, call.queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_ConfigResource_destroy(resource);
  rd_kafka_event_t* event = call.Wait(timeout_ms + 1000);
  if (event != nullptr &&
      (rd_kafka_event_error(event) ==
           RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
       rd_kafka_event_error(event) ==
           RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)) {
    return Status::InvalidArgument(NotAuthorized(topic_, "describe"));
  }
  if (event == nullptr ||
      rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // The mock cluster has no DescribeConfigs: nothing to check.
    spdlog::debug(
        "changelog topic '{}': cleanup policy not checked ({})", topic_,
        event == nullptr ? "timed out" : rd_kafka_event_error_string(event));
    return Status::Ok();
  }
  size_t n = 0;
  const rd_kafka_ConfigResource_t** resources =
      rd_kafka_DescribeConfigs_result_resources(
          rd_kafka_event_DescribeConfigs_result(event), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_ConfigResource_error(resources[i]);
    if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
        err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
      return Status::InvalidArgument(NotAuthorized(topic_, "describe"));
    }
    size_t m = 0;
    const rd_kafka_ConfigEntry_t** entries =
        rd_kafka_ConfigResource_configs(resources[i], &m);
    for (size_t j = 0; j < m; ++j) {
      const std::string_view name = rd_kafka_ConfigEntry_name(entries[j]);
      const char* raw = rd_kafka_ConfigEntry_value(entries[j]);
      const std::string_view value = raw == nullptr ? "" : raw;
      if (name == "cleanup.policy" &&
          value.find("compact") == std::string_view::npos) {
        return Status::InvalidArgument(
            "changelog topic '" + topic_ +
            "' has cleanup.policy=" + std::string(value) +
            ": checkpoints would expire with retention and the state with "
            "them; set cleanup.policy=compact (kafka-configs --alter "
            "--entity-type topics --entity-name " +
            topic_ +
            " --add-config cleanup.policy=compact), or set "
            "kafka.durable_state: false to run without durable state");
      }
      if (name == "segment.ms") WarnOnSlowSegments(value);
    }
  }
  return Status::Ok();
}

void Changelog::WarnOnSlowSegments(std::string_view segment_ms) const {
  int64_t ms = 0;
  const auto [end, ec] = std::from_chars(
      segment_ms.data(), segment_ms.data() + segment_ms.size(), ms);
  if (ec != std::errc() || ms <= kMaxAdvisedSegmentMs) return;
  spdlog::warn(
      "changelog topic '{}' has segment.ms={}: compaction cleans rolled "
      "segments only, so the topic keeps every checkpoint that long (many "
      "times the state's size) before the first cleaning; set "
      "segment.ms=60000 as rankwatch does when it creates the topic",
      topic_, segment_ms);
}

Status Changelog::Prepare(int32_t partitions, int timeout_ms) {
  const int probe_ms = std::min(timeout_ms, kMetadataProbeMs);
  StatusOr<int32_t> count = PartitionCount(probe_ms);
  if (!count.ok()) return count.status();
  bool created_here = false;
  if (*count == 0) {
    const Status created = CreateTopic(std::max(1, partitions), timeout_ms);
    created_here = created.ok();
    if (!created.ok() && created.code() != StatusCode::kAlreadyExists) {
      // The mock cluster has no CreateTopics; it creates topics when a
      // client's metadata request allows it.
      spdlog::info(
          "changelog topic '{}' not created ({}); trying automatic "
          "topic creation",
          topic_, created.message());
      (void)AutoCreate(timeout_ms);
    }
    // A topic just created takes a moment to appear in metadata.
    for (int attempt = 0; attempt < 10 && count.ok() && *count == 0;
         ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kRetryMs));
      }
      count = PartitionCount(probe_ms);
    }
    if (!count.ok()) return count.status();
    if (*count == 0) {
      return Status::Unavailable(
          "changelog topic '" + topic_ +
          "' does not exist and could not be created: create it with "
          "cleanup.policy=compact, segment.ms=60000, "
          "max.message.bytes=67108864 and " +
          std::to_string(partitions) +
          " partitions, grant this client CREATE on it, or set "
          "kafka.durable_state: false to run without durable state");
    }
  }
  partitions_ = *count;
  if (partitions_ != partitions) {
    // Correct either way (partition p's records go to p modulo the count),
    // but not what the documentation promises for a topic rankwatch
    // creates: say why.
    spdlog::warn(
        "changelog topic '{}' has {} partitions, the input topics {}: it was "
        "created by hand or by the cluster's automatic topic creation; input "
        "partition p's checkpoints go to changelog partition p mod {}",
        topic_, partitions_, partitions, partitions_);
  }
  // Created compacted here: nothing to check (a broker may still describe
  // its default policy for a moment after the creation). A broker answers
  // DescribeConfigs at once; one without it (the mock cluster) lets the
  // request time out: a short bound.
  if (created_here) return Status::Ok();
  return CheckCleanupPolicy(std::min(timeout_ms, kDescribeTimeoutMs));
}

Status Changelog::Write(
    const std::vector<std::pair<int32_t, std::string>>& records, int timeout_ms,
    std::vector<Written>* written) {
  RW_RETURN_IF_ERROR(Send(records));
  return Await(timeout_ms, written);
}

Status Changelog::Await(int timeout_ms, std::vector<Written>* written) {
  (void)producer_->flush(timeout_ms);
  std::optional<Status> result = Collect(written);
  if (!result.has_value()) {
    return Status::Unavailable("checkpoint write timed out");
  }
  return *result;
}

Status Changelog::Send(
    const std::vector<std::pair<int32_t, std::string>>& records) {
  std::vector<Outgoing> keyed;
  keyed.reserve(records.size());
  for (const auto& [partition, bytes] : records) {
    keyed.push_back({partition, BaseKey(partition), bytes});
  }
  return Send(keyed);
}

Status Changelog::Send(const std::vector<Outgoing>& records) {
  deliveries_->reports.assign(records.size(), Deliveries::Report{});
  ++deliveries_->generation;
  sent_partitions_.clear();
  for (size_t i = 0; i < records.size(); ++i) {
    const Outgoing& r = records[i];
    sent_partitions_.push_back(r.partition);
    const RdKafka::ErrorCode err = producer_->produce(
        topic_, PartitionOf(r.partition), RdKafka::Producer::RK_MSG_COPY,
        r.value ? const_cast<char*>(r.value->data()) : nullptr,
        r.value ? r.value->size() : 0, r.key.data(), r.key.size(), 0,
        deliveries_->Opaque(i));
    if (err != RdKafka::ERR_NO_ERROR) {
      // The round has failed: the next one's generation ignores the
      // reports of the records already produced.
      return Status::Unavailable("checkpoint of partition " +
                                 std::to_string(r.partition) + ": " +
                                 RdKafka::err2str(err));
    }
  }
  return Status::Ok();
}

std::optional<Status> Changelog::Collect(std::vector<Written>* written) {
  (void)producer_->poll(0);
  const std::vector<Deliveries::Report>& reports = deliveries_->reports;
  for (const Deliveries::Report& r : reports) {
    if (!r.done) return std::nullopt;
  }
  written->assign(reports.size(), Written{});
  for (size_t i = 0; i < reports.size(); ++i) {
    const Deliveries::Report& r = reports[i];
    if (r.err != RdKafka::ERR_NO_ERROR) {
      return Status::Unavailable("checkpoint of partition " +
                                 std::to_string(sent_partitions_[i]) + ": " +
                                 RdKafka::err2str(r.err));
    }
    (*written)[i] = {r.partition, r.offset};
  }
  return Status::Ok();
}

StatusOr<std::optional<std::string>> Changelog::ReadLatest(int32_t partition,
                                                           int64_t from,
                                                           int timeout_ms) {
  const std::string key = BaseKey(partition);
  std::optional<std::string> latest;
  RW_RETURN_IF_ERROR(
      Scan(partition, from, timeout_ms,
           [&](std::string_view k, int64_t, const std::string_view* value) {
             if (k == key && value != nullptr) {
               latest.emplace(*value);
             }
           }));
  return latest;
}

StatusOr<std::vector<Changelog::Stored>> Changelog::ReadChain(int32_t partition,
                                                              int64_t from,
                                                              int timeout_ms) {
  std::vector<Stored> chain;
  RW_RETURN_IF_ERROR(Scan(
      partition, from, timeout_ms,
      [&](std::string_view k, int64_t offset, const std::string_view* value) {
        FoldChainRecord(partition, k, offset, value, &chain);
      }));
  return chain;
}

Status Changelog::Scan(int32_t partition, int64_t from, int timeout_ms,
                       const Visitor& f) {
  const int32_t cp = PartitionOf(partition);
  int64_t low = 0, high = 0;
  const int64_t offsets_deadline = NowMs() + timeout_ms;
  for (;;) {
    const RdKafka::ErrorCode werr = reader_->query_watermark_offsets(
        topic_, cp, &low, &high,
        static_cast<int>(std::max<int64_t>(1, offsets_deadline - NowMs())));
    if (werr == RdKafka::ERR_NO_ERROR) break;
    // A topic just (re)created has no leader for a moment, and a broker
    // that moves leadership answers "not leader": retried until the
    // deadline, not taken for a missing checkpoint.
    const bool transient = werr == RdKafka::ERR_NOT_LEADER_FOR_PARTITION ||
                           werr == RdKafka::ERR_LEADER_NOT_AVAILABLE ||
                           werr == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART ||
                           werr == RdKafka::ERR__UNKNOWN_PARTITION ||
                           werr == RdKafka::ERR__TRANSPORT;
    if (!transient || NowMs() + kRetryMs >= offsets_deadline) {
      return Status::Unavailable("offsets of changelog '" + topic_ + "' [" +
                                 std::to_string(cp) +
                                 "]: " + RdKafka::err2str(werr));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kRetryMs));
  }
  if (high <= low || from >= high) return Status::Ok();
  const int64_t start = std::max(from, low);
  std::unique_ptr<RdKafka::TopicPartition> tp(
      RdKafka::TopicPartition::create(topic_, cp, start));
  std::vector<RdKafka::TopicPartition*> list = {tp.get()};
  if (reader_->assign(list) != RdKafka::ERR_NO_ERROR) {
    return Status::Internal("cannot assign the changelog reader");
  }
  const int64_t deadline = NowMs() + timeout_ms;
  Status status;
  for (;;) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) {
      status = Status::Unavailable("reading changelog '" + topic_ + "' [" +
                                   std::to_string(cp) + "] timed out");
      break;
    }
    std::unique_ptr<RdKafka::Message> m(
        reader_->consume(static_cast<int>(std::min<int64_t>(left, 500))));
    if (m->err() == RdKafka::ERR__TIMED_OUT) continue;
    if (m->err() == RdKafka::ERR__PARTITION_EOF) break;
    if (m->err() != RdKafka::ERR_NO_ERROR) {
      status = Status::Unavailable("reading changelog '" + topic_ +
                                   "': " + m->errstr());
      break;
    }
    const std::string* k = m->key();
    if (k != nullptr) {
      const std::string_view value(static_cast<const char*>(m->payload()),
                                   m->len());
      f(*k, m->offset(), m->payload() == nullptr ? nullptr : &value);
    }
    if (m->offset() >= high - 1) break;
  }
  (void)reader_->unassign();
  return status;
}

}  // namespace rankwatch::kafka
