#include "daemon/exporter/experiment_collector.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/string_index.h"
#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"
#include "metrics/clustered.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;
using testing::JudgmentJson;
using testing::ResultsJson;

// Precision at 1 only, window 5m, experiment ranker-v2: B against A.
config::Config ExperimentConfig() {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision};
  c.metrics.cutoffs = {1};
  c.aggregation.windows = {std::chrono::minutes(5)};
  c.experiments = {{"ranker-v2", "A", {"B"}}};
  // Events are stamped from 1 s (event time) on: below the default
  // events.min_timestamp (2010).
  c.events.min_timestamp_ms = 0;
  return c;
}

class ExperimentCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = stream::Pipeline::Create(ExperimentConfig(), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  // One served list of doc "a", relevant (P@1 = 1) or not judged (0).
  void Request(const std::string& id, const std::string& variant,
               bool relevant) {
    pipeline_->OnPayload(stream::Topic::kResults,
                         ResultsJson(id, variant, 1000, {"a"}), {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  }

  std::string Text() const {
    std::vector<prometheus::MetricFamily> families;
    ExperimentCollector().Collect(testing::Snapshot(*pipeline_), &families);
    return SerializeText(families);
  }

  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
};

TEST_F(ExperimentCollectorTest, ExportsWelchAndSequentialFigures) {
  // P@1 of A: {1, 0, 0}, mean 1/3, variance 1/3. B: {1, 1, 0, 1}, mean 0.75,
  // variance 0.25. d = 5/12; SE = sqrt(1/9 + 1/16) = 5/12 (so t = 1);
  // df = (25/144)^2 / ((1/9)^2 / 2 + (1/16)^2 / 3) = 4.032258064516129.
  // p-value and interval: Python, Simpson integration of Student's t density
  // and bisection for the 0.975 quantile (not rankwatch's functions). mSPRT
  // half-width with tau = 0.05, alpha = 0.05: 8.570303187261315 (Python).
  Request("a1", "A", true);
  Request("a2", "A", false);
  Request("a3", "A", false);
  Request("b1", "B", true);
  Request("b2", "B", true);
  Request("b3", "B", false);
  Request("b4", "B", true);
  pipeline_->FinishAll();  // Scores everything and takes a look.
  const Scrape s = Scrape::Parse(Text());
  for (const char* window : {"all", "5m"}) {
    SCOPED_TRACE(window);
    const std::map<std::string, std::string> l = {
        {"experiment", "ranker-v2"}, {"variant", "B"}, {"baseline", "A"},
        {"measure", "precision"},    {"k", "1"},       {"window", window}};
    EXPECT_EQ(s.Sum("rankwatch_ab_baseline_requests", l), 3);
    EXPECT_EQ(s.Sum("rankwatch_ab_treatment_requests", l), 4);
    EXPECT_NEAR(s.Sum("rankwatch_ab_baseline_mean", l), 1.0 / 3, 1e-12);
    EXPECT_NEAR(s.Sum("rankwatch_ab_treatment_mean", l), 0.75, 1e-12);
    EXPECT_NEAR(s.Sum("rankwatch_ab_difference", l), 5.0 / 12, 1e-12);
    EXPECT_NEAR(s.Sum("rankwatch_ab_relative_difference", l), 1.25, 1e-12);
    EXPECT_NEAR(s.Sum("rankwatch_ab_standard_error", l), 5.0 / 12, 1e-12);
    EXPECT_NEAR(s.Sum("rankwatch_ab_p_value", l), 0.3734797469866542, 1e-7);
    EXPECT_NEAR(s.Sum("rankwatch_ab_ci_lower", l), -0.7365446697157829, 1e-7);
    EXPECT_NEAR(s.Sum("rankwatch_ab_ci_upper", l), 1.5698780030491164, 1e-7);
    EXPECT_EQ(s.Has("rankwatch_ab_sequential_p_value", l),
              std::string(window) == "all");
  }
  const std::map<std::string, std::string> all = {{"window", "all"}};
  EXPECT_EQ(s.Sum("rankwatch_ab_sequential_p_value", all), 1.0);
  EXPECT_NEAR(s.Sum("rankwatch_ab_sequential_ci_lower", all),
              5.0 / 12 - 8.570303187261315, 1e-9);
  EXPECT_NEAR(s.Sum("rankwatch_ab_sequential_ci_upper", all),
              5.0 / 12 + 8.570303187261315, 1e-9);
  EXPECT_EQ(
      s.Sum("rankwatch_experiment_info",
            {{"experiment", "ranker-v2"}, {"baseline", "A"}, {"variant", "B"}}),
      1);
  EXPECT_EQ(s.Sum("rankwatch_ab_confidence_level"), 0.95);
  // One look: the look's own figures are the running ones.
  EXPECT_NEAR(s.Sum("rankwatch_ab_sequential_look_ci_upper", all),
              5.0 / 12 + 8.570303187261315, 1e-9);
  EXPECT_EQ(s.Sum("rankwatch_ab_sequential_looks", all), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_sequential_contradicted", all), 0);
  // The family is this one comparison (precision@1 is the only quality
  // series): BH leaves its p-value as it is. The interval holds 0.
  EXPECT_NEAR(s.Sum("rankwatch_ab_p_value_bh", all), 0.3734797469866542, 1e-7);
  EXPECT_EQ(s.Sum("rankwatch_ab_verdict", all), 0);
  EXPECT_EQ(s.Sum("rankwatch_ab_verdict_state", {{"state", "inconclusive"}}),
            1);
  EXPECT_EQ(s.Sum("rankwatch_ab_verdict_state"), 1);
  // Without ndcg@10 the primary series is the first quality one.
  EXPECT_EQ(s.Sum("rankwatch_ab_primary_info", {{"experiment", "ranker-v2"},
                                                {"measure", "precision"},
                                                {"k", "1"}}),
            1);
  // Sample ratio of lists (no unit): 3 and 4 against 50/50,
  // scipy.stats.chisquare([3, 4]) = (0.14285714285714285,
  // 0.7054569861112734).
  const std::map<std::string, std::string> x = {{"experiment", "ranker-v2"}};
  EXPECT_EQ(s.Sum("rankwatch_ab_units_total",
                  {{"experiment", "ranker-v2"}, {"variant", "A"}}),
            3);
  EXPECT_EQ(s.Sum("rankwatch_ab_units_total",
                  {{"experiment", "ranker-v2"}, {"variant", "B"}}),
            4);
  EXPECT_EQ(s.Sum("rankwatch_ab_expected_share",
                  {{"experiment", "ranker-v2"}, {"variant", "B"}}),
            0.5);
  EXPECT_NEAR(s.Sum("rankwatch_ab_srm_statistic", x), 0.14285714285714285,
              1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_ab_srm_p_value", x), 0.7054569861112734, 1e-12);
  EXPECT_EQ(s.Sum("rankwatch_ab_srm_detected", x), 0);
  EXPECT_FALSE(s.Has("rankwatch_ab_unit_info"));
  EXPECT_FALSE(s.Has("rankwatch_ab_bucket_lists_total"));
  // Without schema.covariate, no adjusted gauges.
  EXPECT_FALSE(s.Has("rankwatch_ab_adjusted_difference"));
  EXPECT_FALSE(s.Has("rankwatch_covariate_events_total"));
  EXPECT_FALSE(s.Has("rankwatch_ab_covariate_pairs_total"));
}

// With schema.unit: the unit is named, windowed rows are gone, and the
// per-bucket counters of the primary series add up to each arm's lists and
// sums. Units u1 (2 lists) and u2 in A, u3 in B.
TEST_F(ExperimentCollectorTest, UnitBucketsForTheRules) {
  config::Config c = ExperimentConfig();
  c.schema.unit = "user_id";
  c.statistics.unit_buckets = 8;
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  const auto request = [&](const std::string& id, const std::string& variant,
                           const std::string& user, bool relevant) {
    pipeline_->OnPayload(stream::Topic::kResults,
                         R"({"request_id":")" + id + R"(","variant":")" +
                             variant + R"(","user_id":")" + user +
                             R"(","timestamp":1000,"results":["a"]})",
                         {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  };
  request("a1", "A", "u1", true);
  request("a2", "A", "u1", false);
  request("a3", "A", "u2", true);
  request("b1", "B", "u3", true);
  pipeline_->FinishAll();
  const Scrape s = Scrape::Parse(Text());
  EXPECT_EQ(s.Sum("rankwatch_ab_unit_info", {{"unit", "user_id"}}), 1);
  EXPECT_FALSE(s.Has("rankwatch_ab_p_value", {{"window", "5m"}}));
  EXPECT_EQ(s.LabelValues("rankwatch_ab_bucket_lists_total", "bucket").size(),
            8u);
  EXPECT_EQ(s.Sum("rankwatch_ab_bucket_lists_total", {{"variant", "A"}}), 3);
  EXPECT_EQ(s.Sum("rankwatch_ab_bucket_lists_total", {{"variant", "B"}}), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_bucket_sum_total",
                  {{"variant", "A"}, {"measure", "precision"}, {"k", "1"}}),
            2);
  EXPECT_EQ(s.Sum("rankwatch_ab_units_total", {{"variant", "A"}}), 2);
  EXPECT_EQ(s.Sum("rankwatch_ab_units_total", {{"variant", "B"}}), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_unit_conflicts_total"), 0);
  EXPECT_EQ(s.Sum("rankwatch_ab_srm_units_capped"), 0);
}

// With schema.covariate: the regression-adjusted gauges of window "all",
// and the covariate outcomes. P@1 and covariate per list: A (1, 0.9),
// (0, 0.2), (0, 0.4), (1, 0.7); B (1, 0.8), (1, 0.6), (0, 0.1), (1, 0.9),
// (0, 0.3), and one more B list (P@1 1) whose covariate is "n/a". In
// statsmodels 0.15.0 / SciPy 1.17.1 (run once offline):
// smf.ols('y ~ T + x', df).fit() params x = 1.5902964959568733, T =
// 0.11590296495956831; the documented plug-in standard error
// 0.14471825043450773 (per arm e = (y - ybar) - theta (x - xbar),
// v = sum e^2 / (n - 1) / n), Welch-Satterthwaite p = 0.4515777892645571,
// interval [-0.23200806042659572, 0.46381399034573234]; the unadjusted
// Welch variance over all lists (B with the extra 1) gives the ratio
// 0.163904650503847.
TEST_F(ExperimentCollectorTest, AdjustedGaugesWithACovariate) {
  config::Config c = ExperimentConfig();
  c.schema.covariate = "pre";
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  const auto request = [&](const std::string& id, const std::string& variant,
                           bool relevant, const std::string& pre) {
    pipeline_->OnPayload(stream::Topic::kResults,
                         R"({"request_id":")" + id + R"(","variant":")" +
                             variant + R"(","pre":)" + pre +
                             R"(,"timestamp":1000,"results":["a"]})",
                         {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  };
  request("a1", "A", true, "0.9");
  request("a2", "A", false, "0.2");
  request("a3", "A", false, "0.4");
  request("a4", "A", true, "0.7");
  request("b1", "B", true, "0.8");
  request("b2", "B", true, "0.6");
  request("b3", "B", false, "0.1");
  request("b4", "B", true, "0.9");
  request("b5", "B", false, "0.3");
  request("b6", "B", true, R"("n/a")");
  pipeline_->FinishAll();
  const Scrape s = Scrape::Parse(Text());
  const std::map<std::string, std::string> l = {{"experiment", "ranker-v2"},
                                                {"variant", "B"},
                                                {"measure", "precision"},
                                                {"k", "1"},
                                                {"window", "all"}};
  EXPECT_EQ(s.Sum("rankwatch_ab_covariate_info", {{"covariate", "pre"}}), 1);
  EXPECT_EQ(s.Sum("rankwatch_covariate_events_total", {{"reason", "present"}}),
            9);
  EXPECT_EQ(
      s.Sum("rankwatch_covariate_events_total", {{"reason", "wrong_type"}}), 1);
  EXPECT_EQ(s.Sum("rankwatch_covariate_events_total", {{"reason", "absent"}}),
            0);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_baseline_pairs", l), 4);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_treatment_pairs", l), 5);
  EXPECT_EQ(s.Sum("rankwatch_ab_treatment_requests", l), 6);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_theta", l), 1.5902964959568733,
              1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_difference", l), 0.11590296495956831,
              1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_standard_error", l),
              0.14471825043450773, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_p_value", l), 0.4515777892645571,
              1e-9);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_ci_lower", l), -0.23200806042659572,
              1e-9);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_ci_upper", l), 0.46381399034573234,
              1e-9);
  EXPECT_NEAR(s.Sum("rankwatch_ab_adjusted_variance_ratio", l),
              0.163904650503847, 1e-9);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_status", {{"status", "adjusted"}}), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_status"), 1);
  // Below the warm-up of 20 pairs per arm: no always-valid figures yet.
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_sequential_looks", l), 0);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_sequential_p_value", l), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_adjusted_sequential_ci_lower", l),
            -std::numeric_limits<double>::infinity());
  // Window rows are not adjusted.
  EXPECT_FALSE(s.Has("rankwatch_ab_adjusted_difference", {{"window", "5m"}}));
  // The pairs' power sums for the rules, by hand from the pairs above
  // (b6 has no pair). A: n 4, sum y 2, sum x 0.9 + 0.2 + 0.4 + 0.7 = 2.2,
  // sum y^2 2, sum x^2 0.81 + 0.04 + 0.16 + 0.49 = 1.5, sum x y 0.9 + 0.7 =
  // 1.6. B: n 5, sum y 3, sum x 2.7, sum y^2 3, sum x^2 0.64 + 0.36 + 0.01 +
  // 0.81 + 0.09 = 1.91, sum x y 0.8 + 0.6 + 0.9 = 2.3. Counters (this
  // process) and state gauges agree: nothing was restored.
  const std::map<std::string, std::array<double, 6>> want = {
      {"A", {4, 2, 2.2, 2, 1.5, 1.6}}, {"B", {5, 3, 2.7, 3, 1.91, 2.3}}};
  const char* names[] = {"pairs",  "sum_y",  "sum_x",
                         "sum_yy", "sum_xx", "sum_xy"};
  for (const auto& [variant, sums] : want) {
    const std::map<std::string, std::string> arm = {
        {"variant", variant}, {"measure", "precision"}, {"k", "1"}};
    for (size_t i = 0; i < 6; ++i) {
      const std::string name =
          std::string("rankwatch_ab_covariate_") + names[i];
      SCOPED_TRACE(name + " " + variant);
      EXPECT_NEAR(s.Sum(name + "_total", arm), sums[i], 1e-12);
      EXPECT_NEAR(s.Sum(name, arm), sums[i], 1e-12);
    }
  }
  EXPECT_FALSE(s.Has("rankwatch_ab_covariate_bucket_pairs_total"));
  // Every adjusted figure is a gauge of its name, with its value (the
  // summary and replay write the same names).
  const stream::Comparison& row = pipeline_->experiments().comparisons()[0];
  ASSERT_TRUE(row.has_adjusted);
  for (const stream::NamedFigure& figure :
       stream::AdjustedFigures(row.adjusted)) {
    const std::string name =
        std::string("rankwatch_ab_adjusted_") + figure.name;
    ASSERT_TRUE(s.Has(name, l)) << name;
    if (std::isnan(figure.value)) {
      EXPECT_TRUE(std::isnan(s.Sum(name, l))) << name;
    } else if (std::isinf(figure.value)) {
      EXPECT_EQ(s.Sum(name, l), figure.value) << name;
    } else {  // The text format's digits.
      EXPECT_NEAR(s.Sum(name, l), figure.value, 1e-12) << name;
    }
  }
