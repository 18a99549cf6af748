#include "daemon/exporter/interleaving_collector.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/exporter/pipeline_collector.h"
#include "gtest/gtest.h"
#include "tests/testing/prometheus_text.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;

constexpr int64_t kT0 = 1'700'000'000'000;

// ctr@3, abandonment and precision@3; experiment "b_vs_a" interleaves A
// and B as variant "A-vs-B"; judgments of kind "label" are no clicks.
config::Config InterleavingConfig() {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision, metrics::Measure::kCtr,
                        metrics::Measure::kAbandonment};
  c.metrics.cutoffs = {3};
  c.metrics.click_exclude_kinds = {"label"};
  c.aggregation.windows = {std::chrono::minutes(5)};
  c.interleaving = {{"b_vs_a", "A-vs-B", {"A", "B"}}};
  return c;
}

// A results event of docs d1..d3 served at kT0 + 1 s, with `teams` (one
// per doc) unless empty.
std::string Results(const std::string& id, const std::string& variant,
                    const std::vector<std::string>& teams) {
  std::string json = R"({"request_id":")" + id + R"(","variant":")" + variant +
                     R"(","timestamp":)" + std::to_string(kT0 + 1000) +
                     R"(,"results":[)";
  for (size_t i = 0; i < 3; ++i) {
    if (i > 0) json += ",";
    json += R"({"doc_id":"d)" + std::to_string(i + 1) + "\"";
    if (!teams.empty()) json += R"(,"team":")" + teams[i] + "\"";
    json += "}";
  }
  return json + "]}";
}

std::string Judgment(const std::string& id, const std::string& doc, int grade,
                     int64_t after_ms, const std::string& kind = "click") {
  return R"({"request_id":")" + id + R"(","doc_id":")" + doc +
         R"(","relevance":)" + std::to_string(grade) + R"(,"kind":")" + kind +
         R"(","timestamp":)" + std::to_string(kT0 + after_ms) + "}";
}

class InterleavingCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = stream::Pipeline::Create(InterleavingConfig(), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  void Feed(stream::Topic topic, const std::string& json) {
    pipeline_->OnPayload(topic, json, {0, offset_++});
  }

  Scrape Collect() const {
    std::vector<prometheus::MetricFamily> families;
    const stream::PipelineSnapshot snapshot = testing::Snapshot(*pipeline_);
    PipelineCollector().Collect(snapshot, &families);
    InterleavingCollector().Collect(snapshot, &families);
    return Scrape::Parse(SerializeText(families));
  }

  FakeClock clock_{kT0};
  std::unique_ptr<stream::Pipeline> pipeline_;
  int64_t offset_ = 0;
};

