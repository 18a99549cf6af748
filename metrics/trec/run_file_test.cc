#include "metrics/trec/run_file.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::trec {
namespace {

MappedFile OpenOk(const std::string& path) {
  StatusOr<MappedFile> f = MappedFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

std::vector<RunEntry> Entries(const MappedFile& f, const RunIndex& index,
                              std::string_view qid) {
  std::vector<RunEntry> out;
  const RunQuery* q = index.FindQuery(qid);
  EXPECT_NE(q, nullptr) << qid;
  if (q == nullptr) return out;
  Status s = ParseRunQuery(f.data(), *q, f.path(), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(RunFileTest, IndexesInterleavedQueries) {
  testing::TempDir dir;
  MappedFile f = OpenOk(dir.Write("run.txt",
                                  "q1 Q0 a 1 3.0 r\n"
                                  "q1 Q0 b 2 +1 r extra fields ignored\n"
                                  "\n"
                                  "# comment\n"
                                  "q2 Q0 c 1 -2.5e-1 r\n"
                                  "q1 Q0 d 3 1e0 r"));  // No final newline.
  RunIndex index = RunIndex::Build(f, 1);
  ASSERT_EQ(index.queries().size(), 2u);
  EXPECT_EQ(index.queries()[0].qid, "q1");
  EXPECT_EQ(index.queries()[0].blocks.size(), 2u);
  std::vector<RunEntry> q1 = Entries(f, index, "q1");
  ASSERT_EQ(q1.size(), 3u);
  EXPECT_EQ(q1[0].doc(), "a");
  EXPECT_EQ(q1[1].score, 1.0);
  EXPECT_EQ(q1[2].doc(), "d");
  EXPECT_EQ(q1[2].score, 1.0);
  EXPECT_EQ(q1[2].line, 6u);
  std::vector<RunEntry> q2 = Entries(f, index, "q2");
  ASSERT_EQ(q2.size(), 1u);
  EXPECT_EQ(q2[0].score, -0.25);
  EXPECT_EQ(q2[0].line, 5u);
}

TEST(RunFileTest, ErrorsNameFileAndLine) {
  testing::TempDir dir;
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0\n",
       ":2: expected 6 fields (qid iter docno rank score run_id), found 5"},
      {"q1 Q0 a 1 high r\n", ":1: score 'high' is not a finite number"},
      {"q1 Q0 a 1 nan r\n", ":1: score 'nan' is not a finite number"},
      {"q1 Q0 a 1 1.0x r\n", ":1: score '1.0x' is not a finite number"},
      {"q1 Q0 a 1 +-1 r\n", ":1: score '+-1' is not a finite number"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Write("bad.txt", c.text);
    MappedFile f = OpenOk(path);
    RunIndex index = RunIndex::Build(f, 1);
    std::vector<RunEntry> out;
    Status s = ParseRunQuery(f.data(), index.queries()[0], f.path(), &out);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.message(), path + c.message);
  }
}

// A file big enough to be scanned in parallel chunks gives the same queries
// and entries as a sequential scan.
TEST(RunFileTest, ParallelScanMatchesSequential) {
  testing::TempDir dir;
  std::string text;
  for (int line = 0; text.size() < (6u << 20); ++line) {
    const int q = (line / 7) % 13;  // Runs of 7 lines, qids recurring.
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "q" + ....
    text += 'q';
    text += std::to_string(q);
    text += " Q0 doc" + std::to_string(line) + ' ' + std::to_string(line) +
            ' ' + std::to_string(line * 0.5) + " r\n";
  }
  MappedFile f = OpenOk(dir.Write("big.txt", text));
  RunIndex one = RunIndex::Build(f, 1);
  RunIndex four = RunIndex::Build(f, 4);
  ASSERT_EQ(one.queries().size(), 13u);
  ASSERT_EQ(four.queries().size(), 13u);
  for (const RunQuery& q : one.queries()) {
    std::vector<RunEntry> a = Entries(f, one, q.qid);
    std::vector<RunEntry> b = Entries(f, four, q.qid);
    ASSERT_EQ(a.size(), b.size()) << q.qid;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].doc(), b[i].doc());
      EXPECT_EQ(a[i].line, b[i].line);
      EXPECT_EQ(a[i].score, b[i].score);
    }
  }
}

TEST(RunFileTest, RanksByScoreThenDocnoDescending) {
  const char* docs[] = {"a", "b", "B", "c"};
  RunEntry a{1.0, docs[0], 1, 0, 1}, b{1.0, docs[1], 1, 0, 2},
      big_b{1.0, docs[2], 1, 0, 3}, c{2.0, docs[3], 1, 0, 4};
  EXPECT_TRUE(RanksBefore(c, a));      // Higher score first.
  EXPECT_TRUE(RanksBefore(b, a));      // Tie: "b" > "a" by bytes.
  EXPECT_TRUE(RanksBefore(b, big_b));  // 'b' (0x62) > 'B' (0x42).
  EXPECT_FALSE(RanksBefore(a, a));
}

}  // namespace
}  // namespace rankwatch::trec
