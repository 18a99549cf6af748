// What every subcommand does on its way out: report a failure on stderr as
// one line under the command's name and turn it into the process exit code
// (base/exit_code.h, the one mapping), or write its output to stdout with
// every error checked.
//
// Stateless functions; they write to the process's stderr and stdout.
#ifndef RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_
#define RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_

#include <CLI/CLI.hpp>
#include <string_view>

#include "base/exit_code.h"
#include "base/status.h"

namespace rankwatch::cli {

// Prints "rankwatch COMMAND: MESSAGE" on stderr and returns `code` as an
// integer.
int Fail(std::string_view command, std::string_view message, ExitCode code);

// A CLI11 check that the value is an integer >= `min` (up to int64's
// largest), failing with one short line ("must be an integer >= 1"), where
// CLI11's numeric ranges print a 300-digit bound.
CLI::Validator IntegerAtLeast(int64_t min);

// Prints "rankwatch COMMAND: " and the message of `status` (not OK) on
// stderr and returns ExitCodeFor(status.code(), source) as an integer.
int Fail(std::string_view command, const Status& status, ErrorSource source);

// Writes `text` to stdout and flushes it; an IoError when either fails (a
// closed pipe, a full disk).
[[nodiscard]] Status WriteStdout(std::string_view text);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_
