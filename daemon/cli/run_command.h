// `rankwatch run`: the daemon. Consumes the results and judgments topics,
// joins and scores them, and serves the running metrics to Prometheus.
#ifndef RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand; its exit code goes to `*exit_code` (0 after a
// clean shutdown, 1 when consuming cannot start, 2 bad configuration).
void AddRunCommand(CLI::App& app, int* exit_code);

// Sets spdlog's level from a config name (trace, debug, info, ...).
void SetLogLevel(const std::string& level);

// Writes `port` to `path` atomically (temp file + rename), for tests and
// scripts that start the daemon on port 0.
bool WritePortFile(const std::string& path, int port);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_
