#include "daemon/sim/synthetic_producer.h"

#include <simdjson.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "daemon/sim/kafka_test_util.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::sim {
namespace {

using std::chrono::seconds;

constexpr int kPartitions = 4;

struct Fixture {
  std::unique_ptr<MockCluster> cluster;

  Fixture() {
    StatusOr<std::unique_ptr<MockCluster>> started = MockCluster::Start(1);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return;
    cluster = std::move(started).value();
    EXPECT_TRUE(cluster->CreateTopic("results", kPartitions).ok());
    EXPECT_TRUE(cluster->CreateTopic("judgments", kPartitions).ok());
  }
};

int64_t TimestampOf(const std::string& json) {
  simdjson::dom::parser parser;
  return parser.parse(json)["timestamp"].get_int64().value();
}

// Checks what landed in the topics against the run's counts: every event
// keyed by its request id, stamped with its event time, and a request's
// judgments in the partition number of its results.
void CheckTopics(const MockCluster& cluster, const ProduceStats& stats) {
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      cluster.bootstrap_servers(), "results", kPartitions,
      static_cast<size_t>(stats.results_events), seconds(10));
  const std::vector<testutil::ConsumedMessage> judgments = testutil::ConsumeAll(
      cluster.bootstrap_servers(), "judgments", kPartitions,
      static_cast<size_t>(stats.judgment_events), seconds(10));
  ASSERT_EQ(static_cast<int64_t>(results.size()), stats.results_events);
  ASSERT_EQ(static_cast<int64_t>(judgments.size()), stats.judgment_events);
  std::map<std::string, int32_t> partition_of;
  for (const testutil::ConsumedMessage& m : results) {
    EXPECT_NE(m.value.find("\"request_id\":\"" + m.key + "\""),
              std::string::npos);
    EXPECT_EQ(m.timestamp_ms, TimestampOf(m.value));
    EXPECT_TRUE(partition_of.emplace(m.key, m.partition).second);
  }
  for (const testutil::ConsumedMessage& m : judgments) {
    EXPECT_EQ(m.timestamp_ms, TimestampOf(m.value));
    ASSERT_TRUE(partition_of.count(m.key) > 0) << m.key;
    EXPECT_EQ(partition_of[m.key], m.partition);
  }
}

int64_t NowMs() { return SystemClock::Get()->NowMillis(); }

// Records, through ProduceOptions::on_produce, every event handed to
// librdkafka with the wall clock at that moment.
class StampLog {
 public:
  struct Stamp {
    std::string topic;
    int64_t event_ms;
    int64_t wall_ms;
  };

  void Attach(ProduceOptions* options) {
    options->on_produce = [this](const std::string& topic, int64_t ms,
                                 std::string_view /*payload*/) {
      stamps_.push_back({topic, ms, NowMs()});
    };
  }

  // Every event, results and judgments, was stamped at or before the wall
  // clock of the moment it was produced.
  void ExpectNoneAheadOfTheClock(const ProduceStats& stats) const {
    EXPECT_EQ(static_cast<int64_t>(stamps_.size()), stats.events());
    int64_t ahead = 0;
    for (const Stamp& s : stamps_) {
      if (s.event_ms > s.wall_ms) {
        if (++ahead <= 5) {
          ADD_FAILURE() << s.topic << " event at " << s.event_ms << " is "
                        << s.event_ms - s.wall_ms
                        << " ms ahead of the clock when produced";
        }
      }
    }
    EXPECT_EQ(ahead, 0);
  }

  int64_t count(const std::string& topic) const {
    return std::count_if(stamps_.begin(), stamps_.end(),
                         [&](const Stamp& s) { return s.topic == topic; });
  }
  int64_t max_event_ms() const {
    int64_t max = INT64_MIN;
    for (const Stamp& s : stamps_) max = std::max(max, s.event_ms);
    return max;
  }

 private:
  std::vector<Stamp> stamps_;
};

TEST(SyntheticProducerTest, FastModeSimulatesTheClock) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create({});
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.fast = true;
  options.rate = 1000;
  options.start_ms = 1'700'000'000'000;
  options.duration_ms = 3000;  // Of event time: 3000 requests.
  int progress_calls = 0;
  options.progress_interval_ms = 0;
  options.progress = [&](const ProduceStats&) { ++progress_calls; };
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->requests, 3000);
  EXPECT_EQ(stats->results_events, 3000);
  EXPECT_NEAR(static_cast<double>(stats->judgment_events) / 3000, 3.0, 0.2);
  EXPECT_EQ(stats->delivered, stats->events());
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  EXPECT_EQ(stats->first_event_ms, options.start_ms);
  EXPECT_EQ(stats->last_event_ms, options.start_ms + 2999);
  EXPECT_GT(progress_calls, 0);
  CheckTopics(*f.cluster, *stats);
}

