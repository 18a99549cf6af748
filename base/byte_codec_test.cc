#include "base/byte_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rankwatch {
namespace {

TEST(ByteCodecTest, RoundTripsEveryType) {
  std::string buf;
  ByteWriter w(&buf);
  w.U8(0xab);
  w.Bool(true);
  w.Fixed32(0xdeadbeef);
  w.I64(-5);
  w.Double(0.1);
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.Varint(300);
  w.String("ndcg_cut_10");
  w.String("");
  ByteReader r(buf);
  EXPECT_EQ(r.U8(), 0xab);
  EXPECT_TRUE(r.Bool());
  EXPECT_EQ(r.Fixed32(), 0xdeadbeefu);
  EXPECT_EQ(r.I64(), -5);
  EXPECT_EQ(r.Double(), 0.1);
  EXPECT_TRUE(std::isnan(r.Double()));
  EXPECT_EQ(r.Varint(), 300u);
  EXPECT_EQ(r.String(), "ndcg_cut_10");
  EXPECT_EQ(r.String(), "");
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());
}

TEST(ByteCodecTest, VarintLayoutIsLeb128) {
  // 300 = 0b1_0010_1100: low 7 bits 0x2c with the continuation bit (0xac),
  // then 0b10 (0x02).
  std::string buf;
  ByteWriter(&buf).Varint(300);
  EXPECT_EQ(buf, std::string("\xac\x02", 2));
}

TEST(ByteCodecTest, FixedIsLittleEndian) {
  std::string buf;
  ByteWriter(&buf).Fixed32(0x01020304);
  EXPECT_EQ(buf, std::string("\x04\x03\x02\x01", 4));
}

TEST(ByteCodecTest, TruncatedInputFailsOnceWithTheOffset) {
  std::string buf;
  ByteWriter w(&buf);
  w.Fixed32(7);
  w.Fixed64(9);
  ByteReader r(std::string_view(buf).substr(0, 8));  // 4 + 4 of 8 bytes.
  EXPECT_EQ(r.Fixed32(), 7u);
  EXPECT_EQ(r.Fixed64(), 0u);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.String(), "");  // Sticky: later reads yield nothing.
  EXPECT_EQ(r.status().message(),
            "at byte 4: a 64-bit integer past the end of the record");
}

TEST(ByteCodecTest, HugeLengthsAndCountsFailWithoutAllocating) {
  std::string buf;
  ByteWriter w(&buf);
  w.Varint(1ull << 40);  // A string "of a terabyte" in a 6-byte record.
  ByteReader r(buf);
  EXPECT_EQ(r.String(), "");
  EXPECT_FALSE(r.ok());

  std::string counts;
  ByteWriter(&counts).Varint(1000);
  ByteReader c(counts);
  EXPECT_EQ(c.Count(8), 0u);  // 1,000 items of 8 bytes in 0 bytes left.
  EXPECT_FALSE(c.ok());
}

// Text() bounds a string as a live event's id is bounded: by length, then
// by UTF-8 validity (RFC 3629: C0 AF is an overlong '/').
TEST(ByteCodecTest, TextChecksLengthAndUtf8) {
  std::string buf;
  ByteWriter w(&buf);
  w.String("caf\xc3\xa9");  // 5 bytes, valid.
  w.String("abcdef");       // 6 bytes.
  ByteReader r(buf);
  EXPECT_EQ(r.Text(5, "a variant"), "caf\xc3\xa9");
  EXPECT_EQ(r.Text(5, "a variant"), "");
  // 1 + 5 + 1 + 6 = 13 bytes read when the second fails.
  EXPECT_EQ(r.status().message(),
            "at byte 13: a variant of 6 bytes, over the limit of 5");

  std::string bad;
  ByteWriter(&bad).String(
      "a\xc0\xaf"
      "b");
  ByteReader b(bad);
  EXPECT_EQ(b.Text(512, "a doc id"), "");
  EXPECT_EQ(b.status().message(),
            "at byte 5: a doc id that is not valid UTF-8");
}

TEST(ByteCodecTest, OverlongVarintFails) {
  const std::string buf(11, '\xff');
  ByteReader r(buf);
  (void)r.Varint();
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace rankwatch
