// What every subcommand does on its way in and out: parse the command line,
// turning CLI11's errors into the same one line as every other failure;
// report a failure on stderr as one line under the command's name and turn
// it into the process exit code (base/exit_code.h, the one mapping); hint at
// swapped QRELS and RUN arguments (eval, compare); write the output to
// stdout with every error checked.
//
// Stateless functions; they write to the process's stderr and stdout.
#ifndef RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_
#define RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/exit_code.h"
#include "base/status.h"

namespace rankwatch::cli {

// Prints "rankwatch COMMAND: MESSAGE" on stderr and returns `code` as an
// integer. An empty `command` (no subcommand known yet) prints
// "rankwatch: MESSAGE".
int Fail(std::string_view command, std::string_view message, ExitCode code);

// A CLI11 check that the value is an integer >= `min` (up to int64's
// largest), failing with one short line ("must be an integer >= 1"), where
// CLI11's numeric ranges print a 300-digit bound.
CLI::Validator IntegerAtLeast(int64_t min);

// Prints "rankwatch COMMAND: " and the message of `status` (not OK) on
// stderr and returns ExitCodeFor(status.code(), source) as an integer.
int Fail(std::string_view command, const Status& status, ErrorSource source);

// Parses `argv` into `app` (the root, with one level of subcommands), which
// runs the chosen subcommand's callback. Returns nullopt when it did;
// otherwise the exit code to return from main(): 0 after --help or
// --version (printed on stdout by CLI11), kUsage after a bad command line.
// That one is reported as one line on stderr under the command it concerns,
// where CLI11 prints two without the command's name:
//   rankwatch: unknown command 'evaluate' (did you mean 'eval'?)
//   rankwatch compare: unknown option '--baselin' (did you mean
//   '--baseline'?)
//   rankwatch eval: RUN is required (usage: rankwatch eval [OPTIONS] QRELS
//   RUN)
std::optional<int> ParseCommandLine(CLI::App& app, int argc,
                                    const char* const* argv);

// `error`, from reading the qrels file `qrels` and the run files `runs`,
// with " (are QRELS and RUN swapped? usage: USAGE)" appended when they look
// swapped: `error` is about a line's field count (a qrels line has 4, a
// run line 6), `qrels` does not read as qrels and one of `runs` does. Files
// are read again only then, and never stdin ("-"), which cannot be.
[[nodiscard]] Status WithSwapHint(const Status& error, const std::string& qrels,
                                  std::span<const std::string> runs,
                                  std::string_view usage);

// Writes `text` to stdout and flushes it; an IoError when either fails (a
// closed pipe, a full disk).
[[nodiscard]] Status WriteStdout(std::string_view text);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_COMMAND_UTIL_H_
