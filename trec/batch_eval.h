// Batch evaluation of a TREC run against TREC qrels: the engine behind
// `rankwatch eval`, a drop-in for trec_eval's common measures.
//
// EvaluateFiles() loads both files, scores every query on all cores and
// returns an EvalReport. A regular run file is streamed in one pass, each
// query scored as soon as its lines have been read (streaming_eval.h);
// standard input, and any input with an error (for the exact message), go
// through a mapped, indexed reading (mapped_eval.h). Both score through
// QueryScorer (query_scorer.h) on the threads of RunParallel (parallel.h).
// The report owns the qrels and the per-query scores;
// WriteTrecText() prints it byte-for-byte as trec_eval 10.0 does
// (`%-22s\t%s\t%6.4f` rows, qid strcmp order, trec_eval's measure order),
// WriteJson() as one JSON object at full precision.
#ifndef RANKWATCH_TREC_BATCH_EVAL_H_
#define RANKWATCH_TREC_BATCH_EVAL_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/measures.h"
#include "trec/qrels.h"

namespace rankwatch::trec {

// trec_eval measure families, in trec_eval's output order (`judged`, a
// rankwatch addition, comes last like trec_eval's `unj`).
enum class TrecMeasure {
  kNumQ,
  kNumRet,
  kNumRel,
  kNumRelRet,
  kMap,
  kRprec,
  kRecipRank,
  kP,
  kRecall,
  kNdcg,
  kNdcgCut,
  kMapCut,
  kSuccess,
  kJudged,
};

// The measures requested with trec_eval's `-m NAME[.k1,k2,...]` syntax.
class MeasureSelection {
 public:
  struct Item {
    TrecMeasure measure;
    bool uncut = false;            // recip_rank without a cutoff.
    std::vector<int32_t> cutoffs;  // Ascending, unique.
  };

  // An empty `specs` selects the default set (num_q, num_ret, num_rel,
  // num_rel_ret, map, Rprec, recip_rank, P at trec_eval's default cutoffs).
  // Repeating a measure adds its cutoffs. Errors name the offending spec.
  static StatusOr<MeasureSelection> Parse(std::span<const std::string> specs);

  const std::vector<Item>& items() const { return items_; }
  // Every cutoff any item needs, ascending and unique.
  std::vector<int32_t> AllCutoffs() const;

 private:
  std::vector<Item> items_;  // In TrecMeasure order.
};

struct EvalOptions {
  MeasureSelection measures;
  metrics::Definitions definitions;
  bool per_query = false;  // -q
  bool complete = false;   // -c: every qrels query counts; missing ones = 0.
  int64_t max_docs_per_query = std::numeric_limits<int64_t>::max();  // -M
  int threads = 0;  // 0: one per hardware thread.
  // Bytes read at a time from a regular run file. Tests make it tiny to
  // exercise chunk boundaries.
  size_t run_chunk_bytes = 1 << 20;
};

struct QueryResult {
  std::string_view qid;
  metrics::ListScores scores;
};

// The outcome of an evaluation. Move-only; owns the qrels it points into.
class EvalReport {
 public:
  const EvalOptions& options() const { return options_; }
  // Evaluated queries in qid strcmp order.
  const std::vector<QueryResult>& queries() const { return queries_; }
  const std::vector<int32_t>& cutoffs() const { return cutoffs_; }
  // Summary num_rel under -c: trec_eval counts every qrels entry with a
  // grade > 0 here, ignoring -l.
  int64_t complete_num_rel() const { return complete_num_rel_; }

 private:
  friend StatusOr<EvalReport> EvaluateFiles(const std::string&,
                                            const std::string&,
                                            const EvalOptions&);
  EvalOptions options_;
  std::unique_ptr<Qrels> qrels_;
  std::vector<QueryResult> queries_;
  std::vector<int32_t> cutoffs_;
  int64_t complete_num_rel_ = 0;
};

// Errors name the file and line (malformed line, duplicate docno, bad score
// or grade), or say that no query can be evaluated.
StatusOr<EvalReport> EvaluateFiles(const std::string& qrels_path,
                                   const std::string& run_path,
                                   const EvalOptions& options);

// Appends trec_eval's text output (per-query blocks with -q, then `all`).
void WriteTrecText(const EvalReport& report, std::string* out);
// Appends {"definitions": {...}, "queries": {qid: {measure: value}} (with
// -q), "all": {measure: value}} with values at full double precision.
void WriteJson(const EvalReport& report, std::string* out);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_BATCH_EVAL_H_
