// SnapshotCache: the pipeline's read model (PipelineSnapshot), computed once
// per state version (Pipeline::state_version()) and shared by every reader
// of that version: /metrics, /api/v1/summary and the demo's terminal. With
// three clients scraping at once, one of them computes the agreement and
// the movers and the others wait for its result, not for the pipeline's
// lock (issue 41).
//
// A read takes two steps, as the snapshot does (snapshot.h):
//   Begin()   with the pipeline's lock held: the ticket of the pipeline's
//             current version. The cached read model when it is of that
//             version; the promise of another reader computing it; or,
//             for the first reader of a version, the copy of the
//             pipeline's counts (CopySnapshot) that it will complete.
//   Finish()  without the lock: the read model of the ticket's version,
//             completed here (CompleteSnapshot) by the first reader, or
//             waited for by the others.
// The newest read model completed stays cached until a newer one replaces
// it.
//
// Ownership: read models are shared (std::shared_ptr) and stay valid for
// as long as a reader holds one, after the cache has moved on. Thread-safety:
// Begin() and Finish() may be called by any number of threads at once; the
// cache's own mutex is never held while a snapshot is copied or computed.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_CACHE_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_CACHE_H_

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>

#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::stream {

class SnapshotCache {
 public:
  using Snapshot = std::shared_ptr<const PipelineSnapshot>;

  // What Begin() found; passed to Finish().
  class Ticket {
   public:
    Ticket() = default;
    uint64_t version() const { return version_; }

   private:
    friend class SnapshotCache;
    uint64_t version_ = 0;
    Snapshot ready_;                          // Cached already.
    std::shared_future<Snapshot> pending_;    // Another reader computes it.
    std::unique_ptr<PipelineSnapshot> copy_;  // This reader computes it...
    std::shared_ptr<std::promise<Snapshot>> promise_;  // ...and fulfils this.
  };

  // Step 1, with the lock that serializes `pipeline`'s access held (after
  // Pipeline::RefreshLook(), when the caller wants the latest look).
  Ticket Begin(const Pipeline& pipeline);
  // Step 2, without that lock: the read model of the ticket's version.
  Snapshot Finish(Ticket ticket);

  // Read models completed so far (CompleteSnapshot calls): for tests.
  int64_t computations() const { return computations_.load(); }

 private:
  std::mutex mu_;  // Guards the members below it.
  uint64_t latest_version_ = 0;
  Snapshot latest_;
  uint64_t pending_version_ = 0;  // 0: none.
  std::shared_future<Snapshot> pending_;
  std::atomic<int64_t> computations_{0};
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_SNAPSHOT_CACHE_H_
