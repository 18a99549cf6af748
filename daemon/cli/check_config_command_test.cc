// `rankwatch check-config` as a process: it rejects what `run` rejects,
// with one line per problem pointing at the file, line and column, and
// exit code 2; `run` is started on the same files to show it does reject
// them. Positions are counted by hand in the YAML written here (1-based).
#include "daemon/cli/check_config_command.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

using rankwatch::testing::CommandResult;
using std::chrono::seconds;

// Nothing listens on port 1: run's consumer would only retry in the
// background, and every case here fails before it matters.
constexpr char kKafka[] =
    "kafka:\n"
    "  bootstrap_servers: 127.0.0.1:1\n";

class CheckConfigTest : public ::testing::Test {
 protected:
  CommandResult CheckConfig(const std::string& config) {
    return rankwatch::testing::RunCommand(
        {RankwatchBinary(), "check-config", config}, seconds(60));
  }
  CommandResult Run(const std::string& config) {
    return rankwatch::testing::RunCommand(
        {RankwatchBinary(), "run", "--config", config}, seconds(60));
  }

  // check-config's stderr is exactly `line`, and the exit code 2.
  void ExpectOneLine(const std::string& config, const std::string& line) {
    const CommandResult res = CheckConfig(config);
    EXPECT_EQ(res.exit_code, 2) << res.err;
    EXPECT_EQ(res.err, "rankwatch check-config: " + line + "\n");
    EXPECT_EQ(res.out, "");
  }

  rankwatch::testing::TempDir dir_;
};

TEST_F(CheckConfigTest, GoodConfigPasses) {
  const std::string qrels = dir_.Write("q.qrels", "q1 0 d1 1\n");
  const std::string config =
      dir_.Write("good.yaml", std::string(kKafka) +
                                  "  properties:\n"
                                  "    security.protocol: plaintext\n"
                                  "join:\n"
                                  "  mode: qrels\n"
                                  "  qrels_file: " +
                                  qrels +
                                  "\n"
                                  "http:\n"
                                  "  listen: localhost:0\n");
  const CommandResult res = CheckConfig(config);
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.err, "");
  EXPECT_NE(res.out.find("qrels_file: \"" + qrels + "\"\n"), std::string::npos)
      << res.out;
}

TEST_F(CheckConfigTest, TlsFilesThatAreNotPemAreRefusedAsRunRefusesThem) {
  const std::string cert = dir_.Write("cert.pem", "not a certificate\n");
  const std::string key = dir_.Write("key.pem", "not a key\n");
  const std::string config = dir_.Write(
      "tls.yaml", std::string(kKafka) + "http:\n  listen: 127.0.0.1:0\n" +
                      "  tls:\n    cert_file: " + cert +
                      "\n    key_file: " + key + "\n");
  // Line 5, column 3: the `tls` key.
  const CommandResult res = CheckConfig(config);
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.err.rfind("rankwatch check-config: " + config +
                              ":5:3: http.tls: TLS certificate file '" + cert +
                              "': not a PEM certificate chain",
                          0),
            0u)
      << res.err;
  const CommandResult run = Run(config);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("not a PEM certificate chain"), std::string::npos)
      << run.err;
}

