#include "daemon/stream/aggregation/aggregator.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using metrics::Measure;

TEST(BuildSeriesTest, NamesAndOrder) {
  std::vector<SeriesSpec> s = BuildSeries(
      {Measure::kPrecision, Measure::kNdcg, Measure::kRPrecision}, {10, 5});
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].trec_name, "P_5");
  EXPECT_EQ(s[0].cutoff_index, 0);
  EXPECT_EQ(s[1].trec_name, "P_10");
  EXPECT_EQ(s[1].k_label, "10");
  EXPECT_EQ(s[2].trec_name, "ndcg_cut_5");
  EXPECT_EQ(s[3].trec_name, "ndcg_cut_10");
  EXPECT_EQ(s[4].trec_name, "ndcg");  // ndcg also has an uncut series.
  EXPECT_EQ(s[4].k_label, "all");
  EXPECT_EQ(s[4].cutoff_index, -1);
  EXPECT_EQ(s[5].trec_name, "Rprec");
  std::vector<SeriesSpec> rr = BuildSeries({Measure::kReciprocalRank}, {3});
  ASSERT_EQ(rr.size(), 2u);
  EXPECT_EQ(rr[0].trec_name, "recip_rank_3");
  EXPECT_EQ(rr[1].trec_name, "recip_rank");
  // Click measures: ctr and clicks at each cutoff, the others uncut.
  std::vector<SeriesSpec> clicks =
      BuildSeries({Measure::kCtr, Measure::kClicks, Measure::kAbandonment,
                   Measure::kFirstClickRank, Measure::kRecipRankFirstClick},
                  {10, 5});
  std::vector<std::string> names;
  for (const SeriesSpec& c : clicks) names.push_back(c.trec_name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "ctr_5", "ctr_10", "clicks_5", "clicks_10", "abandonment",
                "first_click_rank", "recip_rank_first_click"}));
}

config::AggregationConfig TestConfig() {
  config::AggregationConfig c;
  c.bucket = std::chrono::seconds(10);
  c.windows = {std::chrono::seconds(30)};
  return c;
}

TEST(AggregatorTest, RunningStatsAndHistogram) {
  Aggregator agg(TestConfig(), BuildSeries({Measure::kPrecision}, {1}));
  const uint32_t a = agg.ResolveGroup("A", {});
  const uint32_t b = agg.ResolveGroup("B", {});
  EXPECT_NE(a, b);
  EXPECT_EQ(agg.ResolveGroup("A", {}), a);
  // Values 0.1, 0.15, 1.0 and 0: le is inclusive, so 0.1 lands in the first
  // bucket (le=0.1), 0.15 in the second, 1.0 in the tenth, 0 in the first.
  for (double v : {0.1, 0.15, 1.0, 0.0}) {
    agg.Add(a, 1000, std::vector<double>{v}, false);
  }
  agg.Add(a, 1000, {}, true);  // A request left out of the means.
  const GroupStats& g = agg.group(a);
  EXPECT_EQ(g.requests, 5);
  EXPECT_EQ(g.without_relevant, 1);
  EXPECT_EQ(g.all[0].count(), 4);
  EXPECT_DOUBLE_EQ(g.all[0].mean(), (0.1 + 0.15 + 1.0 + 0.0) / 4);
  EXPECT_EQ(g.histograms[0][0], 2);
  EXPECT_EQ(g.histograms[0][1], 1);
  EXPECT_EQ(g.histograms[0][9], 1);
  EXPECT_EQ(g.histograms[0][10], 0);
  EXPECT_EQ(agg.group(b).requests, 0);
}

