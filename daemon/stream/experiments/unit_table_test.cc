#include "daemon/stream/experiments/unit_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <unordered_map>

#include "base/random.h"

namespace rankwatch::stream {
namespace {

TEST(UnitTableTest, RemembersTheFirstValue) {
  UnitTable t(10);
  uint8_t v = 3;
  EXPECT_EQ(t.Insert(42, &v), UnitTable::Outcome::kInserted);
  v = 7;
  EXPECT_EQ(t.Insert(42, &v), UnitTable::Outcome::kPresent);
  EXPECT_EQ(v, 3);
  EXPECT_EQ(t.size(), 1);
}

// Key 0 is the empty-slot marker inside; it must still be a unit.
TEST(UnitTableTest, KeyZeroIsAUnit) {
  UnitTable t(10);
  uint8_t v = 1;
  EXPECT_EQ(t.Insert(0, &v), UnitTable::Outcome::kInserted);
  v = 2;
  EXPECT_EQ(t.Insert(0, &v), UnitTable::Outcome::kPresent);
  EXPECT_EQ(v, 1);
}

TEST(UnitTableTest, RefusesNewUnitsPastTheBoundButFindsOldOnes) {
  UnitTable t(2);
  uint8_t v = 0;
  EXPECT_EQ(t.Insert(1, &v), UnitTable::Outcome::kInserted);
  EXPECT_EQ(t.Insert(2, &v), UnitTable::Outcome::kInserted);
  EXPECT_EQ(t.Insert(3, &v), UnitTable::Outcome::kFull);
  EXPECT_EQ(t.Insert(1, &v), UnitTable::Outcome::kPresent);
  EXPECT_EQ(t.size(), 2);
  UnitTable none(0);
  EXPECT_EQ(none.Insert(1, &v), UnitTable::Outcome::kFull);
}

// Against std::unordered_map over many keys, through several growths; keys
// share low bits so that probing wraps and chains.
TEST(UnitTableTest, AgreesWithAMapThroughGrowth) {
  const uint64_t seed = 20261122;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  UnitTable t(20000);
  std::unordered_map<uint64_t, uint8_t> want;
  for (int i = 0; i < 60000; ++i) {
    const uint64_t key = rng.Below(25000) << 20;  // Low 20 bits all 0.
    uint8_t v = static_cast<uint8_t>(rng.Below(5));
    const uint8_t offered = v;
    const UnitTable::Outcome got = t.Insert(key, &v);
    auto it = want.find(key);
    if (it != want.end()) {
      ASSERT_EQ(got, UnitTable::Outcome::kPresent);
      ASSERT_EQ(v, it->second);
    } else if (static_cast<int64_t>(want.size()) < 20000) {
      ASSERT_EQ(got, UnitTable::Outcome::kInserted);
      want.emplace(key, offered);
    } else {
      ASSERT_EQ(got, UnitTable::Outcome::kFull);
    }
  }
  EXPECT_EQ(t.size(), static_cast<int64_t>(want.size()));
}

}  // namespace
}  // namespace rankwatch::stream
