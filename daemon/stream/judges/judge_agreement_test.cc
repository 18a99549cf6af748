#include "daemon/stream/judges/judge_agreement.h"

#include <string>
#include <utility>
#include <vector>

#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

// Two lists: human, llm and clicks grade some of their served docs.
// Counted by hand below.
TEST(JudgeAgreementTest, CountsTheServedDocsEachPairGraded) {
  JudgeAgreement agreement({"human", "llm", "clicks"});
  std::vector<JudgeGrades> list(3);
  list[0].ranked = {2, 1, U};  // human
  list[1].ranked = {2, 0, 1};  // llm
  list[2].ranked = {U, 1, U};  // clicks
  agreement.AddList(list, 0);
  list[0].ranked = {3};
  list[1].ranked = {U};
  list[2].ranked = {U};
  agreement.AddList(list, 1);
  const std::vector<metrics::JudgePairCounts> merged = agreement.Merged();
  ASSERT_EQ(merged.size(), 3u);
  // human-llm: (2, 2) and (1, 0) both; llm alone on rank 3; human alone
  // on the second list.
  const metrics::JudgePairCounts& hl = merged[metrics::PairIndex(0, 1, 3)];
  EXPECT_EQ(hl.both.items(), 2);
  EXPECT_EQ(hl.both.counts().at({2, 2}), 1);
  EXPECT_EQ(hl.both.counts().at({1, 0}), 1);
  EXPECT_EQ(hl.only_first, 1);
  EXPECT_EQ(hl.only_second, 1);
  // human-clicks: (1, 1) both; human alone on rank 1 and the second list.
  const metrics::JudgePairCounts& hc = merged[metrics::PairIndex(0, 2, 3)];
  EXPECT_EQ(hc.both.items(), 1);
  EXPECT_EQ(hc.only_first, 2);
  EXPECT_EQ(hc.only_second, 0);
  // llm-clicks: (0, 1) both; llm alone on ranks 1 and 3.
  const metrics::JudgePairCounts& lc = merged[metrics::PairIndex(1, 2, 3)];
  EXPECT_EQ(lc.both.counts().at({0, 1}), 1);
  EXPECT_EQ(lc.only_first, 2);
}

// A checkpoint restores by judge names: under another order a pair's
// grades swap sides; a pair with a judge gone is dropped.
TEST(JudgeAgreementTest, CheckpointsRestoreByJudgeNames) {
  JudgeAgreement agreement({"human", "llm", "clicks"});
  std::vector<JudgeGrades> list(3);
  list[0].ranked = {2, 1, U};
  list[1].ranked = {3, U, 1};
  list[2].ranked = {U, U, 1};
  agreement.AddList(list, 4);
  std::string record;
  ByteWriter w(&record);
  agreement.EncodeShard(4, &w);

  JudgeAgreement reordered({"llm", "human"});
  ByteReader r(record);
  ASSERT_TRUE(reordered.DecodeShard(4, &r).ok());
  EXPECT_TRUE(r.at_end());
  const std::vector<metrics::JudgePairCounts> merged = reordered.Merged();
  ASSERT_EQ(merged.size(), 1u);
  // llm first now: the pair (human 2, llm 3) reads (3, 2).
  EXPECT_EQ(merged[0].both.items(), 1);
  EXPECT_EQ(merged[0].both.counts().at({3, 2}), 1);
  EXPECT_EQ(merged[0].only_first, 1);   // llm alone (rank 3).
  EXPECT_EQ(merged[0].only_second, 1);  // human alone (rank 2).

  reordered.DropShard(4);
  EXPECT_EQ(reordered.Merged()[0].both.items(), 0);

  ByteReader corrupt(std::string_view(record).substr(0, record.size() - 3));
  JudgeAgreement other({"human", "llm"});
  EXPECT_FALSE(other.DecodeShard(4, &corrupt).ok());
  EXPECT_EQ(other.Merged()[0].both.items(), 0);
}