#ifdef RANKWATCH_PROMTOOL
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60), Text());
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
#endif
}

// With schema.unit and schema.covariate: per bucket, the pairs and the sums
// of y and x. Pairs (P@1, covariate) by unit: A u1 (1, 0.9), (0, 0.2); u2
// (0, 0.4) and a list whose covariate is null (no pair); B u3 (1, 0.8),
// (1, 0.6); u4 (0, -0.5). By hand: A n 3, sum y 1, sum x 1.5, sum y^2 1,
// sum x^2 0.81 + 0.04 + 0.16 = 1.01, sum x y 0.9; B n 3, sum y 2, sum x
// 0.9, sum y^2 2, sum x^2 0.64 + 0.36 + 0.25 = 1.25, sum x y 1.4. A unit's
// pairs are in the bucket its id hashes to (HashBytes, metrics::UnitBucket
// over 8 buckets); the expected per-bucket sums below add each unit's.
TEST_F(ExperimentCollectorTest, CovariateBucketSumsForTheRules) {
  config::Config c = ExperimentConfig();
  c.schema.unit = "user_id";
  c.schema.covariate = "pre";
  c.statistics.unit_buckets = 8;
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  const auto request = [&](const std::string& id, const std::string& variant,
                           const std::string& user, bool relevant,
                           const std::string& pre) {
    pipeline_->OnPayload(stream::Topic::kResults,
                         R"({"request_id":")" + id + R"(","variant":")" +
                             variant + R"(","user_id":")" + user +
                             R"(","pre":)" + pre +
                             R"(,"timestamp":1000,"results":["a"]})",
                         {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  };
  request("a1", "A", "u1", true, "0.9");
  request("a2", "A", "u1", false, "0.2");
  request("a3", "A", "u2", false, "0.4");
  request("a4", "A", "u2", true, "null");
  request("b1", "B", "u3", true, "0.8");
  request("b2", "B", "u3", true, "0.6");
  request("b3", "B", "u4", false, "-0.5");
  pipeline_->FinishAll();
  const Scrape s = Scrape::Parse(Text());
  struct Unit {
    const char* variant;
    const char* id;
    double pairs, y, x;
  };
  const Unit units[] = {{"A", "u1", 2, 1, 1.1},
                        {"A", "u2", 1, 0, 0.4},
                        {"B", "u3", 2, 2, 1.4},
                        {"B", "u4", 1, 0, -0.5}};
  // [variant][bucket]: pairs, sum y, sum x.
  std::map<std::string, std::map<std::string, std::array<double, 3>>> want;
  for (const Unit& u : units) {
    const std::string b =
        std::to_string(metrics::UnitBucket(HashBytes(u.id), 8));
    std::array<double, 3>& sums = want[u.variant][b];
    sums[0] += u.pairs;
    sums[1] += u.y;
    sums[2] += u.x;
  }
  for (const char* variant : {"A", "B"}) {
    for (int b = 0; b < 8; ++b) {
      const std::string bucket = std::to_string(b);
      SCOPED_TRACE(std::string(variant) + " bucket " + bucket);
      const std::map<std::string, std::string> l = {{"variant", variant},
                                                    {"measure", "precision"},
                                                    {"k", "1"},
                                                    {"bucket", bucket}};
      const std::array<double, 3> sums = want[variant][bucket];  // 0 if none.
      for (const char* suffix : {"", "_total"}) {
        const std::string prefix = "rankwatch_ab_covariate_bucket_";
        ASSERT_TRUE(s.Has(prefix + "pairs" + suffix, l));
        EXPECT_EQ(s.Sum(prefix + "pairs" + suffix, l), sums[0]);
        EXPECT_NEAR(s.Sum(prefix + "sum_y" + suffix, l), sums[1], 1e-12);
        EXPECT_NEAR(s.Sum(prefix + "sum_x" + suffix, l), sums[2], 1e-12);
      }
    }
  }
  const std::map<std::string, std::array<double, 6>> totals = {
      {"A", {3, 1, 1.5, 1, 1.01, 0.9}}, {"B", {3, 2, 0.9, 2, 1.25, 1.4}}};
  const char* names[] = {"pairs",  "sum_y",  "sum_x",
                         "sum_yy", "sum_xx", "sum_xy"};
  for (const auto& [variant, sums] : totals) {
    const std::map<std::string, std::string> arm = {{"variant", variant}};
    for (size_t i = 0; i < 6; ++i) {
      const std::string name =
          std::string("rankwatch_ab_covariate_") + names[i] + "_total";
      EXPECT_NEAR(s.Sum(name, arm), sums[i], 1e-12) << name << " " << variant;
    }
  }
#ifdef RANKWATCH_PROMTOOL
  // The covariate families alone: promtool's lint also flags the older
  // rankwatch_ab_bucket_sum gauge (a "_sum" suffix), which the rules read.
  std::vector<prometheus::MetricFamily> families;
  ExperimentCollector().Collect(testing::Snapshot(*pipeline_), &families);
  std::erase_if(families, [](const prometheus::MetricFamily& f) {
    return !f.name.starts_with("rankwatch_ab_covariate_");
  });
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60),
                                     SerializeText(families));
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.err, "");
#endif
}

