#include "trec/qrels.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

Qrels ParseOk(std::string text, int threads = 1) {
  StatusOr<Qrels> q = Qrels::Parse(std::move(text), "q.txt", threads);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return std::move(q).value();
}

std::string QrelsParseError(std::string text, int threads = 1) {
  StatusOr<Qrels> q = Qrels::Parse(std::move(text), "q.txt", threads);
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

TEST(QrelsTest, ThreadsReportTheFilesFirstError) {
  for (int threads : {1, 2, 3, 8}) {
    // Query "b" sorts after "a" and is indexed later, but its duplicate
    // (line 3) comes first in the file; "a"'s is on line 6.
    EXPECT_EQ(QrelsParseError("b 0 x 1\n"
                              "a 0 x 1\n"
                              "b 0 x 0\n"
                              "c 0 y 1\n"
                              "a 0 z 1\n"
                              "a 0 z 1\n",
                              threads),
              "q.txt:3: duplicate docno 'x' for query b (first judged on "
              "line 1)")
        << "threads " << threads;
    // A line over the limit after 10,000 lines: more than one part of the
    // text is scanned (64 KiB at least each), and its number counts the
    // lines of the parts before it.
    std::string long_text;
    for (int i = 0; i < 10000; ++i)
      long_text += "q 0 d" + std::to_string(i) + " 1\n";
    long_text += std::string(kMaxLineBytes + 1, 'x') + "\nq 0 a 1\n";
    EXPECT_EQ(QrelsParseError(long_text, threads),
              "q.txt:10001: line longer than 1048576 bytes (the limit for a "
              "TREC line)")
        << "threads " << threads;
    // Malformed lines in three groups: the first in the file is reported.
    EXPECT_EQ(QrelsParseError("q1 0 a 1\nq2 0 b 1\nq3 0 c x\nq4 0 d 1\n"
                              "q5 0 e\nq6 0 f 1 1\n",
                              threads),
              "q.txt:3: grade 'x' is not an integer")
        << "threads " << threads;
  }
}

// One qid over 20,000 lines (about 300 KB): scanned in parts, its group
// continues across each cut, and a duplicate at the end names the first
// line, counted over the parts.
TEST(QrelsTest, AGroupCutByAPartContinuesInTheNext) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "q7 0 doc" + std::to_string(i) + " " + std::to_string(i % 3) + "\n";
  }
  for (int threads : {2, 3, 8}) {
    const Qrels q = ParseOk(text, threads);
    ASSERT_EQ(q.queries().size(), 1u) << "threads " << threads;
    const std::span<const metrics::Grade> grades = q.grades(q.queries()[0]);
    ASSERT_EQ(grades.size(), 20000u);
    for (int i = 0; i < 20000; ++i) ASSERT_EQ(grades[i], i % 3) << i;
    // Grades 1 and 2: two thirds of 20,000, rounded down (i % 3 != 0).
    EXPECT_EQ(q.queries()[0].num_positive, 13333);
    EXPECT_EQ(QrelsParseError(text + "q7 0 doc5 1\n", threads),
              "q.txt:20001: duplicate docno 'doc5' for query q7 (first judged "
              "on line 6)");
    // A group that starts in the last part numbers its lines on from the
    // parts before.
    EXPECT_EQ(QrelsParseError(text + "q8 0 a 1\nq8 0 b bad\n", threads),
              "q.txt:20002: grade 'bad' is not an integer");
  }
}

// Parsing on several threads builds the very index one thread builds:
// random files (qids interleaved, grades -1 to 3, comments and blank lines)
// parsed with 1 and with 2, 3 and 8 threads agree on every query, judgment
// and lookup.
TEST(QrelsTest, ThreadsBuildTheSingleThreadedIndex) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    std::string text;
    // Every fourth file is large enough (over 64 KiB) to be scanned in
    // parts, cut wherever its lines fall.
    const int lines = std::uniform_int_distribution<int>(
        0, round % 4 == 0 ? 20000 : 400)(rng);
    std::vector<std::pair<std::string, std::string>> judged;
    for (int i = 0; i < lines; ++i) {
      if (rng() % 20 == 0) {
        text += rng() % 2 == 0 ? "# note\n" : "\n";
        continue;
      }
      // A docno unique to its line: no duplicates.
      const std::string qid = "q" + std::to_string(rng() % 30);
      const std::string doc = "d" + std::to_string(i);
      judged.emplace_back(qid, doc);
      text +=
          qid + " 0 " + doc + " " + std::to_string(int(rng() % 5) - 1) + "\n";
    }
    const Qrels one = ParseOk(text, 1);
    for (int threads : {2, 3, 8}) {
      const Qrels many = ParseOk(text, threads);
      ASSERT_EQ(many.queries().size(), one.queries().size());
      for (size_t i = 0; i < one.queries().size(); ++i) {
        const QueryQrels& a = one.queries()[i];
        const QueryQrels& b = many.queries()[i];
        ASSERT_EQ(a.qid, b.qid);
        ASSERT_EQ(a.num_positive, b.num_positive);
        ASSERT_TRUE(std::ranges::equal(one.grades(a), many.grades(b)));
      }
      for (const auto& [qid, doc] : judged) {
        const QueryQrels* a = one.FindQuery(qid);
        const QueryQrels* b = many.FindQuery(qid);
        ASSERT_NE(b, nullptr) << qid;
        ASSERT_EQ(one.Lookup(*a, doc, HashBytes(doc)),
                  many.Lookup(*b, doc, HashBytes(doc)))
            << qid << " " << doc << " threads " << threads;
        ASSERT_EQ(many.Lookup(*b, doc + "x", HashBytes(doc + "x")), kNotInPool);
      }
    }
  }
}

