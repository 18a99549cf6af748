#include "daemon/stream/pipeline/snapshot_cache.h"

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

// A pipeline with two judges who agree on one doc of two; lists are
// finalized by FinishAll().
class SnapshotCacheTest : public ::testing::Test {
 protected:
  SnapshotCacheTest() {
    config::Config c;
    c.judges.names = {"human", "llm"};
    c.judges.default_judge = "human";
    auto p = Pipeline::Create(c, &clock_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pipeline_ = std::move(p).value();
  }

  // Serves a list [a, b] and both judges' grades of it (human a=1 b=0,
  // llm a=1 b=1).
  void List(const std::string& id) {
    const std::string t = std::to_string(kNow - 600'000 + 1000 * offset_);
    Feed(Topic::kResults, R"({"request_id":")" + id + R"(","timestamp":)" + t +
                              R"(,"results":["a","b"]})");
    for (
        const char* grades :
        {R"("human","judgments":[{"doc_id":"a","relevance":1},{"doc_id":"b","relevance":0}])",
         R"("llm","judgments":[{"doc_id":"a","relevance":1},{"doc_id":"b","relevance":1}])"}) {
      Feed(Topic::kJudgments, R"({"request_id":")" + id + R"(","timestamp":)" +
                                  t + R"(,"judge":)" + grades + "}");
    }
  }
  void Feed(Topic topic, const std::string& json) {
    (void)pipeline_->OnPayload(topic, json, EventOrigin{0, offset_++});
  }

  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
  int64_t offset_ = 0;
  SnapshotCache cache_;
};

// Two readers of one version: the first computes, the second waits for
// its read model and gets the same one; a third later reads it cached.
TEST_F(SnapshotCacheTest, ReadersOfOneVersionShareOneComputation) {
  List("r1");
  pipeline_->FinishAll();
  SnapshotCache::Ticket first = cache_.Begin(*pipeline_);
  SnapshotCache::Ticket second = cache_.Begin(*pipeline_);
  EXPECT_EQ(first.version(), second.version());
  SnapshotCache::Snapshot waited;
  std::thread reader([&] { waited = cache_.Finish(std::move(second)); });
  const SnapshotCache::Snapshot computed = cache_.Finish(std::move(first));
  reader.join();
  EXPECT_EQ(cache_.computations(), 1);
  ASSERT_NE(computed, nullptr);
  EXPECT_EQ(waited, computed);
  // One list of two docs both judges graded: 2 items, nothing alone.
  ASSERT_EQ(computed->agreement.size(), 1u);
  EXPECT_EQ(computed->agreement[0].pairs, 2);
  EXPECT_EQ(computed->agreement[0].only_first, 0);
  EXPECT_EQ(cache_.Finish(cache_.Begin(*pipeline_)), computed);
  EXPECT_EQ(cache_.computations(), 1);
}

// Readers racing on threads, each copying under a shared lock as the
// daemon does: one computation for the version, whatever the schedule.
TEST_F(SnapshotCacheTest, ConcurrentReadersComputeOnce) {
  List("r1");
  pipeline_->FinishAll();
  std::mutex pipeline_mu;
  std::vector<SnapshotCache::Snapshot> got(4);
  std::vector<std::thread> readers;
  for (size_t i = 0; i < got.size(); ++i) {
    readers.emplace_back([&, i] {
      SnapshotCache::Ticket ticket;
      {
        std::lock_guard<std::mutex> lock(pipeline_mu);
        ticket = cache_.Begin(*pipeline_);
      }
      got[i] = cache_.Finish(std::move(ticket));
    });
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(cache_.computations(), 1);
  for (const SnapshotCache::Snapshot& s : got) EXPECT_EQ(s, got[0]);
}

// Any change of the pipeline's state is a new version, read afresh.
TEST_F(SnapshotCacheTest, ANewVersionIsComputedAgain) {
  List("r1");
  pipeline_->FinishAll();
  const SnapshotCache::Snapshot before =
      cache_.Finish(cache_.Begin(*pipeline_));
  List("r2");
  pipeline_->FinishAll();
  const SnapshotCache::Snapshot after = cache_.Finish(cache_.Begin(*pipeline_));
  EXPECT_EQ(cache_.computations(), 2);
  EXPECT_NE(before, after);
  // The first is unchanged in its readers' hands: 2 items, then 4.
  EXPECT_EQ(before->agreement[0].pairs, 2);
  EXPECT_EQ(after->agreement[0].pairs, 4);
  // Three events a list (results and two judges' batches).
  EXPECT_EQ(before->counters.consumed[0] + before->counters.consumed[1], 3);
  EXPECT_EQ(after->counters.consumed[0] + after->counters.consumed[1], 6);
}

}  // namespace
}  // namespace rankwatch::stream
