#include "daemon/stream/pipeline/pipeline.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

std::string ResultsJson(const std::string& id, int64_t t,
                        const std::string& timestamp = "") {
  return "{\"request_id\":\"" + id + "\",\"timestamp\":" +
         (timestamp.empty() ? std::to_string(t) : timestamp) +
         ",\"results\":[\"a\",\"b\"]}";
}

std::string ClickJson(const std::string& id, int64_t t) {
  return "{\"request_id\":\"" + id + "\",\"timestamp\":" + std::to_string(t) +
         ",\"doc_id\":\"a\",\"relevance\":1}";
}

class PipelineTest : public ::testing::Test {
 protected:
  PipelineTest() {
    config_.join.window = std::chrono::seconds(10);
    config_.join.allowed_lateness = std::chrono::seconds(1);
    config_.metrics.cutoffs = {1};
  }
  Pipeline& pipeline() {
    if (!pipeline_) {
      auto p = Pipeline::Create(config_, &clock_);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      pipeline_ = std::move(p).value();
    }
    return *pipeline_;
  }
  int64_t Rejected(Topic topic, RejectReason reason) {
    return pipeline().counters().rejected[static_cast<size_t>(topic)]
                                         [static_cast<size_t>(reason)];
  }
  // P@1 summed over every group.
  double PrecisionSum() {
    const Aggregator& agg = pipeline().aggregator();
    double sum = 0;
    for (size_t g = 0; g < agg.num_groups(); ++g) {
      for (size_t s = 0; s < agg.series().size(); ++s) {
        if (agg.series()[s].trec_name != "P_1") continue;
        const auto& st = agg.group(g).all[s];
        if (st.count() > 0) sum += st.mean() * static_cast<double>(st.count());
      }
    }
    return sum;
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
};

// Issue 9: one event stamped 9999-12-31 used to move the watermark to year
// 9999, after which every event was late (500 of 500).
TEST_F(PipelineTest, FarFutureEventIsRejectedAndMovesNothing) {
  EXPECT_FALSE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("poison", 0, "\"9999-12-31T23:59:59Z\""),
      EventOrigin{0, 0}));
  EXPECT_FALSE(pipeline().OnPayload(Topic::kResults,
                                    ResultsJson("poison2", 9223372036854775807),
                                    EventOrigin{0, 1}));
  EXPECT_EQ(Rejected(Topic::kResults, RejectReason::kFutureTimestamp), 2);
  EXPECT_EQ(pipeline().watermark_ms(), INT64_MIN);
  for (int i = 0; i < 500; ++i) {
    const std::string id = "r" + std::to_string(i);
    const int64_t t = kNow - 600'000 + i * 100;
    (void)pipeline().OnPayload(Topic::kResults, ResultsJson(id, t),
                               EventOrigin{0, 2 + 2 * i});
    (void)pipeline().OnPayload(Topic::kJudgments, ClickJson(id, t + 50),
                               EventOrigin{0, 3 + 2 * i});
  }
  pipeline().FinishAll();
  EXPECT_EQ(pipeline().join_counters().late_results, 0);
  EXPECT_EQ(pipeline().join_counters().late_judgments, 0);
  EXPECT_EQ(pipeline().join_counters().finalized, 500);
  EXPECT_DOUBLE_EQ(PrecisionSum(), 500.0);  // Every list's "a" was clicked.
}

// Copies what it is given: one letter per rejected event.
class RecordingDeadLetterSink : public DeadLetterSink {
 public:
  struct Letter {
    Topic topic;
    RejectReason reason;
    std::string payload;
    std::string key;
    int64_t offset;
  };
  void Write(Topic topic, RejectReason reason, std::string_view /*detail*/,
             RawEvent event, EventOrigin origin) override {
    letters.push_back({topic, reason, std::string(event.payload),
                       std::string(event.key), origin.offset});
  }
  std::vector<Letter> letters;
};

// Issue 23: the Kafka key used to reach the dead letter through a "current
// key" set on the sink before each event, which a caller that set none (a
// keyless event) left pointing at the previous event's key. Now the key
// travels with its event: a keyed rejected event, a keyless one (the
// overload without a key), a valid keyed one (no letter) and a keyed
// rejected judgment give three letters keyed "k1", "" and "k4".
// The reject log's rate limit says how many lines it left out: before
// the next line it lets through, and when asked (the end of a replay).
TEST_F(PipelineTest, RejectLogSaysHowManyLinesItSuppressed) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  sink->set_pattern("%v");
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("pipeline_test", sink));
  struct Restore {
    std::shared_ptr<spdlog::logger> logger;
    ~Restore() { spdlog::set_default_logger(logger); }
  } restore{previous};
  config_.logging.max_rejects_logged_per_second = 2;
  for (int i = 0; i < 5; ++i) {
    (void)pipeline().OnPayload(Topic::kResults, "{bad", EventOrigin{0, i});
  }
  pipeline().LogSuppressedRejections();  // 5 - 2 logged: 3.
  clock_.Advance(1001);
  for (int i = 5; i < 9; ++i) {
    (void)pipeline().OnPayload(Topic::kResults, "{bad", EventOrigin{0, i});
  }
  clock_.Advance(1001);
  (void)pipeline().OnPayload(Topic::kResults, "{bad", EventOrigin{0, 9});
  pipeline().LogSuppressedRejections();  // Nothing new: no line.
  std::vector<std::string> summaries;
  std::istringstream lines(log.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("more rejected events") != std::string::npos) {
      summaries.push_back(line);
    }
  }
  const std::string limit =
      " more rejected events not logged "
      "(logging.max_rejects_logged_per_second 2; each is counted by reason)";
  // 3 at the first ask; of 5..8, two logged and two left out, said before
  // event 9's line.
  EXPECT_EQ(summaries, (std::vector<std::string>{"3" + limit, "2" + limit}))
      << log.str();
  EXPECT_EQ(Rejected(Topic::kResults, RejectReason::kMalformedJson), 10);
}

