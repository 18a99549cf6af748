#include "metrics/pairs.h"

#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

TEST(PairsTest, CountsAndIndexesThePairsInRowOrder) {
  EXPECT_EQ(NumPairs(0), 0u);
  EXPECT_EQ(NumPairs(1), 0u);
  EXPECT_EQ(NumPairs(3), 3u);
  EXPECT_EQ(NumPairs(8), 28u);  // 8 * 7 / 2.
  // n = 4: (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3).
  EXPECT_EQ(PairIndex(0, 1, 4), 0u);
  EXPECT_EQ(PairIndex(0, 3, 4), 2u);
  EXPECT_EQ(PairIndex(1, 2, 4), 3u);
  EXPECT_EQ(PairIndex(2, 3, 4), 5u);
  // Every pair of 8 lands on its own index, in order.
  size_t expected = 0;
  for (size_t x = 0; x < 8; ++x) {
    for (size_t y = x + 1; y < 8; ++y)
      EXPECT_EQ(PairIndex(x, y, 8), expected++);
  }
  EXPECT_EQ(expected, NumPairs(8));
}

}  // namespace
}  // namespace rankwatch::metrics
