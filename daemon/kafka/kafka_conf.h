// librdkafka configuration of rankwatch's clients: its defaults, the
// user's kafka.properties, and what correctness requires, applied with
// every conf->set checked. Errors name the property, never its value (it
// may be a secret).
//
// Pure functions over RdKafka::Conf objects; thread-safe.
#ifndef RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_
#define RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::kafka {

// librdkafka's statistics interval: fetch health comes from them.
inline constexpr char kStatisticsIntervalMs[] = "1000";

// Applies `properties` to `conf`. When librdkafka refuses one, the error
// names it, and so does `*refused` when not null (check-config points at
// its key in the file).
[[nodiscard]] Status SetAll(
    RdKafka::Conf* conf, const std::map<std::string, std::string>& properties,
    std::string* refused = nullptr);

// Registers a callback object (RebalanceCb, EventCb, OffsetCommitCb,
// DeliveryReportCb...) as `name`; the object must outlive the client.
template <typename Callback>
[[nodiscard]] Status SetCallback(RdKafka::Conf* conf, const std::string& name,
                                 Callback* callback) {
  std::string err;
  if (conf->set(name, callback, err) != RdKafka::Conf::CONF_OK) {
    return Status::Internal("kafka " + name + ": " + err);
  }
  return Status::Ok();
}

// A consumer's properties: rankwatch's defaults, then the user's, then
// auto commit and offset store off (rankwatch commits only offsets whose
// events its metrics reflect). `range_assignor` keeps equal partition
// numbers of the two topics together (impression mode).
// `*refused` as in SetAll().
StatusOr<std::unique_ptr<RdKafka::Conf>> ConsumerConf(
    const config::KafkaConfig& kafka, const std::string& group_id,
    bool range_assignor, std::string* refused = nullptr);

// What a dead letter may add to its event's payload: its key, its headers
// (the detail at most kDeadLetterMaxDetailBytes) and the record's framing.
inline constexpr int64_t kDeadLetterEnvelopeBytes = 64 * 1024;
inline constexpr int64_t kDeadLetterMaxDetailBytes = 4 * 1024;
inline constexpr int64_t kDeadLetterMaxKeyBytes = 32 * 1024;
// librdkafka's ceiling for message.max.bytes.
inline constexpr int64_t kMaxMessageMaxBytes = 1'000'000'000;

// The dead-letter producer's message.max.bytes, so that the dead letter of
// any event of up to `max_event_bytes` (events.max_event_bytes) can be
// produced: librdkafka's default, 1000000, refuses a larger message before
// it leaves the client. Capped at librdkafka's ceiling.
int64_t DeadLetterMessageMaxBytes(int64_t max_event_bytes);

// The dead-letter producer's properties: the bootstrap servers, the
// connection and security ones of kafka.properties (consumer-only
// properties would make a producer warn), and message.max.bytes from
// `max_event_bytes` (DeadLetterMessageMaxBytes).
StatusOr<std::unique_ptr<RdKafka::Conf>> ProducerConf(
    const config::KafkaConfig& kafka, const std::string& client_id,
    int64_t max_event_bytes, std::string* refused = nullptr);

// Builds, and drops, the client configurations `rankwatch run` builds from
// `config`: the consumer's (range assignor in impression mode) and, with
// dead_letter.topic, the dead-letter producer's. What librdkafka refuses
// there (a misspelt property, a bad value, a feature it was built
// without) is found without connecting to anything; `*refused` as in
// SetAll().
[[nodiscard]] Status CheckClientConfs(const config::Config& config,
                                      std::string* refused = nullptr);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_