TEST_F(ExperimentCollectorTest, NoInferenceBeforeData) {
  // Nothing served yet: counts 0, means and difference NaN, intervals
  // unbounded, p-values 1; the series exist from the start.
  const Scrape s = Scrape::Parse(Text());
  const std::map<std::string, std::string> l = {{"window", "all"}};
  EXPECT_EQ(s.Sum("rankwatch_ab_baseline_requests", l), 0);
  EXPECT_TRUE(std::isnan(s.Sum("rankwatch_ab_difference", l)));
  EXPECT_TRUE(std::isnan(s.Sum("rankwatch_ab_baseline_mean", l)));
  EXPECT_EQ(s.Sum("rankwatch_ab_ci_lower", l),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.Sum("rankwatch_ab_ci_upper", l),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.Sum("rankwatch_ab_p_value", l), 1);
  EXPECT_EQ(s.Sum("rankwatch_ab_sequential_p_value", l), 1);
}

TEST_F(ExperimentCollectorTest, NothingWithoutExperiments) {
  config::Config c = ExperimentConfig();
  c.experiments.clear();
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok());
  std::vector<prometheus::MetricFamily> families;
  ExperimentCollector().Collect(testing::Snapshot(**p), &families);
  EXPECT_TRUE(families.empty());
}

TEST_F(ExperimentCollectorTest, PromtoolAcceptsTheOutput) {
#ifndef RANKWATCH_PROMTOOL
  GTEST_SKIP() << "promtool not found at configure time";
#else
  Request("a1", "A", true);
  Request("b1", "B", false);
  pipeline_->FinishAll();
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60), Text());
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
#endif
}

}  // namespace
}  // namespace rankwatch::exporter
