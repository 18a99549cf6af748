#include "daemon/stream/pipeline.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

constexpr int64_t kNow = 1'763'800'000'000;  // 2025-11-22, epoch ms.

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

TEST_F(PipelineTest, EventJustWithinTheFutureSkewCounts) {
  // max_future_skew defaults to 5 minutes.
  EXPECT_TRUE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("r1", kNow + 300'000), EventOrigin{0, 0}));
  EXPECT_FALSE(pipeline().OnPayload(
      Topic::kResults, ResultsJson("r2", kNow + 300'001), EventOrigin{0, 1}));
  EXPECT_EQ(Rejected(Topic::kResults, RejectReason::kFutureTimestamp), 1);
  EXPECT_EQ(pipeline().watermark_ms(), kNow + 300'000 - 1000);
}

TEST_F(PipelineTest, PoisonedCommittedWatermarkIsIgnored) {
  // An older version saved a watermark in year 9999: ignored.
  EXPECT_FALSE(pipeline().RestoreWatermark(253402300799000));
  EXPECT_EQ(pipeline().commit_watermark_ms(), INT64_MIN);
  // A sane one is kept for recognizing replays, and committed again.
  EXPECT_TRUE(pipeline().RestoreWatermark(kNow - 60'000));
  EXPECT_EQ(pipeline().commit_watermark_ms(), kNow - 60'000);
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

}  // namespace
}  // namespace rankwatch::stream
