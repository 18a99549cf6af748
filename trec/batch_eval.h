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
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/measures.h"
#include "trec/qrels.h"
#include "trec/query_scorer.h"
#include "trec/trec_measures.h"

namespace rankwatch::trec {

struct EvalOptions {
  MeasureSelection measures;
  metrics::Definitions definitions;
  bool per_query = false;    // -q
  bool summary = true;       // Without -n: print the `all` block.
  bool complete = false;     // -c: every qrels query counts; missing ones = 0.
  bool judged_only = false;  // -J: unjudged docs are dropped before scoring.
  int64_t num_docs_in_collection = 0;  // -N: for utility.
  int64_t max_docs_per_query = std::numeric_limits<int64_t>::max();  // -M
  int threads = 0;  // 0: one per hardware thread.
  // Bytes read at a time from a regular run file. Tests make it tiny to
  // exercise chunk boundaries.
  size_t run_chunk_bytes = 1 << 20;
};

// One evaluated query: its value in each column of the report (NaN where a
// rankwatch measure is undefined for it), and its relstring.
struct QueryResult {
  std::string_view qid;
  std::vector<double> values;  // Parallel to EvalReport::columns().
  std::string text;
};

// The outcome of an evaluation: a table of queries x columns. Move-only;
// owns the qrels it points into.
class EvalReport {
 public:
  const EvalOptions& options() const { return options_; }
  // The printed measures, in trec_eval's order.
  const std::vector<ReportColumn>& columns() const { return columns_; }
  // Evaluated queries in qid strcmp order.
  const std::vector<QueryResult>& queries() const { return queries_; }
  // The run id of the run file's last line.
  std::string_view run_id() const { return run_id_; }
  // Summary num_rel under -c: trec_eval counts every qrels entry with a
  // grade > 0 here, ignoring -l.
  int64_t complete_num_rel() const { return complete_num_rel_; }

 private:
  friend StatusOr<EvalReport> EvaluateFiles(const std::string&,
                                            const std::string&,
                                            const EvalOptions&);
  EvalOptions options_;
  std::unique_ptr<Qrels> qrels_;
  std::vector<ReportColumn> columns_;
  std::vector<QueryResult> queries_;
  std::string run_id_;
  int64_t complete_num_rel_ = 0;
};

// The number of threads `threads` (EvalOptions::threads) asks for: itself,
// or one per hardware thread for 0.
int ResolveThreads(int threads);

// The scoring configuration of an evaluation with `options`: the engine at
// the selection's cutoffs under its definitions, and the printed columns.
// Errors: a definition the engine refuses, -M below 1.
StatusOr<ScorerConfig> MakeScorerConfig(const EvalOptions& options);

// Errors name the file and line (malformed line, duplicate docno, bad score
// or grade), or say that no query can be evaluated.
StatusOr<EvalReport> EvaluateFiles(const std::string& qrels_path,
                                   const std::string& run_path,
                                   const EvalOptions& options);

// Under --zero-relevant skip, drops from `queries` those whose qrels (in
// `qrels`) have no relevant doc; under score_zero, leaves them.
void ApplyZeroRelevant(const Qrels& qrels,
                       const metrics::Definitions& definitions,
                       std::vector<QueryResult>* queries);

// The summary of one column's per-query `values` (in qid order) by `kind`:
// their mean, sum, geometric mean (the values are logs), count, or mean of
// the defined ones; 0 for the text columns.
double Summarize(SummaryKind kind, std::span<const double> values);

// The `all` row: one value per column (means, sums, geometric means, num_q;
// 0 for the text columns), summed in qid order as trec_eval sums.
std::vector<double> SummaryValues(const EvalReport& report);
// The same for `queries` scored in `columns`. With `complete_num_rel` (-c),
// the summary num_rel is it: trec_eval then counts every qrels entry with a
// grade > 0, ignoring -l.
std::vector<double> SummaryValues(std::span<const ReportColumn> columns,
                                  std::span<const QueryResult> queries,
                                  std::optional<int64_t> complete_num_rel);

// Appends trec_eval's text output (per-query blocks with -q, then `all`
// unless -n). The -q rows are formatted on `threads` threads (0: the
// report's --threads), the same bytes whatever the count.
void WriteTrecText(const EvalReport& report, std::string* out, int threads = 0);
// Appends {"definitions": {...}, "queries": {qid: {measure: value}} (with
// -q), "all": {measure: value}} with values at full double precision
// (undefined values as null, relstring and runid as strings).
void WriteJson(const EvalReport& report, std::string* out);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_BATCH_EVAL_H_