// Issue 24: what run would refuse about the endpoint's security, check-config
// refuses first: a cipher list with a name OpenSSL does not know (it would
// drop it silently), and a truncated bcrypt hash (it would otherwise be
// taken as a plaintext password).
TEST_F(CheckConfigTest, BadCipherSuiteAndTruncatedBcryptHashAreRefused) {
  const std::string ciphers =
      dir_.Write("ciphers.yaml",
                 std::string(kKafka) +
                     "http:\n  listen: 127.0.0.1:0\n"
                     "  tls:\n    cert_file: c.pem\n    key_file: k.pem\n"
                     "    cipher_suites: ECDHE-RSA-AES128-GCM-SHA256:NOPE\n");
  // Line 5, column 3: the `tls` key.
  const CommandResult res = CheckConfig(ciphers);
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_NE(res.err.find(ciphers + ":5:3: http.tls: TLS cipher suites "),
            std::string::npos)
      << res.err;
  EXPECT_NE(res.err.find("'NOPE' matches no TLS 1.2 cipher suite"),
            std::string::npos)
      << res.err;
  // 59 characters: one short of a bcrypt hash (`htpasswd -nbBC 5 user
  // pass`, as in daemon/http/basic_auth_test.cc, its last character cut);
  // '$' doubled against ${ENV} substitution.
  const std::string hash =
      "$$2y$$05$$9D3RZhN8zNEwoD0HdNcERegCbIwxlBV9/Fzh7Qp3V0auR311I0AR";
  const std::string auth =
      dir_.Write("auth.yaml", std::string(kKafka) +
                                  "http:\n  listen: 127.0.0.1:0\n"
                                  "  basic_auth:\n    users:\n      prom: '" +
                                  hash + "'\n");
  const CommandResult bad = CheckConfig(auth);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find(auth + ":5:3: http.basic_auth: "), std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("prom"), std::string::npos) << bad.err;
  // The secret is never echoed.
  EXPECT_EQ(bad.err.find("9D3RZhN8zNEwoD0H"), std::string::npos) << bad.err;
}

TEST_F(CheckConfigTest, MisspeltKafkaPropertyPointsAtItsKey) {
  const std::string config =
      dir_.Write("typo.yaml", std::string(kKafka) +
                                  "  properties:\n"
                                  "    securty.protocol: SSL\n");
  // Line 4, column 5: the key, after four spaces.
  ExpectOneLine(config, config +
                            ":4:5: kafka.properties.securty.protocol: No "
                            "such configuration property: "
                            "\"securty.protocol\"");
  const CommandResult run = Run(config);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("kafka.properties.securty.protocol: No such "
                         "configuration property"),
            std::string::npos)
      << run.err;
}

TEST_F(CheckConfigTest, MissingQrelsFilePointsAtItsValue) {
  const std::string missing = dir_.path() + "/missing.qrels";
  const std::string config = dir_.Write("qrels.yaml", std::string(kKafka) +
                                                          "join:\n"
                                                          "  mode: qrels\n"
                                                          "  qrels_file: " +
                                                          missing + "\n");
  // Line 5, column 15: after "  qrels_file: " (14 characters).
  ExpectOneLine(config, config + ":5:15: join.qrels_file: cannot open '" +
                            missing + "': No such file or directory");
  const CommandResult run = Run(config);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(
      run.err.find("cannot open '" + missing + "': No such file or directory"),
      std::string::npos)
      << run.err;
}

TEST_F(CheckConfigTest, UnresolvableListenHostPointsAtItsValue) {
  // .invalid never resolves (RFC 2606).
  const std::string config =
      dir_.Write("listen.yaml", std::string(kKafka) +
                                    "http:\n"
                                    "  listen: no-such-host.invalid:9464\n");
  const CommandResult res = CheckConfig(config);
  EXPECT_EQ(res.exit_code, 2) << res.err;
  // Line 4, column 11: after "  listen: "; the resolver's own words follow.
  const std::string prefix = "rankwatch check-config: " + config +
                             ":4:11: http.listen: cannot resolve "
                             "'no-such-host.invalid': ";
  EXPECT_EQ(res.err.substr(0, prefix.size()), prefix) << res.err;
  EXPECT_EQ(res.err.find('\n'), res.err.size() - 1) << res.err;
  // run fails on it too, as unavailable (exit 1: it may resolve later).
  const CommandResult run = Run(config);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("cannot serve HTTP on no-such-host.invalid:9464"),
            std::string::npos)
      << run.err;
}

TEST_F(CheckConfigTest, MalformedListenAddressIsTheLoadersError) {
  const std::string config =
      dir_.Write("port.yaml", std::string(kKafka) +
                                  "http:\n"
                                  "  listen: 127.0.0.1:99999\n");
  const std::string line =
      config +
      ":4:11: http.listen: port '99999' is not a number from 0 to "
      "65535";
  ExpectOneLine(config, line);
  const CommandResult run = Run(config);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err, "rankwatch run: " + line + "\n");
}

