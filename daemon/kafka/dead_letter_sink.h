// KafkaDeadLetterSink: sends rejected events to a Kafka topic: the original
// payload and key (both passed with the event, stream::RawEvent), with the
// reason in headers (rankwatch-reason, rankwatch-detail,
// rankwatch-source-topic, rankwatch-source-partition,
// rankwatch-source-offset). rankwatch-source-partition is the Kafka
// partition the event was read from (decoded from EventOrigin::source).
//
// Sized so that every dead letter can be produced: the producer's
// message.max.bytes is events.max_event_bytes plus an envelope for key and
// headers (kafka_conf.h), and what could exceed it is cut: the payload of a
// too_large event to events.max_event_bytes (with a rankwatch-truncated-from
// header giving its size), the detail and the key to bounds well inside the
// envelope. The broker's max.message.bytes of the topic must allow as much.
//
// Ownership: owns its producer. `status` (delivery counters) and `clock`
// must outlive it.
//
// Thread-safety: none of its own. Write() runs inside the pipeline, and
// Poll() and Flush() serve delivery reports that update the status: the
// consumer thread calls all three holding the mutex that guards the status.
#ifndef RANKWATCH_DAEMON_KAFKA_DEAD_LETTER_SINK_H_
#define RANKWATCH_DAEMON_KAFKA_DEAD_LETTER_SINK_H_

#include <librdkafka/rdkafkacpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/kafka/error_reporter.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::kafka {

class KafkaDeadLetterSink : public stream::DeadLetterSink {
 public:
  // Connects with the connection and security properties of `kafka`.
  // `max_event_bytes` is events.max_event_bytes: the largest payload that
  // is dead-lettered whole.
  static StatusOr<std::unique_ptr<KafkaDeadLetterSink>> Create(
      const config::KafkaConfig& kafka, const std::string& topic,
      int64_t max_event_bytes, IngestState* status,
      const Clock* clock = SystemClock::Get());
  ~KafkaDeadLetterSink() override;

  // Produces the dead letter of one rejected event: its payload, with its
  // own key (event.key, the Kafka message's; no key when empty).
  void Write(stream::Topic topic, stream::RejectReason reason,
             std::string_view detail, stream::RawEvent event,
             stream::EventOrigin origin) override;
  // Serves delivery reports.
  void Poll();
  // Waits up to `timeout_ms` for the outstanding dead letters.
  void Flush(int timeout_ms);

 private:
  class DeliveryReport;
  KafkaDeadLetterSink(std::string topic, int64_t max_payload_bytes,
                      IngestState* status, const Clock* clock);

  std::string topic_;
  // Payloads beyond this are cut to it (only too_large ones can be).
  size_t max_payload_bytes_;
  IngestState* status_;
  ErrorReporter errors_;
  std::unique_ptr<DeliveryReport> report_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_DEAD_LETTER_SINK_H_
