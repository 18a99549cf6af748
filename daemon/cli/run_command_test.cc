// `rankwatch run` as a process: the exit codes of its start-up failures
// (README.md, "Exit codes"), and its pid file.
#include "daemon/cli/run_command.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/busy_port.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

using std::chrono::seconds;

using rankwatch::testing::BusyPort;

class RunCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<sim::MockCluster>> cluster =
        sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
  }

  // A valid configuration serving HTTP on `listen`.
  std::string WriteConfig(const std::string& listen) {
    return dir_.Write("rankwatch.yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                            R"("
  group_id: run-command-test
http:
  listen: ")" + listen + R"("
)");
  }

  rankwatch::testing::CommandResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {RankwatchBinary(), "run"});
    return rankwatch::testing::RunCommand(args, seconds(30));
  }

  rankwatch::testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
};

// A busy port is not a usage error: it may be free on the next try, and
// systemd's unit restarts on 1 but not on 2.
TEST_F(RunCommandTest, BusyListenPortExitsOne) {
  BusyPort busy;
  ASSERT_NE(busy.port(), 0);
  const std::string listen = "127.0.0.1:" + std::to_string(busy.port());
  const rankwatch::testing::CommandResult res =
      Run({"--config", WriteConfig(listen)});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(res.err.find("rankwatch run: cannot serve HTTP on " + listen),
            std::string::npos)
      << res.err;
}

TEST_F(RunCommandTest, BadConfigurationExitsTwo) {
  const std::string config = dir_.Write("bad.yaml", "join:\n  window: 5\n");
  const rankwatch::testing::CommandResult res = Run({"--config", config});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_NE(res.err.find("rankwatch run: " + config + ":2:11: join.window"),
            std::string::npos)
      << res.err;
  const rankwatch::testing::CommandResult missing =
      Run({"--config", dir_.path() + "/missing.yaml"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST_F(RunCommandTest, UnwritablePortFileExitsOne) {
  const std::string port_file = dir_.path() + "/no/such/dir/port";
  const rankwatch::testing::CommandResult res =
      Run({"--config", WriteConfig("127.0.0.1:0"), "--port-file", port_file});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(
      res.err.find("rankwatch run: cannot create '" + port_file + ".tmp."),
      std::string::npos)
      << res.err;
}

// The pid file names the daemon alone, for `kill -HUP "$(cat FILE)"`: it
// holds the process's id while it runs, a SIGHUP sent there reloads without
// stopping it, and the file is gone after a clean stop.
TEST_F(RunCommandTest, PidFileNamesTheProcessWhileItRuns) {
  const std::string pid_file = dir_.path() + "/rankwatch.pid";
  const std::string port_file = dir_.path() + "/port";
  const std::string err = dir_.path() + "/err";
  rankwatch::testing::ChildProcess daemon(
      {RankwatchBinary(), "run", "--config", WriteConfig("127.0.0.1:0"),
       "--pid-file", pid_file, "--port-file", port_file},
      dir_.path() + "/out", err);
  ASSERT_TRUE(daemon.started());
  ASSERT_TRUE(rankwatch::testing::WaitFor(
      [&] { return std::filesystem::exists(pid_file); }, seconds(20)))
      << rankwatch::testing::ReadFile(err);
  EXPECT_EQ(rankwatch::testing::ReadFile(pid_file),
            std::to_string(daemon.pid()) + "\n");
  daemon.Signal(SIGHUP);
  EXPECT_EQ(daemon.Wait(std::chrono::milliseconds(500)), std::nullopt)
      << rankwatch::testing::ReadFile(err);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(seconds(15)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(err);
  EXPECT_FALSE(std::filesystem::exists(pid_file));
}

TEST_F(RunCommandTest, UnwritablePidFileExitsOne) {
  const std::string pid_file = dir_.path() + "/no/such/dir/rankwatch.pid";
  const rankwatch::testing::CommandResult res =
      Run({"--config", WriteConfig("127.0.0.1:0"), "--pid-file", pid_file});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(res.err.find("rankwatch run: cannot create '" + pid_file + ".tmp."),
            std::string::npos)
      << res.err;
}

}  // namespace
}  // namespace rankwatch::cli
