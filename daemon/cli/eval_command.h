// `rankwatch eval`: trec_eval's common measures on TREC files, exact to
// trec_eval 10.0 by default, plus rankwatch's named definitions and JSON.
#ifndef RANKWATCH_DAEMON_CLI_EVAL_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_EVAL_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code` (0 ok, 1 bad input, 2 bad usage, 3 internal).
void AddEvalCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_EVAL_COMMAND_H_
