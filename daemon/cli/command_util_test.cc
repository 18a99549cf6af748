#include "daemon/cli/command_util.h"

#include "base/exit_code.h"
#include "base/status.h"
#include "gtest/gtest.h"

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

TEST(WriteStdoutTest, WritesTheText) {
  ::testing::internal::CaptureStdout();
  const Status s = WriteStdout("P_5 all 0.4000\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "P_5 all 0.4000\n");
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace rankwatch::cli
