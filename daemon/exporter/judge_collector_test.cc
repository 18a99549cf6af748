#include "daemon/exporter/judge_collector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;

// human and umbrela graded 8 items alike, x and y below; human and clicks
// one item, so their statistics are undefined. Figures: scikit-learn 1.x
// cohen_kappa_score(x, y) = 0.6595744680851063 (linear weights:
// 0.7837837837837838), krippendorff.alpha(ordinal) = 0.8792726550079492.
stream::PipelineSnapshot Judged() {
  const std::vector<int> x = {2, 1, 0, 0, 3, 1, 2, 0};
  const std::vector<int> y = {2, 1, 1, 0, 3, 2, 2, 0};
  metrics::GradePairs hu;
  for (size_t i = 0; i < x.size(); ++i) hu.Add(x[i], y[i]);
  metrics::GradePairs hc;
  hc.Add(2, 1);
  stream::PipelineSnapshot s;
  s.judges = {"human", "umbrela", "clicks"};
  s.agreement.push_back(trec::AgreementOf(hu, 0, 1));
  s.agreement.back().first = 0;
  s.agreement.back().second = 1;
  s.agreement.push_back(trec::AgreementOf(hc, 7, 0));
  s.agreement.back().first = 0;
  s.agreement.back().second = 2;
  return s;
}

Scrape Collect(const stream::PipelineSnapshot& snapshot) {
  std::vector<prometheus::MetricFamily> families;
  JudgeCollector().Collect(snapshot, &families);
  return Scrape::Parse(SerializeText(families));
}

TEST(JudgeCollectorTest, ExportsEachPairsAgreement) {
  stream::PipelineSnapshot judged = Judged();
  judged.agreement_refused = 7;
  const Scrape s = Collect(judged);
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_refused_total", {}), 7);
  // Since start: window "all", the only window of a snapshot without any.
  EXPECT_EQ(s.LabelValues("rankwatch_judge_agreement_pairs", "window"),
            std::vector<std::string>{"all"});
  const std::map<std::string, std::string> hu = {
      {"first", "human"}, {"second", "umbrela"}, {"window", "all"}};
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", hu), 8);
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "umbrela"}, {"judge", "umbrela"}}),
      1);
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "umbrela"}, {"judge", "human"}}),
      0);
  std::map<std::string, std::string> kappa = hu;
  kappa["statistic"] = "kappa";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", kappa), 0.6595744680851063,
              1e-12);
  EXPECT_LT(s.Sum("rankwatch_judge_agreement_lower", kappa),
            0.6595744680851063);
  EXPECT_LE(s.Sum("rankwatch_judge_agreement_upper", kappa), 1.0);
  std::map<std::string, std::string> weighted = hu;
  weighted["statistic"] = "weighted_kappa";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", weighted), 0.7837837837837838,
              1e-12);
  std::map<std::string, std::string> alpha = hu;
  alpha["statistic"] = "alpha";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", alpha), 0.8792726550079492,
              1e-12);
  // human and clicks: one item, nothing defined but the counts.
  const std::map<std::string, std::string> hc = {{"first", "human"},
                                                 {"second", "clicks"}};
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", hc), 1);
  EXPECT_FALSE(s.Has("rankwatch_judge_agreement", hc));
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "clicks"}, {"judge", "human"}}),
      7);
}

TEST(JudgeCollectorTest, NothingWithoutJudges) {
  EXPECT_TRUE(Collect(stream::PipelineSnapshot()).samples().empty());
}

using stream::kNow;                           // stream_test_util.h
constexpr int64_t kEarly = kNow - 3'600'000;  // The early lists.
constexpr int64_t kLate = kEarly + 600'000;   // The late ones, 10 min on.

// A pipeline with two judges, human (trusted) and llm (cheap, the default
// judge), P@2 alone, the default windows {5m, 1h} and an experiment A vs B,
// fed the lists below; served docs [a, b] each, grades per judge:
//
//   list  variant served   human     llm       human P@2  llm P@2  unjudged
//   r1    A       t0       a=1 b=1   a=1 b=0   1          0.5      0
//   r5    B       t0       a=1 b=0   a=1 b=1   0.5        1        0
//   r2    A       late     a=0 b=1   a=1 b=1   0.5        1        0
//   r3    A       late+1s  -         b=1       -          0.5      0.5
//   r4    A       late+2s  -         a=0       -          0        0.5
//   r6    B       late     -         a=1       -          0.5      0.5
//   r7    B       late+1s  -         -         -          -        1
//
// A list a judge labelled nothing of is not in its figures ("-"); r4's
// llm P@2 is 0 (zero_relevant: score_zero). Lists
// are filed when their 10 s join window closes; the 5m window ends at the
// newest (late+12s), so it holds the late lists only, the 1h window all.
class JudgeSeriesTest : public ::testing::Test {
 protected:
  JudgeSeriesTest() {
    config_.join.window = std::chrono::seconds(10);
    config_.metrics.cutoffs = {2};
    config_.metrics.measures = {metrics::Measure::kPrecision};
    config_.judges.names = {"human", "llm"};
    config_.judges.default_judge = "llm";
    config_.judges.ppi.trusted = "human";
    config_.judges.ppi.cheap = "llm";
    config_.experiments = {{"ranker", "A", {"B"}}};
  }

