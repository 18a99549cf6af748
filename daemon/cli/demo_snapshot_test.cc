#include "daemon/cli/demo_snapshot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "config/config_loader.h"
#include "daemon/cli/demo_story.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"

namespace rankwatch::cli {
namespace {

using stream::EventOrigin;
using stream::Pipeline;
using stream::PipelineSnapshot;
using stream::Topic;

using stream::kNow;  // stream_test_util.h

// "%+.3f", as the story prints an interval's ends.
std::string Signed3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.3f", x);
  return buf;
}

// A real pipeline fed with JSON events, whose snapshot (the one the
// exporter renders) the demo's story reads.
class DemoSnapshotTest : public ::testing::Test {
 protected:
  void Configure(const std::string& yaml) {
    auto c = config::ParseConfig("join: {window: 10s}\n" + yaml, "test.yaml");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = *std::move(c);
    pipeline_.reset();
    offset_ = 0;
  }
  Pipeline& pipeline() {
    if (!pipeline_) {
      auto p = Pipeline::Create(config_, &clock_);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      pipeline_ = std::move(p).value();
    }
    return *pipeline_;
  }
  // A list of `docs` ("a", or {"doc_id": "a", "team": "B"} objects) served
  // to `variant` for `query`, with `extra` members of the results event,
  // clicked on `clicked`.
  void Serve(const std::string& variant, const std::string& query,
             const std::string& docs, const std::vector<std::string>& clicked,
             const std::string& extra = "") {
    const std::string id = "r" + std::to_string(offset_);
    const int64_t t = kNow - 600'000 + 100 * offset_;
    ASSERT_TRUE(pipeline().OnPayload(
        Topic::kResults,
        "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
            "\",\"query_id\":\"" + query + "\",\"timestamp\":" +
            std::to_string(t) + ",\"results\":[" + docs + "]" + extra + "}",
        EventOrigin{0, offset_++}));
    for (const std::string& doc : clicked) {
      (void)pipeline().OnPayload(
          Topic::kJudgments,
          "{\"request_id\":\"" + id +
              "\",\"timestamp\":" + std::to_string(t + 50) + ",\"doc_id\":\"" +
              doc + "\",\"relevance\":1}",
          EventOrigin{1, offset_++});
    }
  }
  // Every list finalized, a look taken: the daemon's Snapshot().
  PipelineSnapshot Take() {
    pipeline().FinishAll();
    pipeline().RefreshLook();
    PipelineSnapshot s;
    stream::TakeSnapshot(pipeline(), &s);
    return s;
  }
  // The window-"all" comparison of `trec_name` for treatment B.
  static const stream::Comparison* Whole(const PipelineSnapshot& s,
                                         const std::string& trec_name) {
    for (const stream::Comparison& c : s.comparisons) {
      if (c.window < 0 && c.treatment == "B" &&
          s.series[c.series].trec_name == trec_name) {
        return &c;
      }
    }
    return nullptr;
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
  int64_t offset_ = 0;
};

// No minimum sample (issue 42): these tests read the figures of a
// handful of lists, the decision included.
constexpr char kAb[] = R"(
metrics: {measures: [precision], cutoffs: [1, 2]}
aggregation: {segments: [locale]}
experiments:
  - {name: x, baseline: A, treatments: [B], primary: [precision@1],
     min_lists: 0, min_duration: 0s}
)";

const std::vector<Headline> kHeadlines = {{"precision", "1"}, {"ndcg", "10"}};

TEST_F(DemoSnapshotTest, SumsEachVariantOverItsSegments) {
  Configure(kAb);
  const std::string ab = "\"a\",\"b\"";
  const std::string en = ",\"segments\":{\"locale\":\"en\"}";
  const std::string de = ",\"segments\":{\"locale\":\"de\"}";
  // A: P@1 1, 0 in en (clicked at rank 1, then 2), 1, 1 in de; B: 0.
  Serve("A", "q1", ab, {"a"}, en);
  Serve("A", "q1", ab, {"b"}, en);
  Serve("A", "q2", ab, {"a"}, de);
  Serve("A", "q2", ab, {"a"}, de);
  Serve("B", "q1", ab, {"b"}, en);
  const DemoSnapshot s = DemoSnapshotOf(Take(), kHeadlines);

  EXPECT_EQ(s.events_consumed, 10);  // 5 results and 5 clicks.
  EXPECT_DOUBLE_EQ(s.level, 0.95);
  EXPECT_EQ(s.covariate, "");
  ASSERT_EQ(s.variants.size(), 2u);
  const VariantFigures& a = s.variants[0];
  EXPECT_EQ(a.variant, "A");
  EXPECT_EQ(a.lists, 4);  // 2 + 2 over the locales.
  ASSERT_EQ(a.headlines.size(), 2u);
  // x = [1, 0, 1, 1]: mean 0.75. SciPy 1.10: x.mean() -/+
  // norm.ppf(0.975) * x.std(ddof=1) / sqrt(4) = 0.2600090038649865,
  // 1.2399909961350135.
  EXPECT_NEAR(a.headlines[0].value, 0.75, 1e-12);
  EXPECT_NEAR(a.headlines[0].lower, 0.2600090038649865, 1e-9);
  EXPECT_NEAR(a.headlines[0].upper, 1.2399909961350135, 1e-9);
  EXPECT_TRUE(std::isnan(a.headlines[1].value));  // No ndcg series.
  const VariantFigures& b = s.variants[1];
  EXPECT_EQ(b.variant, "B");
  EXPECT_EQ(b.lists, 1);
  EXPECT_DOUBLE_EQ(b.headlines[0].value, 0);
  EXPECT_EQ(b.headlines[0].lower, -INFINITY);  // One list: no interval.
  EXPECT_EQ(b.headlines[0].upper, INFINITY);

  // precision@2 is compared too, but is no headline.
  ASSERT_EQ(s.ab.size(), 1u);
  EXPECT_EQ(s.ab[0].experiment, "x");
  EXPECT_EQ(s.ab[0].baseline, "A");
  EXPECT_EQ(s.ab[0].treatment, "B");
  EXPECT_EQ(s.ab[0].headline, (Headline{"precision", "1"}));
  EXPECT_DOUBLE_EQ(s.ab[0].difference.value, -0.75);  // 0 - 0.75.
  EXPECT_DOUBLE_EQ(s.ab[0].look.value, -0.75);        // The same estimate.
  // One list of B: no variance, no look with data yet.
  EXPECT_EQ(s.ab[0].verdict, Verdict::kNoData);
  EXPECT_TRUE(s.ab[0].movers.empty());  // statistics.export_query_movers 0.
  EXPECT_FALSE(s.ab[0].has_adjusted);   // No schema.covariate.

  ASSERT_EQ(s.srm.size(), 1u);
  EXPECT_EQ(s.srm[0].experiment, "x");
  EXPECT_FALSE(s.srm[0].detected);  // 4 : 1 is no evidence yet.
  EXPECT_GT(s.srm[0].p_value, 0.01);
  EXPECT_LE(s.srm[0].p_value, 1);

  ASSERT_EQ(s.decisions.size(), 1u);
  EXPECT_EQ(s.decisions[0].value, "keep_running");
  ASSERT_EQ(s.decisions[0].inputs.size(), 1u);
  EXPECT_EQ(s.decisions[0].inputs[0].series, (Headline{"precision", "1"}));
  EXPECT_EQ(s.decisions[0].inputs[0].input, 0);
  EXPECT_TRUE(s.interleaving.empty());
}

// B worse than A by far on precision@1: a verdict with its always-valid
// intervals, the decision that follows, and the top movers up to
// statistics.export_query_movers.
class DemoSnapshotWorseTest : public DemoSnapshotTest {
 protected:
  // q2 first: A 14 of 15 lists clicked at rank 1 (P@1 mean 14/15), B 1 of
  // 15 (1/15), and a look (difference -13/15, small variances); then q1:
  // both arms 8 of 15 at rank 1, alternating. Means: A 22/30, B 9/30,
  // difference -13/30. The second look's interval, wider (larger
  // variances) around a smaller difference, reaches beyond the first's
  // upper end: the running intersection is not the latest look's. Movers
  // (share 30/60 each): q2 difference -13/15, contribution -13/30; q1 0,
  // 0.
  void ServeWorse() {
    const std::string ab = "\"a\",\"b\"";
    for (int i = 0; i < 15; ++i) {
      Serve("A", "q2", ab, {i < 14 ? "a" : "b"});
      Serve("B", "q2", ab, {i < 1 ? "a" : "b"});
    }
    (void)Take();
    for (int i = 0; i < 15; ++i) {
      Serve("A", "q1", ab, {i % 2 == 0 ? "a" : "b"});
      Serve("B", "q1", ab, {i % 2 == 0 ? "a" : "b"});
    }
  }
};

TEST_F(DemoSnapshotWorseTest, ReadsTheVerdictTheDecisionAndTheTopMovers) {
  Configure(std::string(kAb) + "statistics: {export_query_movers: 1}\n");
  ServeWorse();
  const PipelineSnapshot p = Take();
  const DemoSnapshot s = DemoSnapshotOf(p, kHeadlines);
  ASSERT_EQ(s.ab.size(), 1u);
  const AbFigures& ab = s.ab[0];
  EXPECT_EQ(ab.verdict, Verdict::kWorse);
  EXPECT_NEAR(ab.difference.value, -13.0 / 30, 1e-12);
  EXPECT_NEAR(ab.look.value, -13.0 / 30, 1e-12);
  // Worse: the running interval lies below 0; the latest look's holds the
  // estimate.
  EXPECT_LT(ab.difference.upper, 0);
  EXPECT_LE(ab.look.lower, -13.0 / 30);
  EXPECT_GE(ab.look.upper, -13.0 / 30);
  // The comparison's running mSPRT interval and its latest look's, as
  // rankwatch_ab_sequential_ci_* and _look_ci_* export them.
  const stream::Comparison* c = Whole(p, "P_1");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->sequential.looks(), 2);
  ASSERT_LT(c->sequential.interval().upper, c->look.interval.upper);
  EXPECT_EQ(ab.difference.lower, c->sequential.interval().lower);
  EXPECT_EQ(ab.difference.upper, c->sequential.interval().upper);
  EXPECT_EQ(ab.look.lower, c->look.interval.lower);
  EXPECT_EQ(ab.look.upper, c->look.interval.upper);

