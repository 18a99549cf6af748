// The shipped Prometheus rules, alerts and Grafana dashboard against a real
// Prometheus server: a Kafka mock cluster (in process), `rankwatch run` and
// `rankwatch produce-synthetic` as processes, and Debian's `prometheus`
// scraping the daemon every second, with deploy/prometheus/rules.yml and
// alerts.yml loaded.
//
// The rules speak of production time ranges (30 minutes against a day); the
// test loads the same files with every range shortened by a fixed map
// (ShortenDurations) so that a regression shows within a minute. Every
// range in the files must be one the map knows (the test fails otherwise),
// which is the convention deploy/prometheus/README.md states.
//
// Everything binds port 0: the daemon writes its port to a file, and
// Prometheus' port is read from /proc (it does not print it).
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/http_client.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;
using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::WaitFor;

constexpr char kRegressionAlert[] = "RankwatchQualityRegression";
constexpr char kWorseAlert[] = "RankwatchTreatmentSignificantlyWorse";
// Traffic: requests per second, and when the regression of variant B starts
// (event time after the first request; the generator runs in real time).
constexpr int kRate = 400;
constexpr auto kRegressAfter = 30s;

// The production ranges of the rule files and what the test runs them at.
const std::map<std::string, std::string>& DurationMap() {
  static const auto* m = new std::map<std::string, std::string>{
      {"5m", "10s"}, {"30m", "15s"}, {"1h", "30s"}, {"1d", "45s"}};
  return *m;
}

// A duration literal at s[i] ("30m", "1d"): its length, or 0.
size_t DurationLength(const std::string& s, size_t i) {
  size_t j = i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == i || j == s.size() ||
      std::string_view("smhdwy").find(s[j]) == std::string_view::npos) {
    return 0;
  }
  return j + 1 - i;
}

// Rewrites the duration after every `[`, `offset ` with DurationMap(), and
// after every `for: ` to 0s. Sets *unknown to the first range duration not
// in the map.
std::string ShortenDurations(const std::string& text, std::string* unknown) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t prefix = 0;
    bool is_for = false;
    if (text[i] == '[') {
      prefix = 1;
    } else if (text.compare(i, 7, "offset ") == 0) {
      prefix = 7;
    } else if (text.compare(i, 5, "for: ") == 0) {
      prefix = 5;
      is_for = true;
    }
    const size_t n = prefix > 0 ? DurationLength(text, i + prefix) : 0;
    if (n == 0) {
      out += text[i++];
      continue;
    }
    const std::string d = text.substr(i + prefix, n);
    out += text.substr(i, prefix);
    if (is_for) {
      out += "0s";
    } else if (const auto m = DurationMap().find(d); m != DurationMap().end()) {
      out += m->second;
    } else {
      if (unknown->empty()) *unknown = d;
      out += d;
    }
    i += prefix + n;
  }
  return out;
}

// Replaces every occurrence of `from` in *s with `to`.
void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  for (size_t i = s->find(from); i != std::string::npos;
       i = s->find(from, i + to.size())) {
    s->replace(i, from.size(), to);
  }
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// A template variable of the dashboard (templating.list), as Grafana
// resolves it: a `query` variable is `label_values(SELECTOR, LABEL)` (or
// `label_values(LABEL)`) asked of Prometheus, a `custom` one a fixed list.
struct DashboardVariable {
  std::string name;
  std::string type;
  std::string query;
  bool multi = false;
  std::string all_value;  // Set when the variable offers "All".
  std::string current;    // The value selected when the dashboard opens.
};

// A panel with queries: its type, title and targets' expressions.
struct DashboardPanel {
  std::string type;
  std::string title;
  std::vector<std::string> exprs;
};

struct Dashboard {
  std::vector<std::string> exprs;  // Every "expr" of the panels' targets.
  std::vector<DashboardVariable> variables;
  std::vector<DashboardPanel> panels;  // Those with targets.
};

// A JSON string member, or "".
std::string Member(simdjson::dom::element e, std::string_view key) {
  std::string_view v;
  if (e[key].get(v)) return "";
  return std::string(v);
}