  void List(const std::string& id, const std::string& variant, int64_t t) {
    Feed(stream::Topic::kResults, R"({"request_id":")" + id +
                                      R"(","variant":")" + variant +
                                      R"(","timestamp":)" + std::to_string(t) +
                                      R"(,"results":["a","b"]})");
  }
  // `grades`: the batch's entries, e.g. {"a", 1}.
  // Nothing when `judge` is not configured.
  void Grade(const std::string& id, const std::string& judge, int64_t t,
             const std::vector<std::pair<std::string, int>>& grades) {
    const std::vector<std::string>& names = config_.judges.names;
    if (std::find(names.begin(), names.end(), judge) == names.end()) return;
    std::string batch;
    for (const auto& [doc, grade] : grades) {
      if (!batch.empty()) batch += ",";
      batch += R"({"doc_id":")" + doc + R"(","relevance":)" +
               std::to_string(grade) + "}";
    }
    Feed(stream::Topic::kJudgments,
         R"({"request_id":")" + id + R"(","judge":")" + judge +
             R"(","timestamp":)" + std::to_string(t + 100) +
             R"(,"judgments":[)" + batch + "]}");
  }
  void Feed(stream::Topic topic, const std::string& json) {
    EXPECT_TRUE(pipeline_->OnPayload(topic, json, {0, offset_++})) << json;
  }

  Scrape Run() {
    auto p = stream::Pipeline::Create(config_, &clock_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return Scrape();
    pipeline_ = std::move(p).value();
    List("r1", "A", kEarly);
    Grade("r1", "human", kEarly, {{"a", 1}, {"b", 1}});
    Grade("r1", "llm", kEarly, {{"a", 1}, {"b", 0}});
    List("r5", "B", kEarly);
    Grade("r5", "human", kEarly, {{"a", 1}, {"b", 0}});
    Grade("r5", "llm", kEarly, {{"a", 1}, {"b", 1}});
    List("r2", "A", kLate);
    Grade("r2", "human", kLate, {{"a", 0}, {"b", 1}});
    Grade("r2", "llm", kLate, {{"a", 1}, {"b", 1}});
    List("r6", "B", kLate);
    Grade("r6", "llm", kLate, {{"a", 1}});
    List("r3", "A", kLate + 1000);
    Grade("r3", "llm", kLate + 1000, {{"b", 1}});
    List("r7", "B", kLate + 1000);
    List("r4", "A", kLate + 2000);
    Grade("r4", "llm", kLate + 2000, {{"a", 0}});
    pipeline_->FinishAll();
    stream::PipelineSnapshot snapshot;
    stream::TakeSnapshot(*pipeline_, &snapshot);
    return Collect(snapshot);
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
};

using LabelMap = std::map<std::string, std::string>;
using rankwatch::testing::Sample;

TEST_F(JudgeSeriesTest, EachJudgesMeansAndCounters) {
  const Scrape s = Run();
  const auto at = [](const std::string& variant, const std::string& judge,
                     const std::string& window) {
    return LabelMap{
        {"variant", variant}, {"k", "2"}, {"judge", judge}, {"window", window}};
  };
  // A, since start: human [1, 0.5], llm [0.5, 1, 0.5, 0].
  for (const char* window : {"all", "1h"}) {
    SCOPED_TRACE(window);
    const LabelMap human = at("A", "human", window);
    EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_precision_mean", human), 0.75);
    EXPECT_EQ(s.Sum("rankwatch_judge_precision_window_lists", human), 2);
    EXPECT_DOUBLE_EQ(
        s.Sum("rankwatch_judge_precision_window_sum_values", human), 1.5);
    // 1 + 0.25.
    EXPECT_DOUBLE_EQ(
        s.Sum("rankwatch_judge_precision_window_sum_squares", human), 1.25);
    const LabelMap llm = at("A", "llm", window);
    EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_precision_mean", llm), 0.5);
    // 0.25 + 1 + 0.25.
    EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_precision_window_sum_squares", llm),
                     1.5);
  }
  // The 5m window: the late lists, human [0.5], llm [1, 0.5, 0].
  EXPECT_EQ(
      s.Sum("rankwatch_judge_precision_window_lists", at("A", "human", "5m")),
      1);
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_judge_precision_mean", at("A", "human", "5m")), 0.5);
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_judge_precision_mean", at("A", "llm", "5m")), 0.5);
  // B: human [0.5], llm [1, 0.5].
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_judge_precision_mean", at("B", "human", "all")), 0.5);
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_judge_precision_mean", at("B", "llm", "all")), 0.75);

  // What this process folded in: all of it (nothing restored).
  const LabelMap human_a = {{"variant", "A"}, {"k", "2"}, {"judge", "human"}};
  EXPECT_EQ(s.Sum("rankwatch_judge_precision_lists_total", human_a), 2);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_precision_sum_total", human_a), 1.5);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_precision_squares_total", human_a),
                   1.25);
  EXPECT_FALSE(
      s.Has("rankwatch_judge_precision_lists_total", {{"window", "all"}}));

  // The PPI sums share the measure's name but are no series of it: A's
  // lists over both judges are 2 + 4 (the truth, cheap, other and cross
  // sums would add 2 + 2 + 2 + 2), every sample names its judge.
  EXPECT_EQ(s.Sum("rankwatch_judge_precision_window_lists",
                  {{"variant", "A"}, {"window", "all"}}),
            6);
  EXPECT_EQ(s.LabelValues("rankwatch_judge_precision_mean", "judge"),
            (std::vector<std::string>{"human", "llm"}));
  EXPECT_EQ(s.Sum("rankwatch_judge_precision_lists_total"), 2 + 4 + 1 + 2);
}

