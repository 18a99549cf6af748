#include "trec/memory_eval.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <utility>

#include "base/strings.h"
#include "trec/parallel.h"

namespace rankwatch::trec {

size_t MemoryRun::Query(std::string_view qid) {
  if (last_ < queries_.size() && queries_[last_].qid == qid) return last_;
  const auto [it, added] =
      index_.try_emplace(std::string(qid), queries_.size());
  if (added) queries_.push_back(RunQueryDocs{std::string(qid), {}});
  last_ = it->second;
  return last_;
}

bool MemoryRun::Add(size_t query, std::string_view docno, double score) {
  if (!std::isfinite(score)) return false;
  queries_[query].docs.push_back(
      Doc{docnos_.size(), static_cast<uint32_t>(docno.size()), score});
  docnos_.append(docno);
  return true;
}

Status EvaluateMemory(const Qrels& qrels, const MemoryRun& run,
                      const ScorerConfig& config, bool complete, int threads,
                      std::vector<QueryResult>* results) {
  // The scored queries in qid order: each qrels query the run has (or,
  // with `complete`, lacks).
  std::vector<std::pair<const QueryQrels*, const MemoryRun::RunQueryDocs*>>
      work;
  for (const QueryQrels& qq : qrels.queries()) {
    const auto it = run.index_.find(std::string(qq.qid));
    if (it != run.index_.end()) {
      work.emplace_back(&qq, &run.queries_[it->second]);
    } else if (complete) {
      work.emplace_back(&qq, nullptr);
    }
  }
  results->clear();
  results->resize(work.size());
  if (threads <= 0) {
    threads =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  std::vector<std::optional<QueryScorer>> scorers(
      ParallelWorkers(work.size(), threads));
  return RunParallelUntilError(
      work.size(), threads, [&](size_t i, size_t worker) -> Status {
        std::optional<QueryScorer>& scorer = scorers[worker];
        if (!scorer) scorer.emplace(qrels, config);
        const auto [qq, docs] = work[i];
        QueryResult& result = (*results)[i];
        result.qid = qq->qid;
        QueryRow row{std::move(result.values), std::move(result.text)};
        if (docs == nullptr) {
          scorer->ScoreMissing(*qq, &row);
        } else {
          scorer->Clear();
          for (const MemoryRun::Doc& d : docs->docs) {
            scorer->entries()->push_back(
                RunEntry{d.score, run.docnos_.data() + d.offset, d.length,
                         metrics::kUnjudged, 0});
          }
          if (std::optional<QueryScorer::Duplicate> dup =
                  scorer->JoinGrades(qq)) {
            return Status::InvalidArgument(
                "query '" + Printable(qq->qid) + "' lists doc '" +
                Printable((*scorer->entries())[dup->again].doc()) + "' twice");
          }
          scorer->Score(*qq, &row);
        }
        result.values = std::move(row.values);
        result.text = std::move(row.text);
        return Status::Ok();
      });
}

}  // namespace rankwatch::trec
