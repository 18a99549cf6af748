#include "daemon/exporter/pipeline_collector.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"

namespace rankwatch::exporter {
namespace {

using testing::HasLine;
using testing::JudgmentJson;
using testing::LinesWithPrefix;
using testing::ResultsJson;

// Cutoffs {1, 3}, segment label "locale", windows {5m}: 18 series per
// label group.
config::Config SmallConfig() {
  config::Config c;
  c.metrics.cutoffs = {3, 1};
  c.aggregation.segments = {"locale"};
  c.aggregation.windows = {std::chrono::minutes(5)};
  // Events are stamped from 0 s (event time) on: below the default
  // events.min_timestamp (2010).
  c.events.min_timestamp_ms = 0;
  return c;
}

class PipelineCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<stream::Pipeline>> p =
        stream::Pipeline::Create(SmallConfig(), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  void Results(const std::string& json) {
    pipeline_->OnPayload(stream::Topic::kResults, json, {0, offset_++});
  }
  void Judgment(const std::string& json) {
    pipeline_->OnPayload(stream::Topic::kJudgments, json, {0, offset_++});
  }

  // Four requests; the join window is 30 minutes, so each is filed at
  // (served + 30m) event time:
  //   r1  A/de       served 0s,   [a b c], a relevant   filed 1800 s
  //   r2  A/de       served 600s, [a b c], b relevant   filed 2400 s
  //   r3  B/fr       served 600s, [a b],   a grade 2    filed 2400 s
  //   r4  A/unknown  served 600s, [x],     no judgment  filed 2400 s (R = 0)
  // After FinishAll() the windows end at the newest filing time, 2400 s,
  // so the 5m window holds r2, r3 and r4 but not r1.
  void FeedExample() {
    Results(ResultsJson("r1", "A", 0, {"a", "b", "c"}, "de"));
    Judgment(JudgmentJson("r1", "a", 1, 1000));
    Results(ResultsJson("r2", "A", 600'000, {"a", "b", "c"}, "de"));
    Judgment(JudgmentJson("r2", "b", 1, 601'000));
    Results(ResultsJson("r3", "B", 600'000, {"a", "b"}, "fr"));
    Judgment(JudgmentJson("r3", "a", 2, 601'000));
    Results(ResultsJson("r4", "A", 600'000, {"x"}));
    pipeline_->FinishAll();
  }

  std::string Scrape() const {
    std::vector<prometheus::MetricFamily> families;
    PipelineCollector().Collect(testing::Snapshot(*pipeline_), &families);
    return SerializeText(families);
  }

  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
};

// Every label set of `name`'s histograms: its `_bucket` counts are
// non-decreasing in `le` order and the +Inf bucket equals `_count`.
void ExpectCumulativeBuckets(const std::string& text, const std::string& name) {
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> buckets;
  std::map<std::string, int64_t> counts;
  for (const std::string& line : LinesWithPrefix(text, name + "_bucket{")) {
    const size_t le = line.find(",le=\"");
    const size_t value = line.rfind(' ');
    const std::string labels =
        line.substr(name.size() + 8, le - (name.size() + 8));
    const std::string bound =
        line.substr(le + 5, line.find('"', le + 5) - (le + 5));
    buckets[labels].emplace_back(bound, std::stoll(line.substr(value + 1)));
  }
  for (const std::string& line : LinesWithPrefix(text, name + "_count{")) {
    const size_t close = line.rfind('}');
    counts[line.substr(name.size() + 7, close - (name.size() + 7))] =
        std::stoll(line.substr(close + 2));
  }
  ASSERT_FALSE(buckets.empty()) << name;
  EXPECT_EQ(buckets.size(), counts.size()) << name;
  for (const auto& [labels, series] : buckets) {
    SCOPED_TRACE(name + "{" + labels + "}");
    ASSERT_EQ(series.size(), 11u);  // 0.1 .. 1 and +Inf.
    for (size_t i = 1; i < series.size(); ++i) {
      EXPECT_GE(series[i].second, series[i - 1].second) << series[i].first;
    }
    EXPECT_EQ(series.back().first, "+Inf");
    EXPECT_EQ(series.back().second, counts[labels]);
  }
}

TEST_F(PipelineCollectorTest, BeforeAnyEventKnownSeriesAreZero) {
  const std::string text = Scrape();
  // Every topic x reason, at 0.
  const std::vector<std::string> rejected =
      LinesWithPrefix(text, "rankwatch_events_rejected_total{");
  EXPECT_EQ(rejected.size(), 2u * stream::kNumRejectReasons);
  for (const std::string& line : rejected) {
    EXPECT_TRUE(line.ends_with("} 0")) << line;
  }
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_events_rejected_total{topic=\"judgments\","
                      "reason=\"non_integer_relevance\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"results\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"judgments\"} 0"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_last_event_timestamp_seconds{topic=\"results\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_watermark_timestamp_seconds 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_requests_finalized_total 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_pending_requests 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_label_overflow_total{label=\"variant\"} 0"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_label_overflow_total{label=\"locale\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_aggregation_groups 0"));
  // Measure families are declared; they have no series before a group.
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_ndcg histogram"));
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_ndcg_squares_total counter"));
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_ndcg_mean gauge"));
  EXPECT_TRUE(LinesWithPrefix(text, "rankwatch_ndcg_").empty());
}

// The HELP texts come from each measure's row in metrics::kMeasureTable
// (its `help`), inside the collector's sentence per family; written out
// here as an operator reads them.
TEST_F(PipelineCollectorTest, HelpTextsNameTheMeasure) {
  const std::string text = Scrape();
  EXPECT_TRUE(HasLine(text,
                      "# HELP rankwatch_ndcg Per-list nDCG at k or, for "
                      "k=all, over the whole list (trec_eval ndcg_cut_k, "
                      "ndcg), one observation per list this process scored"))
      << text;
  EXPECT_TRUE(HasLine(text,
                      "# HELP rankwatch_judged_mean Running mean of fraction "
                      "of the top k that is judged (judged_k) over the window "
                      "(all: since start); NaN while the window holds no "
                      "list"))
      << text;
}

TEST_F(PipelineCollectorTest, HistogramOfHandComputedValues) {
  FeedExample();
  const std::string text = Scrape();
  // P@1 of A/de: r1 ranks relevant a first (1), r2 ranks unjudged a first
  // (0). 0 falls in the first bucket (le 0.1), 1 in the le 1 bucket.
  const std::string p1 =
      "rankwatch_precision_bucket{variant=\"A\",k=\"1\","
      "locale=\"de\",le=";
  EXPECT_TRUE(HasLine(text, p1 + "\"0.1\"} 1"));
  EXPECT_TRUE(HasLine(text, p1 + "\"0.5\"} 1"));
  EXPECT_TRUE(HasLine(text, p1 + "\"0.9\"} 1"));
  EXPECT_TRUE(HasLine(text, p1 + "\"1\"} 2"));
  EXPECT_TRUE(HasLine(text, p1 + "\"+Inf\"} 2"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_precision_sum{variant=\"A\",k=\"1\",locale=\"de\"} 1"));
  EXPECT_TRUE(HasLine(
      text,
      "rankwatch_precision_count{variant=\"A\",k=\"1\",locale=\"de\"} 2"));
  // 1^2 + 0^2.
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_precision_squares_total{variant=\"A\",k="
                      "\"1\",locale=\"de\"} 1"));

  // P@3 of A/de: one hit in three for both, 1/3 each: bucket le 0.4.
  const std::string p3 =
      "rankwatch_precision_bucket{variant=\"A\",k=\"3\","
      "locale=\"de\",le=";
  EXPECT_TRUE(HasLine(text, p3 + "\"0.3\"} 0"));
  EXPECT_TRUE(HasLine(text, p3 + "\"0.4\"} 2"));
  EXPECT_TRUE(HasLine(text, p3 + "\"+Inf\"} 2"));
  // 1/3 + 1/3 and 1/9 + 1/9.
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_precision_sum{variant=\"A\",k=\"3\",locale="
                      "\"de\"} 0.6666666666666666"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_precision_squares_total{variant=\"A\",k="
                      "\"3\",locale=\"de\"} 0.2222222222222222"));

  // Uncut reciprocal rank of A/de: 1/1 (r1) and 1/2 (r2); squares 1 + 1/4.
  const std::string rr = "{variant=\"A\",k=\"all\",locale=\"de\"}";
  EXPECT_TRUE(HasLine(text, "rankwatch_reciprocal_rank_sum" + rr + " 1.5"));
  EXPECT_TRUE(HasLine(text, "rankwatch_reciprocal_rank_count" + rr + " 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_reciprocal_rank_squares_total" + rr + " 1.25"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_reciprocal_rank_bucket{variant=\"A\",k="
                      "\"all\",locale=\"de\",le=\"0.5\"} 1"));

  // B/fr: r3 ranks its grade-2 doc first: nDCG@1 = 1, R-precision = 1.
  EXPECT_TRUE(HasLine(
      text, "rankwatch_ndcg_sum{variant=\"B\",k=\"1\",locale=\"fr\"} 1"));
  EXPECT_TRUE(HasLine(
      text,
      "rankwatch_r_precision_sum{variant=\"B\",k=\"all\",locale=\"fr\"} 1"));
  // r4 has no segment ("unknown") and no judgment: 0 everywhere, counted.
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_ndcg_count{variant=\"A\",k=\"all\",locale="
                      "\"unknown\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_ndcg_bucket{variant=\"A\",k=\"all\",locale="
                      "\"unknown\",le=\"0.1\"} 1"));
  // judged@3 of B/fr: one judged doc in the top 3 = 1/3.
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_judged_sum{variant=\"B\",k=\"3\",locale="
                      "\"fr\"} 0.3333333333333333"));
}

TEST_F(PipelineCollectorTest, BucketsAreCumulativeAndEndWithCount) {
  FeedExample();
  const std::string text = Scrape();
  for (metrics::Measure m : metrics::kDefaultMeasures) {
    ExpectCumulativeBuckets(
        text, "rankwatch_" + std::string(metrics::MeasureName(m)));
  }
}

TEST_F(PipelineCollectorTest, ClickMeasuresAreOptIn) {
  const std::string text = Scrape();
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_ndcg histogram"));
  EXPECT_FALSE(HasLine(text, "# TYPE rankwatch_ctr histogram"));
  EXPECT_FALSE(HasLine(text, "# TYPE rankwatch_abandonment histogram"));
}

// The rank correlations reach the exporter (the pipeline's evaluator
// computes them when configured). SciPy 1.10.1, x = -rank over the judged
// docs:
//   s1 A/de  [a b c] grades 2, 0, 1: spearmanr([-1, -2, -3], [2, 0, 1]) =
//            0.5, kendalltau 0.33333333333333337.
//   s2 A/de  [a b c] only b judged: undefined, left out of the count.
//   s3 B/fr  [a b]   grades 2, 0: spearmanr([-1, -2], [2, 0]) =
//            0.9999999999999999 (rankwatch: 1), kendalltau 1.0.
TEST_F(PipelineCollectorTest, RankCorrelationMeasures) {
  config::Config c = SmallConfig();
  c.metrics.measures = {metrics::Measure::kNdcg, metrics::Measure::kSpearman,
                        metrics::Measure::kKendallTau};
  StatusOr<std::unique_ptr<stream::Pipeline>> p =
      stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  Results(ResultsJson("s1", "A", 0, {"a", "b", "c"}, "de"));
  Judgment(JudgmentJson("s1", "a", 2, 1000));
  Judgment(JudgmentJson("s1", "b", 0, 1000));
  Judgment(JudgmentJson("s1", "c", 1, 1000));
  Results(ResultsJson("s2", "A", 600'000, {"a", "b", "c"}, "de"));
  Judgment(JudgmentJson("s2", "b", 1, 601'000));
  Results(ResultsJson("s3", "B", 600'000, {"a", "b"}, "fr"));
  Judgment(JudgmentJson("s3", "a", 2, 601'000));
  Judgment(JudgmentJson("s3", "b", 0, 601'000));
  pipeline_->FinishAll();
  const std::string text = Scrape();
  const std::string de = "{variant=\"A\",k=\"all\",locale=\"de\"}";
  const std::string fr = "{variant=\"B\",k=\"all\",locale=\"fr\"}";
  EXPECT_TRUE(HasLine(text, "rankwatch_spearman_sum" + de + " 0.5"));
  EXPECT_TRUE(HasLine(text, "rankwatch_spearman_count" + de + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_kendall_tau_count" + de + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_spearman_sum" + fr + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_kendall_tau_sum" + fr + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_kendall_tau_count" + fr + " 1"));
  // Uncut only: no k="1" or k="3" series.
  EXPECT_EQ(text.find("rankwatch_spearman_sum{variant=\"A\",k=\"1\""),
            std::string::npos);
}

// The click measures on FeedExample's requests, whose judgments are clicks
// (grade >= 1). Hand calculation per request (k = 1, 3):
//   r1 A/de  click on a (rank 1): ctr 1, 1; clicks 1, 1; abandonment 0;
//            first_click_rank 1; recip_rank_first_click 1.
//   r2 A/de  click on b (rank 2): ctr 0, 1; clicks 0, 1; abandonment 0;
//            first_click_rank 2; recip_rank_first_click 1/2.
//   r3 B/fr  click on a (grade 2, rank 1): as r1.
//   r4 A/unknown no click: ctr 0, 0; clicks 0, 0; abandonment 1;
//            first_click_rank undefined (left out); recip 0.
TEST_F(PipelineCollectorTest, ClickMeasuresOfHandComputedValues) {
  config::Config c = SmallConfig();
  c.metrics.measures = {metrics::Measure::kReciprocalRank,
                        metrics::Measure::kCtr,
                        metrics::Measure::kClicks,
                        metrics::Measure::kAbandonment,
                        metrics::Measure::kFirstClickRank,
                        metrics::Measure::kRecipRankFirstClick};
  StatusOr<std::unique_ptr<stream::Pipeline>> p =
      stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  FeedExample();
  const std::string text = Scrape();
  const std::string de1 = "{variant=\"A\",k=\"1\",locale=\"de\"}";
  const std::string de3 = "{variant=\"A\",k=\"3\",locale=\"de\"}";
  const std::string de = "{variant=\"A\",k=\"all\",locale=\"de\"}";
  const std::string unknown = "{variant=\"A\",k=\"all\",locale=\"unknown\"}";
  EXPECT_TRUE(HasLine(text, "rankwatch_ctr_sum" + de1 + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_ctr_count" + de1 + " 2"));
  EXPECT_TRUE(HasLine(text, "rankwatch_ctr_sum" + de3 + " 2"));
  EXPECT_TRUE(HasLine(text, "rankwatch_clicks_sum" + de1 + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_clicks_sum" + de3 + " 2"));
  EXPECT_TRUE(HasLine(text, "rankwatch_abandonment_sum" + de + " 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_abandonment_count" + de + " 2"));
  EXPECT_TRUE(HasLine(text, "rankwatch_abandonment_sum" + unknown + " 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_abandonment_count" + unknown + " 1"));
  // first_click_rank: 1 and 2 for A/de (squares 1 + 4); r4 is left out, so
  // A/unknown has a series with no observation and no mean.
  EXPECT_TRUE(HasLine(text, "rankwatch_first_click_rank_sum" + de + " 3"));
  EXPECT_TRUE(HasLine(text, "rankwatch_first_click_rank_count" + de + " 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_first_click_rank_squares_total" + de + " 5"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_first_click_rank_bucket{variant=\"A\",k="
                      "\"all\",locale=\"de\",le=\"1\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_first_click_rank_bucket{variant=\"A\",k="
                      "\"all\",locale=\"de\",le=\"+Inf\"} 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_first_click_rank_count" + unknown + " 0"));
  const std::string fcr_mean =
      "rankwatch_first_click_rank_mean{variant=\"A\",k=\"all\",locale="
      "\"de\",window=";
  EXPECT_TRUE(HasLine(text, fcr_mean + "\"all\"} 1.5"));
  EXPECT_TRUE(HasLine(text, fcr_mean + "\"5m\"} 2"));  // r2 only.
  // No list with a click: no mean (prometheus-cpp writes NaN as "Nan").
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_first_click_rank_mean{variant=\"A\",k="
                      "\"all\",locale=\"unknown\",window=\"5m\"} Nan"));
  // recip_rank_first_click is reciprocal_rank under binary clicks: 1 + 1/2.
  EXPECT_TRUE(
      HasLine(text, "rankwatch_recip_rank_first_click_sum" + de + " 1.5"));
  EXPECT_TRUE(HasLine(text, "rankwatch_reciprocal_rank_sum" + de + " 1.5"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_recip_rank_first_click_sum" + unknown + " 0"));
  for (const char* name :
       {"rankwatch_ctr", "rankwatch_clicks", "rankwatch_abandonment",
        "rankwatch_first_click_rank", "rankwatch_recip_rank_first_click"}) {
    ExpectCumulativeBuckets(text, name);
    EXPECT_TRUE(HasLine(
        text, std::string("# TYPE ") + name + "_squares_total counter"));
    EXPECT_TRUE(HasLine(text, std::string("# TYPE ") + name + "_mean gauge"));
  }
}

TEST_F(PipelineCollectorTest, SeriesPerLabelGroup) {
  FeedExample();
  const std::string text = Scrape();
  // 3 groups x 18 series; histograms: 13 lines each; means: 2 windows.
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_precision_count{").size(), 6u);
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_ndcg_count{").size(), 9u);
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_r_precision_count{").size(), 3u);
  EXPECT_EQ(LinesWithPrefix(text, "rankwatch_ndcg_mean{").size(), 18u);
  EXPECT_TRUE(HasLine(text, "rankwatch_aggregation_groups 3"));
}

TEST_F(PipelineCollectorTest, MeansPerWindow) {
  FeedExample();
  std::string text = Scrape();
  const std::string p1 =
      "rankwatch_precision_mean{variant=\"A\",k=\"1\",locale=\"de\",window=";
  // all: (1 + 0) / 2. 5m: windows end at 2400 s, so only r2 (0) is in.
  EXPECT_TRUE(HasLine(text, p1 + "\"all\"} 0.5"));
  EXPECT_TRUE(HasLine(text, p1 + "\"5m\"} 0"));
  const std::string rr =
      "rankwatch_reciprocal_rank_mean{variant=\"A\",k="
      "\"all\",locale=\"de\",window=";
  EXPECT_TRUE(HasLine(text, rr + "\"all\"} 0.75"));  // (1 + 1/2) / 2.
  EXPECT_TRUE(HasLine(text, rr + "\"5m\"} 0.5"));    // r2 only.

  // A request filed 20 minutes later moves the windows' end: A/de's 5m
  // window is then empty, and its mean NaN.
  Results(ResultsJson("r5", "C", 1'800'000, {"a"}, "de"));
  pipeline_->FinishAll();
  text = Scrape();
  EXPECT_TRUE(HasLine(text, p1 + "\"all\"} 0.5"));
  EXPECT_TRUE(HasLine(text, p1 + "\"5m\"} Nan"));
}

TEST_F(PipelineCollectorTest, GroupWithoutValuesHasNaNMeans) {
  // The group exists once a results event names it; nothing is scored
  // until its window closes.
  Results(ResultsJson("r1", "A", 0, {"a"}, "de"));
  const std::string text = Scrape();
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_ndcg_mean{variant=\"A\",k=\"1\",locale=\"de\","
                      "window=\"all\"} Nan"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_ndcg_mean{variant=\"A\",k=\"1\",locale=\"de\","
                      "window=\"5m\"} Nan"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_ndcg_count{variant=\"A\",k=\"1\",locale=\"de\"} 0"));
  EXPECT_TRUE(HasLine(text, "rankwatch_pending_requests 1"));
}

TEST_F(PipelineCollectorTest, PipelineCounters) {
  FeedExample();
  const std::string text = Scrape();
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"results\"} 4"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"judgments\"} 3"));
  EXPECT_TRUE(HasLine(text, "rankwatch_requests_finalized_total 4"));
  EXPECT_TRUE(HasLine(text, "rankwatch_requests_scored_total 4"));
  EXPECT_TRUE(HasLine(text, "rankwatch_requests_without_relevant_total 1"));
  EXPECT_TRUE(HasLine(text, "rankwatch_pending_requests 0"));
  // Newest event times: results 600 s, judgments 601 s.
  EXPECT_TRUE(HasLine(
      text, "rankwatch_last_event_timestamp_seconds{topic=\"results\"} 600"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_last_event_timestamp_seconds{topic=\"judgments\"} 601"));
  // One source (partition 0): its newest event time, 601 s, minus the
  // default lateness of 1 minute.
  EXPECT_TRUE(HasLine(text, "rankwatch_watermark_timestamp_seconds 541"));
  EXPECT_TRUE(HasLine(text, "rankwatch_late_judgments_total 0"));
}

TEST_F(PipelineCollectorTest, RejectedCountersIncrement) {
  FeedExample();
  EXPECT_TRUE(HasLine(Scrape(),
                      "rankwatch_events_rejected_total{topic=\"results\","
                      "reason=\"malformed_json\"} 0"));
  Results("{not json");
  Results(ResultsJson("r9", "A", 1, {}, "de"));
  Judgment(R"({"request_id":"r9","doc_id":"a","relevance":1.5,"timestamp":1})");
  const std::string text = Scrape();
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_events_rejected_total{topic=\"results\","
                      "reason=\"malformed_json\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_events_rejected_total{topic=\"results\","
                      "reason=\"empty_results\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_events_rejected_total{topic=\"judgments\","
                      "reason=\"non_integer_relevance\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_events_rejected_total{topic=\"judgments\","
                      "reason=\"malformed_json\"} 0"));
  // Rejected events count as consumed.
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"results\"} 6"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_events_consumed_total{topic=\"judgments\"} 4"));
}

// schema.fields: per field and label group, counters of the values this
// process scored and the state's means, labelled `field` (not k); what
// the events held per field. r1 and r2 (A/de) carry 120 and 80 ms: count
// 2, sum 200, squares 120^2 + 80^2 = 20800, mean 100; r3 (B/fr) a string
// (wrong_type): no value; r4 (A, no locale) none (absent).
TEST(PipelineCollectorFieldTest, FieldsOfResultsEvents) {
  config::Config config = SmallConfig();
  config.schema.fields = {{"latency_ms", "t.latency_ms", false, 10}};
  FakeClock clock(1'700'000'000'000);
  StatusOr<std::unique_ptr<stream::Pipeline>> p =
      stream::Pipeline::Create(config, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  stream::Pipeline& pipeline = **p;
  int64_t offset = 0;
  const auto results = [&](const std::string& id, const std::string& variant,
                           const std::string& locale, const std::string& t) {
    std::string json = "{\"request_id\":\"" + id + "\",\"variant\":\"" +
                       variant + "\",\"timestamp\":600000,\"results\":[\"a\"]";
    if (!locale.empty())
      json += ",\"segments\":{\"locale\":\"" + locale + "\"}";
    json += t + "}";
    pipeline.OnPayload(stream::Topic::kResults, json, {0, offset++});
  };
  results("r1", "A", "de", R"(,"t":{"latency_ms":120})");
  results("r2", "A", "de", R"(,"t":{"latency_ms":80})");
  results("r3", "B", "fr", R"(,"t":{"latency_ms":"slow"})");
  results("r4", "A", "", "");
  pipeline.FinishAll();
  std::vector<prometheus::MetricFamily> families;
  PipelineCollector().Collect(testing::Snapshot(pipeline), &families);
  const std::string text = SerializeText(families);
  const std::string de = "{variant=\"A\",field=\"latency_ms\",locale=\"de\"";
  EXPECT_TRUE(HasLine(text, "rankwatch_field_count_total" + de + "} 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_field_scored_sum_values" + de + "} 200"));
  EXPECT_TRUE(HasLine(text, "# TYPE rankwatch_field_scored_sum_values gauge"));
  EXPECT_TRUE(HasLine(text, "rankwatch_field_squares_total" + de + "} 20800"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_field_mean" + de + ",window=\"all\"} 100"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_field_window_lists" + de + ",window=\"all\"} 2"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_field_mean{variant=\"B\",field=\"latency_ms\","
                      "locale=\"fr\",window=\"all\"} Nan"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_field_events_total{field=\"latency_ms\","
                      "reason=\"present\"} 2"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_field_events_total{field=\"latency_ms\","
                      "reason=\"wrong_type\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_field_events_total{field=\"latency_ms\","
                      "reason=\"absent\"} 1"));
  EXPECT_TRUE(HasLine(
      text, "rankwatch_field_info{field=\"latency_ms\",better=\"lower\"} 1"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_field_mixture_sd{field=\"latency_ms\"} 10"));
  // Not a measure: no histogram, no k label.
  EXPECT_TRUE(LinesWithPrefix(text, "rankwatch_latency_ms").empty());
  EXPECT_TRUE(LinesWithPrefix(text, "rankwatch_field_bucket").empty());
}

TEST_F(PipelineCollectorTest, NoFieldFamiliesWithoutSchemaFields) {
  FeedExample();
  EXPECT_TRUE(LinesWithPrefix(Scrape(), "rankwatch_field_").empty());
}

TEST(PipelineCollectorOverflowTest, FoldedLabelsAreCounted) {
  config::Config c = SmallConfig();
  c.aggregation.variants = {"A"};
  c.aggregation.max_segment_values = 1;
  FakeClock clock;
  StatusOr<std::unique_ptr<stream::Pipeline>> p =
      stream::Pipeline::Create(c, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  stream::Pipeline& pipeline = **p;
  pipeline.OnPayload(stream::Topic::kResults,
                     ResultsJson("r1", "A", 0, {"a"}, "de"), {0, 0});
  pipeline.OnPayload(stream::Topic::kResults,
                     ResultsJson("r2", "B", 0, {"a"}, "fr"), {0, 1});
  pipeline.OnPayload(stream::Topic::kResults,
                     ResultsJson("r3", "Z", 0, {"a"}, "de"), {0, 2});
  pipeline.FinishAll();
  std::vector<prometheus::MetricFamily> families;
  PipelineCollector().Collect(testing::Snapshot(pipeline), &families);
  const std::string text = SerializeText(families);
  // B and Z are not allowed; fr is past the one-value limit.
  EXPECT_TRUE(
      HasLine(text, "rankwatch_label_overflow_total{label=\"variant\"} 2"));
  EXPECT_TRUE(
      HasLine(text, "rankwatch_label_overflow_total{label=\"locale\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_precision_count{variant=\"other\",k=\"1\","
                      "locale=\"other\"} 1"));
  EXPECT_TRUE(HasLine(text,
                      "rankwatch_precision_count{variant=\"other\",k=\"1\","
                      "locale=\"de\"} 1"));
}

}  // namespace
}  // namespace rankwatch::exporter
