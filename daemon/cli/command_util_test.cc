// The shared exit path of every subcommand (Fail, WriteStdout, the swap
// hint), and the command line's errors as the real binary prints them: one
// line under the command's name, exit 2 (README.md, "Exit codes").
#include "daemon/cli/command_util.h"

#include <string>
#include <vector>

#include "base/exit_code.h"
#include "base/status.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

TEST(FailTest, PrintsOneLineUnderTheCommandName) {
  ::testing::internal::CaptureStderr();
  const int code = Fail("eval", "cannot read 'run.txt'", ExitCode::kBadInput);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "rankwatch eval: cannot read 'run.txt'\n");
  EXPECT_EQ(code, 1);
}

TEST(FailTest, MapsTheStatusThroughTheSharedTable) {
  ::testing::internal::CaptureStderr();
  // Same status code, two sources: a usage error (2) for the configuration,
  // bad input (1) for the data.
  EXPECT_EQ(Fail("replay", Status::IoError("cannot open c.yaml"),
                 ErrorSource::kUsage),
            2);
  EXPECT_EQ(Fail("replay", Status::IoError("cannot open r.jsonl"),
                 ErrorSource::kInput),
            1);
  // A busy port from a configuration step is still not a usage error.
  EXPECT_EQ(Fail("run", Status::Unavailable("cannot serve HTTP on :1"),
                 ErrorSource::kUsage),
            1);
  EXPECT_EQ(Fail("run", Status::Internal("bug"), ErrorSource::kInput), 3);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "rankwatch replay: cannot open c.yaml\n"
            "rankwatch replay: cannot open r.jsonl\n"
            "rankwatch run: cannot serve HTTP on :1\n"
            "rankwatch run: bug\n");
}

TEST(FailTest, NoCommandIsTheBinaryAlone) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Fail("", "unknown command 'x'", ExitCode::kUsage), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "rankwatch: unknown command 'x'\n");
}

// A qrels line has 4 fields, a run line 6.
constexpr char kSwapQrels[] = "q1 0 d1 1\nq1 0 d2 0\n";
constexpr char kSwapRun[] = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n";

TEST(WithSwapHintTest, HintsWhenTheRunReadsAsQrelsAndTheQrelsDoNot) {
  rankwatch::testing::TempDir dir;
  const std::string qrels = dir.Write("qrels.txt", kSwapQrels);
  const std::string run = dir.Write("run.txt", kSwapRun);
  // As eval reports `eval run.txt qrels.txt`: the run given as QRELS.
  const Status error = Status::InvalidArgument(
      run + ":1: expected 4 fields (qid iter docno grade), found 6");
  const std::vector<std::string> runs = {qrels};
  const Status hinted =
      WithSwapHint(error, run, runs, "rankwatch eval QRELS RUN");
  EXPECT_EQ(hinted.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(hinted.message(),
            run +
                ":1: expected 4 fields (qid iter docno grade), found 6 (are "
                "QRELS and RUN swapped? usage: rankwatch eval QRELS RUN)");
}

TEST(WithSwapHintTest, NoHintWhenTheFilesAreNotSwapped) {
  rankwatch::testing::TempDir dir;
  const std::string qrels = dir.Write("qrels.txt", kSwapQrels);
  const std::string run = dir.Write("run.txt", kSwapRun);
  const std::string message =
      run + ":1: expected 4 fields (qid iter docno grade), found 6";
  const Status error = Status::InvalidArgument(message);
  // Two run files: neither reads as qrels.
  std::vector<std::string> runs = {run};
  EXPECT_EQ(WithSwapHint(error, run, runs, "u").message(), message);
  // Two qrels files: the qrels read as qrels.
  runs = {qrels};
  EXPECT_EQ(WithSwapHint(error, qrels, runs, "u").message(), message);
  // Stdin cannot be read twice: no guess.
  runs = {"-"};
  EXPECT_EQ(WithSwapHint(error, run, runs, "u").message(), message);
  // Another error: not about field counts.
  const Status other = Status::IoError("cannot open '" + run + "'");
  runs = {qrels};
  EXPECT_EQ(WithSwapHint(other, run, runs, "u").message(), other.message());
}

TEST(WriteStdoutTest, WritesTheText) {
  ::testing::internal::CaptureStdout();
  const Status s = WriteStdout("P_5 all 0.4000\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "P_5 all 0.4000\n");
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// The command line's errors, from the real binary (main.cc hands its
// arguments to ParseCommandLine): the exact line and exit code 2.
class CommandLineTest : public ::testing::Test {
 protected:
  static rankwatch::testing::CommandResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), RankwatchBinary());
    return rankwatch::testing::RunCommand(args, std::chrono::seconds(30));
  }

  // Asserts that `args` exits 2 printing exactly `line` and a newline on
  // stderr, and nothing on stdout.
  static void ExpectUsageError(const std::vector<std::string>& args,
                               const std::string& line) {
    const rankwatch::testing::CommandResult r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err, line + "\n") << args[0];
    EXPECT_EQ(r.out, "") << args[0];
  }
};

