#include "daemon/stream/pipeline/snapshot_cache.h"

#include <utility>

namespace rankwatch::stream {

SnapshotCache::Ticket SnapshotCache::Begin(const Pipeline& pipeline) {
  Ticket ticket;
  ticket.version_ = pipeline.state_version();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (latest_ != nullptr && latest_version_ == ticket.version_) {
      ticket.ready_ = latest_;
      return ticket;
    }
    if (pending_version_ == ticket.version_) {
      ticket.pending_ = pending_;
      return ticket;
    }
    ticket.promise_ = std::make_shared<std::promise<Snapshot>>();
    pending_ = ticket.promise_->get_future().share();
    pending_version_ = ticket.version_;
  }
  // The copy, outside the cache's mutex (the caller holds the pipeline's).
  ticket.copy_ = std::make_unique<PipelineSnapshot>();
  CopySnapshot(pipeline, ticket.copy_.get());
  return ticket;
}

SnapshotCache::Snapshot SnapshotCache::Finish(Ticket ticket) {
  if (ticket.ready_ != nullptr) return std::move(ticket.ready_);
  if (ticket.copy_ == nullptr) return ticket.pending_.get();
  CompleteSnapshot(ticket.copy_.get());
  ++computations_;
  Snapshot done = std::move(ticket.copy_);
  ticket.promise_->set_value(done);
  std::lock_guard<std::mutex> lock(mu_);
  // A reader of a newer version may have finished first: keep the newer.
  if (latest_ == nullptr || ticket.version_ >= latest_version_) {
    latest_ = done;
    latest_version_ = ticket.version_;
  }
  if (pending_version_ == ticket.version_) {
    pending_version_ = 0;
    pending_ = {};
  }
  return done;
}

}  // namespace rankwatch::stream
