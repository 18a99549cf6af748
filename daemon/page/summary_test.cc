#include "daemon/page/summary.h"

#include <chrono>
#include <cmath>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/clock.h"
#include "config/config_test_util.h"
#include "daemon/exporter/exporter_test_util.h"
#include "daemon/stream/pipeline/judge_report_test_util.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace rankwatch::page {
namespace {

using exporter::testing::JudgmentJson;
using exporter::testing::ResultsJson;

// Precision at 1 only, window 5m (bucket 10 s), segment locale, and two
// experiments: B against A, and Z (never served) against A.
config::Config SummaryConfig() {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision};
  c.metrics.cutoffs = {1};
  c.aggregation.windows = {std::chrono::minutes(5)};
  c.aggregation.segments = {"locale"};
  c.experiments = {{"ranker-v2", "A", {"B"}}, {"unserved", "A", {"Z"}}};
  // Events are stamped at 1 s and 2 s (event time): below the default
  // events.min_timestamp (2010).
  c.events.min_timestamp_ms = 0;
  return c;
}

class SummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = stream::Pipeline::Create(SummaryConfig(), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  // One served list of doc "a": relevant (P@1 = 1) or not judged (0).
  void Request(const std::string& id, const std::string& variant,
               const std::string& locale, bool relevant) {
    pipeline_->OnPayload(stream::Topic::kResults,
                         ResultsJson(id, variant, 1000, {"a"}, locale),
                         {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  }

  // The summary of a snapshot of the pipeline as it is (no look taken).
  simdjson::dom::element Parse(const kafka::IngestState* kafka) {
    stream::PipelineSnapshot snapshot;
    stream::TakeSnapshot(*pipeline_, &snapshot);
    json_ = BuildSummaryJson(snapshot, kafka, {1'234, 5'678});
    simdjson::dom::element root;
    EXPECT_EQ(parser_.parse(json_).get(root), simdjson::SUCCESS) << json_;
    return root;
  }

  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
  std::string json_;
  simdjson::dom::parser parser_;
};

double Num(simdjson::dom::element e) {
  double d = 0;
  if (e.is_int64()) return static_cast<double>(int64_t(e));
  EXPECT_EQ(e.get(d), simdjson::SUCCESS);
  return d;
}

TEST_F(SummaryTest, MeansPerVariantAndGroupWithHistory) {
  // P@1 of A: en {1, 0}, de {0}; B: en {1, 1, 0, 1}.
  Request("a1", "A", "en", true);
  Request("a2", "A", "en", false);
  Request("a3", "A", "de", false);
  Request("b1", "B", "en", true);
  Request("b2", "B", "en", true);
  Request("b3", "B", "en", false);
  Request("b4", "B", "en", true);
  pipeline_->FinishAll();
  simdjson::dom::element d = Parse(nullptr);
  EXPECT_EQ(int64_t(d["schema_version"]), 1);
  EXPECT_EQ(int64_t(d["generated_ms"]), 1'234);
  EXPECT_EQ(int64_t(d["monotonic_ms"]), 5'678);
  EXPECT_EQ(std::string_view(d["windows"].at(0)["name"]), "all");
  EXPECT_TRUE(d["windows"].at(0)["ms"].is_null());
  EXPECT_EQ(std::string_view(d["windows"].at(1)["name"]), "5m");
  EXPECT_EQ(int64_t(d["windows"].at(1)["ms"]), 300'000);
  EXPECT_EQ(std::string_view(d["series"].at(0)["name"]), "P_1");
  EXPECT_EQ(std::string_view(d["series"].at(0)["k"]), "1");

  // Variant totals over their groups; both windows hold every list.
  simdjson::dom::element a = d["variants"].at(0);
  EXPECT_EQ(std::string_view(a["variant"]), "A");
  EXPECT_EQ(int64_t(a["requests"]), 3);
  for (size_t w : {0, 1}) {
    simdjson::dom::element win = a["series"].at(0)["windows"].at(w);
    EXPECT_EQ(int64_t(win["count"]), 3);
    EXPECT_DOUBLE_EQ(Num(win["mean"]), 1.0 / 3);
  }
  simdjson::dom::element b = d["variants"].at(1);
  EXPECT_EQ(std::string_view(b["variant"]), "B");
  EXPECT_DOUBLE_EQ(Num(b["series"].at(0)["windows"].at(0)["mean"]), 0.75);

  // Groups: A/en {1, 0}, A/de {0}, B/en.
  simdjson::dom::array groups = d["groups"];
  ASSERT_EQ(groups.size(), 3u);
  simdjson::dom::element en = groups.at(0);
  EXPECT_EQ(std::string_view(en["segments"]["locale"]), "en");
  EXPECT_EQ(int64_t(en["series"].at(0)["windows"].at(0)["count"]), 2);
  EXPECT_DOUBLE_EQ(Num(en["series"].at(0)["windows"].at(0)["mean"]), 0.5);
  EXPECT_EQ(std::string_view(groups.at(1)["segments"]["locale"]), "de");
  EXPECT_DOUBLE_EQ(Num(groups.at(1)["series"].at(0)["windows"].at(0)["mean"]),
                   0.0);

  // History: 5m of 10 s buckets = 30 points, ending with the bucket of the
  // windows' "now"; A's three lists sit in one bucket (closed together).
  EXPECT_EQ(int64_t(d["history"]["points"]), 30);
  EXPECT_EQ(int64_t(d["history"]["point_ms"]), 10'000);
  const int64_t now = pipeline_->window_now_ms();
  EXPECT_EQ(int64_t(d["history"]["end_ms"]), (now / 10'000 + 1) * 10'000);
  simdjson::dom::array counts = a["series"].at(0)["history_count"];
  simdjson::dom::array means = a["series"].at(0)["history_mean"];
  ASSERT_EQ(counts.size(), 30u);
  int64_t total = 0;
  for (simdjson::dom::element c : counts) total += int64_t(c);
  EXPECT_EQ(total, 3);
  int nulls = 0;
  for (simdjson::dom::element m : means) {
    if (m.is_null()) {
      ++nulls;
    } else {
      EXPECT_DOUBLE_EQ(Num(m), 1.0 / 3);
    }
  }
  EXPECT_EQ(nulls, 29);  // Empty buckets: no mean, null.
}

TEST_F(SummaryTest, ExperimentsWithIntervalsSrmAndNulls) {
  Request("a1", "A", "en", true);
  Request("a2", "A", "en", false);
  Request("a3", "A", "en", false);
  Request("b1", "B", "en", true);
  Request("b2", "B", "en", true);
  Request("b3", "B", "en", false);
  Request("b4", "B", "en", true);
  pipeline_->FinishAll();  // Scores everything and takes a look.
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::element e = d["experiments"].at(0);
  EXPECT_EQ(std::string_view(e["name"]), "ranker-v2");
  EXPECT_EQ(std::string_view(e["baseline"]), "A");
  // Comparisons: window all, then 5m.
  simdjson::dom::element c = e["comparisons"].at(0);
  EXPECT_EQ(std::string_view(c["treatment"]), "B");
  EXPECT_EQ(std::string_view(c["series"]), "P_1");
  EXPECT_EQ(std::string_view(c["window"]), "all");
  EXPECT_EQ(int64_t(c["baseline_arm"]["count"]), 3);
  EXPECT_EQ(int64_t(c["treatment_arm"]["count"]), 4);
  // A {1, 0, 0}: mean 1/3, variance 1/3; B {1, 1, 0, 1}: 0.75, 0.25.
  // d = 5/12, SE = sqrt(1/9 + 1/16) = 5/12, t = 1,
  // df = (25/144)^2 / ((1/9)^2 / 2 + (1/16)^2 / 3) = 4.032258064516129.
  // SciPy 1.10: 2 * stats.t.sf(1, df) = 0.3734797469866552;
  // 5/12 -+ stats.t.ppf(0.975, df) * 5/12 = -0.7365446697157771,
  // 1.5698780030491106.
  EXPECT_NEAR(Num(c["difference"]), 5.0 / 12, 1e-12);
  EXPECT_NEAR(Num(c["relative_difference"]), 1.25, 1e-12);
  EXPECT_NEAR(Num(c["welch"]["standard_error"]), 5.0 / 12, 1e-12);
  EXPECT_NEAR(Num(c["welch"]["p_value"]), 0.3734797469866552, 1e-7);
  EXPECT_NEAR(Num(c["welch"]["interval"].at(0)), -0.7365446697157771, 1e-7);
  EXPECT_NEAR(Num(c["welch"]["interval"].at(1)), 1.5698780030491106, 1e-7);
  // mSPRT, one look, tau = 0.05, alpha = 0.05: half-width 8.570303187261315
  // (see experiment_collector_test.cc), p-value 1.
  EXPECT_EQ(Num(c["sequential"]["p_value"]), 1.0);
  EXPECT_NEAR(Num(c["sequential"]["interval"].at(1)),
              5.0 / 12 + 8.570303187261315, 1e-9);
  EXPECT_EQ(int64_t(c["sequential"]["looks"]), 1);
  EXPECT_EQ(int64_t(c["verdict"]), 0);
  EXPECT_EQ(std::string_view(c["state"]), "inconclusive");
  // The sliding window has no sequential test.
  EXPECT_EQ(std::string_view(e["comparisons"].at(1)["window"]), "5m");
  EXPECT_TRUE(e["comparisons"].at(1)["sequential"].is_null());
  // SRM: 3 and 4 lists against 50/50; scipy.stats.chisquare([3, 4]) p =
  // 0.7054569861112734.
  simdjson::dom::element srm = e["srm"];
  EXPECT_EQ(int64_t(srm["counts"].at(0)), 3);
  EXPECT_EQ(int64_t(srm["counts"].at(1)), 4);
  EXPECT_EQ(Num(srm["expected_shares"].at(1)), 0.5);
  EXPECT_NEAR(Num(srm["chi_square_p_value"]), 0.7054569861112734, 1e-9);
  EXPECT_FALSE(bool(srm["detected"]));

  // Z never served: its mean, the difference and the Welch interval have no
  // value, written as null, never NaN or Infinity (not JSON).
  simdjson::dom::element z = d["experiments"].at(1)["comparisons"].at(0);
  EXPECT_EQ(int64_t(z["treatment_arm"]["count"]), 0);
  EXPECT_TRUE(z["treatment_arm"]["mean"].is_null());
  EXPECT_TRUE(z["difference"].is_null());
  EXPECT_TRUE(z["welch"]["interval"].at(0).is_null());
  EXPECT_TRUE(z["welch"]["interval"].at(1).is_null());
  EXPECT_EQ(json_.find("NaN"), std::string::npos);
  EXPECT_EQ(json_.find("inf"), std::string::npos);
}

// The summary reads the snapshot alone: rendered after the pipeline has
// moved on and then is gone (as a reload frees its configuration while the
// daemon renders outside its lock), it shows the moment the snapshot was
// taken, the interleaving experiment named from the snapshot's own copy of
// the configuration. P@1 of A at that moment: {1, 0}, mean 1/2.
TEST_F(SummaryTest, RendersTheSnapshotAfterThePipelineIsGone) {
  config::Config c = SummaryConfig();
  c.interleaving = {{"il-test", "il", {"v1", "v2", "v3"}}};
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  Request("a1", "A", "en", true);
  Request("a2", "A", "en", false);
  pipeline_->FinishAll();
  stream::PipelineSnapshot snapshot;
  stream::TakeSnapshot(*pipeline_, &snapshot);
  Request("a3", "A", "en", true);  // After the snapshot: not in it.
  pipeline_->FinishAll();
  pipeline_.reset();
  json_ = BuildSummaryJson(snapshot, nullptr, {1'234, 5'678});
  simdjson::dom::element d;
  ASSERT_EQ(parser_.parse(json_).get(d), simdjson::SUCCESS) << json_;
  simdjson::dom::element a = d["variants"].at(0);
  EXPECT_EQ(std::string_view(a["variant"]), "A");
  EXPECT_EQ(int64_t(a["requests"]), 2);
  EXPECT_DOUBLE_EQ(Num(a["series"].at(0)["windows"].at(0)["mean"]), 0.5);
  EXPECT_EQ(int64_t(d["experiments"].at(0)["comparisons"].at(
                0)["baseline_arm"]["count"]),
            2);
  simdjson::dom::element il = d["interleaving"].at(0);
  EXPECT_EQ(std::string_view(il["name"]), "il-test");
  EXPECT_EQ(std::string_view(il["variant"]), "il");
  simdjson::dom::array teams = il["teams"];
  ASSERT_EQ(teams.size(), 3u);
  EXPECT_EQ(std::string_view(teams.at(2)), "v3");
  EXPECT_EQ(int64_t(il["windows"].at(0)["impressions"]), 0);
}

// With schema.covariate each window-"all" comparison has an `adjusted`
// object (the keys of replay's); window rows have none. The data and
// figures are those of experiment_collector_test.cc's
// AdjustedGaugesWithACovariate (statsmodels 0.15.0, SciPy 1.17.1):
// theta 1.5902964959568733, difference 0.11590296495956831, p
// 0.4515777892645571, interval [-0.23200806042659572,
// 0.46381399034573234]; below the warm-up the always-valid interval is
// unbounded (null).
TEST_F(SummaryTest, AdjustedFiguresWithACovariate) {
  config::Config c = SummaryConfig();
  c.schema.covariate = "pre";
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  const std::pair<const char*, const char*> lists[] = {
      {"A", "0.9"}, {"A", "0.2"}, {"A", "0.4"}, {"A", "0.7"}, {"B", "0.8"},
      {"B", "0.6"}, {"B", "0.1"}, {"B", "0.9"}, {"B", "0.3"}, {"B", "null"}};
  const bool relevant[] = {true, false, false, true,  true,
                           true, false, true,  false, true};
  for (size_t i = 0; i < std::size(lists); ++i) {
    const std::string id = "r" + std::to_string(i);
    pipeline_->OnPayload(stream::Topic::kResults,
                         R"({"request_id":")" + id + R"(","variant":")" +
                             lists[i].first + R"(","pre":)" + lists[i].second +
                             R"(,"timestamp":1000,"results":["a"]})",
                         {0, offset_++});
    if (relevant[i]) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  }
  pipeline_->FinishAll();
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::element e = d["experiments"].at(0);
  simdjson::dom::element a = e["comparisons"].at(0)["adjusted"];
  EXPECT_EQ(std::string_view(a["status"]), "adjusted");
  EXPECT_NEAR(Num(a["theta"]), 1.5902964959568733, 1e-12);
  EXPECT_NEAR(Num(a["difference"]), 0.11590296495956831, 1e-12);
  EXPECT_NEAR(Num(a["p_value"]), 0.4515777892645571, 1e-9);
  EXPECT_NEAR(Num(a["ci_lower"]), -0.23200806042659572, 1e-9);
  EXPECT_NEAR(Num(a["ci_upper"]), 0.46381399034573234, 1e-9);
  EXPECT_NEAR(Num(a["variance_ratio"]), 0.163904650503847, 1e-9);
  EXPECT_EQ(int64_t(a["baseline_count"]), 4);
  EXPECT_EQ(int64_t(a["treatment_count"]), 5);
  EXPECT_EQ(int64_t(a["sequential_looks"]), 0);
  EXPECT_TRUE(a["sequential_ci_lower"].is_null());
  EXPECT_TRUE(a["sequential_ci_upper"].is_null());
  EXPECT_EQ(Num(a["sequential_p_value"]), 1.0);
  EXPECT_EQ(e["comparisons"].at(1)["adjusted"].error(),
            simdjson::NO_SUCH_FIELD);
  // Every adjusted figure under its name, as the gauges and replay have it
  // (null when not finite).
  const stream::Comparison& row = pipeline_->experiments().comparisons()[0];
  for (const stream::NamedFigure& figure :
       stream::AdjustedFigures(row.adjusted)) {
    if (std::isfinite(figure.value)) {
      EXPECT_EQ(Num(a[figure.name]), figure.value) << figure.name;
    } else {
      EXPECT_TRUE(a[figure.name].is_null()) << figure.name;
    }
  }
}

// Query movers (issue 26) of the primary comparison (P@1, the default
// primary): query "qa" served twice per arm, A's lists P@1 1 and 0, B's 1
// and 1: means 0.5 and 1, difference 0.5, share 4/4, contribution 0.5;
// two lists per arm are too few for a test (10 needed).
TEST_F(SummaryTest, QueryMoversOfThePrimaryComparison) {
  int n = 0;
  for (const auto& [variant, relevant] :
       std::vector<std::pair<std::string, bool>>{
           {"A", true}, {"A", false}, {"B", true}, {"B", true}}) {
    const std::string id = "m" + std::to_string(n++);
    pipeline_->OnPayload(stream::Topic::kResults,
                         "{\"request_id\":\"" + id +
                             "\",\"query_id\":\"qa\",\"variant\":\"" + variant +
                             "\",\"timestamp\":1000,\"results\":[\"a\"]}",
                         {0, offset_++});
    if (relevant) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson(id, "a", 1, 2000), {0, offset_++});
    }
  }
  pipeline_->FinishAll();
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::element c = d["experiments"].at(0)["comparisons"].at(0);
  EXPECT_TRUE(bool(c["primary"]));
  simdjson::dom::element m = c["query_movers"].at(0);
  EXPECT_EQ(std::string_view(m["query"]), "qa");
  EXPECT_EQ(int64_t(m["baseline_count"]), 2);
  EXPECT_EQ(int64_t(m["treatment_count"]), 2);
  EXPECT_EQ(Num(m["baseline_mean"]), 0.5);
  EXPECT_EQ(Num(m["treatment_mean"]), 1.0);
  EXPECT_EQ(Num(m["contribution"]), 0.5);
  EXPECT_FALSE(bool(m["tested"]));
  EXPECT_TRUE(m["p_value"].is_null());
  // The sliding window's comparison carries none.
  EXPECT_EQ(d["experiments"].at(0)["comparisons"].at(1)["query_movers"].error(),
            simdjson::NO_SUCH_FIELD);
}

TEST_F(SummaryTest, VerdictChangesWithTheirLooks) {
  // Look 1 (FinishAll): the seven lists of the test above, served at 1 s and
  // filed when their 30 min join window (the default) closes: window "now"
  // 1'000 + 1'800'000 = 1'801'000. The verdict leaves no_data for
  // inconclusive (interval half-width 8.57, see above).
  Request("a1", "A", "en", true);
  Request("a2", "A", "en", false);
  Request("a3", "A", "en", false);
  Request("b1", "B", "en", true);
  Request("b2", "B", "en", true);
  Request("b3", "B", "en", false);
  Request("b4", "B", "en", true);
  pipeline_->FinishAll();
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::element c = d["experiments"].at(0)["comparisons"].at(0);
  simdjson::dom::array changes = c["verdict_changes"];
  ASSERT_EQ(changes.size(), 1u) << json_;
  EXPECT_EQ(int64_t(changes.at(0)["event_ms"]), 1'801'000);
  EXPECT_EQ(int64_t(changes.at(0)["look"]), 1);
  EXPECT_EQ(std::string_view(changes.at(0)["from"]), "no_data");
  EXPECT_EQ(std::string_view(changes.at(0)["to"]), "inconclusive");
  // The sliding window has no verdict, so no changes.
  EXPECT_EQ(d["experiments"]
                .at(0)["comparisons"]
                .at(1)["verdict_changes"]
                .get_array()
                .size(),
            0u);

  // Look 2: 40 more lists per arm, served at 100 s (filed at 1'900'000):
  // A relevant 4 times, B 36 times. Cumulated, A 5/43 = 0.1163 (sample
  // variance 0.1052), B 39/44 = 0.8864 (0.1036): difference 0.7701,
  // V = 0.1052/43 + 0.1036/44 = 0.004800. mSPRT half-width, tau = 0.05,
  // alpha = 0.05: sqrt(V (V + tau^2) / tau^2 * ln((V + tau^2) / (V alpha^2)))
  // = sqrt(0.01402 * ln(608.3)) = 0.3000: [0.47, 1.07] excludes 0, better.
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(i);
    pipeline_->OnPayload(stream::Topic::kResults,
                         ResultsJson("x" + n, "A", 100'000, {"a"}, "en"),
                         {0, offset_++});
    pipeline_->OnPayload(stream::Topic::kResults,
                         ResultsJson("y" + n, "B", 100'000, {"a"}, "en"),
                         {0, offset_++});
    if (i < 4) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson("x" + n, "a", 1, 101'000),
                           {0, offset_++});
    }
    if (i < 36) {
      pipeline_->OnPayload(stream::Topic::kJudgments,
                           JudgmentJson("y" + n, "a", 1, 101'000),
                           {0, offset_++});
    }
  }
  pipeline_->FinishAll();
  d = Parse(nullptr);
  c = d["experiments"].at(0)["comparisons"].at(0);
  EXPECT_EQ(int64_t(c["baseline_arm"]["count"]), 43);
  EXPECT_EQ(int64_t(c["treatment_arm"]["count"]), 44);
  EXPECT_EQ(std::string_view(c["state"]), "better");
  changes = c["verdict_changes"];
  ASSERT_EQ(changes.size(), 2u) << json_;
  EXPECT_EQ(std::string_view(changes.at(0)["to"]), "inconclusive");
  EXPECT_EQ(int64_t(changes.at(1)["event_ms"]), 1'900'000);
  EXPECT_EQ(int64_t(changes.at(1)["look"]), 2);
  EXPECT_EQ(std::string_view(changes.at(1)["from"]), "inconclusive");
  EXPECT_EQ(std::string_view(changes.at(1)["to"]), "better");

  // A look that changes nothing adds nothing.
  pipeline_->FinishAll();
  d = Parse(nullptr);
  EXPECT_EQ(d["experiments"]
                .at(0)["comparisons"]
                .at(0)["verdict_changes"]
                .get_array()
                .size(),
            2u);
}

TEST_F(SummaryTest, PipelineHealthAndKafka) {
  Request("a1", "A", "en", true);
  Request("a2", "A", "en", false);
  pipeline_->OnPayload(stream::Topic::kResults, "{not json", {0, offset_++});
  pipeline_->OnPayload(stream::Topic::kJudgments, "[]", {0, offset_++});
  kafka::IngestState kafka;
  kafka.topics = {"res", "judg"};
  kafka.partitions = {
      {"res", 0, 5, 10, 15}, {"judg", 1, -1, -1, -1}, {"judg", 0, 7, 3, 10}};
  kafka.rebalances = 2;
  simdjson::dom::element d = Parse(&kafka);
  simdjson::dom::element p = d["pipeline"];
  simdjson::dom::element results = p["topics"].at(0);
  EXPECT_EQ(std::string_view(results["topic"]), "results");
  EXPECT_EQ(std::string_view(results["kafka_topic"]), "res");
  EXPECT_EQ(int64_t(results["consumed"]), 3);  // a1, a2, the malformed one.
  EXPECT_EQ(int64_t(results["rejected"]), 1);
  EXPECT_EQ(int64_t(results["rejects"]["malformed_json"]), 1);
  EXPECT_EQ(int64_t(results["last_event_ms"]), 1000);
  simdjson::dom::element judgments = p["topics"].at(1);
  EXPECT_EQ(int64_t(judgments["consumed"]), 2);  // a1's, and "[]".
  EXPECT_EQ(int64_t(judgments["rejected"]), 1);
  // Both lists wait for their join window: pending, nothing scored.
  EXPECT_EQ(int64_t(p["pending_requests"]), 2);
  EXPECT_EQ(int64_t(p["scored"]), 0);
  EXPECT_EQ(int64_t(p["evicted"]), 0);
  simdjson::dom::element k = d["kafka"];
  // Never consuming: the first reason of the predicate.
  EXPECT_FALSE(bool(k["ready"]));
  EXPECT_EQ(std::string_view(k["reason"]), "not_consuming");
  EXPECT_EQ(std::string_view(k["message"]), kafka.ReadinessMessage(5'678));
  EXPECT_EQ(k["partitions"].get_array().size(), 3u);
  EXPECT_EQ(int64_t(k["partitions"].at(1)["lag"]), -1);
  EXPECT_EQ(int64_t(k["total_lag"]), 5 + 7);  // Unknown lag (-1) left out.
  EXPECT_EQ(int64_t(k["rebalances"]), 2);
  // Replay: no Kafka.
  EXPECT_TRUE(Parse(nullptr)["kafka"].is_null());
}

// With judges (issue 29): the story of stream/judge_report_test_util.h, whose
// figures are worked out by hand there. `judges` and `agreement` stay;
// `judge_figures` is written by the writer replay uses.
TEST_F(SummaryTest, JudgeFiguresBesideTheJudgesAgreement) {
  auto p = stream::Pipeline::Create(stream::judge_story::JudgeStoryConfig(),
                                    &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  ASSERT_TRUE(stream::judge_story::FeedJudgeStory(
      pipeline_.get(), clock_.NowMillis() - 600'000));
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::array judges = d["judges"];
  ASSERT_EQ(judges.size(), 2u) << json_;
  // Human and llm both graded 6 docs; kappa 0 (observed = expected = 1/2).
  simdjson::dom::element a = d["agreement"].get_array().at(0);
  EXPECT_EQ(int64_t(a["pairs"]), 6);
  EXPECT_NEAR(Num(a["kappa"]), 0.0, 1e-12);
  simdjson::dom::element f = d["judge_figures"];
  ASSERT_TRUE(f.is_object()) << json_;
  EXPECT_EQ(std::string_view(f["combine"]), "precedence");
  // B's unjudged share in the 5m window: (0 + 1 + 0.5) / 3 lists.
  bool found = false;
  for (simdjson::dom::element row : f["unjudged"].get_array()) {
    if (std::string_view(row["variant"]) != "B" ||
        std::string_view(row["window"]) != "5m") {
      continue;
    }
    found = true;
    EXPECT_EQ(int64_t(row["lists"]), 3);
    EXPECT_DOUBLE_EQ(Num(row["mean"]), 0.5);
  }
  EXPECT_TRUE(found) << json_;
  // A's PPI since start: 0.25 +- 1.959964 x sqrt(0.03125).
  simdjson::dom::element ppi = f["ppi"].get_array().at(0);
  EXPECT_NEAR(Num(ppi["estimate"]), 0.25, 1e-12);
  EXPECT_NEAR(Num(ppi["upper"]), 0.5964755, 1e-6);
  simdjson::dom::element check = f["coverage_checks"].get_array().at(0);
  EXPECT_EQ(std::string_view(check["experiment"]), "ranker");
  EXPECT_TRUE(bool(check["flagged"]));
  EXPECT_EQ(
      std::string_view(f["agreement_windows"].get_array().at(0)["window"]),
      "5m");
}

TEST_F(SummaryTest, NoJudgeFiguresWithoutJudges) {
  Request("r1", "A", "de", true);
  simdjson::dom::element d = Parse(nullptr);
  EXPECT_EQ(d["judge_figures"].error(), simdjson::NO_SUCH_FIELD) << json_;
  EXPECT_EQ(d["judges"].get_array().size(), 0u);
}

// Every time in the summary ("*_ms") is null or a millisecond a JavaScript
// Date can hold (|ms| <= 8.64e15), so the page can show it; `path` names
// the offending one.
void ExpectTimesDisplayable(simdjson::dom::element e, const std::string& path,
                            int* times) {
  if (e.is_array()) {
    size_t i = 0;
    for (simdjson::dom::element x : e.get_array()) {
      ExpectTimesDisplayable(x, path + "[" + std::to_string(i++) + "]", times);
    }
    return;
  }
  if (!e.is_object()) return;
  for (auto [key, value] : e.get_object()) {
    const std::string where = path + "." + std::string(key);
    if (key.size() > 3 && key.substr(key.size() - 3) == "_ms") {
      ++*times;
      if (value.is_null()) continue;
      ASSERT_TRUE(value.is_int64()) << where;
      EXPECT_LE(std::abs(double(int64_t(value))), 8.64e15) << where;
    }
    ExpectTimesDisplayable(value, where, times);
  }
}

// The first look of a daemon with an experiment, before any event (issue
// 43): the decision holds since no event time, null (it was INT64_MIN,
// which the page could not show), and so is every other time.
TEST_F(SummaryTest, AtTheFirstLookEveryTimeIsNullOrDisplayable) {
  pipeline_->AdvanceWallClock();
  simdjson::dom::element d = Parse(nullptr);
  simdjson::dom::element decision = d["experiments"].at(0)["decisions"].at(0);
  EXPECT_EQ(std::string_view(decision["value"]), "keep_running");
  EXPECT_TRUE(decision["since_event_ms"].is_null()) << json_;
  int times = 0;
  ExpectTimesDisplayable(d, "summary", &times);
  EXPECT_GT(times, 5) << json_;
  // Events read, the value unchanged: the first look with an event time
  // dates it (issue 42), at that look's event time, the pipeline's
  // window_now_ms.
  Request("a1", "A", "en", true);
  Request("b1", "B", "en", true);
  pipeline_->FinishAll();
  d = Parse(nullptr);
  ExpectTimesDisplayable(d, "summary", &times);
  decision = d["experiments"].at(0)["decisions"].at(0);
  EXPECT_EQ(std::string_view(decision["value"]), "keep_running");
  EXPECT_EQ(int64_t(decision["since_event_ms"]),
            int64_t(d["pipeline"]["window_now_ms"]))
      << json_;
}

// Every count of what the UBI join set aside is in the summary as in
// /metrics and replay (issue 44), from UBI records read with the preset:
//   q1 lists its hits [a, b]: its impression is ignored (the hits are the
//      list), and its click on b claims ordinal 1 (base 1: no event of q1
//      claims 0), where a was served: one position mismatch;
//   q2 lists no hits: ranked by its one impression (x);
//   q3 lists no hits and has no impression: unranked.
TEST_F(SummaryTest, UbiJoinCountsAreInThePipelineObject) {
  auto p = stream::Pipeline::Create(
      config::MustParse("schema:\n  preset: ubi\n"), &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  // Event times near the clock (events.min_timestamp is 2010).
  constexpr int64_t kT = 1'700'000'000'000;
  const auto event = [](const std::string& action, const std::string& q,
                        int64_t t, const std::string& doc, int ordinal) {
    return R"({"action_name":")" + action + R"(","query_id":")" + q +
           R"(","timestamp":)" + std::to_string(t) +
           R"(,"event_attributes":{"object":{"object_id":")" + doc +
           R"("},"position":{"ordinal":)" + std::to_string(ordinal) + "}}}";
  };
  for (const std::string& json :
       {std::string(R"({"query_id":"q1","user_query":"shoes",)"
                    R"("query_response_hit_ids":["a","b"],"timestamp":)" +
                    std::to_string(kT) + "}"),
        std::string(R"({"query_id":"q2","user_query":"socks",)"
                    R"("timestamp":)" +
                    std::to_string(kT) + "}"),
        std::string(R"({"query_id":"q3","user_query":"hats",)"
                    R"("timestamp":)" +
                    std::to_string(kT) + "}")}) {
    pipeline_->OnPayload(stream::Topic::kResults, json, {0, offset_++});
  }
  for (const std::string& json :
       {event("impression", "q1", kT + 100, "b", 2),
        event("click", "q1", kT + 200, "b", 1),
        event("impression", "q2", kT + 100, "x", 1)}) {
    pipeline_->OnPayload(stream::Topic::kJudgments, json, {0, offset_++});
  }
  pipeline_->FinishAll();
  simdjson::dom::element pipeline = Parse(nullptr)["pipeline"];
  EXPECT_EQ(int64_t(pipeline["ignored_impressions"]), 1) << json_;
  EXPECT_EQ(int64_t(pipeline["position_mismatches"]), 1) << json_;
  EXPECT_EQ(int64_t(pipeline["ranked_by_impressions"]), 1) << json_;
  EXPECT_EQ(int64_t(pipeline["unranked_requests"]), 1) << json_;
  EXPECT_EQ(int64_t(pipeline["table_full"]), 0) << json_;
  EXPECT_EQ(int64_t(pipeline["finalized"]), 2) << json_;  // q1, q2.
}

// When the first figures are due (issue 43): null before any results event;
// then the first request's event time plus join.window (30m by default:
// 1'800'000 ms) plus join.allowed_lateness (1m: 60'000): 1'000 +
// 1'800'000 + 60'000 = 1'861'000, even with a later request read first;
// null again once a list is scored.
TEST_F(SummaryTest, FirstFiguresDueFromTheJoinWindow) {
  simdjson::dom::element p = Parse(nullptr)["pipeline"];
  EXPECT_TRUE(p["first_figures_due_ms"].is_null()) << json_;
  EXPECT_EQ(int64_t(p["join_wait_ms"]), 1'800'000);
  EXPECT_EQ(int64_t(p["allowed_lateness_ms"]), 60'000);
  pipeline_->OnPayload(stream::Topic::kResults,
                       ResultsJson("late", "A", 5000, {"a"}, "en"),
                       {0, offset_++});
  Request("a1", "A", "en", true);  // Served at 1000.
  p = Parse(nullptr)["pipeline"];
  EXPECT_EQ(int64_t(p["first_figures_due_ms"]), 1'861'000) << json_;
  pipeline_->FinishAll();
  p = Parse(nullptr)["pipeline"];
  EXPECT_TRUE(p["first_figures_due_ms"].is_null()) << json_;
  // Neither results event has a query_id (schema.query_id): both counted,
  // one with it is not.
  EXPECT_EQ(int64_t(p["results_without_query_id"]), 2) << json_;
  pipeline_->OnPayload(stream::Topic::kResults,
                       R"({"request_id":"q","query_id":"q1","variant":"A",)"
                       R"("timestamp":6000,"results":["a"]})",
                       {0, offset_++});
  p = Parse(nullptr)["pipeline"];
  EXPECT_EQ(int64_t(p["results_without_query_id"]), 2) << json_;
  EXPECT_EQ(int64_t(p["topics"].at(0)["consumed"]), 3) << json_;
}

}  // namespace
}  // namespace rankwatch::page
