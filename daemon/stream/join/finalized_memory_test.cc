#include "daemon/stream/join/finalized_memory.h"

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

TEST(FinalizedMemoryTest, RemembersServedTimesByHash) {
  FinalizedMemory m(5);  // Rounded up: 8 slots.
  EXPECT_EQ(m.capacity(), 8u);
  EXPECT_FALSE(m.Find(3).has_value());
  m.Remember(3, 1000);
  m.Remember(4, 2000);
  EXPECT_EQ(m.Find(3), 1000);
  EXPECT_EQ(m.Find(4), 2000);
  // Hash 11 shares hash 3's slot (11 & 7 == 3): the newer overwrites.
  EXPECT_FALSE(m.Find(11).has_value());
  m.Remember(11, 3000);
  EXPECT_EQ(m.Find(11), 3000);
  EXPECT_FALSE(m.Find(3).has_value());
  m.Clear();
  EXPECT_FALSE(m.Find(4).has_value());
  EXPECT_FALSE(m.Find(11).has_value());
}

TEST(FinalizedMemoryTest, HashZeroAndTinyCapacities) {
  FinalizedMemory m(0);
  EXPECT_EQ(m.capacity(), 1u);
  EXPECT_FALSE(m.Find(0).has_value());  // An empty slot is not hash 0.
  m.Remember(0, -5);
  EXPECT_EQ(m.Find(0), -5);
}

}  // namespace
}  // namespace rankwatch::stream
