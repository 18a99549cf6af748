// The status page in a real browser: `rankwatch run` on demo-like traffic
// (in-process mock cluster, 12 s of `rankwatch produce-synthetic` with B
// regressed and interleaved traffic), the page at / loaded in Debian's headless
// Chromium driven by playwright-core from the npm registry
// (tests/status_page/check_page.mjs), and the numbers it renders compared
// with /api/v1/summary and /metrics once the traffic has stopped and the
// daemon has settled. The page runs under its Content-Security-Policy
// (script and style allowed by hash only, no 'unsafe-inline', issue 24):
// the test fails on any violation Chromium reports, and a canary (a style
// attribute set after the checks) proves the policy is enforced and its
// violations seen. The chart's time axis (ticks at plausible times, a
// frame that fits the data) and its verdict markers (B turns worse) are
// checked against the summary, and a view (segment, window, k, experiment,
// charted series) put in the page's address is restored in a second page,
// whose address then follows a control. The screenshot is kept as a test
// artifact: <build>/Testing/status_page.png.
//
// The figures agree (issue 27): the page, /api/v1/summary and the gauges
// at one look, and `rankwatch replay` over the
// same events (the producers' --also-write-* copies) with the same
// configuration, once the daemon has finalized every request sent.
//
// Skipped (GTEST_SKIP, with the reason) only when node or chromium is
// missing; playwright-core is installed into a cache directory on first use
// (npm, pinned in tests/status_page/package.json).
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "config/config_loader.h"
#include "daemon/http/http_server.h"
#include "daemon/page/handlers.h"
#include "daemon/sim/mock_cluster.h"
#include "daemon/stream/pipeline/judge_report_test_util.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/http_client.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::ArtifactDir;
using rankwatch::testing::RankwatchBinary;
using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

constexpr char kPlaywrightVersion[] = "1.65.1";  // As in package.json.

// The first executable named `name` on PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// Where playwright-core is (installed on first use); "" with *error set.
std::string PlaywrightDir(const std::string& npm, std::string* error) {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache != nullptr && *cache != '\0'
                               ? std::string(cache)
                           : home != nullptr ? std::string(home) + "/.cache"
                                             : std::string("/tmp");
  const std::string dir =
      base + "/rankwatch/playwright-core-" + std::string(kPlaywrightVersion);
  if (std::filesystem::exists(dir + "/node_modules/playwright-core")) {
    return dir;
  }
  if (npm.empty()) {
    *error = "npm not found on PATH: cannot install playwright-core into " +
             dir + " (Debian package npm)";
    return "";
  }
  const testing::CommandResult r = testing::RunCommand(
      {npm, "install", "--prefix", dir, "--no-audit", "--no-fund",
       "--ignore-scripts", "--no-save",
       std::string("playwright-core@") + kPlaywrightVersion},
      180s);
  if (r.exit_code != 0) {
    *error = "npm install playwright-core failed: " + r.err;
    return "";
  }
  return dir;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds t) {
  const auto deadline = std::chrono::steady_clock::now() + t;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return done();
}

