// QrelsJoin: judgments (human or LLM labels) form a table keyed by
// (query_id, doc_id) that every served list of the query is scored against.
//
// The judgments stream updates the table, optionally after a preload from
// a TREC qrels file (older than any event). Per (query, doc) the label with
// the latest event time wins, whatever the arrival order: a null relevance
// withdraws (it is kept as a dated tombstone, so an older label read later
// does not come back), and at equal times a withdrawal beats a grade and a
// higher grade a lower one. So the table, once every label is read, is the
// same in any order. A results event is scored when it arrives, or once the
// watermark passes its time + join.qrels_delay so that labels produced with
// it land first: against the table as read so far, which holds every label
// stamped up to then that is on time, and may or may not hold later ones
// (the documented exception to order independence). A query with no
// judgments is counted as unjudged and not scored. Duplicate results events
// (same request_id among the recent ones) are counted and ignored: the
// first read wins.
//
// Not thread-safe; owned and driven by the pipeline.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_QRELS_JOIN_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_QRELS_JOIN_H_

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/string_index.h"
#include "config/config.h"
#include "daemon/stream/join/join.h"
#include "daemon/stream/join/pending_store.h"
#include "daemon/stream/join/watermark.h"
#include "metrics/agreement.h"
#include "trec/qrels.h"

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

class QrelsJoin final : public WatermarkedJoin {
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
  void FinishAll() override;
  void SetLimits(const config::JoinConfig& limits) override {
    config_.max_pending_requests = limits.max_pending_requests;
    config_.max_judgments_per_request = limits.max_judgments_per_request;
    config_.max_table_entries = limits.max_table_entries;
  }
  void DropPartitions(std::span<const int32_t> partitions) override;
  int64_t pending_requests() const override {
    return static_cast<int64_t>(delayed_.size());
  }
  int64_t table_entries() const override { return entries_; }
  // With judges: per pair of judges (PairIndex), the (query, doc) pairs of
  // the table as it stands: graded by both (their live labels), or by one.
  const std::vector<metrics::JudgePairCounts>& judge_pairs() const {
    return judge_pairs_;
  }
  void SetJudges(const config::JudgesConfig& judges) override;

 private:
  struct Label {
    std::string doc_id;
    int64_t time_ms;  // INT64_MIN for a preloaded label.
    metrics::Grade grade;
    bool withdrawn;  // A tombstone: counts in no score.
    int8_t judge;    // Its place in judges.names; -1 without judges.
  };
  struct QueryTable {
    std::string query_id;
    std::vector<Label> docs;  // Sorted by doc_id, then judge.
    int64_t live = 0;         // Labels not withdrawn.
  };

  QueryTable* FindTable(std::string_view query_id);
  QueryTable* FindOrCreateTable(std::string_view query_id);
  // Sets (grade) or withdraws (nullopt) one label stamped `time_ms`, unless
  // the table holds a later one. Returns false when the table is full.
  // With judges, per (doc, judge): each judge's labels are apart.
  bool Update(std::string_view query_id, std::string_view doc_id, int8_t judge,
              std::optional<metrics::Grade> grade, int64_t time_ms);
  // The grade of a doc from its labels [begin, end) (one per judge), by
  // judges.combine; records each judge's in judge_grades_ (at `rank`, or
  // -1 for a doc not served). nullopt when no label is live.
  std::optional<metrics::Grade> DocGrade(const Label* begin, const Label* end,
                                         int32_t rank);
  // Adds (sign 1) or takes back (-1) what the doc of `query`'s labels
  // `doc_id` brings to judge_pairs_.
  void TallyDoc(const QueryTable& table, std::string_view doc_id, int64_t sign);
  void Score(std::string_view request_id, std::string_view query_id,
             uint32_t group, uint64_t unit_hash, double covariate,
             const FieldValues& fields, int64_t served_ms,
             std::span<const std::string_view> docs, FinalizeCause cause,
             int32_t shard);
  void ProcessDueIn(int32_t shard, FinalizeCause cause) override;
  ShardedPendingStore& store() override { return delayed_; }
  void ScoreDelayed(PendingRequest* request, FinalizeCause cause);

  config::JoinConfig config_;
  int64_t delay_ms_;
  JoinListener* listener_;
  std::deque<QueryTable> tables_;  // Stable addresses for the index keys.
  StringIndex table_index_;
  int64_t entries_ = 0;     // Live labels.
  int64_t tombstones_ = 0;  // Withdrawn labels kept for their time.
  ShardedPendingStore delayed_;
  RecentIds recent_;
  uint64_t next_synthetic_key_ = 0;
  std::string key_scratch_;
  std::vector<std::string_view> docs_scratch_;
  std::vector<metrics::Grade> ranked_;
  std::vector<metrics::Grade> judged_;
  std::vector<metrics::JudgePairCounts> judge_pairs_;  // See judge_pairs().
  std::vector<metrics::Grade> doc_grades_;             // Scratch: per judge.
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_QRELS_JOIN_H_
