// `rankwatch run` end to end over the real Kafka protocol: a librdkafka mock
// cluster in this process (so faults can be injected), the daemon as a
// separate process bound to port 0, events produced with a librdkafka
// producer, and the metrics read over HTTP.
//
// The daemon runs with a 2 s join window and a one-hour idle timeout: the
// tests drive event time themselves with "sentinel" results events far in
// the future (one per partition), so what is finalized when is
// deterministic.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>
#include <signal.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/byte_codec.h"
#include "base/json_writer.h"
#include "daemon/kafka/changelog.h"
#include "daemon/kafka/checkpoint_chain.h"
#include "daemon/sim/mock_cluster.h"
#include "daemon/sim/synthetic.h"
#include "daemon/stream/pipeline/checkpoint_test_util.h"
#include "gtest/gtest.h"
#include "metrics/interleaving.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/http_client.h"
#include "tests/testing/kafka_events.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Scrape;
using testing::WaitFor;

constexpr int kPartitions = 4;
// session.timeout.ms of the daemons here. The mock cluster's coordinator
// (librdkafka 2.0, rdkafka_mock_cgrp.c) holds every rebalance for
// session.timeout.ms - 1 s, whether or not the members have rejoined, and
// drops a killed member after session.timeout.ms: a second replica's join
// took three rebalances, 15 s at 6 s. At 3 s each takes 2 s; heartbeats
// every 500 ms still leave six per session.
constexpr char kSessionTimeoutMs[] = "3000";
using testing::Event;
using testing::ExpectSameAsReplay;
using testing::FinalizedPerRequest;
using testing::kAbMetrics;
using testing::kSpacingMs;
using testing::kT0;
using testing::kTracingMetrics;
using testing::Producer;
using testing::Requests;
using testing::WaitConsumed;

// Bad events, one per reason below, keyed like real ones.
std::vector<Event> BadEvents() {
  return {
      {true, "bad-1", "not json", kT0},
      {true, "bad-2", R"({"request_id":"bad-2","timestamp":1,"results":[]})",
       kT0},
      {true, "bad-3", R"({"variant":"A","timestamp":1,"results":["x"]})", kT0},
      {false, "bad-4",
       R"({"request_id":"bad-4","doc_id":"x","relevance":"high","timestamp":1})",
       kT0},
  };
}

// One `rankwatch run` process.
class Daemon : public testing::DaemonProcess {
 public:
  Daemon(const testing::TempDir& dir, const std::string& config,
         const std::string& name)
      : DaemonProcess(RankwatchBinary(), dir, config, name) {}
};

// Waits (30 s at most) until the rebalance has given each of two replicas
// some of the partitions, all of them between the two.
::testing::AssertionResult PartitionsSplit(Daemon& a, Daemon& b) {
  auto owned = [](Daemon& d) {
    return d.Metrics()
        .LabelValues("rankwatch_consumer_lag_messages", "partition")
        .size();
  };
  if (WaitFor(
          [&] {
            const size_t na = owned(a), nb = owned(b);
            return na > 0 && nb > 0 && na + nb == kPartitions;
          },
          30s)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << a.log() << b.log() << "\nA lag partitions: " << owned(a)
         << " B: " << owned(b);
}

class DaemonE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments", "dead-letters"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kPartitions).ok());
    }
  }

  // `extra` is appended to the YAML (e.g. metrics and dead-letter keys),
  // `kafka_extra` to its kafka section. `session_timeout_ms`: see
  // kSessionTimeoutMs.
  std::string WriteConfig(const std::string& group, const std::string& extra,
                          const std::string& kafka_extra = "",
                          const char* session_timeout_ms = kSessionTimeoutMs) {
    return dir_.Write(group + ".yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                           R"("
  group_id: )" + group + R"(
  commit_interval: 500ms
)" + kafka_extra + R"(
  properties:
    session.timeout.ms: ")" + std::string(session_timeout_ms) +
                                           R"("
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
join:
  window: 2s
  allowed_lateness: 2s
  idle_timeout: 1h
http:
  listen: 127.0.0.1:0
)" + extra);
  }

  // A process of `config` reads 40 requests, checkpoints them (with
  // durable state) and stops cleanly: its changelog then holds them.
  void CheckpointAndStop(const std::string& config) {
    Producer producer(cluster_->bootstrap_servers());
    Daemon d1(dir_, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    producer.SendPaced(testing::Requests(0, 40, false));
    ASSERT_TRUE(WaitConsumed({&d1}, 80));
    testing::SleepFor(1000ms);
    d1.process().Signal(SIGTERM);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1), 0);
  }

  // Whether `d`'s /readyz answers 503 with `text` in its body within 20 s;
  // `body` is the last answer's.
  static bool UnreadySaying(Daemon& d, const std::string& text,
                            std::string* body) {
    return WaitFor(
        [&] {
          StatusOr<testing::HttpResult> r =
              testing::HttpGet("127.0.0.1", d.port(), "/readyz");
          if (!r.ok()) return false;
          *body = r->body;
          return r->status == 503 && body->find(text) != std::string::npos;
        },
        20s);
  }

  // The events as JSON-lines files, for `rankwatch replay`.
  std::string ReplayJson(const std::string& config,
                         const std::vector<Event>& events) {
    return testing::ReplayJson(RankwatchBinary(), dir_, config, events);
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
};

// The A/B figures of the daemon (one replica, all partitions) equal
// replay's over the same events, with requests clustered by user: the
// comparison of every series, the verdict, the BH-adjusted p-values and the
// sample-ratio check. The daemon keeps looking while events arrive, so its
// running sequential figures can only be tighter than replay's single
// look; its latest look alone (rankwatch_ab_sequential_look_*) is replay's.
TEST_F(DaemonE2eTest, AbComparisonsMatchReplay) {
  const std::string config = WriteConfig(
      "g-ab", std::string(kAbMetrics) +
                  "schema:\n  unit: user_id\n"
                  "experiments:\n  - name: ranker\n    baseline: A\n"
                  "    treatments: [B]\n    primary: [ndcg@3]\n"
                  "statistics:\n  unit_buckets: 16\n");
  Daemon daemon(dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  const std::vector<Event> events = Requests(0, 200, false);
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(events);
  ASSERT_TRUE(WaitConsumed({&daemon}, static_cast<double>(events.size())));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(WaitFor([&] { return daemon.Finalized() >= 200; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();
  // Looks are once a second: the next one sees every list.
  testing::SleepFor(1500ms);
  const Scrape s = daemon.Metrics();
  const std::string replay = ReplayJson(config, events);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay)).get(doc),
            simdjson::SUCCESS)
      << replay;
  simdjson::dom::element experiment = doc["experiments"]["ranker"];
  ASSERT_TRUE(experiment.is_object()) << replay;
  EXPECT_EQ(s.Sum("rankwatch_ab_unit_info", {{"unit", "user_id"}}), 1);
  for (const char* v : {"A", "B"}) {
    EXPECT_EQ(s.Sum("rankwatch_ab_units_total",
                    {{"experiment", "ranker"}, {"variant", v}}),
              double(int64_t(experiment["srm"]["counts"][v])))
        << v;
  }
  EXPECT_EQ(int64_t(experiment["srm"]["counts"]["A"]), 13);
  EXPECT_NEAR(s.Sum("rankwatch_ab_srm_p_value", {{"experiment", "ranker"}}),
              double(experiment["srm"]["p_value"]), 1e-12);
  // The sequential SRM p-value is a running minimum over looks: the
  // daemon's earlier looks saw fewer units (e.g. 12 against 13 gives
  // 1 / BF = 0.99999999998), replay's single look all of them. So it is
  // at most replay's, never above.
  EXPECT_LE(
      s.Sum("rankwatch_ab_srm_sequential_p_value", {{"experiment", "ranker"}}),
      double(experiment["srm"]["sequential_p_value"]) + 1e-12);
  const std::vector<std::tuple<std::string, std::string, std::string>> series =
      {{"P_1", "precision", "1"},
       {"recip_rank", "reciprocal_rank", "all"},
       {"ndcg_cut_3", "ndcg", "3"}};
  // Daemon gauge -> replay key. Sums in another order: 1e-9.
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"difference", "difference"},
      {"ci_lower", "ci_lower"},
      {"ci_upper", "ci_upper"},
      {"p_value", "p_value"},
      {"p_value_bh", "p_value_bh"},
      {"sequential_look_ci_lower", "sequential_ci_lower"},
      {"sequential_look_ci_upper", "sequential_ci_upper"},
      {"verdict", "verdict"},
      {"baseline_requests", "baseline_count"},
      {"treatment_requests", "treatment_count"}};
  for (const auto& [trec, measure, k] : series) {
    simdjson::dom::element row = experiment["treatments"]["B"][trec];
    ASSERT_TRUE(row.is_object()) << trec << "\n" << replay;
    for (const auto& [gauge, key] : fields) {
      SCOPED_TRACE(trec + " " + gauge);
      const double want = double(row[key]);
      const double got =
          s.Sum("rankwatch_ab_" + gauge, {{"experiment", "ranker"},
                                          {"variant", "B"},
                                          {"measure", measure},
                                          {"k", k},
                                          {"window", "all"}});
      EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want)));
    }
    // The running interval lies within the last look's.
    const double running_upper =
        s.Sum("rankwatch_ab_sequential_ci_upper", {{"experiment", "ranker"},
                                                   {"variant", "B"},
                                                   {"measure", measure},
                                                   {"k", k},
                                                   {"window", "all"}});
    EXPECT_LE(running_upper, double(row["sequential_ci_upper"]) + 1e-12);
  }
  // Clustered: the per-bucket counters add up to the lists.
  EXPECT_EQ(
      s.Sum("rankwatch_ab_bucket_lists_total", {{"variant", "A"}}),
      double(int64_t(
          experiment["treatments"]["B"]["ndcg_cut_3"]["baseline_count"])));

  // The query movers of the primary series (issue 26): /api/v1/summary's
  // are replay's, query by query, in the same order.
  StatusOr<testing::HttpResult> summary =
      testing::HttpGet("127.0.0.1", daemon.port(), "/api/v1/summary");
  ASSERT_TRUE(summary.ok() && summary->status == 200);
  simdjson::dom::parser live_parser;
  simdjson::dom::element live;
  ASSERT_EQ(live_parser.parse(simdjson::padded_string(summary->body)).get(live),
            simdjson::SUCCESS);
  simdjson::dom::array live_movers, replay_movers;
  for (simdjson::dom::element c : live["experiments"].at(0)["comparisons"]) {
    if (std::string_view(c["series"]) == "ndcg_cut_3" &&
        std::string_view(c["window"]) == "all") {
      ASSERT_EQ(c["query_movers"].get(live_movers), simdjson::SUCCESS);
    }
  }
  ASSERT_EQ(experiment["treatments"]["B"]["ndcg_cut_3"]["query_movers"].get(
                replay_movers),
            simdjson::SUCCESS);
  ASSERT_EQ(replay_movers.size(), 7u);  // q-0 .. q-6.
  ASSERT_EQ(live_movers.size(), replay_movers.size()) << summary->body;
  for (size_t i = 0; i < replay_movers.size(); ++i) {
    simdjson::dom::element want = replay_movers.at(i);
    simdjson::dom::element got = live_movers.at(i);
    SCOPED_TRACE(std::string(std::string_view(want["query"])));
    EXPECT_EQ(std::string_view(got["query"]), std::string_view(want["query"]));
    for (const char* key : {"baseline_count", "treatment_count"}) {
      EXPECT_EQ(int64_t(got[key]), int64_t(want[key])) << key;
    }
    for (const char* key : {"baseline_mean", "treatment_mean", "difference",
                            "share", "contribution"}) {
      EXPECT_NEAR(double(got[key]), double(want[key]), 1e-12) << key;
    }
  }
}

