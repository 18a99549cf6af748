#include "daemon/stream/pipeline/snapshot.h"

#include <memory>
#include <string>

#include "base/clock.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

// A list of two docs, "a" then "b", served to `variant` for `query`.
std::string Results(const std::string& id, const std::string& variant,
                    const std::string& query, int64_t t) {
  return "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
         "\",\"query_id\":\"" + query +
         "\",\"timestamp\":" + std::to_string(t) +
         ",\"results\":[\"a\",\"b\"]}";
}

std::string Click(const std::string& id, const std::string& doc, int64_t t) {
  return "{\"request_id\":\"" + id + "\",\"timestamp\":" + std::to_string(t) +
         ",\"doc_id\":\"" + doc + "\",\"relevance\":1}";
}

class SnapshotTest : public ::testing::Test {
 protected:
  SnapshotTest() {
    config_.join.window = std::chrono::seconds(10);
    config_.metrics.cutoffs = {1};
    config_.metrics.measures = {metrics::Measure::kPrecision};
  }
  Pipeline& pipeline() {
    if (!pipeline_) {
      auto p = Pipeline::Create(config_, &clock_);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      pipeline_ = std::move(p).value();
    }
    return *pipeline_;
  }
  // A request clicked on `doc`: P@1 is 1 when it is "a" (rank 1), else 0.
  void Serve(const std::string& id, const std::string& variant,
             const std::string& query, const std::string& doc) {
    const int64_t t = kNow - 600'000 + 100 * offset_;
    (void)pipeline().OnPayload(Topic::kResults, Results(id, variant, query, t),
                               EventOrigin{0, offset_++});
    (void)pipeline().OnPayload(Topic::kJudgments, Click(id, doc, t + 50),
                               EventOrigin{1, offset_++});
  }
  // The index of `trec_name` among the snapshot's series, or -1.
  static int SeriesOf(const PipelineSnapshot& s, const std::string& name) {
    for (size_t i = 0; i < s.series.size(); ++i) {
      if (s.series[i].trec_name == name) return static_cast<int>(i);
    }
    return -1;
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
  int64_t offset_ = 0;
};

TEST_F(SnapshotTest, CopiesTheFiguresAndKeepsThemWhenThePipelineMovesOn) {
  Serve("r1", "A", "q1", "a");  // P@1 = 1.
  Serve("r2", "A", "q1", "b");  // P@1 = 0: "b" is at rank 2.
  pipeline().FinishAll();
  PipelineSnapshot first;
  TakeSnapshot(pipeline(), &first);

  const int p1 = SeriesOf(first, "P_1");
  ASSERT_GE(p1, 0);
  ASSERT_EQ(first.groups.size(), 1u);
  EXPECT_EQ(first.groups[0].variant, "A");
  EXPECT_EQ(first.groups[0].requests, 2);
  EXPECT_EQ(first.groups[0].all[p1].count(), 2);
  EXPECT_DOUBLE_EQ(first.groups[0].all[p1].mean(), 0.5);  // (1 + 0) / 2.
  EXPECT_EQ(first.flows[0].all[p1].count, 2);
  EXPECT_EQ(first.counters.consumed[0], 2);
  EXPECT_EQ(first.counters.consumed[1], 2);
  EXPECT_EQ(first.counters.scored, 2);
  EXPECT_EQ(first.join_counters.finalized, 2);
  EXPECT_EQ(first.pending_requests, 0);
  EXPECT_EQ(first.config.metrics.cutoffs, std::vector<int32_t>{1});

  // The pipeline moves on; the snapshot taken is a copy and stays.
  Serve("r3", "A", "q1", "a");
  pipeline().FinishAll();
  EXPECT_EQ(first.groups[0].all[p1].count(), 2);
  EXPECT_EQ(first.counters.scored, 2);

  PipelineSnapshot second = first;
  TakeSnapshot(pipeline(), &second);  // Over a used snapshot.
  EXPECT_EQ(second.groups[0].all[p1].count(), 3);
  EXPECT_DOUBLE_EQ(second.groups[0].all[p1].mean(), 2.0 / 3.0);
  EXPECT_EQ(second.counters.scored, 3);
  EXPECT_EQ(second.join_counters.finalized, 3);
}

TEST_F(SnapshotTest, HoldsTheComparisonsAndTheMoversOfEachPrimarySeries) {
  config::ExperimentConfig e;
  e.name = "ranker";
  e.baseline = "A";
  e.treatments = {"B"};
  e.primary = {{metrics::Measure::kPrecision, 1}};
  config_.experiments = {e};
  // Query q1: A clicked at rank 1 twice (P@1 1, 1), B at rank 2 twice
  // (0, 0); q2: both arms at rank 1 (1 each).
  Serve("a1", "A", "q1", "a");
  Serve("a2", "A", "q1", "a");
  Serve("a3", "A", "q2", "a");
  Serve("b1", "B", "q1", "b");
  Serve("b2", "B", "q1", "b");
  Serve("b3", "B", "q2", "a");
  pipeline().FinishAll();
  PipelineSnapshot s;
  TakeSnapshot(pipeline(), &s);

  const int p1 = SeriesOf(s, "P_1");
  ASSERT_GE(p1, 0);
  const Comparison* whole = nullptr;
  for (const Comparison& c : s.comparisons) {
    if (c.series == static_cast<size_t>(p1) && c.window < 0) whole = &c;
  }
  ASSERT_NE(whole, nullptr);
  EXPECT_TRUE(whole->primary);
  EXPECT_EQ(whole->treatment, "B");
  // Means: A 3/3 = 1, B 1/3.
  EXPECT_DOUBLE_EQ(whole->baseline_arm.mean, 1.0);
  EXPECT_DOUBLE_EQ(whole->treatment_arm.mean, 1.0 / 3.0);
  ASSERT_EQ(s.decisions.size(), 1u);
  EXPECT_EQ(s.decisions[0].treatment, "B");

  EXPECT_GT(s.movers_capacity, 0);
  const std::vector<metrics::QueryMover>* movers =
      s.FindMovers(0, "B", static_cast<size_t>(p1));
  ASSERT_NE(movers, nullptr);
  ASSERT_FALSE(movers->empty());
  // q1 carries the difference: B - A = 0 - 1 on 2 of 3 lists per arm.
  EXPECT_EQ(movers->front().query, "q1");
  EXPECT_DOUBLE_EQ(movers->front().difference, -1.0);
  EXPECT_EQ(s.FindMovers(0, "C", static_cast<size_t>(p1)), nullptr);

  // Taken again from a pipeline without experiments: nothing of the first
  // is left over in the reused snapshot.
  config_.experiments.clear();
  pipeline_.reset();
  offset_ = 0;
  Serve("c1", "A", "q1", "a");
  pipeline().FinishAll();
  TakeSnapshot(pipeline(), &s);
  EXPECT_TRUE(s.comparisons.empty());
  EXPECT_TRUE(s.decisions.empty());
  EXPECT_TRUE(s.movers.empty());
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].requests, 1);
}

}  // namespace
}  // namespace rankwatch::stream
