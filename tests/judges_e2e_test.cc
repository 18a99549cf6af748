// Labels from several judges (issue 29) live, end to end: `rankwatch run`
// over librdkafka's mock cluster, fed judgments of three judges (human on a
// random few lists, an LLM on most, clicks through the default judge) whose
// events arrive in a random order across the partitions, must export per
// judge the same means, coverage, unjudged shares, prediction-powered means,
// coverage checks and agreement as `rankwatch replay` computes from the
// same events (replay orders events by event time: in any arrival order
// within join.allowed_lateness the daemon must reach its figures).
//
// The expected figures are replay's JSON `judge_figures` object
// (daemon/stream/pipeline/judge_report.h; window "all") and its since-start
// `agreement` list.
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/numeric.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kafka_events.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_seed.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::Event;
using testing::kSpacingMs;
using testing::kT0;
using testing::Scrape;
using testing::WaitFor;

constexpr int kPartitions = 4;
constexpr int kRequests = 240;

using LabelMap = std::map<std::string, std::string>;

// One series' figures over the whole run: its list count and mean (NaN
// without a list).
struct Figure {
  LabelMap labels;  // Without `window`.
  std::string family;
  double lists = 0;
  double mean = kNaN;
};

struct PpiExpected {
  LabelMap labels;  // variant, measure, k.
  double labelled = 0;
  double others = 0;
  // estimate, lower, upper, lambda, classical, classical_lower,
  // classical_upper, naive; empty while the estimate is undefined.
  std::map<std::string, double> values;
};

struct AgreementExpected {
  std::string first, second;
  double pairs = 0, only_first = 0, only_second = 0;
  std::map<std::string, double> statistics;  // Defined ones only.
};

// What the daemon must export.
struct Expected {
  std::vector<Figure> series;  // Judges' measures, coverage, unjudged.
  std::vector<PpiExpected> ppi;
  std::vector<std::pair<LabelMap, double>> flagged;
  std::vector<AgreementExpected> agreement;
};

double NumberOr(simdjson::dom::element e, double otherwise) {
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  bool b = false;
  if (e.get_bool().get(b) == simdjson::SUCCESS) return b ? 1 : 0;
  return otherwise;
}

std::string StringOf(simdjson::dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return std::to_string(i);
  return "";
}

