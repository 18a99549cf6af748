#include "daemon/stream/judges/judge_monitor.h"

#include <cmath>
#include <string>
#include <vector>

#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

config::Config JudgesConfig() {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision,
                        metrics::Measure::kReciprocalRank};
  c.metrics.cutoffs = {2};
  c.judges.names = {"human", "llm"};
  return c;
}

metrics::Evaluator EvaluatorOf(const config::Config& c) {
  return *metrics::Evaluator::Create(c.metrics.cutoffs, c.metrics.definitions);
}

// One list of `variant` with each judge's grades per rank (and its
// judged docs: those of the ranks), the combined grades `ranked`.
struct List {
  std::vector<metrics::Grade> ranked;
  std::vector<JudgeGrades> judges;
};

FinalizedRequest Finalized(const List& l, int32_t shard = 0) {
  FinalizedRequest f;
  f.ranked = l.ranked;
  f.judges = l.judges;
  f.shard = shard;
  f.closed_ms = 1000;
  return f;
}

JudgeGrades Grades(std::vector<metrics::Grade> ranked) {
  JudgeGrades g;
  g.ranked = ranked;
  for (metrics::Grade x : ranked) {
    if (x >= 0) g.judged.push_back(x);
  }
  return g;
}

// The monitor's series of `role` and `judge` for main series `measure`
// (-1 for coverage and unjudged, which have one cutoff here).
size_t SeriesIndex(const JudgeMonitor& m, JudgeSeriesRole role, int32_t judge,
                   int32_t measure) {
  for (size_t i = 0; i < m.layout().size(); ++i) {
    if (m.layout()[i] == JudgeSeries{role, judge, measure}) return i;
  }
  ADD_FAILURE() << "no series of main series " << measure;
  return 0;
}

TEST(BuildJudgeSeriesTest, PerJudgeMeasuresCoverageUnjudgedAndPpi) {
  config::Config c = JudgesConfig();
  c.metrics.measures.push_back(metrics::Measure::kClicks);  // Not per judge.
  const std::vector<SeriesSpec> main =
      BuildSeries(c.metrics.measures, c.metrics.cutoffs);
  std::vector<JudgeSeries> layout;
  std::vector<SeriesSpec> s = BuildJudgeSeries(c, main, &layout);
  // The main series: P_2, recip_rank at 2 and uncut, clicks at 2. Per
  // judge: the three not about clicks, coverage at 2; then
  // unjudged at 2.
  ASSERT_EQ(main.size(), 4u);
  ASSERT_EQ(s.size(), 9u);
  ASSERT_EQ(layout.size(), 9u);
  EXPECT_EQ(s[0].trec_name, "P_2");
  EXPECT_EQ(layout[0], (JudgeSeries{JudgeSeriesRole::kMeasure, 0, 0}));
  EXPECT_EQ(layout[2], (JudgeSeries{JudgeSeriesRole::kMeasure, 0, 2}));
  EXPECT_EQ(s[3].trec_name, "coverage_2");
  EXPECT_EQ(layout[3], (JudgeSeries{JudgeSeriesRole::kCoverage, 0, -1}));
  EXPECT_EQ(layout[4], (JudgeSeries{JudgeSeriesRole::kMeasure, 1, 0}));
  EXPECT_EQ(s[8].trec_name, "unjudged_2");
  EXPECT_EQ(layout[8], (JudgeSeries{JudgeSeriesRole::kUnjudged, -1, -1}));
  // A judge's name is part of what its series mean.
  EXPECT_NE(s[0].state_key, s[3].state_key);
  EXPECT_NE(s[0].state_key.find("human"), std::string::npos);

  c.judges.ppi = {.trusted = "human", .cheap = "llm", .tune = false};
  s = BuildJudgeSeries(c, main, &layout);
  ASSERT_EQ(s.size(), 9u + 3 * 4);
  EXPECT_EQ(layout[9], (JudgeSeries{JudgeSeriesRole::kPpiTruth, -1, 0}));
  EXPECT_EQ(layout[12], (JudgeSeries{JudgeSeriesRole::kPpiCross, -1, 0}));
  EXPECT_EQ(layout[13], (JudgeSeries{JudgeSeriesRole::kPpiTruth, -1, 1}));
}

