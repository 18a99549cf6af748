// The deployment files in deploy/ (Kubernetes, systemd, Docker), read from
// the source tree at run time, checked against each other and against
// rankwatch itself: the ConfigMap's configuration must load with rankwatch's
// own loader, given only the environment the Deployment provides; the port
// it listens on must be the one the container, the probes, the Service, the
// PodMonitor and the image expose; the configuration path must be the same
// in the Deployment, the image and the systemd unit; the PrometheusRule is
// what its generator makes of the rule files; the .dockerignore sends Docker
// what the Dockerfile copies and nothing else; and so on.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config_loader.h"
#include "tests/testing/paths.h"

using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = SourceTree();
const fs::path kKubernetesDir = kSourceDir / "deploy" / "kubernetes";

// The daemon's shutdown bound: on SIGTERM it exits within this many seconds
// (daemon/cli/run_command.cc), so every stop timeout must be longer.
constexpr int kShutdownBoundSeconds = 10;

// The value placed in the environment for every variable the Deployment
// sets (secrets included).
constexpr char kInjectedValue[] = "injected-by-test";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// A scalar's text, or "" for anything else (missing, map, list).
std::string Str(const YAML::Node& n) {
  return n.IsDefined() && n.IsScalar() ? n.Scalar() : std::string();
}

// One Kubernetes object from deploy/kubernetes/`file`, of kind `kind`.
YAML::Node LoadObject(const std::string& file, const std::string& kind) {
  const fs::path path = kKubernetesDir / file;
  YAML::Node node;
  try {
    node = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << path << ": " << e.what();
    return YAML::Node();
  }
  EXPECT_TRUE(node.IsMap()) << path;
  EXPECT_EQ(Str(node["kind"]), kind) << path;
  EXPECT_FALSE(Str(node["apiVersion"]).empty()) << path;
  EXPECT_FALSE(Str(node["metadata"]["name"]).empty()) << path;
  return node;
}

// Whether every label of `selector` (a matchLabels map) is in `labels`.
// An empty selector matches nothing here: it would select every pod.
bool SelectorMatches(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0 || !labels.IsMap()) {
    return false;
  }
  for (const auto& kv : selector) {
    const YAML::Node value = labels[kv.first.Scalar()];
    if (Str(value) != Str(kv.second)) return false;
  }
  return true;
}

// The port at `host:port`, or -1.
int ListenPort(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return -1;
  try {
    return std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

// A systemd unit file: section -> key -> values in order (a key may repeat).
using UnitFile =
    std::map<std::string, std::map<std::string, std::vector<std::string>>>;

UnitFile ParseUnit(const std::string& text) {
  UnitFile unit;
  std::string section;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    unit[section][Trim(line.substr(0, eq))].push_back(
        Trim(line.substr(eq + 1)));
  }
  return unit;
}

// Seconds of a systemd time span like "15", "15s" or "1min 30s"; -1 when
// not understood.
int TimeSpanSeconds(const std::string& span) {
  int total = 0;
  for (const std::string& part : SplitWords(span)) {
    size_t digits = 0;
    while (digits < part.size() && std::isdigit(part[digits])) ++digits;
    if (digits == 0) return -1;
    const int n = std::stoi(part.substr(0, digits));
    const std::string unit = part.substr(digits);
    if (unit.empty() || unit == "s" || unit == "sec") {
      total += n;
    } else if (unit == "min" || unit == "m") {
      total += 60 * n;
    } else {
      return -1;
    }
  }
  return total;
}

// A Dockerfile's instructions: (INSTRUCTION in upper case, arguments), with
// comments dropped and continuation lines joined.
using Instructions = std::vector<std::pair<std::string, std::string>>;

Instructions ParseDockerfile(const std::string& text) {
  Instructions out;
  std::istringstream in(text);
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    const std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    if (trimmed.back() == '\\') {
      pending += trimmed.substr(0, trimmed.size() - 1) + " ";
      continue;
    }
    pending += trimmed;
    const size_t space = pending.find_first_of(" \t");
    std::string op = pending.substr(0, space);
    std::transform(op.begin(), op.end(), op.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    out.emplace_back(op, space == std::string::npos
                             ? std::string()
                             : Trim(pending.substr(space + 1)));
    pending.clear();
  }
  return out;
}

// The instructions of the last stage (after the last FROM).
Instructions FinalStage(const Instructions& all) {
  Instructions stage;
  for (const auto& [op, args] : all) {
    if (op == "FROM") stage.clear();
    stage.emplace_back(op, args);
  }
  return stage;
}

// The arguments of the last `op` in `instructions`, or nullopt.
std::optional<std::string> Last(const Instructions& instructions,
                                const std::string& op) {
  std::optional<std::string> found;
  for (const auto& [o, args] : instructions) {
    if (o == op) found = args;
  }
  return found;
}

// An exec-form (JSON array) argument list; a JSON array is a YAML flow
// sequence. Empty when not in exec form.
std::vector<std::string> ExecForm(const std::string& args) {
  std::vector<std::string> out;
  try {
    const YAML::Node node = YAML::Load(args);
    if (!node.IsSequence()) return out;
    for (const auto& item : node) out.push_back(item.as<std::string>());
  } catch (const YAML::Exception&) {
    out.clear();
  }
  return out;
}

// The value following `flag` in `args`, or "".
std::string FlagValue(const std::vector<std::string>& args,
                      const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  return "";
}

// The standard output of `command` run by /bin/sh, and whether it exited 0.
std::pair<std::string, bool> RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {out, false};
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) {
    out.append(buf, n);
  }
  return {out, pclose(pipe) == 0};
}

