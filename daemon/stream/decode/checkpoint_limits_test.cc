// Hostile checkpoint records (issue 40): the changelog is input like any
// other. Each record below is written field by field after the layout
// Pipeline::EncodeShard writes, so that one field is hostile; each test
// asserts the refusal's exact message (byte offsets counted from the
// layout) and that nothing was created: no group, no pending request.
#include "daemon/stream/decode/checkpoint_limits.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/byte_codec.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/judges/judge_agreement.h"
#include "daemon/stream/pipeline/checkpoint_test_util.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using checkpoint_testing::Aggregates;
using checkpoint_testing::Experiments;
using checkpoint_testing::HostileRequest;
using checkpoint_testing::JoinSection;
using checkpoint_testing::k2100;
using checkpoint_testing::Sections;
using checkpoint_testing::VarintBytes;

class CheckpointLimitsTest : public ::testing::Test {
 protected:
  CheckpointLimitsTest() {
    config_.join.window = std::chrono::seconds(10);
    config_.join.allowed_lateness = std::chrono::seconds(1);
    config_.metrics.cutoffs = {1};
  }
  Pipeline& pipeline() {
    if (!pipeline_) pipeline_ = NewTestPipeline(config_, &clock_);
    return *pipeline_;
  }
  // Decodes `record` into shard 0; its error message, or "" when restored.
  std::string Refusal(const std::string& record) {
    const Status s = pipeline().DecodeShard(0, record);
    return s.ok() ? "" : s.message();
  }
  void ExpectNothingCreated() {
    EXPECT_EQ(pipeline().aggregator().num_groups(), 0u);
    EXPECT_EQ(pipeline().pending_requests(), 0);
    EXPECT_FALSE(pipeline().aggregator().HasShard(0));
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
};

TEST_F(CheckpointLimitsTest, AnEmptyShardRestores) {
  EXPECT_EQ(Refusal(Sections().Record()), "");
}

// Issue 40: 4,000 series of 2^20 unit buckets sized 4,000 x 2^20 sums
// (32 GiB) before the record was seen to hold any arm: bad_alloc on every
// restart. With no arm there is nothing to size; one arm whose bytes are
// missing is refused by its count.
TEST_F(CheckpointLimitsTest, ExperimentSumsAreSizedOnlyForArmsTheRecordHolds) {
  Sections none;
  none.experiments = Experiments(1 << 20, 4000, 0);
  EXPECT_EQ(Refusal(none.Record()), "");

  Sections one;
  one.experiments = Experiments(1 << 20, 4000, 1);
  // The count is the section's last byte read.
  const size_t at = one.ExperimentsOffset() + one.experiments.size();
  EXPECT_EQ(Refusal(one.Record()),
            "experiment sums of shard 0: at byte " + std::to_string(at) +
                ": a count of 1 items larger than the record");
  ExpectNothingCreated();
}

TEST_F(CheckpointLimitsTest, CovariateSumsAreSizedOnlyForArmsTheRecordHolds) {
  Sections s;
  s.experiments = Experiments(1 << 20, 4000, 0, /*covariate=*/true);
  EXPECT_EQ(Refusal(s.Record()), "");
}

// Issue 40: a pending request of 10^6 docs and 6 x 10^4 judged docs hung
// the replica under its lock. A live event of more than events.max_results
// docs is rejected; so is a restored one.
TEST_F(CheckpointLimitsTest, ARestoredListObeysMaxResults) {
  HostileRequest r;
  r.docs.clear();
  for (int i = 0; i < 1'000'000; ++i) r.docs.push_back("d" + std::to_string(i));
  for (int i = 0; i < 60'000; ++i) r.judged.push_back("d" + std::to_string(i));
  Sections s;
  s.join = JoinSection({r});
  size_t docs_bytes = 0;
  for (const std::string& d : r.docs) docs_bytes += d.size();
  // Magic, two progress times, the request count; key, query, docs; the
  // docs' count is the last read.
  const size_t at = s.JoinOffset() + 4 + 8 + 8 + 1 + 3 + 3 +
                    VarintBytes(docs_bytes) + docs_bytes +
                    VarintBytes(1'000'000);
  EXPECT_EQ(Refusal(s.Record()),
            "pending requests of shard 0: at byte " + std::to_string(at) +
                ": a list of 1000000 docs, over events.max_results 1000");
  ExpectNothingCreated();
}

// A long list where the limits allow it restores and is scored in time
// linear in its size (the join finds a judged doc through a hash index; a
// scan per judged doc took minutes here, hours at 10^6 x 6 x 10^4): d0,
// d16, ..., d199984 graded 1, so P@1 = 1.
TEST_F(CheckpointLimitsTest, ALongRestoredListIsScored) {
  config_.events.max_results = 200'000;
  config_.join.max_judgments_per_request = 12'500;
  HostileRequest r;
  r.docs.clear();
  for (int i = 0; i < 200'000; ++i) r.docs.push_back("d" + std::to_string(i));
  for (int i = 0; i < 12'500; ++i) {
    r.judged.push_back("d" + std::to_string(16 * i));
  }
  Sections s;
  s.join = JoinSection({r});
  ASSERT_EQ(Refusal(s.Record()), "");
  pipeline().FinishAll();
  const Aggregator& agg = pipeline().aggregator();
  ASSERT_EQ(agg.num_groups(), 1u);
  EXPECT_EQ(agg.group(0).requests, 1);
  bool found = false;
  for (size_t i = 0; i < agg.series().size(); ++i) {
    if (agg.series()[i].trec_name != "P_1") continue;
    found = true;
    EXPECT_EQ(agg.group(0).all[i].count(), 1);
    EXPECT_EQ(agg.group(0).all[i].mean(), 1.0);
  }
  EXPECT_TRUE(found);
}

TEST_F(CheckpointLimitsTest, ARestoredRequestObeysMaxJudgmentsPerRequest) {
  HostileRequest r;
  for (int i = 0; i < 60'000; ++i) r.judged.push_back("a");
  Sections s;
  s.join = JoinSection({r});
  // ... docs "ab" and their two ends, 60,000 judged bytes, their count.
  const size_t at = s.JoinOffset() + 4 + 8 + 8 + 1 + 3 + 3 + 3 + 3 +
                    VarintBytes(60'000) + 60'000 + VarintBytes(60'000);
  EXPECT_EQ(Refusal(s.Record()), "pending requests of shard 0: at byte " +
                                     std::to_string(at) +
                                     ": 60000 judgments in a request, over "
                                     "join.max_judgments_per_request 1000");
  ExpectNothingCreated();
}

TEST_F(CheckpointLimitsTest, ARestoredShardObeysMaxPendingRequests) {
  config_.join.max_pending_requests = 1;
  HostileRequest a, b;
  b.key = "r2";
  Sections s;
  s.join = JoinSection({a, b});
  EXPECT_EQ(Refusal(s.Record()),
            "pending requests of shard 0: at byte " +
                std::to_string(s.JoinOffset() + 4 + 8 + 8 + 1) +
                ": 2 pending requests, over join.max_pending_requests 1");
  ExpectNothingCreated();
}

// Issue 40: a newest event time in 2100 was restored as is: every window
// empty from then on, and written back into later checkpoints.
TEST_F(CheckpointLimitsTest, ANewestEventTimeBeyondTheSkewIsRefused) {
  Sections s;
  s.aggregates = Aggregates(k2100);
  // Header 8, magic 4, two counts 1 + 1, the time 8.
  EXPECT_EQ(Refusal(s.Record()),
            "aggregates of shard 0: at byte 22: the shard's newest event time "
            "2100-01-01T00:00:00Z is after the wall clock plus "
            "events.max_future_skew (2025-11-22T08:31:40Z)");
  ExpectNothingCreated();
  EXPECT_EQ(pipeline().aggregator().newest_time_ms(), INT64_MIN);
}

TEST_F(CheckpointLimitsTest, AServedTimeBeforeMinTimestampIsRefused) {
  HostileRequest r;
  r.served_ms = 1000;
  r.deadline_ms = 11'000;
  Sections s;
  s.join = JoinSection({r});
  // The join's magic, times and count 21; the request up to its deadline:
  // 3 + 3 + 3 (key, query, docs) + 3 (ends) + 1 + 1 (no judged doc, no
  // record) + 1 + 2 + 1 (has_results, the labels) + 8 + 8 + 1 + 8 + 8.
  const size_t at = s.JoinOffset() + 21 + 51;
  EXPECT_EQ(Refusal(s.Record()),
            "pending requests of shard 0: at byte " + std::to_string(at) +
                ": a request's served time 1970-01-01T00:00:01Z is before "
                "events.min_timestamp 2010-01-01T00:00:00Z");
  ExpectNothingCreated();
}

// Issue 40: invalid UTF-8 in a restored variant label became a label of
// /metrics, which Prometheus refuses; the group was created even when the
// rest of the record was refused.
TEST_F(CheckpointLimitsTest, AVariantLabelThatIsNotUtf8IsRefused) {
  HostileRequest r;
  r.variant = "\xff\xfe";
  Sections s;
  s.join = JoinSection({r});
  // The request up to its labels: 3 + 3 + 3 + 3 + 1 + 1 + 1, the variant 3.
  const size_t at = s.JoinOffset() + 21 + 18;
  EXPECT_EQ(Refusal(s.Record()),
            "pending requests of shard 0: at byte " + std::to_string(at) +
                ": a variant label that is not valid UTF-8");
  ExpectNothingCreated();

  Sections agg;
  agg.aggregates = Aggregates(kNow - 60'000, {"\xc0\xaf"});
  // Header 8, magic 4, 1 + 1, the time 8, the group count 1, the label 3.
  EXPECT_EQ(Refusal(agg.Record()),
            "aggregates of shard 0: at byte 26: a variant label that is not "
            "valid UTF-8");
  ExpectNothingCreated();
}

TEST_F(CheckpointLimitsTest, AVariantLabelOverMaxIdLengthIsRefused) {
  config_.events.max_id_length = 4;
  HostileRequest r;
  r.variant = "12345";
  Sections s;
  s.join = JoinSection({r});
  EXPECT_EQ(Refusal(s.Record()),
            "pending requests of shard 0: at byte " +
                std::to_string(s.JoinOffset() + 21 + 15 + 6) +
                ": a variant label of 5 bytes, over the limit of 4");
  ExpectNothingCreated();
}

// The labels of a record a later section refuses create no group: they
// wait until every section has decoded.
TEST_F(CheckpointLimitsTest, NoGroupIsCreatedUntilTheWholeRecordDecoded) {
  HostileRequest r;
  Sections s;
  s.aggregates = Aggregates(kNow - 60'000, {"A"});
  s.join = JoinSection({r});
  s.movers = std::string("QMV0\x00\x00", 6);
  EXPECT_EQ(Refusal(s.Record()), "query movers of shard 0: at byte " +
                                     std::to_string(s.MoversOffset() + 4) +
                                     ": not a query movers record");
  ExpectNothingCreated();

  // The same record, whole: the aggregates' group A, then the request's B,
  // in the order the record names them; the request is scored into B.
  s.movers = Sections().movers;
  EXPECT_EQ(Refusal(s.Record()), "");
  const Aggregator& agg = pipeline().aggregator();
  ASSERT_EQ(agg.num_groups(), 2u);
  EXPECT_EQ(agg.variant(0), "A");
  EXPECT_EQ(agg.variant(1), "B");
  EXPECT_EQ(pipeline().pending_requests(), 1);
  pipeline().FinishAll();
  EXPECT_EQ(agg.group(0).requests, 1);  // Restored.
  EXPECT_EQ(agg.group(1).requests, 1);  // The request, finalized.
}

// Issue 40: a restored newest_bucket of INT64_MIN + 1 overflowed in
// WindowRing::Sum and MergeFrom. In a checkpoint it is refused (no event
// time is in that bucket) ...
TEST_F(CheckpointLimitsTest, ANewestBucketOutsideEventTimeIsRefused) {
  Sections s;
  s.aggregates =
      Aggregates(kNow - 60'000, {"A"}, INT64_MIN + 1, {INT64_MIN + 1});
  // Header 8, aggregates 4 + 1 + 1 + 8, the group: count 1, label 2,
  // 8 + 8, 12 first-click counts, 8 + 8; the ring 8 + 8 + 1 + 1.
  const size_t at = 8 + 14 + 1 + 2 + 16 + 12 + 16 + 18;
  EXPECT_EQ(Refusal(s.Record()),
            "aggregates of shard 0: at byte " + std::to_string(at) +
                ": a window's newest bucket -9223372036854775807 (of 10000 "
                "ms) outside the event-time bounds (events.min_timestamp, "
                "events.max_future_skew)");
  ExpectNothingCreated();
}

// ... and a ring that holds it anyway (bucket of 1 ms, no bounds) sums and
// merges without overflow (UBSan halts on one): the bucket holds 2 values
// of 0.5.
TEST(CheckpointWindowRingTest, ABucketAtTheEdgeOfInt64SumsWithoutOverflow) {
  std::string bytes;
  ByteWriter w(&bytes);
  w.I64(1);
  w.I64(INT64_MIN + 1);
  w.Varint(1);  // One series.
  w.Varint(1);
  w.I64(INT64_MIN + 1);
  w.Varint(2);
  w.Double(1.0);
  w.Double(0.5);
  ByteReader in(bytes);
  const std::vector<int> same = {0};
  const WindowRing ring = WindowRing::Decode(&in, 1, 10, same);
  ASSERT_TRUE(in.ok()) << in.status().message();
  const WindowTotals t = ring.Sum(0, INT64_MIN + 1, 10);
  EXPECT_EQ(t.count, 2);
  EXPECT_EQ(t.sum, 1.0);
  WindowRing merged(1, 10, 1);
  merged.MergeFrom(ring);
  EXPECT_EQ(merged.Sum(0, INT64_MIN + 1, 10).count, 2);
  EXPECT_EQ(merged.Sum(0, INT64_MAX, 10).count, 0);
}

// A ring of outcomes (interleaving: each value 0 or 1) must hold counts:
// the fuzz target found a restored bucket sum of 1e237, which its reader
// converted to an integer (undefined behaviour). Two values, 1 and 0: sum
// 1, squares 1.
TEST(CheckpointWindowRingTest, ARingOfOutcomesHoldsCounts) {
  const auto ring = [](double sum, double squares) {
    std::string bytes;
    ByteWriter w(&bytes);
    w.I64(10'000);
    w.I64(170'000'000);
    w.Varint(1);
    w.Varint(1);
    w.I64(170'000'000);
    w.Varint(2);
    w.Double(sum);
    w.Double(squares);
    ByteReader in(bytes);
    const std::vector<int> same = {0};
    WindowRing r = WindowRing::Decode(&in, 10'000, 60'000, same);
    EXPECT_TRUE(in.ok()) << in.status().message();
    return r;
  };
  EXPECT_TRUE(ring(1, 1).ValuesWithin(0, 1));
  EXPECT_FALSE(ring(1e237, 1).ValuesWithin(0, 1));
  EXPECT_FALSE(ring(1, 3).ValuesWithin(0, 1));  // Squares over the count.
  EXPECT_FALSE(ring(-1, 1).ValuesWithin(0, 1));
  EXPECT_FALSE(ring(std::nan(""), 1).ValuesWithin(0, 1));
}

// Issue 40: agreement cells grew by one map node per distinct grade pair,
// never pruned. Live, an item that would add a cell past kMaxGradeCells
// is not counted (and counted as refused); a record with more is refused.
TEST(CheckpointAgreementTest, GradeCellsAreBounded) {
  JudgeAgreement agreement({"human", "llm"});
  std::vector<JudgeGrades> list(2);
  const int n = static_cast<int>(JudgeAgreement::kMaxGradeCells) + 10;
  for (int i = 0; i < n; ++i) {
    list[0].ranked.push_back(i);
    list[1].ranked.push_back(0);
  }
  list[0].ranked.push_back(0);  // (0, 0) again: an existing cell counts.
  list[1].ranked.push_back(0);
  agreement.AddList(list, 0);
  const metrics::JudgePairCounts p = agreement.Merged()[0];
  EXPECT_EQ(p.both.counts().size(), JudgeAgreement::kMaxGradeCells);
  EXPECT_EQ(p.both.items(), 1025);  // 1024 cells, (0, 0) twice.
  EXPECT_EQ(agreement.refused_items(), 10);

  std::string bytes;
  ByteWriter w(&bytes);
  w.Fixed32(JudgeAgreement::kMagicTotals);
  w.Varint(1);  // One pair.
  w.String("human");
  w.String("llm");
  w.I64(0);
  w.I64(0);
  w.Varint(1025);
  for (int i = 0; i < 1025; ++i) {
    w.I64(i);
    w.I64(0);
    w.I64(1);
  }
  ByteReader in(bytes);
  JudgeAgreement restored({"human", "llm"});
  const Status s = restored.DecodeShard(0, &in);
  // Magic 4, count 1, names 6 + 4, 8 + 8, the cell count 2.
  EXPECT_EQ(s.message(),
            "judge agreement of shard 0: at byte 33: 1025 grade pairs for one "
            "pair of judges, over the 1024 kept");
  EXPECT_TRUE(restored.Merged()[0].both.counts().empty());
}

// Counts beyond any stream's (kMaxRestoredCount, 2^48) are refused: the
// fuzz target found restored agreement and interleaving counts whose sums
// overflowed int64 (undefined behaviour).
TEST(CheckpointAgreementTest, CountsBeyondAnyStreamAreRefused) {
  std::string bytes;
  ByteWriter w(&bytes);
  w.Fixed32(JudgeAgreement::kMagicTotals);
  w.Varint(1);
  w.String("human");
  w.String("llm");
  w.I64(0);
  w.I64(0);
  w.Varint(1);
  w.I64(2);
  w.I64(3);
  w.I64(int64_t{1} << 62);
  ByteReader in(bytes);
  JudgeAgreement restored({"human", "llm"});
  // Magic 4, count 1, names 6 + 4, 8 + 8, the cell count 1, the cell 24.
  EXPECT_EQ(restored.DecodeShard(0, &in).message(),
            "judge agreement of shard 0: at byte 56: a grade pair out of "
            "range");
  ByteReader one(std::string_view("x"));
  CheckCount(&one, kMaxRestoredCount, "a count");
  EXPECT_TRUE(one.ok());
  CheckCount(&one, kMaxRestoredCount + 1, "a count");
  EXPECT_EQ(one.status().message(),
            "at byte 0: a count 281474976710657 out of range");
}

}  // namespace
}  // namespace rankwatch::stream
