#include "trec/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace rankwatch::trec {

namespace {

// Lowers `*min` to `value` if that is smaller.
void StoreMin(std::atomic<size_t>* min, size_t value) {
  size_t current = min->load(std::memory_order_relaxed);
  while (value < current && !min->compare_exchange_weak(
                                current, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

size_t ParallelWorkers(size_t tasks, int threads) {
  return std::max<size_t>(
      1, std::min(tasks, static_cast<size_t>(std::max(threads, 1))));
}

size_t TaskCount(size_t items, int threads) {
  constexpr size_t kTasksPerThread = 4;
  return threads <= 1
             ? std::min<size_t>(items, 1)
             : std::min(items, kTasksPerThread * static_cast<size_t>(threads));
}

std::pair<size_t, size_t> TaskRange(size_t items, size_t tasks, size_t task) {
  const size_t base = items / tasks;
  const size_t extra = items % tasks;  // The first `extra` tasks get one more.
  const size_t begin = task * base + std::min(task, extra);
  return {begin, begin + base + (task < extra ? 1 : 0)};
}

size_t RunParallel(
    size_t tasks, int threads,
    const std::function<bool(size_t task, size_t worker)>& task) {
  std::atomic<size_t> next{0};
  std::atomic<size_t> first_failed{tasks};
  auto work = [&](size_t worker) {
    // The failure check comes before taking an index: a task once taken
    // always runs, which is what makes the lowest failed index exact.
    while (first_failed.load(std::memory_order_relaxed) == tasks) {
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= tasks) return;
      if (!task(i, worker)) {
        StoreMin(&first_failed, i);
        return;
      }
    }
  };
  const size_t workers = ParallelWorkers(tasks, threads);
  std::vector<std::thread> spawned;
  spawned.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) spawned.emplace_back(work, w);
  work(0);
  for (std::thread& t : spawned) t.join();
  return first_failed.load();
}

Status RunParallelUntilError(
    size_t tasks, int threads,
    const std::function<Status(size_t task, size_t worker)>& task) {
  // A worker stops at its first failure, so one slot per worker holds every
  // error; the lowest failed index picks the one to return.
  struct Failure {
    size_t task = 0;
    Status status;
  };
  std::vector<Failure> failures(ParallelWorkers(tasks, threads));
  const size_t failed = RunParallel(tasks, threads, [&](size_t i, size_t w) {
    Status s = task(i, w);
    if (s.ok()) return true;
    failures[w] = Failure{i, std::move(s)};
    return false;
  });
  if (failed == tasks) return Status::Ok();
  for (Failure& f : failures) {
    if (!f.status.ok() && f.task == failed) return std::move(f.status);
  }
  return Status::Internal("parallel task " + std::to_string(failed) +
                          " failed without an error");
}

}  // namespace rankwatch::trec
