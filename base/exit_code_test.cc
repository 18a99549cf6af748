#include "base/exit_code.h"

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

// The documented numbers (README.md, "Exit codes"): scripts and systemd's
// RestartPreventExitStatus=2 depend on them.
TEST(ExitCodeTest, NumbersAreTheDocumentedOnes) {
  EXPECT_EQ(ToInt(ExitCode::kOk), 0);
  EXPECT_EQ(ToInt(ExitCode::kBadInput), 1);
  EXPECT_EQ(ToInt(ExitCode::kUsage), 2);
  EXPECT_EQ(ToInt(ExitCode::kInternal), 3);
}

TEST(ExitCodeTest, UserMistakesFollowTheSource) {
  for (StatusCode code :
       {StatusCode::kInvalidArgument, StatusCode::kNotFound,
        StatusCode::kAlreadyExists, StatusCode::kOutOfRange,
        StatusCode::kResourceExhausted, StatusCode::kIoError}) {
    SCOPED_TRACE(StatusCodeName(code));
    EXPECT_EQ(ExitCodeFor(code, ErrorSource::kUsage), ExitCode::kUsage);
    EXPECT_EQ(ExitCodeFor(code, ErrorSource::kInput), ExitCode::kBadInput);
  }
}

TEST(ExitCodeTest, UnavailableIsNeverAUsageError) {
  // `run` with a busy http.listen port: retrying later may succeed.
  EXPECT_EQ(ExitCodeFor(StatusCode::kUnavailable, ErrorSource::kUsage),
            ExitCode::kBadInput);
  EXPECT_EQ(ExitCodeFor(StatusCode::kUnavailable, ErrorSource::kInput),
            ExitCode::kBadInput);
}

TEST(ExitCodeTest, OkAndInternalIgnoreTheSource) {
  for (ErrorSource source : {ErrorSource::kUsage, ErrorSource::kInput}) {
    EXPECT_EQ(ExitCodeFor(StatusCode::kOk, source), ExitCode::kOk);
    EXPECT_EQ(ExitCodeFor(StatusCode::kInternal, source), ExitCode::kInternal);
  }
}

}  // namespace
}  // namespace rankwatch