TEST_F(DaemonE2eTest, EventsReachMetricsWithReplaysMeans) {
  const std::string config =
      WriteConfig("g-replay", std::string(kAbMetrics) +
                                  "dead_letter:\n  topic: dead-letters\n");
  Daemon daemon(dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  // Before any event every reason is exported at 0.
  Scrape before = daemon.Metrics();
  EXPECT_TRUE(before.Has("rankwatch_events_rejected_total",
                         {{"topic", "judgments"}, {"reason", "too_large"}}));
  EXPECT_EQ(before.Sum("rankwatch_events_rejected_total"), 0);

  std::vector<Event> events = Requests(0, 200, false);
  std::vector<Event> bad = BadEvents();
  // Bad events interleaved among the good ones.
  for (size_t i = 0; i < bad.size(); ++i) {
    events.insert(events.begin() + static_cast<long>(30 * (i + 1)), bad[i]);
  }
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(events);
  ASSERT_TRUE(WaitConsumed({&daemon}, static_cast<double>(events.size())));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(WaitFor([&] { return daemon.Finalized() >= 200; }, 30s))
      << daemon.Summary() << "\n"
      << daemon.log();

  const Scrape s = daemon.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), 200);
  EXPECT_EQ(s.Sum("rankwatch_requests_without_relevant_total"), 29);  // i%7==0
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"topic", "results"}, {"reason", "malformed_json"}}),
            1);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"topic", "results"}, {"reason", "empty_results"}}),
            1);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"topic", "results"}, {"reason", "missing_field"}}),
            1);
  EXPECT_EQ(
      s.Sum("rankwatch_events_rejected_total",
            {{"topic", "judgments"}, {"reason", "non_integer_relevance"}}),
      1);
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total"), 0);
  ExpectSameAsReplay({s}, ReplayJson(config, events), {"A", "B"});

  // The rejected events went to the dead-letter topic with their reason.
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  conf->set("bootstrap.servers", cluster_->bootstrap_servers(), err);
  conf->set("group.id", "dead-letter-reader", err);
  std::unique_ptr<RdKafka::KafkaConsumer> reader(
      RdKafka::KafkaConsumer::create(conf.get(), err));
  std::vector<RdKafka::TopicPartition*> parts;
  for (int p = 0; p < kPartitions; ++p) {
    parts.push_back(RdKafka::TopicPartition::create(
        "dead-letters", p, RdKafka::Topic::OFFSET_BEGINNING));
  }
  reader->assign(parts);
  RdKafka::TopicPartition::destroy(parts);
  std::multiset<std::string> reasons;
  WaitFor(
      [&] {
        std::unique_ptr<RdKafka::Message> m(reader->consume(100));
        if (m->err() == RdKafka::ERR_NO_ERROR && m->headers() != nullptr) {
          RdKafka::Headers::Header h =
              m->headers()->get_last("rankwatch-reason");
          reasons.insert(
              std::string(static_cast<const char*>(h.value()), h.value_size()));
        }
        return reasons.size() >= 4;
      },
      20s);
  reader->close();
  EXPECT_EQ(reasons, (std::multiset<std::string>{
                         "empty_results", "malformed_json", "missing_field",
                         "non_integer_relevance"}));
}

// Phase one, then a stop (`signal`), then phase two in a new process.
// Returns per-request finalization counts over both processes; `*last` gets
// the new process's last scrape.
// Without durable state (kafka.durable_state: false, the opt-out): the
// committed offsets and their watermarks carry a restart.
constexpr char kNotDurable[] = "  durable_state: false\n";

// `second_config`: the second process's configuration, when not `config`.
std::map<int, double> RestartScenario(DaemonE2eTest* t,
                                      const std::string& config, int signal,
                                      int* first_exit,
                                      const testing::TempDir& dir,
                                      sim::MockCluster* cluster, Scrape* last,
                                      const std::string& second_config = "") {
  Producer producer(cluster->bootstrap_servers());
  Scrape first;
  {
    Daemon d1(dir, config, "first");
    EXPECT_TRUE(d1.WaitReady()) << d1.log();
    // 150 requests over 7.5 s of event time: with a 2 s window and 2 s of
    // allowed lateness about the first 70 close, the rest stay pending.
    const std::vector<Event> phase1 = Requests(0, 150, true);
    producer.SendPaced(phase1);
    const double produced = static_cast<double>(phase1.size());
    EXPECT_TRUE(WaitFor(
        [&] {
          return d1.Metrics().Sum("rankwatch_events_consumed_total") >=
                 produced;
        },
        30s))
        << d1.log();
    // Let a periodic commit happen, then observe and stop: nothing moves in
    // between (event time only advances with events).
    testing::SleepFor(1500ms);
    first = d1.Metrics();
    EXPECT_GT(first.Sum("rankwatch_requests_finalized_total"), 0);
    EXPECT_GT(first.Sum("rankwatch_pending_requests"), 0);
    d1.process().Signal(signal);
    const std::optional<int> status = d1.process().Wait(10s);
    *first_exit = status.value_or(-1);
  }
  Daemon d2(dir, second_config.empty() ? config : second_config, "second");
  EXPECT_TRUE(d2.WaitReady()) << d2.log();
  const std::vector<Event> phase2 = Requests(150, 100, true);
  producer.SendPaced(phase2);
  EXPECT_TRUE(WaitConsumed({&d2}, static_cast<double>(phase2.size())));
  producer.Sentinels(kT0 + 3'600'000);
  Scrape second;
  WaitFor(
      [&] {
        second = d2.Metrics();
        const auto n = FinalizedPerRequest({first, second}, 250);
        return std::all_of(n.begin(), n.end(),
                           [](const auto& kv) { return kv.second >= 1; });
      },
      40s);
  (void)t;
  *last = second;
  return FinalizedPerRequest({first, second}, 250);
}

TEST_F(DaemonE2eTest, KillNineAndRestartLosesNothing) {
  int exit_status = 0;
  Scrape second;
  const auto n =
      RestartScenario(this, WriteConfig("g-kill", kTracingMetrics, kNotDurable),
                      SIGKILL, &exit_status, dir_, cluster_.get(), &second);
  EXPECT_EQ(exit_status, 128 + SIGKILL);
  for (const auto& [request, count] : n) {
    EXPECT_GE(count, 1) << "request " << request << " was lost";
  }
}

TEST_F(DaemonE2eTest, GracefulRestartLosesAndDuplicatesNothing) {
  int exit_status = -1;
  Scrape second;
  const auto n =
      RestartScenario(this, WriteConfig("g-term", kTracingMetrics, kNotDurable),
                      SIGTERM, &exit_status, dir_, cluster_.get(), &second);
  EXPECT_EQ(exit_status, 0);  // Within 10 s (Wait's limit).
  for (const auto& [request, count] : n) {
    EXPECT_EQ(count, 1) << "request " << request;
  }
  // The counter says so too: after a clean stop no request is a candidate
  // for double counting (issue 22: it used to count every re-read one).
  EXPECT_TRUE(second.Has("rankwatch_requests_reprocessed_total"));
  EXPECT_EQ(second.Sum("rankwatch_requests_reprocessed_total"), 0);
}

// Issue 40: an upgrade. A group that ran without durable state (offsets
// committed with their watermarks, no checkpoint pointer) is taken over by
// a process with the default configuration (durable state on): it finds no
// checkpoint, starts from the committed offsets as before, skips what the
// first process finalized, and from then on checkpoints. Every request is
// finalized exactly once across the two.
TEST_F(DaemonE2eTest, UpgradeToDurableStateStartsFromTheCommittedOffsets) {
  int exit_status = -1;
  Scrape second;
  // The same group, the second file without the opt-out.
  const std::string before =
      WriteConfig("g-upgrade", kTracingMetrics, kNotDurable);
  std::string text = testing::ReadFile(before);
  const size_t at = text.find(kNotDurable);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string_view(kNotDurable).size(),
               "  checkpoint_interval: 300ms\n");
  const std::string after = dir_.Write("g-upgrade-durable.yaml", text);
  const auto n = RestartScenario(this, before, SIGTERM, &exit_status, dir_,
                                 cluster_.get(), &second, after);
  EXPECT_EQ(exit_status, 0);
  ASSERT_EQ(n.size(), 250u);
  for (const auto& [request, count] : n) {
    EXPECT_EQ(count, 1) << "request " << request;
  }
  EXPECT_EQ(second.Sum("rankwatch_partitions_restored_total"), 0);
  EXPECT_GT(second.Sum("rankwatch_checkpoints_total", {{"result", "ok"}}), 0);
  EXPECT_EQ(second.Sum("rankwatch_consumer_ready"), 1);
}

// Issue 22: durable state, on by default (issue 40): only the interval is
// set. The changelog topic is made by the test with the input topics'
// partition count (the mock cluster would create it on first use with its
// default count, which works too).
constexpr char kDurable[] = R"(  checkpoint_interval: 300ms
)";

// The state's figures of the A/B series summed over `scrapes`: the lists
// of variants A and B in P@1 (every list has a P@1 value).
double StateLists(const std::vector<Scrape>& scrapes) {
  double n = 0;
  for (const Scrape& s : scrapes) {
    n += s.Sum("rankwatch_precision_window_lists",
               {{"k", "1"}, {"window", "all"}, {"variant", "A"}}) +
         s.Sum("rankwatch_precision_window_lists",
               {{"k", "1"}, {"window", "all"}, {"variant", "B"}});
  }
  return n;
}

