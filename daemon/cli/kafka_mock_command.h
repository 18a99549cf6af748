// `rankwatch kafka-mock`: a Kafka mock cluster (librdkafka's, in memory, on
// loopback) as a standalone process, for trying rankwatch without a broker
// and for tests. See docs/kafka-mock.md.
#ifndef RANKWATCH_DAEMON_CLI_KAFKA_MOCK_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_KAFKA_MOCK_COMMAND_H_

#include <CLI/CLI.hpp>

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code` (0 after SIGTERM/SIGINT; 1 when the brokers cannot
// listen on loopback; 2 bad usage, a topic named twice or a bootstrap file
// that cannot be written; 3 when the cluster fails otherwise).
void AddKafkaMockCommand(CLI::App& app, int* exit_code);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_KAFKA_MOCK_COMMAND_H_
