#include "daemon/cli/run_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/exit_code.h"
#include "base/file_util.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/logging.h"
#include "daemon/cli/signals.h"
#include "daemon/server/daemon.h"

namespace rankwatch::cli {

namespace {

// Shutdown must finish within 10 s of SIGTERM; leave a margin.
constexpr std::chrono::milliseconds kShutdownGrace(9000);

constexpr std::string_view kRunCommand = "run";

struct RunArgs {
  std::string config;
  std::string listen;
  std::string port_file;
  std::string pid_file;
};

// Removes a file the daemon wrote when it goes out of scope: a pid file
// left behind would name some other process after the daemon is gone.
class RemoveOnExit {
 public:
  RemoveOnExit() = default;
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;
  ~RemoveOnExit() {
    if (!path_.empty()) std::remove(path_.c_str());
  }

  void Set(std::string path) { path_ = std::move(path); }

 private:
  std::string path_;
};

int RunDaemon(const RunArgs& args) {
  StatusOr<config::Config> config = config::LoadConfigFile(args.config);
  if (!config.ok())
    return Fail(kRunCommand, config.status(), ErrorSource::kUsage);
  if (!args.listen.empty()) config->http.listen = args.listen;
  SetupLogging(config->logging);

  static std::atomic<bool> stop{false};
  static std::atomic<bool> reload{false};
  InstallStopHandlers(&stop);
  InstallReloadHandler(&reload);
  server::DaemonOptions options;
  options.config_path = args.config;
  options.listen_override = args.listen;
  options.reload_requested = &reload;
  options.apply_logging = [](const config::LoggingConfig& logging) {
    SetupLogging(logging);
  };
  StatusOr<std::unique_ptr<server::Daemon>> daemon =
      server::Daemon::Create(*config, std::move(options));
  // Built from the configuration, but a busy http.listen port (Unavailable)
  // maps to 1, not to the usage code: it may be free on the next try.
  if (!daemon.ok())
    return Fail(kRunCommand, daemon.status(), ErrorSource::kUsage);
  if (!args.port_file.empty()) {
    const Status written = WriteFileAtomically(
        args.port_file, std::to_string((*daemon)->http_port()) + "\n");
    if (!written.ok()) return Fail(kRunCommand, written, ErrorSource::kInput);
  }
  // The pid file is how a script or an operator reaches this process alone
  // (kill -HUP "$(cat rankwatch.pid)"), where `pidof rankwatch` also names
  // kafka-mock and the other tools. Written once the daemon serves.
  RemoveOnExit pid_file;
  if (!args.pid_file.empty()) {
    const Status written =
        WriteFileAtomically(args.pid_file, std::to_string(::getpid()) + "\n");
    if (!written.ok()) return Fail(kRunCommand, written, ErrorSource::kInput);
    pid_file.Set(args.pid_file);
  }
  LogStartup(*config, (*daemon)->http_port());
  StartShutdownWatchdog(&stop, kShutdownGrace);
  Status s = (*daemon)->Run(stop);
  if (!s.ok()) {
    spdlog::error("{}", s.message());
    return ToInt(ExitCodeFor(s.code(), ErrorSource::kInput));
  }
  spdlog::info("stopped");
  return ToInt(ExitCode::kOk);
}

}  // namespace

void SetLogLevel(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
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
  cmd->add_option("--pid-file", args->pid_file,
                  "Write the process id here once listening (for kill -HUP); "
                  "removed on exit");
  cmd->callback([args, exit_code] { *exit_code = RunDaemon(*args); });
}

}  // namespace rankwatch::cli