TEST_F(JudgeSeriesTest, CoverageAndUnjudgedShares) {
  const Scrape s = Run();
  // A's top 2 labelled, per list: human [1, 1, 0, 0], llm [1, 1, 0.5, 0.5];
  // by no judge [0, 0, 0.5, 0.5].
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_coverage_mean", {{"variant", "A"},
                                                           {"k", "2"},
                                                           {"judge", "human"},
                                                           {"window", "all"}}),
                   0.5);
  EXPECT_DOUBLE_EQ(
      s.Sum(
          "rankwatch_judge_coverage_mean",
          {{"variant", "A"}, {"k", "2"}, {"judge", "llm"}, {"window", "all"}}),
      0.75);
  EXPECT_EQ(s.Sum("rankwatch_judge_coverage_window_lists",
                  {{"variant", "A"}, {"judge", "llm"}, {"window", "all"}}),
            4);
  const LabelMap a_all = {{"variant", "A"}, {"k", "2"}, {"window", "all"}};
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_unjudged_mean", a_all), 0.25);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_unjudged_window_sum_values", a_all),
                   1.0);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_unjudged_window_sum_squares", a_all),
                   0.5);
  EXPECT_TRUE(s.LabelValues("rankwatch_judge_unjudged_mean", "judge").empty());
  // The late lists of A: [0, 0.5, 0.5]; B since start: [0, 0.5, 1].
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_unjudged_mean",
                         {{"variant", "A"}, {"k", "2"}, {"window", "5m"}}),
                   1.0 / 3);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_judge_unjudged_mean",
                         {{"variant", "B"}, {"k", "2"}, {"window", "all"}}),
                   0.5);
  // |0.5 - 0.25| > judges.coverage_tolerance (0.05): flagged.
  EXPECT_EQ(s.Sum("rankwatch_judge_coverage_flagged",
                  {{"experiment", "ranker"}, {"treatment", "B"}, {"k", "2"}}),
            1);
}

TEST_F(JudgeSeriesTest, CoverageWithinToleranceIsNotFlagged) {
  config_.judges.coverage_tolerance = 0.3;  // Above |0.5 - 0.25|.
  const Scrape s = Run();
  EXPECT_TRUE(s.Has("rankwatch_judge_coverage_flagged", {{"treatment", "B"}}));
  EXPECT_EQ(s.Sum("rankwatch_judge_coverage_flagged"), 0);
}

