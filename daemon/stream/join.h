// The join: where results events meet their judgments. Two modes share this
// interface (ImpressionJoin, QrelsJoin); both hand every scored list to a
// JoinListener and report, through the same listener, when an event they
// retained is no longer needed (so the daemon can commit past it).
//
// A join is driven by one thread; it is not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "daemon/stream/events.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

// Counters of what happened to events in the join.
struct JoinCounters {
  int64_t finalized = 0;             // Lists scored (incl. R = 0 ones).
  int64_t late_judgments = 0;        // Judgments after their window closed.
  int64_t late_results = 0;          // Results events after their window.
  int64_t duplicate_results = 0;     // A second results event per request.
  int64_t evicted = 0;               // Finalized early: state limit reached.
  int64_t orphaned_judgments = 0;    // Judgments whose results never came.
  int64_t unjudged = 0;              // qrels: query without judgments.
  int64_t dropped_on_rebalance = 0;  // Pending requests of revoked partitions.
  int64_t table_full = 0;            // qrels: judgments refused, table full.
  int64_t replayed = 0;  // Re-read events already reflected: skipped.
};

// Why a request was finalized.
enum class FinalizeCause {
  kWindowClosed,  // The watermark passed its window (or qrels delay).
  kIdle,          // The stream went idle; wall time closed the window.
  kEvicted,       // The pending-request limit was reached.
  kEndOfInput,    // Replay reached the end, or FinishAll().
};

// A served list ready to score. Spans are valid during the callback only.
struct FinalizedRequest {
  std::string_view request_id;
  uint32_t group = 0;
  int64_t served_ms = 0;
  // Event time the aggregates file it under: when its window closed
  // (served + window; served + delay in qrels mode). It depends only on the
  // events, not on processing order, so replay and the daemon agree.
  int64_t closed_ms = 0;
  FinalizeCause cause = FinalizeCause::kWindowClosed;
  std::span<const metrics::Grade> ranked;  // Grade per rank, rank 1 first.
  std::span<const metrics::Grade> judged;  // Grades of all judged docs.
};

class JoinListener {
 public:
  virtual ~JoinListener() = default;
  virtual void OnFinalized(const FinalizedRequest& request) = 0;
  // An event the join retained (see Join::OnResults) is no longer needed.
  virtual void OnReleased(EventOrigin origin) = 0;
};

class Join {
 public:
  virtual ~Join() = default;

  // Feeds one decoded event. `group` is the served list's label group.
  // Returns true when the join keeps state that depends on the event (it
  // then calls OnReleased(origin) once that state is gone), false when the
  // event is fully processed (used, counted as late, duplicate...).
  virtual bool OnResults(const ResultsEvent& event, uint32_t group,
                         EventOrigin origin) = 0;
  virtual bool OnJudgments(const JudgmentEvent& event, EventOrigin origin) = 0;

  // Lets wall time close windows when the stream is idle. Call regularly.
  virtual void AdvanceWallClock() = 0;
  // Finalizes everything pending (end of a replay).
  virtual void FinishAll() = 0;
  // Forgets the pending state fed from `partitions`, without scoring it and
  // without OnReleased (another consumer re-reads those events).
  virtual void DropPartitions(std::span<const int32_t> partitions) = 0;
  // Raises the watermark to `watermark_ms` (restored from a previous owner's
  // commit), so that what it finalized is recognized when re-read.
  virtual void RestoreWatermark(int64_t watermark_ms) = 0;
  // Event sources (EventOrigin::partition, e.g. Kafka topic-partitions):
  // an added source holds event time back until it delivers events or is
  // reported idle (caught up with its end). See Watermark.
  virtual void AddSource(int32_t source) = 0;
  virtual void SetSourceIdle(int32_t source, bool idle) = 0;

  virtual const JoinCounters& counters() const = 0;
  virtual int64_t pending_requests() const = 0;
  virtual int64_t table_entries() const = 0;
  // Event time up to which windows are closed (INT64_MIN before any event).
  virtual int64_t watermark_ms() const = 0;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_H_
