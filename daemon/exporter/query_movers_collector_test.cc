#include "daemon/exporter/query_movers_collector.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"
#include "tests/testing/prometheus_text.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;
using testing::JudgmentJson;
using testing::ResultsJson;

// Precision at 1 (the primary series), experiment ranker-v2: B against A.
config::Config MoversConfig(int32_t export_top) {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision};
  c.metrics.cutoffs = {1};
  c.experiments = {{"ranker-v2", "A", {"B"}}};
  c.events.min_timestamp_ms = 0;
  c.statistics.tracked_queries = 16;
  c.statistics.export_query_movers = export_top;
  return c;
}

class QueryMoversCollectorTest : public ::testing::Test {
 protected:
  void Start(int32_t export_top) {
    auto p = stream::Pipeline::Create(MoversConfig(export_top), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  // `lists` lists of query `query` in `variant`, the first `relevant` of
  // them with their one doc relevant (P@1 = 1), the others 0.
  void Lists(const std::string& query, const std::string& variant, int lists,
             int relevant) {
    for (int i = 0; i < lists; ++i) {
      const std::string id = query + variant + std::to_string(i);
      std::string results = ResultsJson(id, variant, 1000, {"a"});
      results.insert(results.size() - 1, R"(,"query_id":")" + query + "\"");
      pipeline_->OnPayload(stream::Topic::kResults, results, {0, offset_++});
      if (i < relevant) {
        pipeline_->OnPayload(stream::Topic::kJudgments,
                             JudgmentJson(id, "a", 1, 2000), {0, offset_++});
      }
    }
  }

  // The worked example: 73 lists per arm (a query is tested from 30 lists
  // per arm, issue 42).
  //   q-down: A 40 lists, 30 relevant (0.75); B 40, 4 relevant (0.10).
  //   q-flat: A 30, 15 relevant; B 30, 15 relevant (difference 0).
  //   q-rare: A 3, 1 relevant; B 3, 3 relevant (too few lists: no test).
  // share = lists / 146; contribution = share x difference:
  //   q-down 80/146 x -0.65 = -0.3561643835616438; q-rare 6/146 x 2/3 =
  //   0.0273972602739726; q-flat 0. Ranked q-down (significant), then
  //   q-rare, q-flat.
  // Welch p of q-down: scipy.stats.ttest_ind(B, A, equal_var=False) =
  // 6.661075955502936e-11 (SciPy 1.17); q-flat's p = 1; BH over the two
  // tested: q-down min(2 p, 1) = 1.3322151911005872e-10.
  void FeedExample() {
    Lists("q-down", "A", 40, 30);
    Lists("q-down", "B", 40, 4);
    Lists("q-flat", "A", 30, 15);
    Lists("q-flat", "B", 30, 15);
    Lists("q-rare", "A", 3, 1);
    Lists("q-rare", "B", 3, 3);
    pipeline_->FinishAll();
  }

  Scrape Collect() const {
    std::vector<prometheus::MetricFamily> families;
    QueryMoversCollector().Collect(testing::Snapshot(*pipeline_), &families);
    return Scrape::Parse(SerializeText(families));
  }

  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
};

const std::map<std::string, std::string> kComparison = {
    {"experiment", "ranker-v2"},
    {"variant", "B"},
    {"baseline", "A"},
    {"measure", "precision"},
    {"k", "1"}};

std::map<std::string, std::string> With(std::string key, std::string value) {
  std::map<std::string, std::string> labels = kComparison;
  labels[std::move(key)] = std::move(value);
  return labels;
}

TEST_F(QueryMoversCollectorTest, CountsSignificantQueriesByDirection) {
  Start(0);
  FeedExample();
  const Scrape s = Collect();
  EXPECT_EQ(s.Sum("rankwatch_query_movers_tested", kComparison), 2);
  EXPECT_EQ(
      s.Sum("rankwatch_query_movers_significant", With("direction", "worse")),
      1);
  EXPECT_EQ(
      s.Sum("rankwatch_query_movers_significant", With("direction", "better")),
      0);
  // Off by default: no per-rank series.
  EXPECT_FALSE(s.Has("rankwatch_query_mover_info"));
  EXPECT_FALSE(s.Has("rankwatch_query_mover_difference"));
}

TEST_F(QueryMoversCollectorTest, ExportsTheTopMoversByRank) {
  Start(2);
  FeedExample();
  const Scrape s = Collect();
  EXPECT_EQ(s.Sum("rankwatch_query_mover_info",
                  [] {
                    auto l = With("rank", "1");
                    l["query"] = "q-down";
                    return l;
                  }()),
            1);
  EXPECT_EQ(s.Sum("rankwatch_query_mover_info",
                  [] {
                    auto l = With("rank", "2");
                    l["query"] = "q-rare";
                    return l;
                  }()),
            1);
  EXPECT_EQ(s.LabelValues("rankwatch_query_mover_info", "rank"),
            (std::vector<std::string>{"1", "2"}));
  EXPECT_NEAR(s.Sum("rankwatch_query_mover_difference", With("rank", "1")),
              -0.65, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_query_mover_contribution", With("rank", "1")),
              -0.3561643835616438, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_query_mover_contribution", With("rank", "2")),
              0.0273972602739726, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_query_mover_p_value_bh", With("rank", "1")),
              1.3322151911005872e-10, 1e-15);
  EXPECT_TRUE(
      std::isnan(s.Sum("rankwatch_query_mover_p_value_bh", With("rank", "2"))));
}

TEST_F(QueryMoversCollectorTest, NothingWithoutTrackedQueries) {
  config::Config c = MoversConfig(5);
  c.statistics.tracked_queries = 0;
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok());
  pipeline_ = std::move(p).value();
  FeedExample();
  EXPECT_TRUE(Collect().samples().empty());
}

}  // namespace
}  // namespace rankwatch::exporter
