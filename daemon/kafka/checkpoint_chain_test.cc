#include "daemon/kafka/checkpoint_chain.h"

#include <string>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

std::string Base(int32_t partition, int64_t next_offset) {
  std::string bytes;
  EncodeCheckpointRecord({partition, {next_offset, -1}, "base"}, &bytes);
  return bytes;
}

std::string Delta(int32_t partition, int64_t base_offset, uint32_t seq,
                  std::string_view state = "delta") {
  std::string bytes;
  EncodeDeltaRecord(
      {partition, {100 + seq, 200 + seq}, base_offset, seq, state}, &bytes);
  return bytes;
}

Changelog::Stored BaseAt(int32_t partition, int64_t offset) {
  return {BaseKey(partition), offset, Base(partition, offset)};
}

Changelog::Stored DeltaAt(int32_t partition, int64_t offset,
                          int64_t base_offset, uint32_t seq) {
  return {DeltaKey(partition, base_offset, seq), offset,
          Delta(partition, base_offset, seq)};
}

TEST(DeltaRecordTest, RoundTripsHeaderAndState) {
  std::string bytes;
  EncodeDeltaRecord({3, {1234, 99}, 77, 5, "changes"}, &bytes);
  StatusOr<DeltaRecord> r = DecodeDeltaRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->partition, 3);
  EXPECT_EQ(r->offsets[0], 1234);
  EXPECT_EQ(r->offsets[1], 99);
  EXPECT_EQ(r->base_offset, 77);
  EXPECT_EQ(r->seq, 5u);
  EXPECT_EQ(r->state, "changes");
  EXPECT_EQ(DeltaKey(3, 77, 5), "3.77.5");
  EXPECT_EQ(BaseKey(3), "3");
}

TEST(DeltaRecordTest, EveryTruncationAndEveryFlippedByteIsAnError) {
  std::string bytes;
  EncodeDeltaRecord({3, {1234, 99}, 77, 5, "some changes of the state"},
                    &bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeDeltaRecord(std::string_view(bytes).substr(0, n)).ok())
        << "cut at " << n;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_FALSE(DecodeDeltaRecord(bad).ok()) << "byte " << i << " flipped";
  }
  std::string state_cut = bytes.substr(0, bytes.size() - 1);
  EXPECT_EQ(DecodeDeltaRecord(state_cut).status().message(),
            "checksum mismatch: the delta is corrupt or truncated");
}

TEST(DeltaKeyTest, ParsesOnlyThePartitionsDeltaKeys) {
  int64_t base = 0;
  uint32_t seq = 0;
  EXPECT_TRUE(ParseDeltaKey(1, "1.120.3", &base, &seq));
  EXPECT_EQ(base, 120);
  EXPECT_EQ(seq, 3u);
  EXPECT_FALSE(ParseDeltaKey(1, "10.120.3", &base, &seq));  // Partition 10's.
  EXPECT_FALSE(ParseDeltaKey(1, "1", &base, &seq));         // A base.
  EXPECT_FALSE(ParseDeltaKey(1, "1.120", &base, &seq));
  EXPECT_FALSE(ParseDeltaKey(1, "1.120.0", &base, &seq));  // Seq from 1.
  EXPECT_FALSE(ParseDeltaKey(1, "1.-4.2", &base, &seq));
  EXPECT_FALSE(ParseDeltaKey(1, "1.12x.2", &base, &seq));
  EXPECT_FALSE(ParseDeltaKey(1, "1.12.2.", &base, &seq));
}

// Partition 1 shares its changelog partition with 5 (4 partitions).
TEST(SelectChainTest, NewestBaseThenItsDeltasInOrder) {
  const std::vector<Changelog::Stored> records = {
      BaseAt(1, 10),         DeltaAt(1, 11, 10, 1), BaseAt(5, 12),
      DeltaAt(1, 13, 10, 2), BaseAt(1, 14),         DeltaAt(5, 15, 12, 1),
      DeltaAt(1, 16, 14, 1), DeltaAt(1, 17, 10, 3),  // A late writer's.
      DeltaAt(1, 18, 14, 2),
  };
  const ChainSelection chain = SelectChain(1, records);
  ASSERT_TRUE(chain.base.has_value());
  EXPECT_EQ(*chain.base, 4u);  // Offset 14.
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{6, 8}));
  EXPECT_EQ(chain.problem, "");
  // Every delta key of partition 1 after the base, its own and the late
  // writer's: deleted once a newer base is written.
  EXPECT_EQ(chain.delta_keys,
            (std::vector<std::string>{"1.14.1", "1.10.3", "1.14.2"}));
}

