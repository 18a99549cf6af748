#include "daemon/cli/run_command.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "config/config_loader.h"
#include "daemon/cli/exit_codes.h"
#include "daemon/cli/signals.h"
#include "daemon/server/daemon.h"

namespace rankwatch::cli {

namespace {

// Shutdown must finish within 10 s of SIGTERM; leave a margin.
constexpr std::chrono::milliseconds kShutdownGrace(9000);

struct RunArgs {
  std::string config;
  std::string listen;
  std::string port_file;
};

int RunDaemon(const RunArgs& args) {
  StatusOr<config::Config> config = config::LoadConfigFile(args.config);
  if (!config.ok()) {
    std::fprintf(stderr, "rankwatch run: %s\n",
                 config.status().message().c_str());
    return kExitUsage;
  }
  if (!args.listen.empty()) config->http.listen = args.listen;
  SetLogLevel(config->logging.level);

  static std::atomic<bool> stop{false};
  InstallStopHandlers(&stop);
  StatusOr<std::unique_ptr<server::Daemon>> daemon =
      server::Daemon::Create(*config);
  if (!daemon.ok()) {
    std::fprintf(stderr, "rankwatch run: %s\n",
                 daemon.status().message().c_str());
    return kExitUsage;
  }
  if (!args.port_file.empty() &&
      !WritePortFile(args.port_file, (*daemon)->http_port())) {
    std::fprintf(stderr, "rankwatch run: cannot write %s\n",
                 args.port_file.c_str());
    return kExitBadInput;
  }
  StartShutdownWatchdog(&stop, kShutdownGrace);
  Status s = (*daemon)->Run(stop);
  if (!s.ok()) {
    spdlog::error("{}", s.message());
    return kExitBadInput;
  }
  spdlog::info("stopped");
  return kExitOk;
}

}  // namespace

void SetLogLevel(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
}

bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Consume results and judgments from Kafka and serve the metrics");
  cmd->add_option("--config", args->config, "YAML configuration")->required();
  cmd->add_option("--listen", args->listen,
                  "HTTP address host:port (overrides http.listen)");
  cmd->add_option("--port-file", args->port_file,
                  "Write the bound HTTP port here once listening");
  cmd->callback([args, exit_code] { *exit_code = RunDaemon(*args); });
}

}  // namespace rankwatch::cli
