#include "trec/qrels.h"

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

Qrels ParseOk(std::string text) {
  StatusOr<Qrels> q = Qrels::Parse(std::move(text), "q.txt");
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return std::move(q).value();
}

std::string QrelsParseError(std::string text) {
  StatusOr<Qrels> q = Qrels::Parse(std::move(text), "q.txt");
  EXPECT_FALSE(q.ok());
  return q.ok() ? "" : q.status().message();
}

TEST(QrelsTest, IndexesQueriesInStrcmpOrder) {
  Qrels q = ParseOk(
      "9 0 a 1\n"
      "# a comment\n"
      "\n"
      "10 0 b 2\n"
      "9 0 c -1\n"
      "  10\t0 d 0  \r\n");
  ASSERT_EQ(q.queries().size(), 2u);
  EXPECT_EQ(q.queries()[0].qid, "10");  // strcmp: "10" < "9".
  EXPECT_EQ(q.queries()[1].qid, "9");
  const QueryQrels* nine = q.FindQuery("9");
  ASSERT_NE(nine, nullptr);
  EXPECT_EQ(q.Lookup(*nine, "a", HashBytes("a")), 1);
  // A negative grade is "in pool, unjudged" (trec_eval's -2), a doc without
  // a judgment is outside the pool (-1); the grade is kept as is in the
  // query's grades.
  EXPECT_EQ(q.Lookup(*nine, "c", HashBytes("c")), kUnjudgedInPool);
  EXPECT_EQ(q.Lookup(*nine, "zz", HashBytes("zz")), kNotInPool);
  ASSERT_EQ(q.grades(*nine).size(), 2u);
  EXPECT_EQ(q.grades(*nine)[1], -1);
  EXPECT_EQ(q.FindQuery("10")->num_positive, 1);
  EXPECT_EQ(q.FindQuery("11"), nullptr);
}

TEST(QrelsTest, NoTrailingNewline) {
  Qrels q = ParseOk("q1 0 a 1");
  EXPECT_EQ(q.queries().size(), 1u);
}

TEST(QrelsTest, ErrorsNameFileAndLine) {
  EXPECT_EQ(QrelsParseError("q1 0 a 1\nq1 0 b\n"),
            "q.txt:2: expected 4 fields (qid iter docno grade), found 3");
  EXPECT_EQ(QrelsParseError("q1 0 a 1 extra\n"),
            "q.txt:1: expected 4 fields (qid iter docno grade), found 5");
  EXPECT_EQ(QrelsParseError("q1 0 a high\n"),
            "q.txt:1: grade 'high' is not an integer");
  EXPECT_EQ(QrelsParseError("q1 0 a 2147483648\n"),
            "q.txt:1: grade '2147483648' is out of range (-2147483648 to "
            "2147483647)");
  EXPECT_EQ(QrelsParseError("q1 0 a 1.5\n"),
            "q.txt:1: grade '1.5' is not an integer");
  EXPECT_EQ(QrelsParseError("q1 0 a 99999999999\n"),
            "q.txt:1: grade '99999999999' is out of range (-2147483648 to "
            "2147483647)");
  EXPECT_EQ(QrelsParseError("q1 0 a 1\nq2 0 a 1\n\nq1 0 a 0\n"),
            "q.txt:4: duplicate docno 'a' for query q1 (first judged on line "
            "1)");
}

}  // namespace
}  // namespace rankwatch::trec