// Whether two YAML trees are equal: same kinds, same scalars (as text: the
// manifest copies the files' lines), same sequences in order, same map keys
// in order with equal values.
bool SameYaml(const YAML::Node& a, const YAML::Node& b, std::string* where) {
  if (a.Type() != b.Type()) {
    *where += " (kinds differ)";
    return false;
  }
  switch (a.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return true;
    case YAML::NodeType::Scalar:
      if (a.Scalar() == b.Scalar()) return true;
      *where += ": '" + a.Scalar() + "' vs '" + b.Scalar() + "'";
      return false;
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) {
        *where += " (lengths differ)";
        return false;
      }
      for (size_t i = 0; i < a.size(); ++i) {
        *where += "[" + std::to_string(i) + "]";
        if (!SameYaml(a[i], b[i], where)) return false;
        where->erase(where->rfind('['));
      }
      return true;
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) {
        *where += " (key counts differ)";
        return false;
      }
      auto ia = a.begin();
      auto ib = b.begin();
      for (; ia != a.end(); ++ia, ++ib) {
        if (ia->first.Scalar() != ib->first.Scalar()) {
          *where += " (keys " + ia->first.Scalar() + " vs " +
                    ib->first.Scalar() + ")";
          return false;
        }
        const size_t mark = where->size();
        *where += "." + ia->first.Scalar();
        if (!SameYaml(ia->second, ib->second, where)) return false;
        where->resize(mark);
      }
      return true;
    }
  }
  return false;
}

// Whether `path` matches the glob `pattern` as Docker's .dockerignore reads
// it (moby/patternmatcher): `**/` matches zero or more whole path
// components, a final `**` anything, `*` any run and `?` any one character
// within a component.
bool GlobMatch(std::string_view pattern, std::string_view path) {
  if (pattern.empty()) return path.empty();
  if (pattern.starts_with("**")) {
    std::string_view rest = pattern.substr(2);
    if (rest.empty()) return true;
    if (rest.front() == '/') {
      rest.remove_prefix(1);
      // Zero components, or skip one component at a time.
      if (GlobMatch(rest, path)) return true;
      for (size_t slash = path.find('/'); slash != std::string_view::npos;
           slash = path.find('/', slash + 1)) {
        if (GlobMatch(rest, path.substr(slash + 1))) return true;
      }
      return false;
    }
    for (size_t i = 0; i <= path.size(); ++i) {
      if (GlobMatch(rest, path.substr(i))) return true;
    }
    return false;
  }
  if (pattern.front() == '*') {
    for (size_t i = 0; i <= path.size(); ++i) {
      if (GlobMatch(pattern.substr(1), path.substr(i))) return true;
      if (i < path.size() && path[i] == '/') break;
    }
    return false;
  }
  if (path.empty()) return false;
  if (pattern.front() == '?' ? path.front() != '/'
                             : pattern.front() == path.front()) {
    return GlobMatch(pattern.substr(1), path.substr(1));
  }
  return false;
}

// One .dockerignore line: a leading `!` re-includes; leading and trailing
// slashes are dropped, as Docker cleans the pattern.
struct IgnorePattern {
  bool exclusion = true;
  std::string glob;
};