  // The first mover only (export_query_movers: 1): q2.
  ASSERT_EQ(ab.movers.size(), 1u);
  EXPECT_EQ(ab.movers[0].query, "q2");
  EXPECT_NEAR(ab.movers[0].difference, -13.0 / 15, 1e-12);
  EXPECT_NEAR(ab.movers[0].contribution, -13.0 / 30, 1e-12);

  // One primary series, worse: do not ship; the decision read the
  // comparison's own running interval.
  ASSERT_EQ(s.decisions.size(), 1u);
  const DecisionFigures& d = s.decisions[0];
  EXPECT_EQ(d.experiment, "x");
  EXPECT_EQ(d.baseline, "A");
  EXPECT_EQ(d.treatment, "B");
  EXPECT_EQ(d.value, "no_ship");
  ASSERT_EQ(d.inputs.size(), 1u);
  EXPECT_FALSE(d.inputs[0].guardrail);
  EXPECT_EQ(d.inputs[0].input, -1);
  EXPECT_DOUBLE_EQ(d.inputs[0].lower, ab.difference.lower);
  EXPECT_DOUBLE_EQ(d.inputs[0].upper, ab.difference.upper);
  EXPECT_TRUE(std::isnan(d.inputs[0].margin));
  EXPECT_EQ(FormatDecision(d), "do not ship B: precision@1 worse [" +
                                   Signed3(ab.difference.lower) + ", " +
                                   Signed3(ab.difference.upper) + "]");
  // 30 lists each against a 50/50 split: no mismatch.
  ASSERT_EQ(s.srm.size(), 1u);
  EXPECT_FALSE(s.srm[0].detected);

