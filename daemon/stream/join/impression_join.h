// ImpressionJoin: results and judgments (clicks, purchases, ...) meet on
// request_id within an event-time window around the results event.
//
// Which judgments count is a function of the events' own fields, never of
// the order they arrive in (docs/configuration.md, "When an event counts"):
// a judgment belongs to the request served at `served` when its event time
// lies in [served - early_tolerance, served + window]; per doc, a withdrawal
// ("relevance": null) removes every judgment stamped at or before it, and
// the rest combine by `combine` (max grade, or the latest event time, the
// higher grade on ties). Two results events for one request: the earlier
// (then the smaller doc list) is the request, the other a duplicate.
//
// So judgments are held as received (JudgmentRecord) and only filtered and
// combined when the request is finalized: once the watermark passes
// served + window. A judgment read before its results waits for them on a
// pending request until the watermark passes its time + early_tolerance
// (no on-time results event can claim it after that). Only what arrives
// behind the watermark (beyond allowed_lateness), evictions at
// join.max_pending_requests, records beyond join.max_judgments_per_request
// and judgments stamped inside their request's window that arrive after
// it was finalized depend on arrival order; each is counted.
//
// With judges (SetJudges), each judge's records combine apart (a
// withdrawal withdraws its own judge's labels), and a doc's grade is the
// first judge's of judges.names that has one (precedence) or comes from
// every record as without judges (pooled); FinalizedRequest::judges has
// each judge's own grades. What counts as a click does not depend on
// judges (metrics.click_exclude_kinds does that).
//
// Not thread-safe; owned and driven by the pipeline.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_IMPRESSION_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_IMPRESSION_JOIN_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/string_index.h"
#include "config/config.h"
#include "daemon/stream/join/finalized_memory.h"
#include "daemon/stream/join/join.h"
#include "daemon/stream/join/pending_store.h"

namespace rankwatch::stream {

class ImpressionJoin final : public WatermarkedJoin {
 public:
  // `clock` and `listener` must outlive the join. A judgment is a click
  // when its grade is >= `click_threshold` (metrics.relevance_threshold)
  // and its kind is not excluded (FinalizedRequest::clicks).
  // `position_base` is schema.position_base (kPositionBaseAuto: per
  // request, 0 when one of its judgment events in the window claims
  // position 0, else 1).
  ImpressionJoin(const config::JoinConfig& config, const Clock* clock,
                 JoinListener* listener, metrics::Grade click_threshold = 1,
                 int32_t position_base = 1);

  bool OnResults(const ResultsEvent& event, uint32_t group,
                 EventOrigin origin) override;
  bool OnJudgments(const JudgmentEvent& event, EventOrigin origin) override;
  void FinishAll() override;
  void SetLimits(const config::JoinConfig& limits) override {
    config_.max_pending_requests = limits.max_pending_requests;
    config_.max_judgments_per_request = limits.max_judgments_per_request;
    config_.max_table_entries = limits.max_table_entries;
  }
  void DropPartitions(std::span<const int32_t> partitions) override;
  int64_t pending_requests() const override {
    return static_cast<int64_t>(store_.size());
  }
  int64_t table_entries() const override { return 0; }

 private:
  bool AcceptResults(const ResultsEvent& event, uint32_t group,
                     EventOrigin origin);
  bool AcceptJudgments(const JudgmentEvent& event, EventOrigin origin);
  void SetResults(PendingRequest* request, const ResultsEvent& event,
                  uint32_t group, EventOrigin origin);
  void AddRecords(PendingRequest* request, const JudgmentEvent& event,
                  EventOrigin origin);
  // Drops a request without scoring it: its records count as replayed.
  void DiscardReplayed(PendingRequest* request);
  void MakeRoom();
  void ProcessDueIn(int32_t shard, FinalizeCause cause) override;
  ShardedPendingStore& store() override { return store_; }
  void Finalize(PendingRequest* request, FinalizeCause cause);
  // Fills ranked_, judged_, clicks_ and first_click_ms_ from the request's
  // records in its window (`by_impressions`: its list was built from its
  // impressions; otherwise they are counted ignored_impressions).
  void Combine(const PendingRequest& request, bool by_impressions);
  bool InWindow(const PendingRequest& request,
                const JudgmentRecord& record) const;
  // The position of rank 1 for the request's records.
  int32_t PositionBase(const PendingRequest& request) const;
  // The list of a query record without hits: the docs of its impressions
  // in the window, in position order. Returns its length.
  size_t RankByImpressions(PendingRequest* request);
  // What a doc's records [begin, end) of in_window_ combine to (see the
  // class comment); with `clicks_only`, over those that may be clicks.
  struct DocGrade {
    bool judged = false;
    metrics::Grade grade = 0;
    int64_t first_click_ms = INT64_MAX;  // Earliest surviving click record.
  };
  // `judge`: over that judge's records only (JudgmentRecord::judge), or
  // kAnyJudge.
  static constexpr int kAnyJudge = -1;
  DocGrade CombineDoc(const PendingRequest& request, size_t begin, size_t end,
                      bool clicks_only, int judge) const;
  // With judges: the doc's grade by judges.combine, filling each judge's
  // grades of judge_grades_ on the way (`served`: the doc's rank - 1, or
  // -1).
  DocGrade CombineJudges(const PendingRequest& request, size_t begin,
                         size_t end, int32_t served, bool precedence);
  void CountUnclaimed(const JudgmentRecord& record);
  // Rank - 1 of `doc` in the request's list, or -1: a scan of a short list,
  // a hash index (doc_index_, built on the first lookup of each Combine) of
  // a long one, so that a list of n docs with m judged costs O(n + m), not
  // O(n m).
  int32_t ServedRank(const PendingRequest& request, std::string_view doc);
  void Release(PendingRequest* request);

  config::JoinConfig config_;
  int64_t window_ms_;
  int64_t early_ms_;
  JoinListener* listener_;
  metrics::Grade click_threshold_;
  int32_t position_base_;
  ShardedPendingStore store_;
  // Recently finalized requests (JoinCounters::judgments_after_finalization).
  FinalizedMemory finalized_;
  std::vector<metrics::Grade> ranked_;  // Scratch for Finalize().
  std::vector<metrics::Grade> judged_;
  std::vector<metrics::Grade> clicks_;
  bool clicks_differ_ = false;  // clicks_ is not ranked_.
  int64_t first_click_ms_ = INT64_MAX;
  std::vector<uint32_t> in_window_;  // Record indices, sorted by doc.
  StringIndex doc_index_;            // Doc id -> rank - 1 (ServedRank).
  bool doc_index_built_ = false;     // For the request being combined.
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_IMPRESSION_JOIN_H_