std::vector<IgnorePattern> ParseDockerignore(const std::string& text) {
  std::vector<IgnorePattern> patterns;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    IgnorePattern p;
    if (line[0] == '!') {
      p.exclusion = false;
      line = Trim(line.substr(1));
    }
    while (!line.empty() && line.front() == '/') line.erase(0, 1);
    while (!line.empty() && line.back() == '/') line.pop_back();
    p.glob = line;
    patterns.push_back(std::move(p));
  }
  return patterns;
}

// Whether Docker leaves `path` (relative to the context, '/'-separated) out
// of the build context: the last pattern matching the path or one of its
// parent directories decides.
bool DockerIgnores(const std::vector<IgnorePattern>& patterns,
                   const std::string& path) {
  std::vector<std::string> prefixes;
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    prefixes.push_back(path.substr(0, slash));
  }
  prefixes.push_back(path);
  bool ignored = false;
  for (const IgnorePattern& p : patterns) {
    if (p.exclusion == ignored) continue;  // Cannot change the outcome.
    for (const std::string& prefix : prefixes) {
      if (GlobMatch(p.glob, prefix)) {
        ignored = p.exclusion;
        break;
      }
    }
  }
  return ignored;
}

class DeployManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    configmap_ = LoadObject("configmap.yaml", "ConfigMap");
    deployment_ = LoadObject("deployment.yaml", "Deployment");
    service_ = LoadObject("service.yaml", "Service");
    podmonitor_ = LoadObject("podmonitor.yaml", "PodMonitor");
    ASSERT_FALSE(HasFailure());
    pod_ = deployment_["spec"]["template"];
    const YAML::Node containers = pod_["spec"]["containers"];
    ASSERT_TRUE(containers.IsSequence());
    for (const auto& c : containers) {
      if (Str(c["name"]) == "rankwatch") container_ = YAML::Node(c);
    }
    ASSERT_TRUE(container_.IsMap()) << "no container named rankwatch";
  }

  // The container's command line after the entrypoint (its args).
  std::vector<std::string> ContainerArgs() const {
    std::vector<std::string> args;
    for (const auto& a : container_["args"])
      args.push_back(a.as<std::string>());
    return args;
  }

  // The configuration file the Deployment runs with.
  std::string ConfigPath() const {
    return FlagValue(ContainerArgs(), "--config");
  }

  // The container port number `port` refers to (a number, or the name of
  // a container port); -1 if none.
  int ResolvePort(const YAML::Node& port) const {
    const std::string text = Str(port);
    if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      return std::stoi(text);
    }
    for (const auto& p : container_["ports"]) {
      if (Str(p["name"]) == text) return p["containerPort"].as<int>();
    }
    return -1;
  }

  // The environment the Deployment gives the container: every variable it
  // sets gets kInjectedValue (a secret's value is not in the manifests);
  // any other variable is unset.
  config::EnvLookup DeploymentEnv() const {
    std::set<std::string> names;
    for (const auto& e : container_["env"]) names.insert(Str(e["name"]));
    return [names](const std::string& name) -> std::optional<std::string> {
      if (names.count(name) == 0) return std::nullopt;
      return std::string(kInjectedValue);
    };
  }

  // The ConfigMap's configuration file: the key named like the file the
  // container is given.
  std::string ConfigText() const {
    const std::string key = fs::path(ConfigPath()).filename().string();
    return Str(configmap_["data"][key]);
  }

  StatusOr<config::Config> LoadConfig() const {
    return config::ParseConfig(ConfigText(), "configmap.yaml", DeploymentEnv());
  }

  YAML::Node configmap_, deployment_, service_, podmonitor_;
  YAML::Node pod_, container_;
};

TEST_F(DeployManifestsTest, ConfigMapConfigLoadsWithTheDeploymentsEnvironment) {
  ASSERT_FALSE(ConfigText().empty())
      << "configmap.yaml has no data key for " << ConfigPath();
  StatusOr<config::Config> config = LoadConfig();
  ASSERT_TRUE(config.ok()) << config.status().message();

  // The password is substituted from the Secret-backed variable...
  const std::map<std::string, std::string>& props = config->kafka.properties;
  ASSERT_TRUE(props.count("sasl.password"));
  EXPECT_EQ(props.at("sasl.password"), kInjectedValue);
  // ...and without that variable the configuration does not load.
  StatusOr<config::Config> no_env =
      config::ParseConfig(ConfigText(), "configmap.yaml", config::EnvLookup());
  ASSERT_FALSE(no_env.ok());
  EXPECT_NE(no_env.status().message().find("KAFKA_PASSWORD"), std::string::npos)
      << no_env.status().message();

  EXPECT_EQ(config->kafka.bootstrap_servers, "kafka:9092");
  EXPECT_EQ(config->aggregation.segments, std::vector<std::string>{"locale"});
  ASSERT_EQ(config->experiments.size(), 1u);
  EXPECT_EQ(config->experiments[0].name, "ranker-v2");
  EXPECT_EQ(config->experiments[0].baseline, "A");
  EXPECT_EQ(config->experiments[0].treatments, std::vector<std::string>{"B"});
}

