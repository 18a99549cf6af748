#include "daemon/stream/aggregation/aggregator.h"

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using metrics::Measure;

// HistogramBucket against its definition, the number of bounds below the
// value, counted here one bound at a time: on a grid of steps of 1/1024
// (exact in binary) from -2 to 3, on every bound and both its neighbouring
// doubles, and on the values outside: infinities, NaN, huge and tiny ones.
TEST(HistogramBucketTest, CountsTheBoundsBelowTheValue) {
  const auto bounds_below = [](double v) {
    size_t n = 0;
    for (const double bound : kHistogramBounds) n += bound < v ? 1 : 0;
    return n;
  };
  std::vector<double> values;
  for (int i = -2048; i <= 3072; ++i) values.push_back(i / 1024.0);
  for (const double bound : kHistogramBounds) {
    values.push_back(bound);
    values.push_back(std::nextafter(bound, -1.0));
    values.push_back(std::nextafter(bound, 2.0));
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (const double v : {inf, -inf, std::nan(""), 1e300, -1e300, 1e-300, -0.0,
                         0.0, 1.1, std::nextafter(1.1, 0.0), 10.0}) {
    values.push_back(v);
  }
  for (const double v : values) {
    EXPECT_EQ(HistogramBucket(v), bounds_below(v)) << v;
  }
  // Hand-counted: 0.3 is on the bound 0.3 (upper-inclusive: 2 below it),
  // 0.35 has 0.1, 0.2, 0.3 below it, and 2.0 all ten.
  EXPECT_EQ(HistogramBucket(0.3), 2u);
  EXPECT_EQ(HistogramBucket(0.35), 3u);
  EXPECT_EQ(HistogramBucket(2.0), 10u);
}

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

// Issue 43: variants experiments name are kept however many others come
// first; the others share what is left of max_variants.
TEST(AggregatorTest, ReservedVariantsAreNeverFolded) {
  config::AggregationConfig c = TestConfig();
  c.max_variants = 3;
  Aggregator agg(c, BuildSeries({Measure::kPrecision}, {1}));
  const std::vector<std::string> named = {"A", "B"};
  agg.ReserveVariants(named);
  // One slot left (3 - 2): X takes it, Y and Z fold into "other".
  EXPECT_EQ(agg.group(agg.ResolveGroup("X", {})).variant, "X");
  EXPECT_EQ(agg.group(agg.ResolveGroup("Y", {})).variant, "other");
  EXPECT_EQ(agg.group(agg.ResolveGroup("Z", {})).variant, "other");
  EXPECT_EQ(agg.group(agg.ResolveGroup("A", {})).variant, "A");
  EXPECT_EQ(agg.group(agg.ResolveGroup("B", {})).variant, "B");
  EXPECT_EQ(agg.overflowed()[0], 2);
  // A reload naming a new variant after the slots filled keeps it too
  // (past the limit: 4 named and seen values of 3), and reserving again
  // what is there changes nothing.
  const std::vector<std::string> more = {"A", "B", "C"};
  agg.ReserveVariants(more);
  EXPECT_EQ(agg.group(agg.ResolveGroup("C", {})).variant, "C");
  EXPECT_EQ(agg.group(agg.ResolveGroup("W", {})).variant, "other");
  EXPECT_EQ(agg.overflowed()[0], 3);
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

}  // namespace
}  // namespace rankwatch::stream
