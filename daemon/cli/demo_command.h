// `rankwatch demo`: the README's main command. An in-process Kafka mock
// cluster, a synthetic traffic generator (variants A and B over a fixed query
// set, B slightly better, judgments with realistic delays, an optional
// injected regression) and the daemon on them, serving /metrics.
#ifndef RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand; its exit code goes to `*exit_code` (0 after
// Ctrl-C or --duration; 1 when the cluster or the daemon cannot start, a
// busy --listen port included; 2 bad flags; 3 internal error).
void AddDemoCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_
