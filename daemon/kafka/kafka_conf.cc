#include "daemon/kafka/kafka_conf.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include "daemon/kafka/error_reporter.h"

namespace rankwatch::kafka {

namespace {

// librdkafka's own log lines, which it writes raw to stderr by default
// ("%3|1796639256.292|FAIL|rankwatch#consumer-3| ..."), go through the
// daemon's logger instead: a JSON log (logging.format json) must hold
// JSON lines only. At debug: the errors among them reach the log once
// already, as error events (ErrorReporter, rate-limited). Called on
// librdkafka's threads; spdlog is thread-safe.
void LogThroughSpdlog(const rd_kafka_t* /*rk*/, int /*level*/,
                      const char* facility, const char* text) {
  spdlog::debug("kafka: librdkafka {}: {}", facility,
                WithoutProtocolGuess(text));
}

void RouteLogs(RdKafka::Conf* conf) {
  rd_kafka_conf_set_log_cb(conf->c_ptr_global(), &LogThroughSpdlog);
}

}  // namespace

Status SetAll(RdKafka::Conf* conf,
              const std::map<std::string, std::string>& properties,
              std::string* refused) {
  std::string err;
  for (const auto& [name, value] : properties) {
    if (conf->set(name, value, err) != RdKafka::Conf::CONF_OK) {
      if (refused != nullptr) *refused = name;
      return Status::InvalidArgument("kafka.properties." + name + ": " + err);
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<RdKafka::Conf>> ConsumerConf(
    const config::KafkaConfig& kafka, const std::string& group_id,
    bool range_assignor, std::string* refused) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  RouteLogs(conf.get());
  std::map<std::string, std::string> defaults = {
      {"statistics.interval.ms", kStatisticsIntervalMs},
      {"bootstrap.servers", kafka.bootstrap_servers},
      {"group.id", group_id},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
      {"client.id", "rankwatch"},
  };
  if (range_assignor) defaults["partition.assignment.strategy"] = "range";
  // Static membership is the group's: the changelog reader and the qrels
  // table consumer (groups of their own, assigned by hand) stay dynamic.
  if (group_id == kafka.group_id && !kafka.group_instance_id.empty()) {
    defaults["group.instance.id"] = kafka.group_instance_id;
  }
  RW_RETURN_IF_ERROR(SetAll(conf.get(), defaults, refused));
  RW_RETURN_IF_ERROR(SetAll(conf.get(), kafka.properties, refused));
  auto it = kafka.properties.find("enable.auto.commit");
  if (it != kafka.properties.end() && it->second != "false") {
    spdlog::warn(
        "kafka.properties.enable.auto.commit is ignored: rankwatch commits "
        "only offsets whose events are reflected in its metrics");
  }
  RW_RETURN_IF_ERROR(SetAll(
      conf.get(),
      {{"enable.auto.commit", "false"}, {"enable.auto.offset.store", "false"}},
      refused));
  return conf;
}

int64_t DeadLetterMessageMaxBytes(int64_t max_event_bytes) {
  if (max_event_bytes > kMaxMessageMaxBytes - kDeadLetterEnvelopeBytes) {
    return kMaxMessageMaxBytes;
  }
  return max_event_bytes + kDeadLetterEnvelopeBytes;
}

StatusOr<std::unique_ptr<RdKafka::Conf>> ProducerConf(
    const config::KafkaConfig& kafka, const std::string& client_id,
    int64_t max_event_bytes, std::string* refused) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  RouteLogs(conf.get());
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", kafka.bootstrap_servers}, {"client.id", client_id}};
  for (const auto& [k, v] : kafka.properties) {
    if (k.rfind("security.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("sasl.", 0) == 0 || k == "bootstrap.servers" ||
        k.rfind("socket.", 0) == 0) {
      props[k] = v;
    }
  }
  // After the user's properties (which cannot name it: only connection
  // ones pass): the bound follows events.max_event_bytes.
  props["message.max.bytes"] =
      std::to_string(DeadLetterMessageMaxBytes(max_event_bytes));
  RW_RETURN_IF_ERROR(SetAll(conf.get(), props, refused));
  return conf;
}

Status CheckClientConfs(const config::Config& config, std::string* refused) {
  // The arguments of KafkaIngest::Init() and KafkaDeadLetterSink::Create();
  // group and client names are free text to librdkafka.
  const bool qrels = config.join.mode == config::JoinMode::kQrels;
  StatusOr<std::unique_ptr<RdKafka::Conf>> consumer =
      ConsumerConf(config.kafka, config.kafka.group_id, !qrels, refused);
  if (!consumer.ok()) return consumer.status();
  if (!config.dead_letter.topic.empty()) {
    StatusOr<std::unique_ptr<RdKafka::Conf>> producer =
        ProducerConf(config.kafka, "rankwatch-dead-letters",
                     config.events.max_event_bytes, refused);
    if (!producer.ok()) return producer.status();
  }
  return Status::Ok();
}

}  // namespace rankwatch::kafka
