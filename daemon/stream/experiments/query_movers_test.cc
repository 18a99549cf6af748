#include "daemon/stream/experiments/query_movers.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using metrics::Measure;

config::AggregationConfig Aggregation() {
  config::AggregationConfig c;
  c.windows = {};
  return c;
}

class QueryMoversTest : public ::testing::Test {
 protected:
  QueryMoversTest() : agg_(Aggregation(), BuildSeries({Measure::kNdcg}, {10})) {
    experiments_.push_back({"x", "A", {"B"}});
    // The primary series, ndcg@10, is the one tracked.
    experiments_[0].primary = {{Measure::kNdcg, 10}};
  }

  // One list of `variant` for `query` with value `v` in both series
  // (ndcg@10 and ndcg).
  void Add(QueryMovers* m, Aggregator* agg, std::string_view variant,
           std::string_view query, double v, int32_t shard) {
    m->Add(agg->ResolveGroup(variant, {}), query, std::vector<double>{v, v},
           shard);
  }

  Aggregator agg_;
  std::vector<config::ExperimentConfig> experiments_;
};

// By hand, over two shards. Shard 0: A q1 0.2 0.4, B q1 0.1; A q2 0.5.
// Shard 1: A q1 0.6, B q1 0.2 0.3; B q2 0.6 0.8; one A list without a
// query; C (no experiment) ignored. Merged: A has 5 lists (q1 0.2 0.4 0.6,
// q2 0.5, one without a query), B 5 (q1 0.1 0.2 0.3, q2 0.6 0.8).
//   q1: shares (3 + 3) / 10 = 0.6, difference 0.2 - 0.4 = -0.2,
//       contribution -0.12;
//   q2: (1 + 2) / 10 = 0.3, difference 0.7 - 0.5 = 0.2, contribution 0.06.
TEST_F(QueryMoversTest, MergesShardsAndMovesWithThem) {
  QueryMovers m(&experiments_, &agg_, 10);
  Add(&m, &agg_, "A", "q1", 0.2, 0);
  Add(&m, &agg_, "A", "q1", 0.4, 0);
  Add(&m, &agg_, "B", "q1", 0.1, 0);
  Add(&m, &agg_, "A", "q2", 0.5, 0);
  Add(&m, &agg_, "A", "q1", 0.6, 1);
  Add(&m, &agg_, "B", "q1", 0.2, 1);
  Add(&m, &agg_, "B", "q1", 0.3, 1);
  Add(&m, &agg_, "B", "q2", 0.6, 1);
  Add(&m, &agg_, "B", "q2", 0.8, 1);
  Add(&m, &agg_, "A", "", 0.9, 1);
  Add(&m, &agg_, "C", "q1", 0.9, 1);
  metrics::MoverOptions options;
  options.min_lists = 2;
  auto check = [&](const QueryMovers& q) {
    const std::vector<metrics::QueryMover> movers =
        q.Movers(0, "B", 0, options);
    ASSERT_EQ(movers.size(), 2u);
    EXPECT_EQ(movers[0].query, "q1");
    EXPECT_EQ(movers[0].baseline_count, 3);
    EXPECT_EQ(movers[0].treatment_count, 3);
    EXPECT_NEAR(movers[0].baseline_mean, 0.4, 1e-15);
    EXPECT_NEAR(movers[0].treatment_mean, 0.2, 1e-15);
    EXPECT_NEAR(movers[0].share, 0.6, 1e-15);
    EXPECT_NEAR(movers[0].contribution, -0.12, 1e-15);
    EXPECT_TRUE(movers[0].tested);
    EXPECT_EQ(movers[1].query, "q2");
    EXPECT_NEAR(movers[1].contribution, 0.06, 1e-15);
    EXPECT_FALSE(movers[1].tested);  // One baseline list.
    // Series 1 (uncut ndcg) is not primary: not tracked.
    EXPECT_TRUE(q.Movers(0, "B", 1, options).empty());
  };
  check(m);

  // Restored shard by shard in another process: the same movers.
  std::string r0, r1;
  ByteWriter w0(&r0), w1(&r1);
  m.EncodeShard(0, &w0);
  m.EncodeShard(1, &w1);
  Aggregator agg2(Aggregation(), BuildSeries({Measure::kNdcg}, {10}));
  QueryMovers restored(&experiments_, &agg2, 10);
  ByteReader in0(r0), in1(r1);
  ASSERT_TRUE(restored.DecodeShard(0, &in0).ok());
  ASSERT_TRUE(restored.DecodeShard(1, &in1).ok());
  check(restored);

  // Shard 1 leaves: shard 0 alone has A q1 0.2 0.4, q2 0.5 and B q1 0.1
  // (3 lists and 1): q1 share (2 + 1) / 4 = 0.75, difference 0.1 - 0.3 =
  // -0.2, contribution -0.15.
  restored.DropShard(1);
  const auto alone = restored.Movers(0, "B", 0, options);
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(alone[0].query, "q1");
  EXPECT_NEAR(alone[0].contribution, -0.15, 1e-15);
  EXPECT_TRUE(std::isnan(alone[1].contribution));  // q2: no B list.
}

