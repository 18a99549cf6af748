#include "base/strings.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

TEST(AppendDecimalTest, AppendsTheDigitsAfterWhatIsThere) {
  std::string out = "id-";
  AppendDecimal(&out, 0);
  AppendDecimal(&out, 42);
  AppendDecimal(&out, -7);
  EXPECT_EQ(out, "id-042-7");
  out.clear();
  // The extremes of int64_t: 2^63 - 1 and -2^63.
  AppendDecimal(&out, std::numeric_limits<int64_t>::max());
  out += ' ';
  AppendDecimal(&out, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(out, "9223372036854775807 -9223372036854775808");
}

TEST(EqualsIgnoreCaseTest, FoldsAsciiLettersOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-length"));
  EXPECT_TRUE(EqualsIgnoreCase("GZIP", "gzip"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("gzip", "gzi"));
  EXPECT_FALSE(EqualsIgnoreCase("gzip", "x-gzip"));
  // '@' (0x40) and '`' (0x60) sit next to the letters but are not folded;
  // neither are '[' (0x5b) and '{' (0x7b).
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  // Non-ASCII bytes compare exactly: "É" (C3 89) is not "é" (C3 A9).
  EXPECT_FALSE(EqualsIgnoreCase("\xc3\x89", "\xc3\xa9"));
  EXPECT_TRUE(EqualsIgnoreCase("\xc3\xa9", "\xc3\xa9"));
}

TEST(EqualsIgnoreCaseTest, ComparesEmbeddedNulBytes) {
  EXPECT_TRUE(EqualsIgnoreCase(std::string_view("A\0b", 3),
                               std::string_view("a\0B", 3)));
  EXPECT_FALSE(EqualsIgnoreCase(std::string_view("a\0b", 3),
                                std::string_view("a\0c", 3)));
}

TEST(TrimBlanksTest, RemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(TrimBlanks("  gzip\t"), "gzip");
  EXPECT_EQ(TrimBlanks("\t q=0.5 ; x \t"), "q=0.5 ; x");
  EXPECT_EQ(TrimBlanks("gzip"), "gzip");
  EXPECT_EQ(TrimBlanks(" \t "), "");
  EXPECT_EQ(TrimBlanks(""), "");
}

TEST(SplitOnTest, KeepsEmptyParts) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitOn("a,b", ','), (V{"a", "b"}));
  EXPECT_EQ(SplitOn("a,,b,", ','), (V{"a", "", "b", ""}));
  EXPECT_EQ(SplitOn("", ','), (V{""}));
  EXPECT_EQ(SplitOn("1=3,2=9", ','), (V{"1=3", "2=9"}));
}

TEST(TrimBlanksTest, KeepsLineBreaks) {
  EXPECT_EQ(TrimBlanks(" a\r\n"), "a\r\n");
  EXPECT_EQ(TrimBlanks("\na "), "\na");
}

TEST(PrintableTest, EscapesControlCharactersAndCuts) {
  EXPECT_EQ(Printable("plain text"), "plain text");
  EXPECT_EQ(Printable(std::string_view("a\0b\nc\td\x1b[31m\x7f", 13)),
            "a\\x00b\\nc\\td\\x1b[31m\\x7f");
  // UTF-8 passes unchanged.
  EXPECT_EQ(Printable("d\xc3\xa9j\xc3\xa0"), "d\xc3\xa9j\xc3\xa0");
  // Cut after max_bytes (60 by default) input bytes.
  EXPECT_EQ(Printable("abcdef", 4), "abcd...");
  EXPECT_EQ(Printable(std::string(61, 'x')), std::string(60, 'x') + "...");
  // npos: never cut (file names, whole messages).
  EXPECT_EQ(Printable(std::string(100, 'x'), std::string_view::npos),
            std::string(100, 'x'));
  // C1 controls (U+009B, a CSI to some terminals) as their two bytes; the
  // letters around them (U+00A0, U+00E9) pass.
  EXPECT_EQ(Printable("a\xc2\x9b"
                      "31mb\xc2\x80\xc2\xa0\xc3\xa9"),
            "a\\xc2\\x9b31mb\\xc2\\x80\xc2\xa0\xc3\xa9");
}

// The issue's query text: an OSC that retitles the window, a bell, a
// colour; line breaks and tabs of the report stay.
TEST(TerminalSafeTest, EscapesControlsButKeepsLines) {
  EXPECT_EQ(TerminalSafe("q\x1b]0;PWNED\x07\x1b[31mRED\tx\r\ny\n"),
            "q\\x1b]0;PWNED\\x07\\x1b[31mRED\tx\\x0d\ny\n");
  EXPECT_EQ(TerminalSafe(std::string(100, 'x')), std::string(100, 'x'));
  EXPECT_EQ(TerminalSafe("\xc2\x9b"), "\\xc2\\x9b");
  EXPECT_EQ(TerminalSafe("d\xc3\xa9j\xc3\xa0"), "d\xc3\xa9j\xc3\xa0");
}

// Four significant digits with a sign, as C's "%+.4g" writes them.
TEST(SignedFigureTest, FourSignificantDigitsWithASign) {
  EXPECT_EQ(SignedFigure(0.022236), "+0.02224");
  EXPECT_EQ(SignedFigure(-12.3456), "-12.35");
  EXPECT_EQ(SignedFigure(0.0000151), "+1.51e-05");
  EXPECT_EQ(SignedFigure(0), "+0");
  EXPECT_EQ(SignedInterval(-0.023361, 0.067834), "[-0.02336, +0.06783]");
  EXPECT_EQ(FormatPercent(0.95), "95%");
  EXPECT_EQ(FormatPercent(0.975), "97.5%");
  EXPECT_EQ(FormatPercent(0.123456), "12.35%");
}

}  // namespace
}  // namespace rankwatch