Dashboard ParseDashboard(const std::string& json) {
  Dashboard d;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) return d;
  simdjson::dom::array list;
  if (!root["templating"]["list"].get(list)) {
    for (simdjson::dom::element v : list) {
      DashboardVariable var;
      var.name = Member(v, "name");
      var.type = Member(v, "type");
      var.query = Member(v, "query");
      if (var.query.empty()) var.query = Member(v["query"], "query");
      bool flag = false;
      var.multi = !v["multi"].get(flag) && flag;
      flag = false;
      if (!v["includeAll"].get(flag) && flag)
        var.all_value = Member(v, "allValue");
      var.current = Member(v["current"], "value");
      d.variables.push_back(std::move(var));
    }
  }
  // Panels may nest in rows; walk everything but the templating.
  std::vector<simdjson::dom::element> stack;
  simdjson::dom::element panels;
  if (!root["panels"].get(panels)) stack.push_back(panels);
  while (!stack.empty()) {
    simdjson::dom::element e = stack.back();
    stack.pop_back();
    if (e.is_array()) {
      for (simdjson::dom::element child : e.get_array()) stack.push_back(child);
    } else if (e.is_object()) {
      simdjson::dom::array targets;
      if (!e["targets"].get(targets)) {
        DashboardPanel panel{Member(e, "type"), Member(e, "title"), {}};
        for (simdjson::dom::element t : targets) {
          if (std::string expr = Member(t, "expr"); !expr.empty()) {
            panel.exprs.push_back(std::move(expr));
          }
        }
        d.panels.push_back(std::move(panel));
      }
      for (auto field : e.get_object()) {
        std::string_view expr;
        if (field.key == "expr" && !field.value.get_string().get(expr)) {
          d.exprs.emplace_back(expr);
        } else {
          stack.push_back(field.value);
        }
      }
    }
  }
  return d;
}

// Whether `text` uses variable `name` ($name or ${name}; not a longer name).
bool UsesVariable(const std::string& text, const std::string& name) {
  if (text.find("${" + name + "}") != std::string::npos) return true;
  const std::string plain = "$" + name;
  for (size_t i = text.find(plain); i != std::string::npos;
       i = text.find(plain, i + 1)) {
    const size_t end = i + plain.size();
    if (end == text.size() ||
        !(std::isalnum(static_cast<unsigned char>(text[end])) ||
          text[end] == '_')) {
      return true;
    }
  }
  return false;
}

// `text` with every variable of `values`, and Grafana's built-in intervals,
// replaced (longest names first, so that $segment never eats
// $segment_value).
std::string Substitute(std::string text,
                       const std::map<std::string, std::string>& values) {
  std::vector<std::pair<std::string, std::string>> vars(values.begin(),
                                                        values.end());
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"__rate_interval", "1m"},
           {"__interval", "15s"},
           {"__range", "5m"}}) {
    vars.emplace_back(name, value);
  }
  std::sort(vars.begin(), vars.end(), [](const auto& a, const auto& b) {
    return a.first.size() > b.first.size();
  });
  for (const auto& [name, value] : vars) {
    ReplaceAll(&text, "${" + name + "}", value);
  }
  for (const auto& [name, value] : vars) ReplaceAll(&text, "$" + name, value);
  return text;
}

// The metric names of a PromQL expression (or label_values() query), its
// variables already substituted: identifiers with "rankwatch_" outside
// quoted strings (label values), so built-ins (rate, sum, up, vector) and
// labels are left out.
std::set<std::string> MetricNames(const std::string& expr) {
  std::set<std::string> names;
  std::string name;
  bool quoted = false;
  auto flush = [&] {
    if (name.find("rankwatch_") != std::string::npos) names.insert(name);
    name.clear();
  };
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (quoted) {
      if (c == '\\') ++i;
      if (c == '"') quoted = false;
      continue;
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
        c == '<' || c == '>') {
      name += c;
      continue;
    }
    flush();
    quoted = c == '"';
  }
  flush();
  return names;
}