// "HH:MM:SS" of Unix milliseconds, UTC (the page's fmtClock).
std::string UtcClock(int64_t ms) {
  const time_t t = static_cast<time_t>(ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
  return buf;
}

// The index of the series named `name` in the summary, or -1.
int64_t SeriesIndex(simdjson::dom::element d, std::string_view name) {
  int64_t i = 0;
  for (simdjson::dom::element s : d["series"]) {
    if (std::string_view(s["name"]) == name) return i;
    ++i;
  }
  return -1;
}

// The value the page shows for a mean or a difference (fmt() in page.html:
// toFixed(4), which like printf rounds the double's exact decimal value).
std::string Fixed4(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", v);
  return buf;
}

// The value the page shows for a difference or an interval's end in the
// A/B table (fmtFigure() in page.html): C's "%+.4g", as the decisions'
// reasons print them (issue 42).
std::string Figure(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.4g", v);
  return buf;
}

// The value the page shows for a p-value (fmtP() in page.html): toFixed(4),
// or below 1e-4 toExponential(1), whose exponent has no leading zero
// ("5.6e-6" where printf writes "5.6e-06").
std::string FormatP(double p) {
  if (p >= 1e-4) return Fixed4(p);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1e", p);
  std::string s = buf;
  const size_t e = s.find("e-");
  while (e != std::string::npos && s.size() > e + 3 && s[e + 2] == '0') {
    s.erase(e + 2, 1);
  }
  return s;
}

// The count `key=N` in produce-synthetic's summary line, or -1.
int64_t SummaryCount(const std::string& summary, const std::string& key) {
  const std::string line = " " + summary;
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return -1;
  return std::strtoll(line.c_str() + at + key.size() + 2, nullptr, 10);
}

// A number of /api/v1/summary's or replay's JSON. Both write a value that
// is not finite as null, read here as NaN; a missing key is a failure
// rather than a NaN that would agree with another.
double Number(simdjson::simdjson_result<simdjson::dom::element> e,
              const std::string& what) {
  simdjson::dom::element x;
  if (e.get(x) != simdjson::SUCCESS) {
    ADD_FAILURE() << what << ": missing";
    return NAN;
  }
  double v = NAN;
  if (!x.is_null() && x.get(v) != simdjson::SUCCESS) {
    ADD_FAILURE() << what << ": not a number";
  }
  return v;
}

std::string Exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// The largest difference ExpectAgree has seen, relative to its tolerance's
// scale (printed).
double largest_relative_difference = 0;

// The daemon's figure and replay's of the same data. The daemon sums per
// partition (a shard each, merged at each look) in arrival order, replay in
// one shard in event-time order: the same terms in another order, so the
// last bits may differ (by a few 1e-15 relative in this test). They agree
// to 1e-12 of `scale`, the magnitude of the terms the figure comes from
// (at least its own): far below any difference the data could make, far
// above the rounding. A figure that is a small difference of larger terms
// (a mean difference of two means near 0.4, an interval's bound d - h near
// 0) carries their absolute rounding, hence the callers' scale. Non-finite
// values agree with non-finite ones: the JSON writes NaN and infinities
// alike as null; two infinities must be the same one.
void ExpectAgree(double live, double replay, const std::string& what,
                 double scale = 0) {
  if (!std::isfinite(live) || !std::isfinite(replay)) {
    EXPECT_TRUE(!std::isfinite(live) && !std::isfinite(replay) &&
                (std::isnan(live) || std::isnan(replay) || live == replay))
        << what << ": live " << live << ", replay " << replay;
    return;
  }
  scale = std::max({std::abs(scale), std::abs(live), std::abs(replay)});
  if (scale > 0) {
    largest_relative_difference =
        std::max(largest_relative_difference, std::abs(live - replay) / scale);
  }
  EXPECT_LE(std::abs(live - replay), 1e-12 * scale)
      << what << ": live " << Exact(live) << ", replay " << Exact(replay);
}

// The same for a p-value, compared by its logarithm when small: in the
// tail p is about exp(-z^2 / 2), so a relative difference e in the
// statistic z becomes z^2 e in p (4e-13 here at p = 1e-12; beyond 1e-12
// for a longer run) but stays 2 e in log p.
void ExpectAgreeP(double live, double replay, const std::string& what) {
  if (std::isfinite(live) && std::isfinite(replay) && live > 0 && replay > 0 &&
      std::min(live, replay) < 1e-3) {
    ExpectAgree(std::log(live), std::log(replay), what + " (log)");
    return;
  }
  ExpectAgree(live, replay, what);
}

// `live` against replay's figure `key` of `replay` (a comparison or its
// adjusted object) at the scale ExpectAgree needs: a p-value by
// ExpectAgreeP; a difference at the magnitude `means` of its arms' means;
// a relative difference at 1 (the difference's rounding over the
// baseline's mean); an interval's bound at its interval's
// max(|lower|, |upper|), which is |difference| + half-width.
void ExpectAgreesWith(double live, simdjson::dom::element replay,
                      const std::string& key, double means,
                      const std::string& what) {
  const double expected = Number(replay[key], key);
  if (key.find("p_value") != std::string::npos) {
    ExpectAgreeP(live, expected, what + " " + key);
    return;
  }
  double scale = 0;
  if (key == "difference") scale = means;
  if (key == "relative_difference") scale = 1;
  const size_t ci = key.find("ci_");
  if (ci != std::string::npos) {
    const std::string interval = key.substr(0, ci + 3);
    scale = std::max(std::abs(Number(replay[interval + "lower"], key)),
                     std::abs(Number(replay[interval + "upper"], key)));
  }
  ExpectAgree(live, expected, what + " " + key, scale);
}

class StatusPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = FindOnPath("node");
    chromium_ = FindOnPath("chromium");
    npm_ = FindOnPath("npm");
    if (node_.empty()) {
      GTEST_SKIP() << "node not found on PATH (Debian package nodejs; "
                      "scripts/install-deps.sh installs it)";
    }
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium not found on PATH (Debian package chromium; "
                      "scripts/install-deps.sh installs it)";
    }
    std::string error;
    playwright_ = PlaywrightDir(npm_, &error);
    ASSERT_FALSE(playwright_.empty()) << error;

    auto cluster = sim::MockCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, 2).ok());
    }
    const std::string config = dir_.Write("rankwatch.yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() + R"("
  group_id: status-page-e2e
  commit_interval: 1s
  properties:
    session.timeout.ms: "6000"
    fetch.wait.max.ms: "100"
schema:
  covariate: pre.clicks
join:
  window: 2s
  allowed_lateness: 1s
  idle_timeout: 3s
aggregation:
  windows: [30s, 2m]
  bucket: 2s
  segments: [locale]
experiments:
  - name: ranker-v2
    baseline: A
    treatments: [B]
    guardrails:
      - {series: judged@10, margin: 0.05}
interleaving:
  - name: b_vs_a
    variant: A-vs-B
    teams: [A, B]
  - name: abc
    variant: A-vs-B-vs-C
    teams: [A, B, C]
http:
  listen: 127.0.0.1:0
)");
    config_ = config;
    daemon_ = std::make_unique<testing::DaemonProcess>(RankwatchBinary(), dir_,
                                                       config, "daemon");
    ASSERT_TRUE(daemon_->WaitReady()) << daemon_->log();
  }

  // The summary, parsed into parser_; false when the daemon does not answer.
  bool Summary(simdjson::dom::element* d) {
    auto r = testing::HttpGet("127.0.0.1", daemon_->port(), "/api/v1/summary");
    if (!r.ok() || r->status != 200) return false;
    summary_ = r->body;
    return parser_.parse(summary_).get(*d) == simdjson::SUCCESS;
  }

  // Demo-like traffic in real time (B regressed from the start, a fifth of
  // the requests interleaved) for `seconds`, then the producers are stopped
  // (SIGTERM): what they produced until then is what the daemon has to
  // show; judgments still queued for their time are dropped, sent neither
  // to Kafka nor to the copies. Each producer also writes the events it
  // sends to files (--also-write-*), which replay reads.
  void RunTraffic(int seconds) {
    const std::string copy = dir_.path() + "/";
    ChildProcess traffic({RankwatchBinary(),
                          "produce-synthetic",
                          "--bootstrap",
                          cluster_->bootstrap_servers(),
                          "--rate",
                          "150",
                          "--seed",
                          "7",
                          "--status-interval",
                          "0s",
                          "--interleave",
                          "B",
                          "--interleave-share",
                          "0.2",
                          "--regress-variant",
                          "B",
                          "--regress-after",
                          "0s",
                          "--regress-factor",
                          "4",
                          "--covariate",
                          "pre.clicks",
                          "--also-write-results",
                          copy + "traffic.results.jsonl",
                          "--also-write-judgments",
                          copy + "traffic.judgments.jsonl"},
                         dir_.path() + "/traffic.out",
                         dir_.path() + "/traffic.log");
    // Beside it, three rankers multileaved on every request of their own
    // (another seed: other request ids), C best, B worst.
    ChildProcess multileaved({RankwatchBinary(),
                              "produce-synthetic",
                              "--bootstrap",
                              cluster_->bootstrap_servers(),
                              "--rate",
                              "100",
                              "--seed",
                              "8",
                              "--status-interval",
                              "0s",
                              "--variants",
                              "A:1.0,B:2.0,C:0.5",
                              "--multileave",
                              "A,B,C",
                              "--interleave-share",
                              "1",
                              "--also-write-results",
                              copy + "multileaved.results.jsonl",
                              "--also-write-judgments",
                              copy + "multileaved.judgments.jsonl"},
                             dir_.path() + "/multileaved.out",
                             dir_.path() + "/multileaved.log");
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    ASSERT_TRUE(traffic.Running())
        << testing::ReadFile(dir_.path() + "/traffic.log");
    ASSERT_TRUE(multileaved.Running())
        << testing::ReadFile(dir_.path() + "/multileaved.log");
    traffic.Signal(SIGTERM);
    multileaved.Signal(SIGTERM);
    // Exit code 0: every event (and line of the copies) was delivered.
    ASSERT_EQ(traffic.Wait(40s), std::optional<int>(0))
        << testing::ReadFile(dir_.path() + "/traffic.log");
    ASSERT_EQ(multileaved.Wait(40s), std::optional<int>(0))
        << testing::ReadFile(dir_.path() + "/multileaved.log");
    for (const char* name : {"traffic", "multileaved"}) {
      const std::string summary =
          testing::ReadFile(dir_.path() + "/" + name + ".out");
      const int64_t results = SummaryCount(summary, "results");
      const int64_t judgments = SummaryCount(summary, "judgments");
      ASSERT_GT(results, 0) << summary;
      ASSERT_GT(judgments, 0) << summary;
      sent_results_ += results;
      sent_judgments_ += judgments;
      if (std::string_view(name) == "traffic") traffic_results_ = results;
    }
  }

  // Waits until every event the producers sent is consumed, every request
  // finalized (their count is the results events sent: the windows close by
  // join.idle_timeout once the traffic stops), nothing is pending and the
  // counters stay put for a few seconds (the experiments' looks, once per
  // second and at each request of the summary, then see the final data).
  void WaitSettled() {
    std::string last;
    int stable = 0;
    ASSERT_TRUE(WaitFor(
        [&] {
          simdjson::dom::element d;
          if (!Summary(&d)) return false;
          simdjson::dom::element p = d["pipeline"];
          const int64_t results = p["topics"].at(0)["consumed"];
          const int64_t judgments = p["topics"].at(1)["consumed"];
          const int64_t finalized = p["finalized"];
          const bool all =
              results == sent_results_ && judgments == sent_judgments_ &&
              finalized == sent_results_ && int64_t(p["pending_requests"]) == 0;
          const std::string now = std::to_string(results) + "/" +
                                  std::to_string(judgments) + "/" +
                                  std::to_string(int64_t(p["scored"]));
          stable = (all && now == last) ? stable + 1 : 0;
          last = now;
          return stable >= 15;  // 3 s at 200 ms.
        },
        90s))
        << "sent " << sent_results_ << " results and " << sent_judgments_
        << " judgments\n"
        << summary_;
  }

  // `rankwatch replay --format json` over the events the producers sent
  // (their --also-write-* copies, concatenated: replay orders by event
  // time), with the daemon's configuration; "" with a failure recorded.
  std::string Replay() {
    std::string results, judgments;
    for (const char* name : {"traffic", "multileaved"}) {
      results += testing::ReadFile(dir_.path() + "/" + name + ".results.jsonl");
      judgments +=
          testing::ReadFile(dir_.path() + "/" + name + ".judgments.jsonl");
    }
    const testing::CommandResult r = testing::RunCommand(
        {RankwatchBinary(), "replay", "--config", config_, "--results",
         dir_.Write("replay.results.jsonl", results), "--judgments",
         dir_.Write("replay.judgments.jsonl", judgments), "--format", "json"},
        120s);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? r.out : "";
  }

  // Replay agrees with the daemon (issue 27): the events the producers
  // sent, replayed from their copies with the daemon's configuration,
  // against the daemon's summary `live` and its gauges (`metrics_text`,
  // one /metrics page), read once every
  // request is finalized. Compared are the functions of the data: the
  // join's counts, per variant and per arm the lists and means, and per
  // window-`all` comparison the difference, relative difference, Welch
  // interval and p-value, BH-adjusted p-value, the adjusted figures and the
  // latest look's always-valid interval and p-value.
  //
  // Not compared: the running always-valid figures (sequential_ci_*,
  // sequential_p_value: the intersection and minimum over looks) and what
  // reads them, the verdict and the decision. They depend on when the
  // looks fell: the daemon looks once per second of wall time and at each
  // scrape of a summary or /metrics page with new data, from its first
  // lists on; replay looks once, when every request is finalized (its
  // adjusted sequential_looks is 1, checked below), so its running
  // figures are its one look's. What holds instead: the daemon's running
  // interval lies inside its latest look's (an intersection over looks
  // that include it), which is replay's one look; so a verdict or
  // decision that replay's interval already settles (worse or better; ship
  // or no_ship) the daemon's narrower interval settles the same way, while
  // where replay's interval still holds 0 the daemon may have decided
  // earlier. The sliding windows (30s, 2m) end at each side's watermark
  // and are not compared either.
  void ExpectReplayAgrees(simdjson::dom::element live,
                          const std::string& metrics_text) {
    const std::string replay_text = Replay();
    ASSERT_FALSE(replay_text.empty());
    simdjson::dom::parser replay_parser;
    simdjson::dom::element replay;
    ASSERT_EQ(replay_parser.parse(replay_text).get(replay), simdjson::SUCCESS)
        << replay_text;
    const testing::Scrape metrics = testing::Scrape::Parse(metrics_text);

    // Every event sent was read by both, and joined alike: exact counts.
    simdjson::dom::element events = replay["events"];
    simdjson::dom::element pipeline = live["pipeline"];
    EXPECT_EQ(int64_t(events["results"]), sent_results_);
    EXPECT_EQ(int64_t(events["judgments"]), sent_judgments_);
    EXPECT_EQ(int64_t(events["finalized"]), sent_results_);
    const std::pair<const char*, const char*> counts[] = {
        {"finalized", "finalized"},
        {"scored", "scored"},
        {"without_relevant", "without_relevant"},
        {"unjudged", "unjudged"},
        {"orphaned_judgments", "orphaned_judgments"},
        {"late", "late_judgments"},
        {"late_results", "late_results"},
        {"duplicate_results", "duplicate_results"},
        {"evicted", "evicted"}};
    for (const auto& [replay_key, live_key] : counts) {
      EXPECT_EQ(int64_t(events[replay_key]), int64_t(pipeline[live_key]))
          << live_key;
    }
    // Only the A/B producer sends the covariate (--covariate): its lists
    // have one, the multileaved producer's none.
    EXPECT_EQ(int64_t(events["covariate"]["present"]), traffic_results_);
    EXPECT_EQ(int64_t(events["covariate"]["absent"]),
              sent_results_ - traffic_results_);
    for (const auto [reason, n] : simdjson::dom::object(events["covariate"])) {
      EXPECT_EQ(double(int64_t(n)),
                metrics.Sum("rankwatch_covariate_events_total",
                            {{"reason", std::string(reason)}}))
          << reason;
    }

    // Per variant and series, window all: requests, lists and mean.
    size_t variants = 0;
    for (simdjson::dom::element v : live["variants"]) {
      const std::string variant{std::string_view(v["variant"])};
      SCOPED_TRACE(variant);
      simdjson::dom::element r;
      ASSERT_EQ(replay["variants"][variant].get(r), simdjson::SUCCESS)
          << replay_text;
      EXPECT_EQ(int64_t(v["requests"]), int64_t(r["requests"]));
      size_t i = 0;
      for (simdjson::dom::element s : live["series"]) {
        const std::string name{std::string_view(s["name"])};
        simdjson::dom::element all = v["series"].at(i++)["windows"].at(0);
        EXPECT_EQ(int64_t(all["count"]), int64_t(r["measures"][name]["count"]))
            << name;
        ExpectAgree(Number(all["mean"], name),
                    Number(r["measures"][name]["mean"], name),
                    variant + " " + name + " mean");
      }
      ++variants;
    }
    EXPECT_EQ(variants, simdjson::dom::object(replay["variants"]).size());

    simdjson::dom::element lx = live["experiments"].at(0);
    simdjson::dom::element rx = replay["experiments"]["ranker-v2"];
    const std::string baseline{std::string_view(lx["baseline"])};
    // Sample ratio: the lists per variant, and the chi-square test on them.
    std::map<std::string, int64_t> srm;
    for (size_t i = 0; i < simdjson::dom::array(lx["srm"]["variants"]).size();
         ++i) {
      srm[std::string(std::string_view(lx["srm"]["variants"].at(i)))] =
          int64_t(lx["srm"]["counts"].at(i));
    }
    for (const auto [variant, n] : simdjson::dom::object(rx["srm"]["counts"])) {
      EXPECT_EQ(srm[std::string(variant)], int64_t(n)) << variant;
    }
    ExpectAgreeP(Number(lx["srm"]["chi_square_p_value"], "srm"),
                 Number(rx["srm"]["p_value"], "srm"), "chi-square p");

    int compared = 0;
    for (simdjson::dom::element c : lx["comparisons"]) {
      if (std::string_view(c["window"]) != "all") continue;
      const std::string treatment{std::string_view(c["treatment"])};
      const std::string series{std::string_view(c["series"])};
      const std::string what = treatment + " " + series;
      SCOPED_TRACE(what);
      simdjson::dom::element r;
      ASSERT_EQ(rx["treatments"][treatment][series].get(r), simdjson::SUCCESS)
          << replay_text;
      // The arms: lists and means (replay has them per variant).
      EXPECT_EQ(int64_t(c["baseline_arm"]["count"]),
                int64_t(r["baseline_count"]));
      EXPECT_EQ(int64_t(c["treatment_arm"]["count"]),
                int64_t(r["treatment_count"]));
      const double baseline_mean =
          Number(replay["variants"][baseline]["measures"][series]["mean"],
                 "baseline mean");
      const double treatment_mean =
          Number(replay["variants"][treatment]["measures"][series]["mean"],
                 "treatment mean");
      ExpectAgree(Number(c["baseline_arm"]["mean"], "mean"), baseline_mean,
                  what + " baseline mean");
      ExpectAgree(Number(c["treatment_arm"]["mean"], "mean"), treatment_mean,
                  what + " treatment mean");
      const double means =
          std::max(std::abs(baseline_mean), std::abs(treatment_mean));
      const auto agree = [&](double l, const std::string& key) {
        ExpectAgreesWith(l, r, key, means, what);
      };
      // The fixed-horizon test.
      agree(Number(c["difference"], "difference"), "difference");
      ExpectAgree(Number(c["relative_difference"], "relative"),
                  Number(r["difference"], "difference") / baseline_mean,
                  what + " relative difference", 1);
      agree(Number(c["welch"]["interval"].at(0), "ci"), "ci_lower");
      agree(Number(c["welch"]["interval"].at(1), "ci"), "ci_upper");
      agree(Number(c["welch"]["p_value"], "p"), "p_value");
      const bool quality = c["quality"];
      if (quality) agree(Number(c["p_value_bh"], "p_bh"), "p_value_bh");
      // The gauges hold the same figures...
      const std::map<std::string, std::string> labels = {
          {"experiment", "ranker-v2"},
          {"variant", treatment},
          {"measure", std::string(std::string_view(c["measure"]))},
          {"k", std::string(std::string_view(c["k"]))},
          {"window", "all"}};
      const auto gauge = [&](const std::string& name) {
        EXPECT_TRUE(metrics.Has(name, labels)) << name;
        return metrics.Sum(name, labels);
      };
      EXPECT_EQ(gauge("rankwatch_ab_baseline_requests"),
                double(int64_t(r["baseline_count"])));
      EXPECT_EQ(gauge("rankwatch_ab_treatment_requests"),
                double(int64_t(r["treatment_count"])));
      agree(gauge("rankwatch_ab_difference"), "difference");
      agree(gauge("rankwatch_ab_ci_lower"), "ci_lower");
      agree(gauge("rankwatch_ab_ci_upper"), "ci_upper");
      agree(gauge("rankwatch_ab_p_value"), "p_value");
      if (quality) agree(gauge("rankwatch_ab_p_value_bh"), "p_value_bh");
      // ...and the latest look, which replay's only look is.
      const double look_lower = gauge("rankwatch_ab_sequential_look_ci_lower");
      const double look_upper = gauge("rankwatch_ab_sequential_look_ci_upper");
      agree(look_lower, "sequential_ci_lower");
      agree(look_upper, "sequential_ci_upper");
      agree(gauge("rankwatch_ab_sequential_look_p_value"),
            "sequential_p_value");
      // The daemon's running interval lies inside that look's (both read
      // from the gauges, which print 16 significant digits: a bound the
      // two share prints alike), so a verdict replay reaches, the daemon
      // has reached too.
      simdjson::dom::array running = c["sequential"]["interval"];
      const double running_lower = gauge("rankwatch_ab_sequential_ci_lower");
      const double running_upper = gauge("rankwatch_ab_sequential_ci_upper");
      // (The gauges and the summary: the same doubles, up to the
      // gauges' 16 digits.)
      ExpectAgree(running_lower, Number(running.at(0), "running"),
                  what + " running lower", running_upper);
      ExpectAgree(running_upper, Number(running.at(1), "running"),
                  what + " running upper", running_lower);
      EXPECT_GE(running_lower, look_lower)
          << Exact(running_lower) << " " << Exact(look_lower) << " "
          << Exact(Number(running.at(0), "running"));
      EXPECT_LE(running_upper, look_upper)
          << Exact(running_upper) << " " << Exact(look_upper) << " "
          << Exact(Number(running.at(1), "running"));
      if (quality && int64_t(r["verdict"]) != 0) {
        EXPECT_EQ(int64_t(c["verdict"]), int64_t(r["verdict"]));
      }

      // Regression-adjusted: the same object on both sides, but for the
      // running sequential figures; replay's are its one look's.
      simdjson::dom::element la;
      if (c["adjusted"].get(la) == simdjson::SUCCESS) {
        simdjson::dom::element ra;
        ASSERT_EQ(r["adjusted"].get(ra), simdjson::SUCCESS) << replay_text;
        EXPECT_EQ(std::string_view(la["status"]),
                  std::string_view(ra["status"]));
        for (const char* key : {"baseline_count", "treatment_count"}) {
          EXPECT_EQ(int64_t(la[key]), int64_t(ra[key])) << key;
        }
        EXPECT_EQ(int64_t(ra["sequential_looks"]), 1);
        for (const char* key :
             {"theta", "variance_ratio", "difference", "relative_difference",
              "standard_error", "ci_lower", "ci_upper", "p_value",
              "sequential_look_p_value", "sequential_look_ci_lower",
              "sequential_look_ci_upper"}) {
          ExpectAgreesWith(Number(la[key], key), ra, key, means,
                           what + " adjusted");
          ExpectAgreesWith(gauge(std::string("rankwatch_ab_adjusted_") + key),
                           ra, key, means, what + " adjusted gauge");
        }
        for (const char* key : {"ci_lower", "ci_upper", "p_value"}) {
          EXPECT_EQ(
              Exact(Number(ra[std::string("sequential_") + key], key)),
              Exact(Number(ra[std::string("sequential_look_") + key], key)))
              << key;
        }
        EXPECT_GE(Number(la["sequential_ci_lower"], "running"),
                  Number(la["sequential_look_ci_lower"], "look"));
        EXPECT_LE(Number(la["sequential_ci_upper"], "running"),
                  Number(la["sequential_look_ci_upper"], "look"));
      }
      ++compared;
    }
    // Every window-all comparison of B: one per series.
    EXPECT_EQ(compared, int(simdjson::dom::array(live["series"]).size()));

    // The decision: where replay's one look settles it, the same.
    const std::string decided{
        std::string_view(rx["treatments"]["B"]["decision"]["value"])};
    const std::string live_decision{
        std::string_view(lx["decisions"].at(0)["value"])};
    if (decided == "ship" || decided == "no_ship") {
      EXPECT_FALSE(bool(lx["srm"]["detected"])) << "then: invalid";
      EXPECT_EQ(live_decision, decided);
    }
    std::printf(
        "replay agrees: %d comparisons, largest relative difference %.3g, "
        "decision %s (live %s)\n",
        compared, largest_relative_difference, decided.c_str(),
        live_decision.c_str());
  }

  std::string node_, npm_, chromium_, playwright_;
  testing::TempDir dir_;
  std::string config_;        // The daemon's configuration file, also replay's.
  int64_t sent_results_ = 0;  // Events the producers sent (RunTraffic).
  int64_t sent_judgments_ = 0;
  int64_t traffic_results_ = 0;  // Of those, the A/B producer's results.
  std::unique_ptr<sim::MockCluster> cluster_;
  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::string summary_;
  simdjson::dom::parser parser_;
};

