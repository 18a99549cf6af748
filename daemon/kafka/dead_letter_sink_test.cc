#include "daemon/kafka/dead_letter_sink.h"

#include <chrono>
#include <map>
#include <string>

#include "daemon/kafka/kafka_test_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

std::map<std::string, std::string> HeadersOf(RdKafka::Message* m) {
  std::map<std::string, std::string> out;
  RdKafka::Headers* headers = m->headers();  // Owned by the message.
  if (headers == nullptr) return out;
  for (const RdKafka::Headers::Header& h : headers->get_all()) {
    out[h.key()] =
        std::string(static_cast<const char*>(h.value()), h.value_size());
  }
  return out;
}

TEST(KafkaDeadLetterSinkTest, ProducesPayloadKeyAndReasonHeaders) {
  std::unique_ptr<sim::MockCluster> cluster =
      testing::StartCluster({{"dead", 1}});
  ASSERT_NE(cluster, nullptr);
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = cluster->bootstrap_servers();
  KafkaStatus status;
  FakeClock clock;
  StatusOr<std::unique_ptr<KafkaDeadLetterSink>> sink =
      KafkaDeadLetterSink::Create(kafka, "dead", &status, &clock);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  (*sink)->set_current_key("request-7");
  // Slot 7 = 2 x partition 3 + topic 1 (judgments).
  (*sink)->Write(stream::Topic::kJudgments,
                 stream::RejectReason::kMalformedJson, "not an object", "[1,2",
                 stream::EventOrigin{7, 42});
  (*sink)->Flush(10'000);
  EXPECT_EQ(status.dead_letters_produced, 1);
  EXPECT_EQ(status.dead_letters_failed, 0);

  std::unique_ptr<RdKafka::Conf> conf = sim::testutil::MakeConf(
      {{"bootstrap.servers", cluster->bootstrap_servers()},
       {"group.id", "reader"}});
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  ASSERT_NE(consumer, nullptr) << error;
  OwnedTopicPartitions parts;
  parts.Add("dead", 0, RdKafka::Topic::OFFSET_BEGINNING);
  ASSERT_EQ(consumer->assign(parts.get()), RdKafka::ERR_NO_ERROR);
  std::unique_ptr<RdKafka::Message> m;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    m.reset(consumer->consume(100));
    if (m->err() == RdKafka::ERR_NO_ERROR) break;
  }
  ASSERT_EQ(m->err(), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(std::string(static_cast<const char*>(m->payload()), m->len()),
            "[1,2");
  ASSERT_NE(m->key(), nullptr);
  EXPECT_EQ(*m->key(), "request-7");
  const std::map<std::string, std::string> headers = HeadersOf(m.get());
  EXPECT_EQ(headers.at("rankwatch-reason"), "malformed_json");
  EXPECT_EQ(headers.at("rankwatch-detail"), "not an object");
  EXPECT_EQ(headers.at("rankwatch-source-topic"), "judgments");
  EXPECT_EQ(headers.at("rankwatch-source-partition"), "3");
  EXPECT_EQ(headers.at("rankwatch-source-offset"), "42");
  consumer->close();
}

TEST(KafkaDeadLetterSinkTest, BadPropertyFailsCreate) {
  config::KafkaConfig kafka;
  kafka.properties = {{"socket.timeout.ms", "never"}};
  KafkaStatus status;
  EXPECT_FALSE(KafkaDeadLetterSink::Create(kafka, "dead", &status).ok());
}

}  // namespace
}  // namespace rankwatch::kafka
