#include "daemon/stream/join/pending_store.h"

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/string_index.h"
#include "gtest/gtest.h"
#include "tests/testing/test_seed.h"

namespace rankwatch::stream {
namespace {

PendingRequest* Create(PendingStore* s, const std::string& key) {
  return s->Create(key, HashBytes(key));
}
PendingRequest* Find(PendingStore* s, const std::string& key) {
  return s->Find(key, HashBytes(key));
}

// The keys of the requests released since the epoch started that an
// earlier record holds, in order.
std::vector<std::string> ReleasedKeys(const PendingStore& s) {
  std::vector<std::string> keys;
  ByteReader in(s.released_keys());
  for (uint64_t i = 0; i < s.released_count(); ++i) {
    keys.emplace_back(in.String());
  }
  EXPECT_TRUE(in.ok() && in.at_end());
  return keys;
}

std::vector<std::string> ChangedKeys(const PendingStore& s) {
  std::vector<std::string> keys;
  s.ForEachChanged([&](const PendingRequest& r) { keys.push_back(r.key); });
  return keys;
}

// Change tracking (checkpoints proportional to change): what a delta
// holds, by hand.
TEST(PendingStoreTest, TracksChangesAndReleasesPerEpoch) {
  PendingStore s;
  Create(&s, "before");  // Before tracking: in the base, not a change.
  EXPECT_FALSE(s.tracking());
  s.StartTracking();  // The base is written here.
  EXPECT_TRUE(ChangedKeys(s).empty());
  PendingRequest* a = Create(&s, "a");
  PendingRequest* b = Create(&s, "b");
  Find(&s, "a");  // Changed twice, listed once.
  s.Release(b);   // Created and released in the epoch: nothing to delete.
  EXPECT_EQ(ChangedKeys(s), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(ReleasedKeys(s).empty());
  s.StartTracking();  // A delta cut: "a" is in it.
  EXPECT_TRUE(ChangedKeys(s).empty());
  Find(&s, "before");
  s.Release(a);  // In the previous delta: deleted by key.
  // Reuses a's slot, already listed in this epoch: listed once, as "c".
  PendingRequest* c = Create(&s, "c");
  EXPECT_EQ(c, a);
  Find(&s, "missing");
  EXPECT_EQ(ChangedKeys(s), (std::vector<std::string>{"before", "c"}));
  EXPECT_EQ(ReleasedKeys(s), (std::vector<std::string>{"a"}));
  s.Release(Find(&s, "before"));  // Changed in the epoch, held before it.
  EXPECT_EQ(ChangedKeys(s), (std::vector<std::string>{"c"}));
  EXPECT_EQ(ReleasedKeys(s), (std::vector<std::string>{"a", "before"}));
  s.StartTracking();
  EXPECT_TRUE(ChangedKeys(s).empty());
  EXPECT_TRUE(ReleasedKeys(s).empty());
}

TEST(PendingStoreTest, CreateFindRelease) {
  PendingStore s;
  PendingRequest* a = Create(&s, "a");
  a->docs = "d1d2";
  a->doc_ends = {2, 4};
  EXPECT_EQ(a->doc(1), "d2");
  EXPECT_EQ(a->FindDoc("d2"), 1);
  EXPECT_EQ(a->FindDoc("d3"), -1);
  EXPECT_EQ(Find(&s, "a"), a);
  EXPECT_EQ(Find(&s, "b"), nullptr);
  EXPECT_EQ(s.size(), 1u);
  s.Release(a);
  EXPECT_EQ(Find(&s, "a"), nullptr);
  EXPECT_EQ(s.size(), 0u);
  // The slot is reused, cleared.
  PendingRequest* b = Create(&s, "b");
  EXPECT_EQ(b, a);
  EXPECT_TRUE(b->docs.empty());
  EXPECT_EQ(b->key, "b");
}

TEST(PendingStoreTest, DeadlineOrderAndReschedule) {
  PendingStore s;
  PendingRequest* a = Create(&s, "a");
  PendingRequest* b = Create(&s, "b");
  PendingRequest* c = Create(&s, "c");
  s.Schedule(a, 30);
  s.Schedule(b, 10);
  s.Schedule(c, 20);
  s.Schedule(b, 40);  // Moved later: its old entry at 10 is stale.
  EXPECT_EQ(s.PeekDue(5), nullptr);
  EXPECT_EQ(s.PeekDue(25), c);
  s.Release(c);
  EXPECT_EQ(s.PeekEarliest(), a);
  s.Release(a);
  EXPECT_EQ(s.PeekDue(39), nullptr);
  EXPECT_EQ(s.PeekDue(40), b);
  s.Release(b);
  EXPECT_EQ(s.PeekEarliest(), nullptr);
}

// Against a model (live requests and their deadlines): random creations,
// schedules (mostly in order with jitter, some far earlier, some moved),
// releases and peeks. PeekDue must return a live request of the earliest
// deadline when that deadline is due, and null otherwise.
TEST(PendingStoreTest, PeekDueReturnsTheEarliestLiveDeadline) {
  const uint64_t seed = rankwatch::testing::TestSeed();
  SCOPED_TRACE(rankwatch::testing::SeedNote(seed));
  std::mt19937_64 rng(seed);
  PendingStore s;
  std::map<std::string, int64_t> model;  // Scheduled live requests.
  std::set<std::string> unscheduled;     // Created, never scheduled.
  int64_t now = 0;
  int next_key = 0;
  const auto random_live = [&]() -> std::string {
    auto it = model.begin();
    std::advance(it, static_cast<long>(rng() % model.size()));
    return it->first;
  };
  for (int step = 0; step < 200000; ++step) {
    const uint64_t op = rng() % 100;
    if (op < 30 || model.empty()) {
      const std::string key = "r" + std::to_string(next_key++);
      PendingRequest* r = Create(&s, key);
      if (rng() % 20 == 0) {
        unscheduled.insert(key);
        continue;
      }
      // In order but for a jitter of up to 5, and one in ten far earlier.
      int64_t deadline = now + 100 + static_cast<int64_t>(rng() % 6);
      if (rng() % 10 == 0) deadline -= 80 + static_cast<int64_t>(rng() % 50);
      s.Schedule(r, deadline);
      model[key] = deadline;
    } else if (op < 45) {
      const std::string key = random_live();
      const int64_t deadline =
          model[key] + static_cast<int64_t>(rng() % 41) - 20;
      s.Schedule(Find(&s, key), deadline);
      model[key] = deadline;
    } else if (op < 55) {
      const std::string key = random_live();
      s.Release(Find(&s, key));
      model.erase(key);
    } else {
      now += static_cast<int64_t>(rng() % 3);
      int64_t earliest = INT64_MAX;
      for (const auto& [key, deadline] : model) {
        earliest = std::min(earliest, deadline);
      }
      PendingRequest* r = s.PeekDue(now);
      if (earliest > now) {
        ASSERT_EQ(r, nullptr) << "step " << step << ": " << r->key;
        continue;
      }
      ASSERT_NE(r, nullptr) << "step " << step << ", due " << earliest;
      ASSERT_EQ(model.count(r->key), 1u) << "step " << step << ": " << r->key;
      ASSERT_EQ(model[r->key], earliest) << "step " << step << ": " << r->key;
      ASSERT_EQ(r->deadline_ms, earliest);
      model.erase(r->key);
      s.Release(r);  // Finalized, as the join does.
    }
  }
  EXPECT_EQ(s.size(), model.size() + unscheduled.size());
}

// Prefetch is a hint: on an empty store (no index yet) and for any hash,
// present or not, it changes nothing a lookup sees.
TEST(PendingStoreTest, PrefetchChangesNothing) {
  PendingStore s;
  s.Prefetch(HashBytes("a"));
  s.Prefetch(0);
  PendingRequest* a = Create(&s, "a");
  for (uint64_t h :
       {HashBytes("a"), HashBytes("b"), uint64_t{0}, ~uint64_t{0}}) {
    s.Prefetch(h);
  }
  EXPECT_EQ(Find(&s, "a"), a);
  EXPECT_EQ(Find(&s, "b"), nullptr);
  EXPECT_EQ(s.size(), 1u);
}

// Backward-shift deletion must keep every remaining key reachable, across
// growth and many interleaved deletions.
TEST(PendingStoreTest, IndexSurvivesChurn) {
  PendingStore s;
  std::mt19937_64 rng(7);
  std::set<std::string> live;
  for (int round = 0; round < 20000; ++round) {
    const std::string key = "req-" + std::to_string(rng() % 3000);
    if (PendingRequest* r = Find(&s, key)) {
      ASSERT_TRUE(live.count(key)) << key;
      s.Release(r);
      live.erase(key);
    } else {
      ASSERT_FALSE(live.count(key)) << key;
      Create(&s, key);
      live.insert(key);
    }
  }
  EXPECT_EQ(s.size(), live.size());
  for (const std::string& key : live) EXPECT_NE(Find(&s, key), nullptr) << key;
  // ForEach visits each live request once, over every chunk of slots (about
  // 1,500 live of up to 3,000 slots: dozens of chunks of 64).
  std::set<std::string> visited;
  s.ForEach([&](PendingRequest& r) {
    EXPECT_TRUE(visited.insert(r.key).second) << r.key;
  });
  EXPECT_EQ(visited, live);
}

// Labels as nothing: a request without results has no group to write.
class NoGroups : public GroupCodec {
 public:
  void Write(uint32_t, ByteWriter*) const override {}
  uint32_t Read(ByteReader*) const override { return 0; }
};

// The covariate travels with a pending request through a checkpoint
// (format 2). A format-1 record, written before covariates, is the same
// bytes without the trailing double: it restores with none (NaN).
TEST(PendingStoreTest, CheckpointCarriesTheCovariate) {
  PendingStore s;
  PendingRequest* a = Create(&s, "a");
  a->docs = "d1d2";
  a->doc_ends = {2, 4};
  a->unit_hash = 77;
  a->covariate = 0.375;
  a->served_ms = 1000;
  s.Schedule(a, 5000);
  std::string record;
  ByteWriter w(&record);
  EncodePendingRequest(*a, NoGroups(), &w, 2);

  PendingStore restored;
  ByteReader r(record);
  PendingRequest* b = DecodePendingRequest(&r, NoGroups(), 3, &restored, 2);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(b->covariate, 0.375);
  EXPECT_EQ(b->unit_hash, 77u);
  EXPECT_EQ(b->deadline_ms, 5000);

  PendingStore old;
  ByteReader v1(std::string_view(record).substr(0, record.size() - 8));
  PendingRequest* c = DecodePendingRequest(&v1, NoGroups(), 3, &old, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(v1.at_end());
  EXPECT_TRUE(std::isnan(c->covariate));
  EXPECT_EQ(c->unit_hash, 77u);
  EXPECT_EQ(c->deadline_ms, 5000);
  // A reused slot forgets the covariate.
  old.Release(c);
  EXPECT_TRUE(std::isnan(Create(&old, "z")->covariate));
}

// A query record without hits (UBI's data generator) is a request with
// results and no docs until its window closes; its impressions are
// records with their flag and position, which a checkpoint carries.
TEST(PendingStoreTest, CheckpointCarriesImpressions) {
  PendingStore s;
  PendingRequest* a = Create(&s, "g");
  a->has_results = true;
  a->served_ms = 1000;
  a->judged_docs = "ab";
  a->records = {{0, 1, 1100, 0, false, false, false, -1, 1, true},
                {1, 2, 1200, 1, false, false, false, -1, 8, false}};
  s.Schedule(a, 5000);
  std::string record;
  ByteWriter w(&record);
  EncodePendingRequest(*a, NoGroups(), &w);

  PendingStore restored;
  ByteReader r(record);
  PendingRequest* b = DecodePendingRequest(&r, NoGroups(), 0, &restored);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(r.at_end());
  EXPECT_TRUE(b->has_results);
  EXPECT_EQ(b->num_docs(), 0u);
  ASSERT_EQ(b->records.size(), 2u);
  EXPECT_TRUE(b->records[0].impression);
  EXPECT_EQ(b->records[0].claimed_position, 1);
  EXPECT_FALSE(b->records[1].impression);
  EXPECT_EQ(b->records[1].claimed_position, 8);
  EXPECT_EQ(b->records[1].grade, 1);
}

// Format 3 carries the values of schema.fields up to the last one present
// (a count, then the doubles); formats 1 and 2 have none: NaN.
TEST(PendingStoreTest, CheckpointCarriesTheFieldValues) {
  PendingStore s;
  PendingRequest* a = Create(&s, "a");
  a->docs = "d1";
  a->doc_ends = {2};
  a->covariate = 1.5;
  FieldValues values = kNoFieldValues;
  values[0] = 120.25;
  values[2] = -3;  // Field 1 absent (NaN) in between.
  a->SetFields(values);
  s.Schedule(a, 5000);
  std::string record;
  ByteWriter w(&record);
  EncodePendingRequest(*a, NoGroups(), &w);
  std::string v2;
  ByteWriter w2(&v2);
  EncodePendingRequest(*a, NoGroups(), &w2, 2);
  // The count (1 byte: 3) and three doubles after the format-2 record.
  EXPECT_EQ(record.size(), v2.size() + 1 + 3 * 8);

  PendingStore restored;
  ByteReader r(record);
  PendingRequest* b = DecodePendingRequest(&r, NoGroups(), 0, &restored);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(b->covariate, 1.5);
  EXPECT_EQ(b->fields()[0], 120.25);
  EXPECT_TRUE(std::isnan(b->fields()[1]));
  EXPECT_EQ(b->fields()[2], -3);
  for (size_t i = 3; i < b->fields().size(); ++i) {
    EXPECT_TRUE(std::isnan(b->fields()[i])) << i;
  }
  // A reused slot forgets the values of the request it held.
  restored.Release(b);
  const PendingRequest* reused = Create(&restored, "y");
  ASSERT_EQ(reused, b);  // The same slot.
  for (size_t i = 0; i < reused->fields().size(); ++i) {
    EXPECT_TRUE(std::isnan(reused->fields()[i])) << i;
  }

  PendingStore old;
  ByteReader r2(v2);
  PendingRequest* c = DecodePendingRequest(&r2, NoGroups(), 0, &old, 2);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(r2.at_end());
  EXPECT_EQ(c->covariate, 1.5);
  EXPECT_TRUE(std::isnan(c->fields()[0]));
  // A request without values holds no storage for them: it reads the
  // shared all-NaN values.
  EXPECT_EQ(&c->fields(), &kNoFieldValues);

  // A count beyond the fields is corrupt input, not a crash.
  std::string corrupt = v2;
  ByteWriter wc(&corrupt);
  wc.Varint(9);
  PendingStore none;
  ByteReader rc(corrupt);
  EXPECT_EQ(DecodePendingRequest(&rc, NoGroups(), 0, &none), nullptr);
  EXPECT_FALSE(rc.ok());
}

}  // namespace
}  // namespace rankwatch::stream
