// librdkafka configuration of rankwatch's clients: its defaults, the
// user's kafka.properties, and what correctness requires, applied with
// every conf->set checked. Errors name the property, never its value (it
// may be a secret).
//
// Pure functions over RdKafka::Conf objects; thread-safe.
#ifndef RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_
#define RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::kafka {

// librdkafka's statistics interval: fetch health comes from them.
inline constexpr char kStatisticsIntervalMs[] = "1000";

// Applies `properties` to `conf`.
[[nodiscard]] Status SetAll(
    RdKafka::Conf* conf, const std::map<std::string, std::string>& properties);

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
StatusOr<std::unique_ptr<RdKafka::Conf>> ConsumerConf(
    const config::KafkaConfig& kafka, const std::string& group_id,
    bool range_assignor);

// The dead-letter producer's properties: the bootstrap servers and the
// connection and security ones of kafka.properties (consumer-only
// properties would make a producer warn).
StatusOr<std::unique_ptr<RdKafka::Conf>> ProducerConf(
    const config::KafkaConfig& kafka, const std::string& client_id);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_KAFKA_CONF_H_
