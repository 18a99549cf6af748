// The process exit codes of every rankwatch subcommand, and the one mapping
// from a failed Status to them (README.md, "Exit codes", documents both).
//
// Pure functions over enums; thread-safe.
#ifndef RANKWATCH_BASE_EXIT_CODE_H_
#define RANKWATCH_BASE_EXIT_CODE_H_

#include "base/status.h"

namespace rankwatch {

enum class ExitCode : int {
  kOk = 0,
  // The run failed on what it was given or where it runs: input data that
  // is malformed or unreadable, an output that cannot be written, a peer
  // (Kafka broker, HTTP port) that is unavailable. Retrying may help.
  kBadInput = 1,
  // Bad flags or configuration: the same command fails again until the
  // user changes it (systemd's unit does not restart on it).
  kUsage = 2,
  // A bug or an unexpected failure.
  kInternal = 3,
};

// What the failing step was working on. It decides what the codes of user
// mistakes (kInvalidArgument, kNotFound, kIoError, ...) mean: the same
// "cannot read FILE" is a usage error for the configuration file and bad
// input for a TREC run file.
enum class ErrorSource {
  kUsage,  // The command line and the configuration.
  kInput,  // The data the command processes, and what it writes.
};

// The exit code for a step that ended with `code`:
//   kOk                                            -> kOk
//   kInvalidArgument, kNotFound, kAlreadyExists,
//   kOutOfRange, kResourceExhausted, kIoError      -> kUsage from a kUsage
//                                                     step, kBadInput from
//                                                     a kInput one
//   kUnavailable (a busy port, a peer down)        -> kBadInput: never a
//                                                     usage error, whatever
//                                                     the step
//   kInternal                                      -> kInternal
ExitCode ExitCodeFor(StatusCode code, ErrorSource source);

// The integer a process returns from main().
constexpr int ToInt(ExitCode code) { return static_cast<int>(code); }

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_EXIT_CODE_H_