TEST_F(PipelineTest, DeadLetterGetsTheKeyOfItsOwnEvent) {
  RecordingDeadLetterSink sink;
  auto p = Pipeline::Create(config_, &clock_, nullptr, &sink);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Pipeline& pipeline = **p;
  EXPECT_FALSE(pipeline.OnPayload(Topic::kResults, RawEvent{"{bad", "k1"},
                                  EventOrigin{0, 1}));
  EXPECT_FALSE(
      pipeline.OnPayload(Topic::kResults, "{also bad", EventOrigin{0, 2}));
  EXPECT_TRUE(pipeline.OnPayload(Topic::kResults,
                                 RawEvent{ResultsJson("r3", kNow), "k3"},
                                 EventOrigin{0, 3}));
  EXPECT_FALSE(pipeline.OnPayload(Topic::kJudgments, RawEvent{"[]", "k4"},
                                  EventOrigin{1, 4}));
  ASSERT_EQ(sink.letters.size(), 3u);
  EXPECT_EQ(sink.letters[0].payload, "{bad");
  EXPECT_EQ(sink.letters[0].key, "k1");
  EXPECT_EQ(sink.letters[0].offset, 1);
  EXPECT_EQ(sink.letters[1].payload, "{also bad");
  EXPECT_EQ(sink.letters[1].key, "");
  EXPECT_EQ(sink.letters[1].offset, 2);
  EXPECT_EQ(sink.letters[2].topic, Topic::kJudgments);
  EXPECT_EQ(sink.letters[2].reason, RejectReason::kMalformedJson);
  EXPECT_EQ(sink.letters[2].payload, "[]");
  EXPECT_EQ(sink.letters[2].key, "k4");
  EXPECT_EQ(sink.letters[2].offset, 4);
}