// Whether docs/metrics-reference.md documents `name`: as `name` or
// `name{labels}` in its text, or as the _sum, _count or _bucket series of
// a documented histogram (`rankwatch_<m>`).
bool Documented(const std::string& docs, const std::string& name) {
  for (const char* end : {"`", "{"}) {
    if (docs.find("`" + name + end) != std::string::npos) return true;
  }
  for (std::string_view suffix : {"_sum", "_count", "_bucket"}) {
    if (name.ends_with(suffix) &&
        Documented(docs, name.substr(0, name.size() - suffix.size()))) {
      return true;
    }
  }
  return false;
}

// The recording rules of deploy/prometheus/rules.yml ("record: NAME").
std::set<std::string> RecordedNames(const std::string& rules) {
  std::set<std::string> names;
  std::istringstream in(rules);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("record:");
    if (at == std::string::npos) continue;
    std::string name = line.substr(at + 7);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(" \r") + 1);
    names.insert(name);
  }
  return names;
}

// Without a Prometheus: every metric a panel or variable queries is one
// the daemon documents (docs/metrics-reference.md) or a recording rule of
// deploy/prometheus/rules.yml, for every value of ${window}; per-measure
// families are checked as rankwatch_<m>. A misspelt or undocumented name
// fails here (issue 27: the dashboard must not query what nobody exports).
TEST(GrafanaDashboardTest, EveryQueryNamesADocumentedMetricOrARule) {
  const std::string json = testing::ReadFile(std::string(SourceTree()) +
                                             "/deploy/grafana/rankwatch.json");
  const Dashboard dashboard = ParseDashboard(json);
  ASSERT_GE(dashboard.exprs.size(), 8u);
  const std::string docs = testing::ReadFile(std::string(SourceTree()) +
                                             "/docs/metrics-reference.md");
  const std::set<std::string> records = RecordedNames(testing::ReadFile(
      std::string(SourceTree()) + "/deploy/prometheus/rules.yml"));
  ASSERT_GT(records.size(), 10u);
  // Sanity of the checker itself: a name one letter off is neither.
  EXPECT_FALSE(Documented(docs, "rankwatch_ab_decisions"));
  EXPECT_TRUE(Documented(docs, "rankwatch_ab_decision"));
  EXPECT_TRUE(Documented(docs, "rankwatch_<m>_count"));
  EXPECT_EQ(
      MetricNames(
          R"(sum(rate(rankwatch_x_total{job="rankwatch_y"}[5m])) / a:rankwatch_z:b)"),
      (std::set<std::string>{"rankwatch_x_total", "a:rankwatch_z:b"}));

  std::vector<std::string> windows;
  std::vector<std::string> queries = dashboard.exprs;
  for (const DashboardVariable& var : dashboard.variables) {
    if (var.name == "window") {
      std::string item;
      for (std::istringstream in(var.query); std::getline(in, item, ',');) {
        windows.push_back(item);
      }
    }
    if (var.type == "query") queries.push_back(var.query);
  }
  ASSERT_FALSE(windows.empty());
  std::set<std::string> checked;
  for (const std::string& query : queries) {
    for (const std::string& window : windows) {
      const std::string text = Substitute(query, {{"measure", "<m>"},
                                                  {"k", "10"},
                                                  {"window", window},
                                                  {"experiment", ".*"},
                                                  {"variant", ".*"},
                                                  {"segment", "locale"},
                                                  {"segment_value", ".*"}});
      for (const std::string& name : MetricNames(text)) {
        if (!checked.insert(name).second) continue;  // Told once.
        if (name.find(':') != std::string::npos) {
          EXPECT_TRUE(records.contains(name))
              << name << ": no such recording rule in rules.yml, in " << query;
        } else {
          EXPECT_TRUE(Documented(docs, name))
              << name << ": not in docs/metrics-reference.md, in " << query;
        }
      }
    }
  }
  std::printf("[ figure   ] %zu metric names checked in %zu queries\n",
              checked.size(), queries.size());
}

