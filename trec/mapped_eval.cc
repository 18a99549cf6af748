#include "trec/mapped_eval.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "trec/mapped_file.h"
#include "trec/parallel.h"
#include "trec/query_scorer.h"
#include "trec/run_file.h"

namespace rankwatch::trec {

namespace {

// Work for one query of the evaluation: its qrels (null for a run-only
// query, which is parsed for errors but not scored) and its run lines (null
// for a qrels query missing from the run under -c).
struct WorkItem {
  const QueryQrels* qrels;
  const RunQuery* run;
  QueryResult* result;  // Null when not scored.
  uint64_t order;       // File offset, for sequential access.
};

// Parses, joins and scores one item with `scorer`.
Status ScoreItem(const WorkItem& item, const MappedFile& run,
                 QueryScorer* scorer) {
  scorer->Clear();
  if (item.run != nullptr) {
    RW_RETURN_IF_ERROR(
        ParseRunQuery(run.data(), *item.run, run.path(), scorer->entries()));
    if (std::optional<QueryScorer::Duplicate> d =
            scorer->JoinGrades(item.qrels)) {
      const std::vector<RunEntry>& e = *scorer->entries();
      return Status::InvalidArgument(
          ShownPath(run.path()) + ":" + std::to_string(e[d->again].line) +
          ": duplicate docno '" + Printable(e[d->again].doc()) +
          "' for query " + Printable(item.run->qid) +
          " (first listed on line " + std::to_string(e[d->first].line) + ")");
    }
  }
  if (item.result == nullptr) return Status::Ok();
  item.result->qid = item.qrels->qid;
  QueryRow row{std::move(item.result->values), std::move(item.result->text)};
  if (item.run != nullptr) {
    scorer->Score(*item.qrels, &row);
  } else {
    scorer->ScoreMissing(*item.qrels, &row);
  }
  item.result->values = std::move(row.values);
  item.result->text = std::move(row.text);
  return Status::Ok();
}

// The work items in file order: the queries to score (in `results`, in qid
// order) and the run-only queries, which are only checked.
std::vector<WorkItem> PlanWork(const Qrels& q, const RunIndex& index,
                               bool complete,
                               std::vector<QueryResult>* results) {
  std::vector<std::pair<const QueryQrels*, const RunQuery*>> scored;
  for (const QueryQrels& qq : q.queries()) {
    const RunQuery* rq = index.FindQuery(qq.qid);
    if (rq != nullptr || complete) scored.emplace_back(&qq, rq);
  }
  results->clear();
  results->resize(scored.size());
  std::vector<WorkItem> items;
  items.reserve(index.queries().size() + scored.size());
  for (size_t i = 0; i < scored.size(); ++i) {
    const RunQuery* rq = scored[i].second;
    items.push_back({scored[i].first, rq, &(*results)[i],
                     rq == nullptr ? 0 : rq->blocks.front().begin});
  }
  for (const RunQuery& rq : index.queries()) {
    if (q.FindQuery(rq.qid) == nullptr) {
      items.push_back({nullptr, &rq, nullptr, rq.blocks.front().begin});
    }
  }
  std::sort(
      items.begin(), items.end(),
      [](const WorkItem& a, const WorkItem& b) { return a.order < b.order; });
  return items;
}

}  // namespace

Status NoCommonQuery(const std::string& qrels_path, const std::string& run_path,
                     bool complete) {
  return Status::InvalidArgument(
      "no query appears in both '" + ShownPath(qrels_path) + "' and '" +
      ShownPath(run_path) + "'" +
      (complete ? "" : " (with -c, every qrels query counts)"));
}

Status EvaluateMapped(const std::string& qrels_path,
                      const std::string& run_path, const Qrels& qrels,
                      const ScorerConfig& config, bool complete, int threads,
                      std::vector<QueryResult>* results, std::string* run_id) {
  StatusOr<MappedFile> run = MappedFile::Open(run_path, LineBounds());
  if (!run.ok()) return run.status();
  const RunIndex index = RunIndex::Build(*run, threads);
  if (index.long_line() != 0) {
    return LineTooLong(run_path, index.long_line(), LineBounds());
  }
  const std::vector<WorkItem> items = PlanWork(qrels, index, complete, results);
  if (results->empty()) {
    return NoCommonQuery(qrels_path, run_path, complete);
  }
  *run_id = std::string(LastRunId(run->data()));
  // One scorer per worker, made by the worker on its first item.
  std::vector<std::optional<QueryScorer>> scorers(
      ParallelWorkers(items.size(), threads));
  // Items are in file order, so the error of the lowest failed item is the
  // one a sequential reading meets first, whatever the scheduling.
  return RunParallelUntilError(
      items.size(), threads, [&](size_t i, size_t worker) {
        std::optional<QueryScorer>& scorer = scorers[worker];
        if (!scorer) scorer.emplace(qrels, config);
        return ScoreItem(items[i], *run, &*scorer);
      });
}

}  // namespace rankwatch::trec
