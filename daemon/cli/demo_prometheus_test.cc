#include "daemon/cli/demo_prometheus.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::SourceTree;

namespace rankwatch::cli {
namespace {

TEST(FindPrometheusRulesDirTest, FlagFolderNeedsBothFiles) {
  testing::TempDir dir;
  const std::string flag = dir.path();
  dir.Write("rules.yml", "groups: []\n");
  StatusOr<std::string> found = FindPrometheusRulesDir(flag);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(found.status().message(), "--prometheus-rules " + flag +
                                          ": no rules.yml and alerts.yml "
                                          "there");
  dir.Write("alerts.yml", "groups: []\n");
  found = FindPrometheusRulesDir(flag);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, flag);
}

// Without the flag: the nearest deploy/prometheus in the binary's folder
// or up to three above it (a build folder inside the source tree, as CI's
// build-test), else the installed folder; when none has the files, the
// error lists the places tried, the binary's own folder first.
TEST(FindPrometheusRulesDirTest, WithoutTheFlagLooksAboveTheBinary) {
  const std::filesystem::path exe_dir =
      std::filesystem::read_symlink("/proc/self/exe").parent_path();
  StatusOr<std::string> found = FindPrometheusRulesDir("");
  if (found.ok()) {
    EXPECT_TRUE(std::filesystem::is_regular_file(*found + "/rules.yml"));
    EXPECT_TRUE(std::filesystem::is_regular_file(*found + "/alerts.yml"));
    if (found->ends_with("/deploy/prometheus")) {
      // Above the binary (a build tree inside the source tree), else the
      // source tree it was built from (one outside).
      const std::string root =
          std::filesystem::path(*found).parent_path().parent_path().string();
      EXPECT_TRUE(exe_dir.string().starts_with(root) || root == SourceTree())
          << *found;
    } else {
      EXPECT_EQ(*found, "/usr/share/rankwatch/prometheus");
    }
    return;
  }
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  const std::string message = found.status().message();
  EXPECT_TRUE(message.starts_with(
      "the shipped rules.yml and alerts.yml were not found (tried " +
      (exe_dir / "deploy/prometheus").string() + ", " +
      (exe_dir.parent_path() / "deploy/prometheus").string() + ", "))
      << message;
  EXPECT_NE(message.find(", /usr/share/rankwatch/prometheus"),
            std::string::npos)
      << message;
  EXPECT_TRUE(message.ends_with("; name their folder with --prometheus-rules"))
      << message;
}

// Restores an environment variable on destruction.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DemoPrometheusTest, MissingBinaryIsNotFoundWithTheInstallHint) {
  testing::TempDir empty;
  ScopedEnv path("PATH", empty.path().c_str());
  auto p = DemoPrometheus::Start(9400, empty.path());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(p.status().message(),
            "prometheus not found on PATH (Debian: apt-get install "
            "prometheus)");
}

