// Live multileaving (issue 28): `rankwatch run` processes over the Kafka
// protocol (in-process mock cluster) watch a three-team experiment. The
// traffic is built here with the reference multileaver, and the test
// counts, while drawing the clicks, what every pair's outcome must be; the
// daemons' counters (summed over two replicas), replay's JSON and the
// test's own counts must all agree, and a single replica's verdicts,
// ranking and winner must be replay's.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "metrics/multileaving.h"
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
using testing::Event;
using testing::kSpacingMs;
using testing::kT0;
using testing::Producer;
using testing::Scrape;
using testing::WaitConsumed;
using testing::WaitFor;

constexpr int kPartitions = 4;
constexpr std::array<const char*, 3> kTeams = {"A", "B", "C"};

class Daemon : public testing::DaemonProcess {
 public:
  Daemon(const testing::TempDir& dir, const std::string& config,
         const std::string& name)
      : DaemonProcess(RankwatchBinary(), dir, config, name) {}
};

// The traffic and what it must give, counted while drawing it.
struct Traffic {
  std::vector<Event> events;
  int64_t no_click = 0;
  std::array<int64_t, 3> clicks = {0, 0, 0};
  // Per pair (0,1), (0,2), (1,2): wins of the first, of the second, ties.
  std::array<std::array<int64_t, 3>, 3> pairs{};
};

// `count` requests of variant "A-vs-B-vs-C", kSpacingMs apart: rankers A, B
// and C each rank 6 of 9 docs (rotations of one pool), merged by
// metrics::TeamDraftMultileave (seed 28) into 6. Users click a doc of
// team A with probability 0.1, B 0.35, C 0.6, each click 100 ms + 40 ms x
// rank after the results event.
Traffic MakeTraffic(int count) {
  Traffic t;
  Xoshiro256 rng(28);
  const std::vector<std::string> pool = {"d0", "d1", "d2", "d3", "d4",
                                         "d5", "d6", "d7", "d8"};
  const std::array<double, 3> click = {0.1, 0.35, 0.6};
  metrics::InterleavedList merged;
  for (int i = 0; i < count; ++i) {
    const std::string id = "ml-" + std::to_string(i);
    const int64_t served = kT0 + kSpacingMs * i;
    std::vector<std::vector<std::string_view>> rankings(3);
    for (int team = 0; team < 3; ++team) {
      for (int r = 0; r < 6; ++r) {
        rankings[team].push_back(pool[(i + 3 * team + r) % 9]);
      }
    }
    const std::vector<std::span<const std::string_view>> views(rankings.begin(),
                                                               rankings.end());
    metrics::TeamDraftMultileave(views, 6, &rng, &merged);
    std::string json = R"({"request_id":")" + id +
                       R"(","variant":"A-vs-B-vs-C","timestamp":)" +
                       std::to_string(served) + R"(,"results":[)";
    std::array<int64_t, 3> credit = {0, 0, 0};
    std::vector<Event> judgments;
    for (size_t r = 0; r < merged.docs.size(); ++r) {
      const int team = merged.teams[r];
      json += (r > 0 ? "," : "") + std::string(R"({"doc_id":")") +
              std::string(merged.docs[r]) + R"(","team":")" + kTeams[team] +
              "\"}";
      if (rng.Uniform() < click[team]) {
        ++credit[team];
        const int64_t at = served + 100 + 40 * static_cast<int64_t>(r);
        judgments.push_back({false, id,
                             R"({"request_id":")" + id + R"(","doc_id":")" +
                                 std::string(merged.docs[r]) +
                                 R"(","relevance":1,"timestamp":)" +
                                 std::to_string(at) + "}",
                             at});
      }
    }
    t.events.push_back({true, id, json + "]}", served});
    t.events.insert(t.events.end(), judgments.begin(), judgments.end());
    // The outcome, by the definition (docs/statistics.md, "Multileaving").
    if (credit[0] + credit[1] + credit[2] == 0) {
      ++t.no_click;
    } else {
      const int pair_teams[3][2] = {{0, 1}, {0, 2}, {1, 2}};
      for (int p = 0; p < 3; ++p) {
        const int64_t x = credit[pair_teams[p][0]];
        const int64_t y = credit[pair_teams[p][1]];
        ++t.pairs[p][x > y ? 0 : y > x ? 1 : 2];
      }
    }
    for (int team = 0; team < 3; ++team) t.clicks[team] += credit[team];
  }
  std::stable_sort(t.events.begin(), t.events.end(),
                   [](const Event& x, const Event& y) {
                     return x.timestamp_ms < y.timestamp_ms;
                   });
  return t;
}