TEST_F(DeployManifestsTest, SecretVariablesComeFromSecretKeyRefs) {
  bool found = false;
  for (const auto& e : container_["env"]) {
    if (Str(e["name"]) != "KAFKA_PASSWORD") continue;
    found = true;
    const YAML::Node ref = e["valueFrom"]["secretKeyRef"];
    EXPECT_FALSE(Str(ref["name"]).empty());
    EXPECT_FALSE(Str(ref["key"]).empty());
    EXPECT_FALSE(e["value"].IsDefined()) << "a secret written in the manifest";
  }
  EXPECT_TRUE(found) << "KAFKA_PASSWORD is not set in the container";
}

TEST_F(DeployManifestsTest, ConfigFileIsTheMountedConfigMap) {
  const fs::path config_path = ConfigPath();
  ASSERT_FALSE(config_path.empty()) << "no --config in the container's args";
  EXPECT_EQ(ContainerArgs().at(0), "run");
  // A volume mounted at the file's directory, backed by this ConfigMap.
  std::string volume;
  for (const auto& m : container_["volumeMounts"]) {
    if (fs::path(Str(m["mountPath"])) == config_path.parent_path()) {
      volume = Str(m["name"]);
    }
  }
  ASSERT_FALSE(volume.empty())
      << "nothing mounted at " << config_path.parent_path();
  std::string configmap_name;
  for (const auto& v : pod_["spec"]["volumes"]) {
    if (Str(v["name"]) == volume) configmap_name = Str(v["configMap"]["name"]);
  }
  EXPECT_EQ(configmap_name, Str(configmap_["metadata"]["name"]));
}

TEST_F(DeployManifestsTest, OnePortEverywhere) {
  StatusOr<config::Config> config = LoadConfig();
  ASSERT_TRUE(config.ok()) << config.status().message();
  const int port = ListenPort(config->http.listen);
  ASSERT_GT(port, 0) << config->http.listen;
  // Reachable from the kubelet and Prometheus: not loopback.
  EXPECT_TRUE(config->http.listen.rfind("0.0.0.0:", 0) == 0 ||
              config->http.listen.rfind("[::]:", 0) == 0)
      << config->http.listen;

  // The container port, named.
  const YAML::Node ports = container_["ports"];
  ASSERT_TRUE(ports.IsSequence());
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0]["containerPort"].as<int>(), port);
  const std::string port_name = Str(ports[0]["name"]);
  EXPECT_EQ(port_name, "metrics");

  // The probes.
  const YAML::Node liveness = container_["livenessProbe"]["httpGet"];
  const YAML::Node readiness = container_["readinessProbe"]["httpGet"];
  EXPECT_EQ(ResolvePort(liveness["port"]), port);
  EXPECT_EQ(ResolvePort(readiness["port"]), port);
  EXPECT_EQ(Str(liveness["path"]), "/healthz");
  EXPECT_EQ(Str(readiness["path"]), "/readyz");

  // The Service.
  EXPECT_EQ(Str(service_["spec"]["type"]), "ClusterIP");
  const YAML::Node service_ports = service_["spec"]["ports"];
  ASSERT_EQ(service_ports.size(), 1u);
  EXPECT_EQ(service_ports[0]["port"].as<int>(), port);
  EXPECT_EQ(Str(service_ports[0]["name"]), port_name);
  EXPECT_EQ(ResolvePort(service_ports[0]["targetPort"]), port);

  // The PodMonitor names the container port.
  const YAML::Node endpoints = podmonitor_["spec"]["podMetricsEndpoints"];
  ASSERT_TRUE(endpoints.IsSequence());
  ASSERT_EQ(endpoints.size(), 1u);
  EXPECT_EQ(Str(endpoints[0]["port"]), port_name);
  EXPECT_EQ(Str(endpoints[0]["path"]), "/metrics");
  EXPECT_EQ(Str(endpoints[0]["interval"]), "15s");

  // The image.
  const Instructions docker = FinalStage(
      ParseDockerfile(ReadFile(kSourceDir / "deploy/docker/Dockerfile")));
  EXPECT_EQ(Last(docker, "EXPOSE").value_or(""), std::to_string(port));
}

