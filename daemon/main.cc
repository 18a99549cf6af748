// rankwatch: one binary, one subcommand per job. Untested glue: every
// subcommand lives (and is tested) in daemon/cli.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "base/exit_code.h"
#include "daemon/cli/check_config_command.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/compare_command.h"
#include "daemon/cli/demo_command.h"
#include "daemon/cli/eval_command.h"
#include "daemon/cli/kafka_mock_command.h"
#include "daemon/cli/logging.h"
#include "daemon/cli/produce_synthetic_command.h"
#include "daemon/cli/replay_command.h"
#include "daemon/cli/run_command.h"

int main(int argc, char** argv) {
  // Logs go to stderr: stdout carries command output (JSON, tables).
  spdlog::set_default_logger(spdlog::stderr_color_mt("rankwatch"));
  // RFC 3339 UTC text lines until a command applies its configuration.
  rankwatch::cli::SetupLogging(rankwatch::config::LoggingConfig{});
  CLI::App app{
      "rankwatch: live ranking-quality metrics (recall, precision, MRR, MAP, "
      "nDCG) from search-result and judgment streams"};
  app.set_version_flag("--version", RANKWATCH_VERSION);
  app.require_subcommand(1);
  int exit_code = rankwatch::ToInt(rankwatch::ExitCode::kOk);
  rankwatch::cli::AddEvalCommand(app, &exit_code);
  rankwatch::cli::AddCompareCommand(app, &exit_code);
  rankwatch::cli::AddCheckConfigCommand(app, &exit_code);
  rankwatch::cli::AddReplayCommand(app, &exit_code);
  rankwatch::cli::AddRunCommand(app, &exit_code);
  rankwatch::cli::AddDemoCommand(app, &exit_code);
  rankwatch::cli::AddKafkaMockCommand(app, &exit_code);
  rankwatch::cli::AddProduceSyntheticCommand(app, &exit_code);
  if (std::optional<int> code =
          rankwatch::cli::ParseCommandLine(app, argc, argv)) {
    return *code;
  }
  return exit_code;
}
