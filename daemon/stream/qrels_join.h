// QrelsJoin: judgments (human or LLM labels) form a table keyed by
// (query_id, doc_id) that every served list of the query is scored against.
//
// The judgments stream updates the table (a later grade replaces an earlier
// one, a null relevance deletes), optionally after a preload from a TREC
// qrels file. A results event is scored when it arrives, or once the
// watermark passes its time + join.qrels_delay so that labels produced with
// it land first. A query with no judgments is counted as unjudged and not
// scored. Duplicate results events (same request_id among the recent ones)
// are counted and ignored.
//
// Not thread-safe; owned and driven by the pipeline.
#ifndef RANKWATCH_DAEMON_STREAM_QRELS_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_QRELS_JOIN_H_

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/stream/clock.h"
#include "daemon/stream/join.h"
#include "daemon/stream/pending_store.h"
#include "daemon/stream/watermark.h"
#include "metrics/status.h"
#include "metrics/string_index.h"
#include "metrics/trec/qrels.h"

namespace rankwatch::stream {

// The request ids of the last `capacity` results events, as 64-bit hashes
// (a false duplicate needs a 2^-64 collision), in a flat set with FIFO
// eviction. Not thread-safe.
class RecentIds {
 public:
  explicit RecentIds(size_t capacity);
  // Returns false when `hash` is already among the recent ids.
  bool Insert(uint64_t hash);

 private:
  bool Contains(uint64_t hash) const;
  void Erase(uint64_t hash);

  std::vector<uint64_t> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
  std::vector<uint64_t> set_;  // 0 = empty; hashes are made non-zero.
  size_t mask_;
};

class QrelsJoin final : public Join {
 public:
  // `clock` and `listener` must outlive the join.
  QrelsJoin(const config::JoinConfig& config, const Clock* clock,
            JoinListener* listener);
  // table_index_ holds views into tables_: not copyable.
  QrelsJoin(const QrelsJoin&) = delete;
  QrelsJoin& operator=(const QrelsJoin&) = delete;

  // Adds every judgment of a TREC qrels file to the table.
  [[nodiscard]] Status Preload(const trec::Qrels& qrels);

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
    return static_cast<int64_t>(delayed_.size());
  }
  int64_t table_entries() const override { return entries_; }
  int64_t watermark_ms() const override { return watermark_.value(); }

 private:
  struct QueryTable {
    std::string query_id;
    std::vector<std::pair<std::string, metrics::Grade>> docs;  // Sorted.
  };

  QueryTable* FindTable(std::string_view query_id);
  QueryTable* FindOrCreateTable(std::string_view query_id);
  // Sets (grade) or deletes (nullopt) one label. Returns false when the
  // table is full.
  bool Update(std::string_view query_id, std::string_view doc_id,
              std::optional<metrics::Grade> grade);
  void Score(std::string_view request_id, std::string_view query_id,
             uint32_t group, int64_t served_ms,
             std::span<const std::string_view> docs, FinalizeCause cause);
  void ProcessDue(FinalizeCause cause);
  void ScoreDelayed(PendingRequest* request, FinalizeCause cause);

  config::JoinConfig config_;
  int64_t delay_ms_;
  Watermark watermark_;
  JoinListener* listener_;
  JoinCounters counters_;
  std::deque<QueryTable> tables_;  // Stable addresses for the index keys.
  StringIndex table_index_;
  int64_t entries_ = 0;
  PendingStore delayed_;
  RecentIds recent_;
  uint64_t next_synthetic_key_ = 0;
  std::string key_scratch_;
  std::vector<std::string_view> docs_scratch_;
  std::vector<metrics::Grade> ranked_;
  std::vector<metrics::Grade> judged_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_QRELS_JOIN_H_