// first_click_rank is undefined (NaN) for a request without a click: that
// series leaves it out (count, sums, histogram, windows) while the other
// series of the same request count it.
TEST(AggregatorTest, UndefinedValuesAreLeftOutOfTheirSeriesOnly) {
  Aggregator agg(
      TestConfig(),
      BuildSeries({Measure::kAbandonment, Measure::kFirstClickRank}, {}));
  ASSERT_EQ(agg.series().size(), 2u);
  EXPECT_EQ(agg.series()[0].trec_name, "abandonment");
  EXPECT_EQ(agg.series()[1].trec_name, "first_click_rank");
  const uint32_t a = agg.ResolveGroup("A", {});
  agg.Add(a, 1000, std::vector<double>{0.0, 3.0}, false);
  agg.Add(a, 2000, std::vector<double>{1.0, std::nan("")}, true);
  agg.Add(a, 3000, std::vector<double>{0.0, 1.0}, false);
  const GroupStats& g = agg.group(a);
  EXPECT_EQ(g.requests, 3);
  EXPECT_EQ(g.all[0].count(), 3);
  EXPECT_DOUBLE_EQ(g.all[0].mean(), 1.0 / 3);
  EXPECT_EQ(g.all[1].count(), 2);
  EXPECT_DOUBLE_EQ(g.all[1].mean(), (3.0 + 1.0) / 2);
  // Rank 1 falls in le=1 (index 9), rank 3 above every bound (+Inf).
  EXPECT_EQ(g.histograms[1][9], 1);
  EXPECT_EQ(g.histograms[1][10], 1);
  const WindowTotals w0 = g.windows.Sum(0, 3000, 30'000);
  const WindowTotals w1 = g.windows.Sum(1, 3000, 30'000);
  EXPECT_EQ(w0.count, 3);
  EXPECT_DOUBLE_EQ(w0.sum, 1.0);
  EXPECT_EQ(w1.count, 2);
  EXPECT_DOUBLE_EQ(w1.sum, 4.0);
  EXPECT_DOUBLE_EQ(w1.sum_of_squares, 9.0 + 1.0);
}

TEST(AggregatorTest, VariantLimitFoldsIntoOther) {
  config::AggregationConfig c = TestConfig();
  c.max_variants = 2;
  Aggregator agg(c, BuildSeries({Measure::kPrecision}, {1}));
  const uint32_t a = agg.ResolveGroup("A", {});
  agg.ResolveGroup("B", {});
  const uint32_t x = agg.ResolveGroup("C", {});
  const uint32_t y = agg.ResolveGroup("D", {});
  EXPECT_EQ(x, y);
  EXPECT_EQ(agg.group(x).variant, "other");
  EXPECT_EQ(agg.overflowed()[0], 2);
  EXPECT_EQ(agg.ResolveGroup("A", {}), a);  // Known values still resolve.
}

TEST(AggregatorTest, AllowListsAndUnknownSegments) {
  config::AggregationConfig c = TestConfig();
  c.variants = {"A", "B"};
  c.segments = {"locale", "device"};
  c.segment_values["locale"] = {"de", "en"};
  c.max_segment_values = 1;
  Aggregator agg(c, BuildSeries({Measure::kPrecision}, {1}));
  const std::vector<std::string_view> de_mobile = {"de", "mobile"};
  const uint32_t g1 = agg.ResolveGroup("A", de_mobile);
  EXPECT_EQ(agg.group(g1).segment_values,
            (std::vector<std::string>{"de", "mobile"}));
  const std::vector<std::string_view> fr_desktop = {"fr", "desktop"};
  const uint32_t g2 = agg.ResolveGroup("Z", fr_desktop);
  // Z is not allowed; fr is not allowed; desktop is past the limit of 1.
  EXPECT_EQ(agg.group(g2).variant, "other");
  EXPECT_EQ(agg.group(g2).segment_values,
            (std::vector<std::string>{"other", "other"}));
  EXPECT_EQ(agg.overflowed(), (std::vector<int64_t>{1, 1, 1}));
  const std::vector<std::string_view> missing = {"en", ""};
  const uint32_t g3 = agg.ResolveGroup("B", missing);
  EXPECT_EQ(agg.group(g3).segment_values[1], "other");  // "unknown" > limit.
}

TEST(WindowRingTest, SumsWholeBucketsInTheWindow) {
  // 10 s buckets; a 30 s window ending at t covers the bucket holding t and
  // the two before it.
  WindowRing ring(10'000, 30'000, 1);
  ring.Add(0, std::vector<double>{1.0});         // Bucket 0.
  ring.Add(15'000, std::vector<double>{0.5});    // Bucket 1.
  ring.Add(35'000, std::vector<double>{0.25});   // Bucket 3.
  ring.Add(38'000, std::vector<double>{0.75});   // Bucket 3.
  WindowTotals t = ring.Sum(0, 39'999, 30'000);  // Buckets 1..3.
  EXPECT_EQ(t.count, 3);
  EXPECT_DOUBLE_EQ(t.sum, 0.5 + 0.25 + 0.75);
  EXPECT_DOUBLE_EQ(t.sum_of_squares, 0.25 + 0.0625 + 0.5625);
  EXPECT_DOUBLE_EQ(t.mean(), 0.5);
  // Sample variance of {0.5, 0.25, 0.75}: deviations 0, -0.25, 0.25.
  EXPECT_DOUBLE_EQ(t.variance(), (0.0625 + 0.0625) / 2);
  t = ring.Sum(0, 65'000, 30'000);  // Buckets 4..6: empty.
  EXPECT_EQ(t.count, 0);
  EXPECT_TRUE(std::isnan(t.mean()));
  // A bucket far ahead recycles old slots; old values never leak in.
  ring.Add(100'000, std::vector<double>{0.1});
  t = ring.Sum(0, 100'000, 30'000);
  EXPECT_EQ(t.count, 1);
  ring.Add(5'000, std::vector<double>{0.9});  // Too old for the ring: dropped.
  // A window far behind the newest bucket reads nothing, not stale slots.
  EXPECT_EQ(ring.Sum(0, 5'000, 30'000).count, 0);
}

TEST(WindowRingTest, BucketTotalsReadOneBucketEach) {
  // 10 s buckets, span 30 s: the ring holds 4 buckets.
  WindowRing ring(10'000, 30'000, 2);
  EXPECT_EQ(ring.num_buckets(), 4u);
  EXPECT_EQ(ring.bucket_ms(), 10'000);
  std::vector<WindowTotals> out(5);
  ring.BucketTotals(0, 39'999, out);  // Nothing added: all empty.
  for (const WindowTotals& t : out) EXPECT_EQ(t.count, 0);
  const double nan = std::nan("");
  ring.Add(15'000, std::vector<double>{0.5, nan});  // Bucket 1.
  ring.Add(35'000, std::vector<double>{0.25, 1});   // Bucket 3.
  ring.Add(38'000, std::vector<double>{0.75, 0});   // Bucket 3.
  // Five buckets ending with bucket 3: -1, 0, 1, 2, 3.
  ring.BucketTotals(0, 39'999, out);
  EXPECT_EQ(out[0].count, 0);
  EXPECT_EQ(out[1].count, 0);
  EXPECT_EQ(out[2].count, 1);
  EXPECT_DOUBLE_EQ(out[2].sum, 0.5);
  EXPECT_EQ(out[3].count, 0);
  EXPECT_EQ(out[4].count, 2);
  EXPECT_DOUBLE_EQ(out[4].sum, 1.0);
  EXPECT_DOUBLE_EQ(out[4].sum_of_squares, 0.0625 + 0.5625);
  // The second series counts its own defined values: NaN left out.
  ring.BucketTotals(1, 39'999, out);
  EXPECT_EQ(out[2].count, 0);
  EXPECT_EQ(out[4].count, 2);
  EXPECT_DOUBLE_EQ(out[4].sum, 1.0);
  // Bucket 6 recycles bucket 2's slot; bucket 1 is then beyond the span.
  ring.Add(61'000, std::vector<double>{0.1, 0.1});
  std::vector<WindowTotals> two(2);
  ring.BucketTotals(0, 69'999, two);  // Buckets 5, 6.
  EXPECT_EQ(two[0].count, 0);
  EXPECT_EQ(two[1].count, 1);
  ring.BucketTotals(0, 19'999, two);  // Buckets 0, 1: no longer held.
  EXPECT_EQ(two[0].count + two[1].count, 0);
}

}  // namespace
}  // namespace rankwatch::stream
