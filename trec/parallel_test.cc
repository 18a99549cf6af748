#include "trec/parallel.h"

#include <atomic>
#include <latch>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

TEST(ParallelWorkersTest, AtMostOnePerTaskAndAtLeastOne) {
  EXPECT_EQ(ParallelWorkers(10, 4), 4u);
  EXPECT_EQ(ParallelWorkers(3, 8), 3u);
  EXPECT_EQ(ParallelWorkers(0, 4), 1u);
  EXPECT_EQ(ParallelWorkers(10, 0), 1u);
  EXPECT_EQ(ParallelWorkers(10, -2), 1u);
}

TEST(TaskRangeTest, ContiguousInOrderSizesWithinOne) {
  // 10 items in 4 tasks: 10 = 4 * 2 + 2, so the first two tasks take 3.
  EXPECT_EQ(TaskRange(10, 4, 0), (std::pair<size_t, size_t>{0, 3}));
  EXPECT_EQ(TaskRange(10, 4, 1), (std::pair<size_t, size_t>{3, 6}));
  EXPECT_EQ(TaskRange(10, 4, 2), (std::pair<size_t, size_t>{6, 8}));
  EXPECT_EQ(TaskRange(10, 4, 3), (std::pair<size_t, size_t>{8, 10}));
  EXPECT_EQ(TaskRange(3, 3, 2), (std::pair<size_t, size_t>{2, 3}));
  // One task per thread would leave a thread idle behind a slow task: four.
  EXPECT_EQ(TaskCount(100, 2), 8u);
  EXPECT_EQ(TaskCount(3, 2), 3u);
  EXPECT_EQ(TaskCount(100, 1), 1u);
  EXPECT_EQ(TaskCount(0, 2), 0u);
}

TEST(RunParallelTest, RunsEveryTaskOnceWithResultsInTaskOrder) {
  for (int threads : {1, 2, 8}) {
    std::vector<size_t> out(1000, 0);
    std::vector<std::atomic<int>> calls(1000);
    std::vector<size_t> per_worker(ParallelWorkers(1000, threads), 0);
    const size_t failed = RunParallel(1000, threads, [&](size_t i, size_t w) {
      out[i] = i * i;
      calls[i].fetch_add(1);
      ++per_worker[w];  // Unsynchronized: one thread per worker number.
      return true;
    });
    EXPECT_EQ(failed, 1000u);
    size_t total = 0;
    for (size_t n : per_worker) total += n;
    EXPECT_EQ(total, 1000u);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], i * i) << "threads " << threads;
      ASSERT_EQ(calls[i].load(), 1) << "threads " << threads;
    }
  }
}

TEST(RunParallelTest, NoTasks) {
  bool called = false;
  EXPECT_EQ(RunParallel(0, 4,
                        [&](size_t, size_t) {
                          called = true;
                          return true;
                        }),
            0u);
  EXPECT_FALSE(called);
}

// Four tasks that each wait for all four: this only finishes if they run on
// four threads at once.
TEST(RunParallelTest, UsesTheThreadsItIsGiven) {
  std::latch all_started(4);
  EXPECT_EQ(RunParallel(4, 4,
                        [&](size_t, size_t) {
                          all_started.arrive_and_wait();
                          return true;
                        }),
            4u);
}

// Tasks 37, 137, 237, ... fail: whatever the scheduling, the lowest is
// reported and every task below it has run.
TEST(RunParallelTest, ReportsTheLowestFailedTask) {
  for (int threads : {1, 2, 8}) {
    std::vector<std::atomic<bool>> ran(1000);
    const size_t failed = RunParallel(1000, threads, [&](size_t i, size_t) {
      ran[i].store(true);
      return i % 100 != 37;
    });
    EXPECT_EQ(failed, 37u) << "threads " << threads;
    for (size_t i = 0; i <= 37; ++i) EXPECT_TRUE(ran[i].load()) << i;
  }
  // Sequentially nothing after the failure starts.
  std::vector<bool> ran(10, false);
  EXPECT_EQ(RunParallel(10, 1,
                        [&](size_t i, size_t) {
                          ran[i] = true;
                          return i != 3;
                        }),
            3u);
  EXPECT_EQ(ran, (std::vector<bool>{true, true, true, true, false, false, false,
                                    false, false, false}));
}

TEST(RunParallelUntilErrorTest, ReturnsTheErrorOfTheLowestFailedTask) {
  for (int threads : {1, 2, 8}) {
    Status s = RunParallelUntilError(1000, threads, [](size_t i, size_t) {
      return i % 100 == 37
                 ? Status::InvalidArgument("task " + std::to_string(i))
                 : Status::Ok();
    });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), "task 37") << "threads " << threads;
  }
  EXPECT_TRUE(RunParallelUntilError(100, 4, [](size_t, size_t) {
                return Status::Ok();
              }).ok());
}

}  // namespace
}  // namespace rankwatch::trec