TEST_F(StatusPageTest, RendersTheSummaryAndMetricsInChromium) {
  // The page is served with hash sources, not 'unsafe-inline' (what
  // Chromium enforces below).
  auto served = testing::HttpGet("127.0.0.1", daemon_->port(), "/");
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  const std::string policy =
      served->Header("Content-Security-Policy").value_or("");
  EXPECT_NE(policy.find("script-src 'sha256-"), std::string::npos) << policy;
  EXPECT_NE(policy.find("style-src 'sha256-"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;

  ASSERT_NO_FATAL_FAILURE(RunTraffic(12));
  ASSERT_NO_FATAL_FAILURE(WaitSettled());

  const std::vector<std::string> ids = {
      "mean-A-ndcg_cut_10-all",
      "mean-B-ndcg_cut_10-all",
      "difference-ranker-v2-B-ndcg_cut_10-all",
      "interval-ranker-v2-B-ndcg_cut_10-all",
      "relative-ranker-v2-B-ndcg_cut_10-all",
      "ab-legend",
      "decision-ranker-v2-B",
      "adjusted-difference-ranker-v2-B-ndcg_cut_10-all",
      "adjusted-status-ranker-v2-B-ndcg_cut_10-all",
      "decision-value-ranker-v2-B",
      "decision-since-ranker-v2-B",
      "verdict-ranker-v2-B-ndcg_cut_10-all",
      "consumed-results",
      "consumed-judgments",
      "pipeline-scored",
      "preference-b_vs_a-all",
      "interleaving-verdict-b_vs_a",
      "readiness",
      "impression-note",
      "movers-title-ranker-v2-B-ndcg_cut_10",
      "mover-query-ranker-v2-B-ndcg_cut_10-0",
      "mover-difference-ranker-v2-B-ndcg_cut_10-0",
      "mover-contribution-ranker-v2-B-ndcg_cut_10-0",
      "mover-p-bh-ranker-v2-B-ndcg_cut_10-0",
      "mover-query-ranker-v2-B-ndcg_cut_10-1",
      "mover-difference-ranker-v2-B-ndcg_cut_10-1",
      "mover-contribution-ranker-v2-B-ndcg_cut_10-1",
      "multileaving-cell-abc-A-B",
      "multileaving-cell-abc-B-A",
      "multileaving-cell-abc-A-C",
      "multileaving-cell-abc-C-A",
      "multileaving-cell-abc-B-C",
      "multileaving-cell-abc-C-B",
      "multileaving-ranking-abc"};
  // The shared view: locale of the first segment group of B (A serves every
  // locale too), window all, k 5, the experiment, P_5 charted.
  simdjson::dom::element before;
  ASSERT_TRUE(Summary(&before));
  std::string locale;
  for (simdjson::dom::element g : before["groups"]) {
    if (std::string_view(g["variant"]) == "B") {
      locale = std::string(std::string_view(g["segments"]["locale"]));
      break;
    }
  }
  ASSERT_FALSE(locale.empty()) << summary_;
  const std::string view = "segment=locale%3D" + locale +
                           "&window=all&k=5&experiment=ranker-v2&series=P_5";
  const std::string screenshot = dir_.path() + "/status_page.png";
  std::vector<std::string> argv = {
      node_,
      std::string(SourceTree()) + "/tests/status_page/check_page.mjs",
      playwright_,
      chromium_,
      "http://127.0.0.1:" + std::to_string(daemon_->port()) + "/",
      screenshot,
      dir_.path() + "/chromium-profile",
      "--view=" + view,
      "--change-window=2m",
      "--view-id=difference-ranker-v2-B-P_5-all",
      "--view-id=ab-segment-note"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  const auto start = std::chrono::steady_clock::now();
  const testing::CommandResult page = testing::RunCommand(argv, 120s);
  const double browser_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(page.exit_code, 0) << page.out << page.err;
  std::printf("browser: %.1f s\n", browser_s);

  // The artifact, beside ctest's own files.
  std::error_code ec;
  std::filesystem::create_directories(ArtifactDir(), ec);
  std::filesystem::copy_file(
      screenshot, std::string(ArtifactDir()) + "/status_page.png",
      std::filesystem::copy_options::overwrite_existing, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_GT(std::filesystem::file_size(screenshot), 10'000u);

  simdjson::dom::parser page_parser;
  simdjson::dom::element shown;
  ASSERT_EQ(page_parser.parse(page.out).get(shown), simdjson::SUCCESS)
      << page.out;
  EXPECT_EQ(std::string_view(shown["page-errors"]), "");
  // No Content-Security-Policy violation while the page loaded, polled and
  // rendered (events in the page and Chromium's console messages)...
  EXPECT_EQ(std::string_view(shown["csp-violations"]), "");
  // ...where one would have been seen: the canary's style attribute was
  // refused, as an event and on the console.
  EXPECT_EQ(std::string_view(shown["csp-canary"]),
            "refused and reported on the console");
  auto text = [&](const std::string& id) {
    return std::string(std::string_view(shown[id]));
  };

  // One look: the summary and one /metrics page, read by the gauges'
  // parser, then replay's figures of the same
  // events (ExpectReplayAgrees).
  simdjson::dom::element d;
  ASSERT_TRUE(Summary(&d));
  auto raw = testing::HttpGet("127.0.0.1", daemon_->port(), "/metrics");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  const std::string metrics_text = raw->body;
  const testing::Scrape metrics = testing::Scrape::Parse(metrics_text);

  // The decision (issue 27): the page's headline and first reason are the
  // summary's, the gauges hold the same value, the primary series and the
  // guardrail (judged@10, margin 0.05) are both read.
  {
    simdjson::dom::element dec = d["experiments"].at(0)["decisions"].at(0);
    const std::string value{std::string_view(dec["value"])};
    const std::map<std::string, std::string> headline = {
        {"ship", "Ship B"},
        {"no_ship", "Do not ship B"},
        {"keep_running", "Keep running B (against A)"},
        {"invalid", "Invalid: B against A cannot be judged"}};
    ASSERT_EQ(headline.count(value), 1u) << summary_;
    EXPECT_EQ(text("decision-value-ranker-v2-B"), headline.at(value));
    const std::string first{std::string_view(dec["reasons"].at(0))};
    EXPECT_NE(text("decision-ranker-v2-B").find(": " + first),
              std::string::npos)
        << text("decision-ranker-v2-B") << "\n"
        << summary_;
    // Null while the value holds since the first look, before any event.
    const std::string look =
        " (look " + std::to_string(int64_t(dec["since_look"])) + ")";
    EXPECT_EQ(
        text("decision-since-ranker-v2-B"),
        dec["since_event_ms"].is_null()
            ? "· since the start" + look
            : "· since " + UtcClock(int64_t(dec["since_event_ms"])) + look);
    EXPECT_EQ(metrics.Sum("rankwatch_ab_decision", {{"experiment", "ranker-v2"},
                                                    {"variant", "B"},
                                                    {"baseline", "A"},
                                                    {"decision", value}}),
              1);
    simdjson::dom::array inputs = dec["inputs"];
    ASSERT_EQ(inputs.size(), 2u) << summary_;
    EXPECT_EQ(std::string_view(inputs.at(0)["series"]), "ndcg@10");
    EXPECT_EQ(std::string_view(inputs.at(1)["role"]), "guardrail");
    EXPECT_EQ(std::string_view(inputs.at(1)["series"]), "judged@10");
    EXPECT_EQ(double(inputs.at(1)["margin"]), 0.05);
    // B is regressed in this traffic: ndcg@10 is worse once the interval
    // excludes 0, and then the decision is no_ship, once the minimum
    // sample is met (issue 42); before, keep_running, saying what is
    // missing first.
    const bool met = bool(dec["minimum"]["met"]);
    if (std::string_view(inputs.at(0)["state"]) == "worse") {
      EXPECT_EQ(value, met ? "no_ship" : "keep_running");
    }
    if (!met) {
      const std::string_view first = dec["reasons"].at(0);
      EXPECT_EQ(first.substr(0, 27), "minimum sample not reached:") << first;
    }
  }

  const int64_t ndcg10 = SeriesIndex(d, "ndcg_cut_10");
  ASSERT_GE(ndcg10, 0) << summary_;
  for (simdjson::dom::element v : d["variants"]) {
    const std::string variant{std::string_view(v["variant"])};
    if (variant != "A" && variant != "B") continue;
    SCOPED_TRACE(variant);
    simdjson::dom::element all =
        v["series"].at(static_cast<size_t>(ndcg10))["windows"].at(0);
    const double mean = all["mean"];
    // The page shows the summary's mean...
    EXPECT_EQ(text("mean-" + variant + "-ndcg_cut_10-all"), Fixed4(mean));
    // ...which is /metrics' sum over the variant's segment groups divided
    // by their count (what PromQL computes from the histogram).
    const std::map<std::string, std::string> l = {{"variant", variant},
                                                  {"k", "10"}};
    const double count = metrics.Sum("rankwatch_ndcg_count", l);
    EXPECT_EQ(int64_t(all["count"]), count);
    EXPECT_NEAR(mean, metrics.Sum("rankwatch_ndcg_sum", l) / count, 1e-12);
    EXPECT_GT(count, 100);
  }

  // The experiment: B regressed 4x, so worse on nDCG@10.
  bool found = false;
  for (simdjson::dom::element c : d["experiments"].at(0)["comparisons"]) {
    if (std::string_view(c["series"]) != "ndcg_cut_10" ||
        std::string_view(c["window"]) != "all") {
      continue;
    }
    found = true;
    EXPECT_EQ(text("difference-ranker-v2-B-ndcg_cut_10-all"),
              Figure(double(c["difference"])));
    // One interval per figure (issue 42): the always-valid one, which the
    // decision's reason about the primary series quotes digit for digit.
    simdjson::dom::array ci = c["sequential"]["interval"].get_array();
    const std::string interval =
        "[" + Figure(double(ci.at(0))) + ", " + Figure(double(ci.at(1))) + "]";
    EXPECT_EQ(text("interval-ranker-v2-B-ndcg_cut_10-all"), interval);
    EXPECT_NE(
        text("decision-ranker-v2-B")
            .find("ndcg_cut_10 is worse: " + Figure(double(c["difference"]))),
        std::string::npos)
        << text("decision-ranker-v2-B");
    EXPECT_NE(text("decision-ranker-v2-B")
                  .find("95% always-valid interval " + interval),
              std::string::npos)
        << text("decision-ranker-v2-B") << "\n"
        << interval;
    // The relative difference, a signed percentage (fmtPercent()), is the
    // difference over the baseline arm's mean.
    const double relative = c["relative_difference"];
    EXPECT_NEAR(relative,
                double(c["difference"]) / double(c["baseline_arm"]["mean"]),
                1e-12);
    char percent[32];
    std::snprintf(percent, sizeof(percent), "%s%.1f%%", relative > 0 ? "+" : "",
                  100 * relative);
    EXPECT_EQ(text("relative-ranker-v2-B-ndcg_cut_10-all"), percent);
    EXPECT_EQ(std::string_view(c["state"]), "worse");
    EXPECT_EQ(text("verdict-ranker-v2-B-ndcg_cut_10-all"), "worse");
    const std::map<std::string, std::string> l = {{"experiment", "ranker-v2"},
                                                  {"variant", "B"},
                                                  {"measure", "ndcg"},
                                                  {"k", "10"},
                                                  {"window", "all"}};
    EXPECT_EQ(metrics.Sum("rankwatch_ab_verdict", l), -1);
    EXPECT_NEAR(double(c["difference"]),
                metrics.Sum("rankwatch_ab_difference", l), 1e-12);
    // Regression-adjusted by the producer's covariate (--covariate): the
    // page's row is the summary's, as is the gauge; the covariate predicts
    // clicks, so the adjusted variance is smaller.
    simdjson::dom::element adjusted = c["adjusted"];
    EXPECT_EQ(std::string_view(adjusted["status"]), "adjusted") << summary_;
    EXPECT_EQ(text("adjusted-difference-ranker-v2-B-ndcg_cut_10-all"),
              Figure(double(adjusted["difference"])));
    EXPECT_NEAR(double(adjusted["difference"]),
                metrics.Sum("rankwatch_ab_adjusted_difference", l), 1e-12);
    const double ratio = adjusted["variance_ratio"];
    EXPECT_LT(ratio, 1.0);
    char variance[32];
    std::snprintf(variance, sizeof(variance), "variance \u00d7%.2f", ratio);
    EXPECT_EQ(text("adjusted-status-ranker-v2-B-ndcg_cut_10-all"), variance);
  }
  EXPECT_TRUE(found) << summary_;

  // Query movers of the primary series (nDCG@10, window all): the page's
  // first two rows are the summary's first two movers (200 synthetic
  // queries; 12 s of traffic leave each query a few lists per arm, so the
  // BH column says why there is no test when there is none).
  for (simdjson::dom::element c : d["experiments"].at(0)["comparisons"]) {
    if (!bool(c["primary"]) || std::string_view(c["window"]) != "all") {
      continue;
    }
    EXPECT_EQ(std::string_view(c["series"]), "ndcg_cut_10");
    simdjson::dom::array movers = c["query_movers"];
    ASSERT_GE(movers.size(), 2u) << summary_;
    const std::string key = "ranker-v2-B-ndcg_cut_10-";
    for (size_t i = 0; i < 2; ++i) {
      SCOPED_TRACE(i);
      simdjson::dom::element m = movers.at(i);
      EXPECT_EQ(text("mover-query-" + key + std::to_string(i)),
                std::string_view(m["query"]));
      EXPECT_EQ(text("mover-difference-" + key + std::to_string(i)),
                Fixed4(double(m["difference"])));
      EXPECT_EQ(text("mover-contribution-" + key + std::to_string(i)),
                Fixed4(double(m["contribution"])));
    }
    // Ranked by |contribution|.
    EXPECT_GE(std::abs(double(movers.at(0)["contribution"])),
              std::abs(double(movers.at(1)["contribution"])));
    const std::string p_bh = text("mover-p-bh-" + key + "0");
    if (bool(movers.at(0)["tested"])) {
      EXPECT_EQ(p_bh.rfind(FormatP(double(movers.at(0)["p_value_bh"])), 0), 0u)
          << p_bh;
    } else {
      EXPECT_EQ(p_bh, "too few lists");
    }
  }
  // The legend says which test decides.
  EXPECT_NE(text("ab-legend").find("Verdict: from the always-valid interval"),
            std::string::npos)
      << text("ab-legend");
  EXPECT_EQ(text("movers-title-ranker-v2-B-ndcg_cut_10"),
            "Queries that moved B's ndcg_cut_10 most");

  // Pipeline health: the events consumed, as counted by /metrics.
  for (const char* topic : {"results", "judgments"}) {
    SCOPED_TRACE(topic);
    const double consumed =
        metrics.Sum("rankwatch_events_consumed_total", {{"topic", topic}});
    EXPECT_GT(consumed, 1000);
    EXPECT_EQ(text(std::string("consumed-") + topic),
              std::to_string(static_cast<int64_t>(consumed)));
  }
  EXPECT_EQ(text("pipeline-scored"),
            std::to_string(int64_t(d["pipeline"]["scored"])));
  EXPECT_EQ(double(int64_t(d["pipeline"]["scored"])),
            metrics.Sum("rankwatch_requests_scored_total"));

  // Interleaving: the challenger's preference as /metrics has it.
  simdjson::dom::element x = d["interleaving"].at(0);
  const double preference = x["windows"].at(0)["preference"];
  EXPECT_EQ(text("preference-b_vs_a-all"), Fixed4(preference));
  EXPECT_NEAR(preference,
              metrics.Sum("rankwatch_interleaving_preference",
                          {{"experiment", "b_vs_a"}, {"window", "all"}}),
              1e-12);
  // The badge writes the state's underscores as spaces ("no data").
  std::string state{std::string_view(x["state"])};
  std::replace(state.begin(), state.end(), '_', ' ');
  EXPECT_EQ(text("interleaving-verdict-b_vs_a"), state);

  // Multileaving: each cell of the matrix is the row team's preference
  // over the column team's (window all) and the pair's state from the row's
  // side, as the summary has them (a pair's preference and state are its
  // second team's); then the Copeland ranking.
  simdjson::dom::element abc;
  for (simdjson::dom::element e : d["interleaving"]) {
    if (std::string_view(e["name"]) == "abc") abc = e;
  }
  ASSERT_EQ(abc.type(), simdjson::dom::element_type::OBJECT) << summary_;
  std::vector<std::string> teams;
  for (simdjson::dom::element t : abc["teams"]) {
    teams.emplace_back(std::string_view(t));
  }
  ASSERT_EQ(teams, (std::vector<std::string>{"A", "B", "C"}));
  int pairs = 0;
  for (simdjson::dom::element p : abc["pairs"]) {
    const int64_t first = p["teams"].at(0), second = p["teams"].at(1);
    double preference = NAN;
    for (simdjson::dom::element w : p["windows"]) {
      if (std::string_view(w["window"]) == "all") preference = w["preference"];
    }
    ASSERT_FALSE(std::isnan(preference)) << summary_;
    std::string state{std::string_view(p["state"])};
    const std::string flipped = state == "better"  ? "worse"
                                : state == "worse" ? "better"
                                                   : state;
    std::replace(state.begin(), state.end(), '_', ' ');
    const std::string& x = teams[static_cast<size_t>(first)];
    const std::string& y = teams[static_cast<size_t>(second)];
    SCOPED_TRACE(x + " vs " + y);
    EXPECT_EQ(text("multileaving-cell-abc-" + y + "-" + x)
                  .rfind(Fixed4(preference) + " " + state, 0),
              0u)
        << text("multileaving-cell-abc-" + y + "-" + x);
    std::string flipped_text = flipped;
    std::replace(flipped_text.begin(), flipped_text.end(), '_', ' ');
    EXPECT_EQ(text("multileaving-cell-abc-" + x + "-" + y)
                  .rfind(Fixed4(-preference) + " " + flipped_text, 0),
              0u)
        << text("multileaving-cell-abc-" + x + "-" + y);
    ++pairs;
  }
  EXPECT_EQ(pairs, 3);
  std::string ranking;
  for (simdjson::dom::element t : abc["ranking"]) {
    const int64_t team = t;
    if (!ranking.empty()) ranking += ", ";
    ranking +=
        teams[static_cast<size_t>(team)] + " (" +
        std::to_string(int64_t(abc["copeland"].at(static_cast<size_t>(team)))) +
        ")";
  }
  const int64_t winner = abc["winner"];
  EXPECT_EQ(text("multileaving-ranking-abc"),
            "Ranking (Copeland score: significant wins minus losses): " +
                ranking + ". Winner: " +
                (winner >= 0 ? teams[static_cast<size_t>(winner)]
                             : std::string("none yet")));

  EXPECT_EQ(text("readiness"), "ready");
  EXPECT_EQ(metrics.Sum("rankwatch_consumer_ready"), 1);

  // The time axis of the chart (nDCG@10 by default): ticks at whole
  // seconds, labelled with their UTC time of day, inside the history and
  // near now (the synthetic events carry the wall time). The frame fits the
  // data: it starts no earlier than the first point with a value (or six
  // points before the end), not at the start of the 2 min history.
  const int64_t point_ms = d["history"]["point_ms"];
  const int64_t end_ms = d["history"]["end_ms"];
  const int64_t start_ms = end_ms - int64_t(d["history"]["points"]) * point_ms;
  int64_t first_data_ms = end_ms;
  for (simdjson::dom::element v : d["variants"]) {
    int64_t p = 0;
    for (simdjson::dom::element n :
         v["series"].at(static_cast<size_t>(ndcg10))["history_count"]) {
      if (int64_t(n) > 0) {
        first_data_ms = std::min(first_data_ms, start_ms + p * point_ms);
      }
      ++p;
    }
  }
  const int64_t frame_from =
      std::max(start_ms, std::min(first_data_ms, end_ms - 6 * point_ms));
  EXPECT_GT(first_data_ms, start_ms + 10 * point_ms)
      << "the traffic should fill only part of the history";
  simdjson::dom::array ticks = shown["time-ticks"];
  EXPECT_GE(ticks.size(), 2u);
  int64_t previous = INT64_MIN;
  for (simdjson::dom::element t : ticks) {
    const int64_t ms = int64_t(double(t["ms"]));
    SCOPED_TRACE(ms);
    EXPECT_EQ(ms % 1000, 0);
    EXPECT_EQ(std::string_view(t["text"]), UtcClock(ms));
    EXPECT_GE(ms, frame_from);
    EXPECT_LE(ms, end_ms);
    EXPECT_LT(std::abs(ms - int64_t(d["generated_ms"])), 10 * 60'000);
    EXPECT_GT(ms, previous);
    previous = ms;
  }

  // Verdict markers: the changes of B's nDCG@10 verdict (window all) in
  // the history, but the test's start (no data -> inconclusive); B was
  // regressed 4x, so one of them turns it worse.
  std::vector<std::pair<int64_t, std::string>> expected_markers;
  for (simdjson::dom::element c : d["experiments"].at(0)["comparisons"]) {
    if (std::string_view(c["series"]) != "ndcg_cut_10" ||
        std::string_view(c["window"]) != "all") {
      continue;
    }
    for (simdjson::dom::element v : c["verdict_changes"]) {
      const int64_t ms = v["event_ms"];
      if (ms < start_ms || ms > end_ms ||
          (std::string_view(v["from"]) == "no_data" &&
           std::string_view(v["to"]) == "inconclusive")) {
        continue;
      }
      expected_markers.emplace_back(ms, std::string_view(v["to"]));
    }
  }
  std::vector<std::pair<int64_t, std::string>> markers;
  for (simdjson::dom::element m : shown["verdict-markers"]) {
    markers.emplace_back(int64_t(double(m["ms"])), std::string_view(m["to"]));
  }
  EXPECT_EQ(markers, expected_markers) << summary_;
  EXPECT_TRUE(std::any_of(markers.begin(), markers.end(), [](const auto& m) {
    return m.second == "worse";
  })) << summary_;

  // In impression mode with click judgments (grades 1 and 2) and lists of
  // 10 docs, P_10 and judged_10 coincide, as do recall_10 and success_10,
  // and the page says why.
  for (simdjson::dom::element v : d["variants"]) {
    auto mean = [&](std::string_view series) {
      return double(
          v["series"]
              .at(static_cast<size_t>(SeriesIndex(d, series)))["windows"]
              .at(0)["mean"]);
    };
    EXPECT_DOUBLE_EQ(mean("P_10"), mean("judged_10"));
    EXPECT_DOUBLE_EQ(mean("recall_10"), mean("success_10"));
  }
  EXPECT_NE(text("impression-note").find("P_10 equals judged_10"),
            std::string::npos)
      << text("impression-note");
  EXPECT_NE(text("impression-note").find("recall_10 equals success_10"),
            std::string::npos)
      << text("impression-note");

  // The shared view, restored from the address...
  simdjson::dom::element restored = shown["view-restored"];
  EXPECT_EQ(std::string_view(restored["segment"]), "locale=" + locale);
  EXPECT_EQ(std::string_view(restored["window"]), "all");
  EXPECT_EQ(std::string_view(restored["k"]), "5");
  EXPECT_EQ(std::string_view(restored["experiment"]), "ranker-v2");
  EXPECT_EQ(std::string_view(restored["series"]), "row-P_5");
  EXPECT_EQ(std::string_view(restored["hash"]), "#" + view);
  // ...with the A/B table on the segment: B's mean minus A's over the
  // locale's groups (window all), beside intervals over all segments.
  const int64_t p5 = SeriesIndex(d, "P_5");
  double segment_mean[2] = {NAN, NAN};
  for (simdjson::dom::element g : d["groups"]) {
    const std::string_view variant = g["variant"];
    if (std::string_view(g["segments"]["locale"]) != locale ||
        (variant != "A" && variant != "B")) {
      continue;
    }
    segment_mean[variant == "B"] = double(
        g["series"].at(static_cast<size_t>(p5))["windows"].at(0)["mean"]);
  }
  EXPECT_EQ(std::string_view(restored["difference-ranker-v2-B-P_5-all"]),
            Figure(segment_mean[1] - segment_mean[0]));
  EXPECT_NE(std::string_view(restored["ab-segment-note"]).find(locale),
            std::string_view::npos);
  // ...and written back when a control changes.
  EXPECT_EQ(std::string_view(shown["view-after-change"]),
            "#window=2m&k=5&segment=locale%3D" + locale +
                "&experiment=ranker-v2&series=P_5");

  ExpectReplayAgrees(d, metrics_text);
}

// The judges' panel (issue 29) in Chromium: the page served in process
// (page::RegisterHandlers, as the daemon registers it) over a pipeline fed
// the story of stream/judge_report_test_util.h, whose figures are worked out
// by hand there, so that the text asserted below is the arithmetic's, not
// the page's. No Kafka: the panel renders /api/v1/summary alone.
TEST(StatusPageJudgesTest, RendersTheJudgesPanelInChromium) {
  const std::string node = FindOnPath("node");
  const std::string chromium = FindOnPath("chromium");
  if (node.empty()) GTEST_SKIP() << "node not found on PATH";
  if (chromium.empty()) GTEST_SKIP() << "chromium not found on PATH";
  std::string error;
  const std::string playwright = PlaywrightDir(FindOnPath("npm"), &error);
  ASSERT_FALSE(playwright.empty()) << error;

  FakeClock clock(1'763'800'000'000);
  auto p =
      stream::Pipeline::Create(stream::judge_story::JudgeStoryConfig(), &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::unique_ptr<stream::Pipeline> pipeline = std::move(p).value();
  ASSERT_TRUE(stream::judge_story::FeedJudgeStory(pipeline.get(),
                                                  clock.NowMillis() - 600'000));
  auto server = http::HttpServer::Start("127.0.0.1:0", 1);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::mutex mu;  // The handlers' thread reads the pipeline.
  page::RegisterHandlers(
      server->get(),
      [&](page::SummaryState* s) {
        std::lock_guard<std::mutex> lock(mu);
        stream::TakeSnapshot(*pipeline, &s->pipeline);
      },
      SystemClock::Get());

  testing::TempDir dir;
  const std::vector<std::string> ids = {"agreement-pairs-human-llm-all",
                                        "agreement-pairs-human-llm-5m",
                                        "agreement-kappa-human-llm-all",
                                        "judge-mean-A-human-precision-2",
                                        "judge-mean-A-llm-precision-2",
                                        "judge-mean-B-llm-precision-2",
                                        "judge-coverage-A-human-2",
                                        "judge-coverage-B-human-2",
                                        "judge-unjudged-B-2",
                                        "ppi-A-precision-2",
                                        "ppi-B-precision-2",
                                        "coverage-warning-ranker-B"};
  std::vector<std::string> argv = {
      node,
      std::string(SourceTree()) + "/tests/status_page/check_page.mjs",
      playwright,
      chromium,
      "http://127.0.0.1:" + std::to_string((*server)->port()) + "/",
      dir.path() + "/judges.png",
      dir.path() + "/chromium-profile"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  const testing::CommandResult page = testing::RunCommand(argv, 120s);
  (*server)->Stop();
  ASSERT_EQ(page.exit_code, 0) << page.out << page.err;
  std::error_code ec;
  std::filesystem::create_directories(ArtifactDir(), ec);
  std::filesystem::copy_file(
      dir.path() + "/judges.png",
      std::string(ArtifactDir()) + "/status_page_judges.png",
      std::filesystem::copy_options::overwrite_existing, ec);

  simdjson::dom::parser parser;
  simdjson::dom::element shown;
  ASSERT_EQ(parser.parse(page.out).get(shown), simdjson::SUCCESS) << page.out;
  EXPECT_EQ(std::string_view(shown["page-errors"]), "");
  EXPECT_EQ(std::string_view(shown["csp-violations"]), "");
  auto text = [&](const char* id) {
    return std::string(std::string_view(shown[id]));
  };
  // Human and llm both graded a b g h m n (6), since start and in the 5m
  // window (every list is in it); observed agreement 3/6 = expected
  // 3/6 x 4/6 + 3/6 x 2/6: kappa 0, shown with its interval around it.
  EXPECT_EQ(text("agreement-pairs-human-llm-all"), "6");
  EXPECT_EQ(text("agreement-pairs-human-llm-5m"), "6");
  const std::string kappa = text("agreement-kappa-human-llm-all");
  double estimate = NAN, lower = NAN, upper = NAN;
  ASSERT_EQ(
      std::sscanf(kappa.c_str(), "%lf [%lf, %lf]", &estimate, &lower, &upper),
      3)
      << kappa;
  EXPECT_NEAR(estimate, 0.0, 1e-4) << kappa;
  EXPECT_LE(lower, 0.0) << kappa;
  EXPECT_GE(upper, 0.0) << kappa;
  // Means (window all; lists in parentheses): A human (0.5 + 0) / 2, A llm
  // (1 + .5 + 1 + .5) / 4, B llm (.5 + .5) / 2.
  EXPECT_EQ(text("judge-mean-A-human-precision-2"), "0.2500 (2)");
  EXPECT_EQ(text("judge-mean-A-llm-precision-2"), "0.7500 (4)");
  EXPECT_EQ(text("judge-mean-B-llm-precision-2"), "0.5000 (2)");
  // Coverage: A human (1 + 0 + 0 + 1) / 4, B human 1 / 3; B unjudged
  // (0 + 1 + .5) / 3.
  EXPECT_EQ(text("judge-coverage-A-human-2"), "50.0%");
  EXPECT_EQ(text("judge-coverage-B-human-2"), "33.3%");
  EXPECT_EQ(text("judge-unjudged-B-2"), "50.0%");
  // A's PPI: 0.75 + (0.25 - 0.75) = 0.25 +- 1.959964 x sqrt(0.0625 / 2);
  // B has one labelled list.
  EXPECT_EQ(text("ppi-A-precision-2"), "0.2500 [-0.0965, 0.5965]");
  EXPECT_EQ(text("ppi-B-precision-2"), "too few labels");
  // B's top 2 is half unjudged, A's not at all: |0.5 - 0| > 0.05.
  EXPECT_EQ(text("coverage-warning-ranker-B"),
            "Coverage: ranker's B has 50.0% of its top 2 unjudged, A 0.0% "
            "(tolerance 5.0%): unjudged docs count as non-relevant, so the "
            "arm judged less looks worse.");
}

// The page of a daemon with an experiment at its first second (issue 43):
// one look taken before any event was read, so the decision's value holds
// "since" no event time at all (since_event_ms null in the summary; it was
// INT64_MIN, and the page failed with "Invalid time value"). Then with A/B
// figures in every column. Both at 1400 px, a laptop's width: no error
// line, no sideways scroll, no table cell cut off at the window's edge.
class StatusPageFirstSecondTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = FindOnPath("node");
    chromium_ = FindOnPath("chromium");
    if (node_.empty()) GTEST_SKIP() << "node not found on PATH";
    if (chromium_.empty()) GTEST_SKIP() << "chromium not found on PATH";
    std::string error;
    playwright_ = PlaywrightDir(FindOnPath("npm"), &error);
    ASSERT_FALSE(playwright_.empty()) << error;
    // The defaults (every default measure and cutoff, so the widest
    // tables) with an experiment, a guardrail and a segment.
    auto config = config::ParseConfig(R"(
aggregation:
  windows: [30s, 2m]
  segments: [locale]
experiments:
  - name: ranker-v2
    baseline: A
    treatments: [B]
    guardrails:
      - {series: judged@10, margin: 0.05}
)",
                                      "first-second.yaml");
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto p = stream::Pipeline::Create(*config, &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
    auto server = http::HttpServer::Start("127.0.0.1:0", 1);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    page::RegisterHandlers(
        server_.get(),
        [&](page::SummaryState* s) {
          std::lock_guard<std::mutex> lock(mu_);
          stream::TakeSnapshot(*pipeline_, &s->pipeline);
        },
        SystemClock::Get());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  // The page in Chromium (1400 x 900), waiting for `ids`; its JSON report.
  std::string Check(const std::string& name,
                    const std::vector<std::string>& ids) {
    std::vector<std::string> argv = {
        node_,
        std::string(SourceTree()) + "/tests/status_page/check_page.mjs",
        playwright_,
        chromium_,
        "http://127.0.0.1:" + std::to_string(server_->port()) + "/",
        dir_.path() + "/" + name + ".png",
        dir_.path() + "/chromium-profile-" + name};
    argv.insert(argv.end(), ids.begin(), ids.end());
    const testing::CommandResult page = testing::RunCommand(argv, 120s);
    EXPECT_EQ(page.exit_code, 0) << page.out << page.err;
    std::error_code ec;
    std::filesystem::create_directories(ArtifactDir(), ec);
    std::filesystem::copy_file(
        dir_.path() + "/" + name + ".png",
        std::string(ArtifactDir()) + "/status_page_" + name + ".png",
        std::filesystem::copy_options::overwrite_existing, ec);
    return page.exit_code == 0 ? page.out : "";
  }

  // No error anywhere, nothing past the window's right edge.
  static void ExpectFits(simdjson::dom::element shown) {
    EXPECT_EQ(std::string_view(shown["page-errors"]), "");
    EXPECT_EQ(std::string_view(shown["error-text"]), "");
    EXPECT_EQ(int64_t(shown["horizontal-scroll"]), 0);
    EXPECT_EQ(std::string_view(shown["cut-off"]), "");
    EXPECT_EQ(std::string_view(shown["csp-violations"]), "");
  }

  std::string node_, chromium_, playwright_;
  FakeClock clock_{std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count()};
  std::unique_ptr<stream::Pipeline> pipeline_;
  std::unique_ptr<http::HttpServer> server_;
  std::mutex mu_;  // The handlers' thread reads the pipeline.
  testing::TempDir dir_;
};

TEST_F(StatusPageFirstSecondTest, OpensAtItsFirstSecondAndFitsAt1400Px) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pipeline_->AdvanceWallClock();  // The first look: no event yet.
  }
  const std::string first =
      Check("first_second", {"decision-since-ranker-v2-B", "first-figures"});
  ASSERT_FALSE(first.empty());
  simdjson::dom::parser parser;
  simdjson::dom::element shown;
  ASSERT_EQ(parser.parse(first).get(shown), simdjson::SUCCESS) << first;
  ExpectFits(shown);
  EXPECT_EQ(std::string_view(shown["decision-since-ranker-v2-B"]),
            "· since the start (look 1)");
  // The defaults: join.window 30m, join.allowed_lateness 1m.
  EXPECT_EQ(std::string_view(shown["first-figures"]),
            "No results event read yet. A list is scored once event time "
            "passes its request's time plus join.window 30m and "
            "join.allowed_lateness 1m: the first figures come about 31m after "
            "the first request.");

  // 40 lists of ten docs per variant, a second apart, B's judged lower:
  // figures (means, intervals, p-values, verdicts) in every column.
  // One results event read, none scored: when the first figures are due,
  // its time plus join.window 30m and join.allowed_lateness 1m (1'860'000
  // ms), 31m after the newest event, itself.
  const int64_t start = clock_.NowMillis() - 100'000;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pipeline_->OnPayload(stream::Topic::kResults,
                         R"({"request_id":"first","variant":"A","timestamp":)" +
                             std::to_string(start) + R"(,"results":["d0"]})",
                         {0, 0});
  }
  const std::string waiting = Check("waiting", {"first-figures"});
  ASSERT_FALSE(waiting.empty());
  simdjson::dom::parser parser1;
  ASSERT_EQ(parser1.parse(waiting).get(shown), simdjson::SUCCESS) << waiting;
  ExpectFits(shown);
  EXPECT_EQ(std::string_view(shown["first-figures"]),
            "No list scored yet: the first figures are due when event time "
            "reaches " +
                UtcClock(start + 1'860'000) +
                " UTC (the first request plus join.window 30m and "
                "join.allowed_lateness 1m); the newest event read is at " +
                UtcClock(start) + ", 31m before it.");
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t offset = 1;
    for (int i = 0; i < 80; ++i) {
      const std::string id = "r" + std::to_string(i);
      const std::string variant = i % 2 == 0 ? "A" : "B";
      const int64_t t = start + i * 1'000;
      std::string results = R"({"request_id":")" + id + R"(","variant":")" +
                            variant + R"(","timestamp":)" + std::to_string(t) +
                            R"(,"segments":{"locale":"en"},"results":[)";
      for (int d = 0; d < 10; ++d) {
        results += (d ? ",\"d" : "\"d") + std::to_string(d) + "\"";
      }
      pipeline_->OnPayload(stream::Topic::kResults, results + "]}",
                           {0, offset++});
      for (int d = 0; d < (variant == "A" ? 6 : 3); ++d) {
        pipeline_->OnPayload(
            stream::Topic::kJudgments,
            R"({"request_id":")" + id + R"(","doc_id":"d)" + std::to_string(d) +
                R"(","relevance":)" + std::to_string((i + d) % 3) +
                R"(,"timestamp":)" + std::to_string(t + 500) + "}",
            {1, offset++});
      }
    }
    pipeline_->FinishAll();
  }
  const std::string filled = Check(
      "filled",
      {"decision-value-ranker-v2-B", "movers-none-ranker-v2-B-ndcg_cut_10"});
  ASSERT_FALSE(filled.empty());
  simdjson::dom::parser parser2;
  ASSERT_EQ(parser2.parse(filled).get(shown), simdjson::SUCCESS) << filled;
  ExpectFits(shown);
  // None of the lists carried a query_id: the movers panel says why it is
  // empty (issue 43: "query" for query_id went without a word).
  EXPECT_EQ(std::string_view(shown["movers-none-ranker-v2-B-ndcg_cut_10"]),
            "No results event carried a query id (schema.query_id): query "
            "movers need one.");
}

}  // namespace
}  // namespace rankwatch
