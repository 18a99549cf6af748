#include "daemon/kafka/dead_letter_sink.h"

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// A dead letter as read back from the topic.
struct Letter {
  std::string payload;
  bool has_key = false;  // False: the message has no key at all.
  std::string key;
  std::map<std::string, std::string> headers;
};

// The first `count` messages of `topic` partition 0, in order; fewer after
// 20 s without them.
std::vector<Letter> ReadLetters(const std::string& bootstrap,
                                const std::string& topic, size_t count) {
  std::unique_ptr<RdKafka::Conf> conf = sim::testutil::MakeConf(
      {{"bootstrap.servers", bootstrap}, {"group.id", "reader"}});
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  std::vector<Letter> letters;
  if (consumer == nullptr) {
    ADD_FAILURE() << error;
    return letters;
  }
  OwnedTopicPartitions parts;
  parts.Add(topic, 0, RdKafka::Topic::OFFSET_BEGINNING);
  EXPECT_EQ(consumer->assign(parts.get()), RdKafka::ERR_NO_ERROR);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (letters.size() < count &&
         std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(100));
    if (m->err() != RdKafka::ERR_NO_ERROR) continue;
    Letter& letter = letters.emplace_back();
    letter.payload.assign(static_cast<const char*>(m->payload()), m->len());
    letter.has_key = m->key() != nullptr;
    if (letter.has_key) letter.key = *m->key();
    letter.headers = HeadersOf(m.get());
  }
  consumer->close();
  return letters;
}

// The first message of `topic` partition 0; empty after 20 s without one.
Letter ReadFirst(const std::string& bootstrap, const std::string& topic) {
  std::vector<Letter> letters = ReadLetters(bootstrap, topic, 1);
  return letters.empty() ? Letter() : std::move(letters[0]);
}

// A sink on the one-partition topic "dead" of a fresh mock cluster, with
// its status and clock; null (with a failure) when it cannot start.
struct SinkOnCluster {
  std::unique_ptr<sim::MockCluster> cluster;
  IngestState status;
  FakeClock clock;
  std::unique_ptr<KafkaDeadLetterSink> sink;
};

std::unique_ptr<SinkOnCluster> StartSink(int64_t max_event_bytes) {
  auto s = std::make_unique<SinkOnCluster>();
  s->cluster = testing::StartCluster({{"dead", 1}});
  if (s->cluster == nullptr) return nullptr;
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = s->cluster->bootstrap_servers();
  StatusOr<std::unique_ptr<KafkaDeadLetterSink>> sink =
      KafkaDeadLetterSink::Create(kafka, "dead", max_event_bytes, &s->status,
                                  &s->clock);
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  if (!sink.ok()) return nullptr;
  s->sink = std::move(sink).value();
  return s;
}

