// KafkaDeadLetterSink: sends rejected events to a Kafka topic: the original
// payload and key, with the reason in headers (rankwatch-reason,
// rankwatch-detail, rankwatch-source-topic, rankwatch-source-partition,
// rankwatch-source-offset). rankwatch-source-partition is the Kafka
// partition the event was read from (decoded from EventOrigin::source).
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

#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/kafka/error_reporter.h"
#include "daemon/kafka/kafka_status.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::kafka {

class KafkaDeadLetterSink : public stream::DeadLetterSink {
 public:
  // Connects with the connection and security properties of `kafka`.
  static StatusOr<std::unique_ptr<KafkaDeadLetterSink>> Create(
      const config::KafkaConfig& kafka, const std::string& topic,
      KafkaStatus* status, const Clock* clock = SystemClock::Get());
  ~KafkaDeadLetterSink() override;

  // The key of the message being processed, copied into its dead letter.
  void set_current_key(std::string_view key) { current_key_ = key; }
  void Write(stream::Topic topic, stream::RejectReason reason,
             std::string_view detail, std::string_view payload,
             stream::EventOrigin origin) override;
  // Serves delivery reports.
  void Poll();
  // Waits up to `timeout_ms` for the outstanding dead letters.
  void Flush(int timeout_ms);

 private:
  class DeliveryReport;
  KafkaDeadLetterSink(std::string topic, KafkaStatus* status,
                      const Clock* clock);

  std::string topic_;
  KafkaStatus* status_;
  ErrorReporter errors_;
  std::unique_ptr<DeliveryReport> report_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::string_view current_key_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_DEAD_LETTER_SINK_H_
