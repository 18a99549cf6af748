#include "daemon/kafka/checkpoint_chain.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  // Every delta key of partition 1, of the superseded base (before the
  // newest), its own and the late writer's: deleted once a newer base is
  // written.
  EXPECT_EQ(chain.delta_keys,
            (std::vector<std::string>{"1.10.1", "1.10.2", "1.14.1", "1.10.3",
                                      "1.14.2"}));
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

// What ReadChain keeps of a changelog partition read in order: the newest
// base and what follows it; before it the keys alone of the deltas not
// deleted (their bytes are never applied); nothing of partition 5 (which
// shares the changelog partition) nor of a key a tombstone deleted.
TEST(FoldChainRecordTest, KeepsTheKeysOfDeltasBeforeTheNewestBase) {
  std::vector<Changelog::Stored> read;
  const auto fold = [&](const Changelog::Stored& r) {
    const std::string_view value(r.value);
    FoldChainRecord(1, r.key, r.offset, &value, &read);
  };
  fold(BaseAt(1, 10));
  fold(DeltaAt(1, 11, 10, 1));
  fold(DeltaAt(1, 12, 10, 2));
  fold(BaseAt(5, 13));
  fold(DeltaAt(5, 14, 13, 1));
  fold(BaseAt(1, 20));
  fold(DeltaAt(1, 21, 20, 1));
  FoldChainRecord(1, "1.10.1", 22, nullptr, &read);  // A tombstone.
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].key, "1.10.2");
  EXPECT_EQ(read[0].offset, 12);
  EXPECT_EQ(read[0].value, "");
  EXPECT_EQ(read[1].key, "1");
  EXPECT_EQ(read[1].offset, 20);
  EXPECT_EQ(read[1].value, Base(1, 20));
  EXPECT_EQ(read[2].key, "1.20.1");
  EXPECT_EQ(read[2].value, Delta(1, 20, 1));
  const ChainSelection chain = SelectChain(1, read);
  ASSERT_TRUE(chain.base.has_value());
  EXPECT_EQ(*chain.base, 1u);
  EXPECT_EQ(chain.deltas, (std::vector<size_t>{2}));
  EXPECT_EQ(chain.problem, "");
  EXPECT_EQ(chain.delta_keys, (std::vector<std::string>{"1.10.2", "1.20.1"}));
}

// The pointer waits for the tombstones. By hand: base at 10, its deltas at
// 11 and 12, a new base at 20 (the old deltas' tombstones due), then the
// round carrying them acknowledged.
TEST(ShardChainTest, PointerStaysBeforeDeltasWaitingForTheirTombstones) {
  ShardChain chain;
  EXPECT_TRUE(chain.BaseAcked(10, 100).empty());
  EXPECT_EQ(chain.Pointer(), 10);
  chain.DeltaAcked(1, 5, "0.10.1");
  chain.DeltaAcked(2, 5, "0.10.2");
  EXPECT_EQ(chain.Pointer(), 10);
  EXPECT_EQ(chain.BaseAcked(20, 100),
            (std::vector<std::string>{"0.10.1", "0.10.2"}));
  EXPECT_EQ(chain.base_offset, 20);
  EXPECT_EQ(chain.Pointer(), 10);  // Deltas at 11 and 12 not deleted yet.
  chain.TombstonesAcked();
  EXPECT_EQ(chain.Pointer(), 20);
  // Restored from offset 7 with two keys read; the first base at 30.
  chain.Restored({"0.20.1", "0.8.4"}, 7);
  EXPECT_EQ(chain.base_offset, -1);
  EXPECT_EQ(chain.BaseAcked(30, 100),
            (std::vector<std::string>{"0.20.1", "0.8.4"}));
  EXPECT_EQ(chain.Pointer(), 7);
  chain.TombstonesAcked();
  EXPECT_EQ(chain.Pointer(), 30);
}

// A changelog partition as the broker keeps it (compaction aside: it only
// removes records a reader would drop anyway), written by owners of
// partition 0 that each run some rounds and crash at a random point: a
// round's records acknowledged or failed, tombstones sent with the next
// round. After every crash, the next owner reads from the committed
// pointer; every delta key still alive in the log (no tombstone after it)
// must be among the keys it reads, to be deleted once its base is
// acknowledged: no delta stays in the compacted topic for ever. A failure
// prints the seed.
TEST(ShardChainTest, EveryLiveDeltaIsReadByTheNextOwnerWhateverTheCrash) {
  struct Entry {
    std::string key;
    std::optional<std::string> value;
  };
  const uint64_t seed = 4545;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  for (int run = 0; run < 200; ++run) {
    std::vector<Entry> log;
    int64_t pointer = -1;  // The group's committed pointer.
    ShardChain chain;
    std::vector<std::string> tombstones;  // Due, not sent.
    std::vector<std::string> restored_keys;
    for (int owner = 0; owner < 6; ++owner) {
      // The restore: the log from the pointer on.
      std::vector<Changelog::Stored> read;
      for (size_t o = static_cast<size_t>(std::max<int64_t>(pointer, 0));
           o < log.size(); ++o) {
        std::string_view v;
        if (log[o].value) v = *log[o].value;
        FoldChainRecord(0, log[o].key, static_cast<int64_t>(o),
                        log[o].value ? &v : nullptr, &read);
      }
      const ChainSelection selected = SelectChain(0, read);
      std::map<std::string, bool> live;  // Key -> alive.
      for (const Entry& e : log) live[e.key] = e.value.has_value();
      for (const auto& [key, alive] : live) {
        if (!alive || key == BaseKey(0)) continue;
        EXPECT_NE(std::find(selected.delta_keys.begin(),
                            selected.delta_keys.end(), key),
                  selected.delta_keys.end())
            << "run " << run << ", owner " << owner << ": delta " << key
            << " alive before the pointer " << pointer;
      }
      chain = ShardChain{};
      chain.Restored(selected.delta_keys, pointer);
      tombstones.clear();  // The crash lost them.
      const int rounds = 1 + static_cast<int>(rng.Below(8));
      for (int r = 0; r < rounds; ++r) {
        const bool base = chain.base_offset < 0 || rng.Below(4) == 0;
        const uint32_t seq = base ? 0 : chain.seq + 1;
        const std::string key =
            base ? BaseKey(0) : DeltaKey(0, chain.base_offset, seq);
        const int64_t offset = static_cast<int64_t>(log.size());
        log.push_back({key, std::string(base ? "base" : "delta")});
        const std::vector<std::string> sent = std::move(tombstones);
        tombstones.clear();
        for (const std::string& t : sent) log.push_back({t, std::nullopt});
        if (rng.Below(6) == 0) {  // Not acknowledged (maybe written).
          chain.RoundFailed(seq, key);
          tombstones = sent;
          continue;
        }
        if (!sent.empty()) chain.TombstonesAcked();
        if (base) {
          for (std::string& k : chain.BaseAcked(offset, 100)) {
            tombstones.push_back(std::move(k));
          }
        } else {
          chain.DeltaAcked(seq, 10, key);
        }
        pointer = chain.Pointer();  // Committed after the round.
      }
    }
  }
}

}  // namespace
}  // namespace rankwatch::kafka