// A `prometheus` on PATH that exits at once, after a line on stderr: Start
// reports the exit with the log's last line instead of waiting 30 s.
TEST(DemoPrometheusTest, PrometheusExitingAtStartIsReportedWithItsLog) {
  testing::TempDir bin;
  const std::string script = bin.Write(
      "prometheus", "#!/bin/sh\necho 'bad flag: no such port' >&2\nexit 3\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ScopedEnv path("PATH", bin.path().c_str());
  const auto start = std::chrono::steady_clock::now();
  auto p = DemoPrometheus::Start(9400, bin.path());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(p.status().message(),
            "prometheus exited at start: bad flag: no such port");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// Prometheus goes on logging at level info after an error (stopping its
// managers): the error is the line reported, not the last one.
TEST(DemoPrometheusTest, ExitAtStartReportsTheLogsLastError) {
  testing::TempDir bin;
  const std::string script = bin.Write(
      "prometheus",
      "#!/bin/sh\n"
      "echo 'ts=1 caller=main.go:1 level=info msg=\"Starting Prometheus\"' "
      ">&2\n"
      "echo 'ts=2 caller=main.go:2 level=error msg=\"Error loading config\" "
      "err=\"bad rule\"' >&2\n"
      "echo 'ts=3 caller=main.go:3 level=info msg=\"See you next time!\"' "
      ">&2\n"
      "exit 1\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ScopedEnv path("PATH", bin.path().c_str());
  auto p = DemoPrometheus::Start(9400, bin.path());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "prometheus exited at start: ts=2 caller=main.go:2 level=error "
            "msg=\"Error loading config\" err=\"bad rule\"");
}

// Ready is what the log says, with no HTTP request: a `prometheus` that
// listens nowhere and logs the ready line after 1 s is ready then, not
// before; the destructor stops it.
TEST(DemoPrometheusTest, ReadyWhenTheLogSaysSo) {
  testing::TempDir bin;
  const std::string pid_file = bin.path() + "/pid";
  const std::string script = bin.Write(
      "prometheus",
      "#!/bin/sh\n"
      "echo $$ > " +
          pid_file +
          "\n"
          "echo 'ts=1 caller=main.go:1 level=info msg=\"TSDB started\"' >&2\n"
          "/bin/sleep 1\n"
          "echo 'ts=2 caller=main.go:973 level=info msg=\"Server is ready to "
          "receive web requests.\"' >&2\n"
          "exec /bin/sleep 60\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ScopedEnv path("PATH", bin.path().c_str());
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  {
    auto p = DemoPrometheus::Start(9400, bin.path());
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_GE(std::chrono::steady_clock::now() - start,
              std::chrono::seconds(1));
    pid = std::stoi(testing::ReadFile(pid_file));
    EXPECT_EQ(::kill(pid, 0), 0);  // Running.
  }
  // Stopped and reaped with its owner.
  EXPECT_NE(::kill(pid, 0), 0);
}

// Debian's Prometheus, when installed (scripts/install-deps.sh
// --prometheus): it runs with the config Start wrote (job "rankwatch"
// scraping 127.0.0.1:daemon_port every 2 s, the two rule files), and the
// destructor stops it.
TEST(DemoPrometheusTest, RunsPrometheusWithTheDemoConfigAndStopsIt) {
  if (::access("/usr/bin/prometheus", X_OK) != 0) {
    GTEST_SKIP() << "Debian's prometheus is not installed";
  }
  ScopedEnv path("PATH", "/usr/bin:/bin");
  testing::TempDir rules_dir;
  rules_dir.Write("rules.yml", "groups: []\n");
  rules_dir.Write("alerts.yml", "groups: []\n");
  const std::string& rules = rules_dir.path();
  int port = 0;
  {
    auto p = DemoPrometheus::Start(9419, rules);
    ASSERT_TRUE(p.ok()) << p.status().message();
    port = (*p)->port();
    EXPECT_EQ((*p)->url(), "http://127.0.0.1:" + std::to_string(port) + "/");
    // Ready when Start returns.
    auto ready = testing::HttpGet("127.0.0.1", port, "/-/ready");
    ASSERT_TRUE(ready.ok()) << ready.status().message();
    EXPECT_EQ(ready->status, 200) << ready->body;
    auto status = testing::HttpGet("127.0.0.1", port, "/api/v1/status/config");
    ASSERT_TRUE(status.ok()) << status.status().message();
    const std::string* config = &status->body;
    // Prometheus prints the loaded YAML back, inside a JSON string.
    for (const std::string& line :
         {std::string("scrape_interval: 2s"),
          std::string("evaluation_interval: 2s"),
          std::string("job_name: rankwatch"), std::string("- 127.0.0.1:9419"),
          std::filesystem::absolute(rules).string() + "/rules.yml",
          std::filesystem::absolute(rules).string() + "/alerts.yml"}) {
      EXPECT_NE(config->find(line), std::string::npos)
          << line << " in " << *config;
    }
  }
  // Stopped with its owner.
  EXPECT_FALSE(testing::HttpGet("127.0.0.1", port, "/-/ready", {},
                                std::chrono::milliseconds(2000))
                   .ok());
}

}  // namespace
}  // namespace rankwatch::cli
