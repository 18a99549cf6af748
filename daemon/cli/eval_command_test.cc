// `rankwatch eval` on compressed inputs, as a process of the real binary:
// gzip and zstd qrels and runs, compressed here with the `gzip` and `zstd`
// tools from the reference corpus (../shared/conformance, read in place),
// print the bytes the plain files print; damaged input is one line, exit 1;
// QRELS and RUN given the other way round say so.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::cli {
namespace {

using testing::CommandResult;
using testing::RunCommand;

const std::string kMain = std::string(RANKWATCH_CONFORMANCE_DIR) + "/main";

// `tool args... < in > out` through the shell; the tool's exit code.
int Shell(const std::string& script) {
  return RunCommand({"/bin/sh", "-c", script}).exit_code;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

CommandResult Eval(std::vector<std::string> args,
                   const std::string& input = "") {
  args.insert(args.begin(), {RANKWATCH_BINARY, "eval"});
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
