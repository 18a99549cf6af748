// `rankwatch demo`: the README's main command. An in-process Kafka mock
// cluster, a synthetic traffic generator (variants A and B over a fixed query
// set, B slightly better, judgments with realistic delays, an optional
// injected regression) and the daemon on them, serving /metrics.
#ifndef RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

void AddDemoCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_COMMAND_H_
