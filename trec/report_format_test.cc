#include "trec/report_format.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

TEST(ReportFormatTest, Numbers) {
  // 0.1 is 0.1000000000000000055511151231257827 as a double: 17
  // significant digits print it so that it reads back the same.
  EXPECT_EQ(Exact(0.1, "null"), "0.10000000000000001");
  EXPECT_EQ(Exact(std::nan(""), "null"), "null");
  EXPECT_EQ(Exact(std::nan(""), ""), "");
  EXPECT_EQ(Exact(std::numeric_limits<double>::infinity(), "null"), "1e999");
  EXPECT_EQ(Exact(-std::numeric_limits<double>::infinity(), "null"), "-1e999");
  EXPECT_EQ(Fixed(2.0 / 3), "0.6667");
  EXPECT_EQ(Fixed(std::nan("")), "-");
  EXPECT_EQ(Signed(0.25), "+0.2500");
  EXPECT_EQ(Signed(-0.25), "-0.2500");
  EXPECT_EQ(PValue(0.04321), "0.0432");
  EXPECT_EQ(PValue(0.00001234), "1.2e-05");
  EXPECT_EQ(PValue(0), "<1e-300");
  EXPECT_EQ(Int(-42), "-42");
}

TEST(ReportFormatTest, Table) {
  std::string out;
  AppendTable({{"run", "P_10"}, {"bm25-long", "0.5"}, {"x", ""}}, &out);
  EXPECT_EQ(out,
            "run        P_10\n"
            "bm25-long   0.5\n"
            "x\n");
}

}  // namespace
}  // namespace rankwatch::trec
