// `rankwatch run` with http.tls, http.basic_auth and logging.format json, as
// an operator runs it: the endpoint answers HTTPS only with the right
// credentials (the probes without), SIGHUP reloads, and the JSON log lines
// carry the startup facts and never the password. Kafka is not needed: the
// brokers are unreachable and the endpoint serves regardless. curl (a
// client nobody here wrote) and the `openssl` tool (the certificate) are
// the peers.
#include <signal.h>
#include <simdjson.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::RunCommand;

constexpr char kPassword[] = "s3cret-Pw";

class DaemonSecurityE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // scripts/install-deps.sh installs both: their absence is a failure.
    openssl_ = Which("openssl");
    curl_ = Which("curl");
    ASSERT_FALSE(openssl_.empty()) << "openssl not found";
    ASSERT_FALSE(curl_.empty()) << "curl not found";
    const testing::CommandResult made =
        RunCommand({openssl_, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    dir_.path() + "/key.pem", "-out", dir_.path() + "/cert.pem",
                    "-days", "1", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }

  // curl over HTTPS with the test's CA: the HTTP status code and the body.
  std::pair<int, std::string> Get(const std::string& path,
                                  const std::string& user = "") {
    std::vector<std::string> argv = {
        curl_,
        "-s",
        "-w",
        "\n%{http_code}",
        "--cacert",
        dir_.path() + "/cert.pem",
        "https://127.0.0.1:" + std::to_string(port_) + path};
    if (!user.empty()) {
      argv.push_back("-u");
      argv.push_back(user);
    }
    const testing::CommandResult r = RunCommand(argv, 20s);
    const size_t nl = r.out.rfind('\n');
    if (nl == std::string::npos) return {0, r.out};
    return {std::atoi(r.out.c_str() + nl + 1), r.out.substr(0, nl)};
  }

  // The program's path, found through the shell's PATH search.
  static std::string Which(const std::string& program) {
    const testing::CommandResult r =
        RunCommand({"/bin/sh", "-c", "command -v " + program});
    if (r.exit_code != 0) return "";
    return r.out.substr(0, r.out.find('\n'));
  }

  testing::TempDir dir_;
  std::string openssl_;
  std::string curl_;
  int port_ = 0;
};

TEST_F(DaemonSecurityE2eTest, HttpsBasicAuthJsonLogsAndReload) {
  const std::string config =
      dir_.Write("rankwatch.yaml",
                 "kafka:\n  bootstrap_servers: 127.0.0.1:1\n"
                 "http:\n  listen: 127.0.0.1:0\n"
                 "  tls:\n    cert_file: " +
                     dir_.path() + "/cert.pem\n    key_file: " + dir_.path() +
                     "/key.pem\n"
                     "  basic_auth:\n    username: prom\n"
                     "    password: ${RANKWATCH_TEST_PASSWORD}\n"
                     "logging:\n  format: json\n");
  const std::string port_file = dir_.path() + "/port";
  testing::ChildProcess daemon(
      {RankwatchBinary(), "run", "--config", config, "--port-file", port_file},
      dir_.path() + "/out", dir_.path() + "/err",
      {std::string("RANKWATCH_TEST_PASSWORD=") + kPassword});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        port_ = std::atoi(testing::ReadFile(port_file).c_str());
        return port_ > 0;
      },
      30s))
      << testing::ReadFile(dir_.path() + "/err");

  EXPECT_EQ(Get("/metrics").first, 401);
  EXPECT_EQ(Get("/metrics", "prom:wrong").first, 401);
  const auto [code, body] = Get("/metrics", std::string("prom:") + kPassword);
  EXPECT_EQ(code, 200);
  EXPECT_NE(body.find("\nprocess_start_time_seconds "), std::string::npos);
  EXPECT_EQ(Get("/healthz").first, 200);  // Probes need no credentials.
  EXPECT_EQ(Get("/api/v1/summary").first, 401);
  // The three 401s above are counted, and exported.
  EXPECT_NE(
      Get("/metrics", std::string("prom:") + kPassword)
          .second.find("\nrankwatch_http_unauthorized_requests_total 3\n"),
      std::string::npos);

  daemon.Signal(SIGHUP);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Get("/metrics", std::string("prom:") + kPassword)
                   .second.find(
                       "rankwatch_config_reloads_total{result="
                       "\"success\"} 1") != std::string::npos;
      },
      10s));
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(20s), 0);

  // Every line is a JSON object with an RFC 3339 UTC time; the startup
  // line names the facts; the password appears nowhere.
  const std::string log = testing::ReadFile(dir_.path() + "/err");
  EXPECT_EQ(log.find(kPassword), std::string::npos) << log;
  std::istringstream lines(log);
  std::string line;
  bool started = false;
  int parsed = 0;
  simdjson::dom::parser parser;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    // librdkafka's own lines go through the logger too (kafka_conf.cc).
    EXPECT_NE(line.front(), '%') << line;
    // The shutdown watchdog writes raw to stderr: logging may be what
    // hangs. With the brokers unreachable the consumer's close runs into it.
    if (line.starts_with("rankwatch: shutdown")) continue;
    simdjson::dom::element e;
    ASSERT_EQ(parser.parse(line).get(e), simdjson::SUCCESS) << line;
    ++parsed;
    const std::string_view time = e["time"].get_string().value();
    EXPECT_EQ(time.size(), 24u) << line;  // 2026-11-22T21:37:33.225Z
    EXPECT_EQ(time.back(), 'Z') << line;
    if (e["message"].get_string().value() == "rankwatch started") {
      started = true;
      EXPECT_EQ(e["http_address"].get_string().value(),
                "https://127.0.0.1:" + std::to_string(port_));
      EXPECT_EQ(e["brokers"].get_string().value(), "127.0.0.1:1");
      EXPECT_EQ(e["tls"].get_bool().value(), true);
      EXPECT_EQ(e["basic_auth"].get_bool().value(), true);
    }
  }
  EXPECT_TRUE(started) << log;
  EXPECT_GE(parsed, 3) << log;
}

}  // namespace
}  // namespace rankwatch
