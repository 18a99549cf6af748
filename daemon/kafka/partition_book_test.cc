#include "daemon/kafka/partition_book.h"

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

TEST(PartitionBookTest, RestoresWatermarkAndReplayEnd) {
  PartitionBook book;
  book.Assign(4);
  // The predecessor committed 10 (an event at 10 was still pending) but had
  // consumed up to 15: offsets 10..14 are replays.
  EXPECT_EQ(book.RestoreCommitted(4, 10, "wm=5000;end=15"), 5000);
  EXPECT_EQ(book.committed(4), 10);
  EXPECT_TRUE(book.IsReplay(4, 10));
  EXPECT_TRUE(book.IsReplay(4, 14));
  EXPECT_FALSE(book.IsReplay(4, 15));
  EXPECT_FALSE(book.IsReplay(5, 10));
  EXPECT_EQ(book.Position(4), 10);  // Nothing consumed: the committed one.
}

TEST(PartitionBookTest, MetadataWithoutReplayOrWatermark) {
  PartitionBook book;
  book.Assign(0);
  EXPECT_EQ(book.RestoreCommitted(0, 7, "end=7"), INT64_MIN);
  EXPECT_FALSE(book.IsReplay(0, 6));  // end == offset: nothing replayed.
  EXPECT_FALSE(book.IsReplay(0, 7));
  book.Assign(1);
  EXPECT_EQ(book.RestoreCommitted(1, 3, "not metadata"), INT64_MIN);
  EXPECT_EQ(book.Position(2), 0);  // Unknown slot.
}

TEST(PartitionBookTest, CommitsOnlyWhatMoved) {
  // Every slot's watermark: 100, then 200, then none.
  int64_t wm = 100;
  const auto watermark = [&wm](int32_t) { return wm; };
  PartitionBook book;
  book.Assign(2);
  book.Assign(3);
  EXPECT_TRUE(book.CommitsDue({2, 3}, watermark).empty());  // Nothing consumed.
  book.tracker().Consumed(2, 20);
  book.tracker().Retain(3, 30);  // Still needed by pending state.
  book.tracker().Consumed(3, 30);
  book.tracker().Consumed(3, 31);
  std::vector<PartitionBook::Commit> due = book.CommitsDue({2, 3}, watermark);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].slot, 2);
  EXPECT_EQ(due[0].offset, 21);
  EXPECT_EQ(due[0].metadata, "wm=100;end=21");
  EXPECT_EQ(due[1].slot, 3);
  EXPECT_EQ(due[1].offset, 30);  // The retained event's offset.
  EXPECT_EQ(due[1].metadata, "wm=100;end=32");
  book.MarkCommitted(2, 21);
  book.MarkCommitted(3, 30);
  wm = 200;
  EXPECT_TRUE(book.CommitsDue({2, 3}, watermark).empty());
  book.tracker().Release(3, 30);
  wm = INT64_MIN;
  due = book.CommitsDue({2, 3}, watermark);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].offset, 32);
  EXPECT_EQ(due[0].metadata, "end=32");
  EXPECT_EQ(book.Position(3), 32);
}

// A final commit (the owner stops reading the slots) is written even when
// the offset did not move, and the next owner learns the stop was clean.
TEST(PartitionBookTest, FinalCommitMarksACleanStop) {
  const auto watermark = [](int32_t) { return int64_t{100}; };
  PartitionBook book;
  book.Assign(2);
  book.tracker().Consumed(2, 4);
  std::vector<PartitionBook::Commit> due = book.CommitsDue({2}, watermark);
  ASSERT_EQ(due.size(), 1u);
  book.MarkCommitted(2, due[0].offset);
  EXPECT_TRUE(book.CommitsDue({2}, watermark).empty());
  due = book.CommitsDue({2}, watermark, /*final=*/true);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].metadata, "wm=100;end=5;final=1");

  PartitionBook next;
  next.Assign(2);
  EXPECT_EQ(next.RestoreCommitted(2, 5, "wm=100;end=5;final=1"), 100);
  EXPECT_TRUE(next.StoppedCleanly(2));
  next.Assign(3);
  EXPECT_EQ(next.RestoreCommitted(3, 5, "wm=100;end=9"), 100);
  EXPECT_FALSE(next.StoppedCleanly(3));  // A crash: its last commit only.
  next.Revoke(2);
  EXPECT_FALSE(next.StoppedCleanly(2));
}