// The figures of replay's JSON: `judge_figures` (nullopt without it) and
// `agreement`.
std::optional<Expected> FromReplayJson(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(json)).get(doc) !=
      simdjson::SUCCESS) {
    ADD_FAILURE() << "replay's output is not JSON: " << json;
    return std::nullopt;
  }
  simdjson::dom::object figures;
  if (doc["judge_figures"].get_object().get(figures) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  Expected x;
  const auto series = [&](const char* key, const std::string& family,
                          bool judged, bool named) {
    simdjson::dom::array entries;
    if (figures[key].get_array().get(entries) != simdjson::SUCCESS) {
      ADD_FAILURE() << "judge_figures." << key << " missing";
      return;
    }
    for (simdjson::dom::element e : entries) {
      if (StringOf(e["window"]) != "all") continue;
      Figure f;
      f.labels = {{"variant", StringOf(e["variant"])}, {"k", StringOf(e["k"])}};
      if (judged) f.labels["judge"] = StringOf(e["judge"]);
      f.family = named ? "rankwatch_judge_" + StringOf(e["measure"]) : family;
      f.lists = NumberOr(e["lists"], -1);
      f.mean = NumberOr(e["mean"], kNaN);
      x.series.push_back(std::move(f));
    }
  };
  series("measures", "", true, true);
  series("coverage", "rankwatch_judge_coverage", true, false);
  series("unjudged", "rankwatch_judge_unjudged", false, false);
  simdjson::dom::array ppi;
  if (figures["ppi"].get_array().get(ppi) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : ppi) {
      if (StringOf(e["window"]) != "all") continue;
      PpiExpected p;
      p.labels = {{"variant", StringOf(e["variant"])},
                  {"measure", StringOf(e["measure"])},
                  {"k", StringOf(e["k"])}};
      p.labelled = NumberOr(e["labelled"], -1);
      p.others = NumberOr(e["others"], -1);
      for (const char* key :
           {"estimate", "lower", "upper", "lambda", "classical",
            "classical_lower", "classical_upper", "naive"}) {
        const double v = NumberOr(e[key], kNaN);
        if (!std::isnan(v)) p.values[key] = v;
      }
      x.ppi.push_back(std::move(p));
    }
  }
  simdjson::dom::array checks;
  if (figures["coverage_checks"].get_array().get(checks) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : checks) {
      std::string k = StringOf(e["k"]);
      if (k.empty()) k = StringOf(e["cutoff"]);
      x.flagged.push_back({{{"experiment", StringOf(e["experiment"])},
                            {"treatment", StringOf(e["treatment"])},
                            {"k", k}},
                           NumberOr(e["flagged"], -1)});
    }
  }
  simdjson::dom::array agreement;
  if (doc["agreement"].get_array().get(agreement) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : agreement) {
      AgreementExpected a;
      simdjson::dom::array judges;
      if (e["judges"].get_array().get(judges) != simdjson::SUCCESS ||
          judges.size() != 2) {
        ADD_FAILURE() << "agreement without its two judges";
        continue;
      }
      a.first = StringOf(judges.at(0));
      a.second = StringOf(judges.at(1));
      a.pairs = NumberOr(e["pairs"], -1);
      a.only_first = NumberOr(e["only_first"], -1);
      a.only_second = NumberOr(e["only_second"], -1);
      for (const char* s : {"kappa", "weighted_kappa", "alpha"}) {
        const double v = NumberOr(e[s], kNaN);
        if (!std::isnan(v)) a.statistics[s] = v;
      }
      x.agreement.push_back(std::move(a));
    }
  }
  return x;
}

LabelMap With(LabelMap labels, const std::string& name,
              const std::string& value) {
  labels[name] = value;
  return labels;
}

// Expects the scrape to hold `x`'s figures (window "all"); counts exactly,
// the rest to 1e-9 (the shards' sums merge in another order).
void ExpectExported(const Scrape& s, const Expected& x) {
  constexpr double kTolerance = 1e-9;
  for (const Figure& f : x.series) {
    const LabelMap all = With(f.labels, "window", "all");
    SCOPED_TRACE(f.family + " " + ::testing::PrintToString(f.labels));
    ASSERT_TRUE(s.Has(f.family + "_window_lists", all));
    EXPECT_EQ(s.Sum(f.family + "_window_lists", all), f.lists);
    const double mean = s.Sum(f.family + "_mean", all);
    if (std::isnan(f.mean)) {
      EXPECT_TRUE(std::isnan(mean)) << mean;
    } else {
      EXPECT_NEAR(mean, f.mean, kTolerance);
    }
    // One process that restored nothing: its flow is its state.
    if (f.labels.contains("judge") && f.family != "rankwatch_judge_coverage") {
      EXPECT_EQ(s.Sum(f.family + "_lists_total", f.labels), f.lists);
    }
  }
  for (const PpiExpected& p : x.ppi) {
    const LabelMap all = With(p.labels, "window", "all");
    SCOPED_TRACE("ppi " + ::testing::PrintToString(p.labels));
    EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lists", With(all, "labelled", "true")),
              p.labelled);
    EXPECT_EQ(
        s.Sum("rankwatch_judge_ppi_lists", With(all, "labelled", "false")),
        p.others);
    EXPECT_EQ(s.Has("rankwatch_judge_ppi_estimate", all),
              p.values.contains("estimate"));
    for (const auto& [name, value] : p.values) {
      EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_" + name, all), value, kTolerance)
          << name;
    }
  }
  for (const auto& [labels, flagged] : x.flagged) {
    EXPECT_EQ(s.Sum("rankwatch_judge_coverage_flagged", labels), flagged)
        << ::testing::PrintToString(labels);
  }
  for (const AgreementExpected& a : x.agreement) {
    const LabelMap pair = {
        {"first", a.first}, {"second", a.second}, {"window", "all"}};
    SCOPED_TRACE(a.first + " " + a.second);
    EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", pair), a.pairs);
    EXPECT_EQ(
        s.Sum("rankwatch_judge_agreement_only", With(pair, "judge", a.first)),
        a.only_first);
    EXPECT_EQ(
        s.Sum("rankwatch_judge_agreement_only", With(pair, "judge", a.second)),
        a.only_second);
    for (const char* statistic : {"kappa", "weighted_kappa", "alpha"}) {
      const LabelMap l = With(pair, "statistic", statistic);
      const auto it = a.statistics.find(statistic);
      ASSERT_EQ(s.Has("rankwatch_judge_agreement", l), it != a.statistics.end())
          << statistic;
      if (it != a.statistics.end()) {
        EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", l), it->second,
                    kTolerance)
            << statistic;
      }
    }
  }
}