// `d`'s scrape once its state holds `lists` lists (30 s at most), expecting
// exactly that many.
Scrape StateOnceListed(Daemon& d, double lists) {
  Scrape s;
  EXPECT_TRUE(WaitFor(
      [&] {
        s = d.Metrics();
        return StateLists({s}) >= lists;
      },
      30s))
      << StateLists({s}) << "\n"
      << d.log();
  EXPECT_EQ(StateLists({s}), lists);
  return s;
}

// Phase one in a first process, stopped with `signal` once it has read
// everything (and checkpointed some of it); phase two in a second process.
// The second process alone then holds what replay computes from all the
// events: its state was restored from the first's checkpoints, and what
// the first read after its last checkpoint was read again exactly once.
void DurableRestart(
    DaemonE2eTest* t, const std::string& config, int signal,
    const testing::TempDir& dir, sim::MockCluster* cluster,
    const std::string& replay_json_config,
    const std::function<std::string(const std::string&,
                                    const std::vector<Event>&)>& replay) {
  Producer producer(cluster->bootstrap_servers());
  const std::vector<Event> phase1 = testing::Requests(0, 150, false);
  const std::vector<Event> phase2 = testing::Requests(150, 100, false);
  {
    Daemon d1(dir, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    producer.SendPaced(phase1);
    ASSERT_TRUE(WaitConsumed({&d1}, static_cast<double>(phase1.size())));
    testing::SleepFor(1000ms);  // Checkpoints happen every 300 ms.
    const Scrape first = d1.Metrics();
    EXPECT_GT(first.Sum("rankwatch_checkpoints_total", {{"result", "ok"}}), 0)
        << d1.log();
    EXPECT_GT(StateLists({first}), 0);
    EXPECT_GT(first.Sum("rankwatch_pending_requests"), 0);
    d1.process().Signal(signal);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1),
              signal == SIGKILL ? 128 + SIGKILL : 0);
  }
  Daemon d2(dir, config, "second");
  ASSERT_TRUE(d2.WaitReady()) << d2.log();
  producer.SendPaced(phase2);
  ASSERT_TRUE(WaitConsumed({&d2}, static_cast<double>(phase2.size())));
  producer.Sentinels(kT0 + 3'600'000);
  const Scrape second = StateOnceListed(d2, 250);
  EXPECT_GT(second.Sum("rankwatch_partitions_restored_total"), 0);
  std::vector<Event> all = phase1;
  all.insert(all.end(), phase2.begin(), phase2.end());
  ExpectSameAsReplay({second}, replay(replay_json_config, all), {"A", "B"},
                     1e-9, false, testing::Figures::kState);
  (void)t;
}

// (The rolling restart, SIGTERM, runs on the real broker:
// RealKafkaE2eTest.DurableStateSurvivesKillNineAndRollingRestart.)
TEST_F(DaemonE2eTest, DurableStateSurvivesKillNine) {
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-kill-changelog", kPartitions).ok());
  const std::string config =
      WriteConfig("g-durable-kill", kAbMetrics, kDurable);
  DurableRestart(this, config, SIGKILL, dir_, cluster_.get(), config,
                 [&](const std::string& c, const std::vector<Event>& e) {
                   return ReplayJson(c, e);
                 });
}

// `events` moved by `delta_ms` in event time (their JSON and timestamps).
std::vector<Event> Shifted(std::vector<Event> events, int64_t delta_ms) {
  for (Event& e : events) {
    const std::string from = "\"timestamp\":" + std::to_string(e.timestamp_ms);
    const size_t at = e.json.find(from);
    EXPECT_NE(at, std::string::npos) << e.json;
    if (at == std::string::npos) continue;
    e.timestamp_ms += delta_ms;
    e.json.replace(at, from.size(),
                   "\"timestamp\":" + std::to_string(e.timestamp_ms));
  }
  return events;
}

// Restart right after a burst: a sliding window keeps what it held. 100
// requests two hours of event time before a burst of 150, a SIGTERM right
// after the burst is finalized, a new process: its window="1h" figures are
// replay's over the burst alone (the events of the hour before the last
// event time; the older ones are two hours out), and window="all" replay's
// over everything. Before durable state both windows held nothing after a
// restart.
TEST_F(DaemonE2eTest, DurableStateRestartAfterABurstKeepsTheHourWindow) {
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-hour-changelog", kPartitions).ok());
  const std::string config = WriteConfig(
      "g-durable-hour",
      std::string(kAbMetrics) + "aggregation:\n  windows: [1h]\n", kDurable);
  const std::vector<Event> old =
      Shifted(testing::Requests(0, 100, false), -2 * 3'600'000);
  const std::vector<Event> burst = testing::Requests(100, 150, false);
  Producer producer(cluster_->bootstrap_servers());
  {
    Daemon d1(dir_, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    producer.SendAll(old);
    producer.SendPaced(burst, 4.0);
    ASSERT_TRUE(WaitConsumed({&d1}, double(old.size() + burst.size())));
    // Everything finalized: a minute past the burst on every partition.
    producer.Sentinels(kT0 + 60'000);
    ASSERT_TRUE(WaitFor([&] { return StateLists({d1.Metrics()}) >= 250; }, 30s))
        << d1.log();
    testing::SleepFor(1000ms);  // Checkpoints every 300 ms.
    d1.process().Signal(SIGTERM);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1), 0);
  }
  Daemon d2(dir_, config, "second");
  ASSERT_TRUE(d2.WaitReady()) << d2.log();
  Scrape s;
  EXPECT_TRUE(WaitFor(
      [&] {
        s = d2.Metrics();
        return StateLists({s}) >= 250;
      },
      30s))
      << StateLists({s}) << "\n"
      << d2.log();
  EXPECT_EQ(s.Sum("rankwatch_partitions_restored_total"), kPartitions);
  std::vector<Event> all = old;
  all.insert(all.end(), burst.begin(), burst.end());
  {
    SCOPED_TRACE("window all");
    ExpectSameAsReplay({s}, ReplayJson(config, all), {"A", "B"}, 1e-9, false,
                       testing::Figures::kState);
  }
  {
    SCOPED_TRACE("window 1h");
    ExpectSameAsReplay({s}, ReplayJson(config, burst), {"A", "B"}, 1e-9, false,
                       testing::Figures::kState, "1h");
  }
}

// The start of min_duration survives a restart. Experiment x (A vs B,
// min_lists 10, min_duration 1h): 100 requests two hours of event time
// before kT0 (request 0, variant A, at kT0 - 2h: the first list), all
// finalized by the first process, which stops (SIGTERM); the second reads
// 150 requests at kT0 + 5 s to kT0 + 12.45 s. Its decision's minimum
// counts from kT0 - 2h: at least 2 h 12.45 s (its look is at or after the
// last list's time), so min_duration is met. Counting from its own first
// list (kT0 + 5 s, as before the first list was checkpointed), it would
// have had under two minutes of the hour.
TEST_F(DaemonE2eTest, DurableStateRestartKeepsTheExperimentsStart) {
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-start-changelog", kPartitions).ok());
  const std::string config = WriteConfig(
      "g-durable-start",
      std::string(kAbMetrics) +
          "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n"
          "    min_lists: 10\n    min_duration: 1h\n",
      kDurable);
  const int64_t two_hours = 2 * 3'600'000;
  const std::vector<Event> old =
      Shifted(testing::Requests(0, 100, false), -two_hours);
  Producer producer(cluster_->bootstrap_servers());
  {
    Daemon d1(dir_, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    producer.SendAll(old);
    producer.Sentinels(kT0 - two_hours + 60'000);
    StateOnceListed(d1, 100);
    testing::SleepFor(1000ms);  // Checkpoints every 300 ms.
    d1.process().Signal(SIGTERM);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1), 0);
  }
  Daemon d2(dir_, config, "second");
  ASSERT_TRUE(d2.WaitReady()) << d2.log();
  producer.SendAll(testing::Requests(100, 150, false));
  producer.Sentinels(kT0 + 60'000);
  const Scrape s = StateOnceListed(d2, 250);
  EXPECT_EQ(s.Sum("rankwatch_partitions_restored_total"), kPartitions);
  StatusOr<testing::HttpResult> summary =
      testing::HttpGet("127.0.0.1", d2.port(), "/api/v1/summary");
  ASSERT_TRUE(summary.ok() && summary->status == 200);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(simdjson::padded_string(summary->body)).get(root),
            simdjson::SUCCESS);
  simdjson::dom::element minimum =
      root["experiments"].at(0)["decisions"].at(0)["minimum"];
  const std::string shown = simdjson::minify(minimum);
  const int64_t elapsed = int64_t(minimum["elapsed_ms"]);
  EXPECT_GE(elapsed, two_hours + 12'450) << shown;
  EXPECT_LT(elapsed, two_hours + 3'600'000) << shown;
  EXPECT_TRUE(bool(minimum["met"])) << shown;
  EXPECT_EQ(int64_t(minimum["baseline_lists"]), 125);
  EXPECT_EQ(int64_t(minimum["treatment_lists"]), 125);
  EXPECT_EQ(s.Sum("rankwatch_ab_decision_minimum_met", {{"experiment", "x"}}),
            1);
}

// The issue's measurement as a test: three replicas, one killed with
// kill -9 mid-stream; the survivors take its partitions with their state.
// Summed over the survivors, the state's figures are replay's: no list
// lost, no mean biased.
TEST_F(DaemonE2eTest, DurableStateKillOneOfThreeLosesNoList) {
  ASSERT_TRUE(cluster_->CreateTopic("g-durable-3-changelog", kPartitions).ok());
  const std::string config = WriteConfig("g-durable-3", kAbMetrics, kDurable);
  Daemon a(dir_, config, "a");
  ASSERT_TRUE(a.WaitReady()) << a.log();
  Daemon b(dir_, config, "b");
  ASSERT_TRUE(b.WaitReady()) << b.log();
  std::unique_ptr<Daemon> c = std::make_unique<Daemon>(dir_, config, "c");
  ASSERT_TRUE(c->WaitReady()) << c->log();
  auto owned = [](Daemon& d) {
    return d.Metrics()
        .LabelValues("rankwatch_consumer_lag_messages", "partition")
        .size();
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        return owned(a) + owned(b) + owned(*c) == kPartitions && owned(*c) > 0;
      },
      30s));
  Producer producer(cluster_->bootstrap_servers());
  const std::vector<Event> events = testing::Requests(0, 300, false);
  producer.SendPaced(events);
  ASSERT_TRUE(WaitConsumed({&a, &b, c.get()}, double(events.size())))
      << a.Summary() << b.Summary() << c->Summary() << a.log() << b.log()
      << c->log();
  testing::SleepFor(1000ms);
  c->process().Signal(SIGKILL);
  EXPECT_EQ(c->process().Wait(10s).value_or(-1), 128 + SIGKILL);
  c.reset();
  // The group notices after session.timeout.ms (3 s) and rebalances.
  ASSERT_TRUE(WaitFor([&] { return owned(a) + owned(b) == kPartitions; }, 30s))
      << a.log() << b.log();
  const std::vector<Event> more = testing::Requests(300, 100, false);
  producer.SendPaced(more);
  ASSERT_TRUE(WaitConsumed({&a, &b}, 0));
  producer.Sentinels(kT0 + 3'600'000);
  Scrape sa, sb;
  EXPECT_TRUE(WaitFor(
      [&] {
        sa = a.Metrics();
        sb = b.Metrics();
        return StateLists({sa, sb}) >= 400;
      },
      30s))
      << StateLists({sa, sb}) << a.log() << b.log();
  EXPECT_EQ(StateLists({sa, sb}), 400);
  std::vector<Event> all = events;
  all.insert(all.end(), more.begin(), more.end());
  ExpectSameAsReplay({sa, sb}, ReplayJson(config, all), {"A", "B"}, 1e-9, false,
                     testing::Figures::kState);
}

