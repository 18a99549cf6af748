#include "daemon/cli/check_config_command.h"

#include <memory>
#include <string>
#include <string_view>

#include "base/exit_code.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kCommand = "check-config";

// The configuration is this command's input and the user's to fix: every
// failure, the output's included, is a usage error (exit 2), as
// docs/configuration.md promises.
int RunCheckConfig(const std::string& path) {
  StatusOr<config::Config> config = config::LoadConfigFile(path);
  if (!config.ok()) return Fail(kCommand, config.status(), ErrorSource::kUsage);
  const Status written = WriteStdout(config::FormatEffectiveConfig(*config));
  if (!written.ok()) return Fail(kCommand, written, ErrorSource::kUsage);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddCheckConfigCommand(CLI::App& app, int* exit_code) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "check-config",
      "Validate a configuration file and print the effective configuration "
      "(secrets masked)");
  cmd->add_option("FILE", *path, "YAML configuration file")->required();
  cmd->callback([path, exit_code] { *exit_code = RunCheckConfig(*path); });
}

}  // namespace rankwatch::cli
