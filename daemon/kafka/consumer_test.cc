#include "daemon/kafka/consumer.h"

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "daemon/kafka/commit_metadata.h"
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

// A KafkaIngest feeding a pipeline on its own thread, as the daemon runs it.
class RunningIngest {
 public:
  RunningIngest(const config::Config& config, const Clock* clock) {
    StatusOr<std::unique_ptr<KafkaIngest>> ingest =
        KafkaIngest::Create(config, clock);
    EXPECT_TRUE(ingest.ok()) << ingest.status().ToString();
    ingest_ = std::move(ingest).value();
    StatusOr<std::unique_ptr<stream::Pipeline>> pipeline =
        stream::Pipeline::Create(config, SystemClock::Get(), ingest_.get());
    EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    pipeline_ = std::move(pipeline).value();
    ingest_->Attach(pipeline_.get(), &mu_, nullptr);
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
  int64_t consumed(stream::Topic t) const {
    return pipeline_->counters().consumed[static_cast<size_t>(t)];
  }
  const KafkaStatus& status() const { return ingest_->status(); }
  std::mutex& mu() { return mu_; }
  const Status& run_status() const { return run_status_; }

 private:
  std::mutex mu_;
  std::unique_ptr<KafkaIngest> ingest_;
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

TEST_F(KafkaIngestTest, ConsumesBothTopicsCommitsAndReplaysAfterRestart) {
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
      const KafkaStatus& s = ingest.status();
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
        ingest.status().ready(clock.MonotonicMillis() + KafkaStatus::kStallMs));
    // Fetch progress runs on the same clock: every partition was assigned
    // (and results/0 delivered) at 0, so they are stale just after
    // kafka.not_ready_after (2 s here), their leader UP.
    const KafkaStatus& s = ingest.status();
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

TEST_F(KafkaIngestTest, BadPropertyFailsCreate) {
  config_.kafka.properties["fetch.wait.max.ms"] = "later";
  EXPECT_FALSE(KafkaIngest::Create(config_).ok());
}

}  // namespace
}  // namespace rankwatch::kafka