constexpr char kCommands[] =
    "eval, compare, check-config, replay, run, demo, kafka-mock, "
    "produce-synthetic";

TEST_F(CommandLineTest, UnknownCommandSuggestsTheClosest) {
  // "evaluate" starts with "eval" (four edits away, so found as a prefix).
  ExpectUsageError({"evaluate", "q", "r"},
                   "rankwatch: unknown command 'evaluate' (did you mean "
                   "'eval'?)");
  // One transposition from "compare".
  ExpectUsageError({"comapre", "q", "r1", "r2"},
                   "rankwatch: unknown command 'comapre' (did you mean "
                   "'compare'?)");
  ExpectUsageError({"frobnicate"},
                   "rankwatch: unknown command 'frobnicate' "
                   "(commands: " +
                       std::string(kCommands) + ")");
  ExpectUsageError({}, "rankwatch: a command is required (commands: " +
                           std::string(kCommands) + ")");
}

TEST_F(CommandLineTest, UnknownOptionIsNamedUnderItsCommand) {
  // A one-letter flag gets no guess (every other is one edit away).
  ExpectUsageError({"eval", "-x", "a", "b"},
                   "rankwatch eval: unknown option '-x' (usage: rankwatch "
                   "eval [OPTIONS] QRELS RUN)");
  // Also when it leaves a required argument missing.
  ExpectUsageError({"eval", "-x", "a"},
                   "rankwatch eval: unknown option '-x' (usage: rankwatch "
                   "eval [OPTIONS] QRELS RUN)");
  ExpectUsageError({"eval", "--josn", "a", "b"},
                   "rankwatch eval: unknown option '--josn' (did you mean "
                   "'--json'?)");
  ExpectUsageError({"compare", "--baselin=rm3", "q", "r1", "r2"},
                   "rankwatch compare: unknown option '--baselin=rm3' (did "
                   "you mean '--baseline'?)");
  // One dash for a long name.
  ExpectUsageError({"eval", "-threads", "2", "a", "b"},
                   "rankwatch eval: unknown option '-threads' (did you mean "
                   "'--threads'?)");
  ExpectUsageError({"run", "--conifg", "c.yaml"},
                   "rankwatch run: unknown option '--conifg' (did you mean "
                   "'--config'?)");
  ExpectUsageError({"--verbose", "eval"},
                   "rankwatch: unknown option '--verbose' (see rankwatch "
                   "--help)");
}

TEST_F(CommandLineTest, MissingAndExtraArguments) {
  ExpectUsageError({"eval", "qrels.txt"},
                   "rankwatch eval: RUN is required (usage: rankwatch eval "
                   "[OPTIONS] QRELS RUN)");
  // QRELS is optional since --qrels (judges): the command says what it
  // needs.
  ExpectUsageError({"compare"},
                   "rankwatch compare: give a QRELS file and two runs or more "
                   "(or --qrels twice or more to compare judges)");
  ExpectUsageError({"run"},
                   "rankwatch run: --config is required (see rankwatch run "
                   "--help)");
  ExpectUsageError({"eval", "a", "b", "c"},
                   "rankwatch eval: unexpected argument 'c' (usage: rankwatch "
                   "eval [OPTIONS] QRELS RUN)");
  // CLI11's own message for a bad value, as one line under the command.
  ExpectUsageError({"eval", "--threads", "x", "a", "b"},
                   "rankwatch eval: --threads: must be an integer >= 0");
}

TEST_F(CommandLineTest, HelpAndVersionExitZero) {
  rankwatch::testing::CommandResult r = Run({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string(RANKWATCH_VERSION) + "\n");
  r = Run({"eval", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("QRELS"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace rankwatch::cli