// Windows: 10 s buckets, the longest window 60 s (7 buckets held). Lists
// at 5 s (bucket 0), 35 s (bucket 3) and 75 s (bucket 7), one pair each,
// human and llm agreeing on grade 1, 2 and 3 in turn.
TEST(JudgeAgreementTest, WindowsCountTheBucketsTheyReach) {
  JudgeAgreement agreement({"human", "llm"}, 10'000, 60'000);
  std::vector<JudgeGrades> list(2);
  for (const auto& [time_ms, grade] :
       {std::pair<int64_t, int>{5'000, 1}, {35'000, 2}, {75'000, 3}}) {
    list[0].ranked = {grade};
    list[1].ranked = {grade};
    agreement.AddList(list, time_ms == 35'000 ? 1 : 0, time_ms);
  }
  EXPECT_EQ(agreement.Merged()[0].both.items(), 3);
  // 30 s ending in bucket 7: buckets 5..7, the third list alone.
  const auto last30 = agreement.MergedWindow(75'000, 30'000);
  EXPECT_EQ(last30[0].both.items(), 1);
  EXPECT_EQ(last30[0].both.counts().at({3, 3}), 1);
  // 60 s: buckets 2..7, the second list (shard 1) and the third.
  const auto last60 = agreement.MergedWindow(75'000, 60'000);
  EXPECT_EQ(last60[0].both.items(), 2);
  EXPECT_EQ(last60[0].both.counts().count({1, 1}), 0u);
  // Later, with nothing new: the window has moved past them all.
  EXPECT_EQ(agreement.MergedWindow(200'000, 60'000)[0].both.items(), 0);

  // A checkpoint keeps the buckets; under another bucket width they are
  // dropped and the totals kept.
  for (int32_t shard : {0, 1}) {
    std::string record;
    ByteWriter w(&record);
    agreement.EncodeShard(shard, &w);
    JudgeAgreement same({"human", "llm"}, 10'000, 60'000);
    ByteReader r(record);
    ASSERT_TRUE(same.DecodeShard(shard, &r).ok());
    EXPECT_TRUE(r.at_end());
    // Shard 0 holds bucket 7 (bucket 0 fell out of the span), shard 1
    // bucket 3: one list each in the 60 s window.
    EXPECT_EQ(same.MergedWindow(75'000, 60'000)[0].both.items(), 1);
    EXPECT_EQ(same.Merged()[0].both.items(), shard == 0 ? 2 : 1);
    JudgeAgreement wider({"human", "llm"}, 20'000, 60'000);
    ByteReader r2(record);
    ASSERT_TRUE(wider.DecodeShard(shard, &r2).ok());
    EXPECT_EQ(wider.MergedWindow(75'000, 60'000)[0].both.items(), 0);
    EXPECT_EQ(wider.Merged()[0].both.items(), shard == 0 ? 2 : 1);
  }

  // A reload to another width empties the windows, not the totals.
  agreement.SetWindows(5'000, 60'000);
  EXPECT_EQ(agreement.MergedWindow(75'000, 60'000)[0].both.items(), 0);
  EXPECT_EQ(agreement.Merged()[0].both.items(), 3);
}

// A record of the format before windows (JAG1: the totals alone) still
// restores, written here byte by byte as that version wrote it.
TEST(JudgeAgreementTest, ReadsTheRecordWithoutWindows) {
  std::string record;
  ByteWriter w(&record);
  w.Fixed32(JudgeAgreement::kMagicTotals);
  w.Varint(1);
  w.String("human");
  w.String("llm");
  w.I64(2);  // only human
  w.I64(0);  // only llm
  w.Varint(1);
  w.I64(1);
  w.I64(0);
  w.I64(5);  // five items human 1, llm 0
  JudgeAgreement agreement({"human", "llm"}, 10'000, 60'000);
  ByteReader r(record);
  ASSERT_TRUE(agreement.DecodeShard(0, &r).ok());
  EXPECT_TRUE(r.at_end());
  const metrics::JudgePairCounts p = agreement.Merged()[0];
  EXPECT_EQ(p.both.counts().at({1, 0}), 5);
  EXPECT_EQ(p.only_first, 2);
  EXPECT_EQ(agreement.MergedWindow(0, 60'000)[0].both.items(), 0);
}

}  // namespace
}  // namespace rankwatch::stream
