// `rankwatch check-config FILE`: validates a configuration file and prints
// the effective configuration (every key, defaults filled in, secrets
// masked) as YAML.
#ifndef RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code`: 0 when the file is valid, 2 when it is not (or
// cannot be read), with one line on stderr naming the file, line, column
// and key.
void AddCheckConfigCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_
