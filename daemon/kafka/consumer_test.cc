#include "daemon/kafka/consumer.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/kafka/commit_metadata.h"
#include "daemon/kafka/dead_letter_sink.h"
#include "daemon/kafka/kafka_test_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

std::string ResultsJson(const std::string& id, int64_t t) {
  return "{\"request_id\":\"" + id + "\",\"timestamp\":" + std::to_string(t) +
         ",\"results\":[\"a\",\"b\"]}";
}

std::string ClickJson(const std::string& id, int64_t t) {
  return "{\"request_id\":\"" + id + "\",\"timestamp\":" + std::to_string(t) +
         ",\"doc_id\":\"a\",\"relevance\":1}";
}

// A KafkaIngest feeding a pipeline on its own thread, as the daemon runs it
// (with a dead-letter sink when config.dead_letter.topic is set).
class RunningIngest {
 public:
  RunningIngest(const config::Config& config, const Clock* clock) {
    StatusOr<std::unique_ptr<KafkaIngest>> ingest =
        KafkaIngest::Create(config, clock);
    EXPECT_TRUE(ingest.ok()) << ingest.status().ToString();
    ingest_ = std::move(ingest).value();
    if (!config.dead_letter.topic.empty()) {
      StatusOr<std::unique_ptr<KafkaDeadLetterSink>> sink =
          KafkaDeadLetterSink::Create(config.kafka, config.dead_letter.topic,
                                      config.events.max_event_bytes,
                                      ingest_->mutable_status(), clock);
      EXPECT_TRUE(sink.ok()) << sink.status().ToString();
      dead_letters_ = std::move(sink).value();
    }
    StatusOr<std::unique_ptr<stream::Pipeline>> pipeline =
        stream::Pipeline::Create(config, SystemClock::Get(), ingest_.get(),
                                 dead_letters_.get());
    EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    pipeline_ = std::move(pipeline).value();
    ingest_->Attach(pipeline_.get(), &mu_, dead_letters_.get());
    thread_ = std::thread([this] { run_status_ = ingest_->Run(stop_); });
  }
  ~RunningIngest() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Waits up to 30 s for `done`, evaluated under the mutex.
  bool WaitFor(const std::function<bool()>& done) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (done()) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  int64_t table_entries() const { return pipeline_->table_entries(); }
  int64_t consumed(stream::Topic t) const {
    return pipeline_->counters().consumed[static_cast<size_t>(t)];
  }
  const IngestState& status() const { return ingest_->status(); }
  const Clock* event_clock() const { return ingest_->event_clock(); }
  std::mutex& mu() { return mu_; }
  const Status& run_status() const { return run_status_; }

 private:
  std::mutex mu_;
  std::unique_ptr<KafkaIngest> ingest_;
  // After ingest_ (it updates ingest_'s status), before pipeline_ (which
  // writes to it): destroyed in between.
  std::unique_ptr<KafkaDeadLetterSink> dead_letters_;
  std::unique_ptr<stream::Pipeline> pipeline_;
  std::atomic<bool> stop_{false};
  Status run_status_;
  std::thread thread_;
};

class KafkaIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::StartCluster({{"results", 1}, {"judgments", 1}});
    ASSERT_NE(cluster_, nullptr);
    config_.kafka.bootstrap_servers = cluster_->bootstrap_servers();
    config_.kafka.group_id = "rankwatch-test";
    config_.kafka.commit_interval = std::chrono::milliseconds(200);
    config_.kafka.properties = {{"session.timeout.ms", "6000"}};
    config_.join.window = std::chrono::minutes(10);
    config_.metrics.cutoffs = {1};
  }

  void Produce(const std::string& topic, const std::string& key,
               const std::string& value) {
    if (!producer_) {
      producer_ =
          sim::testutil::MakeProducer(cluster_->bootstrap_servers(), &report_);
    }
    sim::testutil::ProduceOne(producer_.get(), topic, key, value);
    producer_->flush(10'000);
  }

  std::unique_ptr<sim::MockCluster> cluster_;
  config::Config config_;
  sim::testutil::CountingDeliveryReport report_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

// Without durable state (the opt-out): the committed offsets and their
// metadata are what a restart starts from.
TEST_F(KafkaIngestTest, ConsumesBothTopicsCommitsAndReplaysAfterRestart) {
  config_.kafka.durable_state = false;
  const int64_t now = SystemClock::Get()->NowMillis();
  for (int i = 0; i < 3; ++i) {
    const std::string id = "r" + std::to_string(i);
    Produce("results", id, ResultsJson(id, now));
    Produce("judgments", id, ClickJson(id, now));
  }
  Produce("results", "bad", "{not json");

  testing::CommittedOffset first_commit;
  {
    RunningIngest ingest(config_, SystemClock::Get());
    ASSERT_TRUE(ingest.WaitFor([&] {
      return ingest.consumed(stream::Topic::kResults) == 4 &&
             ingest.consumed(stream::Topic::kJudgments) == 3;
    }));
    {
      std::lock_guard<std::mutex> lock(ingest.mu());
      const IngestState& s = ingest.status();
      EXPECT_TRUE(s.ready(SystemClock::Get()->MonotonicMillis()));
      EXPECT_GE(s.rebalances, 1);
      EXPECT_TRUE(s.errors.empty());
    }
    ingest.Stop();
    EXPECT_TRUE(ingest.run_status().ok());
    std::lock_guard<std::mutex> lock(ingest.mu());
    EXPECT_FALSE(ingest.status().ready(SystemClock::Get()->MonotonicMillis()));
    EXPECT_GE(ingest.status().commits_ok, 1);
    EXPECT_EQ(ingest.status().commits_failed, 0);
  }
  // The committed offset is the oldest event still pending (a window of 10
  // minutes keeps every request pending); the stop's final commit says how
  // far the consumer had read (all 4 events) and that it stopped cleanly.
  first_commit = testing::ReadCommitted(cluster_->bootstrap_servers(),
                                        "rankwatch-test", "results", 0);
  ASSERT_GE(first_commit.offset, 0);
  ASSERT_LE(first_commit.offset, 4);
  CommitMetadata md;
  DecodeCommitMetadata(first_commit.metadata, &md);
  EXPECT_EQ(md.end, 4);
  EXPECT_TRUE(md.final);

  // A new owner re-reads from the committed offset. The re-read requests
  // were still pending at the stop (none finalized), so none is skipped:
  // rankwatch_replayed_events_total counts skipped events only (issue 22:
  // it used to count every re-read one).
  const int64_t expected_replays = 0;
  const int64_t expected_reads = 4 - first_commit.offset + 1;
  Produce("results", "r9", ResultsJson("r9", now));
  RunningIngest again(config_, SystemClock::Get());
  ASSERT_TRUE(again.WaitFor([&] {
    return again.consumed(stream::Topic::kResults) == expected_reads;
  }));
  std::lock_guard<std::mutex> lock(again.mu());
  auto it = again.status().replayed_events.find("results");
  EXPECT_EQ(it == again.status().replayed_events.end() ? 0 : it->second,
            expected_replays);
}

// Issue 23: each rejected message's dead letter carries that message's key,
// given with the event. Two malformed results, the first keyed "bad-1", the
// second produced without a key: the letters are keyed "bad-1", then
// carry no key (not "bad-1" left over from the first).
TEST_F(KafkaIngestTest, DeadLettersCarryTheirOwnMessagesKey) {
  ASSERT_TRUE(cluster_->CreateTopic("dead", 1).ok());
  config_.dead_letter.topic = "dead";
  Produce("results", "bad-1", "{not json");
  {
    const std::string value = "{still not json";
    const RdKafka::ErrorCode err = producer_->produce(
        "results", RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(value.data()), value.size(), nullptr, 0, 0, nullptr);
    ASSERT_EQ(err, RdKafka::ERR_NO_ERROR) << RdKafka::err2str(err);
    producer_->flush(10'000);
  }
  RunningIngest ingest(config_, SystemClock::Get());
  ASSERT_TRUE(ingest.WaitFor(
      [&] { return ingest.status().dead_letters_produced == 2; }));
  ingest.Stop();
  const std::vector<sim::testutil::ConsumedMessage> letters =
      sim::testutil::ConsumeAll(cluster_->bootstrap_servers(), "dead", 1, 2,
                                std::chrono::seconds(20));
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_EQ(letters[0].value, "{not json");
  EXPECT_EQ(letters[0].key, "bad-1");
  EXPECT_EQ(letters[1].value, "{still not json");
  EXPECT_EQ(letters[1].key, "");
}

TEST_F(KafkaIngestTest, IntervalsRunOnTheInjectedMonotonicClock) {
  // A clock that never moves: no periodic commit, no statistics refresh;
  // only the shutdown commits.
  FakeClock clock(0);
  config_.kafka.not_ready_after = std::chrono::seconds(2);
  Produce("results", "r0", ResultsJson("r0", SystemClock::Get()->NowMillis()));
  RunningIngest ingest(config_, &clock);
  ASSERT_TRUE(ingest.WaitFor(
      [&] { return ingest.consumed(stream::Topic::kResults) == 1; }));
  {
    std::lock_guard<std::mutex> lock(ingest.mu());
    EXPECT_EQ(ingest.status().commits_ok, 0);
    EXPECT_TRUE(ingest.status().partitions.empty());  // No stats tick.
    EXPECT_TRUE(ingest.status().ready(clock.MonotonicMillis()));
    // The loop polls every 100 ms at most; on the fake clock it has not
    // polled for 10 s once that much time passes without a poll.
    EXPECT_FALSE(
        ingest.status().ready(clock.MonotonicMillis() + IngestState::kStallMs));
    // Fetch progress runs on the same clock: every partition was assigned
    // (and results/0 delivered) at 0, so they are stale just after
    // kafka.not_ready_after (2 s here), their leader UP.
    const IngestState& s = ingest.status();
    EXPECT_EQ(s.not_ready_after_ms, 2000);
    ASSERT_TRUE(s.stalest_fetch.has_value());
    EXPECT_EQ(s.stalest_fetch->progress_mono_ms, 0);
    EXPECT_TRUE(s.stalest_fetch->leader_up);
    EXPECT_EQ(s.ready_reason(2000), ReadyReason::kReady);
    EXPECT_EQ(s.ready_reason(2001), ReadyReason::kFetchStalled);
  }
  ingest.Stop();
  std::lock_guard<std::mutex> lock(ingest.mu());
  // The synchronous commit at shutdown (counted twice: by the synchronous
  // call and by the commit callback that close() serves).
  EXPECT_GE(ingest.status().commits_ok, 1);
  EXPECT_EQ(ingest.status().commits_failed, 0);
}

// The daemon's pipeline reads KafkaIngest::event_clock: the injected wall
// clock as of the consumer's last poll round (the events of a batch share
// the time it was received), read again at the next round only.
TEST_F(KafkaIngestTest, EventClockIsTheWallClockOfTheLastPollRound) {
  FakeClock clock(1'000);
  RunningIngest ingest(config_, &clock);
  EXPECT_EQ(ingest.event_clock()->NowMillis(), 1'000);
  clock.Set(5'000);
  // The loop polls every 100 ms at most.
  EXPECT_TRUE(ingest.WaitFor(
      [&] { return ingest.event_clock()->NowMillis() == 5'000; }));
  ingest.Stop();
  clock.Advance(3'000);  // Wall 8,000, monotonic 3,000: no round reads it.
  EXPECT_EQ(ingest.event_clock()->NowMillis(), 5'000);
  EXPECT_EQ(ingest.event_clock()->MonotonicMillis(), 3'000);
}

// The readiness reasons a running ingest goes through, each recorded once
// when it changes, sampled every 20 ms until `done` or 30 s.
std::vector<ReadyReason> ReasonsUntil(RunningIngest& ingest,
                                      const std::function<bool()>& done) {
  std::vector<ReadyReason> seen;
  (void)ingest.WaitFor([&] {
    const ReadyReason r =
        ingest.status().ready_reason(SystemClock::Get()->MonotonicMillis());
    if (seen.empty() || seen.back() != r) seen.push_back(r);
    return done();
  });
  return seen;
}

// Nothing listens on 127.0.0.1:1: librdkafka's first connection attempt is
// refused at once and it reports every broker down (1/1) within
// milliseconds; readiness names the broker and the cause within the
// metadata requests of the start (a bound of 5 s for a loaded machine),
// where it used to say nothing for 20 s and then "not_assigned".
TEST_F(KafkaIngestTest, UnreachableBootstrapIsBrokerUnreachableAtStart) {
  config_.kafka.bootstrap_servers = "127.0.0.1:1";
  const auto start = std::chrono::steady_clock::now();
  RunningIngest ingest(config_, SystemClock::Get());
  ASSERT_TRUE(ingest.WaitFor([&] {
    return ingest.status().brokers_down.has_value();
  })) << ingest.status().ReadinessMessage(0);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
  {
    std::lock_guard<std::mutex> lock(ingest.mu());
    const IngestState& s = ingest.status();
    const int64_t now = SystemClock::Get()->MonotonicMillis();
    EXPECT_EQ(s.ready_reason(now), ReadyReason::kBrokerUnreachable);
    EXPECT_EQ(s.ReadinessMessage(now),
              "not ready (broker_unreachable): cannot reach any bootstrap "
              "broker (127.0.0.1:1): Connection refused");
    // Counted under librdkafka's names: the refused connection and the
    // one report that every broker is down.
    EXPECT_EQ(s.errors.at("_ALL_BROKERS_DOWN"), 1);
    EXPECT_GE(s.errors.at("_TRANSPORT"), 1);
  }
  // The start-up metadata requests hear the stop (they used to wait 10 s
  // per topic).
  const auto stopping = std::chrono::steady_clock::now();
  ingest.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping,
            std::chrono::seconds(5));
  EXPECT_TRUE(ingest.run_status().ok()) << ingest.run_status().ToString();
  std::lock_guard<std::mutex> lock(ingest.mu());
  // Stopped: not consuming, whatever the broker.
  EXPECT_EQ(ingest.status().ready_reason(SystemClock::Get()->MonotonicMillis()),
            ReadyReason::kNotConsuming);
}

// The only broker of the mock cluster down when the consumer starts, then
// up: broker_unreachable, then joining the group (not_assigned), then
// ready; never unreachable again once a broker answered. A reconnect
// backoff of at most 500 ms notices the broker within a second.
TEST_F(KafkaIngestTest, BrokerDownAtStartThenUpGoesThroughJoiningToReady) {
  // The log, captured: the unreachable broker is a warning, joining the
  // group at start is not (issue 25, item 7: every demo start printed a
  // "not ready (not_assigned)" warning that looked like a failure).
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  sink->set_pattern("%l %v");
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("consumer_test", sink));
  struct Restore {
    std::shared_ptr<spdlog::logger> logger;
    ~Restore() { spdlog::set_default_logger(logger); }
  } restore{previous};
  config_.kafka.properties["reconnect.backoff.max.ms"] = "500";
  ASSERT_TRUE(cluster_->SetBrokerDown(-1).ok());
  RunningIngest ingest(config_, SystemClock::Get());
  const std::vector<ReadyReason> before = ReasonsUntil(
      ingest, [&] { return ingest.status().brokers_down.has_value(); });
  ASSERT_FALSE(before.empty());
  ASSERT_EQ(before.back(), ReadyReason::kBrokerUnreachable);
  {
    std::lock_guard<std::mutex> lock(ingest.mu());
    const std::string message =
        ingest.status().ReadinessMessage(SystemClock::Get()->MonotonicMillis());
    const std::string expected =
        "not ready (broker_unreachable): cannot reach any bootstrap broker (" +
        cluster_->bootstrap_servers() + "): ";
    EXPECT_EQ(message.substr(0, expected.size()), expected) << message;
    EXPECT_GT(message.size(), expected.size()) << "no cause: " << message;
  }
  ASSERT_TRUE(cluster_->SetBrokerUp(-1).ok());
  const std::vector<ReadyReason> after = ReasonsUntil(ingest, [&] {
    return ingest.status().ready(SystemClock::Get()->MonotonicMillis());
  });
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.back(), ReadyReason::kReady);
  // From unreachable to joining: the group's first join takes about 3 s on
  // the mock, sampled every 20 ms.
  EXPECT_NE(std::find(after.begin(), after.end(), ReadyReason::kNotAssigned),
            after.end());
  const auto unreachable =
      std::find(after.begin(), after.end(), ReadyReason::kBrokerUnreachable);
  if (unreachable != after.end()) {
    EXPECT_EQ(unreachable, after.begin()) << "unreachable again later";
  }
  {
    std::lock_guard<std::mutex> lock(ingest.mu());
    EXPECT_FALSE(ingest.status().brokers_down.has_value());
    EXPECT_EQ(ingest.status().errors.at("_ALL_BROKERS_DOWN"), 1);
  }
  ingest.Stop();  // No more log lines: the capture is read below.
  const std::string lines = log.str();
  EXPECT_NE(lines.find("warning kafka consumer: not ready "
                       "(broker_unreachable): cannot reach any bootstrap"),
            std::string::npos)
      << lines;
  // The join (about 3 s) outlasts the 1 s between readiness lines.
  EXPECT_NE(lines.find("info kafka consumer: starting, not ready "
                       "(not_assigned): "),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("warning kafka consumer: not ready (not_assigned)"),
            std::string::npos)
      << lines;
}

// qrels mode reads the judgments table by partition before anything else:
// started while the broker is down, it must wait for the broker (it used
// to load an empty table after the metadata requests timed out, and score
// results without their labels).
TEST_F(KafkaIngestTest, QrelsTableWaitsForAnUnreachableBroker) {
  config_.join.mode = config::JoinMode::kQrels;
  config_.kafka.properties["reconnect.backoff.max.ms"] = "500";
  const int64_t now = SystemClock::Get()->NowMillis();
  Produce("judgments", "q1",
          "{\"query_id\":\"q1\",\"timestamp\":" + std::to_string(now) +
              ",\"doc_id\":\"a\",\"relevance\":2}");
  ASSERT_TRUE(cluster_->SetBrokerDown(-1).ok());
  RunningIngest ingest(config_, SystemClock::Get());
  ASSERT_TRUE(
      ingest.WaitFor([&] { return ingest.status().brokers_down.has_value(); }));
  // Longer than the start-up metadata requests' 10 s.
  std::this_thread::sleep_for(std::chrono::seconds(11));
  {
    std::lock_guard<std::mutex> lock(ingest.mu());
    EXPECT_EQ(
        ingest.status().ready_reason(SystemClock::Get()->MonotonicMillis()),
        ReadyReason::kBrokerUnreachable);
    EXPECT_FALSE(ingest.status().consuming);
  }
  ASSERT_TRUE(cluster_->SetBrokerUp(-1).ok());
  // The one (query, doc) label produced before.
  EXPECT_TRUE(ingest.WaitFor([&] { return ingest.table_entries() == 1; }));
  EXPECT_TRUE(ingest.WaitFor([&] {
    return ingest.status().ready(SystemClock::Get()->MonotonicMillis());
  }));
}

TEST_F(KafkaIngestTest, BadPropertyFailsCreate) {
  config_.kafka.properties["fetch.wait.max.ms"] = "later";
  EXPECT_FALSE(KafkaIngest::Create(config_).ok());
}

}  // namespace
}  // namespace rankwatch::kafka