// The decision and the regression-adjusted difference are on the
// dashboard (issue 27, "decision wherever the user looks"): a state
// timeline of the decision per experiment and treatment from the state set
// rankwatch_ab_decision (every state coded), the current one with the look
// that first gave it, and the adjusted difference with its always-valid
// interval.
TEST(GrafanaDashboardTest, ShowsTheDecisionAndTheAdjustedDifference) {
  const Dashboard dashboard = ParseDashboard(testing::ReadFile(
      std::string(SourceTree()) + "/deploy/grafana/rankwatch.json"));
  auto find =
      [&](std::string_view type,
          const std::vector<std::string>& names) -> const DashboardPanel* {
    for (const DashboardPanel& panel : dashboard.panels) {
      if (panel.type != type) continue;
      std::set<std::string> used;
      for (const std::string& expr : panel.exprs) {
        for (const std::string& name : MetricNames(expr)) used.insert(name);
      }
      if (std::all_of(names.begin(), names.end(),
                      [&](const std::string& n) { return used.contains(n); })) {
        return &panel;
      }
    }
    return nullptr;
  };
  const DashboardPanel* timeline =
      find("state-timeline", {"rankwatch_ab_decision"});
  ASSERT_NE(timeline, nullptr);
  for (const char* decision : {"ship", "no_ship", "keep_running", "invalid"}) {
    EXPECT_NE(
        timeline->exprs[0].find("decision=\"" + std::string(decision) + "\""),
        std::string::npos)
        << decision << " not coded: " << timeline->exprs[0];
  }
  EXPECT_NE(timeline->exprs[0].find("by (experiment, variant, baseline"),
            std::string::npos)
      << "not per experiment and treatment: " << timeline->exprs[0];
  const DashboardPanel* now = find(
      "stat", {"rankwatch_ab_decision", "rankwatch_ab_decision_since_look"});
  EXPECT_NE(now, nullptr);
  const DashboardPanel* adjusted =
      find("timeseries", {"rankwatch_ab_adjusted_difference",
                          "rankwatch_ab_adjusted_sequential_ci_lower",
                          "rankwatch_ab_adjusted_sequential_ci_upper"});
  ASSERT_NE(adjusted, nullptr);
  for (const std::string& expr : adjusted->exprs) {
    EXPECT_NE(expr.find("window=\"all\""), std::string::npos) << expr;
  }
}

class PrometheusE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef RANKWATCH_PROMETHEUS
    GTEST_SKIP() << "prometheus not found at configure time";
#else
    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, 4).ok());
    }
    StartDaemon();
    StartPrometheus();