class MultileavingE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::MockCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments", "dead-letters"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kPartitions).ok());
    }
  }

  // session.timeout.ms 3 s: the mock cluster holds every rebalance for
  // session.timeout.ms - 1 s (as in daemon_e2e_test.cc, kSessionTimeoutMs).
  std::string WriteConfig(const std::string& group) {
    return dir_.Write(group + ".yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                           R"("
  group_id: )" + group + R"(
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
  cutoffs: [3]
  measures: [ctr]
interleaving:
  - name: abc
    variant: A-vs-B-vs-C
    teams: [A, B, C]
)");
  }

  // Replay's JSON of `events` under `config`, parsed into `doc`.
  void Replay(const std::string& config, const std::vector<Event>& events,
              simdjson::dom::parser* parser, simdjson::dom::element* doc) {
    replay_ = testing::ReplayJson(RankwatchBinary(), dir_, config, events);
    ASSERT_EQ(parser->parse(simdjson::padded_string(replay_)).get(*doc),
              simdjson::SUCCESS)
        << replay_;
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::MockCluster> cluster_;
  std::string replay_;
};

// Two replicas: the fleet's summed pair and click counters equal replay's
// pairs, and both equal the test's own counts.
TEST_F(MultileavingE2eTest, PairCountsAcrossReplicasMatchReplay) {
  const std::string config = WriteConfig("g-ml");
  Daemon a(dir_, config, "a");
  ASSERT_TRUE(a.WaitReady()) << a.log();
  Daemon b(dir_, config, "b");
  ASSERT_TRUE(b.WaitReady()) << b.log();
  auto owned = [](Daemon& d) {
    return d.Metrics()
        .LabelValues("rankwatch_consumer_lag_messages", "partition")
        .size();
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        const size_t na = owned(a), nb = owned(b);
        return na > 0 && nb > 0 && na + nb == kPartitions;
      },
      30s))
      << a.log() << b.log();
  constexpr int kRequests = 300;
  const Traffic traffic = MakeTraffic(kRequests);
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
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  Replay(config, traffic.events, &parser, &doc);
  simdjson::dom::element il = doc["interleaving"]["abc"];
  ASSERT_TRUE(il.is_object()) << replay_;
  EXPECT_EQ(int64_t(il["impressions"]), kRequests);
  EXPECT_EQ(int64_t(il["no_click"]), traffic.no_click);
  EXPECT_EQ(fleet("rankwatch_interleaving_impressions_total",
                  {{"experiment", "abc"}}),
            kRequests);
  for (int team = 0; team < 3; ++team) {
    SCOPED_TRACE(kTeams[team]);
    EXPECT_EQ(int64_t(il["clicks"][kTeams[team]]), traffic.clicks[team]);
    EXPECT_EQ(fleet("rankwatch_interleaving_clicks_total",
                    {{"experiment", "abc"}, {"team", kTeams[team]}}),
              double(traffic.clicks[team]));
  }
  simdjson::dom::array pairs = il["pairs"];
  ASSERT_EQ(pairs.size(), 3u) << replay_;
  const int pair_teams[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int p = 0; p < 3; ++p) {
    const char* x = kTeams[pair_teams[p][0]];
    const char* y = kTeams[pair_teams[p][1]];
    SCOPED_TRACE(std::string(x) + " vs " + y);
    simdjson::dom::element pair = pairs.at(p);
    EXPECT_EQ(std::string_view(pair["teams"].at(0)), x);
    EXPECT_EQ(std::string_view(pair["teams"].at(1)), y);
    EXPECT_EQ(int64_t(pair["wins"][x]), traffic.pairs[p][0]);
    EXPECT_EQ(int64_t(pair["wins"][y]), traffic.pairs[p][1]);
    EXPECT_EQ(int64_t(pair["ties"]), traffic.pairs[p][2]);
    const std::map<std::string, std::string> labels = {
        {"experiment", "abc"}, {"first", x}, {"second", y}};
    auto with = [&](const char* winner) {
      std::map<std::string, std::string> l = labels;
      l["winner"] = winner;
      return l;
    };
    EXPECT_EQ(fleet("rankwatch_interleaving_pair_wins_total", with("first")),
              double(traffic.pairs[p][0]));
    EXPECT_EQ(fleet("rankwatch_interleaving_pair_wins_total", with("second")),
              double(traffic.pairs[p][1]));
    EXPECT_EQ(fleet("rankwatch_interleaving_pair_ties_total", labels),
              double(traffic.pairs[p][2]));
  }
}

