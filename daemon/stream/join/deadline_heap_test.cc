#include "daemon/stream/join/deadline_heap.h"

#include <map>
#include <random>

#include "gtest/gtest.h"
#include "tests/testing/test_seed.h"

namespace rankwatch::stream {
namespace {

TEST(DeadlineHeapTest, PopsInDeadlineOrder) {
  DeadlineHeap h;
  EXPECT_TRUE(h.empty());
  // Enough entries for three levels under the root (1 + 4 + 16 + 64).
  const int64_t deadlines[] = {50, 10, 40, 10, 90, 0, 70, 30, 20, 60, 80, -5};
  uint32_t slot = 0;
  for (int round = 0; round < 8; ++round) {
    for (int64_t d : deadlines) h.push({d + round, slot++, 0});
  }
  EXPECT_EQ(h.size(), 96u);
  int64_t previous = INT64_MIN;
  while (!h.empty()) {
    EXPECT_GE(h.top().deadline_ms, previous);
    previous = h.top().deadline_ms;
    h.pop();
  }
  EXPECT_EQ(previous, 97);  // 90 + 7, the latest.
}

// Against a model (a multimap of deadline to slot), random pushes and
// pops interleaved: the top always has the least deadline, and every
// entry pushed comes out once.
TEST(DeadlineHeapTest, MatchesAModelUnderRandomPushesAndPops) {
  const uint64_t seed = rankwatch::testing::TestSeed();
  SCOPED_TRACE(rankwatch::testing::SeedNote(seed));
  std::mt19937_64 rng(seed);
  DeadlineHeap h;
  std::multimap<int64_t, uint32_t> model;
  uint32_t slot = 0;
  for (int step = 0; step < 200000; ++step) {
    if (model.empty() || rng() % 100 < 55) {
      const int64_t d = static_cast<int64_t>(rng() % 5000) - 100;
      h.push({d, slot, static_cast<uint32_t>(step)});
      model.emplace(d, slot++);
    } else {
      ASSERT_EQ(h.top().deadline_ms, model.begin()->first) << "step " << step;
      // Among equal deadlines the heap may return any: remove that one.
      auto [lo, hi] = model.equal_range(h.top().deadline_ms);
      bool found = false;
      for (auto it = lo; it != hi; ++it) {
        if (it->second == h.top().slot) {
          model.erase(it);
          found = true;
          break;
        }
      }
      ASSERT_TRUE(found) << "step " << step << ": slot " << h.top().slot;
      h.pop();
    }
    ASSERT_EQ(h.size(), model.size()) << "step " << step;
  }
}

}  // namespace
}  // namespace rankwatch::stream