// Three lists of variant A; by hand, per judge (cutoff 2):
//   list 1: human [1, 0], llm [1, 1]:   P@2 human 1/2, llm 1; RR 1, 1.
//   list 2: human [U, 1], llm [0, U]:   P@2 human 1/2, llm 0; RR 1/2, 0.
//   list 3: human [U, U], llm [1, U]:   human labelled nothing: not in its
//                                       figures; llm P@2 1/2, RR 1.
// Means: human P@2 1/2, RR 3/4 (two lists); llm P@2 1/2, RR 2/3.
// Coverage@2 (every list): human 1, 1/2, 0 (mean 1/2); llm 1, 1/2, 1/2
// (mean 2/3). Unjudged@2 from the combined grades [1, 0], [0, 1], [1, U]:
// 0, 0, 1/2.
TEST(JudgeMonitorTest, EachJudgesMeasuresAndCoverage) {
  const config::Config c = JudgesConfig();
  const std::vector<SeriesSpec> main =
      BuildSeries(c.metrics.measures, c.metrics.cutoffs);
  JudgeMonitor m(c, main, EvaluatorOf(c));
  const std::vector<List> lists = {
      {{1, 0}, {Grades({1, 0}), Grades({1, 1})}},
      {{0, 1}, {Grades({U, 1}), Grades({0, U})}},
      {{1, U}, {Grades({U, U}), Grades({1, U})}},
  };
  for (const List& l : lists) m.Add(Finalized(l), "A");
  ASSERT_EQ(m.aggregator().num_groups(), 1u);
  const GroupStats& g = m.aggregator().group(0);
  EXPECT_EQ(g.variant, "A");
  const auto mean = [&](JudgeSeriesRole role, int32_t judge, int32_t measure) {
    return g.all[SeriesIndex(m, role, judge, measure)].mean();
  };
  // Main series 0 is P_2, 2 the uncut recip_rank.
  EXPECT_NEAR(mean(JudgeSeriesRole::kMeasure, 0, 0), 0.5, 1e-15);
  EXPECT_NEAR(mean(JudgeSeriesRole::kMeasure, 0, 2), 0.75, 1e-15);
  EXPECT_EQ(g.all[SeriesIndex(m, JudgeSeriesRole::kMeasure, 0, 0)].count(), 2);
  EXPECT_NEAR(mean(JudgeSeriesRole::kMeasure, 1, 0), 0.5, 1e-15);
  EXPECT_NEAR(mean(JudgeSeriesRole::kMeasure, 1, 2), 2.0 / 3, 1e-15);
  EXPECT_NEAR(mean(JudgeSeriesRole::kCoverage, 0, -1), 0.5, 1e-15);
  EXPECT_NEAR(mean(JudgeSeriesRole::kCoverage, 1, -1), 2.0 / 3, 1e-15);
  EXPECT_NEAR(mean(JudgeSeriesRole::kUnjudged, -1, -1), 1.0 / 6, 1e-15);
}

