// `rankwatch run`: the daemon. Consumes the results and judgments topics,
// joins and scores them, and serves the running metrics to Prometheus.
#ifndef RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand; its exit code goes to `*exit_code` (0 after a
// clean shutdown; 1 when consuming or serving cannot start, a busy
// http.listen port included, or the port or pid file cannot be written; 2 bad
// configuration; 3 internal error).
void AddRunCommand(CLI::App& app, int* exit_code);

// Sets spdlog's level from a config name (trace, debug, info, ...).
void SetLogLevel(const std::string& level);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_RUN_COMMAND_H_