TEST_F(InterleavingCollectorTest, CreditsClicksToTeams) {
  using stream::Topic;
  // r1: B contributed d2, clicked: B wins.
  Feed(Topic::kResults, Results("r1", "A-vs-B", {"A", "B", "A"}));
  Feed(Topic::kJudgments, Judgment("r1", "d2", 1, 3500));
  // r2: one click on each team: a tie.
  Feed(Topic::kResults, Results("r2", "A-vs-B", {"B", "A", "B"}));
  Feed(Topic::kJudgments, Judgment("r2", "d1", 1, 1500));
  Feed(Topic::kJudgments, Judgment("r2", "d2", 1, 4000));
  // r3: a click on A's d1; B's d2 has a label, which is no click: A wins.
  Feed(Topic::kResults, Results("r3", "A-vs-B", {"A", "B", "B"}));
  Feed(Topic::kJudgments, Judgment("r3", "d2", 3, 2000, "label"));
  Feed(Topic::kJudgments, Judgment("r3", "d1", 1, 12000));
  // r4: no click.
  Feed(Topic::kResults, Results("r4", "A-vs-B", {"A", "B", "A"}));
  // r5: two clicks on B's docs, stamped 300 ms before the results event
  // (within join.early_tolerance): B wins; first click delay 0.
  Feed(Topic::kResults, Results("r5", "A-vs-B", {"B", "B", "A"}));
  Feed(Topic::kJudgments, Judgment("r5", "d1", 1, 700));
  Feed(Topic::kJudgments, Judgment("r5", "d2", 1, 800));
  // Rejected: an unknown team, a missing one. Nothing else changes.
  Feed(Topic::kResults, Results("r6", "A-vs-B", {"A", "C", "A"}));
  Feed(Topic::kResults, Results("r7", "A-vs-B", {}));
  // r8 is variant A, not interleaved: only a label, grade 2. Relevant for
  // precision (1/3), no click for ctr (0) and abandonment (1).
  Feed(Topic::kResults, Results("r8", "A", {}));
  Feed(Topic::kJudgments, Judgment("r8", "d3", 2, 2000, "label"));
  pipeline_->FinishAll();

  const stream::PipelineCounters& c = pipeline_->counters();
  EXPECT_EQ(
      c.rejected[0][static_cast<size_t>(stream::RejectReason::kUnknownTeam)],
      1);
  EXPECT_EQ(
      c.rejected[0][static_cast<size_t>(stream::RejectReason::kMissingField)],
      1);

  const Scrape s = Collect();
  const std::map<std::string, std::string> e = {{"experiment", "b_vs_a"}};
  EXPECT_EQ(s.Sum("rankwatch_interleaving_impressions_total", e), 5);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_wins_total",
                  {{"experiment", "b_vs_a"}, {"team", "A"}}),
            1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_wins_total",
                  {{"experiment", "b_vs_a"}, {"team", "B"}}),
            2);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_ties_total", e), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_no_click_total", e), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_info", {{"experiment", "b_vs_a"},
                                                  {"variant", "A-vs-B"},
                                                  {"incumbent", "A"},
                                                  {"challenger", "B"}}),
            1);
  for (const char* window : {"all", "5m"}) {
    SCOPED_TRACE(window);
    const std::map<std::string, std::string> w = {{"experiment", "b_vs_a"},
                                                  {"window", window}};
    EXPECT_EQ(s.Sum("rankwatch_interleaving_window_impressions", w), 5);
    EXPECT_EQ(s.Sum("rankwatch_interleaving_window_ties", w), 1);
    // (2 + 1/2) / 4 - 1/2.
    EXPECT_DOUBLE_EQ(s.Sum("rankwatch_interleaving_preference", w), 0.125);
    // scipy.stats.binomtest(2, 3, 0.5).pvalue = 1.0
    EXPECT_DOUBLE_EQ(s.Sum("rankwatch_interleaving_p_value", w), 1.0);
  }
  // mpmath: LR = beta(49.5 + 2, 49.5 + 1) / beta(49.5, 49.5) * 2**3 = 0.99
  // < 1, so p = min(1, 1 / LR) = 1.
  EXPECT_EQ(s.Sum("rankwatch_interleaving_sequential_p_value", e), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_verdict", e), 0);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_verdict_state",
                  {{"experiment", "b_vs_a"}, {"state", "inconclusive"}}),
            1);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_interleaving_prior_shape"), 49.5);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_ab_confidence_level"), 0.95);

  // First clicks of A-vs-B: r1 2.5 s, r2 0.5 s, r3 11 s (the label at 1 s
  // is no click), r5 0 s (clamped).
  const std::map<std::string, std::string> v = {{"variant", "A-vs-B"}};
  EXPECT_EQ(s.Sum("rankwatch_time_to_first_click_seconds_count", v), 4);
  EXPECT_DOUBLE_EQ(s.Sum("rankwatch_time_to_first_click_seconds_sum", v), 14);
  EXPECT_EQ(s.Sum("rankwatch_time_to_first_click_seconds_bucket",
                  {{"variant", "A-vs-B"}, {"le", "0.5"}}),
            2);
  EXPECT_EQ(s.Sum("rankwatch_time_to_first_click_seconds_bucket",
                  {{"variant", "A-vs-B"}, {"le", "5"}}),
            3);
  EXPECT_EQ(s.Sum("rankwatch_time_to_first_click_seconds_bucket",
                  {{"variant", "A-vs-B"}, {"le", "10"}}),
            3);
  EXPECT_EQ(s.Sum("rankwatch_time_to_first_click_seconds_bucket",
                  {{"variant", "A-vs-B"}, {"le", "30"}}),
            4);
  // Variant A: a label only.
  EXPECT_EQ(
      s.Sum("rankwatch_time_to_first_click_seconds_count", {{"variant", "A"}}),
      0);
  const std::map<std::string, std::string> a = {
      {"variant", "A"}, {"k", "3"}, {"window", "all"}};
  EXPECT_NEAR(s.Sum("rankwatch_precision_mean", a), 1.0 / 3, 1e-12);
  EXPECT_EQ(s.Sum("rankwatch_ctr_mean", a), 0);
  EXPECT_EQ(s.Sum("rankwatch_abandonment_mean",
                  {{"variant", "A"}, {"k", "all"}, {"window", "all"}}),
            1);
  // A-vs-B: r3's ctr@3 comes from its click on d1; r4 abandoned.
  EXPECT_DOUBLE_EQ(
      s.Sum("rankwatch_ctr_mean",
            {{"variant", "A-vs-B"}, {"k", "3"}, {"window", "all"}}),
      0.8);
}