TEST_F(DeployManifestsTest, SelectorsSelectThePods) {
  EXPECT_EQ(Str(podmonitor_["apiVersion"]), "monitoring.coreos.com/v1");
  const YAML::Node labels = pod_["metadata"]["labels"];
  EXPECT_TRUE(
      SelectorMatches(deployment_["spec"]["selector"]["matchLabels"], labels));
  EXPECT_TRUE(SelectorMatches(service_["spec"]["selector"], labels));
  EXPECT_TRUE(
      SelectorMatches(podmonitor_["spec"]["selector"]["matchLabels"], labels));
  // The PodMonitor takes the job name from a label the pods carry.
  const std::string job_label = Str(podmonitor_["spec"]["jobLabel"]);
  if (!job_label.empty()) {
    EXPECT_FALSE(Str(labels[job_label]).empty()) << job_label;
  }
  const YAML::Node pdb = LoadObject("pdb.yaml", "PodDisruptionBudget");
  EXPECT_TRUE(SelectorMatches(pdb["spec"]["selector"]["matchLabels"], labels));
}

TEST_F(DeployManifestsTest, AlertsSelectThePodMonitorsJob) {
  const fs::path alerts = kSourceDir / "deploy/prometheus/alerts.yml";
  if (!fs::exists(alerts)) GTEST_SKIP() << alerts << " not written yet";
  const std::string job_label = Str(podmonitor_["spec"]["jobLabel"]);
  ASSERT_FALSE(job_label.empty())
      << "without jobLabel the job is <namespace>/<PodMonitor name>";
  const std::string job = Str(pod_["metadata"]["labels"][job_label]);
  // Every job selector of the alerts names that job.
  const std::string text = ReadFile(alerts);
  const std::string needle = "job=\"";
  int selectors = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    const size_t begin = at + needle.size();
    EXPECT_EQ(text.substr(begin, text.find('"', begin) - begin), job);
    ++selectors;
  }
  EXPECT_GT(selectors, 0) << "no job selector in " << alerts;
}

TEST_F(DeployManifestsTest, ReplicasAndShutdown) {
  EXPECT_EQ(deployment_["spec"]["replicas"].as<int>(), 3);
  // SIGTERM, then SIGKILL after the grace period: the daemon needs up to
  // kShutdownBoundSeconds to commit and leave the group.
  EXPECT_GT(pod_["spec"]["terminationGracePeriodSeconds"].as<int>(),
            kShutdownBoundSeconds);
}

