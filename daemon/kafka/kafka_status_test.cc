#include "daemon/kafka/kafka_status.h"

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

TEST(KafkaStatusTest, ReadyWhenAssignedConsumingAndPolledRecently) {
  KafkaStatus s;
  EXPECT_FALSE(s.ready(0));
  s.assigned = true;
  EXPECT_FALSE(s.ready(0));  // Not consuming yet.
  s.consuming = true;
  EXPECT_TRUE(s.ready(0));  // No loop watched: no stall check.
  s.last_poll_mono_ms = 50'000;
  EXPECT_TRUE(s.ready(50'000));
  EXPECT_TRUE(s.ready(50'000 + KafkaStatus::kStallMs - 1));
  EXPECT_FALSE(s.ready(50'000 + KafkaStatus::kStallMs));  // Stalled.
  s.assigned = false;
  EXPECT_FALSE(s.ready(50'000));
}

}  // namespace
}  // namespace rankwatch::kafka
