// The one scoring path of `rankwatch eval`, shared by the streamed and the
// mapped reading of a run: one query's run entries are joined with its
// judgments (a docno listed twice is found on the way), put in trec_eval's
// ranking order and scored.
#ifndef RANKWATCH_TREC_QUERY_SCORER_H_
#define RANKWATCH_TREC_QUERY_SCORER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/string_index.h"
#include "metrics/measures.h"
#include "trec/qrels.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"
#include "trec/trec_measures.h"

namespace rankwatch::trec {

// The docnos of one ranked list, to find a docno listed twice: a table of
// 32-bit keys taken from their hashes, at most a quarter full, so that for
// 1,000 docs it stays in L1 (16 KiB) and an insert nearly always lands on
// its first probe (the join, this set and the qrels lookup, was a quarter
// of eval's time in a profile). A key met twice still has to be confirmed
// by comparing docnos, since distinct docnos may (rarely: about 1 in 4,000
// lists of 1,000) share one.
// Value type; not thread-safe.
class DocnoSet {
 public:
  // Empties the set and sizes it for `n` docnos; more make it grow.
  void Clear(size_t n);

  // False if a hash with the same key (its high 32 bits) was inserted
  // before.
  bool Insert(uint64_t hash) {
    if (4 * (size_ + 1) > slots_.size()) Grow();
    const uint32_t key = static_cast<uint32_t>(hash >> 32) | 1;  // 0: empty.
    return Place(key);
  }

 private:
  // The slot index comes from the key, so that Grow can move keys alone.
  bool Place(uint32_t key) {
    for (size_t i = (key >> 1) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == 0) {
        slots_[i] = key;
        ++size_;
        return true;
      }
      if (slots_[i] == key) return false;
    }
  }
  void Grow();

  std::vector<uint32_t> slots_;
  std::vector<uint32_t> old_;  // Grow's scratch, reused.
  size_t mask_ = 0;
  size_t size_ = 0;
};

// What every QueryScorer of one evaluation starts from (each copies it).
struct ScorerConfig {
  metrics::Evaluator evaluator;  // The engine, at the engine's cutoffs.
  MeasureTable table;            // The printed columns.
  int64_t max_docs = 0;          // -M: only the top max_docs count.
  bool judged_only = false;      // -J: unjudged docs are dropped first.
};

// One query's printed values: one per MeasureTable column, and the
// relstring when selected.
struct QueryRow {
  std::vector<double> values;
  std::string text;
};

// Scores one query at a time: the caller fills entries() with the query's
// run lines (AddEntry, or ParseRunQuery into entries()), then calls
// JoinGrades() and Score(); or, streaming, BeginJoined(), AddJoinedEntry()
// for each line and Score(). Every buffer is reused, so scoring allocates
// nothing once warmed up.
//
// One per thread: not thread-safe. Borrows `qrels`, which must outlive it;
// keeps its own copy of the configuration.
class QueryScorer {
 public:
  QueryScorer(const Qrels& qrels, const ScorerConfig& config);

  // The run entries of the query being scored.
  std::vector<RunEntry>* entries() { return &entries_; }
  void Clear() { entries_.clear(); }

  // Appends the entry of one run line (grade unjudged, line 0). False, and
  // nothing appended, if its score is not a finite number.
  bool AddEntry(const RunLineFields& f) {
    double score;
    if (!ParseScore(f.score, &score)) return false;
    entries_.push_back(RunEntry{score, f.docno.data(),
                                static_cast<uint32_t>(f.docno.size()),
                                metrics::kUnjudged, 0});
    return true;
  }

  // The streamed alternative to AddEntry and JoinGrades: starts a query
  // whose run lines come one at a time through AddJoinedEntry, joined with
  // the judgments of `q` (null for a query the qrels lack) as they come,
  // while the line is still in L1.
  void BeginJoined(const QueryQrels* q) {
    seen_.Clear(entries_.size());  // Sized like the last query.
    entries_.clear();
    joined_ = q;
  }
  // AddEntry with the entry's grade set. False, and nothing appended, if
  // the score is not a finite number or the docno was listed before in this
  // query (JoinGrades then tells which).
  bool AddJoinedEntry(const RunLineFields& f) {
    double score;
    if (!(f.score_padded ? ParsePaddedScore(f.score, &score)
                         : ParseScore(f.score, &score))) {
      return false;
    }
    const uint64_t h = HashBytes(f.docno);
    if (!seen_.Insert(h) && IsListed(f.docno)) return false;
    entries_.push_back(
        RunEntry{score, f.docno.data(), static_cast<uint32_t>(f.docno.size()),
                 joined_ == nullptr ? metrics::kUnjudged
                                    : qrels_.Lookup(*joined_, f.docno, h),
                 0});
    return true;
  }

  // Two entries with one docno: `again` is the first entry whose docno was
  // listed before, `first` the entry that listed it first.
  struct Duplicate {
    size_t first;
    size_t again;
  };

  // Sets each entry's grade from the judgments of `q` (null for a query the
  // qrels do not have: grades stay as they are). Returns the first docno
  // listed twice, if any; grades are then only partly set.
  std::optional<Duplicate> JoinGrades(const QueryQrels* q);

  // Puts the entries in trec_eval's ranking order (a run usually is in it
  // already) and scores the first `max_docs` (then, with -J, only the
  // judged ones) against the judgments of `q`.
  void Score(const QueryQrels& q, QueryRow* out);
  // Scores `q` as trec_eval scores a qrels query the run lacks (-c).
  void ScoreMissing(const QueryQrels& q, QueryRow* out);

 private:
  // The first entry before `i` with the docno of entries_[i], if any.
  std::optional<size_t> ListedBefore(size_t i) const;
  // Whether an entry has `docno`.
  bool IsListed(std::string_view docno) const;

  const Qrels& qrels_;
  ScorerConfig config_;
  const bool needs_ranking_;  // Whether a column reads a JudgedRanking.
  std::vector<RunEntry> entries_;
  std::vector<metrics::Grade> ranked_;
  metrics::ListScores scores_;
  JudgedRankingBuilder ranking_;
  DocnoSet seen_;
  const QueryQrels* joined_ = nullptr;  // BeginJoined's query.
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_QUERY_SCORER_H_