// Issue 40: a restart after an outage longer than join.allowed_lateness,
// while traffic goes on, with the default configuration (durable state is
// on by default). The first process reads the events stamped before request
// 150 was served, checkpoints and is stopped (SIGTERM or kill -9) while the
// last lists it holds still wait for their judgments; the rest of the
// traffic (their judgments, then 100 more requests) is produced while it is
// down, and 3 s more pass (the lateness is 2 s) before a second process
// starts. It restores the pending lists and must read their judgments from
// the backlog before any window closes: its state's figures are replay's
// over every event, and no judgment arrived after its list was finalized.
void DurableRestartAfterAGap(
    DaemonE2eTest* t, const std::string& config, int signal,
    const testing::TempDir& dir, sim::MockCluster* cluster,
    const std::function<std::string(const std::string&,
                                    const std::vector<Event>&)>& replay) {
  const std::vector<Event> all = testing::Requests(0, 250, false);
  const int64_t split = kT0 + 150 * kSpacingMs;
  std::vector<Event> before, during;
  for (const Event& e : all) {
    (e.timestamp_ms < split ? before : during).push_back(e);
  }
  Producer producer(cluster->bootstrap_servers());
  {
    Daemon d1(dir, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    producer.SendPaced(before);
    ASSERT_TRUE(WaitConsumed({&d1}, static_cast<double>(before.size())));
    testing::SleepFor(1000ms);  // Checkpoints every 300 ms.
    const Scrape first = d1.Metrics();
    EXPECT_GT(first.Sum("rankwatch_checkpoints_total", {{"result", "ok"}}), 0)
        << d1.log();
    EXPECT_GT(first.Sum("rankwatch_pending_requests"), 0);
    d1.process().Signal(signal);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1),
              signal == SIGKILL ? 128 + SIGKILL : 0);
  }
  producer.SendPaced(during);
  testing::SleepFor(3000ms);  // The outage outlasts the lateness.
  Daemon d2(dir, config, "second");
  ASSERT_TRUE(d2.WaitReady()) << d2.log();
  ASSERT_TRUE(WaitConsumed({&d2}, static_cast<double>(during.size())))
      << d2.Summary() << d2.log();
  producer.Sentinels(kT0 + 3'600'000);
  const Scrape second = StateOnceListed(d2, 250);
  EXPECT_EQ(second.Sum("rankwatch_partitions_restored_total"), kPartitions);
  EXPECT_EQ(second.Sum("rankwatch_judgments_after_finalization_total"), 0);
  // Every judgment of the traffic was claimed (the sentinels' still wait).
  EXPECT_EQ(second.Sum("rankwatch_orphaned_judgments_total"), 0);
  ExpectSameAsReplay({second}, replay(config, all), {"A", "B"}, 1e-9, false,
                     testing::Figures::kState);
  (void)t;
}

TEST_F(DaemonE2eTest, DurableStateSigtermThenAGapMatchesReplay) {
  const std::string config =
      WriteConfig("g-gap-term", kAbMetrics, "  checkpoint_interval: 300ms\n");
  DurableRestartAfterAGap(
      this, config, SIGTERM, dir_, cluster_.get(),
      [&](const std::string& c, const std::vector<Event>& e) {
        return ReplayJson(c, e);
      });
}

TEST_F(DaemonE2eTest, DurableStateKillNineThenAGapMatchesReplay) {
  const std::string config =
      WriteConfig("g-gap-kill", kAbMetrics, "  checkpoint_interval: 300ms\n");
  DurableRestartAfterAGap(
      this, config, SIGKILL, dir_, cluster_.get(),
      [&](const std::string& c, const std::vector<Event>& e) {
        return ReplayJson(c, e);
      });
}

// A corrupt checkpoint (here: a record that is not rankwatch's) is never
// silently replaced by counting from zero: the replica says why and stays
// not ready.
TEST_F(DaemonE2eTest, CorruptCheckpointKeepsTheReplicaUnready) {
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-bad-changelog", kPartitions).ok());
  const std::string config = WriteConfig("g-durable-bad", kAbMetrics, kDurable);
  ASSERT_NO_FATAL_FAILURE(CheckpointAndStop(config));
  // Partition 0's newest checkpoint: garbage.
  Producer vandal(cluster_->bootstrap_servers(), "g-durable-bad-changelog",
                  "g-durable-bad-changelog");
  vandal.Send({true, "0", "this is not a checkpoint", kT0}, 0);
  vandal.Flush();
  Daemon d2(dir_, config, "second");
  // Never ready; WaitReady reads the port meanwhile.
  EXPECT_FALSE(d2.WaitReady(8s)) << d2.log();
  ASSERT_GT(d2.port(), 0) << d2.log();
  std::string body;
  const bool said = UnreadySaying(d2, "state_unavailable", &body);
  EXPECT_TRUE(said) << body << d2.log();
  EXPECT_NE(d2.log().find("not a rankwatch checkpoint record"),
            std::string::npos)
      << d2.log();
  EXPECT_EQ(d2.Metrics().Sum("rankwatch_consumer_ready_reason",
                             {{"reason", "state_unavailable"}}),
            1);
}