  // The story tells it, naming the query.
  DemoStory story;
  const std::vector<std::string> lines = story.Observe(s, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("B is now worse than A on precision@1: -0.43", 0),
            0u)
      << lines[0];
  EXPECT_NE(lines[0].find("(x); most on queries q2 (-0.87)"), std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("x decision: do not ship B: precision@1 worse", 0),
            0u)
      << lines[1];
}

TEST_F(DemoSnapshotWorseTest, NoMoversWithoutTheExport) {
  Configure(kAb);
  ServeWorse();
  const PipelineSnapshot p = Take();
  ASSERT_GT(p.movers_capacity, 0);  // Tracked (tracked_queries 1000)...
  const DemoSnapshot s = DemoSnapshotOf(p, kHeadlines);
  ASSERT_EQ(s.ab.size(), 1u);
  EXPECT_TRUE(s.ab[0].movers.empty());  // ...but not exported.
}

// A guardrail on a field of results events (k "all") beyond its absolute
// margin blocks shipping; a relative margin is read as the fraction
// configured.
constexpr char kGuardrails[] = R"(
schema:
  fields:
    - {name: latency_ms, path: timing.latency_ms, better: lower, mixture_sd: 5}
metrics: {measures: [precision], cutoffs: [1, 2]}
experiments:
  - name: x
    baseline: A
    treatments: [B]
    primary: [precision@1]
    guardrails:
      - {series: latency_ms, margin: 5}
      - {series: precision@2, relative_margin: 0.1}
)";

