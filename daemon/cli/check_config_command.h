// `rankwatch check-config [--connect] FILE`: validates a configuration file
// as `run` would, and prints the effective configuration (every key,
// defaults filled in, secrets masked) as YAML. With --connect it then
// connects to the Kafka brokers with run's client configuration and checks
// the configured topics (kafka/cluster_check.h), one line per finding.
#ifndef RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_
#define RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::cli {

// Registers the subcommand on `app`. When it runs, its process exit code is
// stored in `*exit_code`: 0 when the file is valid, 2 when it is not (or
// cannot be read), with one line on stderr per problem naming the file,
// line, column and key. With --connect, 1 when no broker can be reached
// ("cannot reach kafka at BOOTSTRAP (CAUSE)") or a configured topic is
// missing.
void AddCheckConfigCommand(CLI::App& app, int* exit_code);

// What `run` checks of a configuration beyond the loader, on `config` as
// loaded from `path`: that librdkafka takes the client properties
// (kafka::CheckClientConfs, nothing contacted), that join.qrels_file loads
// (qrels mode), that http.tls's files are readable and that http.listen's
// host resolves. One InvalidArgument per problem, worded as the loader's
// errors ("file:line:col: key: what"; the position left out when it cannot
// be found). Empty when none. Reads `path` again for the positions.
std::vector<Status> CheckRunnable(const std::string& path,
                                  const config::Config& config);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_CHECK_CONFIG_COMMAND_H_