// Issue 45: a delta that does not apply (here the chain's next delta, in
// its place with a right checksum, whose state is not a delta) is refused
// with one line; the replica restores partition 0's base and the deltas
// before it, reads the input again from their offsets and is ready. The
// 40 requests of the first process, all finalized by the sentinels, are
// 40 lists: nothing lost, nothing counted twice.
TEST_F(DaemonE2eTest, BadDeltaRestoresTheBaseAndTheDeltasBeforeIt) {
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-delta-changelog", kPartitions).ok());
  const std::string config =
      WriteConfig("g-durable-delta", kAbMetrics, kDurable);
  ASSERT_NO_FATAL_FAILURE(CheckpointAndStop(config));
  config::KafkaConfig kafka;
  kafka.bootstrap_servers = cluster_->bootstrap_servers();
  kafka.group_id = "g-durable-delta";
  StatusOr<std::unique_ptr<kafka::Changelog>> changelog =
      kafka::Changelog::Create(kafka);
  ASSERT_TRUE(changelog.ok()) << changelog.status().ToString();
  ASSERT_TRUE((*changelog)->Prepare(kPartitions, 10'000).ok());
  StatusOr<std::vector<kafka::Changelog::Stored>> records =
      (*changelog)->ReadChain(0, -1, 10'000);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  const kafka::ChainSelection chain = kafka::SelectChain(0, *records);
  ASSERT_TRUE(chain.base.has_value());
  const int64_t base = (*records)[*chain.base].offset;
  const uint32_t next = static_cast<uint32_t>(chain.deltas.size() + 1);
  std::string bad;
  kafka::EncodeDeltaRecord({0, {0, 0}, base, next, "not a delta"}, &bad);
  Producer vandal(cluster_->bootstrap_servers(), "g-durable-delta-changelog",
                  "g-durable-delta-changelog");
  vandal.Send({true, kafka::DeltaKey(0, base, next), bad, kT0},
              (*changelog)->PartitionOf(0));
  vandal.Flush();
  Daemon d2(dir_, config, "second");
  ASSERT_TRUE(d2.WaitReady()) << d2.log();
  const std::string line =
      "the checkpoint of partition 0 in changelog 'g-durable-delta-changelog': "
      "delta " +
      std::to_string(next) +
      " cannot be applied: not a rankwatch checkpoint delta; restored the "
      "base and the deltas before it, reading the input again from their "
      "offsets ";
  EXPECT_TRUE(
      WaitFor([&] { return d2.log().find(line) != std::string::npos; }, 10s))
      << d2.log();
  Producer producer(cluster_->bootstrap_servers());
  producer.Sentinels(kT0 + 3'600'000);
  const Scrape s = StateOnceListed(d2, 40);
  EXPECT_EQ(s.Sum("rankwatch_checkpoint_deltas_refused_total"), 1);
  EXPECT_EQ(s.Sum("rankwatch_partitions_restored_total"), kPartitions);
}

// Issue 40: hostile checkpoint records appended to the changelog after a
// clean stop, one per partition, each built field by field
// (daemon/stream/pipeline/checkpoint_test_util.h; each one's decoding has its
// unit test in checkpoint_limits_test.cc):
//   0: aggregates whose newest event is in 2100 (date -u -d 2100-01-01 +%s
//      -> 4102444800);
//   1: a pending request whose variant label is not UTF-8 (Prometheus
//      marks a target with such a label down);
//   2: experiment sums of 4,000 series x 2^20 unit buckets claiming an arm
//      the record does not hold (it crash-looped on bad_alloc);
//   3: a pending request of 5,000 docs, 3,000 of them judged, over
//      events.max_results (1,000).
// The replica stays alive and unready, answers /readyz at once with the
// first partition's reason, logs every partition's, exports valid UTF-8
// that promtool accepts, and no figure holds 2100.
TEST_F(DaemonE2eTest, HostileCheckpointKeepsTheReplicaAliveAndUnready) {
  namespace ct = stream::checkpoint_testing;
  ASSERT_TRUE(
      cluster_->CreateTopic("g-durable-hostile-changelog", kPartitions).ok());
  const std::string config =
      WriteConfig("g-durable-hostile", kAbMetrics, kDurable);
  ASSERT_NO_FATAL_FAILURE(CheckpointAndStop(config));
  ct::Sections records[kPartitions];
  records[0].aggregates = ct::Aggregates(ct::k2100);
  ct::HostileRequest not_utf8;
  not_utf8.variant = "\xff\xfe";
  records[1].join = ct::JoinSection({not_utf8});
  records[2].experiments = ct::Experiments(1 << 20, 4000, 1);
  ct::HostileRequest long_list;
  long_list.docs.clear();
  for (int i = 0; i < 5000; ++i) {
    long_list.docs.push_back("d" + std::to_string(i));
    if (i < 3000) long_list.judged.push_back("d" + std::to_string(i));
  }
  records[3].join = ct::JoinSection({long_list});
  Producer vandal(cluster_->bootstrap_servers(), "g-durable-hostile-changelog",
                  "g-durable-hostile-changelog");
  for (int p = 0; p < kPartitions; ++p) {
    std::string record;
    kafka::EncodeCheckpointRecord({p, {0, 0}, records[p].Record()}, &record);
    vandal.Send({true, std::to_string(p), record, kT0}, p);
  }
  vandal.Flush();
  Daemon d2(dir_, config, "second");
  EXPECT_FALSE(d2.WaitReady(8s)) << d2.log();
  ASSERT_GT(d2.port(), 0) << d2.log();
  const std::string where =
      " in changelog 'g-durable-hostile-changelog' cannot be restored: ";
  const std::string reason =
      "the checkpoint of partition 0" + where +
      "aggregates of shard 0: at byte 22: the shard's newest event time "
      "2100-01-01T00:00:00Z is after the wall clock plus "
      "events.max_future_skew";
  std::string body;
  const bool said = UnreadySaying(d2, reason, &body);
  EXPECT_TRUE(said) << body << d2.log();
  // Every partition's refusal, each in the log with its cause.
  const std::pair<int, const char*> causes[] = {
      {1, "a variant label that is not valid UTF-8"},
      {2, "a count of 1 items larger than the record"},
      {3, "a list of 5000 docs, over events.max_results 1000"},
  };
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string log = d2.log();
        for (const auto& [p, cause] : causes) {
          const std::string head =
              "the checkpoint of partition " + std::to_string(p) + where;
          const size_t at = log.find(head);
          if (at == std::string::npos ||
              log.find(cause, at) == std::string::npos) {
            return false;
          }
        }
        return true;
      },
      10s))
      << d2.log();
  // Alive, and answering at once, not behind a restore under the lock.
  const auto start = std::chrono::steady_clock::now();
  StatusOr<testing::HttpResult> again =
      testing::HttpGet("127.0.0.1", d2.port(), "/readyz");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->status, 503);
  EXPECT_NE(again->body.find("state_unavailable"), std::string::npos)
      << again->body;
  StatusOr<testing::HttpResult> metrics =
      testing::HttpGet("127.0.0.1", d2.port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_TRUE(IsValidUtf8(metrics->body));
  const testing::CommandResult check = testing::RunCommand(
      {"/usr/bin/promtool", "check", "metrics"}, 60s, metrics->body);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const Scrape s = d2.Metrics();
  EXPECT_EQ(s.Sum("rankwatch_consumer_ready_reason",
                  {{"reason", "state_unavailable"}}),
            1);
  // Nothing restored, so nothing of 2100 (or of a variant "\xff\xfe").
  EXPECT_EQ(s.Sum("rankwatch_partitions_restored_total"), 0);
  EXPECT_LT(s.Sum("rankwatch_watermark_timestamp_seconds"), 4'102'444'800.0);
  EXPECT_TRUE(
      s.LabelValues("rankwatch_precision_window_lists", "variant").empty());
  EXPECT_TRUE(d2.process().Running()) << d2.log();
}

TEST_F(DaemonE2eTest, TwoReplicasSplitThePartitions) {
  const std::string config = WriteConfig("g-two", kAbMetrics);
  Daemon a(dir_, config, "a");
  ASSERT_TRUE(a.WaitReady()) << a.log();
  Daemon b(dir_, config, "b");
  ASSERT_TRUE(b.WaitReady()) << b.log();
  // After the rebalance each replica owns some of the partitions.
  ASSERT_TRUE(PartitionsSplit(a, b));
  const std::vector<Event> events = Requests(0, 200, false);
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(events);
  ASSERT_TRUE(WaitConsumed({&a, &b}, static_cast<double>(events.size())));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(
      WaitFor([&] { return a.Finalized() + b.Finalized() >= 200; }, 30s));
  const Scrape sa = a.Metrics(), sb = b.Metrics();
  EXPECT_GT(sa.Sum("rankwatch_requests_finalized_total"), 0);
  EXPECT_GT(sb.Sum("rankwatch_requests_finalized_total"), 0);
  EXPECT_EQ(sa.Sum("rankwatch_requests_finalized_total") +
                sb.Sum("rankwatch_requests_finalized_total"),
            200);
  ExpectSameAsReplay({sa, sb}, ReplayJson(config, events), {"A", "B"});
}

// Interleaved traffic built here with the reference interleaver, and what
// it must give, counted by the test itself from the clicks it draws.
struct InterleavedTraffic {
  std::vector<Event> events;
  int64_t wins[2] = {0, 0};
  int64_t ties = 0;
  int64_t no_click = 0;
  int64_t clicked_top3 = 0;  // Requests with a click in the top 3 (ctr@3).
};

// `count` requests of variant "A-vs-B", kT0 + 50 ms apart: rankers A and B
// each rank 6 of 8 docs (B's order a rotation of A's), merged by
// metrics::TeamDraftInterleave (seed 12). Users click a doc of team B with
// probability 0.45, of team A with 0.25, each click 100 ms + 40 ms x rank
// after the results event; every fourth request also gets a "label"
// judgment (grade 3) of its last doc, which is no click.
InterleavedTraffic MakeInterleavedTraffic(int count) {
  InterleavedTraffic t;
  Xoshiro256 rng(12);
  const std::vector<std::string> pool = {"d0", "d1", "d2", "d3",
                                         "d4", "d5", "d6", "d7"};
  metrics::InterleavedList merged;
  for (int i = 0; i < count; ++i) {
    const std::string id = "il-" + std::to_string(i);
    const int64_t served = kT0 + kSpacingMs * i;
    std::vector<std::string_view> a, b;
    for (int r = 0; r < 6; ++r) {
      a.push_back(pool[(i + r) % 8]);
      b.push_back(pool[(i + 3 + r) % 8]);
    }
    metrics::TeamDraftInterleave(a, b, 6, &rng, &merged);
    std::string json = R"({"request_id":")" + id +
                       R"(","variant":"A-vs-B","timestamp":)" +
                       std::to_string(served) + R"(,"results":[)";
    int64_t credit[2] = {0, 0};
    bool top3 = false;
    std::vector<Event> judgments;
    for (size_t r = 0; r < merged.docs.size(); ++r) {
      const int team = merged.teams[r];
      json += (r > 0 ? "," : "") + std::string(R"({"doc_id":")") +
              std::string(merged.docs[r]) + R"(","team":")" +
              (team == 0 ? "A" : "B") + "\"}";
      if (rng.Uniform() < (team == 1 ? 0.45 : 0.25)) {
        ++credit[team];
        if (r < 3) top3 = true;
        const int64_t at = served + 100 + 40 * static_cast<int64_t>(r);
        judgments.push_back(
            {false, id,
             R"({"request_id":")" + id + R"(","doc_id":")" +
                 std::string(merged.docs[r]) +
                 R"(","relevance":1,"kind":"click","timestamp":)" +
                 std::to_string(at) + "}",
             at});
      }
    }
    t.events.push_back({true, id, json + "]}", served});
    if (i % 4 == 0) {
      const int64_t at = served + 50;
      judgments.push_back(
          {false, id,
           R"({"request_id":")" + id + R"(","doc_id":")" +
               std::string(merged.docs.back()) +
               R"(","relevance":3,"kind":"label","timestamp":)" +
               std::to_string(at) + "}",
           at});
    }
    t.events.insert(t.events.end(), judgments.begin(), judgments.end());
    if (credit[0] + credit[1] == 0) {
      ++t.no_click;
    } else if (credit[0] == credit[1]) {
      ++t.ties;
    } else {
      ++t.wins[credit[1] > credit[0] ? 1 : 0];
    }
    if (top3) ++t.clicked_top3;
  }
  std::stable_sort(t.events.begin(), t.events.end(),
                   [](const Event& x, const Event& y) {
                     return x.timestamp_ms < y.timestamp_ms;
                   });
  return t;
}

// Live interleaving over two replicas: the fleet's summed counters, click
// measures and time-to-first-click histogram equal replay's over the same
// events, and both equal the outcomes the test counted while drawing the
// clicks (labels excluded).
TEST_F(DaemonE2eTest, InterleavingAcrossReplicasMatchesReplay) {
  const std::string config = WriteConfig("g-il", R"(
metrics:
  cutoffs: [3]
  measures: [ctr, abandonment, ndcg]
  click_exclude_kinds: [label]
interleaving:
  - name: b_vs_a
    variant: A-vs-B
    teams: [A, B]
)");
  Daemon a(dir_, config, "a");
  ASSERT_TRUE(a.WaitReady()) << a.log();
  Daemon b(dir_, config, "b");
  ASSERT_TRUE(b.WaitReady()) << b.log();
  ASSERT_TRUE(PartitionsSplit(a, b));
  constexpr int kRequests = 300;
  const InterleavedTraffic traffic = MakeInterleavedTraffic(kRequests);
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(traffic.events, 4.0);
  ASSERT_TRUE(
      WaitConsumed({&a, &b}, static_cast<double>(traffic.events.size())));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(
      WaitFor([&] { return a.Finalized() + b.Finalized() >= kRequests; }, 30s));
  const Scrape sa = a.Metrics(), sb = b.Metrics();
  auto fleet = [&](const std::string& name,
                   const std::map<std::string, std::string>& labels) {
    return sa.Sum(name, labels) + sb.Sum(name, labels);
  };
  const std::string replay = ReplayJson(config, traffic.events);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay)).get(doc),
            simdjson::SUCCESS)
      << replay;
  simdjson::dom::element il = doc["interleaving"]["b_vs_a"];
  ASSERT_TRUE(il.is_object()) << replay;
  const std::map<std::string, std::string> e = {{"experiment", "b_vs_a"}};
  // The test's own count, replay's and the fleet's.
  EXPECT_EQ(int64_t(il["impressions"]), kRequests);
  EXPECT_EQ(fleet("rankwatch_interleaving_impressions_total", e), kRequests);
  const char* teams[] = {"A", "B"};
  for (int team = 0; team < 2; ++team) {
    SCOPED_TRACE(teams[team]);
    EXPECT_EQ(int64_t(il["wins"][teams[team]]), traffic.wins[team]);
    EXPECT_EQ(fleet("rankwatch_interleaving_wins_total",
                    {{"experiment", "b_vs_a"}, {"team", teams[team]}}),
              double(traffic.wins[team]));
  }
  EXPECT_EQ(int64_t(il["ties"]), traffic.ties);
  EXPECT_EQ(fleet("rankwatch_interleaving_ties_total", e), traffic.ties);
  EXPECT_EQ(int64_t(il["no_click"]), traffic.no_click);
  EXPECT_EQ(fleet("rankwatch_interleaving_no_click_total", e),
            traffic.no_click);
  // B's clicks are likelier: it wins more impressions, and replay's verdict
  // (one look over all 300) says so.
  EXPECT_GT(traffic.wins[1], traffic.wins[0]);
  const double preference =
      (traffic.wins[1] + traffic.ties / 2.0) /
          double(traffic.wins[0] + traffic.wins[1] + traffic.ties) -
      0.5;
  EXPECT_NEAR(double(il["preference"]), preference, 1e-12);
  // ctr@3 from clicks only (labels excluded): the fleet's sum and count.
  const std::map<std::string, std::string> ctr = {{"variant", "A-vs-B"},
                                                  {"k", "3"}};
  EXPECT_EQ(fleet("rankwatch_ctr_count", ctr), kRequests);
  EXPECT_EQ(fleet("rankwatch_ctr_sum", ctr), double(traffic.clicked_top3));
  EXPECT_NEAR(double(doc["variants"]["A-vs-B"]["measures"]["ctr_3"]["mean"]),
              double(traffic.clicked_top3) / kRequests, 1e-12);
  // Time to first click: every clicked request, from 100 ms on.
  simdjson::dom::element first_click =
      doc["variants"]["A-vs-B"]["time_to_first_click_seconds"];
  ASSERT_TRUE(first_click.is_object()) << replay;
  const std::map<std::string, std::string> v = {{"variant", "A-vs-B"}};
  EXPECT_EQ(int64_t(first_click["count"]), kRequests - traffic.no_click);
  EXPECT_EQ(fleet("rankwatch_time_to_first_click_seconds_count", v),
            double(kRequests - traffic.no_click));
  EXPECT_NEAR(fleet("rankwatch_time_to_first_click_seconds_sum", v),
              double(first_click["sum"]), 1e-9);
  EXPECT_EQ(fleet("rankwatch_time_to_first_click_seconds_bucket",
                  {{"variant", "A-vs-B"}, {"le", "0.5"}}),
            double(int64_t(first_click["buckets"]["0.5"])));
}

