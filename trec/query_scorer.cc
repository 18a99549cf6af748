#include "trec/query_scorer.h"

#include <algorithm>
#include <bit>
#include <string_view>

namespace rankwatch::trec {

void DocnoSet::Clear(size_t n) {
  const size_t capacity = std::bit_ceil(std::max<size_t>(64, 4 * n));
  if (slots_.size() != capacity) {
    slots_.assign(capacity, 0);
  } else {
    std::fill(slots_.begin(), slots_.end(), 0);
  }
  mask_ = capacity - 1;
  size_ = 0;
}

void DocnoSet::Grow() {
  old_.swap(slots_);
  slots_.assign(std::max<size_t>(64, 2 * old_.size()), 0);
  mask_ = slots_.size() - 1;
  size_ = 0;
  for (const uint32_t key : old_) {
    if (key != 0) Place(key);
  }
}

QueryScorer::QueryScorer(const Qrels& qrels, const ScorerConfig& config)
    : qrels_(qrels),
      config_(config),
      needs_ranking_(config.table.selection().NeedsJudgedRanking()) {}

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

bool QueryScorer::IsListed(std::string_view docno) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const RunEntry& e) { return e.doc() == docno; });
}

std::optional<size_t> QueryScorer::ListedBefore(size_t i) const {
  for (size_t j = 0; j < i; ++j) {
    if (entries_[j].doc() == entries_[i].doc()) return j;
  }
  return std::nullopt;
}

void QueryScorer::Score(const QueryQrels& q, QueryRow* out) {
  if (!std::is_sorted(entries_.begin(), entries_.end(), RanksBefore)) {
    std::sort(entries_.begin(), entries_.end(), RanksBefore);
  }
  const size_t n = static_cast<size_t>(std::min<int64_t>(
      static_cast<int64_t>(entries_.size()), config_.max_docs));
  ranked_.clear();
  for (size_t i = 0; i < n; ++i) {
    // -J drops unjudged docs after the -M cut, as trec_eval does.
    if (config_.judged_only && entries_[i].grade < 0) continue;
    ranked_.push_back(entries_[i].grade);
  }
  const std::span<const metrics::Grade> judgments = qrels_.grades(q);
  config_.evaluator.Evaluate(ranked_, judgments, &scores_);
  out->values.resize(config_.table.columns().size());
  JudgedRanking ranking;
  if (needs_ranking_) {
    ranking =
        ranking_.Build(ranked_, judgments,
                       config_.evaluator.definitions().relevance_threshold);
  }
  config_.table.Compute(scores_, ranking, out->values, &out->text);
}

void QueryScorer::ScoreMissing(const QueryQrels& q, QueryRow* out) {
  ranked_.clear();
  const std::span<const metrics::Grade> judgments = qrels_.grades(q);
  config_.evaluator.Evaluate(ranked_, judgments, &scores_);
  out->values.resize(config_.table.columns().size());
  config_.table.ComputeMissing(scores_, judgments, out->values, &out->text);
}

}  // namespace rankwatch::trec
