#include "metrics/query_summary.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/string_index.h"
#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

void Add(QuerySummary* s, const std::string& q, double v) {
  s->Add(q, HashBytes(q), std::vector<double>{v});
}

// By hand, two counters: a, a, b fill them (a 2, b 1); c takes b's counter
// (the smallest): count 1 + 1 = 2, error 1, and its statistics restart with
// c's value alone.
TEST(QuerySummaryTest, SpaceSavingByHand) {
  QuerySummary s(2, 1);
  Add(&s, "a", 0.5);
  Add(&s, "a", 0.7);
  Add(&s, "b", 0.1);
  Add(&s, "c", 0.9);
  EXPECT_EQ(s.total(), 4);
  ASSERT_EQ(s.entries().size(), 2u);
  const QuerySummary::Entry* a = s.Find(HashBytes("a"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 2);
  EXPECT_EQ(a->error, 0);
  EXPECT_EQ(a->series[0].count(), 2);
  EXPECT_NEAR(a->series[0].mean(), 0.6, 1e-15);
  EXPECT_EQ(s.Find(HashBytes("b")), nullptr);
  const QuerySummary::Entry* c = s.Find(HashBytes("c"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->query, "c");
  EXPECT_EQ(c->count, 2);
  EXPECT_EQ(c->error, 1);
  EXPECT_EQ(c->series[0].count(), 1);
  EXPECT_EQ(c->series[0].mean(), 0.9);
  // NaN: a list without the series counts for the query, not the series.
  s.Add("a", HashBytes("a"), std::vector<double>{std::nan("")});
  EXPECT_EQ(a->count, 3);
  EXPECT_EQ(a->series[0].count(), 2);
}

// Property, on Zipf streams (exponent 1.1 over 1,000 queries, 30,000 lists,
// 100 counters) against exact counts: for every tracked query count - error
// <= true count <= count; every query seen more than total / capacity times
// is tracked; a query tracked from its first list (error 0) has exactly the
// statistics of all its values. A failure prints the seed.
TEST(QuerySummaryTest, SpaceSavingBoundsOnZipfStreams) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  constexpr int kQueries = 1000, kLists = 30000, kCapacity = 100;
  std::vector<double> cdf(kQueries);
  double sum = 0;
  for (int i = 0; i < kQueries; ++i) {
    sum += std::pow(i + 1, -1.1);
    cdf[i] = sum;
  }
  QuerySummary s(kCapacity, 1);
  std::map<std::string, int64_t> exact;
  std::map<std::string, RunningStats> values;
  for (int n = 0; n < kLists; ++n) {
    const double u = rng.Uniform() * sum;
    const int q = static_cast<int>(std::lower_bound(cdf.begin(), cdf.end(), u) -
                                   cdf.begin());
    const std::string query = "query " + std::to_string(q);
    const double v = rng.Uniform();
    s.Add(query, HashBytes(query), std::vector<double>{v});
    ++exact[query];
    values[query].Add(v);
  }
  EXPECT_EQ(s.total(), kLists);
  EXPECT_EQ(s.entries().size(), static_cast<size_t>(kCapacity));
  for (const QuerySummary::Entry& e : s.entries()) {
    const int64_t truth = exact[e.query];
    EXPECT_LE(e.count - e.error, truth) << e.query;
    EXPECT_GE(e.count, truth) << e.query;
    if (e.error == 0) {
      EXPECT_EQ(e.series[0].count(), truth) << e.query;
      EXPECT_NEAR(e.series[0].mean(), values[e.query].mean(), 1e-12);
    }
    EXPECT_EQ(s.Find(HashBytes(e.query)), &e);
  }
  for (const auto& [query, count] : exact) {
    if (count * kCapacity > kLists) {
      EXPECT_NE(s.Find(HashBytes(query)), nullptr) << query << " " << count;
    }
  }
  EXPECT_LT(s.bytes(), size_t{100} * 200);
}

}  // namespace
}  // namespace rankwatch::metrics