TEST_F(DaemonE2eTest, RecoversFromBrokerFailuresAndRequestErrors) {
  // A session (6 s) that outlasts the broker's 3 s outage below: the
  // member keeps its partitions whichever broker coordinates the group.
  Daemon d(dir_, WriteConfig("g-faults", kTracingMetrics, "", "6000"), "d");
  ASSERT_TRUE(d.WaitReady()) << d.log();
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(Requests(0, 60, true));
  // A broker goes down while traffic continues, then comes back.
  ASSERT_TRUE(cluster_->SetBrokerDown(2).ok());
  std::vector<Event> during = Requests(60, 70, true);
  for (const Event& e : during) producer.Send(e);
  testing::SleepFor(3s);
  ASSERT_TRUE(cluster_->SetBrokerUp(2).ok());
  producer.Flush();
  // Fetch (api key 1) and OffsetCommit (8) requests fail for a while.
  ASSERT_TRUE(
      cluster_
          ->PushRequestErrors(1, {RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                                  RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                                  RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT})
          .ok());
  ASSERT_TRUE(
      cluster_
          ->PushRequestErrors(8, {RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
                                  RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE})
          .ok());
  producer.SendPaced(Requests(130, 70, true));
  // All 200 requests' events (with clicks) read before the sentinel.
  size_t total = 0;
  for (int first : {0, 60, 130}) {
    total += Requests(first, first == 0 ? 60 : 70, true).size();
  }
  EXPECT_TRUE(WaitConsumed({&d}, static_cast<double>(total)));
  producer.Sentinels(kT0 + 3'600'000);
  std::map<int, double> n;
  WaitFor(
      [&] {
        n = FinalizedPerRequest({d.Metrics()}, 200);
        return std::all_of(n.begin(), n.end(),
                           [](const auto& kv) { return kv.second >= 1; });
      },
      60s);
  for (const auto& [request, count] : n) {
    EXPECT_GE(count, 1) << "request " << request << " was lost\n" << d.log();
  }
  EXPECT_TRUE(d.process().Running());
}

// ---------------------------------------------------------------------------
// Backlogs (issue 9): results and judgments of many join windows in two
// topics of 12 partitions, read by the daemon in whatever order librdkafka
// fetches the partitions (a catch-up after lag, a restart), or produced while
// it runs with one topic lagging the other. Whatever the order, the scraped
// means must equal those of `rankwatch replay` over the same events.
//
// The events come from a seeded generator; a failure prints the seed, and
// RANKWATCH_E2E_SEED=<seed> reproduces it.

constexpr int kBacklogPartitions = 12;
constexpr char kBacklogResults[] = "backlog-results";
constexpr char kBacklogJudgments[] = "backlog-judgments";
constexpr const char* kBacklogVariants[] = {"A", "B", "C"};
// Delay of every broker response while the process to be killed reads.
constexpr int kKillRttMs = 100;

std::vector<std::string> BacklogVariants() {
  return {std::begin(kBacklogVariants), std::end(kBacklogVariants)};
}

struct BacklogSpec {
  uint64_t seed = 1;
  int requests = 20'000;
  int64_t first_ms = 0;       // Served time of request 0 (epoch ms).
  int64_t spacing_ms = 10;    // Between requests.
  int64_t window_ms = 5'000;  // The join window.
  // Shares of requests with one more click stamped 3 windows after the
  // results event (outside the window: must not count), and with one more
  // click stamped 100..900 ms before it (within a 1 s early tolerance).
  double far_share = 0.04;
  double early_share = 0.04;
};

struct Backlog {
  std::vector<Event> events;  // In event-time order; ties keep their order.
  int requests = 0;
  int far_clicks = 0;
  int early_clicks = 0;
};

// Request i of variant A, B or C (at random) is served at first_ms +
// spacing_ms * i with 10 docs; 85% of requests get 1 to 3 clicks on a
// top-biased doc among 12 candidates (2 never served), grade 2 for a
// quarter of them, 50 ms .. window - 50 ms after the results event. Far
// clicks are grade 3 on a top-3 doc, so that counting them moves the means.
Backlog MakeBacklog(const BacklogSpec& spec) {
  Xoshiro256 rng(spec.seed);
  Backlog b;
  b.requests = spec.requests;
  for (int i = 0; i < spec.requests; ++i) {
    const std::string id = "r" + std::to_string(i);
    const std::string variant = kBacklogVariants[rng.Below(3)];
    const int64_t t = spec.first_ms + spec.spacing_ms * i;
    std::string docs;
    for (int d = 0; d < 10; ++d) {
      docs += (d ? ",\"" : "\"") + id + "-d" + std::to_string(d) + "\"";
    }
    b.events.push_back({true, id,
                        "{\"request_id\":\"" + id + "\",\"variant\":\"" +
                            variant + "\",\"timestamp\":" + std::to_string(t) +
                            ",\"results\":[" + docs + "]}",
                        t});
    auto click = [&](uint64_t doc, int grade, int64_t time_ms) {
      b.events.push_back({false, id,
                          "{\"request_id\":\"" + id + "\",\"doc_id\":\"" + id +
                              "-d" + std::to_string(doc) +
                              "\",\"relevance\":" + std::to_string(grade) +
                              ",\"timestamp\":" + std::to_string(time_ms) + "}",
                          time_ms});
    };
    const int clicks =
        rng.Uniform() < 0.15 ? 0 : 1 + static_cast<int>(rng.Below(3));
    for (int c = 0; c < clicks; ++c) {
      const uint64_t doc = rng.Below(rng.Below(12) + 1);
      const int grade = rng.Uniform() < 0.25 ? 2 : 1;
      click(doc, grade,
            t + 50 + static_cast<int64_t>(rng.Below(spec.window_ms - 100)));
    }
    if (rng.Uniform() < spec.far_share) {
      ++b.far_clicks;
      click(rng.Below(3), 3,
            t + 3 * spec.window_ms + static_cast<int64_t>(rng.Below(1000)));
    }
    if (rng.Uniform() < spec.early_share) {
      ++b.early_clicks;
      click(rng.Below(5), 1 + static_cast<int>(rng.Below(2)),
            t - 100 - static_cast<int64_t>(rng.Below(800)));
    }
  }
  std::stable_sort(b.events.begin(), b.events.end(),
                   [](const Event& x, const Event& y) {
                     return x.timestamp_ms < y.timestamp_ms;
                   });
  return b;
}

// $RANKWATCH_E2E_SEED, else a random seed. The seed fixes the events
// relative to the first one; event times start from the current time.
uint64_t BacklogSeed() {
  if (const char* s = std::getenv("RANKWATCH_E2E_SEED")) {
    return std::strtoull(s, nullptr, 10);
  }
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// A count of the replay JSON's "events" ("finalized", "late", ...).
int64_t ReplayCount(const std::string& replay_json, const char* key) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t n = -1;
  if (parser.parse(simdjson::padded_string(replay_json)).get(doc) !=
          simdjson::SUCCESS ||
      doc["events"][key].get(n) != simdjson::SUCCESS) {
    return -1;
  }
  return n;
}

// The join's counters of one scrape, for messages and the report.
std::string JoinCounters(const Scrape& s) {
  std::string out;
  for (const char* name :
       {"rankwatch_events_consumed_total", "rankwatch_requests_finalized_total",
        "rankwatch_pending_requests", "rankwatch_late_judgments_total",
        "rankwatch_late_results_total", "rankwatch_orphaned_judgments_total",
        "rankwatch_duplicate_results_total", "rankwatch_requests_evicted_total",
        "rankwatch_events_rejected_total",
        "rankwatch_rebalance_dropped_requests_total",
        "rankwatch_replayed_events_total",
        "rankwatch_requests_reprocessed_total"}) {
    out += std::string(out.empty() ? "" : " ") + name + "=" +
           (s.Has(name) ? std::to_string(static_cast<int64_t>(s.Sum(name)))
                        : std::string("absent"));
  }
  return out;
}

// Polls `daemon` every 100 ms until `done(scrape)` or `timeout`; `*last`
// gets the last scrape.
template <typename Done>
bool PollMetrics(testing::DaemonProcess& daemon, Done done,
                 std::chrono::milliseconds timeout, Scrape* last) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    *last = daemon.Metrics();
    if (done(*last)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    testing::SleepFor(100ms);
  }
}

