#include "base/json_writer.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

TEST(JsonWriterTest, EscapesWhatJsonRequires) {
  EXPECT_EQ(Json(""), "\"\"");
  EXPECT_EQ(Json("plain id-42"), "\"plain id-42\"");
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json(std::string("\n\t\x01\0", 4)),
            "\"\\u000a\\u0009\\u0001\\u0000\"");
}

TEST(JsonWriterTest, Utf8PassesThroughOtherBytesAreEscaped) {
  EXPECT_EQ(Json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // A lone continuation byte, a truncated sequence and 0xff: Latin-1.
  EXPECT_EQ(Json("\x80"), "\"\\u0080\"");
  EXPECT_EQ(Json("\xc3"), "\"\\u00c3\"");
  EXPECT_EQ(Json("a\xff"), "\"a\\u00ff\"");
}

TEST(JsonWriterTest, Utf8SequenceLength) {
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9", 0), 2u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82", 0), 0u);  // Truncated.
  EXPECT_EQ(Utf8SequenceLength("\xc3x", 0), 0u);     // Bad continuation.
}

}  // namespace
}  // namespace rankwatch
