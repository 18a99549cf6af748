// Test helpers for talking to a (mock) Kafka cluster: produce a few
// messages, read a topic back whole. Header-only; for tests only (they
// fail the current gtest test on errors).
#ifndef RANKWATCH_DAEMON_SIM_KAFKA_TEST_UTIL_H_
#define RANKWATCH_DAEMON_SIM_KAFKA_TEST_UTIL_H_

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::sim::testutil {

struct ConsumedMessage {
  std::string key;
  std::string value;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
};

inline std::unique_ptr<RdKafka::Conf> MakeConf(
    const std::map<std::string, std::string>& properties) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [name, value] : properties) {
    EXPECT_EQ(conf->set(name, value, error), RdKafka::Conf::CONF_OK)
        << name << ": " << error;
  }
  return conf;
}

// Counts delivery reports (served by poll/flush on the caller's thread).
class CountingDeliveryReport : public RdKafka::DeliveryReportCb {
 public:
  void dr_cb(RdKafka::Message& message) override {
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++delivered;
    } else {
      ++failed;
      last_error = message.errstr();
    }
  }
  int64_t delivered = 0;
  int64_t failed = 0;
  std::string last_error;
};

// A producer with acks=all and `report` as delivery report callback.
inline std::unique_ptr<RdKafka::Producer> MakeProducer(
    const std::string& bootstrap, CountingDeliveryReport* report,
    std::map<std::string, std::string> properties = {}) {
  properties.emplace("bootstrap.servers", bootstrap);
  properties.emplace("linger.ms", "5");
  std::unique_ptr<RdKafka::Conf> conf = MakeConf(properties);
  std::string error;
  EXPECT_EQ(conf->set("dr_cb", report, error), RdKafka::Conf::CONF_OK);
  std::unique_ptr<RdKafka::Producer> producer(
      RdKafka::Producer::create(conf.get(), error));
  EXPECT_NE(producer, nullptr) << error;
  return producer;
}

// Produces `value` with `key`, waiting out a full queue.
inline void ProduceOne(RdKafka::Producer* producer, const std::string& topic,
                       const std::string& key, const std::string& value) {
  while (true) {
    const RdKafka::ErrorCode err = producer->produce(
        topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(value.data()), value.size(), key.data(), key.size(),
        0, nullptr);
    if (err != RdKafka::ERR__QUEUE_FULL) {
      ASSERT_EQ(err, RdKafka::ERR_NO_ERROR) << RdKafka::err2str(err);
      return;
    }
    producer->poll(10);
  }
}

// Reads partitions 0..partitions-1 of `topic` from the beginning, without a
// consumer group (no join delay), until `expected` messages arrived (and
// then `settle` longer, to catch any surplus) or `timeout` passed.
inline std::vector<ConsumedMessage> ConsumeAll(
    const std::string& bootstrap, const std::string& topic, int partitions,
    size_t expected, std::chrono::milliseconds timeout,
    std::chrono::milliseconds settle = std::chrono::milliseconds(300)) {
  std::unique_ptr<RdKafka::Conf> conf =
      MakeConf({{"bootstrap.servers", bootstrap},
                {"group.id", "rankwatch-test-reader"},
                {"enable.auto.commit", "false"},
                {"enable.partition.eof", "false"}});
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  std::vector<ConsumedMessage> out;
  if (consumer == nullptr) {
    ADD_FAILURE() << error;
    return out;
  }
  std::vector<RdKafka::TopicPartition*> assignment;
  for (int p = 0; p < partitions; ++p) {
    assignment.push_back(RdKafka::TopicPartition::create(
        topic, p, RdKafka::Topic::OFFSET_BEGINNING));
  }
  EXPECT_EQ(consumer->assign(assignment), RdKafka::ERR_NO_ERROR);
  RdKafka::TopicPartition::destroy(assignment);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool settling = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!settling && out.size() >= expected) {
      settling = true;
      deadline = std::chrono::steady_clock::now() + settle;
    }
    std::unique_ptr<RdKafka::Message> m(consumer->consume(50));
    if (m->err() != RdKafka::ERR_NO_ERROR) continue;
    ConsumedMessage c;
    if (m->key() != nullptr) c.key = *m->key();
    c.value.assign(static_cast<const char*>(m->payload()), m->len());
    c.partition = m->partition();
    c.offset = m->offset();
    c.timestamp_ms = m->timestamp().timestamp;
    out.push_back(std::move(c));
  }
  consumer->close();
  return out;
}

}  // namespace rankwatch::sim::testutil

#endif  // RANKWATCH_DAEMON_SIM_KAFKA_TEST_UTIL_H_