// Offsets `group` has committed on `topic`, per partition (-1001, librdkafka's
// "invalid offset", where nothing was committed); with `past`, also the
// results events past them (the whole partition where nothing was
// committed): what a restarted member reads again, so the bound on requests
// it can finalize twice. Empty on error.
std::map<int32_t, int64_t> CommittedOffsets(const std::string& bootstrap,
                                            const std::string& group,
                                            const std::string& topic,
                                            int64_t* past = nullptr) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  conf->set("bootstrap.servers", bootstrap, err);
  conf->set("group.id", group, err);
  conf->set("enable.auto.commit", "false", err);
  std::unique_ptr<RdKafka::KafkaConsumer> c(
      RdKafka::KafkaConsumer::create(conf.get(), err));
  if (c == nullptr) return {};
  std::vector<RdKafka::TopicPartition*> parts;
  for (int p = 0; p < kBacklogPartitions; ++p) {
    parts.push_back(RdKafka::TopicPartition::create(topic, p));
  }
  std::map<int32_t, int64_t> offsets;
  if (c->committed(parts, 10'000) == RdKafka::ERR_NO_ERROR) {
    if (past != nullptr) *past = 0;
    for (RdKafka::TopicPartition* tp : parts) {
      offsets[tp->partition()] = tp->offset();
      if (past == nullptr) continue;
      int64_t low = 0, high = 0;
      if (c->query_watermark_offsets(topic, tp->partition(), &low, &high,
                                     10'000) != RdKafka::ERR_NO_ERROR) {
        offsets.clear();
        break;
      }
      *past += high - std::max(low, tp->offset() < 0 ? low : tp->offset());
    }
  }
  RdKafka::TopicPartition::destroy(parts);
  c->close();
  return offsets;
}

int64_t EventsPastCommit(const std::string& bootstrap, const std::string& group,
                         const std::string& topic) {
  int64_t past = -1;
  if (CommittedOffsets(bootstrap, group, topic, &past).empty()) return -1;
  return past;
}

// Offsets `group` has committed on both backlog topics, keyed by topic and
// partition; empty on error.
std::map<std::pair<std::string, int32_t>, int64_t> BacklogCommits(
    const std::string& bootstrap, const std::string& group) {
  std::map<std::pair<std::string, int32_t>, int64_t> all;
  for (const char* topic : {kBacklogResults, kBacklogJudgments}) {
    const std::map<int32_t, int64_t> offsets =
        CommittedOffsets(bootstrap, group, topic);
    if (offsets.empty()) return {};
    for (const auto& [partition, offset] : offsets) {
      all[{topic, partition}] = offset;
    }
  }
  return all;
}

class DaemonBacklogE2eTest : public DaemonE2eTest {
 protected:
  void SetUp() override {
    DaemonE2eTest::SetUp();
    if (HasFatalFailure()) return;
    for (const char* topic : {kBacklogResults, kBacklogJudgments}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kBacklogPartitions).ok());
    }
    seed_ = BacklogSeed();
    RecordProperty("seed", std::to_string(seed_));
  }

  std::string SeedTrace() const {
    return "seed " + std::to_string(seed_) +
           " (rerun with RANKWATCH_E2E_SEED=" + std::to_string(seed_) + ")";
  }

  // The daemon's (and replay's) configuration over the backlog topics.
  // `properties`: more librdkafka property lines.
  std::string BacklogConfig(const std::string& group, const std::string& window,
                            const std::string& allowed_lateness,
                            const std::string& properties = "",
                            const std::string& commit_interval = "500ms",
                            const std::string& kafka_keys = "") {
    return dir_.Write(group + ".yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                           R"("
  group_id: )" + group + R"(
  results_topic: )" + kBacklogResults +
                                           R"(
  judgments_topic: )" + kBacklogJudgments +
                                           R"(
  commit_interval: )" + commit_interval + R"(
)" + kafka_keys + R"(  properties:
    session.timeout.ms: ")" + std::string(kSessionTimeoutMs) +
                                           R"("
    heartbeat.interval.ms: "500"
    fetch.wait.max.ms: "100"
)" + properties + R"(join:
  window: )" + window + R"(
  allowed_lateness: )" + allowed_lateness +
                                           R"(
  idle_timeout: 2s
  early_tolerance: 1s
)" + kAbMetrics + R"(aggregation:
  windows: []
http:
  listen: 127.0.0.1:0
)");
  }

  // 20,000 requests over 200 s of event time (40 windows of 5 s), ending
  // about 1.5 minutes before now: nothing is ahead of the wall clock.
  Backlog PastBacklog() const {
    BacklogSpec spec;
    spec.seed = seed_;
    spec.requests = 20'000;
    spec.spacing_ms = 10;
    spec.window_ms = 5'000;
    spec.first_ms = Producer::NowMs() - 5 * 60'000;
    return MakeBacklog(spec);
  }

  // Case (c), below.
  void LaggingTopic(bool results_lag);

  uint64_t seed_ = 0;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

// (a) Catch-up: the whole backlog is in both topics before the daemon starts.
TEST_F(DaemonBacklogE2eTest, BacklogCatchUpMeansEqualReplay) {
  SCOPED_TRACE(SeedTrace());
  const auto start = std::chrono::steady_clock::now();
  Backlog backlog = PastBacklog();
  // Two events stamped far in the future, read midway: rejected
  // (future_timestamp) by the daemon and replay alike, they must not move
  // event time (before issue 9 one such event made every later one late).
  const size_t middle = backlog.events.size() / 2;
  backlog.events.insert(
      backlog.events.begin() + middle,
      {{true, "poison",
        "{\"request_id\":\"poison\",\"variant\":\"A\",\"timestamp\":"
        "\"9999-12-31T23:59:59Z\",\"results\":[\"x\"]}",
        backlog.events[middle].timestamp_ms},
       {false, "r1",
        "{\"request_id\":\"r1\",\"doc_id\":\"r1-d0\",\"relevance\":3,"
        "\"timestamp\":9223372036854775807}",
        backlog.events[middle].timestamp_ms}});
  const std::string config = BacklogConfig("g-backlog", "5s", "1s");
  {
    Producer producer(cluster_->bootstrap_servers(), kBacklogResults,
                      kBacklogJudgments);
    producer.SendAll(backlog.events);
  }
  const std::string replay = ReplayJson(config, backlog.events);
  ASSERT_EQ(ReplayCount(replay, "finalized"), backlog.requests) << replay;

  Daemon daemon(dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  const double events = static_cast<double>(backlog.events.size());
  Scrape s;
  const bool done = PollMetrics(
      daemon,
      [&](const Scrape& m) {
        return m.Sum("rankwatch_events_consumed_total") >= events &&
               m.Sum("rankwatch_requests_finalized_total") >= backlog.requests;
      },
      45s, &s);
  // Anything finalized twice or late shows after a moment.
  testing::SleepFor(500ms);
  s = daemon.Metrics();
  std::printf(
      "%d requests, %zu events (%d far clicks, %d early clicks) in "
      "%.1f s\n  daemon: %s\n  replay: late=%lld orphaned=%lld\n",
      backlog.requests, backlog.events.size(), backlog.far_clicks,
      backlog.early_clicks, Seconds(start), JoinCounters(s).c_str(),
      static_cast<long long>(ReplayCount(replay, "late")),
      static_cast<long long>(ReplayCount(replay, "orphaned_judgments")));
  ASSERT_TRUE(done) << daemon.Summary() << "\n" << daemon.log();
  EXPECT_EQ(s.Sum("rankwatch_events_consumed_total"), events);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total"), 2);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total",
                  {{"reason", "future_timestamp"}}),
            2);
  EXPECT_EQ(s.Sum("rankwatch_late_results_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), backlog.requests);
  ExpectSameAsReplay({s}, replay, BacklogVariants(), 1e-9, /*relative=*/true);
}

// Commits offset 0 of every backlog partition for `group` with the commit
// metadata an older rankwatch wrote after a far-future event had moved its
// watermark to year 9999. Returns false on any librdkafka error.
bool CommitPoisonedWatermark(const std::string& bootstrap,
                             const std::string& group) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  if (conf->set("bootstrap.servers", bootstrap, err) !=
          RdKafka::Conf::CONF_OK ||
      conf->set("group.id", group, err) != RdKafka::Conf::CONF_OK) {
    return false;
  }
  std::unique_ptr<RdKafka::KafkaConsumer> c(
      RdKafka::KafkaConsumer::create(conf.get(), err));
  if (c == nullptr) return false;
  // end: the old owner had read everything, so every event re-read counts
  // as replayed: under that watermark each would be skipped as finalized.
  const std::string metadata = "wm=253402300799000;end=1000000";
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(2 * kBacklogPartitions);
  for (const char* topic : {kBacklogResults, kBacklogJudgments}) {
    for (int p = 0; p < kBacklogPartitions; ++p) {
      rd_kafka_topic_partition_t* tp =
          rd_kafka_topic_partition_list_add(list, topic, p);
      tp->offset = 0;
      tp->metadata = std::malloc(metadata.size());  // Freed with the list.
      std::memcpy(tp->metadata, metadata.data(), metadata.size());
      tp->metadata_size = metadata.size();
    }
  }
  const rd_kafka_resp_err_t e = rd_kafka_commit(c->c_ptr(), list, 0);
  rd_kafka_topic_partition_list_destroy(list);
  c->close();
  return e == RD_KAFKA_RESP_ERR_NO_ERROR;
}

// A watermark restored from commit metadata is checked like event times:
// one poisoned by an older version (year 9999) is ignored with a warning,
// so the re-read events are joined, not skipped as replayed or late.
TEST_F(DaemonBacklogE2eTest, PoisonedCommittedWatermarkIsIgnored) {
  SCOPED_TRACE(SeedTrace());
  BacklogSpec spec;
  spec.seed = seed_;
  spec.requests = 2'000;
  spec.first_ms = Producer::NowMs() - 5 * 60'000;
  const Backlog backlog = MakeBacklog(spec);
  const std::string group = "g-poisoned";
  const std::string config = BacklogConfig(group, "5s", "1s");
  {
    Producer producer(cluster_->bootstrap_servers(), kBacklogResults,
                      kBacklogJudgments);
    producer.SendAll(backlog.events);
  }
  ASSERT_TRUE(CommitPoisonedWatermark(cluster_->bootstrap_servers(), group));
  const std::string replay = ReplayJson(config, backlog.events);
  Daemon daemon(dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  Scrape s;
  const bool done = PollMetrics(
      daemon,
      [&](const Scrape& m) {
        return m.Sum("rankwatch_requests_finalized_total") >= backlog.requests;
      },
      45s, &s);
  ASSERT_TRUE(done) << JoinCounters(s) << "\n" << daemon.log();
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), backlog.requests);
  EXPECT_EQ(s.Sum("rankwatch_late_results_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_late_judgments_total"), 0);
  EXPECT_NE(daemon.log().find("ignoring the committed watermark"),
            std::string::npos)
      << daemon.log();
  ExpectSameAsReplay({s}, replay, BacklogVariants(), 1e-9, /*relative=*/true);
}

