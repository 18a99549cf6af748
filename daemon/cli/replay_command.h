// `rankwatch replay`: runs the streaming pipeline over JSON-lines files of
// results and judgments, merged by event time, and prints the final
// aggregates (the same numbers the daemon computes from the same events).
#ifndef RANKWATCH_DAEMON_CLI_REPLAY_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_REPLAY_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand; its exit code goes to `*exit_code` (0 ok, 1 bad
// input file, including a file of no events or only rejected ones, 2 bad
// configuration or flags: no input, or --qrels in impression mode).
void AddReplayCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_REPLAY_COMMAND_H_