// PPI items: a list is labelled when the trusted judge graded a doc of it.
// Lists (human = trusted, llm = cheap), P@2:
//   1: human [1, 0] (1/2), llm [1, 1] (1)     labelled
//   2: human [0, 0] (0),   llm [1, 0] (1/2)   labelled
//   3: human none,         llm [1, 0] (1/2)   other
//   4: human none,         llm [0, 0] (0)     other
// Sums: n 2, y 1/2, yy 1/4, f 3/2, ff 5/4, yf 1/2; others 2, u 1/2, uu 1/4.
TEST(JudgeMonitorTest, PpiSumsOfLabelledAndOtherLists) {
  config::Config c = JudgesConfig();
  c.judges.ppi = {.trusted = "human", .cheap = "llm", .tune = false};
  const std::vector<SeriesSpec> main =
      BuildSeries(c.metrics.measures, c.metrics.cutoffs);
  JudgeMonitor m(c, main, EvaluatorOf(c));
  const std::vector<List> lists = {
      {{1, 0}, {Grades({1, 0}), Grades({1, 1})}},
      {{0, 0}, {Grades({0, 0}), Grades({1, 0})}},
      {{1, 0}, {Grades({U, U}), Grades({1, 0})}},
      {{0, 0}, {Grades({U, U}), Grades({0, 0})}},
  };
  for (size_t i = 0; i < lists.size(); ++i) {
    m.Add(Finalized(lists[i], static_cast<int32_t>(i % 2)), "A");
  }
  const GroupStats& g = m.aggregator().group(0);
  std::vector<WindowTotals> totals;
  for (const metrics::RunningStats& r : g.all) {
    totals.push_back({r.count(), r.sum(), r.sum_of_squares()});
  }
  const std::optional<metrics::PpiMoments> p =
      PpiMomentsOf(m.layout(), totals, 0);  // P_2 is main series 0.
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->n, 2);
  EXPECT_DOUBLE_EQ(p->sum_y, 0.5);
  EXPECT_DOUBLE_EQ(p->sum_yy, 0.25);
  EXPECT_DOUBLE_EQ(p->sum_f, 1.5);
  EXPECT_DOUBLE_EQ(p->sum_ff, 1.25);
  EXPECT_DOUBLE_EQ(p->sum_yf, 0.5);
  EXPECT_EQ(p->others, 2);
  EXPECT_DOUBLE_EQ(p->sum_u, 0.5);
  EXPECT_DOUBLE_EQ(p->sum_uu, 0.25);
  // Plain PPI: the cheap judge's mean over the others (1/4) plus its
  // average error on the labelled lists (mean y - mean f = 1/4 - 3/4):
  // -1/4 (PPI is unbiased, not bounded to [0, 1]).
  const auto e = metrics::PpiMean(*p, 0.95, /*tune=*/false);
  ASSERT_TRUE(e.has_value());
  EXPECT_NEAR(e->estimate, -0.25, 1e-15);
  EXPECT_FALSE(PpiMomentsOf(m.layout(), totals, 7).has_value());
}

// A checkpoint names every series by judge: restored under the judges in
// another order, each judge's figures follow its name; a judge no longer
// configured is dropped.
TEST(JudgeMonitorTest, CheckpointsRestoreByJudgeName) {
  const config::Config c = JudgesConfig();
  const std::vector<SeriesSpec> main =
      BuildSeries(c.metrics.measures, c.metrics.cutoffs);
  JudgeMonitor m(c, main, EvaluatorOf(c));
  m.Add(Finalized({{1, 0}, {Grades({1, 0}), Grades({0, 0})}}, 3), "A");
  std::string record;
  ByteWriter w(&record);
  m.EncodeShard(3, &w);

  config::Config swapped = c;
  swapped.judges.names = {"llm", "clicks", "human"};
  JudgeMonitor restored(swapped, main, EvaluatorOf(swapped));
  ByteReader r(record);
  ASSERT_TRUE(restored.DecodeShard(3, &r).ok());
  EXPECT_TRUE(r.at_end());
  const GroupStats& g = restored.aggregator().group(0);
  // human's P@2 was 1/2, llm's 0; clicks has nothing.
  EXPECT_EQ(
      g.all[SeriesIndex(restored, JudgeSeriesRole::kMeasure, 2, 0)].mean(),
      0.5);
  EXPECT_EQ(
      g.all[SeriesIndex(restored, JudgeSeriesRole::kMeasure, 0, 0)].mean(), 0);
  EXPECT_EQ(
      g.all[SeriesIndex(restored, JudgeSeriesRole::kMeasure, 1, 0)].count(), 0);
  std::string corrupt = record.substr(0, record.size() / 2);
  ByteReader rc(corrupt);
  EXPECT_FALSE(restored.DecodeShard(3, &rc).ok());
}

}  // namespace
}  // namespace rankwatch::stream
