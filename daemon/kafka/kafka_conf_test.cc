#include "daemon/kafka/kafka_conf.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

std::string Get(RdKafka::Conf* conf, const std::string& name) {
  std::string value;
  EXPECT_EQ(conf->get(name, value), RdKafka::Conf::CONF_OK) << name;
  return value;
}

config::KafkaConfig Kafka() {
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = "127.0.0.1:9092";
  return kafka;
}

TEST(KafkaConfTest, UnknownPropertyNamesItButNotItsValue) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  const Status s = SetAll(conf.get(), {{"no.such.property", "s3cret"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("kafka.properties.no.such.property"),
            std::string::npos);
  EXPECT_EQ(s.ToString().find("s3cret"), std::string::npos);
}

TEST(KafkaConfTest, ConsumerForcesManualCommits) {
  config::KafkaConfig kafka = Kafka();
  kafka.properties = {{"enable.auto.commit", "true"},
                      {"session.timeout.ms", "6000"}};
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ConsumerConf(kafka, "g", /*range_assignor=*/true);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "enable.auto.commit"), "false");
  EXPECT_EQ(Get(conf->get(), "enable.auto.offset.store"), "false");
  EXPECT_EQ(Get(conf->get(), "session.timeout.ms"), "6000");
  EXPECT_EQ(Get(conf->get(), "group.id"), "g");
  // librdkafka reports "earliest" by its alias "smallest".
  EXPECT_EQ(Get(conf->get(), "auto.offset.reset"), "smallest");
  EXPECT_EQ(Get(conf->get(), "statistics.interval.ms"), "1000");
  EXPECT_EQ(Get(conf->get(), "partition.assignment.strategy"), "range");
}

TEST(KafkaConfTest, UserPropertiesOverrideDefaults) {
  config::KafkaConfig kafka = Kafka();
  kafka.properties = {{"auto.offset.reset", "latest"}};
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ConsumerConf(kafka, "g", /*range_assignor=*/false);
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(Get(conf->get(), "auto.offset.reset"), "largest");  // "latest".
}

TEST(KafkaConfTest, BadUserPropertyFailsConsumerConf) {
  config::KafkaConfig kafka = Kafka();
  kafka.properties = {{"session.timeout.ms", "soon"}};
  EXPECT_FALSE(ConsumerConf(kafka, "g", false).ok());
}

TEST(KafkaConfTest, ProducerTakesOnlyConnectionProperties) {
  config::KafkaConfig kafka = Kafka();
  kafka.properties = {{"security.protocol", "plaintext"},
                      {"socket.timeout.ms", "1234"},
                      {"session.timeout.ms", "6000"}};  // Consumer-only.
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ProducerConf(kafka, "dl", 1 << 20);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "socket.timeout.ms"), "1234");
  EXPECT_EQ(Get(conf->get(), "client.id"), "dl");
  EXPECT_EQ(Get(conf->get(), "session.timeout.ms"), "45000");  // Default.
  // 1048576 + 65536 = 1114112: above librdkafka's default of 1000000.
  EXPECT_EQ(Get(conf->get(), "message.max.bytes"), "1114112");
}

// A dead letter is its payload plus 64 KiB (65536) for key and headers, up
// to librdkafka's ceiling of 1000000000.
TEST(KafkaConfTest, DeadLetterMessageBoundFollowsTheEventBound) {
  EXPECT_EQ(DeadLetterMessageMaxBytes(1), 65537);
  EXPECT_EQ(DeadLetterMessageMaxBytes(2'000'000), 2'065'536);
  // 1000000000 - 65536 = 999934464: exactly the ceiling.
  EXPECT_EQ(DeadLetterMessageMaxBytes(999'934'464), 1'000'000'000);
  EXPECT_EQ(DeadLetterMessageMaxBytes(999'934'465), 1'000'000'000);
  EXPECT_EQ(DeadLetterMessageMaxBytes(int64_t{1} << 62), 1'000'000'000);
  // librdkafka takes the ceiling itself.
  config::KafkaConfig kafka = Kafka();
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ProducerConf(kafka, "dl", int64_t{1} << 62);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "message.max.bytes"), "1000000000");
}

TEST(KafkaConfTest, CallbackIsChecked) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  class Events : public RdKafka::EventCb {
    void event_cb(RdKafka::Event&) override {}
  } events;
  EXPECT_TRUE(SetCallback(conf.get(), "event_cb", &events).ok());
  // A topic-level conf takes no event callback.
  std::unique_ptr<RdKafka::Conf> topic_conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_TOPIC));
  EXPECT_FALSE(SetCallback(topic_conf.get(), "event_cb", &events).ok());
}

TEST(KafkaConfTest, CheckClientConfsNamesTheRefusedProperty) {
  config::Config c;
  c.kafka = Kafka();
  std::string refused;
  EXPECT_TRUE(CheckClientConfs(c, &refused).ok());
  EXPECT_EQ(refused, "");

  c.kafka.properties = {{"securty.protocol", "SSL"}};
  Status s = CheckClientConfs(c, &refused);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused, "securty.protocol");
  EXPECT_NE(s.message().find("kafka.properties.securty.protocol"),
            std::string::npos)
      << s.message();

  // A bad value of a known property.
  c.kafka.properties = {{"security.protocol", "carrier-pigeon"}};
  refused.clear();
  EXPECT_FALSE(CheckClientConfs(c, &refused).ok());
  EXPECT_EQ(refused, "security.protocol");
}

}  // namespace
}  // namespace rankwatch::kafka
