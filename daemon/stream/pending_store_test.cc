#include "daemon/stream/pending_store.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/string_index.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

PendingRequest* Create(PendingStore* s, const std::string& key) {
  return s->Create(key, HashBytes(key));
}
PendingRequest* Find(PendingStore* s, const std::string& key) {
  return s->Find(key, HashBytes(key));
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
}

}  // namespace
}  // namespace rankwatch::stream