TEST_F(DeployManifestsTest, PodIsLockedDown) {
  const YAML::Node pod_security = pod_["spec"]["securityContext"];
  const YAML::Node security = container_["securityContext"];
  const bool non_root = pod_security["runAsNonRoot"].as<bool>(false) ||
                        security["runAsNonRoot"].as<bool>(false);
  EXPECT_TRUE(non_root);
  EXPECT_TRUE(security["readOnlyRootFilesystem"].as<bool>(false));
  EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>(true));
  bool drops_all = false;
  for (const auto& cap : security["capabilities"]["drop"]) {
    drops_all |= cap.as<std::string>() == "ALL";
  }
  EXPECT_TRUE(drops_all);
  const YAML::Node requests = container_["resources"]["requests"];
  const YAML::Node limits = container_["resources"]["limits"];
  EXPECT_FALSE(Str(requests["memory"]).empty());
  EXPECT_FALSE(Str(requests["cpu"]).empty());
  EXPECT_FALSE(Str(limits["memory"]).empty());

  // The image's user is the one the pod runs as.
  const Instructions docker = FinalStage(
      ParseDockerfile(ReadFile(kSourceDir / "deploy/docker/Dockerfile")));
  const std::string user = Last(docker, "USER").value_or("");
  const std::string uid = user.substr(0, user.find(':'));
  ASSERT_FALSE(uid.empty());
  EXPECT_TRUE(std::all_of(
      uid.begin(), uid.end(),
      [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
      << "USER must be numeric for runAsNonRoot: " << user;
  EXPECT_NE(uid, "0");
  const YAML::Node run_as = pod_security["runAsUser"].IsDefined()
                                ? pod_security["runAsUser"]
                                : security["runAsUser"];
  if (run_as.IsDefined()) {
    EXPECT_EQ(Str(run_as), uid);
  }
}

TEST_F(DeployManifestsTest, KustomizationListsEveryManifest) {
  const YAML::Node k =
      YAML::LoadFile((kKubernetesDir / "kustomization.yaml").string());
  EXPECT_EQ(Str(k["kind"]), "Kustomization");
  std::set<std::string> listed;
  for (const auto& r : k["resources"]) {
    const std::string file = r.as<std::string>();
    EXPECT_TRUE(listed.insert(file).second) << "listed twice: " << file;
    EXPECT_TRUE(fs::exists(kKubernetesDir / file)) << file;
  }
  std::set<std::string> present;
  for (const auto& entry : fs::directory_iterator(kKubernetesDir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".yaml" && name != "kustomization.yaml") {
      present.insert(name);
    }
  }
  EXPECT_EQ(listed, present);
}

TEST_F(DeployManifestsTest, ImageRunsTheSameCommand) {
  const Instructions all =
      ParseDockerfile(ReadFile(kSourceDir / "deploy/docker/Dockerfile"));
  const Instructions runtime = FinalStage(all);
  ASSERT_FALSE(runtime.empty());
  EXPECT_EQ(runtime[0].second, "debian:bookworm-slim");
  EXPECT_EQ(ExecForm(Last(runtime, "ENTRYPOINT").value_or("")),
            std::vector<std::string>{"rankwatch"});
  // The image's default command is what the Deployment spells out.
  EXPECT_EQ(ExecForm(Last(runtime, "CMD").value_or("")), ContainerArgs());

  // The build stage copies every source directory the top-level
  // CMakeLists.txt adds (tests, benchmarks, and deploy/'s checks, which
  // only build with the tests, are switched off).
  std::string copied;
  std::string build_flags;
  for (const auto& [op, args] : all) {
    if (op == "COPY") copied += " " + args + " ";
    if (op == "RUN" && args.find("cmake") != std::string::npos) {
      build_flags += args;
    }
  }
  EXPECT_NE(build_flags.find("-DRANKWATCH_BUILD_TESTS=OFF"), std::string::npos);
  EXPECT_NE(build_flags.find("-DRANKWATCH_BUILD_BENCH=OFF"), std::string::npos);
  EXPECT_NE(build_flags.find("--target rankwatch"), std::string::npos);
  std::istringstream cmake(ReadFile(kSourceDir / "CMakeLists.txt"));
  int subdirs = 0;
  for (std::string line; std::getline(cmake, line);) {
    line = Trim(line);
    const std::string prefix = "add_subdirectory(";
    if (line.rfind(prefix, 0) != 0) continue;
    const std::string dir =
        line.substr(prefix.size(), line.find(')') - prefix.size());
    // Tests, benchmarks, fuzzers, deploy assets and the Python package
    // (built by pip, docs/python.md) are not in the image.
    if (dir == "tests" || dir.starts_with("tests/") || dir == "bench" ||
        dir == "deploy" || dir == "python") {
      continue;
    }
    ++subdirs;
    EXPECT_NE(copied.find(" " + dir + "/ "), std::string::npos)
        << "the Dockerfile does not COPY " << dir << "/";
  }
  EXPECT_GT(subdirs, 0);
}

TEST_F(DeployManifestsTest, SystemdUnitRunsTheSameConfigHardened) {
  const UnitFile unit =
      ParseUnit(ReadFile(kSourceDir / "deploy/systemd/rankwatch.service"));
  ASSERT_EQ(unit.count("Service"), 1u);
  const auto& service = unit.at("Service");
  auto one = [&](const std::string& key) -> std::string {
    auto it = service.find(key);
    if (it == service.end()) return "<unset>";
    return it->second.back();  // The last assignment wins.
  };

  const std::vector<std::string> exec = SplitWords(one("ExecStart"));
  ASSERT_GE(exec.size(), 2u) << one("ExecStart");
  EXPECT_EQ(exec[0], "/usr/local/bin/rankwatch");
  EXPECT_EQ(exec[1], "run");
  // The same path as in the image and the Deployment.
  EXPECT_EQ(FlagValue(exec, "--config"), "/etc/rankwatch/rankwatch.yaml");
  EXPECT_EQ(FlagValue(exec, "--config"), ConfigPath());
  EXPECT_EQ(one("EnvironmentFile"), "-/etc/rankwatch/env");

  EXPECT_EQ(one("KillSignal"), "SIGTERM");
  EXPECT_GT(TimeSpanSeconds(one("TimeoutStopSec")), kShutdownBoundSeconds);
  // Restarted after any exit it did not ask for (systemd counts a death by
  // SIGHUP or SIGTERM, and exit 0, as clean: on-failure would leave it
  // down), but not after a configuration error (exit 2).
  EXPECT_EQ(one("Restart"), "always");
  EXPECT_EQ(one("RestartPreventExitStatus"), "2");
  // `systemctl reload` sends SIGHUP, which re-reads the configuration.
  if (service.count("ExecReload")) {
    EXPECT_EQ(one("ExecReload"), "/bin/kill -HUP $MAINPID");
  }

  EXPECT_TRUE(one("DynamicUser") == "yes" ||
              (one("User") != "<unset>" && one("User") != "root"));
  for (const char* key :
       {"NoNewPrivileges", "ProtectHome", "PrivateTmp", "PrivateDevices",
        "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
        "ProtectControlGroups", "MemoryDenyWriteExecute", "LockPersonality"}) {
    EXPECT_EQ(one(key), "yes") << key;
  }
  EXPECT_EQ(one("ProtectSystem"), "strict");
  EXPECT_EQ(one("CapabilityBoundingSet"), "");
  const std::vector<std::string> families =
      SplitWords(one("RestrictAddressFamilies"));
  EXPECT_EQ(std::set<std::string>(families.begin(), families.end()),
            (std::set<std::string>{"AF_INET", "AF_INET6", "AF_UNIX"}));
  ASSERT_TRUE(service.count("SystemCallFilter"));
  EXPECT_EQ(service.at("SystemCallFilter").front(), "@system-service");
  // Nothing on disk is written, so nothing is made writable.
  EXPECT_EQ(service.count("ReadWritePaths"), 0u);
}

TEST(PrometheusRuleTest, IsWhatTheGeneratorMakesOfTheRuleFiles) {
  const fs::path manifest = kKubernetesDir / "prometheusrule.yaml";
  const fs::path generator = kKubernetesDir / "generate-prometheusrule.sh";
  const auto [generated, ok] = RunCommand("bash '" + generator.string() + "'");
  ASSERT_TRUE(ok) << generator << " failed";
  // Byte for byte: regenerate after editing rules.yml or alerts.yml.
  EXPECT_TRUE(generated == ReadFile(manifest))
      << manifest << " is stale; run\n  " << generator << " > " << manifest;
}

TEST(PrometheusRuleTest, CarriesTheGroupsOfBothRuleFiles) {
  const YAML::Node rule = LoadObject("prometheusrule.yaml", "PrometheusRule");
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(Str(rule["apiVersion"]), "monitoring.coreos.com/v1");
  // The labels the PodMonitor carries, so that one selector finds both.
  const YAML::Node podmonitor = LoadObject("podmonitor.yaml", "PodMonitor");
  EXPECT_TRUE(SelectorMatches(podmonitor["metadata"]["labels"],
                              rule["metadata"]["labels"]));

  // spec.groups is rules.yml's groups followed by alerts.yml's, as
  // yaml-cpp reads them (expressions, block scalars, labels, annotations).
  YAML::Node expected(YAML::NodeType::Sequence);
  std::set<std::string> names;
  for (const char* file : {"rules.yml", "alerts.yml"}) {
    const YAML::Node groups = YAML::LoadFile(
        (kSourceDir / "deploy/prometheus" / file).string())["groups"];
    ASSERT_TRUE(groups.IsSequence()) << file;
    for (const auto& g : groups) {
      expected.push_back(g);
      EXPECT_TRUE(names.insert(Str(g["name"])).second)
          << "group " << Str(g["name"]) << " twice";
    }
  }
  const YAML::Node actual = rule["spec"]["groups"];
  ASSERT_TRUE(actual.IsSequence());
  EXPECT_GE(actual.size(), 8u);
  std::string where = "spec.groups";
  EXPECT_TRUE(SameYaml(expected, actual, &where)) << "differs at " << where;
  // Every alert is in, with its absolute runbook link.
  int alerts = 0;
  for (const auto& g : actual) {
    for (const auto& r : g["rules"]) {
      if (!r["alert"].IsDefined()) continue;
      ++alerts;
      EXPECT_NE(Str(r["annotations"]["runbook_url"]).find("://"),
                std::string::npos)
          << Str(r["alert"]);
    }
  }
  EXPECT_EQ(alerts, 13);  // The alerts of alerts.yml.
}

// The matcher itself, on Docker's documented examples.
TEST(DockerignoreTest, MatchesAsDockerDoes) {
  const std::vector<IgnorePattern> p = ParseDockerignore(
      "*/temp*\n*/*/temp*\ntemp?\n**/*.go\n*.md\n!README*.md\n"
      "README-secret.md\n");
  EXPECT_TRUE(DockerIgnores(p, "somedir/temporary.txt"));
  EXPECT_TRUE(DockerIgnores(p, "somedir/temp"));
  EXPECT_TRUE(DockerIgnores(p, "somedir/subdir/temporary.txt"));
  EXPECT_TRUE(DockerIgnores(p, "tempa"));
  EXPECT_FALSE(DockerIgnores(p, "tempab"));
  EXPECT_TRUE(DockerIgnores(p, "a/b/c.go"));
  EXPECT_TRUE(DockerIgnores(p, "c.go"));
  EXPECT_TRUE(DockerIgnores(p, "notes.md"));
  EXPECT_FALSE(DockerIgnores(p, "README.md"));
  EXPECT_TRUE(DockerIgnores(p, "README-secret.md"));
  // A directory's pattern covers what is inside it; a later `!` re-includes.
  const std::vector<IgnorePattern> q =
      ParseDockerignore("/build*/\n*\n!/src/\n**/*.swp\n");
  EXPECT_TRUE(DockerIgnores(q, "build-x/a/b.o"));
  EXPECT_FALSE(DockerIgnores(q, "src/a/b.cc"));
  EXPECT_TRUE(DockerIgnores(q, "src/a/.b.cc.swp"));
  EXPECT_TRUE(DockerIgnores(q, "other"));
}

TEST(DockerignoreTest, SendsWhatTheDockerfileCopiesAndNothingElse) {
  const fs::path file = kSourceDir / ".dockerignore";
  ASSERT_TRUE(fs::exists(file)) << "the Dockerfile asks for " << file;
  const std::vector<IgnorePattern> patterns = ParseDockerignore(ReadFile(file));

  // Every COPY source of the build context (not --from=another stage), and
  // every file under a copied directory, is sent; of .git/, what
  // `git rev-parse HEAD` reads.
  int sources = 0;
  for (const auto& [op, args] :
       ParseDockerfile(ReadFile(kSourceDir / "deploy/docker/Dockerfile"))) {
    if (op != "COPY" || args.starts_with("--from")) continue;
    const std::vector<std::string> words = SplitWords(args);
    for (size_t i = 0; i + 1 < words.size(); ++i) {
      std::string source = words[i];
      while (source.size() > 1 && source.back() == '/') source.pop_back();
      ++sources;
      if (source == ".git") {
        for (const char* needed : {".git/HEAD", ".git/refs/heads/main",
                                   ".git/refs/tags/v1", ".git/packed-refs"}) {
          EXPECT_FALSE(DockerIgnores(patterns, needed)) << needed;
        }
        continue;
      }
      EXPECT_FALSE(DockerIgnores(patterns, source)) << source;
      const fs::path dir = kSourceDir / source;
      if (!fs::is_directory(dir)) continue;
      int files = 0;
      for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        // Editor leftovers are meant to stay out.
        if (!entry.is_regular_file() || name.starts_with(".") ||
            name.ends_with("~") || name == "compile_commands.json") {
          continue;
        }
        ++files;
        const std::string rel =
            fs::relative(entry.path(), kSourceDir).generic_string();
        EXPECT_FALSE(DockerIgnores(patterns, rel)) << rel;
      }
      EXPECT_GT(files, 0) << source;
    }
  }
  EXPECT_GE(sources, 8);

  // Build trees, git's object store and the rest stay out.
  for (const char* path :
       {"build", "build/CMakeCache.txt", "build-deploy/daemon/rankwatch",
        "build-asan/x.o", ".git/objects/pack/pack-1.pack", ".git/index",
        ".git/config", ".git/logs/HEAD", ".cache/clangd/index/a.idx",
        "tests/CMakeLists.txt", "docs/operations.md", "bench/x.cc",
        "deploy/grafana/rankwatch.json", "compile_commands.json",
        "daemon/cli/.run_command.cc.swp", "daemon/cli/run_command.cc~",
        "daemon/compile_commands.json"}) {
    EXPECT_TRUE(DockerIgnores(patterns, path)) << path;
  }
}

}  // namespace
}  // namespace rankwatch
