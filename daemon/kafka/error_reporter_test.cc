#include "daemon/kafka/error_reporter.h"

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

TEST(ErrorReporterTest, CountsByNameAndLimitsTheLog) {
  IngestState status;
  FakeClock clock(1'000'000);
  ErrorReporter errors(&status, &clock);
  for (int i = 0; i < 25; ++i) {
    errors.Report(RdKafka::ERR__TRANSPORT, "consume");
  }
  errors.Report(RdKafka::ERR__STATE, "assign", "partition 3");
  EXPECT_EQ(status.errors["_TRANSPORT"], 25);
  EXPECT_EQ(status.errors["_STATE"], 1);
  // 10 lines in the first second, the other 16 suppressed.
  EXPECT_EQ(errors.suppressed(), 16);
  clock.Advance(1000);
  errors.Log("commit", "failed");
  EXPECT_EQ(errors.suppressed(), 16);
}

TEST(ErrorReporterTest, Names) {
  EXPECT_EQ(ErrorName(RdKafka::ERR__ALL_BROKERS_DOWN), "_ALL_BROKERS_DOWN");
  EXPECT_EQ(ErrorName(RdKafka::ERR_UNKNOWN_TOPIC_OR_PART),
            "UNKNOWN_TOPIC_OR_PART");
}

// Texts as librdkafka 2.0.2's error callback gives them (seen against a
// closed port, an unknown host and a SASL listener with a wrong password).
TEST(ErrorReporterTest, ConnectionErrorCause) {
  EXPECT_EQ(ConnectionErrorCause(
                "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: "
                "Connection refused (after 0ms in state CONNECT)"),
            "Connection refused");
  EXPECT_EQ(ConnectionErrorCause(
                "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: "
                "Connection refused (after 0ms in state CONNECT, 1 identical "
                "error(s) suppressed)"),
            "Connection refused");
  EXPECT_EQ(ConnectionErrorCause(
                "nohost.invalid:9092/bootstrap: Failed to resolve "
                "'nohost.invalid:9092': Name or service not known (after 2ms "
                "in state CONNECT)"),
            "Failed to resolve 'nohost.invalid:9092': Name or service not "
            "known");
  EXPECT_EQ(
      ConnectionErrorCause("sasl_plaintext://127.0.0.1:9094/bootstrap: SASL "
                           "authentication error: Authentication failed"),
      "SASL authentication error: Authentication failed");
  EXPECT_EQ(ConnectionErrorCause("127.0.0.1:39021/1: Disconnected (after "
                                 "12ms in state UP)"),
            "Disconnected");
  // librdkafka's guess when a connection closes before its first answer,
  // which a plaintext broker that stops also gives (issue 43), names both
  // causes.
  EXPECT_EQ(ConnectionErrorCause(
                "127.0.0.1:19092/bootstrap: Disconnected while requesting "
                "ApiVersion: might be caused by incorrect security.protocol "
                "configuration (connecting to a SSL listener?) or broker "
                "version is < 0.10 (see api.version.request) (after 1ms in "
                "state APIVERSION_QUERY)"),
            "Disconnected while requesting ApiVersion (the broker closed the "
            "connection before answering: it may be stopping or starting, or "
            "its listener is SSL or SASL while security.protocol is not)");
  // Another shape: as it is.
  EXPECT_EQ(ConnectionErrorCause("1/1 brokers are down"),
            "1/1 brokers are down");
  EXPECT_EQ(ConnectionErrorCause("Local: Timed out (waiting)"),
            "Local: Timed out (waiting)");
  EXPECT_TRUE(IsConnectionError(RdKafka::ERR__TRANSPORT));
  EXPECT_TRUE(IsConnectionError(RdKafka::ERR__RESOLVE));
  EXPECT_TRUE(IsConnectionError(RdKafka::ERR__AUTHENTICATION));
  EXPECT_FALSE(IsConnectionError(RdKafka::ERR__ALL_BROKERS_DOWN));
  EXPECT_FALSE(IsConnectionError(RdKafka::ERR_UNKNOWN_TOPIC_OR_PART));
}

}  // namespace
}  // namespace rankwatch::kafka
