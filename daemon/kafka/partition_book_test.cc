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
  PartitionBook book;
  book.Assign(2);
  book.Assign(3);
  EXPECT_TRUE(book.CommitsDue({2, 3}, 100).empty());  // Nothing consumed.
  book.tracker().Consumed(2, 20);
  book.tracker().Retain(3, 30);  // Still needed by pending state.
  book.tracker().Consumed(3, 30);
  book.tracker().Consumed(3, 31);
  std::vector<PartitionBook::Commit> due = book.CommitsDue({2, 3}, 100);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].slot, 2);
  EXPECT_EQ(due[0].offset, 21);
  EXPECT_EQ(due[0].metadata, "wm=100;end=21");
  EXPECT_EQ(due[1].slot, 3);
  EXPECT_EQ(due[1].offset, 30);  // The retained event's offset.
  EXPECT_EQ(due[1].metadata, "wm=100;end=32");
  book.MarkCommitted(2, 21);
  book.MarkCommitted(3, 30);
  EXPECT_TRUE(book.CommitsDue({2, 3}, 200).empty());
  book.tracker().Release(3, 30);
  due = book.CommitsDue({2, 3}, INT64_MIN);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].offset, 32);
  EXPECT_EQ(due[0].metadata, "end=32");
  EXPECT_EQ(book.Position(3), 32);
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
}

}  // namespace
}  // namespace rankwatch::kafka
