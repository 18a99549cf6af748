#include "base/exit_code.h"

namespace rankwatch {

namespace {

ExitCode UserError(ErrorSource source) {
  switch (source) {
    case ErrorSource::kUsage:
      return ExitCode::kUsage;
    case ErrorSource::kInput:
      return ExitCode::kBadInput;
  }
  return ExitCode::kInternal;  // Not reached: the switch is exhaustive.
}

}  // namespace

ExitCode ExitCodeFor(StatusCode code, ErrorSource source) {
  switch (code) {
    case StatusCode::kOk:
      return ExitCode::kOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kOutOfRange:
    case StatusCode::kResourceExhausted:
    case StatusCode::kIoError:
      return UserError(source);
    case StatusCode::kUnavailable:
      // A busy port or a broker that is down may be fine on the next try:
      // not a usage error, which supervisors do not retry.
      return ExitCode::kBadInput;
    case StatusCode::kInternal:
      return ExitCode::kInternal;
  }
  return ExitCode::kInternal;  // Not reached: the switch is exhaustive.
}

}  // namespace rankwatch