TEST(SelectChainTest, NoBaseNoChain) {
  const ChainSelection chain = SelectChain(2, {DeltaAt(2, 3, 1, 1)});
  EXPECT_FALSE(chain.base.has_value());
  EXPECT_TRUE(chain.deltas.empty());
  EXPECT_EQ(chain.delta_keys, (std::vector<std::string>{"2.1.1"}));
}

TEST(SelectChainTest, AMissingDeltaStopsTheChainBeforeIt) {
  const ChainSelection chain =
      SelectChain(0, {BaseAt(0, 4), DeltaAt(0, 5, 4, 1), DeltaAt(0, 6, 4, 3),
                      DeltaAt(0, 7, 4, 4)});
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{1}));
  EXPECT_EQ(chain.problem,
            "delta record '0.4.3' (changelog offset 6): delta 3 where delta 2 "
            "was due (one is missing or out of order)");
}

TEST(SelectChainTest, ADuplicateOrOutOfOrderDeltaStopsTheChain) {
  const ChainSelection chain =
      SelectChain(0, {BaseAt(0, 4), DeltaAt(0, 5, 4, 1), DeltaAt(0, 6, 4, 2),
                      DeltaAt(0, 7, 4, 2)});
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{1, 2}));
  EXPECT_NE(chain.problem.find("delta 2 where delta 3 was due"),
            std::string::npos)
      << chain.problem;
}

TEST(SelectChainTest, ACorruptDeltaStopsTheChainBeforeIt) {
  std::vector<Changelog::Stored> records = {BaseAt(0, 4), DeltaAt(0, 5, 4, 1),
                                            DeltaAt(0, 6, 4, 2),
                                            DeltaAt(0, 7, 4, 3)};
  records[2].value.back() ^= 1;
  const ChainSelection chain = SelectChain(0, records);
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{1}));
  EXPECT_EQ(chain.problem,
            "delta record '0.4.2' (changelog offset 6): checksum mismatch: the "
            "delta is corrupt or truncated");
}

TEST(SelectChainTest, ADeltaUnderAnotherKeyStopsTheChain) {
  // Delta 2 of base 4, stored under the key of delta 2 of partition 0's
  // chain but written for partition 4.
  std::vector<Changelog::Stored> records = {BaseAt(0, 4), DeltaAt(0, 5, 4, 1),
                                            DeltaAt(0, 6, 4, 2)};
  records[2].value = Delta(4, 4, 2);
  const ChainSelection chain = SelectChain(0, records);
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{1}));
  EXPECT_EQ(chain.problem,
            "delta record '0.4.2' (changelog offset 6): its header names "
            "another place (partition 4, base 4, delta 2)");
}

// Random record sequences: whatever the broker holds, the chain is the
// newest base and a gapless run 1..n of its deltas, each in its place.
TEST(SelectChainTest, RandomLogsGiveAGaplessChainOfTheNewestBase) {
  const uint64_t seed = 20261207;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  for (int round = 0; round < 500; ++round) {
    std::vector<Changelog::Stored> records;
    int64_t last_base = -1;
    const int n = 1 + static_cast<int>(rng.Next() % 20);
    for (int64_t offset = 0; offset < n; ++offset) {
      const int32_t p = rng.Next() % 4 == 0 ? 5 : 1;
      const uint64_t kind = rng.Next() % 4;
      if (kind == 0) {
        records.push_back(BaseAt(p, offset));
        if (p == 1) last_base = offset;
      } else {
        const int64_t base = rng.Next() % 3 == 0
                                 ? static_cast<int64_t>(rng.Next() % 20)
                                 : std::max<int64_t>(last_base, 0);
        records.push_back(DeltaAt(p, offset, base,
                                  1 + static_cast<uint32_t>(rng.Next() % 4)));
        if (rng.Next() % 10 == 0) records.back().value.pop_back();
      }
    }
    const ChainSelection chain = SelectChain(1, records);
    ASSERT_EQ(chain.base.has_value(), last_base >= 0) << "round " << round;
    if (!chain.base) continue;
    EXPECT_EQ(records[*chain.base].offset, last_base) << "round " << round;
    for (size_t k = 0; k < chain.deltas.size(); ++k) {
      const StatusOr<DeltaRecord> d =
          DecodeDeltaRecord(records[chain.deltas[k]].value);
      ASSERT_TRUE(d.ok()) << "round " << round;
      EXPECT_EQ(d->partition, 1);
      EXPECT_EQ(d->base_offset, last_base);
      EXPECT_EQ(d->seq, k + 1) << "round " << round;
      EXPECT_GT(chain.deltas[k], *chain.base);
    }
  }
}

}  // namespace
}  // namespace rankwatch::kafka