TEST_F(DemoSnapshotTest, ReadsTheDecisions) {
  Configure(kGuardrails);
  // Both arms alike on precision (clicks cycling over {a}, {b}, {a, b},
  // {c}: P@1 1, 0, 1, 0 and P@2 0.5, 0.5, 1, 0), B 20 ms slower: latency
  // 80 or 81 ms in A, 100 or 101 in B.
  const std::string abc = "\"a\",\"b\",\"c\"";
  const std::vector<std::vector<std::string>> clicks = {
      {"a"}, {"b"}, {"a", "b"}, {"c"}};
  for (int i = 0; i < 40; ++i) {
    for (const char* variant : {"A", "B"}) {
      const int latency = (variant[0] == 'A' ? 80 : 100) + i % 2;
      Serve(variant, "q", abc, clicks[static_cast<size_t>(i % 4)],
            ",\"timing\":{\"latency_ms\":" + std::to_string(latency) + "}");
    }
  }
  const PipelineSnapshot p = Take();
  const DemoSnapshot s = DemoSnapshotOf(p, kHeadlines);
  ASSERT_EQ(s.decisions.size(), 1u);
  const DecisionFigures& d = s.decisions[0];
  EXPECT_EQ(d.value, "no_ship");
  ASSERT_EQ(d.inputs.size(), 3u);
  // The primary series first: difference 0, an interval around it.
  EXPECT_FALSE(d.inputs[0].guardrail);
  EXPECT_EQ(d.inputs[0].series, (Headline{"precision", "1"}));
  EXPECT_EQ(d.inputs[0].input, 0);
  EXPECT_LT(d.inputs[0].lower, 0);
  EXPECT_GT(d.inputs[0].upper, 0);
  // latency_ms: B - A = +20 ms (lower is better), beyond the 5 ms margin.
  const DecisionInputFigures& latency = d.inputs[1];
  EXPECT_TRUE(latency.guardrail);
  EXPECT_EQ(latency.series, (Headline{"latency_ms", "all"}));
  EXPECT_EQ(latency.series.Label(), "latency_ms");
  EXPECT_EQ(latency.input, -1);
  EXPECT_GT(latency.lower, 5);
  EXPECT_LE(latency.lower, 20);
  EXPECT_GE(latency.upper, 20);
  EXPECT_DOUBLE_EQ(latency.margin, 5);
  EXPECT_FALSE(latency.relative);
  // precision@2: the configured fraction, not the margin it makes (0.1 of
  // the baseline's 0.5).
  const DecisionInputFigures& p2 = d.inputs[2];
  EXPECT_TRUE(p2.guardrail);
  EXPECT_EQ(p2.series, (Headline{"precision", "2"}));
  EXPECT_TRUE(p2.relative);
  EXPECT_DOUBLE_EQ(p2.margin, 0.1);
  EXPECT_EQ(p2.input, 0);  // 0.05 is well inside its interval: undecided.
  EXPECT_EQ(FormatDecision(d),
            "do not ship B: guardrail latency_ms beyond its margin [" +
                Signed3(latency.lower) + ", " + Signed3(latency.upper) +
                "] (margin 5.000)");
}

// schema.covariate: the adjusted figures of each headline comparison.
TEST_F(DemoSnapshotTest, ReadsTheAdjustedFigures) {
  Configure(R"(
schema: {covariate: pre_exposure.clicks}
metrics: {measures: [precision], cutoffs: [1]}
experiments:
  - {name: x, baseline: A, treatments: [B], primary: [precision@1]}
)");
  // (covariate x, P@1 y) per list.
  const std::vector<std::pair<int, int>> a = {{0, 0}, {1, 0}, {2, 1}, {3, 1},
                                              {0, 0}, {1, 0}, {2, 1}, {3, 1}};
  const std::vector<std::pair<int, int>> b = {{1, 0}, {2, 1}, {3, 1}, {4, 1},
                                              {1, 0}, {2, 1}, {3, 1}, {4, 1}};
  for (const auto& [variant, lists] : {std::pair{"A", &a}, {"B", &b}}) {
    for (const auto& [x, y] : *lists) {
      Serve(variant, "q", "\"a\",\"b\"", {y == 1 ? "a" : "b"},
            ",\"pre_exposure\":{\"clicks\":" + std::to_string(x) + "}");
    }
  }
  const PipelineSnapshot p = Take();
  const DemoSnapshot s = DemoSnapshotOf(p, kHeadlines);
  EXPECT_EQ(s.covariate, "pre_exposure.clicks");
  ASSERT_EQ(s.ab.size(), 1u);
  const AbFigures& ab = s.ab[0];
  ASSERT_TRUE(ab.has_adjusted);
  EXPECT_EQ(ab.adjusted.status, "adjusted");
  // Unadjusted: 6/8 - 4/8 = 0.25. Adjusted, statsmodels 0.14:
  // OLS(y, [1, T, x]).fit().params[1] = -0.1 (theta 0.35, the pooled
  // within-arm slope: 0.25 - 0.35 * (2.5 - 1.5)).
  EXPECT_NEAR(ab.difference.value, 0.25, 1e-12);
  EXPECT_NEAR(ab.adjusted.difference.value, -0.1, 1e-12);
  EXPECT_NEAR(ab.adjusted.look.value, -0.1, 1e-12);
  // Welch on y - theta (x - mean x) against Welch on y, NumPy (ddof 1):
  // 0.01875 / 0.0625 = 0.3.
  EXPECT_NEAR(ab.adjusted.variance_ratio, 0.3, 1e-9);
  // Fewer than 20 pairs per arm: no always-valid interval yet.
  EXPECT_EQ(ab.adjusted.difference.lower, -INFINITY);
  EXPECT_EQ(ab.adjusted.difference.upper, INFINITY);
  EXPECT_EQ(ab.adjusted.look.lower, -INFINITY);
  EXPECT_EQ(ab.adjusted.look.upper, INFINITY);
}