TEST_F(InterleavingCollectorTest, NothingWithoutExperiments) {
  config::Config c;
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok());
  std::vector<prometheus::MetricFamily> families;
  InterleavingCollector().Collect(testing::Snapshot(**p), &families);
  EXPECT_TRUE(families.empty());
}

// Three teams multileaved as variant "M" (experiment "abc"). By hand:
//   r1: A B C, click d3 (C): C 1. (A,B) tie, (A,C) C, (B,C) C.
//   r2: B C A, clicks d1 (B), d3 (A): A 1, B 1. (A,B) tie, (A,C) A,
//       (B,C) B.
//   r3: C A B, no click.
//   r4: A C B, click d2 (C): C 1. (A,B) tie, (A,C) C, (B,C) C.
// Clicks A 1, B 1, C 2; (A,B) ties 3; (A,C) A 1, C 2 -> preference of C
// (2 + 0) / 3 - 1/2 = 1/6; (B,C) B 1, C 2 -> 1/6. Four decided
// impressions at most: no verdict, no winner; Copeland 0 for all, the
// point scores A -1 (loses to C), B -1, C +2: C ranks first, then A and
// B in configuration order.
TEST_F(InterleavingCollectorTest, MultileavingPairsAndRanking) {
  config::Config c = InterleavingConfig();
  c.interleaving.push_back({"abc", "M", {"A", "B", "C"}});
  auto p = stream::Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pipeline_ = std::move(p).value();
  using stream::Topic;
  Feed(Topic::kResults, Results("r1", "M", {"A", "B", "C"}));
  Feed(Topic::kJudgments, Judgment("r1", "d3", 1, 2000));
  Feed(Topic::kResults, Results("r2", "M", {"B", "C", "A"}));
  Feed(Topic::kJudgments, Judgment("r2", "d1", 1, 2000));
  Feed(Topic::kJudgments, Judgment("r2", "d3", 1, 2500));
  Feed(Topic::kResults, Results("r3", "M", {"C", "A", "B"}));
  Feed(Topic::kResults, Results("r4", "M", {"A", "C", "B"}));
  Feed(Topic::kJudgments, Judgment("r4", "d2", 1, 3000));
  // An unknown team names all three in the reject.
  Feed(Topic::kResults, Results("r5", "M", {"A", "D", "B"}));
  pipeline_->FinishAll();
  EXPECT_EQ(
      pipeline_->counters()
          .rejected[0][static_cast<size_t>(stream::RejectReason::kUnknownTeam)],
      1);

  const Scrape s = Collect();
  const auto team = [](const char* t) {
    return std::map<std::string, std::string>{{"experiment", "abc"},
                                              {"team", t}};
  };
  const auto pair = [](const char* x, const char* y) {
    return std::map<std::string, std::string>{
        {"experiment", "abc"}, {"first", x}, {"second", y}};
  };
  const auto with = [](std::map<std::string, std::string> m, const char* k,
                       const char* v) {
    m[k] = v;
    return m;
  };
  EXPECT_EQ(s.Sum("rankwatch_interleaving_clicks_total", team("A")), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_clicks_total", team("B")), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_clicks_total", team("C")), 2);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_team_info",
                  with(team("C"), "position", "2")),
            1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_ties_total", pair("A", "B")), 3);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_wins_total", pair("A", "B")), 0);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_wins_total",
                  with(pair("A", "C"), "winner", "first")),
            1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_wins_total",
                  with(pair("A", "C"), "winner", "second")),
            2);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_wins_total",
                  with(pair("B", "C"), "winner", "second")),
            2);
  EXPECT_NEAR(s.Sum("rankwatch_interleaving_pair_preference",
                    with(pair("A", "C"), "window", "all")),
              1.0 / 6, 1e-12);
  EXPECT_NEAR(s.Sum("rankwatch_interleaving_pair_preference",
                    with(pair("B", "C"), "window", "5m")),
              1.0 / 6, 1e-12);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_pair_verdict", pair("A", "C")), 0);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_rank", team("C")), 1);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_rank", team("A")), 2);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_rank", team("B")), 3);
  EXPECT_EQ(s.Sum("rankwatch_interleaving_winner", {{"experiment", "abc"}}), 0);
  // The two-team experiment has its one pair too.
  EXPECT_TRUE(
      s.Has("rankwatch_interleaving_pair_ties_total",
            {{"experiment", "b_vs_a"}, {"first", "A"}, {"second", "B"}}));
  EXPECT_FALSE(s.Has("rankwatch_interleaving_pair_ties_total",
                     {{"experiment", "b_vs_a"}, {"first", "B"}}));
}

}  // namespace
}  // namespace rankwatch::exporter