#endif
  }

  void StartDaemon() {
    const std::string config = dir_.Write("rankwatch.yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() + R"("
  group_id: prometheus-e2e
  commit_interval: 1s
  properties:
    session.timeout.ms: "6000"
    fetch.wait.max.ms: "100"
schema:
  unit: user_id
  # The dashboard's regression-adjusted panel needs it (and the traffic's
  # --covariate below).
  covariate: pre_exposure.clicks
join:
  window: 4s
  allowed_lateness: 1s
  idle_timeout: 5s
aggregation:
  windows: [30s]
  bucket: 1s
  segments: [locale]
experiments:
  - name: ranker-v2
    baseline: A
    treatments: [B]
interleaving:
  - name: b_vs_a
    variant: A-vs-B
    teams: [A, B]
http:
  listen: 127.0.0.1:0
)");
    daemon_ = std::make_unique<testing::DaemonProcess>(RankwatchBinary(), dir_,
                                                       config, "daemon");
    ASSERT_TRUE(daemon_->WaitReady()) << daemon_->log();
  }

  void StartPrometheus() {
    std::string unknown;
    for (const char* file : {"rules.yml", "alerts.yml"}) {
      const std::string text = testing::ReadFile(std::string(SourceTree()) +
                                                 "/deploy/prometheus/" + file);
      ASSERT_FALSE(text.empty()) << file;
      dir_.Write(file, ShortenDurations(text, &unknown));
      ASSERT_EQ(unknown, "") << file << " uses a range the test cannot map";
    }
    const std::string config = dir_.Write("prometheus.yml", R"(
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml, alerts.yml]
scrape_configs:
  - job_name: rankwatch
    static_configs:
      - targets: ["127.0.0.1:)" + std::to_string(daemon_->port()) +
                                                                R"("]
)");
    prometheus_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            RANKWATCH_PROMETHEUS, "--config.file=" + config,
            "--storage.tsdb.path=" + dir_.path() + "/tsdb",
            "--web.listen-address=127.0.0.1:0", "--log.level=warn"},
        dir_.path() + "/prometheus.out", dir_.path() + "/prometheus.log");
    ASSERT_TRUE(WaitFor(
        [&] {
          const std::vector<int> ports =
              testing::ListeningTcpPorts(prometheus_->pid());
          if (ports.empty()) return false;
          prometheus_port_ = ports.front();
          auto r = testing::HttpGet("127.0.0.1", prometheus_port_, "/-/ready");
          return r.ok() && r->status == 200;
        },
        30s))
        << testing::ReadFile(dir_.path() + "/prometheus.log");
  }

  void StartTraffic(bool regress) {
    std::vector<std::string> argv = {RankwatchBinary(),
                                     "produce-synthetic",
                                     "--bootstrap",
                                     cluster_->bootstrap_servers(),
                                     "--rate",
                                     std::to_string(kRate),
                                     "--seed",
                                     "7",
                                     "--users",
                                     "20000",
                                     "--status-interval",
                                     "0s",
                                     "--interleave",
                                     "B",
                                     "--interleave-share",
                                     "0.2",
                                     "--covariate",
                                     "pre_exposure.clicks"};
    if (regress) {
      for (const char* a : {"--regress-variant", "B", "--regress-after"}) {
        argv.push_back(a);
      }
      argv.push_back(std::to_string(kRegressAfter.count()) + "s");
      argv.push_back("--regress-factor");
      argv.push_back("4");
    }
    traffic_start_ = std::chrono::steady_clock::now();
    traffic_ = std::make_unique<ChildProcess>(
        argv, dir_.path() + "/traffic.out", dir_.path() + "/traffic.log");
  }

  // GET on Prometheus' HTTP API; the parsed "data" member, or an error.
  bool ApiGet(const std::string& path, simdjson::dom::element* data) {
    auto r = testing::HttpGet("127.0.0.1", prometheus_port_, path);
    if (!r.ok() || r->status != 200) return false;
    body_ = r->body;
    simdjson::dom::element root;
    if (parser_.parse(body_).get(root)) return false;
    return !root["data"].get(*data);
  }

  // Alerts in state "firing", with the variant label when they have one.
  std::set<std::string> FiringAlerts() {
    std::set<std::string> firing;
    simdjson::dom::element data;
    if (!ApiGet("/api/v1/alerts", &data)) return firing;
    simdjson::dom::array alerts;
    if (data["alerts"].get(alerts)) return firing;
    for (simdjson::dom::element a : alerts) {
      std::string_view state, name, variant, description;
      if (a["state"].get(state) || state != "firing") continue;
      if (a["labels"]["alertname"].get(name)) continue;
      if (a["labels"]["variant"].get(variant)) variant = "";
      firing.insert(std::string(name) + "/" + std::string(variant));
      if (!a["annotations"]["description"].get(description)) {
        descriptions_[std::string(name) + "/" + std::string(variant)] =
            std::string(description);
      }
    }
    return firing;
  }

  static bool HasAlert(const std::set<std::string>& firing,
                       const std::string& name) {
    for (const std::string& f : firing) {
      if (f.starts_with(name + "/")) return true;
    }
    return false;
  }

  // Series an instant query returns (a scalar counts as one); -1 on error.
  int QuerySeries(const std::string& expr, std::string* error) {
    auto r = testing::HttpGet("127.0.0.1", prometheus_port_,
                              "/api/v1/query?query=" + UrlEncode(expr));
    if (!r.ok()) {
      *error = r.status().ToString();
      return -1;
    }
    simdjson::dom::element root;
    std::string_view type;
    simdjson::dom::element result;
    if (r->status != 200 || parser_.parse(r->body).get(root) ||
        root["data"]["resultType"].get(type) ||
        root["data"]["result"].get(result)) {
      *error = r->body;
      return -1;
    }
    if (type == "scalar") return 1;
    simdjson::dom::array series;
    if (result.get(series)) return -1;
    return static_cast<int>(series.size());
  }

  // The values Grafana offers for `var`, given the values of the variables
  // before it: label_values() through /api/v1/label/<label>/values.
  std::vector<std::string> VariableValues(
      const DashboardVariable& var,
      const std::map<std::string, std::string>& earlier) {
    std::vector<std::string> out;
    const std::string query = Substitute(var.query, earlier);
    if (var.type == "custom") {
      std::string item;
      for (std::istringstream in(query); std::getline(in, item, ',');) {
        out.push_back(item);
      }
      return out;
    }
    const std::string prefix = "label_values(";
    if (!query.starts_with(prefix) || !query.ends_with(")")) {
      ADD_FAILURE() << var.name << ": not label_values(...): " << query;
      return out;
    }
    const std::string args =
        query.substr(prefix.size(), query.size() - prefix.size() - 1);
    const size_t comma = args.rfind(',');
    std::string path = "/api/v1/label/";
    if (comma == std::string::npos) {
      path += args + "/values";
    } else {
      std::string label = args.substr(comma + 1);
      label.erase(0, label.find_first_not_of(' '));
      path += label + "/values?match[]=" + UrlEncode(args.substr(0, comma));
    }
    simdjson::dom::element data;
    if (!ApiGet(path, &data)) {
      ADD_FAILURE() << var.name << ": " << path << ": " << body_;
      return out;
    }
    for (simdjson::dom::element v : data.get_array()) {
      std::string_view text;
      if (!v.get(text)) out.emplace_back(text);
    }
    return out;
  }

  std::string Logs() {
    return "daemon: " + daemon_->log() + "\nprometheus: " +
           testing::ReadFile(dir_.path() + "/prometheus.log") +
           "\ntraffic: " + testing::ReadFile(dir_.path() + "/traffic.log");
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::unique_ptr<ChildProcess> prometheus_;
  std::unique_ptr<ChildProcess> traffic_;
  int prometheus_port_ = 0;
  std::chrono::steady_clock::time_point traffic_start_;
  simdjson::dom::parser parser_;
  std::string body_;
  // Of the latest firing alerts, by "name/variant".
  std::map<std::string, std::string> descriptions_;
};

