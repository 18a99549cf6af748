#include "daemon/cli/logging.h"

#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cctype>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>

#include "base/rfc3339.h"
#include "gtest/gtest.h"

namespace rankwatch::cli {
namespace {

// Makes the default logger write into a string for the test's duration,
// then restores the one before.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("logging_test", sink));
  }
  void TearDown() override {
    spdlog::set_default_logger(saved_);
    spdlog::set_pattern("%+");
    spdlog::set_level(spdlog::level::info);
  }

  static config::LoggingConfig Logging(config::LogFormat format,
                                       const std::string& level = "info") {
    config::LoggingConfig c;
    c.format = format;
    c.level = level;
    return c;
  }

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> saved_;
};

// The time of a line: RFC 3339 UTC with milliseconds, read back by the
// configuration's own RFC 3339 parser and compared with the test's clock.
void ExpectRecentRfc3339(const std::string& time, int64_t before_ms,
                         int64_t after_ms) {
  // Shape: digits where "2026-11-22T21:03:47.123Z" has them, the rest as
  // there. (No std::regex: GCC 12 warns inside it at -O1.)
  const std::string shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  ASSERT_EQ(time.size(), shape.size()) << time;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 'd') {
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(time[i]))) << time;
    } else {
      EXPECT_EQ(time[i], shape[i]) << time;
    }
  }
  const std::optional<int64_t> ms = ParseRfc3339Millis(time);
  ASSERT_TRUE(ms.has_value()) << time;
  // The formatter truncates to the millisecond.
  EXPECT_GE(*ms, before_ms - 1) << time;
  EXPECT_LE(*ms, after_ms) << time;
}

TEST_F(LoggingTest, JsonLineParsesWithEscapedMessageAndTypedFields) {
  SetupLogging(Logging(config::LogFormat::kJson));
  const int64_t before = NowMs();
  LogFields(spdlog::level::warn, "a \"quoted\"\nline {} \\",
            {{"topic", "res\tults"}, {"count", 42}, {"ready", false}});
  const int64_t after = NowMs();
  const std::string text = out_.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;

  simdjson::dom::parser parser;
  simdjson::dom::element line;
  ASSERT_EQ(parser.parse(text).get(line), simdjson::SUCCESS) << text;
  std::string_view time, level, message, topic;
  int64_t count = 0;
  bool ready = true;
  ASSERT_EQ(line["time"].get(time), simdjson::SUCCESS);
  ASSERT_EQ(line["level"].get(level), simdjson::SUCCESS);
  ASSERT_EQ(line["message"].get(message), simdjson::SUCCESS);
  ASSERT_EQ(line["topic"].get(topic), simdjson::SUCCESS);
  ASSERT_EQ(line["count"].get(count), simdjson::SUCCESS);
  ASSERT_EQ(line["ready"].get(ready), simdjson::SUCCESS);
  ExpectRecentRfc3339(std::string(time), before, after);
  EXPECT_EQ(level, "warning");  // spdlog's name of the level.
  EXPECT_EQ(message, "a \"quoted\"\nline {} \\");
  EXPECT_EQ(topic, "res\tults");
  EXPECT_EQ(count, 42);
  EXPECT_FALSE(ready);
  EXPECT_EQ(line.get_object().size(), 6u);
}

TEST_F(LoggingTest, PlainSpdlogCallsGetTimeLevelAndMessageOnly) {
  SetupLogging(Logging(config::LogFormat::kJson));
  spdlog::error("partition {} lost", 3);
  simdjson::dom::parser parser;
  simdjson::dom::element line;
  ASSERT_EQ(parser.parse(out_.str()).get(line), simdjson::SUCCESS)
      << out_.str();
  EXPECT_EQ(line.get_object().size(), 3u);
  EXPECT_EQ(std::string_view(line["message"]), "partition 3 lost");
  EXPECT_EQ(std::string_view(line["level"]), "error");
}

TEST_F(LoggingTest, TextLineHasUtcTimeLevelMessageAndFields) {
  SetupLogging(Logging(config::LogFormat::kText));
  const int64_t before = NowMs();
  LogFields(spdlog::level::info, "joined",
            {{"group", "g1"}, {"note", "two words"}, {"n", 7}});
  const int64_t after = NowMs();
  const std::string text = out_.str();
  const size_t space = text.find(' ');
  ASSERT_NE(space, std::string::npos) << text;
  ExpectRecentRfc3339(text.substr(0, space), before, after);
  EXPECT_EQ(text.substr(space),
            " [info] joined group=g1 note=\"two words\" n=7\n");
}

TEST_F(LoggingTest, LevelFiltersLines) {
  SetupLogging(Logging(config::LogFormat::kText, "warn"));
  spdlog::info("hidden");
  spdlog::warn("shown");
  const std::string text = out_.str();
  EXPECT_EQ(text.find("hidden"), std::string::npos) << text;
  EXPECT_NE(text.find("[warning] shown"), std::string::npos) << text;
}

TEST_F(LoggingTest, StartupLineNamesTheSetupAndMasksSecrets) {
  config::Config c;
  c.logging = Logging(config::LogFormat::kJson);
  c.kafka.bootstrap_servers = "b1:9092,b2:9092";
  c.kafka.group_id = "rw";
  c.kafka.results_topic = "res";
  c.kafka.judgments_topic = "jud";
  c.kafka.properties = {{"sasl.password", "hunter2"},
                        {"security.protocol", "SASL_SSL"},
                        {"sasl.jaas.config", "user=u password=jaas-secret"}};
  c.join.mode = config::JoinMode::kQrels;
  c.http.listen = "0.0.0.0:0";
  c.http.basic_auth.username = "admin";
  c.http.basic_auth.password = "s3cret-pass";
  SetupLogging(c.logging);
  LogStartup(c, 9464);
  const std::string text = out_.str();
  for (const char* secret : {"hunter2", "jaas-secret", "s3cret-pass"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << ": " << text;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element line;
  ASSERT_EQ(parser.parse(text).get(line), simdjson::SUCCESS) << text;
  EXPECT_EQ(std::string_view(line["message"]), "rankwatch started");
  EXPECT_EQ(std::string_view(line["version"]), RANKWATCH_VERSION);
  EXPECT_EQ(std::string_view(line["brokers"]), "b1:9092,b2:9092");
  EXPECT_EQ(std::string_view(line["group"]), "rw");
  EXPECT_EQ(std::string_view(line["results_topic"]), "res");
  EXPECT_EQ(std::string_view(line["judgments_topic"]), "jud");
  EXPECT_EQ(std::string_view(line["join_mode"]), "qrels");
  EXPECT_EQ(std::string_view(line["http_address"]), "http://0.0.0.0:9464");
  EXPECT_FALSE(bool(line["tls"]));
  EXPECT_TRUE(bool(line["basic_auth"]));
  EXPECT_EQ(std::string_view(line["kafka_properties"]),
            "sasl.jaas.config=****,sasl.password=****,"
            "security.protocol=SASL_SSL");
}

TEST_F(LoggingTest, StartupAddressIsHttpsWithTls) {
  config::Config c;
  c.http.listen = "[::1]:9464";
  c.http.tls.cert_file = "cert.pem";
  c.http.tls.key_file = "key.pem";
  SetupLogging(Logging(config::LogFormat::kText));
  LogStartup(c, 9464);
  EXPECT_NE(out_.str().find(" http_address=https://[::1]:9464 tls=true "
                            "basic_auth=false"),
            std::string::npos)
      << out_.str();
}

}  // namespace
}  // namespace rankwatch::cli
