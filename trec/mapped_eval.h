// The mapped reading of a run for EvaluateFiles (batch_eval.h): any input,
// standard input included, with exact error messages. The whole run is
// mapped and indexed by qid, then parsed, joined and scored query by query
// on several threads. Internal to rankwatch::trec.
#ifndef RANKWATCH_TREC_MAPPED_EVAL_H_
#define RANKWATCH_TREC_MAPPED_EVAL_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "trec/batch_eval.h"
#include "trec/qrels.h"
#include "trec/query_scorer.h"

namespace rankwatch::trec {

// The error for a qrels and a run without a query in common.
Status NoCommonQuery(const std::string& qrels_path, const std::string& run_path,
                     bool complete);

// Evaluates `run_path` against `qrels` (read from `qrels_path`) on up to
// `threads` threads into `results`, in qid strcmp order (with `complete`,
// every qrels query), and sets `run_id` to the run id of its last line.
// Errors name the file and line, and are the ones a sequential reading
// meets first.
Status EvaluateMapped(const std::string& qrels_path,
                      const std::string& run_path, const Qrels& qrels,
                      const ScorerConfig& config, bool complete, int threads,
                      std::vector<QueryResult>* results, std::string* run_id);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_MAPPED_EVAL_H_
