// The one thread fan-out of the TREC reader and evaluator: runs N indexed
// tasks on up to K threads, the calling thread among them.
//
// Tasks start in index order (a shared counter hands them out), which gives
// two guarantees that do not depend on scheduling:
//  * a task that stores its result at its own index yields results in task
//    order, and
//  * when tasks can fail, every task below a failed one has run, so the
//    lowest failed index is the one a sequential loop would stop at.
//
// Stateless functions; `task` is called concurrently from several threads,
// each call with the `worker` number of its thread (unique among the threads
// running at once), so per-thread state indexed by `worker` needs no lock.
#ifndef RANKWATCH_TREC_PARALLEL_H_
#define RANKWATCH_TREC_PARALLEL_H_

#include <cstddef>
#include <functional>
#include <utility>

#include "base/status.h"

namespace rankwatch::trec {

// How many threads RunParallel uses for `tasks` tasks and at most `threads`
// threads: min(tasks, threads), at least 1. Workers are numbered
// [0, ParallelWorkers(tasks, threads)).
size_t ParallelWorkers(size_t tasks, int threads);

// How many tasks to cut `items` items into for `threads` threads: a few per
// thread, so that uneven items still keep every thread busy, and 1 for a
// single thread (0 for no items).
size_t TaskCount(size_t items, int threads);

// The items [first, second) of task `task` of `tasks`: contiguous, in order,
// sizes differing by at most one.
std::pair<size_t, size_t> TaskRange(size_t items, size_t tasks, size_t task);

// Runs task(i, worker) for i in [0, tasks). A task returning false stops the
// start of further tasks (running ones finish). Returns the lowest index of
// a failed task, or `tasks` if none failed.
size_t RunParallel(size_t tasks, int threads,
                   const std::function<bool(size_t task, size_t worker)>& task);

// As RunParallel, for tasks that return a Status: returns the error of the
// lowest-indexed failed task (what a sequential loop would return), or OK.
Status RunParallelUntilError(
    size_t tasks, int threads,
    const std::function<Status(size_t task, size_t worker)>& task);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_PARALLEL_H_