// One replica (every partition): its pairs' verdicts, ranking and winner
// equal replay's. Clicks on C (0.6) beat B's (0.35) and A's (0.1) by far,
// so replay's single look decides every pair; the daemon's running
// minimum over its looks can only be lower, so it decides them too.
TEST_F(MultileavingE2eTest, VerdictsAndRankingMatchReplay) {
  const std::string config = WriteConfig("g-ml1");
  Daemon d(dir_, config, "d");
  ASSERT_TRUE(d.WaitReady()) << d.log();
  constexpr int kRequests = 300;
  const Traffic traffic = MakeTraffic(kRequests);
  Producer producer(cluster_->bootstrap_servers());
  producer.SendPaced(traffic.events, 4.0);
  ASSERT_TRUE(WaitConsumed({&d}, static_cast<double>(traffic.events.size())));
  producer.Sentinels(kT0 + 3'600'000);
  ASSERT_TRUE(WaitFor([&] { return d.Finalized() >= kRequests; }, 30s));
  testing::SleepFor(1500ms);  // Looks are once a second.
  const Scrape s = d.Metrics();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  Replay(config, traffic.events, &parser, &doc);
  simdjson::dom::element il = doc["interleaving"]["abc"];
  ASSERT_TRUE(il.is_object()) << replay_;
  simdjson::dom::array pairs = il["pairs"];
  ASSERT_EQ(pairs.size(), 3u) << replay_;
  const int pair_teams[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int p = 0; p < 3; ++p) {
    const char* x = kTeams[pair_teams[p][0]];
    const char* y = kTeams[pair_teams[p][1]];
    SCOPED_TRACE(std::string(x) + " vs " + y);
    // The second team of every pair clicks more: +1 in replay.
    EXPECT_EQ(int64_t(pairs.at(p)["verdict"]), 1) << replay_;
    EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_verdict",
                    {{"experiment", "abc"}, {"first", x}, {"second", y}}),
              double(int64_t(pairs.at(p)["verdict"])));
    EXPECT_LE(s.Sum("rankwatch_interleaving_pair_adjusted_p_value",
                    {{"experiment", "abc"}, {"first", x}, {"second", y}}),
              double(pairs.at(p)["adjusted_p_value"]) * (1 + 1e-12));
  }
  simdjson::dom::array ranking = il["ranking"];
  ASSERT_EQ(ranking.size(), 3u);
  const std::array<const char*, 3> best_first = {"C", "B", "A"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(std::string_view(ranking.at(i)), best_first[i]) << replay_;
    EXPECT_EQ(s.Sum("rankwatch_interleaving_rank",
                    {{"experiment", "abc"}, {"team", best_first[i]}}),
              double(i + 1));
  }
  EXPECT_EQ(std::string_view(il["winner"]), "C") << replay_;
  EXPECT_EQ(s.Sum("rankwatch_interleaving_winner",
                  {{"experiment", "abc"}, {"team", "C"}}),
            1);
  EXPECT_EQ(int64_t(il["copeland"]["C"]), 2);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_copeland_score",
                  {{"experiment", "abc"}, {"team", "A"}}),
            -2);
  // The summary's matrix carries the same verdicts.
  StatusOr<testing::HttpResult> got =
      testing::HttpGet("127.0.0.1", d.port(), "/api/v1/summary");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const std::string summary = got->body;
  simdjson::dom::parser sp;
  simdjson::dom::element sdoc;
  ASSERT_EQ(sp.parse(simdjson::padded_string(summary)).get(sdoc),
            simdjson::SUCCESS)
      << summary;
  simdjson::dom::element x = sdoc["interleaving"].at(0);
  EXPECT_EQ(int64_t(x["winner"]), 2) << summary;
  simdjson::dom::array spairs = x["pairs"];
  ASSERT_EQ(spairs.size(), 3u);
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(int64_t(spairs.at(p)["verdict"]), 1) << summary;
  }
}

}  // namespace
}  // namespace rankwatch
