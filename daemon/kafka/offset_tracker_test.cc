#include "daemon/kafka/offset_tracker.h"

#include <algorithm>
#include <optional>
#include <random>
#include <set>

#include "gtest/gtest.h"
#include "tests/testing/test_seed.h"

namespace rankwatch::kafka {
namespace {

TEST(OffsetTrackerTest, CommitsPastDoneEventsButNotPastRetainedOnes) {
  OffsetTracker t;
  t.Assign(4);
  EXPECT_EQ(t.SafeOffset(4), std::nullopt);  // Nothing consumed yet.
  for (int64_t o = 10; o < 13; ++o) t.Consumed(4, o);
  EXPECT_EQ(t.SafeOffset(4), 13);  // Nothing retained: one past the last.
  t.Retain(4, 13);
  t.Consumed(4, 13);
  t.Retain(4, 14);
  t.Consumed(4, 14);
  t.Consumed(4, 15);  // Done at once.
  EXPECT_EQ(t.SafeOffset(4), 13);
  EXPECT_EQ(t.retained(4), 2);
  t.Release(4, 14);  // A newer request finalized first.
  EXPECT_EQ(t.SafeOffset(4), 13);
  t.Release(4, 13);
  EXPECT_EQ(t.SafeOffset(4), 16);
  EXPECT_EQ(t.retained(4), 0);
}

// Consumed returns where the slot stood: the consumer's gap check.
TEST(OffsetTrackerTest, ConsumedReturnsThePreviousPosition) {
  OffsetTracker t;
  t.Assign(2);
  EXPECT_EQ(t.Consumed(2, 7), -1);  // The first message.
  EXPECT_EQ(t.Consumed(2, 8), 8);   // No gap: 8 was expected.
  EXPECT_EQ(t.Consumed(2, 20), 9);  // A gap, 9 to 19.
  EXPECT_EQ(t.Consumed(2, 5), 21);  // A re-read after a seek back.
  EXPECT_EQ(t.NextOffset(2), 21);
  EXPECT_EQ(t.Consumed(3, 1), -1);  // Not assigned.
}

TEST(OffsetTrackerTest, ReleaseDuringFeedAndUnknownOffsets) {
  OffsetTracker t;
  t.Assign(0);
  t.Retain(0, 5);  // Retained, then released within the same feed call.
  t.Release(0, 5);
  t.Consumed(0, 5);
  EXPECT_EQ(t.SafeOffset(0), 6);
  t.Release(0, 99);  // Never retained: ignored.
  t.Release(7, 1);   // Unassigned slot: ignored.
  EXPECT_EQ(t.SafeOffset(7), std::nullopt);
}

// The newest offset is released without a search, unless the one before
// holds the same offset (delivered twice after a seek): then the search
// releases the first of the two, as before.
TEST(OffsetTrackerTest, ReleasesTheNewestAndTwiceDeliveredOffsets) {
  OffsetTracker t;
  t.Assign(1);
  t.Retain(1, 3);
  t.Retain(1, 5);
  t.Release(1, 5);  // The newest.
  EXPECT_EQ(t.retained(1), 1);
  EXPECT_EQ(t.SafeOffset(1), 3);
  t.Retain(1, 5);
  t.Retain(1, 5);  // Delivered again: two live entries of 5.
  EXPECT_EQ(t.retained(1), 3);
  t.Release(1, 5);  // One of them.
  EXPECT_EQ(t.retained(1), 2);
  t.Release(1, 3);
  EXPECT_EQ(t.SafeOffset(1), 5);  // The other 5 still holds the commit.
  t.Release(1, 5);
  EXPECT_EQ(t.retained(1), 0);
  t.Release(1, 5);  // No live entry left: ignored.
  EXPECT_EQ(t.retained(1), 0);
}

// The second entry of an offset delivered twice is released after the
// first, while an older entry still holds the commit: the first, marked
// released, must not hide the second.
TEST(OffsetTrackerTest, ReleasesBothEntriesOfAnOffsetDeliveredTwice) {
  OffsetTracker t;
  t.Assign(1);
  for (int64_t o : {3, 5, 5, 7}) t.Retain(1, o);
  t.Consumed(1, 7);
  t.Release(1, 5);  // Not the newest: the first entry of 5 is marked.
  t.Release(1, 5);
  EXPECT_EQ(t.retained(1), 2);
  EXPECT_EQ(t.SafeOffset(1), 3);
  t.Release(1, 3);
  EXPECT_EQ(t.retained(1), 1);
  EXPECT_EQ(t.SafeOffset(1), 7);
}

TEST(OffsetTrackerTest, RevokeForgets) {
  OffsetTracker t;
  t.Assign(2);
  t.Retain(2, 1);
  t.Consumed(2, 1);
  t.Revoke(2);
  EXPECT_FALSE(t.assigned(2));
  EXPECT_EQ(t.SafeOffset(2), std::nullopt);
  t.Assign(2);
  EXPECT_EQ(t.retained(2), 0);
}

// Against a model: the safe offset is the smallest unreleased retained
// offset, else one past the last consumed.
TEST(OffsetTrackerTest, MatchesModelUnderRandomReleases) {
  OffsetTracker t;
  t.Assign(1);
  std::mt19937_64 rng(42);
  std::set<int64_t> live;
  for (int64_t o = 0; o < 5000; ++o) {
    const bool retain = rng() % 3 == 0;
    if (retain) {
      t.Retain(1, o);
      live.insert(o);
    }
    t.Consumed(1, o);
    if (!live.empty() && rng() % 2 == 0) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      t.Release(1, *it);
      live.erase(it);
    }
    const int64_t expected = live.empty() ? o + 1 : *live.begin();
    ASSERT_EQ(t.SafeOffset(1), expected) << o;
    ASSERT_EQ(t.retained(1), static_cast<int64_t>(live.size()));
  }
}

// Against a model (a multiset of live offsets), at the scale of a busy
// partition: runs of retained offsets with holes (events done at once) and
// jumps (deleted or compacted records), some offsets delivered again
// (after a seek), releases in random order. The safe offset is the smallest
// live offset, else one past the last consumed.
TEST(OffsetTrackerTest, MatchesModelWithHolesJumpsAndRedeliveries) {
  const uint64_t seed = rankwatch::testing::TestSeed();
  SCOPED_TRACE(rankwatch::testing::SeedNote(seed));
  std::mt19937_64 rng(seed);
  OffsetTracker t;
  t.Assign(1);
  std::multiset<int64_t> live;
  std::vector<int64_t> retained;  // Live offsets, to pick releases from.
  int64_t next = static_cast<int64_t>(rng() % 1000000);
  bool consumed = false;
  for (int step = 0; step < 100000; ++step) {
    const uint64_t op = rng() % 100;
    if (op < 50) {
      if (rng() % 500 == 0) next += static_cast<int64_t>(rng() % 1000000);
      const int64_t offset = next++;
      if (rng() % 10 != 0) {  // One in ten is done at once.
        t.Retain(1, offset);
        live.insert(offset);
        retained.push_back(offset);
      }
      t.Consumed(1, offset);
      consumed = true;
    } else if (op < 52 && !live.empty()) {
      // Delivered again: an offset at or below the newest.
      const int64_t offset =
          *live.begin() +
          static_cast<int64_t>(rng() %
                               static_cast<uint64_t>(next - *live.begin()));
      t.Retain(1, offset);
      live.insert(offset);
      retained.push_back(offset);
    } else if (!retained.empty()) {
      // Mostly an old one (a request closing), sometimes the newest.
      const size_t i =
          rng() % 4 == 0 ? retained.size() - 1 : rng() % retained.size();
      const int64_t offset = retained[i];
      retained[i] = retained.back();
      retained.pop_back();
      t.Release(1, offset);
      live.erase(live.find(offset));
    }
    // Nothing consumed yet: nothing to commit.
    const std::optional<int64_t> expected =
        !live.empty() ? std::optional<int64_t>(*live.begin())
        : consumed    ? std::optional<int64_t>(next)
                      : std::nullopt;
    ASSERT_EQ(t.SafeOffset(1), expected) << "step " << step;
    ASSERT_EQ(t.retained(1), static_cast<int64_t>(live.size()))
        << "step " << step;
  }
}

// Releasing an offset that is not live changes nothing, wherever it falls:
// before, between and after the entries.
TEST(OffsetTrackerTest, ReleaseOfAnOffsetNotRetainedIsIgnored) {
  OffsetTracker t;
  t.Assign(1);
  for (int64_t o : {10, 11, 13, 20, 21}) t.Retain(1, o);
  for (int64_t o : {0, 9, 12, 14, 19, 22, 1000}) t.Release(1, o);
  EXPECT_EQ(t.retained(1), 5);
  EXPECT_EQ(t.SafeOffset(1), 10);
  t.Release(1, 10);
  t.Release(1, 10);  // Twice: the second finds none live.
  EXPECT_EQ(t.retained(1), 4);
  EXPECT_EQ(t.SafeOffset(1), 11);
}

TEST(OffsetTrackerTest, SlotEncoding) {
  EXPECT_EQ(SlotOf(0, 7), 14);
  EXPECT_EQ(SlotOf(1, 7), 15);
  EXPECT_EQ(SlotTopic(15), 1);
  EXPECT_EQ(SlotPartition(15), 7);
}

}  // namespace
}  // namespace rankwatch::kafka