// The events: testing::Requests' stream (A and B alternately, clicks as
// judgments without a judge: the default judge "clicks"), and per request
// a latent grade of each of its 5 docs (0 to 3) that two more judges
// label: "human" grades the top 3 of a uniform random 30% of the lists (the
// sample PPI assumes), "llm" every doc of 95% of A's lists and 75% of B's
// (so that B's top k is worse judged), off by one grade a third of the
// time. Each judgment arrives 50 ms to 1.5 s after its list was served, in
// one batch per judge; events are sent in the order of their event time
// plus a random delay of up to 800 ms, less than join.allowed_lateness (2
// s): out of order, but never late.
std::vector<Event> JudgedEvents(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Event> events = testing::Requests(0, kRequests, false);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int64_t> delay(50, 1500);
  std::discrete_distribution<int> latent({0.4, 0.3, 0.2, 0.1});
  for (int i = 0; i < kRequests; ++i) {
    const std::string id = "req-" + std::to_string(i);
    const int64_t t = kT0 + kSpacingMs * i;
    int grades[5];
    for (int& g : grades) g = latent(rng);
    const auto batch = [&](const std::string& judge, int docs, bool noisy) {
      std::string entries;
      for (int d = 0; d < docs; ++d) {
        int g = grades[d];
        if (noisy && unit(rng) < 1.0 / 3) {
          g = std::clamp(g + (unit(rng) < 0.5 ? -1 : 1), 0, 3);
        }
        entries += std::string(d ? "," : "") + "{\"doc_id\":\"" + id + "-d" +
                   std::to_string(d) + "\",\"relevance\":" + std::to_string(g) +
                   "}";
      }
      const int64_t at = t + delay(rng);
      events.push_back({false, id,
                        "{\"request_id\":\"" + id + "\",\"judge\":\"" + judge +
                            "\",\"timestamp\":" + std::to_string(at) +
                            ",\"judgments\":[" + entries + "]}",
                        at});
    };
    if (unit(rng) < 0.3) batch("human", 3, false);
    if (unit(rng) < (i % 2 ? 0.75 : 0.95)) batch("llm", 5, true);
  }
  std::vector<std::pair<int64_t, Event>> arrivals;
  std::uniform_int_distribution<int64_t> jitter(0, 800);
  for (Event& e : events) {
    arrivals.push_back({e.timestamp_ms + jitter(rng), std::move(e)});
  }
  std::stable_sort(
      arrivals.begin(), arrivals.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  events.clear();
  for (auto& [at, e] : arrivals) events.push_back(std::move(e));
  return events;
}

TEST(JudgesE2eTest, LiveFiguresEqualReplays) {
  const uint32_t seed = static_cast<uint32_t>(testing::TestSeed());
  std::printf("[ seed     ] %s\n", testing::SeedNote(seed).c_str());
  SCOPED_TRACE(testing::SeedNote(seed));
  auto cluster = sim::MockCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  for (const char* topic : {"results", "judgments"}) {
    ASSERT_TRUE((*cluster)->CreateTopic(topic, kPartitions).ok());
  }
  testing::TempDir dir;
  // session.timeout.ms 3 s: see daemon_e2e_test.cc (the mock coordinator
  // holds a rebalance for the session timeout less 1 s).
  const std::string config = dir.Write("judges.yaml", R"(
kafka:
  bootstrap_servers: ")" + (*cluster)->bootstrap_servers() +
                                                          R"("
  group_id: g-judges
  commit_interval: 500ms
  properties:
    session.timeout.ms: "3000"
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
join:
  window: 2s
  allowed_lateness: 2s
  idle_timeout: 1h
http:
  listen: 127.0.0.1:0
metrics:
  cutoffs: [1, 3]
  measures: [precision, ndcg]
judges:
  names: [human, llm, clicks]
  default: clicks
  ppi:
    trusted: human
    cheap: llm
    tune: true
experiments:
  - name: ranker
    baseline: A
    treatments: [B]
    primary: [ndcg@3]
)");
  testing::DaemonProcess daemon(RankwatchBinary(), dir, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  const std::vector<Event> events = JudgedEvents(seed);
  testing::Producer producer((*cluster)->bootstrap_servers());
  producer.SendAll(events);
  ASSERT_TRUE(
      testing::WaitConsumed({&daemon}, static_cast<double>(events.size())))
      << daemon.Summary();
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(WaitFor([&] { return daemon.Finalized() >= kRequests; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();
  const Scrape s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total"), 0);

  const std::string json =
      testing::ReplayJson(RankwatchBinary(), dir, config, events);
  const std::optional<Expected> expected = FromReplayJson(json);
  ASSERT_TRUE(expected.has_value()) << "no judge_figures in " << json;
  // What is compared: 3 judges x 2 variants x 5 series (P@1, P@3,
  // nDCG@1, nDCG@3, nDCG), coverage 3 x 2 x 2 cutoffs, unjudged 2 x 2; PPI
  // of the 5 series per variant, defined in both; one coverage check; the
  // three pairs of judges.
  EXPECT_EQ(expected->series.size(), 30u + 12u + 4u);
  ASSERT_EQ(expected->ppi.size(), 10u);
  for (const PpiExpected& p : expected->ppi) {
    EXPECT_TRUE(p.values.contains("estimate"))
        << ::testing::PrintToString(p.labels);
  }
  EXPECT_EQ(expected->flagged.size(), 1u);
  ASSERT_EQ(expected->agreement.size(), 3u);
  EXPECT_GT(expected->agreement[0].pairs, 0);  // human and llm.
  ExpectExported(s, *expected);
  for (const PpiExpected& p : expected->ppi) {
    if (p.labels.at("measure") != "ndcg" || p.labels.at("k") != "3" ||
        !p.values.contains("estimate")) {
      continue;
    }
    std::printf(
        "[ figure   ] %s nDCG@3 under human: PPI %.4f [%.4f, %.4f] (lambda "
        "%.3f, n %.0f, N %.0f), classical %.4f [%.4f, %.4f], llm alone "
        "%.4f\n",
        p.labels.at("variant").c_str(), p.values.at("estimate"),
        p.values.at("lower"), p.values.at("upper"), p.values.at("lambda"),
        p.labelled, p.others, p.values.at("classical"),
        p.values.at("classical_lower"), p.values.at("classical_upper"),
        p.values.at("naive"));
  }
  for (const auto& [labels, flagged] : expected->flagged) {
    std::printf("[ figure   ] coverage check %s: flagged %.0f\n",
                ::testing::PrintToString(labels).c_str(), flagged);
  }
}

}  // namespace
}  // namespace rankwatch
