// `rankwatch compare QRELS RUN...`: several runs evaluated with `eval`'s
// engine and compared with the first (or --baseline) by paired significance
// tests, corrected over the table, with rank correlations between measures
// and between runs (trec/compare.h; docs/compare.md).
#ifndef RANKWATCH_DAEMON_CLI_COMPARE_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_COMPARE_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code` (0 ok, 1 bad input, 2 bad usage, 3 internal).
void AddCompareCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_COMPARE_COMMAND_H_
