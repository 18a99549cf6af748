#include "config/text.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::config {
namespace {

TEST(TextTest, PrintableEscapesControlCharacters) {
  EXPECT_EQ(Printable(""), "");
  EXPECT_EQ(Printable("join.window"), "join.window");
  EXPECT_EQ(Printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(Printable(std::string_view("\x01\x1f\x7f", 3)), "\\x01\\x1f\\x7f");
  EXPECT_EQ(Printable(std::string_view("a\0b", 3)), "a\\x00b");
  // Bytes above 0x7f (UTF-8) are kept.
  EXPECT_EQ(Printable("d\xc3\xa9j\xc3\xa0"), "d\xc3\xa9j\xc3\xa0");
}

TEST(TextTest, PrintableCutsAfterSixtyBytes) {
  const std::string sixty(60, 'x');
  EXPECT_EQ(Printable(sixty), sixty);
  EXPECT_EQ(Printable(sixty + "y"), sixty + "...");
  // The cut counts input bytes, before escaping.
  EXPECT_EQ(Printable(std::string(61, '\n')), [] {
    std::string expected;
    for (int i = 0; i < 60; ++i) expected += "\\n";
    return expected + "...";
  }());
}

TEST(TextTest, JoinNames) {
  const auto same = [](std::string_view s) { return std::string(s); };
  EXPECT_EQ(JoinNames(std::vector<std::string_view>{}, same), "");
  EXPECT_EQ(JoinNames(std::vector<std::string_view>{"a"}, same), "a");
  EXPECT_EQ(JoinNames(std::array<int, 3>{1, 2, 3},
                      [](int i) { return std::to_string(i * 10); }),
            "10, 20, 30");
}

TEST(TextTest, EditDistance) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("join", "join"), 0u);
  EXPECT_EQ(EditDistance("windw", "window"), 1u);  // One insertion.
  EXPECT_EQ(EditDistance("jion", "join"), 1u);     // One swap.
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  // Optimal string alignment, not full Damerau: "ca" -> "abc" is 3 (no
  // substring is edited twice), where Damerau-Levenshtein gives 2.
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);
}

TEST(TextTest, ClosestKey) {
  constexpr std::array<std::string_view, 4> kKnown = {"window", "mode",
                                                      "combine", "bucket"};
  EXPECT_EQ(ClosestKey("windw", kKnown), "window");
  EXPECT_EQ(ClosestKey("mdoe", kKnown), "mode");
  // max(1, size / 3) edits at most: "mod" (1 edit) is close, "xyz" is not.
  EXPECT_EQ(ClosestKey("mod", kKnown), "mode");
  EXPECT_EQ(ClosestKey("xyz", kKnown), std::nullopt);
  // "cmbn" is 3 edits from "combine"; 4 / 3 = 1 allowed.
  EXPECT_EQ(ClosestKey("cmbn", kKnown), std::nullopt);
  EXPECT_EQ(ClosestKey("anything", {}), std::nullopt);
  // Ties: the first known key wins.
  constexpr std::array<std::string_view, 2> kTied = {"ab", "ba"};
  EXPECT_EQ(ClosestKey("aa", kTied), "ab");
}

TEST(TextTest, IsIdentifier) {
  for (std::string_view ok : {"a", "_", "A_1", "KAFKA_PASSWORD", "__x"}) {
    EXPECT_TRUE(IsIdentifier(ok)) << ok;
  }
  for (std::string_view bad :
       {"", "1a", "a-b", "a b", "a.b", "a$", "d\xc3\xa9"}) {
    EXPECT_FALSE(IsIdentifier(bad)) << bad;
  }
}

TEST(TextTest, FormatNumberIsShortestAndExact) {
  EXPECT_EQ(FormatNumber(0.95), "0.95");
  EXPECT_EQ(FormatNumber(0.05), "0.05");
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(100), "100");
  EXPECT_EQ(FormatNumber(-2.5), "-2.5");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(1e300), "1e+300");
  // 0.1 + 0.2 is 0.30000000000000004 in binary64 (17 significant digits).
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatNumber(std::nan("")), "nan");
}

}  // namespace
}  // namespace rankwatch::config