TEST(KafkaDeadLetterSinkTest, ProducesPayloadKeyAndReasonHeaders) {
  const std::unique_ptr<SinkOnCluster> s = StartSink(1 << 20);
  ASSERT_NE(s, nullptr);
  // Slot 7 = 2 x partition 3 + topic 1 (judgments).
  s->sink->Write(stream::Topic::kJudgments,
                 stream::RejectReason::kMalformedJson, "not an object",
                 stream::RawEvent{"[1,2", "request-7"},
                 stream::EventOrigin{7, 42});
  s->sink->Flush(10'000);
  EXPECT_EQ(s->status.dead_letters_produced, 1);
  EXPECT_EQ(s->status.dead_letters_failed, 0);

  std::unique_ptr<RdKafka::Conf> conf = sim::testutil::MakeConf(
      {{"bootstrap.servers", s->cluster->bootstrap_servers()},
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
  IngestState status;
  EXPECT_FALSE(
      KafkaDeadLetterSink::Create(kafka, "dead", 1 << 20, &status).ok());
}

// librdkafka's default message.max.bytes (1000000) refused such a dead
// letter before it left the client ("Message size too large", counted as
// failed); with events.max_event_bytes raised to 4 MiB the producer's bound
// is 4194304 + 65536 = 4259840 bytes. The librdkafka 2.0 mock broker checks
// no message size of its own (unlike a real broker's max.message.bytes).
TEST(KafkaDeadLetterSinkTest, TwoMegabyteEventIsDeadLettered) {
  const std::unique_ptr<SinkOnCluster> s = StartSink(4 << 20);
  ASSERT_NE(s, nullptr);
  // 2000000 bytes: {"request_id":" (15 bytes), 1999974 bytes of id and
  // ","x":true} (11 bytes); 15 + 1999974 + 11 = 2000000.
  const std::string payload =
      R"({"request_id":")" + std::string(1'999'974, 'r') + R"(","x":true})";
  ASSERT_EQ(payload.size(), 2'000'000u);
  s->sink->Write(stream::Topic::kResults, stream::RejectReason::kMissingField,
                 "missing field 'timestamp'", stream::RawEvent{payload, "k"},
                 stream::EventOrigin{0, 5});
  s->sink->Flush(20'000);
  EXPECT_EQ(s->status.dead_letters_produced, 1);
  EXPECT_EQ(s->status.dead_letters_failed, 0);
  Letter letter = ReadFirst(s->cluster->bootstrap_servers(), "dead");
  EXPECT_EQ(letter.payload.size(), 2'000'000u);
  EXPECT_TRUE(letter.payload == payload);  // Not printed: 2 MB.
  EXPECT_EQ(letter.key, "k");
  EXPECT_EQ(letter.headers.count("rankwatch-truncated-from"), 0u);
  EXPECT_EQ(letter.headers["rankwatch-reason"], "missing_field");
  EXPECT_EQ(letter.headers["rankwatch-detail"], "missing field 'timestamp'");
}

// A too_large event may be of any size: its payload is cut to
// events.max_event_bytes (1 MiB = 1048576 bytes here) so that it fits the
// producer's 1114112 bytes, and says how large it was. An overlong detail
// is cut to 4096 bytes, not inside a UTF-8 sequence; a key to 32768 bytes.
TEST(KafkaDeadLetterSinkTest, OversizedPartsAreCutToFit) {
  const std::unique_ptr<SinkOnCluster> s = StartSink(1 << 20);
  ASSERT_NE(s, nullptr);
  std::string payload(3'000'000, 'p');
  payload[1'048'575] = 'L';  // The last byte kept.
  // "x" then 3000 two-byte "\xc3\xa9" (e-acute): 6001 bytes. Byte 4096 is
  // the second of a pair (pairs start at odd offsets), so the cut backs off
  // to 4095 bytes: "x" and 2047 pairs.
  std::string detail = "x";
  for (int i = 0; i < 3000; ++i) detail += "\xc3\xa9";
  std::string kept_detail = "x";
  for (int i = 0; i < 2047; ++i) kept_detail += "\xc3\xa9";
  const std::string key(40'000, 'k');
  s->sink->Write(stream::Topic::kJudgments, stream::RejectReason::kTooLarge,
                 detail, stream::RawEvent{payload, key},
                 stream::EventOrigin{1, 9});
  s->sink->Flush(20'000);
  EXPECT_EQ(s->status.dead_letters_produced, 1);
  EXPECT_EQ(s->status.dead_letters_failed, 0);
  Letter letter = ReadFirst(s->cluster->bootstrap_servers(), "dead");
  ASSERT_EQ(letter.payload.size(), 1'048'576u);
  EXPECT_TRUE(letter.payload == payload.substr(0, 1'048'576));
  EXPECT_EQ(letter.payload.back(), 'L');
  EXPECT_EQ(letter.headers["rankwatch-truncated-from"], "3000000");
  EXPECT_EQ(letter.headers["rankwatch-reason"], "too_large");
  EXPECT_EQ(letter.headers["rankwatch-detail"].size(), 4095u);
  EXPECT_EQ(letter.headers["rankwatch-detail"], kept_detail);
  EXPECT_EQ(letter.key, std::string(32'768, 'k'));
}

// Each dead letter carries the key given with its own event: a keyed event
// followed by a keyless one gives a letter with key "request-1", then one
// with no key at all (a key remembered by the sink would have tagged the
// second letter "request-1" too).
TEST(KafkaDeadLetterSinkTest, KeyOfOneEventDoesNotLeakToTheNext) {
  const std::unique_ptr<SinkOnCluster> s = StartSink(1 << 20);
  ASSERT_NE(s, nullptr);
  s->sink->Write(stream::Topic::kResults, stream::RejectReason::kMalformedJson,
                 "not JSON", stream::RawEvent{"{first", "request-1"},
                 stream::EventOrigin{0, 1});
  s->sink->Write(stream::Topic::kResults, stream::RejectReason::kMalformedJson,
                 "not JSON", stream::RawEvent{"{second", {}},
                 stream::EventOrigin{0, 2});
  s->sink->Flush(10'000);
  EXPECT_EQ(s->status.dead_letters_produced, 2);
  EXPECT_EQ(s->status.dead_letters_failed, 0);
  const std::vector<Letter> letters =
      ReadLetters(s->cluster->bootstrap_servers(), "dead", 2);
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_EQ(letters[0].payload, "{first");
  EXPECT_TRUE(letters[0].has_key);
  EXPECT_EQ(letters[0].key, "request-1");
  EXPECT_EQ(letters[1].payload, "{second");
  EXPECT_FALSE(letters[1].has_key) << letters[1].key;
  EXPECT_EQ(letters[1].headers.at("rankwatch-source-offset"), "2");
}

}  // namespace
}  // namespace rankwatch::kafka
