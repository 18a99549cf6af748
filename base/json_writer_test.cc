#include "base/json_writer.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

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
  // RFC 3629's table: overlong forms, surrogates and code points above
  // U+10FFFF are not UTF-8.
  EXPECT_EQ(Utf8SequenceLength("\xc0\xaf", 0), 0u);          // Overlong '/'.
  EXPECT_EQ(Utf8SequenceLength("\xe0\x80\xaf", 0), 0u);      // Overlong.
  EXPECT_EQ(Utf8SequenceLength("\xe0\xa0\x80", 0), 3u);      // U+0800.
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80", 0), 0u);      // U+D800.
  EXPECT_EQ(Utf8SequenceLength("\xed\x9f\xbf", 0), 3u);      // U+D7FF.
  EXPECT_EQ(Utf8SequenceLength("\xf0\x8f\xbf\xbf", 0), 0u);  // Overlong.
  EXPECT_EQ(Utf8SequenceLength("\xf4\x8f\xbf\xbf", 0), 4u);  // U+10FFFF.
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80", 0), 0u);  // Too high.
  EXPECT_EQ(Utf8SequenceLength("\xff", 0), 0u);
}

TEST(JsonWriterTest, IsValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xc3"));  // Truncated at the end.
  EXPECT_FALSE(
      IsValidUtf8("a\xed\xa0\x80"
                  "b"));  // A surrogate inside.
}

// A document with every kind of value: commas between members and
// elements only, keys escaped, doubles in their shortest round-trip form
// (0.1 prints as 0.1, 1/3 with its 17 digits), NaN and infinity as null.
TEST(JsonWriterDocumentTest, CommasNumbersAndNulls) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a\"b");
  w.Int(-3);
  w.Key("list");
  w.BeginArray();
  w.Double(0.1);
  w.Double(1.0 / 3);
  w.Double(std::nan(""));
  w.Double(-std::numeric_limits<double>::infinity());
  w.Bool(true);
  w.Null();
  w.TimeOrNull(INT64_MIN);
  w.TimeOrNull(42);
  w.BeginObject();
  w.EndObject();
  w.EndArray();
  w.Key("s");
  w.String("x\ny");
  w.EndObject();
  EXPECT_EQ(w.Take(),
            "{\"a\\\"b\":-3,\"list\":[0.1,0.3333333333333333,null,null,true,"
            "null,null,42,{}],\"s\":\"x\\u000ay\"}");
}

// kSpaced: one space after every ':' and ',', none inside empty
// containers, no line break; the values as in compact documents.
TEST(JsonWriterDocumentTest, SpacedSeparatorsAndHelpers) {
  JsonWriter w(JsonSpacing::kSpaced);
  w.BeginObject();
  w.Key("runs");
  const std::vector<std::string> runs = {"bm25", "r\"m3"};
  w.StringArray(runs);
  w.Key("none");
  w.StringArray({});
  w.Key("p");
  w.OptionalDouble(0.25);
  w.Key("q");
  w.OptionalDouble(std::nullopt);
  w.Key("seed");
  w.Uint(UINT64_MAX);
  w.Key("nested");
  w.BeginArray();
  w.BeginObject();
  w.Key("k");
  w.Int(1);
  w.EndObject();
  w.Int(2);
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(w.Take(),
            "{\"runs\": [\"bm25\", \"r\\\"m3\"], \"none\": [], \"p\": 0.25, "
            "\"q\": null, \"seed\": 18446744073709551615, \"nested\": [{\"k\": "
            "1}, 2]}");
}

// Replay's numbers: 17 significant digits (0.1 as 0.10000000000000001),
// null for NaN and infinities.
TEST(AppendJsonDoubleTest, SeventeenDigitsOrNull) {
  std::string out;
  AppendJsonDouble(&out, 0.1);
  out += ' ';
  AppendJsonDouble(&out, 2.0);
  out += ' ';
  AppendJsonDouble(&out, std::nan(""));
  out += ' ';
  AppendJsonDouble(&out, std::numeric_limits<double>::infinity());
  out += ' ';
  AppendJsonInt(&out, -42);
  EXPECT_EQ(out, "0.10000000000000001 2 null null -42");
}

}  // namespace
}  // namespace rankwatch
