// A run held in memory rather than in a file, and its evaluation: the
// Python package's dicts and DataFrames (python/) are scored here, through
// the same QueryScorer (query_scorer.h), measures and parallel fan-out as
// the files of `rankwatch eval` (batch_eval.h), so both give the same
// numbers.
//
// Ownership: a MemoryRun owns copies of every qid and docno added to it.
// EvaluateMemory's results point into the Qrels (their qids), which must
// outlive them. Thread-safety: a MemoryRun is filled by one thread, then
// read by several (EvaluateMemory); nothing else is shared.
#ifndef RANKWATCH_TREC_MEMORY_EVAL_H_
#define RANKWATCH_TREC_MEMORY_EVAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "trec/batch_eval.h"
#include "trec/qrels.h"
#include "trec/query_scorer.h"

namespace rankwatch::trec {

// Per query, its docs and their scores, in the order added (the ranking
// order comes from the scores, as trec_eval's does).
class MemoryRun {
 public:
  // The index of query `qid`, which is added if new. Rows of one query may
  // come in any order, mixed with other queries' rows.
  size_t Query(std::string_view qid);
  // Adds `docno` with `score` to query `query` (an index from Query()).
  // False, and nothing added, when the score is not a finite number.
  bool Add(size_t query, std::string_view docno, double score);
  // Reserves room for `docs` more docs of query `query`.
  void Reserve(size_t query, size_t docs) {
    queries_[query].docs.reserve(queries_[query].docs.size() + docs);
  }

  size_t size() const { return queries_.size(); }
  std::string_view qid(size_t query) const { return queries_[query].qid; }

 private:
  friend Status EvaluateMemory(const Qrels&, const MemoryRun&,
                               const ScorerConfig&, bool, int,
                               std::vector<QueryResult>*);
  struct Doc {
    uint64_t offset;  // Into docnos_.
    uint32_t length;
    double score;
  };
  struct RunQueryDocs {
    std::string qid;
    std::vector<Doc> docs;
  };
  std::string docnos_;  // Every docno's bytes, one after the other.
  std::vector<RunQueryDocs> queries_;
  std::unordered_map<std::string, size_t> index_;  // qid -> queries_ index.
  size_t last_ = 0;  // The query of the last Query(): rows come grouped.
};

// Scores every query of `run` that `qrels` judges (with `complete`, also
// every qrels query the run lacks, as trec_eval -c does) with `config` on
// up to `threads` threads (0: one per hardware thread) into `results`, in
// qid strcmp order; run queries the qrels lack are left out, as trec_eval
// leaves them. No query in common gives no results, not an error. The
// error: a query that lists one docno twice (named, with the query).
Status EvaluateMemory(const Qrels& qrels, const MemoryRun& run,
                      const ScorerConfig& config, bool complete, int threads,
                      std::vector<QueryResult>* results);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_MEMORY_EVAL_H_
