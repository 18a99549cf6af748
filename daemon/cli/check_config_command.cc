#include "daemon/cli/check_config_command.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/exit_code.h"
#include "base/strings.h"
#include "config/config_loader.h"
#include "config/key_positions.h"
#include "daemon/cli/command_util.h"
#include "daemon/http/http_server.h"
#include "daemon/http/tls.h"
#include "daemon/kafka/cluster_check.h"
#include "daemon/kafka/kafka_conf.h"
#include "daemon/server/daemon.h"
#include "trec/qrels.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kCheckConfigCommand = "check-config";
// --connect: how long the brokers have to answer.
constexpr std::chrono::seconds kConnectTimeout(10);

// Formats problems as the loader does, positions from the file's text.
class ProblemList {
 public:
  ProblemList(const std::string& path, std::string yaml)
      : path_(path), yaml_(std::move(yaml)) {}

  // "file:line:col: key: what" for the entry at `key` (its path
  // components, joined with '.' in the message).
  void Add(const std::vector<std::string>& key, config::NodePart part,
           std::string_view what) {
    std::string message = Printable(path_, std::string_view::npos);
    if (const std::optional<config::ConfigPosition> at =
            config::FindConfigKey(yaml_, key, part)) {
      message +=
          ":" + std::to_string(at->line) + ":" + std::to_string(at->column);
    }
    message += ": ";
    message += what;
    problems_.push_back(Status::InvalidArgument(std::move(message)));
  }

  std::vector<Status> Take() { return std::move(problems_); }

 private:
  const std::string& path_;
  std::string yaml_;
  std::vector<Status> problems_;
};

std::string JoinKey(const std::vector<std::string>& key) {
  std::string joined;
  for (const std::string& k : key) {
    if (!joined.empty()) joined += '.';
    joined += k;
  }
  return joined;
}

// The property librdkafka refused, pointed at in the file: a key of
// kafka.properties, or one of the two properties with keys of their own.
void CheckKafka(const config::Config& config, ProblemList* problems) {
  std::string refused;
  const Status s = kafka::CheckClientConfs(config, &refused);
  if (s.ok()) return;
  // SetAll's message already names kafka.properties.<name>.
  std::vector<std::string> key = {"kafka", "properties", refused};
  config::NodePart part = config::NodePart::kKey;
  if (!config.kafka.properties.contains(refused)) {
    if (refused == "bootstrap.servers") key = {"kafka", "bootstrap_servers"};
    if (refused == "group.id") key = {"kafka", "group_id"};
    part = config::NodePart::kValue;
  }
  problems->Add(key, part, s.message());
}

// A file the daemon opens at start: readable by this user, now.
void CheckReadable(const std::vector<std::string>& key, const std::string& file,
                   ProblemList* problems) {
  if (file.empty()) return;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    problems->Add(key, config::NodePart::kValue,
                  JoinKey(key) + ": cannot read '" +
                      Printable(file, std::string_view::npos) +
                      "': " + std::strerror(errno));
    return;
  }
  ::close(fd);
}

// run's Pipeline::Create() loads the qrels before anything is served; a
// file that is missing or malformed stops it.
void CheckQrels(const config::Config& config, ProblemList* problems) {
  const std::string& file = config.join.qrels_file;
  // "-" (stdin) cannot be read twice.
  if (config.join.mode != config::JoinMode::kQrels || file.empty() ||
      file == "-") {
    return;
  }
  const StatusOr<trec::Qrels> qrels = trec::Qrels::Load(file);
  if (!qrels.ok()) {
    problems->Add({"join", "qrels_file"}, config::NodePart::kValue,
                  "join.qrels_file: " + qrels.status().message());
  }
}

// http::HttpServer::Start() resolves the host with getaddrinfo() before it
// binds: a name that does not resolve stops run. Binding itself is not
// tried: the running daemon may hold the port.
void CheckListen(const config::Config& config, ProblemList* problems) {
  const Status s = http::CheckListenAddress(config.http.listen);
  if (!s.ok()) {
    problems->Add({"http", "listen"}, config::NodePart::kValue,
                  "http.listen: " + s.message());
  }
}

// Readable files may still not make a TLS setup (not PEM, an encrypted
// key, a key of another certificate): load them as run will.
void CheckTls(const config::Config& config, ProblemList* problems) {
  const config::TlsConfig& tls = config.http.tls;
  const http::TlsOptions options = server::HttpSecurityOf(config.http).tls;
  if (const Status s = http::TlsContext::ValidateOptions(options); !s.ok()) {
    problems->Add({"http", "tls"}, config::NodePart::kKey,
                  "http.tls: " + s.message());
    return;
  }
  if (!tls.enabled() || access(tls.cert_file.c_str(), R_OK) != 0 ||
      access(tls.key_file.c_str(), R_OK) != 0 ||
      (!tls.client_ca.empty() && access(tls.client_ca.c_str(), R_OK) != 0)) {
    return;  // Off, or CheckReadable said why.
  }
  const StatusOr<std::unique_ptr<http::TlsContext>> context =
      http::TlsContext::Create(options);
  if (!context.ok()) {
    problems->Add({"http", "tls"}, config::NodePart::kKey,
                  "http.tls: " + context.status().message());
  }
}