// Without a start, a fast run is placed in the past: its span (4,999
// requests at 1e6/s: 4.999 ms, rounded up to 5) plus max_delay_ms (10 min
// by default) before the start of the run, so nothing has to wait.
TEST(SyntheticProducerTest, FastModeStartsFarEnoughInThePast) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create({});
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.fast = true;
  options.rate = 1e6;
  options.max_requests = 5000;
  StampLog log;
  log.Attach(&options);
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const int64_t before_ms = NowMs();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  const int64_t after_ms = NowMs();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->requests, 5000);
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  EXPECT_EQ(stats->dropped_judgments, 0);
  EXPECT_EQ(log.count("results"), 5000);
  EXPECT_EQ(log.count("judgments"), stats->judgment_events);
  EXPECT_GT(stats->judgment_events, 10000);
  log.ExpectNoneAheadOfTheClock(*stats);
  constexpr int64_t kBackMs = 5 + 10 * 60 * 1000;
  EXPECT_GE(stats->first_event_ms, before_ms - kBackMs);
  EXPECT_LE(stats->first_event_ms, after_ms - kBackMs);
  // Request 4999 is served 4999 * 0.001 = 4.999 ms, truncated to 4, after
  // the first.
  EXPECT_EQ(stats->last_event_ms - stats->first_event_ms, 4);
  // The latest judgment is at most max_delay_ms after its request.
  EXPECT_LE(log.max_event_ms(), stats->last_event_ms + 10 * 60 * 1000);
  CheckTopics(*f.cluster, *stats);
}

// An explicit start 500 ms ago at 1000 requests/s for 1500 requests: the
// simulated clock would run 1 s ahead of the wall clock, and judgments up
// to 300 ms beyond; the run waits for the clock instead.
TEST(SyntheticProducerTest, FastModeWaitsForTheClock) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  SyntheticConfig config;
  config.click_delay_mean_ms = 50;
  config.purchase_delay_mean_ms = 100;
  config.max_delay_ms = 300;
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create(config);
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.fast = true;
  options.rate = 1000;
  options.max_requests = 1500;
  options.start_ms = NowMs() - 500;
  StampLog log;
  log.Attach(&options);
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->requests, 1500);
  EXPECT_EQ(stats->first_event_ms, options.start_ms);
  EXPECT_EQ(stats->last_event_ms, options.start_ms + 1499);
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  // Every judgment waited for its time; none was dropped.
  EXPECT_EQ(stats->dropped_judgments, 0);
  EXPECT_EQ(log.count("judgments"), stats->judgment_events);
  log.ExpectNoneAheadOfTheClock(*stats);
  // The last request alone is due 999 ms after the run started.
  EXPECT_GE(stats->elapsed_seconds, 0.9);
  CheckTopics(*f.cluster, *stats);
}

// No limit: the start is max_delay_ms (200 ms) back, and once the simulated
// clock has caught up the run follows the wall clock at `rate`.
TEST(SyntheticProducerTest, UnboundedFastRunFollowsTheClock) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  SyntheticConfig config;
  config.click_delay_mean_ms = 50;
  config.purchase_delay_mean_ms = 100;
  config.max_delay_ms = 200;
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create(config);
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.fast = true;
  options.rate = 5000;
  std::atomic<bool> stop{false};
  options.progress_interval_ms = 700;
  options.progress = [&](const ProduceStats&) { stop = true; };
  StampLog log;
  log.Attach(&options);
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const int64_t before_ms = NowMs();
  StatusOr<ProduceStats> stats = (*producer)->Run(&stop);
  const int64_t after_ms = NowMs();
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  log.ExpectNoneAheadOfTheClock(*stats);
  EXPECT_GE(stats->first_event_ms, before_ms - 200);
  EXPECT_LE(stats->first_event_ms, after_ms - 200);
  // Request i is served at start + floor(i / 5) ms, only once the clock is
  // there: floor(i / 5) <= after_ms - start <= after_ms - before_ms + 200,
  // so i < (after_ms - before_ms + 201) * 5.
  EXPECT_LE(stats->requests, (after_ms - before_ms + 201) * 5);
  EXPECT_LE(stats->last_event_ms, after_ms);
  // Judgments not yet due at the stop were dropped, not sent early.
  EXPECT_LE(log.max_event_ms(), after_ms);
}

