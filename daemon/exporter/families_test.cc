#include "daemon/exporter/families.h"

#include <array>
#include <cstdint>

#include "gtest/gtest.h"

namespace rankwatch::exporter {
namespace {

TEST(FamiliesTest, HistogramBucketsBecomeCumulative) {
  prometheus::MetricFamily f =
      MakeFamily("x", "help", prometheus::MetricType::Histogram);
  const std::array<double, 3> bounds = {0.1, 0.5, 1.0};
  const std::array<int64_t, 4> counts = {2, 0, 3, 1};  // 1 above 1.0.
  AddHistogram(&f, {{"k", "1"}}, bounds, counts, 2.5);
  ASSERT_EQ(f.metric.size(), 1u);
  const prometheus::ClientMetric::Histogram& h = f.metric[0].histogram;
  ASSERT_EQ(h.bucket.size(), 3u);
  EXPECT_EQ(h.bucket[0].upper_bound, 0.1);
  EXPECT_EQ(h.bucket[0].cumulative_count, 2u);
  EXPECT_EQ(h.bucket[1].cumulative_count, 2u);
  EXPECT_EQ(h.bucket[2].upper_bound, 1.0);
  EXPECT_EQ(h.bucket[2].cumulative_count, 5u);
  EXPECT_EQ(h.sample_count, 6u);  // The +Inf bucket.
  EXPECT_EQ(h.sample_sum, 2.5);
  EXPECT_EQ(f.metric[0].label[0].name, "k");
}

TEST(FamiliesTest, TimestampSeconds) {
  EXPECT_EQ(TimestampSeconds(INT64_MIN), 0.0);
  EXPECT_EQ(TimestampSeconds(0), 0.0);
  EXPECT_EQ(TimestampSeconds(1'700'000'000'500), 1'700'000'000.5);
}

}  // namespace
}  // namespace rankwatch::exporter

namespace rankwatch::exporter {
namespace {

// Label values must be UTF-8 (Prometheus refuses a scrape otherwise):
// valid text passes, other bytes become U+FFFD (EF BF BD), long text is cut
// at a character boundary and marked with U+2026 (E2 80 A6).
TEST(FamiliesTest, CutoffLabel) {
  EXPECT_EQ(CutoffLabel(10), "10");
  EXPECT_EQ(CutoffLabel(0), "all");
}

TEST(FamiliesTest, LabelTextIsUtf8AndBounded) {
  EXPECT_EQ(LabelText("cheap flights", 200), "cheap flights");
  EXPECT_EQ(LabelText("d\xc3\xa9j\xc3\xa0 vu", 200), "d\xc3\xa9j\xc3\xa0 vu");
  EXPECT_EQ(LabelText("a\xff"
                      "b",
                      200),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(LabelText("\xed\xa0\x80", 200),  // A surrogate: three bytes.
            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(LabelText("abcdef", 4), "abcd\xe2\x80\xa6");
  // "é" (2 bytes) does not fit after "abc" in 4 bytes: cut before it.
  EXPECT_EQ(LabelText("abc\xc3\xa9", 4), "abc\xe2\x80\xa6");
  EXPECT_EQ(LabelText("abcd", 4), "abcd");
  EXPECT_EQ(LabelText("", 4), "");
}

}  // namespace
}  // namespace rankwatch::exporter
