#include "trec/query_scorer.h"

#include <algorithm>
#include <bit>

#include "base/string_index.h"

namespace rankwatch::trec {

void DocnoSet::Clear(size_t n) {
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, 2 * n));
  if (slots_.size() < capacity) slots_.resize(capacity);
  std::fill_n(slots_.begin(), capacity, 0);
  mask_ = capacity - 1;
}

QueryScorer::QueryScorer(const Qrels& qrels,
                         const metrics::Evaluator& evaluator, int64_t max_docs)
    : qrels_(qrels), evaluator_(evaluator), max_docs_(max_docs) {}

std::optional<QueryScorer::Duplicate> QueryScorer::JoinGrades(
    const QueryQrels* q) {
  seen_.Clear(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    RunEntry& e = entries_[i];
    const uint64_t h = HashBytes(e.doc());
    if (!seen_.Insert(h)) {
      if (std::optional<size_t> first = ListedBefore(i)) {
        return Duplicate{*first, i};
      }
    }
    if (q != nullptr) e.grade = qrels_.Lookup(*q, e.doc(), h);
  }
  return std::nullopt;
}

std::optional<size_t> QueryScorer::ListedBefore(size_t i) const {
  for (size_t j = 0; j < i; ++j) {
    if (entries_[j].doc() == entries_[i].doc()) return j;
  }
  return std::nullopt;
}

void QueryScorer::Score(const QueryQrels& q, metrics::ListScores* out) {
  if (!std::is_sorted(entries_.begin(), entries_.end(), RanksBefore)) {
    std::sort(entries_.begin(), entries_.end(), RanksBefore);
  }
  const size_t n = static_cast<size_t>(
      std::min<int64_t>(static_cast<int64_t>(entries_.size()), max_docs_));
  ranked_.resize(n);
  for (size_t i = 0; i < n; ++i) ranked_[i] = entries_[i].grade;
  evaluator_.Evaluate(ranked_, qrels_.grades(q), out);
}

}  // namespace rankwatch::trec
