// The report `rankwatch eval` prints for a MeasureSelection
// (measure_selection.h): its columns in trec_eval's printing order, and the
// computation of one query's row. The families rankwatch's engine
// (metrics/measures.h) computes (P, recall, map, map_cut, ndcg, ndcg_cut,
// recip_rank, Rprec, success, the counts, and the rankwatch-only judged,
// spearman and kendall_tau) are read from its ListScores, so `eval`,
// `compare`, replay and the daemon share one implementation and its named
// definitions (--gain, denominators); the others from a JudgedRanking,
// trec_eval's view of one query (judged_ranking.h). Which function computes
// which family is one table in trec_measures.cc.
//
// Ownership: a MeasureTable owns a copy of its selection and its scratch.
// Thread-safety: Compute() and ComputeMissing() reuse scratch members:
// keep one MeasureTable per thread (it is cheap to copy).
#ifndef RANKWATCH_TREC_TREC_MEASURES_H_
#define RANKWATCH_TREC_TREC_MEASURES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "metrics/measures.h"
#include "trec/judged_ranking.h"
#include "trec/measure_selection.h"
#include "trec/qrels.h"

namespace rankwatch::trec {

// The columns of a selection, in printing order, and the computation of one
// query's row. The columns are fixed by Create; Compute() and
// ComputeMissing() reuse scratch members, so they are not const: keep one
// per thread (QueryScorer copies it; it is cheap to copy).
class MeasureTable {
 public:
  struct Options {
    metrics::Grade relevance_level = 1;  // -l
    int64_t num_docs_in_collection = 0;  // -N (utility's fourth cell)
    bool judged_only = false;            // -J
  };
  static MeasureTable Create(const MeasureSelection& selection,
                             const Options& options);

  const std::vector<ReportColumn>& columns() const { return columns_; }
  const MeasureSelection& selection() const { return selection_; }

  // Fills `row` (one value per column; text columns get 0) and `text` (the
  // relstring, if selected) for one query. `engine` holds the engine's
  // scores of the same ranking; `ranking` its trec_eval view.
  void Compute(const metrics::ListScores& engine, const JudgedRanking& ranking,
               std::span<double> row, std::string* text);
  // trec_eval's values for a qrels query absent from the run (-c): it is
  // scored as a ranking of one doc outside the pool (none under -J), then
  // num_ret, utility, relstring, unj and rbp_resid are reset.
  void ComputeMissing(const metrics::ListScores& engine,
                      std::span<const metrics::Grade> judgments,
                      std::span<double> row, std::string* text);

  // Formats `value` of `column` as trec_eval prints it.
  static void AppendValue(const ReportColumn& column, double value,
                          std::string* out);
  // Appends `value` as printf's "%6.4f" prints it (ValueFormat::kReal).
  static void AppendFixed4(double value, std::string* out);

 private:
  struct Slot {
    size_t item;    // Index into selection_.items().
    size_t column;  // First column of the item.
  };
  void ComputeItem(const MeasureSelection::Item& item,
                   const std::vector<int>& cut,
                   const metrics::ListScores& engine, const JudgedRanking& r,
                   std::span<double> out, std::string* text);

  MeasureSelection selection_;
  Options options_;
  std::vector<ReportColumn> columns_;
  std::vector<Slot> slots_;
  // Engine cutoff index of each integer cutoff, per item.
  std::vector<std::vector<int>> cutoff_index_;
  // What ComputeMissing resets (trec_eval resets by printed name).
  std::vector<size_t> reset_columns_;
  bool reset_relstring_ = false;
  // Scratch, reused across queries.
  JudgedRankingBuilder missing_builder_;
  std::vector<metrics::Grade> missing_codes_;
  GainTable gains_;
  std::vector<double> scratch_;
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_TREC_MEASURES_H_