TEST_F(QueryMoversTest, TruncatedRecordsAreErrorsAndOffIsEmpty) {
  QueryMovers m(&experiments_, &agg_, 4);
  for (int i = 0; i < 20; ++i) {
    Add(&m, &agg_, i % 2 ? "A" : "B", "q" + std::to_string(i % 7), 0.1 * i, 0);
  }
  std::string record;
  ByteWriter w(&record);
  m.EncodeShard(0, &w);
  for (size_t n = 0; n < record.size(); ++n) {
    Aggregator agg2(Aggregation(), BuildSeries({Measure::kNdcg}, {10}));
    QueryMovers restored(&experiments_, &agg2, 4);
    ByteReader r(std::string_view(record).substr(0, n));
    EXPECT_FALSE(restored.DecodeShard(0, &r).ok()) << n << " bytes";
    EXPECT_TRUE(restored.Movers(0, "B", 0, {}).empty()) << n;
  }
  // Capacity 0: nothing kept.
  QueryMovers off(&experiments_, &agg_, 0);
  Add(&off, &agg_, "A", "q1", 0.5, 0);
  EXPECT_TRUE(off.Movers(0, "B", 0, {}).empty());
}

// WriteQueryMoversJson, the one writer of /api/v1/summary's and replay's
// movers: hand-made movers, the expected text written out (shortest
// numbers, null for NaN and for an untested query's interval).
TEST(WriteQueryMoversJsonTest, SummaryAndReplayForms) {
  metrics::QueryMover untested;
  untested.query = "q\"1";
  untested.baseline_count = 2;
  untested.treatment_count = 3;
  untested.baseline_mean = 0.5;
  untested.treatment_mean = 0.25;
  untested.difference = -0.25;
  untested.share = 0.5;
  untested.contribution = -0.125;
  untested.p_value = NAN;
  untested.p_value_bh = NAN;
  metrics::QueryMover tested = untested;
  tested.query = "q2";
  tested.tested = true;
  tested.welch.interval = {-0.1, 0.3};
  tested.p_value = 0.04;
  tested.p_value_bh = 0.08;
  const std::vector<metrics::QueryMover> movers = {untested, tested};
  const std::string common =
      R"("baseline_count":2,"treatment_count":3,"baseline_mean":0.5,)"
      R"("treatment_mean":0.25,"difference":-0.25,"share":0.5,)"
      R"("contribution":-0.125,)";
  JsonWriter summary;
  WriteQueryMoversJson(movers, MoverInterval::kOmit, &summary);
  EXPECT_EQ(summary.Take(),
            R"([{"query":"q\"1",)" + common +
                R"("p_value":null,"p_value_bh":null,"tested":false,)"
                R"("significant":false},)" +
                R"({"query":"q2",)" + common +
                R"("p_value":0.04,"p_value_bh":0.08,"tested":true,)"
                R"("significant":false}])");
  JsonWriter replay;
  WriteQueryMoversJson(movers, MoverInterval::kInclude, &replay);
  EXPECT_EQ(
      replay.Take(),
      R"([{"query":"q\"1",)" + common + R"("ci_lower":null,"ci_upper":null,)" +
          R"("p_value":null,"p_value_bh":null,"tested":false,)"
          R"("significant":false},)" +
          R"({"query":"q2",)" + common + R"("ci_lower":-0.1,"ci_upper":0.3,)" +
          R"("p_value":0.04,"p_value_bh":0.08,"tested":true,)"
          R"("significant":false}])");
}

// Both documents list the first 20 movers (docs/statistics.md).
TEST(WriteQueryMoversJsonTest, ListsTheFirstTwenty) {
  std::vector<metrics::QueryMover> movers(25);
  for (size_t i = 0; i < movers.size(); ++i) {
    movers[i].query = "q" + std::to_string(i);
  }
  JsonWriter w;
  WriteQueryMoversJson(movers, MoverInterval::kOmit, &w);
  const std::string json = w.Take();
  EXPECT_NE(json.find(R"("query":"q19")"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("query":"q20")"), std::string::npos) << json;
  size_t objects = 0;
  for (size_t at = json.find("{\"query\""); at != std::string::npos;
       at = json.find("{\"query\"", at + 1)) {
    ++objects;
  }
  EXPECT_EQ(objects, 20u);
}

}  // namespace
}  // namespace rankwatch::stream
