#include "daemon/kafka/dead_letter_sink.h"

#include <string>
#include <utility>

#include "daemon/kafka/kafka_conf.h"

namespace rankwatch::kafka {

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

KafkaDeadLetterSink::KafkaDeadLetterSink(std::string topic, KafkaStatus* status,
                                         const Clock* clock)
    : topic_(std::move(topic)), status_(status), errors_(status, clock) {}

StatusOr<std::unique_ptr<KafkaDeadLetterSink>> KafkaDeadLetterSink::Create(
    const config::KafkaConfig& kafka, const std::string& topic,
    KafkaStatus* status, const Clock* clock) {
  std::unique_ptr<KafkaDeadLetterSink> sink(
      new KafkaDeadLetterSink(topic, status, clock));
  sink->report_ = std::make_unique<DeliveryReport>(sink.get());
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ProducerConf(kafka, "rankwatch-dead-letters");
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
                                std::string_view detail,
                                std::string_view payload,
                                stream::EventOrigin origin) {
  std::unique_ptr<RdKafka::Headers> headers(RdKafka::Headers::create());
  const std::string_view reason_name = stream::RejectReasonName(reason);
  const std::string_view topic_name = stream::TopicName(topic);
  const std::string partition = std::to_string(origin.partition());
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
      0, headers.get(), nullptr);
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
