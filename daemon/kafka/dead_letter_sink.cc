#include "daemon/kafka/dead_letter_sink.h"

#include <algorithm>
#include <string>
#include <utility>

#include "daemon/kafka/kafka_conf.h"

namespace rankwatch::kafka {
namespace {

// The first `max` bytes of `s`, not ending inside a UTF-8 sequence (a
// detail quotes ids, which may be any text).
std::string_view Cut(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

class KafkaDeadLetterSink::DeliveryReport : public RdKafka::DeliveryReportCb {
 public:
  explicit DeliveryReport(KafkaDeadLetterSink* sink) : sink_(sink) {}
  // Served from Poll() and Flush(), under the caller's lock.
  void dr_cb(RdKafka::Message& message) override {
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++sink_->status_->dead_letters_produced;
    } else {
      ++sink_->status_->dead_letters_failed;
      sink_->errors_.Log("dead letter not delivered", message.errstr());
    }
  }

 private:
  KafkaDeadLetterSink* sink_;
};

KafkaDeadLetterSink::KafkaDeadLetterSink(std::string topic,
                                         int64_t max_payload_bytes,
                                         IngestState* status,
                                         const Clock* clock)
    : topic_(std::move(topic)),
      max_payload_bytes_(static_cast<size_t>(max_payload_bytes)),
      status_(status),
      errors_(status, clock) {}

StatusOr<std::unique_ptr<KafkaDeadLetterSink>> KafkaDeadLetterSink::Create(
    const config::KafkaConfig& kafka, const std::string& topic,
    int64_t max_event_bytes, IngestState* status, const Clock* clock) {
  // What the producer's message.max.bytes leaves for the payload (all of
  // max_event_bytes unless that is near librdkafka's ceiling).
  const int64_t max_payload = std::clamp<int64_t>(
      DeadLetterMessageMaxBytes(max_event_bytes) - kDeadLetterEnvelopeBytes, 1,
      max_event_bytes);
  std::unique_ptr<KafkaDeadLetterSink> sink(
      new KafkaDeadLetterSink(topic, max_payload, status, clock));
  sink->report_ = std::make_unique<DeliveryReport>(sink.get());
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ProducerConf(kafka, "rankwatch-dead-letters", max_event_bytes);
  if (!conf.ok()) return conf.status();
  RW_RETURN_IF_ERROR(SetCallback(conf->get(), "dr_cb", sink->report_.get()));
  std::string err;
  sink->producer_.reset(RdKafka::Producer::create(conf->get(), err));
  if (!sink->producer_) {
    return Status::InvalidArgument("dead-letter producer: " + err);
  }
  return sink;
}

KafkaDeadLetterSink::~KafkaDeadLetterSink() = default;

void KafkaDeadLetterSink::Write(stream::Topic topic,
                                stream::RejectReason reason,
                                std::string_view detail, stream::RawEvent event,
                                stream::EventOrigin origin) {
  std::unique_ptr<RdKafka::Headers> headers(RdKafka::Headers::create());
  const std::string_view reason_name = stream::RejectReasonName(reason);
  const std::string_view topic_name = stream::TopicName(topic);
  const std::string partition = std::to_string(origin.partition());
  const std::string offset = std::to_string(origin.offset);
  const std::string_view short_detail =
      Cut(detail, static_cast<size_t>(kDeadLetterMaxDetailBytes));
  const std::string_view key =
      Cut(event.key, static_cast<size_t>(kDeadLetterMaxKeyBytes));
  headers->add("rankwatch-reason", reason_name.data(), reason_name.size());
  headers->add("rankwatch-detail", short_detail.data(), short_detail.size());
  headers->add("rankwatch-source-topic", topic_name.data(), topic_name.size());
  headers->add("rankwatch-source-partition", partition);
  headers->add("rankwatch-source-offset", offset);
  std::string_view payload = event.payload;
  if (payload.size() > max_payload_bytes_) {
    // A too_large event: its first max_event_bytes still show what it was,
    // whole it would exceed message.max.bytes and be lost.
    headers->add("rankwatch-truncated-from", std::to_string(payload.size()));
    payload = payload.substr(0, max_payload_bytes_);
  }
  const RdKafka::ErrorCode err = producer_->produce(
      topic_, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
      const_cast<char*>(payload.data()), payload.size(),
      key.empty() ? nullptr : key.data(), key.size(), 0, headers.get(),
      nullptr);
  if (err == RdKafka::ERR_NO_ERROR) {
    (void)headers.release();  // The message owns them now.
    return;
  }
  ++status_->dead_letters_failed;
  errors_.Log("dead letter not produced", RdKafka::err2str(err));
}

void KafkaDeadLetterSink::Poll() { producer_->poll(0); }

void KafkaDeadLetterSink::Flush(int timeout_ms) {
  const RdKafka::ErrorCode err = producer_->flush(timeout_ms);
  if (err != RdKafka::ERR_NO_ERROR) {
    errors_.Log("dead letters not flushed", RdKafka::err2str(err));
  }
}

}  // namespace rankwatch::kafka
