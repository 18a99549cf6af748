// `rankwatch produce-synthetic`: synthetic A/B search traffic (results,
// clicks and purchases) produced to a Kafka cluster, realtime or as fast as
// possible. See docs/kafka-mock.md.
#ifndef RANKWATCH_DAEMON_CLI_PRODUCE_SYNTHETIC_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_PRODUCE_SYNTHETIC_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code` (0 ok, 2 bad usage, 3 when events were not
// delivered).
void AddProduceSyntheticCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_PRODUCE_SYNTHETIC_COMMAND_H_
