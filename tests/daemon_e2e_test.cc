// `rankwatch run` end to end over the real Kafka protocol: a librdkafka mock
// cluster in this process (so faults can be injected), the daemon as a
// separate process bound to port 0, events produced with a librdkafka
// producer, and the metrics read over HTTP.
//
// The daemon runs with a 2 s join window and a one-hour idle timeout: the
// tests drive event time themselves with "sentinel" results events far in
// the future (one per partition), so what is finalized when is
// deterministic.
#include <librdkafka/rdkafkacpp.h>
#include <signal.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/kafka/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/http_client.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Scrape;
using testing::WaitFor;

constexpr int kPartitions = 4;
constexpr int64_t kT0 = 1'763'805'600'000;  // Event time of request 0.
constexpr int64_t kSpacingMs = 50;          // Between requests.

struct Event {
  bool results;
  std::string key;
  std::string json;
  int64_t timestamp_ms;
};

// Request i: 5 docs, served at kT0 + 50 ms * i. Clicks: doc i % 5 (grade 1)
// 100 ms later; for i % 3 == 0 also doc (i + 2) % 5 (grade 2) at 200 ms;
// none at all for i % 7 == 0 (a request without a relevant doc).
// `variant`: "A"/"B" alternately, or "v-<i>" so the metrics tell which
// requests were finalized.
std::vector<Event> Requests(int first, int count, bool variant_per_request) {
  std::vector<Event> events;
  for (int i = first; i < first + count; ++i) {
    const std::string id = "req-" + std::to_string(i);
    const int64_t t = kT0 + kSpacingMs * i;
    const std::string variant =
        variant_per_request ? "v-" + std::to_string(i) : (i % 2 ? "B" : "A");
    std::string docs;
    for (int d = 0; d < 5; ++d) {
      docs += (d ? ",\"" : "\"") + id + "-d" + std::to_string(d) + "\"";
    }
    events.push_back({true, id,
                      "{\"request_id\":\"" + id + "\",\"variant\":\"" +
                          variant + "\",\"timestamp\":" + std::to_string(t) +
                          ",\"results\":[" + docs + "]}",
                      t});
    if (i % 7 == 0) continue;
    auto click = [&](int doc, int grade, int64_t delay) {
      events.push_back({false, id,
                        "{\"request_id\":\"" + id + "\",\"doc_id\":\"" + id +
                            "-d" + std::to_string(doc) +
                            "\",\"relevance\":" + std::to_string(grade) +
                            ",\"timestamp\":" + std::to_string(t + delay) + "}",
                        t + delay});
    };
    click(i % 5, 1, 100);
    if (i % 3 == 0) click((i + 2) % 5, 2, 200);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) {
                     return a.timestamp_ms < b.timestamp_ms;
                   });
  return events;
}

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

