#include "daemon/stream/interleaving/interleaving_monitor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace rankwatch::stream {
namespace {

using metrics::InterleavingOutcome;

class InterleavingMonitorTest : public ::testing::Test {
 protected:
  InterleavingMonitorTest() {
    experiments_.push_back({"b_vs_a", "A-vs-B", {"A", "B"}});
    aggregation_.windows = {std::chrono::minutes(1)};
    aggregation_.bucket = std::chrono::seconds(10);
  }

  void AddMany(InterleavingMonitor* m, int n, int64_t time_ms,
               InterleavingOutcome outcome) {
    for (int i = 0; i < n; ++i) m->Add(0, time_ms, outcome);
  }

  std::vector<config::InterleavingConfig> experiments_;
  config::AggregationConfig aggregation_;
  config::StatisticsConfig statistics_;  // level 0.95, prior sd 0.05.
};

TEST_F(InterleavingMonitorTest, CountsEveryOutcomeSinceStart) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  AddMany(&m, 3, 1000, InterleavingOutcome::kFirstWins);
  AddMany(&m, 5, 1000, InterleavingOutcome::kSecondWins);
  AddMany(&m, 2, 1000, InterleavingOutcome::kTie);
  AddMany(&m, 7, 1000, InterleavingOutcome::kNoClick);
  m.Add(1, 1000, InterleavingOutcome::kTie);   // No such experiment.
  m.Add(-1, 1000, InterleavingOutcome::kTie);  // Nor this one.
  m.Update(1000);
  const InterleavingState& s = m.experiments()[0];
  EXPECT_EQ(s.all.impressions, 17);
  EXPECT_EQ(s.all.wins[0], 3);
  EXPECT_EQ(s.all.wins[1], 5);
  EXPECT_EQ(s.all.ties, 2);
  EXPECT_EQ(s.all.no_click, 7);
  // mpmath: a = 49.5; beta(a+5, a+3) / beta(a, a) * 2**8 < 1, so the
  // look's p-value is 1: no verdict.
  EXPECT_EQ(s.sequential.p_value(), 1);
  EXPECT_EQ(s.verdict, 0);
  EXPECT_EQ(s.state, VerdictState::kInconclusive);
}

TEST_F(InterleavingMonitorTest, WindowsHoldTheirBucketsOnly) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  // Bucket [0, 10 s) and bucket [100 s, 110 s): a 1 m window ending at
  // 105 s holds only the second.
  AddMany(&m, 4, 5'000, InterleavingOutcome::kFirstWins);
  AddMany(&m, 6, 101'000, InterleavingOutcome::kSecondWins);
  AddMany(&m, 1, 102'000, InterleavingOutcome::kNoClick);
  m.Update(105'000);
  const InterleavingState& s = m.experiments()[0];
  ASSERT_EQ(s.windows.size(), 1u);
  EXPECT_EQ(s.windows[0].impressions, 7);
  EXPECT_EQ(s.windows[0].wins[0], 0);
  EXPECT_EQ(s.windows[0].wins[1], 6);
  EXPECT_EQ(s.windows[0].no_click, 1);
  EXPECT_EQ(s.all.impressions, 11);
}

TEST_F(InterleavingMonitorTest, VerdictFollowsTheSequentialTest) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  EXPECT_DOUBLE_EQ(m.prior_shape(), 49.5);  // (1 / (4 * 0.05^2) - 1) / 2.
  m.Update(0);
  EXPECT_EQ(m.experiments()[0].state, VerdictState::kNoData);
  // 2 wins of A, 40 of B. mpmath (mp.dps = 30): a = 49.5;
  // 1 / (beta(a + 40, a + 2) / beta(a, a) * 2**42) = 0.0064431133335812695.
  AddMany(&m, 2, 1000, InterleavingOutcome::kFirstWins);
  AddMany(&m, 40, 1000, InterleavingOutcome::kSecondWins);
  m.Update(1000);
  const InterleavingState& s = m.experiments()[0];
  EXPECT_NEAR(s.sequential.p_value(), 0.0064431133335812695, 1e-12);
  EXPECT_EQ(s.verdict, 1);
  EXPECT_EQ(s.state, VerdictState::kBetter);
}

TEST_F(InterleavingMonitorTest, ChallengerLosing) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  AddMany(&m, 40, 1000, InterleavingOutcome::kFirstWins);
  AddMany(&m, 2, 1000, InterleavingOutcome::kSecondWins);
  AddMany(&m, 9, 1000, InterleavingOutcome::kTie);
  m.Update(1000);
  const InterleavingState& s = m.experiments()[0];
  // The same p-value (the prior is symmetric); ties carry no sign.
  EXPECT_NEAR(s.sequential.p_value(), 0.0064431133335812695, 1e-12);
  EXPECT_EQ(s.verdict, -1);
  EXPECT_EQ(s.state, VerdictState::kWorse);
}

}  // namespace
}  // namespace rankwatch::stream
