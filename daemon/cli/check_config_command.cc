#include "daemon/cli/check_config_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "config/config_loader.h"
#include "daemon/cli/exit_codes.h"

namespace rankwatch::cli {

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "rankwatch check-config: %s\n", message.c_str());
  return kExitUsage;
}

int RunCheckConfig(const std::string& path) {
  StatusOr<config::Config> config = config::LoadConfigFile(path);
  if (!config.ok()) return Fail(config.status().message());
  const std::string out = config::FormatEffectiveConfig(*config);
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() ||
      std::fflush(stdout) != 0) {
    return Fail("cannot write the output");
  }
  return kExitOk;
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