// (b) The same backlog; the daemon is killed with SIGKILL midway and a new
// process of the same group takes over from the last commit. Without
// durable state (the opt-out, whose at-least-once accounting this checks:
// with it, DurableState* tests hold the state exact and the counters may
// count again what the victim scored after its last checkpoint).
TEST_F(DaemonBacklogE2eTest, BacklogKillNineMidwayLosesNothing) {
  SCOPED_TRACE(SeedTrace());
  const auto start = std::chrono::steady_clock::now();
  const Backlog backlog = PastBacklog();
  const std::string group = "g-backlog-kill";
  const std::string config =
      BacklogConfig(group, "5s", "1s",
                    // Small fetches, so that a slowed broker slows the
                    // first process enough to kill it midway.
                    "    max.partition.fetch.bytes: \"16384\"\n",
                    // Commits far enough apart for the kill below to fall
                    // between two of them.
                    "3s", kNotDurable);
  {
    // Small batches: a fetch returns at least one whole batch.
    Producer producer(cluster_->bootstrap_servers(), kBacklogResults,
                      kBacklogJudgments, {{"batch.num.messages", "20"}});
    producer.SendAll(backlog.events);
  }
  const std::string replay = ReplayJson(config, backlog.events);
  ASSERT_EQ(ReplayCount(replay, "finalized"), backlog.requests) << replay;
  const double expected = backlog.requests;

  Scrape first;
  {
    ASSERT_TRUE(cluster_->SetBrokerRtt(-1, kKillRttMs).ok());
    Daemon d1(dir_, config, "first");
    ASSERT_TRUE(d1.WaitReady()) << d1.log();
    // Kill it once it has finalized a quarter of the requests. What it
    // counted is known only from its last scrape, so no commit may land
    // between that scrape and the kill: it would cover requests that neither
    // process counts. So: read the group's commits, scrape, freeze the
    // process (SIGSTOP), let in-flight commits land (several broker round
    // trips), and kill it only if the commits have not moved; otherwise
    // resume it and try again (commits are 3 s apart, the check takes 1 s).
    bool midway = false;
    for (int attempt = 0; attempt < 30; ++attempt) {
      const auto before = BacklogCommits(cluster_->bootstrap_servers(), group);
      midway = PollMetrics(
          d1,
          [&](const Scrape& m) {
            return m.Sum("rankwatch_requests_finalized_total") >= expected / 4;
          },
          45s, &first);
      d1.process().Signal(SIGSTOP);
      if (!midway) break;
      testing::SleepFor(std::chrono::milliseconds(5 * kKillRttMs));
      if (!before.empty() &&
          before == BacklogCommits(cluster_->bootstrap_servers(), group)) {
        break;
      }
      midway = false;
      d1.process().Signal(SIGCONT);
    }
    d1.process().Signal(SIGKILL);
    EXPECT_EQ(d1.process().Wait(10s).value_or(-1), 128 + SIGKILL);
    ASSERT_TRUE(midway) << d1.Summary() << "\n" << d1.log();
  }
  ASSERT_TRUE(cluster_->SetBrokerRtt(-1, 0).ok());
  const double finalized_first =
      first.Sum("rankwatch_requests_finalized_total");
  ASSERT_GT(finalized_first, 0);
  ASSERT_LT(finalized_first, expected)
      << "the first process finished before the kill; slow it down more";
  const int64_t past_commit =
      EventsPastCommit(cluster_->bootstrap_servers(), group, kBacklogResults);
  ASSERT_GE(past_commit, 0);

  Daemon d2(dir_, config, "second");
  ASSERT_TRUE(d2.WaitReady(45s)) << d2.log();
  Scrape second;
  const bool done = PollMetrics(
      d2,
      [&](const Scrape& m) {
        return finalized_first + m.Sum("rankwatch_requests_finalized_total") >=
                   expected &&
               m.Has("rankwatch_consumer_lag_messages") &&
               m.Sum("rankwatch_consumer_lag_messages") == 0;
      },
      45s, &second);
  testing::SleepFor(500ms);
  second = d2.Metrics();
  const double finalized_second =
      second.Sum("rankwatch_requests_finalized_total");
  const double duplicates = finalized_first + finalized_second - expected;
  std::printf(
      "%d requests in %.1f s; results events past the last commit: "
      "%lld\n  first:  %s\n  second: %s\n  finalized twice: %.0f\n",
      backlog.requests, Seconds(start), static_cast<long long>(past_commit),
      JoinCounters(first).c_str(), JoinCounters(second).c_str(), duplicates);
  EXPECT_TRUE(done) << d2.Summary() << "\n" << d2.log();

  // No request lost: both processes together finalized every request, and
  // every variant's.
  EXPECT_GE(duplicates, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay)).get(doc),
            simdjson::SUCCESS);
  for (const std::string& v : BacklogVariants()) {
    const std::map<std::string, std::string> labels = {{"variant", v},
                                                       {"k", "1"}};
    EXPECT_GE(first.Sum("rankwatch_precision_count", labels) +
                  second.Sum("rankwatch_precision_count", labels),
              double(int64_t(doc["variants"][v]["requests"])))
        << "variant " << v;
  }
  // Requests finalized twice: only those whose results event came after the
  // last commit, and the restarted process says how many it re-finalized.
  EXPECT_LE(duplicates, past_commit);
  EXPECT_TRUE(second.Has("rankwatch_requests_reprocessed_total"))
      << "the restarted process does not export "
         "rankwatch_requests_reprocessed_total";
  EXPECT_LE(duplicates, second.Sum("rankwatch_requests_reprocessed_total"));
}

// (c) Produced while the daemon runs, one topic on time and the other
// starting 4 windows late and catching up at twice the pace (never ahead of
// the wall clock), within the allowed lateness. With results lagging, far
// clicks of the first requests arrive before their results event.
void DaemonBacklogE2eTest::LaggingTopic(bool results_lag) {
  const auto start = std::chrono::steady_clock::now();
  // Window 2 s; a topic lags by up to 4 windows (8 s), so the allowed
  // lateness (12 s) covers the lag, the window and a margin.
  const std::string config = BacklogConfig(
      results_lag ? "g-results-lag" : "g-judgments-lag", "2s", "12s");
  Daemon daemon(dir_, config, "d");
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();

  BacklogSpec spec;
  spec.seed = seed_;
  spec.requests = 2'400;  // 12 s of event time.
  spec.spacing_ms = 5;
  spec.window_ms = 2'000;
  spec.first_ms = Producer::NowMs() + 500;
  const Backlog backlog = MakeBacklog(spec);
  std::vector<Event> on_time, lagging;
  for (const Event& e : backlog.events) {
    (e.results == results_lag ? lagging : on_time).push_back(e);
  }
  const int64_t lag_ms = 4 * spec.window_ms;
  const std::string bootstrap = cluster_->bootstrap_servers();
  std::thread on_time_thread([&] {
    Producer p(bootstrap, kBacklogResults, kBacklogJudgments);
    p.SendWhenDue(on_time, [](const Event& e) { return e.timestamp_ms; });
  });
  std::thread lagging_thread([&] {
    Producer p(bootstrap, kBacklogResults, kBacklogJudgments);
    p.SendWhenDue(lagging, [&](const Event& e) {
      return std::max(e.timestamp_ms, spec.first_ms + lag_ms +
                                          (e.timestamp_ms - spec.first_ms) / 2);
    });
  });
  // How far the lagging topic's event time trailed the other's in the
  // daemon, while both are produced.
  double max_trail_s = 0;
  Scrape s;
  const auto production_end =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(
          spec.first_ms + spec.requests * spec.spacing_ms - Producer::NowMs());
  const std::map<std::string, std::string> lead = {
      {"topic", results_lag ? "judgments" : "results"}};
  const std::map<std::string, std::string> trail = {
      {"topic", results_lag ? "results" : "judgments"}};
  while (std::chrono::steady_clock::now() < production_end) {
    s = daemon.Metrics();
    const double a = s.Sum("rankwatch_last_event_timestamp_seconds", lead);
    const double b = s.Sum("rankwatch_last_event_timestamp_seconds", trail);
    if (a > 0 && b > 0) max_trail_s = std::max(max_trail_s, a - b);
    testing::SleepFor(250ms);
  }
  on_time_thread.join();
  lagging_thread.join();
  const std::string replay = ReplayJson(config, backlog.events);
  ASSERT_EQ(ReplayCount(replay, "finalized"), backlog.requests) << replay;

  const double events = static_cast<double>(backlog.events.size());
  const bool done = PollMetrics(
      daemon,
      [&](const Scrape& m) {
        return m.Sum("rankwatch_events_consumed_total") >= events &&
               m.Sum("rankwatch_requests_finalized_total") >= backlog.requests;
      },
      30s, &s);
  testing::SleepFor(500ms);
  s = daemon.Metrics();
  std::printf(
      "%d requests, %zu events (%d far clicks, %d early clicks) in "
      "%.1f s; %s trailed by up to %.1f s of event time\n  daemon: "
      "%s\n  replay: late=%lld orphaned=%lld\n",
      backlog.requests, backlog.events.size(), backlog.far_clicks,
      backlog.early_clicks, Seconds(start),
      results_lag ? "results" : "judgments", max_trail_s,
      JoinCounters(s).c_str(),
      static_cast<long long>(ReplayCount(replay, "late")),
      static_cast<long long>(ReplayCount(replay, "orphaned_judgments")));
  ASSERT_TRUE(done) << daemon.Summary() << "\n" << daemon.log();
  EXPECT_GE(max_trail_s, 2.0 * spec.window_ms / 1000);
  EXPECT_EQ(s.Sum("rankwatch_events_rejected_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_requests_finalized_total"), backlog.requests);
  ExpectSameAsReplay({s}, replay, BacklogVariants(), 1e-9, /*relative=*/true);
}

TEST_F(DaemonBacklogE2eTest, LaggingJudgmentsTopicMeansEqualReplay) {
  SCOPED_TRACE(SeedTrace());
  LaggingTopic(/*results_lag=*/false);
}

TEST_F(DaemonBacklogE2eTest, LaggingResultsTopicMeansEqualReplay) {
  SCOPED_TRACE(SeedTrace());
  LaggingTopic(/*results_lag=*/true);
}

}  // namespace
}  // namespace rankwatch
