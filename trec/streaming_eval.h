// The streamed reading of a regular run file for EvaluateFiles
// (batch_eval.h): one pass, in chunks of whole query groups (RunChunkReader),
// each group parsed, joined and scored as soon as its lines are in memory,
// on several threads. A qid whose lines are in more than one group (a run
// not grouped by query) is scored again afterwards from all its lines.
// It does not word errors: on any malformed line, duplicate docno or read
// error it gives up, and the caller takes the mapped path (mapped_eval.h),
// which names the line. Internal to rankwatch::trec.
#ifndef RANKWATCH_TREC_STREAMING_EVAL_H_
#define RANKWATCH_TREC_STREAMING_EVAL_H_

#include <string>
#include <vector>

#include "trec/batch_eval.h"
#include "trec/qrels.h"
#include "trec/query_scorer.h"
#include "trec/run_file.h"

namespace rankwatch::trec {

// Evaluates the run `reader` streams against `qrels` on up to `threads`
// threads into `results`, in qid strcmp order (empty if no query is in
// common; with `complete`, every qrels query), and sets `run_id` to the
// run id of its last line. False when the run is not well formed or could
// not be read.
[[nodiscard]] bool EvaluateStreaming(RunChunkReader* reader, const Qrels& qrels,
                                     const ScorerConfig& config, bool complete,
                                     int threads,
                                     std::vector<QueryResult>* results,
                                     std::string* run_id);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_STREAMING_EVAL_H_
