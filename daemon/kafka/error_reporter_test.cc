#include "daemon/kafka/error_reporter.h"

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

TEST(ErrorReporterTest, CountsByNameAndLimitsTheLog) {
  KafkaStatus status;
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

}  // namespace
}  // namespace rankwatch::kafka