// A bcrypt hash that is not one (a truncated paste) stops run.
void CheckBasicAuth(const config::Config& config, ProblemList* problems) {
  if (!config.http.basic_auth.enabled()) return;
  const StatusOr<http::BasicAuth> created = http::BasicAuth::Create(
      server::HttpSecurityOf(config.http).users, SystemClock::Get());
  if (!created.ok()) {
    problems->Add({"http", "basic_auth"}, config::NodePart::kKey,
                  "http.basic_auth: " + created.status().message());
  }
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// --connect, on a valid configuration: what the brokers offer it, one line
// per finding. What went well follows the effective configuration on
// stdout as YAML comments (the output still parses); warnings and errors
// go to stderr. The cluster is not the configuration: an unreachable
// broker or a missing topic exits 1, as a failed run would (retrying may
// help), not 2.
int ConnectAndCheck(const config::Config& config) {
  const StatusOr<kafka::ClusterMetadata> cluster =
      kafka::FetchClusterMetadata(config.kafka, kConnectTimeout);
  if (!cluster.ok()) {
    return Fail(kCheckConfigCommand, cluster.status(), ErrorSource::kInput);
  }
  std::string found;
  bool failed = false;
  for (const kafka::ClusterFinding& f : kafka::CheckCluster(config, *cluster)) {
    switch (f.level) {
      case kafka::ClusterFinding::Level::kOk:
        found += "# " + f.message + "\n";
        break;
      case kafka::ClusterFinding::Level::kWarning:
        Fail(kCheckConfigCommand, "warning: " + f.message, ExitCode::kOk);
        break;
      case kafka::ClusterFinding::Level::kError:
        Fail(kCheckConfigCommand, f.message, ExitCode::kBadInput);
        failed = true;
        break;
    }
  }
  const Status written = WriteStdout(found);
  if (!written.ok())
    return Fail(kCheckConfigCommand, written, ErrorSource::kUsage);
  return ToInt(failed ? ExitCode::kBadInput : ExitCode::kOk);
}

// The configuration is this command's input and the user's to fix: every
// failure, the output's included, is a usage error (exit 2), as
// docs/configuration.md promises. --connect's findings on the cluster are
// not (see ConnectAndCheck).
int RunCheckConfig(const std::string& path, bool connect) {
  StatusOr<config::Config> config = config::LoadConfigFile(path);
  if (!config.ok())
    return Fail(kCheckConfigCommand, config.status(), ErrorSource::kUsage);
  const std::vector<Status> problems = CheckRunnable(path, *config);
  for (const Status& problem : problems) {
    Fail(kCheckConfigCommand, problem, ErrorSource::kUsage);
  }
  if (!problems.empty()) return ToInt(ExitCode::kUsage);
  const Status written = WriteStdout(config::FormatEffectiveConfig(*config));
  if (!written.ok())
    return Fail(kCheckConfigCommand, written, ErrorSource::kUsage);
  if (connect) return ConnectAndCheck(*config);
  return ToInt(ExitCode::kOk);
}

}  // namespace

std::vector<Status> CheckRunnable(const std::string& path,
                                  const config::Config& config) {
  ProblemList problems(path, ReadText(path));
  CheckKafka(config, &problems);
  CheckQrels(config, &problems);
  CheckReadable({"http", "tls", "cert_file"}, config.http.tls.cert_file,
                &problems);
  CheckReadable({"http", "tls", "key_file"}, config.http.tls.key_file,
                &problems);
  CheckReadable({"http", "tls", "client_ca"}, config.http.tls.client_ca,
                &problems);
  CheckTls(config, &problems);
  CheckBasicAuth(config, &problems);
  CheckListen(config, &problems);
  return problems.Take();
}

void AddCheckConfigCommand(CLI::App& app, int* exit_code) {
  auto path = std::make_shared<std::string>();
  auto connect = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "check-config",
      "Validate a configuration file as `run` would (Kafka client "
      "properties, referenced files, HTTP address) and print the effective "
      "configuration (secrets masked)");
  cmd->add_option("FILE", *path, "YAML configuration file")->required();
  cmd->add_flag("--connect", *connect,
                "Then connect to the Kafka brokers as `run` would (10 s at "
                "most) and check that the configured topics exist");
  cmd->callback([path, connect, exit_code] {
    *exit_code = RunCheckConfig(*path, *connect);
  });
}

}  // namespace rankwatch::cli