TEST_F(PrometheusE2eTest, InjectedRegressionFiresBothAlerts) {
  StartTraffic(/*regress=*/true);
  std::set<std::string> firing;
  const bool fired = WaitFor(
      [&] {
        firing = FiringAlerts();
        return HasAlert(firing, kRegressionAlert) &&
               HasAlert(firing, kWorseAlert);
      },
      100s);
  const auto since_regression =
      std::chrono::steady_clock::now() - traffic_start_ - kRegressAfter;
  std::string list;
  for (const std::string& f : firing) list += f + " ";
  ASSERT_TRUE(fired) << "firing: " << list << "\n" << Logs();
  // Only the regressed variant is flagged, by one alert per (experiment,
  // variant) that names the primary measures that fell, with the variance
  // clustered by user.
  EXPECT_TRUE(firing.contains(std::string(kWorseAlert) + "/B")) << list;
  const std::string& worse = descriptions_[std::string(kWorseAlert) + "/B"];
  EXPECT_NE(worse.find("ndcg@10"), std::string::npos) << worse;
  EXPECT_NE(worse.find("cluster"), std::string::npos) << worse;
  EXPECT_FALSE(HasAlert(firing, "RankwatchSampleRatioMismatch")) << list;
  EXPECT_FALSE(firing.contains(std::string(kRegressionAlert) + "/A")) << list;
  std::printf(
      "[ figure   ] both alerts firing %.1f s after the regression started "
      "(ranges shortened: 30m -> 15s, 1d -> 45s; join window 4s)\n",
      std::chrono::duration<double>(since_regression).count());
}

