#include "daemon/kafka/kafka_conf.h"

#include <spdlog/spdlog.h>

namespace rankwatch::kafka {

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

StatusOr<std::unique_ptr<RdKafka::Conf>> ConsumerConf(
    const config::KafkaConfig& kafka, const std::string& group_id,
    bool range_assignor) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::map<std::string, std::string> defaults = {
      {"statistics.interval.ms", kStatisticsIntervalMs},
      {"bootstrap.servers", kafka.bootstrap_servers},
      {"group.id", group_id},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
      {"client.id", "rankwatch"},
  };
  if (range_assignor) defaults["partition.assignment.strategy"] = "range";
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

StatusOr<std::unique_ptr<RdKafka::Conf>> ProducerConf(
    const config::KafkaConfig& kafka, const std::string& client_id) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", kafka.bootstrap_servers}, {"client.id", client_id}};
  for (const auto& [k, v] : kafka.properties) {
    if (k.rfind("security.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("sasl.", 0) == 0 || k == "bootstrap.servers" ||
        k.rfind("socket.", 0) == 0) {
      props[k] = v;
    }
  }
  RW_RETURN_IF_ERROR(SetAll(conf.get(), props));
  return conf;
}

}  // namespace rankwatch::kafka