// A since start: labelled lists r1, r2 with truth y = [1, 0.5] (human) and
// cheap f = [0.5, 1] (llm); others r3, r4 with f~ = [0.5, 0]. Plain PPI
// (lambda 1): estimate = mean(f~) + mean(y - f) = 0.25 + 0 = 0.25;
// se^2 = var(f~)/N + var(y - f)/n = 0.0625/2 + 0.25/2 = 0.15625 (divisors N,
// n), z = 1.959963984540054: [-0.524743790380702, 1.024743790380702].
// Classical: mean(y) = 0.75, se = sqrt(0.125/2) = 0.25:
// [0.2600090038649865, 1.2399909961350135]. Naive: (1.5 + 0.5) / 4 = 0.5.
// (numpy/scipy: norm.ppf(0.975), np.var.)
TEST_F(JudgeSeriesTest, PredictionPoweredMeans) {
  const Scrape s = Run();
  const LabelMap a = {{"variant", "A"},
                      {"measure", "precision"},
                      {"k", "2"},
                      {"window", "all"}};
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_estimate", a), 0.25, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_lower", a), -0.524743790380702, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_upper", a), 1.024743790380702, 1e-12);
  EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lambda", a), 1);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_classical", a), 0.75, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_classical_lower", a),
              0.2600090038649865, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_classical_upper", a),
              1.2399909961350135, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_judge_ppi_naive", a), 0.5, 1e-12);
  LabelMap lists = a;
  lists["labelled"] = "true";
  EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lists", lists), 2);
  lists["labelled"] = "false";
  EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lists", lists), 2);
  // A over 5m (r2 labelled; r3, r4 not) and B since start (r5; r6 not,
  // r7 has no llm value): one labelled list, no estimate, the counts all
  // the same.
  for (const auto& [variant, window, others] :
       {std::tuple{"A", "5m", 2}, std::tuple{"B", "all", 1}}) {
    const LabelMap l = {{"variant", variant}, {"window", window}};
    EXPECT_FALSE(s.Has("rankwatch_judge_ppi_estimate", l)) << variant;
    EXPECT_FALSE(s.Has("rankwatch_judge_ppi_naive", l)) << variant;
    LabelMap n = l;
    n["labelled"] = "true";
    EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lists", n), 1) << variant;
    n["labelled"] = "false";
    EXPECT_EQ(s.Sum("rankwatch_judge_ppi_lists", n), others) << variant;
  }
  EXPECT_EQ(s.Sum("rankwatch_judge_ppi_info",
                  {{"trusted", "human"}, {"cheap", "llm"}}),
            1);
}

TEST_F(JudgeSeriesTest, NoPpiFamiliesWithoutPpi) {
  config_.judges.ppi = {};
  const Scrape s = Run();
  EXPECT_TRUE(s.Has("rankwatch_judge_precision_mean"));
  for (const Sample& sample : s.samples()) {
    EXPECT_FALSE(sample.name.starts_with("rankwatch_judge_ppi")) << sample.name;
  }
}

// human and llm both graded r1 (a: 1/1, b: 1/0), r2 (a: 0/1, b: 1/1) and
// r5 (a: 1/1, b: 0/1): x = [1, 1, 0, 1, 1, 0], y = [1, 0, 1, 1, 1, 1];
// llm alone r3 b, r4 a, r6 a. po = 3/6, pe = (4/6)(5/6) + (2/6)(1/6) =
// 22/36, kappa = (1/2 - 22/36) / (1 - 22/36) = -2/7 (scikit-learn
// cohen_kappa_score: -0.2857142857142856, with linear weights the same:
// two grades). The 5m window: r2's two pairs; llm alone r3 b, r4 a, r6 a.
TEST_F(JudgeSeriesTest, AgreementSinceStartAndPerWindow) {
  const Scrape s = Run();
  const auto pair = [](const std::string& window) {
    return LabelMap{{"first", "human"}, {"second", "llm"}, {"window", window}};
  };
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", pair("all")), 6);
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", pair("1h")), 6);
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", pair("5m")), 2);
  for (const char* window : {"all", "5m"}) {
    LabelMap only = pair(window);
    only["judge"] = "llm";
    EXPECT_EQ(s.Sum("rankwatch_judge_agreement_only", only), 3) << window;
    only["judge"] = "human";
    EXPECT_EQ(s.Sum("rankwatch_judge_agreement_only", only), 0) << window;
  }
  LabelMap kappa = pair("all");
  kappa["statistic"] = "kappa";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", kappa), -2.0 / 7, 1e-12);
  kappa["window"] = "1h";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", kappa), -2.0 / 7, 1e-12);
}

TEST_F(JudgeSeriesTest, OneJudgeHasSeriesButNoAgreement) {
  config_.judges.names = {"llm"};
  config_.judges.ppi = {};
  const Scrape s = Run();
  // llm alone on A: [0.5, 1, 0.5, 0].
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_judge_precision_mean",
            {{"variant", "A"}, {"judge", "llm"}, {"window", "all"}}),
      0.5);
  EXPECT_FALSE(s.Has("rankwatch_judge_agreement_pairs"));
}

TEST_F(JudgeSeriesTest, PromtoolAcceptsTheOutput) {
#ifndef RANKWATCH_PROMTOOL
  GTEST_SKIP() << "promtool not found at configure time";
#else
  Run();
  std::vector<prometheus::MetricFamily> families;
  stream::PipelineSnapshot snapshot;
  stream::TakeSnapshot(*pipeline_, &snapshot);
  JudgeCollector().Collect(snapshot, &families);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60),
                                     SerializeText(families));
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
#endif
}

}  // namespace
}  // namespace rankwatch::exporter
