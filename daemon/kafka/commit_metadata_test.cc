#include "daemon/kafka/commit_metadata.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

CommitMetadata Decode(std::string_view s) {
  CommitMetadata m;
  DecodeCommitMetadata(s, &m);
  return m;
}

TEST(CommitMetadataTest, EncodesWhatIsSet) {
  EXPECT_EQ(EncodeCommitMetadata({1'700'000'000'000, 42}),
            "wm=1700000000000;end=42");
  EXPECT_EQ(EncodeCommitMetadata({-5, 0}), "wm=-5;end=0");
  EXPECT_EQ(EncodeCommitMetadata({INT64_MIN, 7}), "end=7");
  EXPECT_EQ(EncodeCommitMetadata({123, -1}), "wm=123");
  EXPECT_EQ(EncodeCommitMetadata({}), "");
}

TEST(CommitMetadataTest, DecodesBothItemsInAnyOrder) {
  CommitMetadata m = Decode("wm=1700000000000;end=42");
  EXPECT_EQ(m.watermark_ms, 1'700'000'000'000);
  EXPECT_EQ(m.end, 42);
  m = Decode("end=9;wm=-3");
  EXPECT_EQ(m.watermark_ms, -3);
  EXPECT_EQ(m.end, 9);
}

// The last commit of an owner that stops cleanly says so; older metadata
// (without the item) reads as not final.
TEST(CommitMetadataTest, FinalCommit) {
  EXPECT_EQ(EncodeCommitMetadata({5, 9, true}), "wm=5;end=9;final=1");
  EXPECT_EQ(EncodeCommitMetadata({INT64_MIN, -1, true}), "final=1");
  EXPECT_TRUE(Decode("wm=5;end=9;final=1").final);
  EXPECT_FALSE(Decode("wm=5;end=9").final);
  EXPECT_FALSE(Decode("final=0").final);
  EXPECT_FALSE(Decode("final=yes").final);  // Not a number: skipped.
}

TEST(CommitMetadataTest, ChangelogPointer) {
  CommitMetadata m;
  m.changelog_partition = 3;
  m.changelog_offset = 1234;
  EXPECT_EQ(EncodeCommitMetadata(m), "clp=3;clo=1234");
  CommitMetadata back;
  DecodeCommitMetadata("clo=77;clp=2", &back);
  EXPECT_EQ(back.changelog_partition, 2);
  EXPECT_EQ(back.changelog_offset, 77);
  // Half a pointer is none: it is written whole or not at all.
  CommitMetadata half;
  half.changelog_partition = 1;
  EXPECT_EQ(EncodeCommitMetadata(half), "");
}

TEST(CommitMetadataTest, EmptyLeavesDefaults) {
  const CommitMetadata m = Decode("");
  EXPECT_EQ(m.watermark_ms, INT64_MIN);
  EXPECT_EQ(m.end, -1);
}

TEST(CommitMetadataTest, SkipsMalformedItems) {
  // Item without '=', unknown key, trailing garbage, empty value, spaces,
  // a '+' sign (from_chars takes none), empty items.
  CommitMetadata m = Decode("garbage;x=1;wm=12ab;end=;;end= 5;wm=+4");
  EXPECT_EQ(m.watermark_ms, INT64_MIN);
  EXPECT_EQ(m.end, -1);
  // A good item among bad ones is still read.
  m = Decode("wm==3;end=77;zzz");
  EXPECT_EQ(m.watermark_ms, INT64_MIN);
  EXPECT_EQ(m.end, 77);
}

TEST(CommitMetadataTest, SkipsNumbersOutsideInt64) {
  // INT64_MAX is 9223372036854775807; one more overflows.
  CommitMetadata m = Decode("wm=9223372036854775808;end=99999999999999999999");
  EXPECT_EQ(m.watermark_ms, INT64_MIN);
  EXPECT_EQ(m.end, -1);
  m = Decode("wm=9223372036854775807;end=-9223372036854775808");
  EXPECT_EQ(m.watermark_ms, INT64_MAX);
  EXPECT_EQ(m.end, INT64_MIN);
}

TEST(CommitMetadataTest, BinaryBytesAreSkipped) {
  const std::string bytes("wm=1\0;end=2", 11);
  const CommitMetadata m = Decode(bytes);
  EXPECT_EQ(m.watermark_ms, INT64_MIN);  // "1\0" is not a number.
  EXPECT_EQ(m.end, 2);
}

TEST(CommitMetadataTest, RoundTrips) {
  for (const CommitMetadata in : {CommitMetadata{0, 0}, CommitMetadata{-1, 1},
                                  CommitMetadata{INT64_MAX, INT64_MAX}}) {
    const CommitMetadata out = Decode(EncodeCommitMetadata(in));
    EXPECT_EQ(out.watermark_ms, in.watermark_ms);
    EXPECT_EQ(out.end, in.end);
  }
}

}  // namespace
}  // namespace rankwatch::kafka
