#include "daemon/kafka/offset_tracker.h"

#include <random>
#include <set>

#include "gtest/gtest.h"

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

TEST(OffsetTrackerTest, SlotEncoding) {
  EXPECT_EQ(SlotOf(0, 7), 14);
  EXPECT_EQ(SlotOf(1, 7), 15);
  EXPECT_EQ(SlotTopic(15), 1);
  EXPECT_EQ(SlotPartition(15), 7);
}

}  // namespace
}  // namespace rankwatch::kafka