TEST_F(PrometheusE2eTest, NoRegressionFiresNeitherAndDashboardQueriesWork) {
  StartTraffic(/*regress=*/false);
  // Watch as long as the regressed run needs to fire.
  const auto until = traffic_start_ + kRegressAfter + 30s;
  while (std::chrono::steady_clock::now() < until) {
    const std::set<std::string> firing = FiringAlerts();
    ASSERT_FALSE(HasAlert(firing, kRegressionAlert)) << Logs();
    ASSERT_FALSE(HasAlert(firing, kWorseAlert)) << Logs();
    testing::SleepFor(1s);
  }
  const Dashboard dashboard = ParseDashboard(testing::ReadFile(
      std::string(SourceTree()) + "/deploy/grafana/rankwatch.json"));
  ASSERT_GE(dashboard.exprs.size(), 8u);

  // Every variable's values, as Grafana would offer them against this
  // Prometheus, resolved in the dashboard's order (k depends on measure,
  // segment_value on segment...): `overrides` fixes some, and the
  // variables after them are resolved again, as Grafana refreshes chained
  // variables. The default of each is what opens the dashboard: "All" for
  // a multi-value variable, else the saved current value when offered,
  // else the first.
  std::map<std::string, std::vector<std::string>> offered;
  auto resolve = [&](const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> values;
    for (const DashboardVariable& var : dashboard.variables) {
      if (var.type == "datasource") continue;
      std::vector<std::string> options = VariableValues(var, values);
      EXPECT_FALSE(options.empty())
          << "variable " << var.name << " offers nothing";
      if (options.empty()) options.push_back("");
      std::string value = options.front();
      if (std::find(options.begin(), options.end(), var.current) !=
          options.end()) {
        value = var.current;
      }
      if (var.multi) value = var.all_value;
      if (const auto o = overrides.find(var.name); o != overrides.end()) {
        value = o->second;
      }
      values[var.name] = value;
      if (overrides.empty()) offered[var.name] = options;
    }
    return values;
  };
  const std::map<std::string, std::string> defaults = resolve({});
  std::vector<const DashboardVariable*> singles, multis;
  for (const DashboardVariable& var : dashboard.variables) {
    if (var.type == "datasource") continue;
    if (var.multi) {
      EXPECT_FALSE(var.all_value.empty()) << var.name << ": no All value";
      multis.push_back(&var);
    } else {
      singles.push_back(&var);
    }
    std::string list;
    for (const std::string& v : offered[var.name]) list += v + " ";
    std::printf("[ variable ] %s: %s(default %s)\n", var.name.c_str(),
                list.c_str(), defaults.at(var.name).c_str());
  }
  for (const char* name : {"experiment", "variant", "measure", "k", "window",
                           "segment", "segment_value"}) {
    EXPECT_TRUE(defaults.contains(name)) << "no dashboard variable " << name;
  }
  ASSERT_TRUE(defaults.contains("segment"));
  EXPECT_EQ(defaults.at("segment"), "locale");
  // The variable settings each query is checked with: the defaults, every
  // offered value of each single-value variable (the later ones resolved
  // again), each value of each multi-value variable alone.
  std::vector<std::pair<std::string, std::map<std::string, std::string>>>
      settings;
  for (const DashboardVariable* var : singles) {
    for (const std::string& value : offered[var->name]) {
      settings.emplace_back(var->name, resolve({{var->name, value}}));
    }
  }

  int queries = 0;
  auto count = [&](const std::map<std::string, std::string>& values,
                   const std::string& expr) {
    const std::string q = Substitute(expr, values);
    std::string error;
    const int n = QuerySeries(q, &error);
    ++queries;
    EXPECT_GE(n, 0) << q << "\n" << error;
    return std::make_pair(n, q);
  };
  for (const std::string& expr : dashboard.exprs) {
    EXPECT_EQ(expr.find("locale"), std::string::npos)
        << "segment label hard-coded: " << expr;
    auto [n, q] = count(defaults, expr);
    EXPECT_GT(n, 0) << q;
    for (const auto& [name, values] : settings) {
      if (!UsesVariable(expr, name)) continue;
      auto [m, r] = count(values, expr);
      EXPECT_GT(m, 0) << r;
    }
    for (const DashboardVariable* var : multis) {
      if (!UsesVariable(expr, var->name)) continue;
      int with_data = 0;
      for (const std::string& value : offered[var->name]) {
        std::map<std::string, std::string> values = defaults;
        values[var->name] = value;
        with_data += count(values, expr).first > 0 ? 1 : 0;
      }
      EXPECT_GT(with_data, 0)
          << "no value of " << var->name << " gives data: " << expr;
    }
  }
  std::printf("[ figure   ] %zu dashboard queries, %d substituted queries\n",
              dashboard.exprs.size(), queries);
}

}  // namespace
}  // namespace rankwatch
