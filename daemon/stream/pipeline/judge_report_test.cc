#include "daemon/stream/pipeline/judge_report.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "daemon/stream/pipeline/judge_report_test_util.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace rankwatch::stream {
namespace {

// The story of judge_report_test_util.h (hand-worked figures there).
class JudgeReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = Pipeline::Create(judge_story::JudgeStoryConfig(), &clock_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
    ASSERT_TRUE(judge_story::FeedJudgeStory(pipeline_.get(), kNow - 600'000));
    TakeSnapshot(*pipeline_, &snapshot_);
    JsonWriter w;
    WriteJudgeFiguresJson(snapshot_, &w);
    json_ = w.Take();
    ASSERT_EQ(parser_.parse(json_).get(doc_), simdjson::SUCCESS) << json_;
  }
  // The rows of `array` whose string members equal `match` (key, value
  // pairs), in order.
  std::vector<simdjson::dom::object> Rows(
      std::string_view array,
      std::initializer_list<std::pair<std::string_view, std::string_view>>
          match) {
    std::vector<simdjson::dom::object> out;
    for (simdjson::dom::element e : doc_[array].get_array()) {
      simdjson::dom::object row = e.get_object();
      bool all = true;
      for (const auto& [key, value] : match) {
        std::string_view v;
        if (row[key].get_string().get(v) != simdjson::SUCCESS || v != value) {
          all = false;
        }
      }
      if (all) out.push_back(row);
    }
    return out;
  }
  // The one row matching, its "mean".
  double Mean(
      std::string_view array,
      std::initializer_list<std::pair<std::string_view, std::string_view>>
          match,
      int64_t lists) {
    const auto rows = Rows(array, match);
    EXPECT_EQ(rows.size(), 1u) << json_;
    if (rows.size() != 1) return -1;
    EXPECT_EQ(int64_t(rows[0]["lists"]), lists) << json_;
    return double(rows[0]["mean"]);
  }

  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
  PipelineSnapshot snapshot_;
  std::string json_;
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
};

TEST_F(JudgeReportTest, WritesEachJudgesMeasuresSinceStartAndPerWindow) {
  EXPECT_EQ(std::string_view(doc_["combine"]), "precedence");
  simdjson::dom::array names = doc_["names"];
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(std::string_view(names.at(0)), "human");
  EXPECT_EQ(std::string_view(names.at(1)), "llm");
  // Every list lies in the 5m window: each window row is the "all" row.
  for (std::string_view window : {"all", "5m"}) {
    // A human P@2: r1 .5, r7 0 -> 0.25 over 2 lists.
    EXPECT_DOUBLE_EQ(Mean("measures",
                          {{"variant", "A"},
                           {"judge", "human"},
                           {"measure", "precision"},
                           {"k", "2"},
                           {"window", window}},
                          2),
                     0.25);
    // A llm P@2: (1 + .5 + 1 + .5) / 4 = 0.75.
    EXPECT_DOUBLE_EQ(
        Mean("measures",
             {{"variant", "A"}, {"judge", "llm"}, {"window", window}}, 4),
        0.75);
    // B human: r4 only, 1; B llm: r4 .5, r6 .5.
    EXPECT_DOUBLE_EQ(
        Mean("measures",
             {{"variant", "B"}, {"judge", "human"}, {"window", window}}, 1),
        1.0);
    EXPECT_DOUBLE_EQ(
        Mean("measures",
             {{"variant", "B"}, {"judge", "llm"}, {"window", window}}, 2),
        0.5);
    // Coverage counts every list: A human (1, 0, 0, 1) / 4, B human
    // (1, 0, 0) / 3, B llm (1, 0, .5) / 3.
    EXPECT_DOUBLE_EQ(Mean("coverage",
                          {{"variant", "A"},
                           {"judge", "human"},
                           {"k", "2"},
                           {"window", window}},
                          4),
                     0.5);
    EXPECT_DOUBLE_EQ(
        Mean("coverage",
             {{"variant", "A"}, {"judge", "llm"}, {"window", window}}, 4),
        1.0);
    EXPECT_DOUBLE_EQ(
        Mean("coverage",
             {{"variant", "B"}, {"judge", "human"}, {"window", window}}, 3),
        1.0 / 3);
    EXPECT_DOUBLE_EQ(
        Mean("coverage",
             {{"variant", "B"}, {"judge", "llm"}, {"window", window}}, 3),
        0.5);
    // Unjudged: A none; B (0, 1, .5) / 3.
    EXPECT_DOUBLE_EQ(
        Mean("unjudged", {{"variant", "A"}, {"k", "2"}, {"window", window}}, 4),
        0.0);
    EXPECT_DOUBLE_EQ(
        Mean("unjudged", {{"variant", "B"}, {"window", window}}, 3), 0.5);
  }
  // 2 variants x 2 judges x 1 measure x 2 windows; "all" first.
  EXPECT_EQ(Rows("measures", {}).size(), 8u);
  EXPECT_EQ(std::string_view(Rows("measures", {})[0]["window"]), "all");
  EXPECT_EQ(std::string_view(Rows("measures", {})[1]["window"]), "5m");
  // The PPI roles' sums are not series of their own.
  EXPECT_EQ(Rows("coverage", {}).size(), 8u);
  EXPECT_EQ(Rows("unjudged", {}).size(), 4u);
  EXPECT_EQ(json_.find("truth"), std::string::npos);
}

TEST_F(JudgeReportTest, WritesThePredictionPoweredMeans) {
  const auto a = Rows("ppi", {{"variant", "A"}, {"window", "all"}});
  ASSERT_EQ(a.size(), 1u) << json_;
  EXPECT_EQ(std::string_view(a[0]["measure"]), "precision");
  EXPECT_EQ(std::string_view(a[0]["k"]), "2");
  EXPECT_EQ(std::string_view(a[0]["trusted"]), "human");
  EXPECT_EQ(std::string_view(a[0]["cheap"]), "llm");
  EXPECT_EQ(int64_t(a[0]["labelled"]), 2);
  EXPECT_EQ(int64_t(a[0]["others"]), 2);
  // judge_report_test_util.h: 0.75 - 0.5; +- 1.959964 x sqrt(0.03125).
  EXPECT_NEAR(double(a[0]["estimate"]), 0.25, 1e-12);
  EXPECT_NEAR(double(a[0]["lower"]), -0.0964755, 1e-6);
  EXPECT_NEAR(double(a[0]["upper"]), 0.5964755, 1e-6);
  EXPECT_DOUBLE_EQ(double(a[0]["lambda"]), 1.0);
  EXPECT_NEAR(double(a[0]["classical"]), 0.25, 1e-12);
  EXPECT_NEAR(double(a[0]["classical_lower"]), -0.2399910, 1e-6);
  EXPECT_NEAR(double(a[0]["classical_upper"]), 0.7399910, 1e-6);
  EXPECT_NEAR(double(a[0]["naive"]), 0.75, 1e-12);
  EXPECT_EQ(Rows("ppi", {{"variant", "A"}, {"window", "5m"}}).size(), 1u);
  // B: one labelled list, one other: counted, no estimate.
  const auto b = Rows("ppi", {{"variant", "B"}, {"window", "all"}});
  ASSERT_EQ(b.size(), 1u) << json_;
  EXPECT_EQ(int64_t(b[0]["labelled"]), 1);
  EXPECT_EQ(int64_t(b[0]["others"]), 1);
  for (const char* key : {"estimate", "lower", "upper", "lambda", "classical",
                          "classical_lower", "classical_upper", "naive"}) {
    EXPECT_TRUE(b[0][key].is_null()) << key;
  }
}

TEST_F(JudgeReportTest, WritesTheCoverageChecksAndTheWindowsAgreement) {
  simdjson::dom::array checks = doc_["coverage_checks"];
  ASSERT_EQ(checks.size(), 1u);
  simdjson::dom::element c = checks.at(0);
  EXPECT_EQ(std::string_view(c["experiment"]), "ranker");
  EXPECT_EQ(std::string_view(c["baseline"]), "A");
  EXPECT_EQ(std::string_view(c["treatment"]), "B");
  EXPECT_EQ(std::string_view(c["k"]), "2");
  EXPECT_DOUBLE_EQ(double(c["baseline_unjudged"]), 0.0);
  EXPECT_DOUBLE_EQ(double(c["treatment_unjudged"]), 0.5);
  EXPECT_DOUBLE_EQ(double(c["tolerance"]), 0.05);
  EXPECT_TRUE(bool(c["flagged"]));  // |0.5 - 0| > 0.05.

  simdjson::dom::array windows = doc_["agreement_windows"];
  ASSERT_EQ(windows.size(), 1u);  // One pair, one window.
  simdjson::dom::element w = windows.at(0);
  EXPECT_EQ(std::string_view(w["window"]), "5m");
  simdjson::dom::array judges = w["judges"];
  EXPECT_EQ(std::string_view(judges.at(0)), "human");
  EXPECT_EQ(std::string_view(judges.at(1)), "llm");
  EXPECT_EQ(int64_t(w["pairs"]), 6);  // a b g h m n.
  EXPECT_EQ(int64_t(w["only_first"]), 0);
  EXPECT_EQ(int64_t(w["only_second"]), 5);      // c d e f k.
  EXPECT_NEAR(double(w["kappa"]), 0.0, 1e-12);  // Observed = expected = 1/2.
  EXPECT_EQ(w["kappa_interval"].get_array().size(), 2u);
}

TEST_F(JudgeReportTest, AMeanOfNoListIsNullAndNaNChecksAreNull) {
  // A configuration where B never gets a list.
  config::Config c = judge_story::JudgeStoryConfig();
  auto p = Pipeline::Create(c, &clock_);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->OnPayload(Topic::kResults,
                              "{\"request_id\":\"x\",\"variant\":\"A\","
                              "\"timestamp\":" +
                                  std::to_string(kNow - 600'000) +
                                  ",\"results\":[\"a\",\"b\"]}",
                              EventOrigin{0, 0}));
  (*p)->FinishAll();
  PipelineSnapshot s;
  TakeSnapshot(**p, &s);
  JsonWriter w;
  WriteJudgeFiguresJson(s, &w);
  const std::string json = w.Take();
  simdjson::dom::parser parser;
  simdjson::dom::element d;
  ASSERT_EQ(parser.parse(json).get(d), simdjson::SUCCESS);
  // x has no label: no judge's measure counts it (lists 0, mean null); its
  // coverage is 0 for both, unjudged 1.
  int seen = 0;
  for (simdjson::dom::element row : d["measures"].get_array()) {
    if (std::string_view(row["variant"]) != "A") continue;
    EXPECT_EQ(int64_t(row["lists"]), 0);
    EXPECT_TRUE(row["mean"].is_null());
    ++seen;
  }
  EXPECT_EQ(seen, 4);  // 2 judges x 2 windows.
  simdjson::dom::element check = d["coverage_checks"].get_array().at(0);
  EXPECT_DOUBLE_EQ(double(check["baseline_unjudged"]), 1.0);
  EXPECT_TRUE(check["treatment_unjudged"].is_null());  // B has no list.
  EXPECT_FALSE(bool(check["flagged"]));
}

TEST_F(JudgeReportTest, TheTableShowsTheFiguresAndMarksAFlaggedCheck) {
  std::string table;
  AppendJudgeFiguresTable(snapshot_, &table);
  // Rows since start (hand figures above) in layout order: variant, judge,
  // series, lists, mean.
  const auto row = [](const char* variant, const char* judge,
                      const char* series, int lists, const char* mean) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "  %-12s %-12s %-16s %10d %10s\n", variant,
                  judge, series, lists, mean);
    return std::string(buf);
  };
  EXPECT_NE(table.find(row("A", "human", "P_2", 2, "0.2500") +
                       row("A", "human", "coverage_2", 4, "0.5000") +
                       row("A", "llm", "P_2", 4, "0.7500") +
                       row("A", "llm", "coverage_2", 4, "1.0000") +
                       row("A", "(none)", "unjudged_2", 4, "0.0000")),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(row("B", "(none)", "unjudged_2", 3, "0.5000")),
            std::string::npos)
      << table;
  // PPI: A's estimate and interval; B's has too few labels.
  EXPECT_NE(table.find("0.2500 [-0.0965, 0.5965]"), std::string::npos) << table;
  EXPECT_NE(table.find("(too few labels)"), std::string::npos) << table;
  EXPECT_NE(table.find("ranker           A            B               2    "
                       "0.0000    0.5000  FLAGGED"),
            std::string::npos)
      << table;
  // Nothing without judges.
  std::string none;
  AppendJudgeFiguresTable(PipelineSnapshot{}, &none);
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace rankwatch::stream