// Each slot's metadata carries its own watermark (issue 22: restored per
// partition by the next owner).
TEST(PartitionBookTest, EachSlotCommitsItsOwnWatermark) {
  PartitionBook book;
  book.Assign(2);
  book.Assign(3);
  book.tracker().Consumed(2, 0);
  book.tracker().Consumed(3, 0);
  const std::vector<PartitionBook::Commit> due = book.CommitsDue(
      {2, 3}, [](int32_t slot) { return slot == 2 ? int64_t{7} : 9; });
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].metadata, "wm=7;end=1");
  EXPECT_EQ(due[1].metadata, "wm=9;end=1");
}

TEST(PartitionBookTest, RevokeForgetsEverything) {
  PartitionBook book;
  book.Assign(6);
  (void)book.RestoreCommitted(6, 1, "end=9");
  book.tracker().Consumed(6, 1);
  book.Revoke(6);
  EXPECT_EQ(book.committed(6), -1);
  EXPECT_FALSE(book.IsReplay(6, 2));
  EXPECT_TRUE(book.slots().empty());
  book.ExpectStart(6, 1);
  book.Revoke(6);
  EXPECT_FALSE(book.AwaitingStart());
}

// The fresh runs' loss (RealKafkaE2eTest.KillNineAndRestartLosesNothing):
// committed offset 6, the broker's retention moved the log start to 37,
// and the consumer read on from 37: offsets 6 to 36, 31 events, were
// deleted unread.
TEST(PartitionBookTest, EventsDeletedBelowTheLogStartAreCountedOnce) {
  PartitionBook book;
  book.Assign(0);
  book.ExpectStart(0, 6);
  EXPECT_TRUE(book.AwaitingStart());
  EXPECT_EQ(book.SettleStart(0, 37, 37), 37 - 6);
  EXPECT_FALSE(book.AwaitingStart());
  EXPECT_EQ(book.SettleStart(0, 38, 37), 0);  // Settled: counted once.
  // A first message at the expected start: nothing deleted, whatever the
  // log start becomes later (retention of events already read).
  book.ExpectStart(1, 10);
  EXPECT_EQ(book.SettleStart(1, 10, 4), 0);
  EXPECT_EQ(book.SettleStart(1, -1, 50), 0);
  // Past the expected start, but the log start explains only part of the
  // gap: offsets 20 to 24 were deleted, 25 to 29 compacted away.
  book.ExpectStart(2, 20);
  EXPECT_EQ(book.SettleStart(2, 30, 25), 5);
  // A compacted topic's gap alone (log start at or below the start).
  book.ExpectStart(3, 20);
  EXPECT_EQ(book.SettleStart(3, 30, 20), 0);
  EXPECT_EQ(book.SettleStart(3, 30, 25), 0);  // Settled already.
  EXPECT_FALSE(book.AwaitingStart());
}

// A partition whose deleted events are all there was, with nothing new:
// no message comes, the log start alone settles it once it is known.
TEST(PartitionBookTest, ALogStartPastTheStartSettlesWithoutAMessage) {
  PartitionBook book;
  book.ExpectStart(5, 100);
  EXPECT_EQ(book.SettleStart(5, -1, -1), 0);   // Not known yet: waits.
  EXPECT_EQ(book.SettleStart(5, -1, 100), 0);  // At the start: waits.
  EXPECT_TRUE(book.AwaitingStart());
  EXPECT_EQ(book.SettleStart(5, -1, 160), 60);
  EXPECT_FALSE(book.AwaitingStart());
  EXPECT_EQ(book.SettleStart(7, 3, 9), 0);  // Never expected.
}

// A replica reading offset 40 next falls behind the retention: the broker
// deletes below 75 and the client moves on to the log start, so the next
// message is 75. Offsets 40 to 74, 35 events, were deleted unread.
TEST(PartitionBookTest, AGapBelowTheLogStartWhileReadingIsCounted) {
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 75, 75), 75 - 40);
  // The log start moved on again before the message was handled (librdkafka
  // keeps the last fetch's): only the gap up to the message was unread.
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 75, 90), 75 - 40);
  // A transaction marker (40) or compacted events: the log start is at or
  // below the expected offset, nothing was deleted.
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 41, 12), 0);
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 60, 40), 0);
  // Part of the gap deleted (40 to 49), part compacted away (50 to 59).
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 60, 50), 10);
  // Log start not known yet; no gap at all.
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 75, -1), 0);
  EXPECT_EQ(PartitionBook::DeletedInGap(40, 40, 75), 0);
}

}  // namespace
}  // namespace rankwatch::kafka
