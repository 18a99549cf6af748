// `rankwatch eval` on compressed inputs, as a process of the real binary:
// gzip and zstd qrels and runs, compressed here with the `gzip` and `zstd`
// tools from the reference corpus (../shared/conformance, read in place),
// print the bytes the plain files print; damaged input is one line, exit 1;
// QRELS and RUN given the other way round say so. Measures named in
// rankwatch's and ir_measures' spellings print trec_eval's rows.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::ConformanceDir;
using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

using testing::CommandResult;
using testing::RunCommand;

const std::string kMain = std::string(ConformanceDir()) + "/main";

// `tool args... < in > out` through the shell; the tool's exit code.
int Shell(const std::string& script) {
  return RunCommand({"/bin/sh", "-c", script}).exit_code;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

CommandResult Eval(std::vector<std::string> args,
                   const std::string& input = "") {
  args.insert(args.begin(), {RankwatchBinary(), "eval"});
  return RunCommand(args, std::chrono::seconds(120), input);
}

class EvalCompressedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    qrels_ = kMain + "/qrels.txt";
    run_ = kMain + "/run.txt";
    const CommandResult plain = Eval({"-q", "-c", qrels_, run_});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    want_ = plain.out;
    ASSERT_GT(want_.size(), 1000u);
  }

  // `file` compressed by `command` ("gzip -c", "zstd -q -c") into `name`.
  std::string Compress(const std::string& command, const std::string& file,
                       const std::string& name) const {
    const std::string out = dir_.path() + "/" + name;
    EXPECT_EQ(Shell(command + " " + Quoted(file) + " > " + Quoted(out)), 0)
        << command;
    return out;
  }

  testing::TempDir dir_;
  std::string qrels_;
  std::string run_;
  std::string want_;
};

TEST_F(EvalCompressedTest, GzipAndZstdPrintThePlainBytes) {
  for (const auto& [tool, ext] :
       {std::pair{"gzip -c", ".gz"}, std::pair{"zstd -q -c", ".zst"}}) {
    SCOPED_TRACE(tool);
    const std::string q = Compress(tool, qrels_, std::string("qrels") + ext);
    const std::string r = Compress(tool, run_, std::string("run") + ext);
    CommandResult res = Eval({"-q", "-c", q, r});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(res.out, want_);
    // One compressed, one plain.
    res = Eval({"-q", "-c", qrels_, r});
    EXPECT_EQ(res.out, want_);
    // Through a pipe: zstd writes no content size there.
    res = Eval({"-q", "-c", q, "-"}, testing::ReadFile(r));
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(res.out, want_);
  }
  // zstd from a pipe: frames without a content size.
  const std::string piped = dir_.path() + "/run.piped.zst";
  ASSERT_EQ(Shell("zstd -q -c < " + Quoted(run_) + " > " + Quoted(piped)), 0);
  EXPECT_EQ(Eval({"-q", "-c", qrels_, piped}).out, want_);
}

TEST_F(EvalCompressedTest, DetectedByContentNotName) {
  // Gzip data in a file named .txt.
  const std::string r = Compress("gzip -c", run_, "run.txt");
  const CommandResult res = Eval({"-q", "-c", qrels_, r});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, want_);
}

TEST_F(EvalCompressedTest, ConcatenatedMembersAndFrames) {
  // The run in two halves, each compressed alone, then concatenated
  // (`gzip -c a > r; gzip -c b >> r`): gunzip reads one text, so does eval.
  const std::string a = dir_.path() + "/a", b = dir_.path() + "/b";
  ASSERT_EQ(Shell("head -n 3000 " + Quoted(run_) + " > " + Quoted(a) +
                  " && tail -n +3001 " + Quoted(run_) + " > " + Quoted(b)),
            0);
  for (const std::string tool : {"gzip -c", "zstd -q -c"}) {
    SCOPED_TRACE(tool);
    const std::string r = dir_.path() + "/multi";
    ASSERT_EQ(Shell(tool + " " + Quoted(a) + " > " + Quoted(r) + " && " + tool +
                    " " + Quoted(b) + " >> " + Quoted(r)),
              0);
    const CommandResult res = Eval({"-q", "-c", qrels_, r});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(res.out, want_);
  }
}

