#include "base/random.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

// Reference outputs computed independently with Python's arbitrary-
// precision integers from the published algorithms (splitmix64.c and
// xoshiro256starstar.c by Vigna): splitmix64 from state 0, and xoshiro256**
// seeded with 42 through splitmix64.
TEST(RandomTest, MatchesTheReferenceAlgorithms) {
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(&state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(&state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(&state), 0x06c45d188009454fULL);
  Xoshiro256 rng(42);
  EXPECT_EQ(rng.Next(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(rng.Next(), 0x6104d9866d113a7eULL);
  EXPECT_EQ(rng.Next(), 0xae17533239e499a1ULL);
}

TEST(RandomTest, BetweenStaysInItsBounds) {
  Xoshiro256 rng(7);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = rng.Between(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    saw_lo |= v == -3;
    saw_hi |= v == 3;
  }
  EXPECT_TRUE(saw_lo && saw_hi);
  EXPECT_EQ(rng.Between(5, 5), 5);
}

TEST(RandomTest, SameSeedSameStreamAndSaneGaussians) {
  Xoshiro256 a(42);
  Xoshiro256 b(42);
  Xoshiro256 c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);

  constexpr int kSamples = 200000;
  double sum = 0;
  double sum_sq = 0;
  double uniform_sum = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double g = a.Gaussian();
    sum += g;
    sum_sq += g * g;
    const double u = a.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    uniform_sum += u;
  }
  EXPECT_NEAR(sum / kSamples, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / kSamples, 1.0, 0.01);
  EXPECT_NEAR(uniform_sum / kSamples, 0.5, 0.005);
}

}  // namespace
}  // namespace rankwatch
