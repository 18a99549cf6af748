// InterleavingMonitor with three teams (multileaving): credit and pairwise
// outcomes of hand-worked impressions, windows, verdicts and the ranking,
// per-shard state through checkpoints (including the two-team "ILV1"
// records written before multileaving), and reloads.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "daemon/stream/interleaving/interleaving_monitor.h"

namespace rankwatch::stream {
namespace {

using metrics::Grade;
using metrics::PairIndex;

class MultileavingMonitorTest : public ::testing::Test {
 protected:
  MultileavingMonitorTest() {
    experiments_.push_back({"abc", "M", {"A", "B", "C"}});
    aggregation_.windows = {std::chrono::minutes(1)};
    aggregation_.bucket = std::chrono::seconds(10);
  }

  void Impression(InterleavingMonitor* m, int64_t time_ms,
                  std::vector<uint8_t> teams, std::vector<Grade> grades,
                  int32_t shard = 0) {
    m->AddImpression(0, time_ms, teams, grades, 1, shard);
  }

  // The hand-worked impressions of metrics/multileaving_test.cc
  // (HandWorkedCreditAndPairs), the first two at 5 s, the last two at
  // 100 s (event time):
  //   1: A B C A B, grades 1 0 1 1 0 -> A 2, C 1: (A,B) A, (A,C) A, (B,C) C.
  //   2: B C A, no click.
  //   3: C A B C, grades 1 1 unjudged 0 -> A 1, C 1: (A,B) A, (A,C) tie,
  //      (B,C) C.
  //   4: A B C, grades 0 2 0 -> B 1: (A,B) B, (A,C) tie, (B,C) B.
  void AddHandWorked(InterleavingMonitor* m, int32_t shard_of_last_two = 0) {
    Impression(m, 5'000, {0, 1, 2, 0, 1}, {1, 0, 1, 1, 0});
    Impression(m, 5'000, {1, 2, 0}, {0, 0, 0});
    Impression(m, 100'000, {2, 0, 1, 2}, {1, 1, metrics::kUnjudged, 0},
               shard_of_last_two);
    Impression(m, 100'000, {0, 1, 2}, {0, 2, 0}, shard_of_last_two);
  }

  std::vector<config::InterleavingConfig> experiments_;
  config::AggregationConfig aggregation_;
  config::StatisticsConfig statistics_;  // level 0.95, prior sd 0.05.
};

TEST_F(MultileavingMonitorTest, HandWorkedPairsAndWindows) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  AddHandWorked(&m);
  m.Update(100'000);
  const InterleavingState& s = m.experiments()[0];
  EXPECT_EQ(s.counts.impressions, 4);
  EXPECT_EQ(s.counts.no_click, 1);
  EXPECT_EQ(s.counts.clicks, (std::vector<int64_t>{3, 1, 2}));
  const auto& ab = s.counts.pairs[PairIndex(0, 1, 3)];
  const auto& ac = s.counts.pairs[PairIndex(0, 2, 3)];
  const auto& bc = s.counts.pairs[PairIndex(1, 2, 3)];
  EXPECT_EQ(ab.wins, (std::array<int64_t, 2>{2, 1}));
  EXPECT_EQ(ab.ties, 0);
  EXPECT_EQ(ac.wins, (std::array<int64_t, 2>{1, 0}));
  EXPECT_EQ(ac.ties, 2);
  EXPECT_EQ(bc.wins, (std::array<int64_t, 2>{1, 2}));
  EXPECT_EQ(bc.ties, 0);
  // The first pair is the two-team view.
  EXPECT_EQ(s.all.wins, ab.wins);
  EXPECT_EQ(s.all.impressions, 4);
  EXPECT_EQ(s.flow_counts.clicks, s.counts.clicks);
  // The 1-minute window ending at 100 s holds buckets (40 s, 100 s]: the
  // last two impressions only. (A,B): A 1 (imp. 3), B 1 (imp. 4);
  // (A,C): ties 2; (B,C): B 1, C 1; no no_click.
  const metrics::MultileavingCounts& w = s.window_counts[0];
  EXPECT_EQ(w.impressions, 2);
  EXPECT_EQ(w.no_click, 0);
  EXPECT_EQ(w.pairs[PairIndex(0, 1, 3)].wins, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(w.pairs[PairIndex(0, 2, 3)].ties, 2);
  EXPECT_EQ(w.pairs[PairIndex(1, 2, 3)].wins, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(s.windows[0].wins, (std::array<int64_t, 2>{1, 1}));
  // Four impressions decide nothing.
  EXPECT_EQ(s.analysis.winner, -1);
  for (VerdictState v : s.pair_states)
    EXPECT_EQ(v, VerdictState::kInconclusive);
}

// C wins every clicked impression against both: after 200 such
// impressions each pair involving C has 200 decided impressions all won
// by C; the mixture LR with a = 49.5 is overwhelming (p far below 0.05
// even after multiplying by 3), while (A,B) only ties: no verdict.
TEST_F(MultileavingMonitorTest, DominantTeamWinsAndRanksFirst) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  for (int i = 0; i < 200; ++i) {
    Impression(&m, 1'000, {0, 1, 2}, {0, 0, 1});
  }
  m.Update(1'000);
  const InterleavingState& s = m.experiments()[0];
  EXPECT_EQ(s.analysis.pairs[PairIndex(0, 2, 3)].verdict, 1);
  EXPECT_EQ(s.analysis.pairs[PairIndex(1, 2, 3)].verdict, 1);
  EXPECT_EQ(s.analysis.pairs[PairIndex(0, 1, 3)].verdict, 0);
  EXPECT_EQ(s.pair_states[PairIndex(0, 2, 3)], VerdictState::kBetter);
  // (A,B) only ties: no decided impression, so its test has no look yet.
  EXPECT_EQ(s.pair_states[PairIndex(0, 1, 3)], VerdictState::kNoData);
  EXPECT_EQ(s.analysis.winner, 2);
  EXPECT_EQ(s.analysis.ranking[0], 2u);
  EXPECT_EQ(s.analysis.copeland, (std::vector<int>{-1, -1, 2}));
  // The two-team view is pair (A,B).
  EXPECT_EQ(s.verdict, 0);
  EXPECT_EQ(s.state, VerdictState::kNoData);
}

// Shards add up; a shard's checkpoint restores its counts and buckets in
// a fresh monitor; a dropped shard's counts leave the merged view.
TEST_F(MultileavingMonitorTest, ShardsCheckpointAndMerge) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  AddHandWorked(&m, /*shard_of_last_two=*/3);
  std::string record;
  {
    ByteWriter w(&record);
    m.EncodeShard(3, &w);
  }
  InterleavingMonitor restored(&experiments_, aggregation_, statistics_);
  ByteReader in(record);
  ASSERT_TRUE(restored.DecodeShard(3, &in).ok());
  EXPECT_TRUE(in.at_end());
  restored.Update(100'000);
  const InterleavingState& r = restored.experiments()[0];
  // Shard 3 holds impressions 3 and 4: clicks A 1, B 1, C 1.
  EXPECT_EQ(r.counts.impressions, 2);
  EXPECT_EQ(r.counts.clicks, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(r.counts.pairs[PairIndex(0, 2, 3)].ties, 2);
  EXPECT_EQ(r.window_counts[0].impressions, 2);
  // Nothing of shard 3 was counted by the restoring process.
  EXPECT_EQ(r.flow_counts.impressions, 0);

  m.DropShard(3);
  const InterleavingState& s = m.experiments()[0];
  EXPECT_EQ(s.counts.impressions, 2);  // Shard 0: impressions 1 and 2.
  EXPECT_EQ(s.counts.clicks, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(s.flow_counts.impressions, 4);  // The process's own count.

  // Every truncation is an error and leaves the shard empty.
  for (size_t cut = 0; cut < record.size(); ++cut) {
    InterleavingMonitor t(&experiments_, aggregation_, statistics_);
    ByteReader part(std::string_view(record).substr(0, cut));
    EXPECT_FALSE(t.DecodeShard(3, &part).ok()) << "cut " << cut;
    EXPECT_EQ(t.experiments()[0].counts.impressions, 0) << "cut " << cut;
  }

  // Under other teams (a challenger added) the experiment starts afresh.
  std::vector<config::InterleavingConfig> other = {
      {"abc", "M", {"A", "B", "C", "D"}}};
  InterleavingMonitor changed(&other, aggregation_, statistics_);
  ByteReader again(record);
  ASSERT_TRUE(changed.DecodeShard(3, &again).ok());
  EXPECT_EQ(changed.experiments()[0].counts.impressions, 0);
}

// A two-team record of the format before multileaving ("ILV1": name,
// variant, both teams, impressions, wins, wins, ties, no_click, ring)
// restores the pair; per-team clicks are unknown and start at zero.
TEST_F(MultileavingMonitorTest, RestoresTwoTeamRecordsOfTheOldFormat) {
  std::vector<config::InterleavingConfig> two = {{"ab", "I", {"A", "B"}}};
  std::string record;
  {
    ByteWriter w(&record);
    w.Fixed32(0x494c5631);  // "ILV1"
    w.Varint(1);
    w.String("ab");
    w.String("I");
    w.String("A");
    w.String("B");
    w.I64(10);  // impressions = 3 + 4 + 1 + 2
    w.I64(3);
    w.I64(4);
    w.I64(1);
    w.I64(2);
    WindowRing(10'000, 60'000, 4).Encode(&w);
  }
  InterleavingMonitor m(&two, aggregation_, statistics_);
  ByteReader in(record);
  ASSERT_TRUE(m.DecodeShard(0, &in).ok());
  const InterleavingState& s = m.experiments()[0];
  EXPECT_EQ(s.all.impressions, 10);
  EXPECT_EQ(s.all.wins, (std::array<int64_t, 2>{3, 4}));
  EXPECT_EQ(s.all.ties, 1);
  EXPECT_EQ(s.all.no_click, 2);
  EXPECT_EQ(s.counts.clicks, (std::vector<int64_t>{0, 0}));

  // Outcomes that do not add up are refused.
  std::string corrupt;
  {
    ByteWriter w(&corrupt);
    w.Fixed32(0x494c5631);
    w.Varint(1);
    w.String("ab");
    w.String("I");
    w.String("A");
    w.String("B");
    w.I64(11);  // One more than the outcomes.
    w.I64(3);
    w.I64(4);
    w.I64(1);
    w.I64(2);
    WindowRing(10'000, 60'000, 4).Encode(&w);
  }
  InterleavingMonitor c(&two, aggregation_, statistics_);
  ByteReader cin(corrupt);
  const Status st = c.DecodeShard(0, &cin);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("do not add up"), std::string::npos)
      << st.message();
}

// A reload keeps the counts of an experiment with the same teams.
TEST_F(MultileavingMonitorTest, ReloadKeepsSameTeams) {
  InterleavingMonitor m(&experiments_, aggregation_, statistics_);
  AddHandWorked(&m);
  m.Update(100'000);
  const std::vector<config::InterleavingConfig> same = experiments_;
  InterleavingMonitor next(&same, aggregation_, statistics_);
  next.AdoptState(m, /*same_statistics=*/true);
  next.Update(100'000);
  const InterleavingState& s = next.experiments()[0];
  EXPECT_EQ(s.counts.clicks, (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(s.counts.pairs[PairIndex(1, 2, 3)].wins,
            (std::array<int64_t, 2>{1, 2}));
  EXPECT_EQ(s.pair_tests[0].looks(), 2);  // Both looks, the test kept.
}

}  // namespace
}  // namespace rankwatch::stream