TEST_F(EvalCompressedTest, TruncatedIsOneLineAndExit1) {
  for (const auto& [tool, format] :
       {std::pair{"gzip -c", "gzip"}, std::pair{"zstd -q -c", "zstd"}}) {
    SCOPED_TRACE(tool);
    const std::string whole = Compress(tool, run_, "whole");
    const std::string cut = dir_.path() + "/run.txt.cut";
    ASSERT_EQ(Shell("head -c 20000 " + Quoted(whole) + " > " + Quoted(cut)), 0);
    const CommandResult res = Eval({"-q", "-c", qrels_, cut});
    EXPECT_EQ(res.exit_code, 1);
    EXPECT_EQ(res.out, "");
    EXPECT_EQ(res.err, "rankwatch eval: " + cut + ": truncated " + format +
                           " data (unexpected end of file)\n");
  }
  // A damaged qrels file: bytes of the middle overwritten.
  const std::string q = Compress("gzip -c", qrels_, "qrels.gz");
  ASSERT_EQ(Shell("printf 'XXXXXXXXXXXXXXXX' | dd of=" + Quoted(q) +
                  " bs=1 seek=5000 conv=notrunc status=none"),
            0);
  const CommandResult res = Eval({"-q", "-c", q, run_});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err.rfind("rankwatch eval: " + q + ": corrupt gzip data: ", 0),
            0u)
      << res.err;
  EXPECT_EQ(res.err.find('\n'), res.err.size() - 1);
}

// The rows of `report` (trec_eval's text output) whose measure is `name`.
std::string RowsOf(const std::string& report, const std::string& name) {
  std::string rows;
  size_t start = 0;
  while (start < report.size()) {
    size_t end = report.find('\n', start);
    if (end == std::string::npos) end = report.size();
    const std::string line = report.substr(start, end - start);
    const size_t blank = line.find_first_of(" \t");
    if (line.substr(0, blank) == name) rows += line + "\n";
    start = end + 1;
  }
  return rows;
}

// rankwatch's (ndcg@10), ir_measures' (nDCG@10) and the printed
// (ndcg_cut_10) names of nDCG at 10 select trec_eval's ndcg_cut.10: the
// ndcg_cut_10 rows that trec_eval 10.0 printed for the reference corpus
// (te10.c.focused.txt, `trec_eval -q -c $FOCUS`), byte for byte.
TEST(EvalMeasureNamesTest, EverySpellingPrintsTrecEvalsRows) {
  const std::string qrels = kMain + "/qrels.txt";
  const std::string run = kMain + "/run.txt";
  const std::string want =
      RowsOf(testing::ReadFile(kMain + "/te10.c.focused.txt"), "ndcg_cut_10");
  ASSERT_GT(want.size(), 1000u);
  for (const std::string spelling :
       {"ndcg_cut.10", "ndcg@10", "nDCG@10", "ndcg_cut_10", "NDCG@10"}) {
    SCOPED_TRACE(spelling);
    const CommandResult r = Eval({"-q", "-c", "-m", spelling, qrels, run});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, want);
  }
  // ir_measures' AP@10 is map_cut.10 and RR is recip_rank.
  const std::string reference =
      testing::ReadFile(kMain + "/te10.c.focused.txt");
  CommandResult r = Eval({"-q", "-c", "-m", "AP@10", qrels, run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, RowsOf(reference, "map_cut_10"));
  r = Eval({"-q", "-c", "-m", "RR", qrels, run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, RowsOf(reference, "recip_rank"));
}

TEST(EvalMeasureNamesTest, AMissIsOneLineWithASuggestion) {
  const std::string qrels = kMain + "/qrels.txt";
  const std::string run = kMain + "/run.txt";
  CommandResult r = Eval({"-m", "nDCG@1O", qrels, run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch eval: unknown measure 'nDCG@1O' (did you mean "
            "'nDCG@10'?)\n");
  EXPECT_TRUE(r.out.empty());
  r = Eval({"-m", "ndcg_cutt.10", qrels, run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch eval: unknown measure 'ndcg_cutt.10' (did you mean "
            "'ndcg_cut.10'?)\n");
  r = Eval({"-m", "ERR@10", qrels, run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch eval: measure 'ERR@10': ir_measures' ERR has no exact "
            "equivalent in rankwatch (the ones that do are listed in "
            "docs/metrics.md)\n");
}

TEST(EvalSwappedTest, HintsAtSwappedQrelsAndRun) {
  testing::TempDir dir;
  const std::string qrels = dir.Write("qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n");
  const std::string run =
      dir.Write("run.txt", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n");
  CommandResult res = Eval({run, qrels});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.out, "");
  EXPECT_EQ(res.err, "rankwatch eval: " + run +
                         ":1: expected 4 fields (qid iter docno grade), found "
                         "6 (are QRELS and RUN swapped? usage: rankwatch eval "
                         "QRELS RUN)\n");
  // The same run twice is no swap: the error alone.
  res = Eval({run, run});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err, "rankwatch eval: " + run +
                         ":1: expected 4 fields (qid iter docno grade), found "
                         "6\n");
  // The right way round, P_1 = 1 (d1, ranked first, is relevant).
  res = Eval({"-m", "P.1", qrels, run});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, "P_1                   \tall\t1.0000\n");
}

}  // namespace
}  // namespace rankwatch::cli
