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
#include <vector>

#include "metrics/measures.h"
#include "trec/qrels.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"
#include "trec/trec_measures.h"

namespace rankwatch::trec {

// The docnos of one ranked list, to find a docno listed twice: a table of
// their 64-bit hashes, small enough to stay in L1 for 1,000 docs. A hash met
// twice still has to be confirmed by comparing docnos, since distinct docnos
// may (very rarely) share one. Value type; not thread-safe.
class DocnoSet {
 public:
  // Empties the set and sizes it for `n` docnos.
  void Clear(size_t n);

  // False if `hash` was inserted before.
  bool Insert(uint64_t hash) {
    const uint64_t key = hash | 1;  // 0 marks an empty slot.
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == 0) {
        slots_[i] = key;
        return true;
      }
      if (slots_[i] == key) return false;
    }
  }

 private:
  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
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
// JoinGrades() and Score(). Every buffer is reused, so scoring allocates
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

  const Qrels& qrels_;
  ScorerConfig config_;
  const bool needs_ranking_;  // Whether a column reads a JudgedRanking.
  std::vector<RunEntry> entries_;
  std::vector<metrics::Grade> ranked_;
  metrics::ListScores scores_;
  JudgedRankingBuilder ranking_;
  DocnoSet seen_;
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_QUERY_SCORER_H_
