// Reading TREC run files ("qid iter docno rank score run_id" per line) fast
// enough for runs of tens of millions of lines.
//
// Two passes. RunIndex::Build scans the file once (in parallel chunks) and
// records, for every qid, the byte ranges ("blocks") of its lines; a run
// grouped by query has one block per qid, but any interleaving works.
// ParseRunQuery then parses one query's blocks into entries on demand, so
// queries can be scored in parallel and only one query per thread is ever
// materialized. Nothing is copied: entries point into the file's bytes.
//
// RunIndex is immutable after Build and safe to share between threads.
#ifndef RANKWATCH_METRICS_TREC_RUN_FILE_H_
#define RANKWATCH_METRICS_TREC_RUN_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/measures.h"
#include "metrics/status.h"
#include "metrics/string_index.h"
#include "metrics/trec/mapped_file.h"

namespace rankwatch::trec {

struct RunBlock {
  uint64_t begin = 0;       // Offset of the block's first line.
  uint64_t end = 0;         // One past the block's last byte.
  uint64_t first_line = 0;  // 1-based line number of `begin`.
};

struct RunQuery {
  std::string_view qid;
  std::vector<RunBlock> blocks;  // In file order.
};

class RunIndex {
 public:
  // Scans `file` with up to `threads` threads.
  static RunIndex Build(const MappedFile& file, int threads);

  // Queries in order of first appearance.
  std::span<const RunQuery> queries() const { return queries_; }
  const RunQuery* FindQuery(std::string_view qid) const;

 private:
  std::vector<RunQuery> queries_;
  StringIndex index_;  // qid -> position in queries_.
};

// One run line of a query.
struct RunEntry {
  double score;
  const char* docno;
  uint32_t docno_length;
  metrics::Grade grade;  // Filled in by the caller.
  uint64_t line;

  std::string_view doc() const { return {docno, docno_length}; }
};

// Parses the lines of `query` from `data` (the whole file) into `out`, in
// file order, reusing its storage. Errors name `file_name` and the line: fewer
// than 6 fields, a score that is not a finite number.
Status ParseRunQuery(std::string_view data, const RunQuery& query,
                     const std::string& file_name, std::vector<RunEntry>* out);

// trec_eval's ranking order: score descending, then docno descending by
// bytes (strcmp).
inline bool RanksBefore(const RunEntry& a, const RunEntry& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.doc() > b.doc();
}

}  // namespace rankwatch::trec

#endif  // RANKWATCH_METRICS_TREC_RUN_FILE_H_
