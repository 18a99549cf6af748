#include "daemon/cli/demo_prometheus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::cli {
namespace {

// A listening socket on 127.0.0.1 that answers one connection with a
// canned response, keeping the request it read (up to the blank line).
class OneShotServer {
 public:
  explicit OneShotServer(std::string response)
      : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "listen: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  OneShotServer(const OneShotServer&) = delete;
  OneShotServer& operator=(const OneShotServer&) = delete;
  ~OneShotServer() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  int port() const { return port_; }
  // The request as received; call after the client is done.
  std::string request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void Serve() {
    const int conn = ::accept(fd_, nullptr, nullptr);
    if (conn < 0) return;
    char buf[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(conn, buf, sizeof(buf), 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<size_t>(n));
    }
    size_t sent = 0;
    while (sent < response_.size()) {
      const ssize_t n = ::send(conn, response_.data() + sent,
                               response_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    ::close(conn);  // HTTP/1.0: the end of the body is the end of the data.
  }

  std::string response_;
  int fd_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

TEST(LocalHttpGetTest, SendsOneHttp10RequestAndReturnsTheBody) {
  OneShotServer server(
      "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nup 1\nx 2\n");
  StatusOr<std::string> body = LocalHttpGet(server.port(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ(*body, "up 1\nx 2\n");
  EXPECT_EQ(server.request(), "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1:" +
                                  std::to_string(server.port()) + "\r\n\r\n");
}

TEST(LocalHttpGetTest, ReadsABodyLargerThanOneReceive) {
  // 200,000 bytes: more than its 64 KiB receive buffer, so several reads.
  const std::string big(200000, 'm');
  OneShotServer server("HTTP/1.1 200 OK\r\n\r\n" + big);
  StatusOr<std::string> body = LocalHttpGet(server.port(), "/big");
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ(body->size(), 200000u);
  EXPECT_EQ(*body, big);
}

TEST(LocalHttpGetTest, OtherStatusIsAnErrorNamingIt) {
  OneShotServer server(
      "HTTP/1.0 503 Service Unavailable\r\n\r\nService Unavailable");
  StatusOr<std::string> body = LocalHttpGet(server.port(), "/-/ready");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(body.status().message(),
            "GET /-/ready: HTTP/1.0 503 Service Unavailable");
}

TEST(LocalHttpGetTest, AnswerWithoutHeadersEndIsAnError) {
  OneShotServer server("HTTP/1.0 200 OK\r\nContent-Length: 3");
  StatusOr<std::string> body = LocalHttpGet(server.port(), "/x");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kIoError);
  EXPECT_EQ(body.status().message(), "GET /x: no HTTP answer");
}

TEST(LocalHttpGetTest, NobodyListeningIsUnavailable) {
  // A port that was free a moment ago: bound, not listened on, closed.
  int port = 0;
  {
    OneShotServer server("");
    port = server.port();
    // Connect once so that the server's thread ends.
    (void)LocalHttpGet(port, "/");
  }
  StatusOr<std::string> body = LocalHttpGet(port, "/metrics");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(body.status().message(),
            "connecting to 127.0.0.1:" + std::to_string(port) +
                ": Connection refused");
}

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
      const std::string root =
          std::filesystem::path(*found).parent_path().parent_path().string();
      EXPECT_TRUE(exe_dir.string().starts_with(root)) << *found;
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
    StatusOr<std::string> config = LocalHttpGet(port, "/api/v1/status/config");
    ASSERT_TRUE(config.ok()) << config.status().message();
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
  EXPECT_FALSE(LocalHttpGet(port, "/-/ready").ok());
}

}  // namespace
}  // namespace rankwatch::cli