TEST_F(PipelineTest, EventJustWithinTheFutureSkewCounts) {
  // max_future_skew defaults to 5 minutes.
  EXPECT_TRUE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("r1", kNow + 300'000), EventOrigin{0, 0}));
  EXPECT_FALSE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("r2", kNow + 300'001), EventOrigin{0, 1}));
  EXPECT_EQ(Rejected(Topic::kResults, RejectReason::kFutureTimestamp), 1);
  // Counted, but event time stops at the wall clock (minus the lateness,
  // 1 s): an event from a clock minutes fast does not carry the windows.
  EXPECT_EQ(pipeline().watermark_ms(), kNow - 1000);
}

// Issue 22's measurement, in process: 8 partitions per topic; one results
// event stamped 4 minutes ahead (inside max_future_skew, 5 minutes), then
// a 15 s lull with every partition caught up (longer than idle_timeout,
// 1 s here), then a burst stamped with the true time. The watermark used to
// jump to the outlier after the lull and drop the whole burst as late
// (replay counted 8,005 lists, the daemon 6,002).
TEST_F(PipelineTest, AnOutlierAtTheSkewBoundThenALullDropsNothing) {
  config_.join.idle_timeout = std::chrono::seconds(1);
  constexpr int kPartitions = 8;
  for (int p = 0; p < kPartitions; ++p) {
    pipeline().AddSource(EventOrigin::SourceOf(0, p));
    pipeline().AddSource(EventOrigin::SourceOf(1, p));
  }
  int64_t offset = 0;
  // A request on partition i % 8 of each topic, clicked 50 ms later.
  const auto request = [&](int i, int64_t t) {
    const std::string id = "r" + std::to_string(i);
    const int p = i % kPartitions;
    (void)pipeline().OnPayload(
        Topic::kResults, ResultsJson(id, t),
        EventOrigin{EventOrigin::SourceOf(0, p), offset++});
    (void)pipeline().OnPayload(
        Topic::kJudgments, ClickJson(id, t + 50),
        EventOrigin{EventOrigin::SourceOf(1, p), offset++});
  };
  for (int i = 0; i < 200; ++i) {
    clock_.Advance(50);
    request(i, clock_.NowMillis());
  }
  // The outlier: 4 minutes ahead of the wall clock, on partition 3.
  EXPECT_TRUE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("outlier", clock_.NowMillis() + 240'000),
      EventOrigin{EventOrigin::SourceOf(0, 3), offset++}));
  for (int p = 0; p < kPartitions; ++p) {
    pipeline().SetSourceIdle(EventOrigin::SourceOf(0, p), true);
    pipeline().SetSourceIdle(EventOrigin::SourceOf(1, p), true);
  }
  for (int tick = 0; tick < 150; ++tick) {  // 15 s of lull, 100 ms ticks.
    clock_.Advance(100);
    pipeline().AdvanceWallClock();
  }
  for (int i = 200; i < 400; ++i) {
    clock_.Advance(50);
    request(i, clock_.NowMillis());
  }
  pipeline().FinishAll();
  EXPECT_EQ(pipeline().join_counters().late_results, 0);
  EXPECT_EQ(pipeline().join_counters().late_judgments, 0);
  EXPECT_EQ(pipeline().join_counters().finalized, 401);  // 400 + outlier.
  EXPECT_DOUBLE_EQ(PrecisionSum(), 400.0);  // The outlier has no click.
}

// Issue 22: users backfill week-old history into Kafka, and the producer
// pauses for two minutes (longer than idle_timeout) halfway. The events
// after the pause continue where it stopped: none is late because the wall
// clock moved on meanwhile (it used to carry event time 2 minutes ahead,
// past the next events' windows).
TEST_F(PipelineTest, BackfillAfterAPauseIsNotLate) {
  config_.join.idle_timeout = std::chrono::seconds(10);
  const int64_t week_ago = kNow - 7 * 86'400'000LL;
  int64_t offset = 0;
  const auto request = [&](int i) {
    const std::string id = "b" + std::to_string(i);
    const int64_t t = week_ago + i * 50;
    (void)pipeline().OnPayload(Topic::kResults, ResultsJson(id, t),
                               EventOrigin{0, offset++});
    (void)pipeline().OnPayload(Topic::kJudgments, ClickJson(id, t + 20),
                               EventOrigin{0, offset++});
  };
  for (int i = 0; i < 300; ++i) request(i);
  for (int tick = 0; tick < 120; ++tick) {  // The pause: 2 minutes.
    clock_.Advance(1000);
    pipeline().AdvanceWallClock();
  }
  // The lull closed the windows of the first half (300 lists finalized).
  EXPECT_EQ(pipeline().join_counters().finalized, 300);
  for (int i = 300; i < 600; ++i) request(i);
  pipeline().FinishAll();
  EXPECT_EQ(pipeline().join_counters().late_results, 0);
  EXPECT_EQ(pipeline().join_counters().late_judgments, 0);
  EXPECT_EQ(pipeline().join_counters().finalized, 600);
  EXPECT_DOUBLE_EQ(PrecisionSum(), 600.0);
}

TEST_F(PipelineTest, PoisonedCommittedWatermarkIsIgnored) {
  // An older version saved a watermark in year 9999: ignored.
  EXPECT_FALSE(pipeline().RestoreWatermark(0, 253402300799000));
  EXPECT_EQ(pipeline().commit_watermark_ms(0), INT64_MIN);
  // A sane one is kept for recognizing replays, and committed again.
  EXPECT_TRUE(pipeline().RestoreWatermark(0, kNow - 60'000));
  EXPECT_EQ(pipeline().commit_watermark_ms(0), kNow - 60'000);
  EXPECT_EQ(pipeline().commit_watermark_ms(1), INT64_MIN);  // Not restored.
  EXPECT_EQ(pipeline().watermark_ms(), INT64_MIN);  // Closes nothing here.
  // A re-read list served 2 minutes ago was finalized by the previous
  // owner: skipped. A new one of the same age is not (nobody scored it).
  EXPECT_FALSE(pipeline().OnPayload(Topic::kResults,
                                    ResultsJson("old", kNow - 120'000),
                                    EventOrigin{0, 0, /*replayed=*/true}));
  EXPECT_EQ(pipeline().join_counters().replayed, 1);
  EXPECT_TRUE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("new", kNow - 120'000), EventOrigin{0, 1}));
}

TEST_F(PipelineTest, MonitorsLookOncePerInterval) {
  config_.experiments = {{"x", "A", {"B"}}};
  config_.interleaving = {{"i", "A-vs-B", {"A", "B"}}};
  // A decided interleaved impression, so that the sequential test counts
  // its looks: B contributed the clicked doc "a".
  ASSERT_TRUE(pipeline().OnPayload(
      Topic::kResults,
      "{\"request_id\":\"r\",\"variant\":\"A-vs-B\",\"timestamp\":" +
          std::to_string(kNow) +
          ",\"results\":[{\"doc_id\":\"a\",\"team\":\"B\"}]}",
      EventOrigin{0, 0}));
  ASSERT_TRUE(pipeline().OnPayload(Topic::kJudgments, ClickJson("r", kNow + 1),
                                   EventOrigin{0, 1}));
  const auto looks = [&] {
    return pipeline().interleaving().experiments()[0].sequential.looks();
  };
  pipeline().AdvanceWallClock();  // A look, before anything is finalized.
  EXPECT_EQ(pipeline().experiments().looks(), 1);
  clock_.Advance(Pipeline::kExperimentLookIntervalMs + 60'000);
  pipeline().AdvanceWallClock();  // Idle: closes the window, then looks.
  EXPECT_EQ(pipeline().experiments().looks(), 2);
  EXPECT_EQ(looks(), 1);
  pipeline().AdvanceWallClock();  // Within the interval: no look.
  EXPECT_EQ(pipeline().experiments().looks(), 2);
  clock_.Advance(Pipeline::kExperimentLookIntervalMs - 1);
  pipeline().AdvanceWallClock();
  EXPECT_EQ(looks(), 1);
  clock_.Advance(1);
  pipeline().AdvanceWallClock();
  EXPECT_EQ(pipeline().experiments().looks(), 3);
  EXPECT_EQ(looks(), 2);
}

// Issue 43: 25 experiments of two variants at max_variants 20 left 15 of
// them with no lists. The loader now refuses more named variants than the
// limit; the pipeline keeps the named ones whatever comes first: here two
// unnamed variants arrive before the experiment's, at max_variants 3, and
// only one of them gets the slot left.
TEST_F(PipelineTest, VariantsExperimentsNameAreKeptWhateverComesFirst) {
  config_.aggregation.max_variants = 3;
  config_.experiments = {{"x", "A", {"B"}}};
  int64_t offset = 0;
  for (const char* variant : {"X", "Y", "A", "B"}) {
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        std::string("{\"request_id\":\"r-") + variant + "\",\"variant\":\"" +
            variant + "\",\"timestamp\":" + std::to_string(kNow) +
            ",\"results\":[\"a\"]}",
        EventOrigin{0, offset++}));
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kJudgments, ClickJson(std::string("r-") + variant, kNow + 1),
        EventOrigin{0, offset++}));
  }
  pipeline().FinishAll();
  const Aggregator& agg = pipeline().aggregator();
  std::vector<std::string> variants;
  for (size_t g = 0; g < agg.num_groups(); ++g) {
    if (agg.group(g).requests > 0) variants.push_back(agg.group(g).variant);
  }
  std::sort(variants.begin(), variants.end());
  EXPECT_EQ(variants, (std::vector<std::string>{"A", "B", "X", "other"}));
  EXPECT_EQ(agg.overflowed()[0], 1);  // Y.
  // The experiment's arms each have their list.
  for (const auto& c : pipeline().experiments().comparisons()) {
    if (c.window != -1) continue;  // Window "all".
    EXPECT_EQ(c.baseline_arm.count, 1) << c.series;
    EXPECT_EQ(c.treatment_arm.count, 1) << c.series;
  }
}

// Reconfigure (a configuration reload, docs/configuration.md "Reloading").
class PipelineReconfigureTest : public PipelineTest {
 protected:
  PipelineReconfigureTest() {
    config_.metrics.measures = {metrics::Measure::kPrecision};
    config_.metrics.cutoffs = {1};
  }
  // A list [a, b] served at `t`, judged by a click on `doc` (grade 1).
  void Serve(const std::string& id, int64_t t, const std::string& doc,
             const std::string& variant = "A") {
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
            "\",\"timestamp\":" + std::to_string(t) +
            ",\"results\":[\"a\",\"b\"]}",
        EventOrigin{0, offset_++}));
    Click(id, t + 10, doc);
  }
  void Click(const std::string& id, int64_t t, const std::string& doc) {
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kJudgments,
        "{\"request_id\":\"" + id + "\",\"timestamp\":" + std::to_string(t) +
            ",\"doc_id\":\"" + doc + "\",\"relevance\":1}",
        EventOrigin{0, offset_++}));
  }
  // Moves event time on by 20 s (past the 10 s join window plus 1 s of
  // lateness) with a list of variant "Z", which closes the earlier ones.
  void CloseWindows(int64_t t) {
    const int64_t offset = offset_++;
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        "{\"request_id\":\"tick" + std::to_string(offset) +
            "\",\"variant\":\"Z\",\"timestamp\":" + std::to_string(t) +
            ",\"results\":[\"a\"]}",
        EventOrigin{0, offset}));
  }
  size_t SeriesIndex(const std::string& trec_name) {
    const std::vector<SeriesSpec>& s = pipeline().aggregator().series();
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].trec_name == trec_name) return i;
    }
    ADD_FAILURE() << "no series " << trec_name;
    return 0;
  }
  // Group 0 is variant A (served first).
  const GroupStats& A() { return pipeline().aggregator().group(0); }

  int64_t offset_ = 0;
};