TEST_F(CheckConfigTest, EveryProblemGetsItsLine) {
  const std::string config = dir_.Write(
      "all.yaml", std::string(kKafka) +
                      "  properties:\n"
                      "    securty.protocol: SSL\n"
                      "http:\n"
                      "  listen: 127.0.0.1:0\n"
                      "  tls:\n"
                      "    cert_file: " +
                      dir_.path() + "/no-cert.pem\n" +
                      "    key_file: " + dir_.path() + "/no-key.pem\n");
  const CommandResult res = CheckConfig(config);
  EXPECT_EQ(res.exit_code, 2) << res.err;
  const std::string head = "rankwatch check-config: " + config;
  EXPECT_EQ(res.err,
            head +
                ":4:5: kafka.properties.securty.protocol: No such "
                "configuration property: \"securty.protocol\"\n" +
                head + ":8:16: http.tls.cert_file: cannot read '" +
                dir_.path() + "/no-cert.pem': No such file or directory\n" +
                head + ":9:15: http.tls.key_file: cannot read '" + dir_.path() +
                "/no-key.pem': No such file or directory\n");
}

// --connect against librdkafka's mock cluster (in this process, on
// loopback): the effective configuration, then what was found as YAML
// comments; a missing topic is an error line naming the closest existing
// one, and exit 1 (the cluster, not the file, is what to fix).
class CheckConfigConnectTest : public CheckConfigTest {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->CreateTopic("results", 3).ok());
    ASSERT_TRUE(cluster_->CreateTopic("judgments", 3).ok());
  }
  std::string Config(const std::string& bootstrap,
                     const std::string& judgments) {
    return dir_.Write("connect.yaml",
                      "kafka:\n  bootstrap_servers: " + bootstrap +
                          "\n  judgments_topic: " + judgments + "\n");
  }
  CommandResult Connect(const std::string& config) {
    return rankwatch::testing::RunCommand(
        {RankwatchBinary(), "check-config", "--connect", config}, seconds(60));
  }
  std::unique_ptr<sim::MockCluster> cluster_;
};

TEST_F(CheckConfigConnectTest, FindsTheBrokerAndTopics) {
  const std::string bootstrap = cluster_->bootstrap_servers();
  const CommandResult res = Connect(Config(bootstrap, "judgments"));
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.err, "");
  // Without --connect, the same YAML and nothing more.
  const CommandResult plain = CheckConfig(Config(bootstrap, "judgments"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(res.out, plain.out + "# kafka: reached " + bootstrap +
                         ", 1 broker: 1 at " + bootstrap +
                         "\n"
                         "# kafka: topic 'results' (kafka.results_topic): 3 "
                         "partitions\n"
                         "# kafka: topic 'judgments' (kafka.judgments_topic): "
                         "3 partitions\n");
}

TEST_F(CheckConfigConnectTest, MissingTopicFailsWithTheClosestName) {
  const std::string bootstrap = cluster_->bootstrap_servers();
  const CommandResult res = Connect(Config(bootstrap, "judgement"));
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_EQ(res.err,
            "rankwatch check-config: kafka: topic 'judgement' "
            "(kafka.judgments_topic) not found at " +
                bootstrap + " (did you mean 'judgments'?)\n");
  EXPECT_NE(res.out.find("# kafka: topic 'results' (kafka.results_topic): 3 "
                         "partitions\n"),
            std::string::npos)
      << res.out;
}

// Nothing listens on port 1: one line, exit 1, within seconds (librdkafka
// reports the refused connection at once; the bound is 10 s).
TEST_F(CheckConfigConnectTest, UnreachableBrokerIsOneLine) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult res = Connect(Config("127.0.0.1:1", "judgments"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(8));
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_EQ(res.err,
            "rankwatch check-config: cannot reach kafka at 127.0.0.1:1 "
            "(Connection refused)\n");
  // The configuration itself is valid: its YAML was printed.
  EXPECT_NE(res.out.find("bootstrap_servers: \"127.0.0.1:1\""),
            std::string::npos)
      << res.out;
  // Without --connect nothing is contacted: exit 0.
  EXPECT_EQ(CheckConfig(Config("127.0.0.1:1", "judgments")).exit_code, 0);
}

}  // namespace
}  // namespace rankwatch::cli