// Interleaving: a three-team experiment (the incumbent A and its first
// challenger B are its headline pair) and a two-team one.
TEST_F(DemoSnapshotTest, ReadsInterleavingVerdictsAndTheMultileavingRanking) {
  Configure(R"(
metrics: {measures: [precision], cutoffs: [1]}
interleaving:
  - {name: m, variant: A-vs-B-vs-C, teams: [A, B, C]}
  - {name: two, variant: A-vs-B, teams: [A, B]}
)");
  const std::string three =
      R"({"doc_id":"a","team":"C"},{"doc_id":"b","team":"B"},)"
      R"({"doc_id":"c","team":"A"})";
  // C's result clicked alone 60 times, with B's 60 times; A's never. A
  // pair's outcome counts the clicks on its two teams' results: a tie when
  // they are equal (none) in a clicked impression. A vs B: 60 ties, 60
  // wins of B; B vs C: 60 wins of C, 60 ties; A vs C: 120 wins of C.
  for (int i = 0; i < 120; ++i) {
    Serve("A-vs-B-vs-C", "q", three,
          i < 60 ? std::vector<std::string>{"a"}
                 : std::vector<std::string>{"a", "b"});
  }
  // B's result clicked 6 times, A's twice, none twice.
  const std::string two =
      R"({"doc_id":"a","team":"B"},{"doc_id":"b","team":"A"})";
  for (int i = 0; i < 10; ++i) {
    Serve("A-vs-B", "q", two,
          i < 6   ? std::vector<std::string>{"a"}
          : i < 8 ? std::vector<std::string>{"b"}
                  : std::vector<std::string>{});
  }
  const DemoSnapshot s = DemoSnapshotOf(Take(), {{"ctr", "10"}});
  ASSERT_EQ(s.interleaving.size(), 2u);
  const InterleavingFigures& m = s.interleaving[0];
  EXPECT_EQ(m.experiment, "m");
  EXPECT_EQ(m.incumbent, "A");
  EXPECT_EQ(m.challenger, "B");
  // The pair A, B: (60 wins of B + 60 ties / 2) / 120 clicked - 1/2.
  EXPECT_EQ(m.impressions, 120);
  EXPECT_DOUBLE_EQ(m.preference, 0.25);
  EXPECT_EQ(m.verdict, Verdict::kBetter);
  EXPECT_LT(m.p_value, 0.05);
  const InterleavingFigures& t = s.interleaving[1];
  EXPECT_EQ(t.experiment, "two");
  EXPECT_EQ(t.impressions, 10);
  EXPECT_DOUBLE_EQ(t.preference, 0.25);  // 6 / (6 + 2) - 1/2.
  EXPECT_GT(t.p_value, 0.05);            // 6 to 2 proves little.
  EXPECT_EQ(t.verdict, Verdict::kInconclusive);
  // C beats both (60 and 120 wins to none), B beats A (60 to none):
  // C > B > A, C the winner; the two-team
  // experiment has no ranking of its own.
  EXPECT_EQ(s.multileaving_ranking.at("m"),
            (std::vector<std::string>{"C", "B", "A"}));
  EXPECT_EQ(s.multileaving_ranking.count("two"), 0u);
  EXPECT_EQ(s.multileaving_winner.at("m"), "C");
  EXPECT_EQ(s.multileaving_winner.count("two"), 0u);
}

}  // namespace
}  // namespace rankwatch::cli