TEST(SyntheticProducerTest, RealtimeModeHoldsJudgmentsUntilDue) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  SyntheticConfig config;
  config.click_delay_mean_ms = 100;
  config.purchase_delay_mean_ms = 200;
  config.max_delay_ms = 400;
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create(config);
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.rate = 200;
  options.duration_ms = 1000;
  int64_t max_queued = 0;
  options.progress_interval_ms = 0;
  options.progress = [&](const ProduceStats& s) {
    max_queued = std::max(max_queued, s.queued_judgments);
  };
  // Told once when the requests stop with judgments still to come.
  int drains = 0;
  int64_t drain_queued = 0, drain_last_due_ms = 0;
  options.on_draining = [&](int64_t queued, int64_t last_due_ms) {
    ++drains;
    drain_queued = queued;
    drain_last_due_ms = last_due_ms;
  };
  StampLog log;
  log.Attach(&options);
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const int64_t before_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  StatusOr<ProduceStats> stats = (*producer)->Run(nullptr);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(drains, 1);
  EXPECT_GT(drain_queued, 0);
  // The last judgment is due at most max_delay_ms (400) after the last
  // request, and it is the last event sent.
  EXPECT_LE(drain_last_due_ms, stats->last_event_ms + 400);
  EXPECT_EQ(drain_last_due_ms, log.max_event_ms());
  EXPECT_NEAR(static_cast<double>(stats->requests), 200, 10);
  EXPECT_GE(stats->elapsed_seconds, 1.0);
  EXPECT_LT(stats->elapsed_seconds, 3.0);
  EXPECT_GT(max_queued, 0);  // Judgments waited for their time.
  EXPECT_TRUE(stats->ok()) << stats->last_error;
  EXPECT_GE(stats->first_event_ms, before_ms);
  // After the last request the run waited for its judgments (up to 400 ms
  // later) rather than sending them early.
  EXPECT_EQ(stats->dropped_judgments, 0);
  log.ExpectNoneAheadOfTheClock(*stats);
  EXPECT_GE(log.max_event_ms(), stats->last_event_ms);
  CheckTopics(*f.cluster, *stats);
}

TEST(SyntheticProducerTest, StopFlagEndsARunWithoutLimits) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create({});
  ASSERT_TRUE(traffic.ok());
  ProduceOptions options;
  options.bootstrap_servers = f.cluster->bootstrap_servers();
  options.rate = 100;
  std::atomic<bool> stop{false};
  options.progress_interval_ms = 300;
  options.progress = [&](const ProduceStats&) { stop = true; };
  StampLog log;
  log.Attach(&options);
  StatusOr<std::unique_ptr<SyntheticProducer>> producer =
      SyntheticProducer::Create(options, std::move(traffic).value());
  ASSERT_TRUE(producer.ok());
  StatusOr<ProduceStats> stats = (*producer)->Run(&stop);
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->requests, 10);
  EXPECT_LT(stats->requests, 100);
  EXPECT_TRUE(stats->ok());
  // Judgments of the last few seconds were not due yet: dropped, not sent
  // ahead of their time. (Clicks come about 3 s after their request.)
  EXPECT_GT(stats->dropped_judgments, 0);
  log.ExpectNoneAheadOfTheClock(*stats);
}

TEST(SyntheticProducerTest, RejectsBadOptions) {
  auto create = [](ProduceOptions options) {
    return SyntheticProducer::Create(std::move(options),
                                     *SyntheticTraffic::Create({}))
        .status();
  };
  ProduceOptions options;
  EXPECT_EQ(create(options).code(),
            StatusCode::kInvalidArgument);  // No
                                            // bootstrap.
  options.bootstrap_servers = "127.0.0.1:1";
  options.rate = 0;
  EXPECT_EQ(create(options).code(), StatusCode::kInvalidArgument);
  options.rate = 10;
  options.properties["no.such.property"] = "1";
  const Status bad_property = create(options);
  EXPECT_EQ(bad_property.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_property.message().find("no.such.property"), std::string::npos);
}

}  // namespace
}  // namespace rankwatch::sim
