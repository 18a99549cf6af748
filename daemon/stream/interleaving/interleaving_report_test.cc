// Replay's interleaving report (JSON member and table) of a three-team
// experiment after the hand-worked impressions of
// metrics/multileaving_test.cc (HandWorkedCreditAndPairs), and of a
// two-team one, whose report keeps its top-level figures.
#include "daemon/stream/interleaving/interleaving_report.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::stream {
namespace {

class InterleavingReportTest : public ::testing::Test {
 protected:
  InterleavingReportTest() {
    experiments_.push_back({"abc", "M", {"A", "B", "C"}});
    experiments_.push_back({"ab", "I", {"A", "B"}});
    aggregation_.windows = {std::chrono::minutes(1)};
    aggregation_.bucket = std::chrono::seconds(10);
  }

  std::vector<config::InterleavingConfig> experiments_;
  config::AggregationConfig aggregation_;
  config::StatisticsConfig statistics_;
};

// Counts (by hand, see metrics/multileaving_test.cc): 4 impressions, 1
// no_click, clicks A 3, B 1, C 2; (A,B) A 2 B 1 ties 0; (A,C) A 1 C 0 ties
// 2; (B,C) B 1 C 2 ties 0. Preferences -1/6, -1/6, +1/6. Four impressions
// decide nothing: verdicts 0, Copeland 0 for all; point Copeland A +2 (both
// preferences against A's opponents are negative), B -2, C 0: ranking A,
// C, B; no winner.
TEST_F(InterleavingReportTest, ThreeTeamsJsonAndTable) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  const std::vector<std::vector<uint8_t>> teams = {
      {0, 1, 2, 0, 1}, {1, 2, 0}, {2, 0, 1, 2}, {0, 1, 2}};
  const std::vector<std::vector<metrics::Grade>> grades = {
      {1, 0, 1, 1, 0}, {0, 0, 0}, {1, 1, metrics::kUnjudged, 0}, {0, 2, 0}};
  for (size_t i = 0; i < teams.size(); ++i) {
    m.AddImpression(0, 5'000, teams[i], grades[i], 1);
  }
  m.Add(1, 5'000, metrics::InterleavingOutcome::kSecondWins);
  m.Update(5'000);
  std::string out = "{\"x\":0";
  AppendInterleavingJson(&out, m);
  out += "}";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(out)).get(doc),
            simdjson::SUCCESS)
      << out;
  simdjson::dom::element abc = doc["interleaving"]["abc"];
  EXPECT_EQ(int64_t(abc["impressions"]), 4);
  EXPECT_EQ(int64_t(abc["no_click"]), 1);
  EXPECT_TRUE(abc["wins"].error() == simdjson::NO_SUCH_FIELD) << out;
  EXPECT_EQ(int64_t(abc["clicks"]["A"]), 3);
  EXPECT_EQ(int64_t(abc["clicks"]["B"]), 1);
  EXPECT_EQ(int64_t(abc["clicks"]["C"]), 2);
  simdjson::dom::array pairs = abc["pairs"];
  ASSERT_EQ(pairs.size(), 3u);
  simdjson::dom::element ac = pairs.at(1);
  EXPECT_EQ(std::string_view(ac["teams"].at(0)), "A");
  EXPECT_EQ(std::string_view(ac["teams"].at(1)), "C");
  EXPECT_EQ(int64_t(ac["wins"]["A"]), 1);
  EXPECT_EQ(int64_t(ac["wins"]["C"]), 0);
  EXPECT_EQ(int64_t(ac["ties"]), 2);
  EXPECT_NEAR(double(ac["preference"]), -1.0 / 6, 1e-12);
  EXPECT_EQ(int64_t(ac["verdict"]), 0);
  EXPECT_EQ(std::string_view(ac["state"]), "inconclusive");
  simdjson::dom::element bc = pairs.at(2);
  EXPECT_EQ(int64_t(bc["wins"]["B"]), 1);
  EXPECT_EQ(int64_t(bc["wins"]["C"]), 2);
  simdjson::dom::array ranking = abc["ranking"];
  ASSERT_EQ(ranking.size(), 3u);
  EXPECT_EQ(std::string_view(ranking.at(0)), "A");
  EXPECT_EQ(std::string_view(ranking.at(1)), "C");
  EXPECT_EQ(std::string_view(ranking.at(2)), "B");
  EXPECT_TRUE(abc["winner"].is_null()) << out;
  EXPECT_EQ(int64_t(abc["copeland"]["A"]), 0);
  // Two teams: the top-level figures as before multileaving, and the pair.
  simdjson::dom::element ab = doc["interleaving"]["ab"];
  EXPECT_EQ(int64_t(ab["wins"]["B"]), 1);
  EXPECT_EQ(int64_t(ab["wins"]["A"]), 0);
  EXPECT_EQ(int64_t(ab["ties"]), 0);
  EXPECT_EQ(int64_t(ab["verdict"]), 0);
  EXPECT_EQ(int64_t(ab["pairs"].at(0)["wins"]["B"]), 1);

  std::string table;
  AppendInterleavingTable(&table, m);
  EXPECT_NE(table.find("interleaving abc (variant M, multileaved: A, B, C)\n"
                       "  impressions=4 no_click=1 clicks A=3 B=1 C=2\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  A vs C: wins 1-0 ties=2 preference for C -0.1667"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  ranking (Copeland score): A (0), C (0), B (0); "
                       "winner: none yet\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("interleaving ab (variant I: A vs B)\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace rankwatch::stream
