// ImpressionJoin: results and judgments (clicks, purchases, ...) meet on
// request_id within an event-time window after the results event.
//
// A request is pending from its first event until the watermark passes its
// deadline (results time + window); judgments that arrive before their
// results wait for them as long. It is then finalized: scored once, handed
// to the listener and freed. Judgments for a request that is no longer
// pending, or outside its window, are late: counted and dropped. When the
// number of pending requests reaches join.max_pending_requests, the one
// with the earliest deadline is finalized early (evicted).
//
// Not thread-safe; owned and driven by the pipeline.
#ifndef RANKWATCH_DAEMON_STREAM_IMPRESSION_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_IMPRESSION_JOIN_H_

#include <vector>

#include "config/config.h"
#include "daemon/stream/clock.h"
#include "daemon/stream/join.h"
#include "daemon/stream/pending_store.h"
#include "daemon/stream/watermark.h"

namespace rankwatch::stream {

class ImpressionJoin final : public Join {
 public:
  // `clock` and `listener` must outlive the join.
  ImpressionJoin(const config::JoinConfig& config, const Clock* clock,
                 JoinListener* listener);

  bool OnResults(const ResultsEvent& event, uint32_t group,
                 EventOrigin origin) override;
  bool OnJudgments(const JudgmentEvent& event, EventOrigin origin) override;
  void AdvanceWallClock() override;
  void FinishAll() override;
  void DropPartitions(std::span<const int32_t> partitions) override;
  void RestoreWatermark(int64_t watermark_ms) override {
    watermark_.Restore(watermark_ms);
  }
  void AddSource(int32_t source) override { watermark_.AddSource(source); }
  void SetSourceIdle(int32_t source, bool idle) override {
    watermark_.SetIdle(source, idle);
    ProcessDue(FinalizeCause::kWindowClosed);
  }

  const JoinCounters& counters() const override { return counters_; }
  int64_t pending_requests() const override {
    return static_cast<int64_t>(store_.size());
  }
  int64_t table_entries() const override { return 0; }
  int64_t watermark_ms() const override { return watermark_.value(); }

 private:
  void ApplyJudgments(PendingRequest* request, const JudgmentEvent& event);
  void MakeRoom();
  void ProcessDue(FinalizeCause cause);
  void Finalize(PendingRequest* request, FinalizeCause cause);

  config::JoinConfig config_;
  int64_t window_ms_;
  Watermark watermark_;
  JoinListener* listener_;
  PendingStore store_;
  JoinCounters counters_;
  std::vector<metrics::Grade> ranked_;  // Scratch for Finalize().
  std::vector<metrics::Grade> judged_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_IMPRESSION_JOIN_H_