class Producer {
 public:
  explicit Producer(const std::string& bootstrap) {
    std::unique_ptr<RdKafka::Conf> conf(
        RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    conf->set("bootstrap.servers", bootstrap, err);
    conf->set("linger.ms", "5", err);
    conf->set("compression.type", "lz4", err);
    producer_.reset(RdKafka::Producer::create(conf.get(), err));
  }
  ~Producer() { Flush(); }

  void Send(const Event& e, int32_t partition = RdKafka::Topic::PARTITION_UA) {
    const std::string topic = e.results ? "results" : "judgments";
    while (producer_->produce(topic, partition, RdKafka::Producer::RK_MSG_COPY,
                              const_cast<char*>(e.json.data()), e.json.size(),
                              e.key.data(), e.key.size(), e.timestamp_ms,
                              nullptr) == RdKafka::ERR__QUEUE_FULL) {
      producer_->poll(10);
    }
  }
  void SendAll(const std::vector<Event>& events) {
    for (const Event& e : events) Send(e);
    Flush();
  }
  // Sends events at the pace of their timestamps (`speedup` times faster
  // than real time), as a live stream arrives: event time and wall time
  // advance together, and partitions stay within the allowed lateness.
  void SendPaced(const std::vector<Event>& events, double speedup = 2.0) {
    if (events.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    const int64_t t0 = events.front().timestamp_ms;
    for (const Event& e : events) {
      const auto due = start + std::chrono::microseconds(static_cast<int64_t>(
                                   (e.timestamp_ms - t0) * 1000 / speedup));
      while (std::chrono::steady_clock::now() < due) {
        producer_->poll(1);
      }
      Send(e);
      producer_->poll(0);
    }
    Flush();
  }
  // A results event far in the future on every partition: it moves every
  // consumer's watermark past all windows (and itself stays pending).
  void Sentinels(int64_t time_ms) {
    for (int p = 0; p < kPartitions; ++p) {
      const std::string id =
          "sentinel-" + std::to_string(p) + "-" + std::to_string(time_ms);
      Send({true, id,
            "{\"request_id\":\"" + id +
                "\",\"variant\":\"sentinel\",\"timestamp\":" +
                std::to_string(time_ms) + ",\"results\":[\"s\"]}",
            time_ms},
           p);
    }
    Flush();
  }
  void Flush() { producer_->flush(10'000); }

 private:
  std::unique_ptr<RdKafka::Producer> producer_;
};

// One `rankwatch run` process.
class Daemon : public testing::DaemonProcess {
 public:
  Daemon(const testing::TempDir& dir, const std::string& config,
         const std::string& name)
      : DaemonProcess(RANKWATCH_BINARY, dir, config, name) {}
};

class DaemonE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::MockCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    for (const char* topic : {"results", "judgments", "dead-letters"}) {
      ASSERT_TRUE(cluster_->CreateTopic(topic, kPartitions).ok());
    }
  }

  // `extra` is appended to the YAML (e.g. metrics and dead-letter keys).
  std::string WriteConfig(const std::string& group, const std::string& extra) {
    return dir_.Write(group + ".yaml", R"(
kafka:
  bootstrap_servers: ")" + cluster_->bootstrap_servers() +
                                           R"("
  group_id: )" + group + R"(
  commit_interval: 500ms
  properties:
    session.timeout.ms: "6000"
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

  // The events as JSON-lines files, for `rankwatch replay`.
  std::string ReplayJson(const std::string& config,
                         const std::vector<Event>& events) {
    std::string results, judgments;
    for (const Event& e : events)
      (e.results ? results : judgments) += e.json + "\n";
    auto res = testing::RunCommand(
        {RANKWATCH_BINARY, "replay", "--config", config, "--results",
         dir_.Write("r.jsonl", results), "--judgments",
         dir_.Write("j.jsonl", judgments), "--format", "json"});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    return res.out;
  }

  testing::TempDir dir_;
  std::unique_ptr<kafka::MockCluster> cluster_;
};

constexpr char kAbMetrics[] = R"(
metrics:
  cutoffs: [1, 3]
  measures: [precision, reciprocal_rank, ndcg]
)";

// Per-request variants, one series each: the metrics say which requests a
// daemon finalized, and how often.
constexpr char kTracingMetrics[] = R"(
metrics:
  cutoffs: [1]
  measures: [precision]
aggregation:
  windows: []
  max_variants: 100000
)";

// Waits until `daemons` together have read at least `events` events and
// have no lag, so that nothing is in flight when a sentinel follows: a
// sentinel jumps event time by an hour, which no live stream does, and would
// make an in-flight judgment late.
bool WaitConsumed(std::vector<Daemon*> daemons, double events) {
  return WaitFor(
      [&] {
        double consumed = 0, lag = 0;
        for (Daemon* d : daemons) {
          const Scrape s = d->Metrics();
          consumed += s.Sum("rankwatch_events_consumed_total");
          lag += s.Sum("rankwatch_consumer_lag_messages");
        }
        return consumed >= events && lag == 0;
      },
      30s);
}

// Expects the summed counts and means of `scrapes` to equal replay's, per
// variant and series.
void ExpectSameAsReplay(const std::vector<Scrape>& scrapes,
                        const std::string& replay_json,
                        const std::vector<std::string>& variants) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay_json)).get(doc),
            simdjson::SUCCESS)
      << replay_json;
  const std::vector<std::tuple<std::string, std::string, std::string>> series =
      {{"P_1", "rankwatch_precision", "1"},
       {"P_3", "rankwatch_precision", "3"},
       {"recip_rank_3", "rankwatch_reciprocal_rank", "3"},
       {"recip_rank", "rankwatch_reciprocal_rank", "all"},
       {"ndcg_cut_3", "rankwatch_ndcg", "3"},
       {"ndcg", "rankwatch_ndcg", "all"}};
  for (const std::string& v : variants) {
    for (const auto& [trec, metric, k] : series) {
      SCOPED_TRACE(v + " " + trec);
      double count = 0, sum = 0;
      for (const Scrape& s : scrapes) {
        count += s.Sum(metric + "_count", {{"variant", v}, {"k", k}});
        sum += s.Sum(metric + "_sum", {{"variant", v}, {"k", k}});
      }
      simdjson::dom::element m = doc["variants"][v]["measures"][trec];
      ASSERT_TRUE(m.is_object());
      EXPECT_EQ(count, double(int64_t(m["count"])));
      ASSERT_GT(count, 0);
      EXPECT_NEAR(sum / count, double(m["mean"]), 1e-9);
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

// Per-request finalization counts over several scrapes.
std::map<int, double> FinalizedPerRequest(const std::vector<Scrape>& scrapes,
                                          int requests) {
  std::map<int, double> n;
  for (int i = 0; i < requests; ++i) {
    for (const Scrape& s : scrapes) {
      n[i] += s.Sum("rankwatch_precision_count",
                    {{"variant", "v-" + std::to_string(i)}, {"k", "1"}});
    }
  }
  return n;
}

// Phase one, then a stop (`signal`), then phase two in a new process.
// Returns per-request finalization counts over both processes.
std::map<int, double> RestartScenario(DaemonE2eTest* t,
                                      const std::string& config, int signal,
                                      int* first_exit,
                                      const testing::TempDir& dir,
                                      kafka::MockCluster* cluster) {
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
  Daemon d2(dir, config, "second");
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
  return FinalizedPerRequest({first, second}, 250);
}

TEST_F(DaemonE2eTest, KillNineAndRestartLosesNothing) {
  int exit_status = 0;
  const auto n = RestartScenario(this, WriteConfig("g-kill", kTracingMetrics),
                                 SIGKILL, &exit_status, dir_, cluster_.get());
  EXPECT_EQ(exit_status, 128 + SIGKILL);
  for (const auto& [request, count] : n) {
    EXPECT_GE(count, 1) << "request " << request << " was lost";
  }
}

TEST_F(DaemonE2eTest, GracefulRestartLosesAndDuplicatesNothing) {
  int exit_status = -1;
  const auto n = RestartScenario(this, WriteConfig("g-term", kTracingMetrics),
                                 SIGTERM, &exit_status, dir_, cluster_.get());
  EXPECT_EQ(exit_status, 0);  // Within 10 s (Wait's limit).
  for (const auto& [request, count] : n) {
    EXPECT_EQ(count, 1) << "request " << request;
  }
}

TEST_F(DaemonE2eTest, TwoReplicasSplitThePartitions) {
  const std::string config = WriteConfig("g-two", kAbMetrics);
  Daemon a(dir_, config, "a");
  ASSERT_TRUE(a.WaitReady()) << a.log();
  Daemon b(dir_, config, "b");
  ASSERT_TRUE(b.WaitReady()) << b.log();
  // After the rebalance each replica owns some of the partitions.
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto pa = a.Metrics().LabelValues(
            "rankwatch_consumer_lag_messages", "partition");
        const auto pb = b.Metrics().LabelValues(
            "rankwatch_consumer_lag_messages", "partition");
        return !pa.empty() && !pb.empty() &&
               pa.size() + pb.size() == kPartitions;
      },
      30s))
      << a.log() << b.log() << "\nA lag partitions: "
      << a.Metrics()
             .LabelValues("rankwatch_consumer_lag_messages", "partition")
             .size()
      << " B: "
      << b.Metrics()
             .LabelValues("rankwatch_consumer_lag_messages", "partition")
             .size();
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

TEST_F(DaemonE2eTest, RecoversFromBrokerFailuresAndRequestErrors) {
  Daemon d(dir_, WriteConfig("g-faults", kTracingMetrics), "d");
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

}  // namespace
}  // namespace rankwatch