TEST_F(PipelineReconfigureTest, KeepsStatsOfSeriesStillComputed) {
  Serve("r0", kNow - 60'000, "a");  // P@1 = 1
  Serve("r1", kNow - 59'000, "a");  // P@1 = 1
  Serve("r2", kNow - 58'000, "b");  // P@1 = 0 (a, ranked 1st, unclicked)
  // r3 is pending across the reload: served before, clicked after.
  ASSERT_TRUE(pipeline().OnPayload(
      Topic::kResults,
      "{\"request_id\":\"r3\",\"variant\":\"A\",\"timestamp\":" +
          std::to_string(kNow - 30'000) + ",\"results\":[\"a\",\"b\"]}",
      EventOrigin{0, offset_++}));
  CloseWindows(kNow - 35'000);  // r0..r2 close; r3 stays pending.
  ASSERT_EQ(pipeline().pending_requests(), 2);  // r3 and the tick.
  ASSERT_EQ(A().all[SeriesIndex("P_1")].count(), 3);
  const int64_t now = pipeline().window_now_ms();
  const WindowTotals before_5m =
      A().windows.Sum(SeriesIndex("P_1"), now, 300'000);
  ASSERT_EQ(before_5m.count, 3);

  config::Config next = config_;
  next.metrics.cutoffs = {1, 3};
  next.aggregation.windows = {std::chrono::minutes(5),
                              std::chrono::minutes(15)};
  next.join.max_pending_requests = 5;
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());

  // Kept: P@1's whole-run stats, histogram and 5-minute window (by hand:
  // values 1, 1, 0: count 3, sum 2, mean 2/3; histogram: one 0 in the
  // first bucket, two 1s in the (0.9, 1] bucket).
  const size_t p1 = SeriesIndex("P_1");
  const size_t p3 = SeriesIndex("P_3");
  EXPECT_EQ(A().all[p1].count(), 3);
  EXPECT_DOUBLE_EQ(A().all[p1].mean(), 2.0 / 3.0);
  EXPECT_EQ(A().histograms[p1][0], 1);
  EXPECT_EQ(A().histograms[p1][9], 2);
  const WindowTotals after_5m = A().windows.Sum(p1, now, 300'000);
  EXPECT_EQ(after_5m.count, 3);
  EXPECT_DOUBLE_EQ(after_5m.sum, 2.0);
  EXPECT_EQ(A().windows.Sum(p1, now, 900'000).count, 3);  // The new 15m.
  EXPECT_EQ((std::vector<int64_t>{300'000, 900'000}),
            pipeline().aggregator().windows_ms());
  // New: P@3 starts empty.
  EXPECT_EQ(A().all[p3].count(), 0);
  EXPECT_EQ(A().windows.Sum(p3, now, 300'000).count, 0);
  EXPECT_EQ(A().requests, 3);

  // The pending r3 survived: clicked on "a" now and closed, it is scored
  // with the new series: P@1 = 1, P@3 = 1/3 (one relevant doc in the top
  // 3; trec_eval divides by k).
  Click("r3", kNow - 29'000, "a");
  CloseWindows(kNow);
  EXPECT_EQ(A().all[p1].count(), 4);
  EXPECT_DOUBLE_EQ(A().all[p1].mean(), 3.0 / 4.0);
  EXPECT_EQ(A().all[p3].count(), 1);
  EXPECT_DOUBLE_EQ(A().all[p3].mean(), 1.0 / 3.0);
  EXPECT_EQ(pipeline().config().metrics.cutoffs, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(pipeline().config().join.max_pending_requests, 5);
}

TEST_F(PipelineReconfigureTest, NewBucketWidthEmptiesOnlyTheWindows) {
  Serve("r0", kNow - 60'000, "a");
  CloseWindows(kNow - 30'000);
  const size_t p1 = SeriesIndex("P_1");
  ASSERT_EQ(A().all[p1].count(), 1);
  config::Config next = config_;
  next.aggregation.bucket = std::chrono::seconds(30);
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_EQ(A().all[p1].count(), 1);
  EXPECT_EQ(A().windows.Sum(p1, pipeline().window_now_ms(), 3'600'000).count,
            0);
}

TEST_F(PipelineReconfigureTest, NewDefinitionsEmptyEverySeries) {
  Serve("r0", kNow - 60'000, "a");
  CloseWindows(kNow - 30'000);
  config::Config next = config_;
  next.metrics.definitions.gain = metrics::Gain::kExponential;
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_EQ(A().all[SeriesIndex("P_1")].count(), 0);
  EXPECT_EQ(A().requests, 1);  // The group and its request count stay.
}

TEST_F(PipelineReconfigureTest, RefusesKeysThatCannotChangeLive) {
  Serve("r0", kNow - 60'000, "a");
  CloseWindows(kNow - 30'000);
  config::Config next = config_;
  next.metrics.cutoffs = {1, 3};  // Live, but the whole reload is refused.
  next.join.window = std::chrono::seconds(20);
  next.schema.variant = "arm";
  next.aggregation.segments = {"locale"};
  EXPECT_EQ(Pipeline::FixedKeysChanged(config_, next),
            (std::vector<std::string>{"schema", "join.window",
                                      "aggregation.segments"}));
  const Status s = pipeline().Reconfigure(next);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "cannot change while running: schema, join.window, "
            "aggregation.segments");
  // Nothing changed.
  EXPECT_EQ(pipeline().config().metrics.cutoffs, (std::vector<int32_t>{1}));
  EXPECT_EQ(pipeline().aggregator().series().size(), 1u);
  EXPECT_EQ(A().all[0].count(), 1);
  EXPECT_TRUE(Pipeline::FixedKeysChanged(config_, config_).empty());
}

TEST_F(PipelineReconfigureTest, KeepsSequentialStateOfUnchangedComparisons) {
  config_.experiments = {{"x", "A", {"B"}}};
  for (int i = 0; i < 6; ++i) {
    const int64_t t = kNow - 600'000 + i * 30'000;
    Serve("a" + std::to_string(i), t, i % 2 == 0 ? "a" : "b", "A");
    Serve("b" + std::to_string(i), t, "a", "B");
    CloseWindows(t + 20'000);
    clock_.Advance(Pipeline::kExperimentLookIntervalMs);
    pipeline().AdvanceWallClock();
  }
  // Looks of the window-"all" sequential test of treatment B on a series.
  const auto looks = [&](const std::string& trec_name) -> int64_t {
    for (const Comparison& c : pipeline().experiments().comparisons()) {
      if (c.window == -1 && c.treatment == "B" &&
          pipeline().aggregator().series()[c.series].trec_name == trec_name) {
        return c.sequential.looks();
      }
    }
    ADD_FAILURE() << "no comparison of " << trec_name;
    return -1;
  };
  const int64_t looks_before = looks("P_1");
  ASSERT_GT(looks_before, 2);
  const int64_t monitor_looks = pipeline().experiments().looks();

  config::Config next = config_;
  next.metrics.cutoffs = {1, 3};
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  // Reconfigure takes one look: the kept test has had at most one more,
  // the new series' test at most that one.
  EXPECT_GE(looks("P_1"), looks_before);
  EXPECT_LE(looks("P_1"), looks_before + 1);
  EXPECT_LE(looks("P_3"), 1);
  EXPECT_EQ(pipeline().experiments().looks(), monitor_looks + 1);

  // The query movers' sizes are read by no test: the tests carry on.
  const int64_t looks_kept = looks("P_1");
  next.statistics.tracked_queries = 7;
  next.statistics.export_query_movers = 3;
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_GE(looks("P_1"), looks_kept);
  EXPECT_GT(looks("P_1"), 2);

  // Another treatment list restarts the comparisons.
  next.experiments = {{"x", "A", {"B", "C"}}};
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_LE(looks("P_1"), 1);
}

// A reload keeps the covariate state of the series still computed (the
// moments move by what the values mean) and the adjusted sequential test
// of an unchanged comparison; a new series starts without pairs.
TEST_F(PipelineReconfigureTest, KeepsCovariateStateOfSeriesStillComputed) {
  config_.experiments = {{"x", "A", {"B"}}};
  config_.schema.covariate = "pre";
  const auto serve = [&](const std::string& id, int64_t t,
                         const std::string& variant, double x, bool top) {
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
            "\",\"pre\":" + std::to_string(x) + ",\"timestamp\":" +
            std::to_string(t) + ",\"results\":[\"a\",\"b\"]}",
        EventOrigin{0, offset_++}));
    Click(id, t + 10, top ? "a" : "b");
  };
  for (int i = 0; i < 30; ++i) {
    const int64_t t = kNow - 600'000 + i * 1000;
    const double x = (i % 7) / 7.0;
    serve("a" + std::to_string(i), t, "A", x, (i % 7) > 2);
    serve("b" + std::to_string(i), t, "B", x, (i % 7) > 1);
  }
  CloseWindows(kNow - 500'000);
  clock_.Advance(Pipeline::kExperimentLookIntervalMs);
  pipeline().AdvanceWallClock();
  const auto row = [&](const std::string& trec_name) -> const Comparison& {
    for (const Comparison& c : pipeline().experiments().comparisons()) {
      if (c.window == -1 &&
          pipeline().aggregator().series()[c.series].trec_name == trec_name) {
        return c;
      }
    }
    ADD_FAILURE() << "no comparison of " << trec_name;
    return pipeline().experiments().comparisons()[0];
  };
  ASSERT_EQ(row("P_1").adjusted.baseline_arm.count, 30);
  ASSERT_EQ(row("P_1").adjusted.sequential.looks(), 1);
  const double theta = row("P_1").adjusted.theta;
  EXPECT_GT(theta, 0);

  config::Config next = config_;
  next.metrics.cutoffs = {1, 3};
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_EQ(row("P_1").adjusted.baseline_arm.count, 30);
  EXPECT_EQ(row("P_1").adjusted.theta, theta);
  // Kept, plus the look Reconfigure takes.
  EXPECT_EQ(row("P_1").adjusted.sequential.looks(), 2);
  EXPECT_EQ(row("P_3").adjusted.baseline_arm.count, 0);
  EXPECT_EQ(row("P_3").adjusted.sequential.looks(), 0);
}

TEST_F(PipelineReconfigureTest, KeepsInterleavingCountsAndDropsStaleIndexes) {
  config_.interleaving = {{"i", "A-vs-B", {"A", "B"}}};
  // An interleaved list: B contributed "a", A contributed "b".
  const auto serve = [&](const std::string& id, int64_t t) {
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        "{\"request_id\":\"" + id +
            "\",\"variant\":\"A-vs-B\",\"timestamp\":" + std::to_string(t) +
            ",\"results\":[{\"doc_id\":\"a\",\"team\":\"B\"},"
            "{\"doc_id\":\"b\",\"team\":\"A\"}]}",
        EventOrigin{0, offset_++}));
  };
  serve("r0", kNow - 60'000);
  Click("r0", kNow - 59'000, "a");  // A win of B, the challenger.
  serve("r1", kNow - 40'000);       // No click.
  CloseWindows(kNow - 45'000);
  pipeline().FinishAll();  // Finalizes r0, r1 and the tick.
  ASSERT_EQ(pipeline().interleaving().experiments()[0].all.impressions, 2);

  config::Config next = config_;
  next.aggregation.windows = {std::chrono::minutes(15)};
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  const InterleavingState& kept = pipeline().interleaving().experiments()[0];
  EXPECT_EQ(kept.all.impressions, 2);
  EXPECT_EQ(kept.all.wins[1], 1);
  EXPECT_EQ(kept.windows.size(), 1u);
  EXPECT_EQ(kept.windows[0].impressions, 2);  // From the kept buckets.

  // The experiment is removed while r2 is pending: its finalized list
  // carries a stale index and is not counted anywhere.
  serve("r2", kNow - 20'000);
  next.interleaving.clear();
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  EXPECT_TRUE(pipeline().interleaving().experiments().empty());
  pipeline().FinishAll();
  EXPECT_EQ(pipeline().join_counters().finalized, 4);  // r0, r1, r2, tick.
}

// Regression adjustment end to end: the covariate travels from the results
// event (a nested field) through the pending requests, a checkpoint of
// every partition into a new process, and the join to the monitor. Events
// delivered across three partitions in a shuffled order (each partition's
// own order kept), with a checkpoint and restore half-way, give the
// adjusted figures that one in-order pass (what replay does) gives.
TEST(PipelineCovariateTest, LiveAcrossPartitionsEqualsReplay) {
  config::Config config;
  config.join.window = std::chrono::seconds(10);
  config.join.allowed_lateness = std::chrono::hours(2);
  config.metrics.measures = {metrics::Measure::kPrecision};
  config.metrics.cutoffs = {1};
  config.schema.covariate = "pre.ndcg";
  config.experiments = {{"x", "A", {"B"}}};
  FakeClock clock(kNow);

  struct Event {
    Topic topic;
    int32_t partition;
    std::string json;
  };
  std::vector<Event> events;
  Xoshiro256 rng(2704);
  constexpr int kRequests = 240;
  int with_covariate = 0;
  int absent = 0;
  int wrong_type = 0;
  for (int i = 0; i < kRequests; ++i) {
    const std::string id = "r" + std::to_string(i);
    const int64_t t = kNow - 3'600'000 + i * 1000;
    const double x = rng.Gaussian();
    std::string pre;
    if (i % 10 == 3) {
      ++absent;
    } else if (i % 17 == 5) {
      pre = R"(,"pre":{"ndcg":"n/a"})";
      ++wrong_type;
    } else {
      pre = ",\"pre\":{\"ndcg\":" + std::to_string(x) + "}";
      ++with_covariate;
    }
    const int32_t partition = i % 3;
    events.push_back({Topic::kResults, partition,
                      "{\"request_id\":\"" + id + "\",\"variant\":\"" +
                          (rng.Below(2) == 0 ? "A" : "B") +
                          "\",\"timestamp\":" + std::to_string(t) +
                          ",\"results\":[\"a\",\"b\"]" + pre + "}"});
    // P@1 is 1 when the click is on "a": likelier for a higher x.
    const bool top = rng.Uniform() < std::clamp(0.5 + 0.3 * x, 0.05, 0.95);
    events.push_back({Topic::kJudgments, partition,
                      "{\"request_id\":\"" + id + "\",\"timestamp\":" +
                          std::to_string(t + 100) + ",\"doc_id\":\"" +
                          (top ? "a" : "b") + "\",\"relevance\":1}"});
  }

  // Replay: every event in order, from one source.
  auto replay = Pipeline::Create(config, &clock);
  ASSERT_TRUE(replay.ok());
  int64_t offset = 0;
  for (const Event& e : events) {
    (*replay)->OnPayload(e.topic, e.json, EventOrigin{0, offset++});
  }
  (*replay)->FinishAll();
  const PipelineCounters& counters = (*replay)->counters();
  EXPECT_EQ(counters.covariate[0], with_covariate);
  EXPECT_EQ(counters.covariate[static_cast<size_t>(CovariateOutcome::kAbsent)],
            absent);
  EXPECT_EQ(
      counters.covariate[static_cast<size_t>(CovariateOutcome::kWrongType)],
      wrong_type);

  // Live: partitions interleaved at random; half-way, every partition is
  // checkpointed and restored into a new pipeline.
  std::vector<std::vector<const Event*>> queues(3);
  for (const Event& e : events) {
    queues[static_cast<size_t>(e.partition)].push_back(&e);
  }
  std::vector<size_t> next(3, 0);
  auto live = Pipeline::Create(config, &clock);
  ASSERT_TRUE(live.ok());
  std::unique_ptr<Pipeline> pipeline = std::move(live).value();
  for (int32_t p = 0; p < 3; ++p) {
    pipeline->AddSource(EventOrigin::SourceOf(0, p));
    pipeline->AddSource(EventOrigin::SourceOf(1, p));
  }
  for (size_t delivered = 0; delivered < events.size(); ++delivered) {
    if (delivered == events.size() / 2) {
      auto restored = Pipeline::Create(config, &clock);
      ASSERT_TRUE(restored.ok());
      for (int32_t p = 0; p < 3; ++p) {
        std::string record;
        pipeline->EncodeShard(p, &record);
        ASSERT_TRUE((*restored)->DecodeShard(p, record).ok());
      }
      ASSERT_GT((*restored)->pending_requests(), 0);
      pipeline = std::move(restored).value();
    }
    size_t q = rng.Below(3);
    while (next[q] == queues[q].size()) q = (q + 1) % 3;
    const Event& e = *queues[q][next[q]++];
    pipeline->OnPayload(
        e.topic, e.json,
        EventOrigin{EventOrigin::SourceOf(e.topic == Topic::kResults ? 0 : 1,
                                          e.partition),
                    static_cast<int64_t>(next[q])});
  }
  pipeline->FinishAll();

  const Comparison& want = (*replay)->experiments().comparisons()[0];
  const Comparison& got = pipeline->experiments().comparisons()[0];
  ASSERT_TRUE(want.has_adjusted);
  const AdjustedComparison& w = want.adjusted;
  const AdjustedComparison& g = got.adjusted;
  EXPECT_EQ(w.status, metrics::AdjustmentStatus::kAdjusted);
  // Every list with a covariate is a pair (P@1 is always defined).
  EXPECT_EQ(w.baseline_arm.count + w.treatment_arm.count, with_covariate);
  EXPECT_EQ(g.baseline_arm.count, w.baseline_arm.count);
  EXPECT_EQ(g.treatment_arm.count, w.treatment_arm.count);
  const auto near = [](double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
  };
  EXPECT_GT(w.theta, 0);  // The clicks follow x.
  EXPECT_TRUE(near(g.theta, w.theta));
  EXPECT_TRUE(near(g.welch.difference, w.welch.difference));
  EXPECT_TRUE(near(g.welch.interval.lower, w.welch.interval.lower));
  EXPECT_TRUE(near(g.welch.interval.upper, w.welch.interval.upper));
  EXPECT_TRUE(near(g.welch.p_value, w.welch.p_value));
  EXPECT_TRUE(near(g.variance_ratio, w.variance_ratio));
  EXPECT_LT(w.variance_ratio, 1);
  // The latest look alone (the running intersection also holds the look
  // the restore took).
  ASSERT_TRUE(w.look.ok());
  EXPECT_TRUE(near(g.look.interval.lower, w.look.interval.lower));
  EXPECT_TRUE(near(g.look.interval.upper, w.look.interval.upper));
  EXPECT_TRUE(near(g.look.p_value, w.look.p_value));
}

// A guardrail on a field of results events (schema.fields: latency, lower
// is better), end to end: the value travels from the event through the
// pending requests (and a checkpoint half-way, into a new process) to its
// own series, compared with the field's own mixing distribution, and the
// decision reads it. A: latencies 90, 100, 110 (20 lists each), B: 120,
// 130, 140 (and two lists whose latency is "n/a"): difference 30 ms, V = 2
// (4000/59)/60 = 2.2598870056497176; the mSPRT interval at tau = 10 (tau^2 =
// 100), by hand with NumPy: 30 -+ sqrt(V (V + 100)/100 (ln((V + 100)/V) + 2 ln
// 20)) = [25.240182546639076, 34.759817453360924], beyond the 5 ms margin: B
// must not ship. The lists without a latency add nothing to the series and are
// counted as wrong_type.
TEST(PipelineFieldTest, GuardrailOnALatencyFieldSaysNoShip) {
  config::Config config;
  config.join.window = std::chrono::seconds(10);
  config.join.allowed_lateness = std::chrono::hours(2);
  config.metrics.measures = {metrics::Measure::kPrecision};
  config.metrics.cutoffs = {1};
  config.schema.fields = {{"latency_ms", "timing.latency_ms", false, 10}};
  config.experiments = {{"x", "A", {"B"}}};
  config::GuardrailConfig guardrail;
  guardrail.series.field = "latency_ms";
  guardrail.margin = 5;
  config.experiments[0].guardrails = {guardrail};
  FakeClock clock(kNow);

  std::vector<std::pair<Topic, std::string>> events;
  std::vector<CovariateOutcome> outcomes;  // Per results event.
  for (int i = 0; i < 70; ++i) {
    for (const char* variant : {"A", "B"}) {
      const bool b = variant[0] == 'B';
      const std::string id = std::string(variant) + std::to_string(i);
      const int64_t t = kNow - 3'600'000 + i * 1000;
      std::string latency;
      if (i < 60) {  // 60 lists with a latency per arm.
        latency = std::to_string((b ? 120 : 90) + 10 * (i % 3));
      } else if (b && i % 7 == 6) {  // B's 62 and 69.
        latency = R"("n/a")";
      } else {
        continue;
      }
      outcomes.push_back(i < 60 ? CovariateOutcome::kPresent
                                : CovariateOutcome::kWrongType);
      events.push_back(
          {Topic::kResults,
           "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
               "\",\"timestamp\":" + std::to_string(t) +
               ",\"results\":[\"a\",\"b\"],\"timing\":{\"latency_ms\":" +
               latency + "}}"});
      events.push_back({Topic::kJudgments,
                        "{\"request_id\":\"" + id + "\",\"timestamp\":" +
                            std::to_string(t + 100) + ",\"doc_id\":\"" +
                            (i % 2 == 0 ? "a" : "b") + "\",\"relevance\":1}"});
    }
  }
  auto live = Pipeline::Create(config, &clock);
  ASSERT_TRUE(live.ok());
  std::unique_ptr<Pipeline> pipeline = std::move(live).value();
  for (size_t i = 0; i < events.size(); ++i) {
    if (i == events.size() / 2) {
      auto restored = Pipeline::Create(config, &clock);
      ASSERT_TRUE(restored.ok());
      std::string record;
      pipeline->EncodeShard(0, &record);
      // Pending requests with a field value: the join's format 3 ("JNS3",
      // little-endian "3SNJ").
      EXPECT_NE(record.find("3SNJ"), std::string::npos);
      ASSERT_TRUE((*restored)->DecodeShard(0, record).ok());
      ASSERT_GT((*restored)->pending_requests(), 0);
      pipeline = std::move(restored).value();
    }
    ASSERT_TRUE(pipeline->OnPayload(events[i].first, events[i].second,
                                    EventOrigin{0, static_cast<int64_t>(i)}));
  }
  pipeline->FinishAll();

  const std::vector<SeriesSpec>& series = pipeline->aggregator().series();
  ASSERT_EQ(series.size(), 2u);  // P_1, then the field.
  EXPECT_EQ(series[1].name, "latency_ms");
  EXPECT_EQ(series[1].k_label, "all");
  EXPECT_FALSE(series[1].higher_is_better);
  const Comparison* latency = nullptr;
  for (const Comparison& c : pipeline->experiments().comparisons()) {
    if (c.window == -1 && c.series == 1) latency = &c;
  }
  ASSERT_NE(latency, nullptr);
  EXPECT_FALSE(latency->quality);  // No verdict, not in the BH family.
  EXPECT_EQ(latency->baseline_arm.count, 60);
  EXPECT_EQ(latency->treatment_arm.count, 60);
  EXPECT_DOUBLE_EQ(latency->baseline_arm.mean, 100);
  EXPECT_DOUBLE_EQ(latency->treatment_arm.mean, 130);
  EXPECT_DOUBLE_EQ(latency->welch.difference, 30);
  // scipy.stats.ttest_ind(B, A, equal_var=False).confidence_interval():
  // (27.02307245893948, 32.97692754106052).
  EXPECT_NEAR(latency->welch.interval.lower, 27.02307245893948, 1e-9);
  EXPECT_NEAR(latency->welch.interval.upper, 32.97692754106052, 1e-9);
  EXPECT_NEAR(latency->look.interval.lower, 25.240182546639076, 1e-9);
  EXPECT_NEAR(latency->look.interval.upper, 34.759817453360924, 1e-9);

  ASSERT_EQ(pipeline->decisions().decisions().size(), 1u);
  const Decision& d = pipeline->decisions().decisions()[0];
  EXPECT_EQ(d.value, DecisionValue::kNoShip);
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_TRUE(d.inputs[1].guardrail);
  EXPECT_EQ(d.inputs[1].series, "latency_ms");
  EXPECT_FALSE(d.inputs[1].higher_is_better);
  EXPECT_EQ(d.inputs[1].state, InputState::kInferior);
  ASSERT_FALSE(d.reasons.empty());
  EXPECT_NE(d.reasons[0].find("latency_ms"), std::string::npos) << d.reasons[0];

  // The counters are the process's: the results events after the restore.
  std::array<int64_t, kNumCovariateOutcomes> want{};
  for (size_t i = outcomes.size() / 2; i < outcomes.size(); ++i) {
    ++want[static_cast<size_t>(outcomes[i])];
  }
  EXPECT_EQ(pipeline->counters().fields[0], want);
  EXPECT_EQ(want[static_cast<size_t>(CovariateOutcome::kWrongType)], 2);
}

// A checkpoint's pending requests restored under other fields: each value
// goes to the field of the same key (name, path, direction), a value of a
// field no longer configured is dropped, a new field has none. Written
// with [latency_ms, revenue], restored with [revenue, depth]: revenue's
// mean is (3 + 5) / 2 = 4 from the restored lists, depth has no value.
TEST(PipelineFieldTest, CheckpointValuesFollowTheirFieldAcrossAReorder) {
  config::Config before;
  before.join.window = std::chrono::seconds(10);
  before.metrics.measures = {metrics::Measure::kPrecision};
  before.metrics.cutoffs = {1};
  before.schema.fields = {{"latency_ms", "ms", false, 10},
                          {"revenue", "rev", true, 1}};
  config::Config after = before;
  after.schema.fields = {{"revenue", "rev", true, 1}, {"depth", "d", true, 1}};
  FakeClock clock(kNow);
  auto writer = Pipeline::Create(before, &clock);
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE((*writer)->OnPayload(
        Topic::kResults,
        "{\"request_id\":\"r" + std::to_string(i) +
            "\",\"timestamp\":" + std::to_string(kNow - 60'000) +
            ",\"results\":[\"a\"],\"ms\":" + std::to_string(100 + i) +
            ",\"rev\":" + std::to_string(3 + 2 * i) + "}",
        EventOrigin{0, i}));
  }
  std::string record;
  (*writer)->EncodeShard(0, &record);
  auto reader = Pipeline::Create(after, &clock);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->DecodeShard(0, record).ok());
  ASSERT_EQ((*reader)->pending_requests(), 2);
  (*reader)->FinishAll();
  const Aggregator& agg = (*reader)->aggregator();
  ASSERT_EQ(agg.series().size(), 3u);  // P_1, revenue, depth.
  ASSERT_EQ(agg.series()[1].name, "revenue");
  ASSERT_EQ(agg.num_groups(), 1u);
  EXPECT_EQ(agg.group(0).all[1].count(), 2);
  EXPECT_DOUBLE_EQ(agg.group(0).all[1].mean(), 4);
  EXPECT_EQ(agg.group(0).all[2].count(), 0);  // depth: none.
}

// Checkpoints keep the format before covariates while nothing needs the
// new one, so that a rollback to a version without covariates still reads
// them: the join's record is "JNS1" until a pending request of the shard
// has a covariate ("JNS2"), the monitor's "ARM2" without schema.covariate
// ("ARM3" with it). Fixed32 is little-endian: "JNS1" is written "1SNJ".
TEST(PipelineCovariateTest, CheckpointFormatBeforeCovariatesWhenUnused) {
  config::Config config;
  config.join.window = std::chrono::seconds(10);
  config.experiments = {{"x", "A", {"B"}}};
  FakeClock clock(kNow);
  const auto record = [&](const config::Config& c, const std::string& pre) {
    auto p = Pipeline::Create(c, &clock);
    EXPECT_TRUE(p.ok());
    EXPECT_TRUE((*p)->OnPayload(
        Topic::kResults,
        "{\"request_id\":\"r\",\"timestamp\":" + std::to_string(kNow) +
            ",\"results\":[\"a\"]" + pre + "}",
        EventOrigin{0, 0}));
    std::string out;
    (*p)->EncodeShard(0, &out);
    return out;
  };
  const std::string plain = record(config, "");
  EXPECT_NE(plain.find("1SNJ"), std::string::npos);
  EXPECT_NE(plain.find("2MRA"), std::string::npos);
  EXPECT_EQ(plain.find("2SNJ"), std::string::npos);
  EXPECT_EQ(plain.find("3MRA"), std::string::npos);
  config.schema.covariate = "pre";
  const std::string without = record(config, "");
  EXPECT_NE(without.find("1SNJ"), std::string::npos);
  EXPECT_NE(without.find("3MRA"), std::string::npos);
  const std::string with = record(config, ",\"pre\":0.5");
  EXPECT_NE(with.find("2SNJ"), std::string::npos);
  // And it restores: the pending request keeps its covariate (else its
  // shard's next record would be "JNS1").
  auto restored = Pipeline::Create(config, &clock);
  ASSERT_TRUE(restored.ok());
  ASSERT_TRUE((*restored)->DecodeShard(0, with).ok());
  std::string again;
  (*restored)->EncodeShard(0, &again);
  EXPECT_NE(again.find("2SNJ"), std::string::npos);
}

}  // namespace
}  // namespace rankwatch::stream