// Lines that LineSplitter splits (under 64 bytes, at least 128 bytes of the
// text from their start) report the same errors as the byte-at-a-time path
// that ErrorsNameFileAndLine's short texts take.
TEST(QrelsTest, WindowedLinesReportTheSameErrors) {
  // 4 x 47 bytes: the 128 bytes LineSplitter wants after a line, and more.
  const std::string pad = "q9 0 padding-doc-for-the-window-of-64-bytes 1\n";
  const std::string tail = pad + pad + pad + pad;
  EXPECT_EQ(QrelsParseError("q1 0 a 1\nq1 0 b\n" + tail),
            "q.txt:2: expected 4 fields (qid iter docno grade), found 3");
  EXPECT_EQ(QrelsParseError("q1 0 a 1 extra x y\n" + tail),
            "q.txt:1: expected 4 fields (qid iter docno grade), found 7");
  EXPECT_EQ(QrelsParseError("q1 0 a high\n" + tail),
            "q.txt:1: grade 'high' is not an integer");
  EXPECT_EQ(QrelsParseError("q1 0 a 2147483648\n" + tail),
            "q.txt:1: grade '2147483648' is out of range (-2147483648 to "
            "2147483647)");
  EXPECT_EQ(QrelsParseError("q1 0 a 1\n\t\n# q1 0 a 1\nq1 0 a 0\n" + tail),
            "q.txt:4: duplicate docno 'a' for query q1 (first judged on line "
            "1)");
}

// Random qrels with every kind of spacing, comments, blank lines, docnos
// short and over 64 bytes (the byte path), and qids that share their first
// 8 bytes or differ by trailing NUL bytes (the sort's prefix keys): the
// queries come out in byte order, and every judgment, counted and looked up,
// is the one the test wrote (the last line of a docno wins nothing: docnos
// are unique per query here). Seed printed.
TEST(QrelsTest, RandomFilesIndexWhatTheyHold) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<std::string> qids = {"1",         "10",
                                         "2",         "abcdefgh",
                                         "abcdefgh0", "abcdefgh1",
                                         "abcdefg",   std::string("a\0", 2),
                                         "a",         std::string("a\0\0", 3),
                                         "\x80",      "z"};
  const char* const kSpaces[] = {" ", "\t", "  ", " \t ", "\v", "\f"};
  for (int round = 0; round < 10; ++round) {
    std::string text;
    std::map<std::string, std::map<std::string, int>> want;
    const int lines = std::uniform_int_distribution<int>(0, 3000)(rng);
    for (int i = 0; i < lines; ++i) {
      if (rng() % 25 == 0) {
        text += rng() % 2 == 0 ? "# note\n" : " \r\n";
        continue;
      }
      const std::string& qid = qids[rng() % qids.size()];
      std::string doc = "d" + std::to_string(i);
      if (rng() % 10 == 0) doc += std::string(70, 'x');
      const int grade = static_cast<int>(rng() % 5) - 1;
      want[qid][doc] = grade;
      const auto space = [&] { return std::string(kSpaces[rng() % 6]); };
      text += (rng() % 4 == 0 ? space() : "") + qid + space() + "0" + space() +
              doc + space() + std::to_string(grade) +
              (rng() % 4 == 0 ? "\r" : "") + "\n";
    }
    for (int threads : {1, 2}) {
      const Qrels q = ParseOk(text, threads);
      ASSERT_EQ(q.queries().size(), want.size());
      size_t i = 0;
      for (const auto& [qid, docs] : want) {  // std::map: byte order.
        const QueryQrels& query = q.queries()[i++];
        ASSERT_EQ(query.qid, qid);
        int positive = 0;
        for (const auto& [doc, grade] : docs) {
          positive += grade > 0 ? 1 : 0;
          const int expected = grade >= 0 ? grade : kUnjudgedInPool;
          ASSERT_EQ(q.Lookup(query, doc, HashBytes(doc)), expected) << doc;
        }
        EXPECT_EQ(query.num_positive, positive) << qid;
        EXPECT_EQ(q.grades(query).size(), docs.size()) << qid;
      }
    }
  }
}

}  // namespace
}  // namespace rankwatch::trec
