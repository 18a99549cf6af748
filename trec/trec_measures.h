// trec_eval 10.0's measures, as `rankwatch eval` selects, names, computes,
// prints and summarizes them: the `-m NAME[.params]` syntax with its
// nicknames (official, all_trec, set), every measure family of `all_trec`
// with its parameters (cutoff lists, float cutoffs truncated like atol,
// recall levels, Rprec multipliers, utility coefficients, gain maps,
// relstring length, rbp's p), trec_eval's measure order and its row names.
//
// Families rankwatch's engine (metrics/measures.h) computes (P, recall, map,
// map_cut, ndcg, ndcg_cut, recip_rank, Rprec, success, the counts, and the
// rankwatch-only judged, spearman and kendall_tau) are read from its
// ListScores, so `eval`, `compare`, replay and the daemon share one
// implementation and its named definitions (--gain, denominators). The
// other families are computed here from a JudgedRanking, trec_eval's view of
// one query, each from its definition in docs/metrics.md, in the order of
// operations trec_eval uses so that the printed digits agree.
#ifndef RANKWATCH_TREC_TREC_MEASURES_H_
#define RANKWATCH_TREC_TREC_MEASURES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "metrics/measures.h"
#include "trec/qrels.h"

namespace rankwatch::trec {

// Measure families in trec_eval's order (measures.c), which is the order of
// the rows inside each printed block. judged, spearman and kendall_tau are
// rankwatch's and come last.
enum class TrecMeasure {
  kRunid,
  kNumQ,
  kNumRet,
  kNumRel,
  kNumRelRet,
  kMap,
  kGmMap,
  kRprec,
  kBpref,
  kRecipRank,
  kIprecAtRecall,
  kP,
  kRelstring,
  kRecall,
  kInfAP,
  kGmBpref,
  kRprecMult,
  kUtility,
  k11ptAvg,
  kBinG,
  kG,
  kDcg,
  kIdealDcg,
  kNdcg,
  kNdcgRel,
  kRndcg,
  kNdcgCut,
  kMapCut,
  kRelativeP,
  kSuccess,
  kSetP,
  kSetRelativeP,
  kSetRecall,
  kSetMap,
  kSetF,
  kNumNonrelJudgedRet,
  kRbp,
  kRbpResid,
  kUnj,
  kJudged,
  kSpearman,
  kKendallTau,
};

// A `level=gain` parameter (ndcg.1=3,2=9) or rbp's `p=0.8`.
struct ParamPair {
  std::string name;
  double value = 0;
};

// The measures requested with `-m`, as trec_eval reads them: the first
// `-m NAME.params` of a family sets its parameters (later ones only mark
// it), a family without parameters takes its defaults, and parameters of a
// family that takes none are ignored.
class MeasureSelection {
 public:
  struct Item {
    TrecMeasure measure;
    // recip_rank given without parameters (recip_rank.k is rankwatch's
    // recip_rank at cutoff k; both may be asked for).
    bool uncut = false;
    std::vector<int32_t> cutoffs;  // Integer cutoffs, ascending and unique.
    std::vector<double> values;    // Float cutoffs (ascending) or params.
    std::vector<ParamPair> pairs;  // Gain maps and p, in the given order.
    std::string printable;         // Parameters as given; "" when defaulted.
  };

  // An empty `specs` selects trec_eval's default, the official set. A spec
  // that is not trec_eval's `-m` syntax may be a printed row name (P_10,
  // iprec_at_recall_0.10) or a rankwatch or ir_measures name (ndcg@10,
  // nDCG@10, AP, RR@10: metrics/measure_names.h); each names one cutoff,
  // joined to the cutoffs its family gets otherwise (`-m nDCG@5 -m
  // nDCG@10` prints ndcg_cut_5 and ndcg_cut_10, where trec_eval's own
  // `-m ndcg_cut.5 -m ndcg_cut.10` keeps the first list). Errors name the
  // offending spec: an unknown measure (with the closest name, if a likely
  // typo), a cutoff that is not positive (after atol-like truncation),
  // duplicate cutoffs, a malformed `name=value` list, a measure eval does
  // not compute.
  static StatusOr<MeasureSelection> Parse(std::span<const std::string> specs);

  const std::vector<Item>& items() const { return items_; }
  // The cutoffs the engine must compute for the engine families.
  std::vector<int32_t> EngineCutoffs() const;
  // Whether any item is computed from the JudgedRanking, not the engine.
  bool NeedsJudgedRanking() const;

 private:
  std::vector<Item> items_;  // In TrecMeasure order.
};

// How a value is printed.
enum class ValueFormat {
  kInteger,  // %ld
  kReal,     // %6.4f
  kText,     // runid as is, relstring quoted.
};

// How the `all` row of a column is formed from the per-query values.
enum class SummaryKind {
  kMean,           // Sum over queries, divided by num_q.
  kSum,            // num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret.
  kGeometricMean,  // gm_map, gm_bpref: per-query values are logs.
  kNumQ,           // The number of queries.
  kRunid,          // The run's id (text).
  kNone,           // relstring: per query only.
  kDefinedMean,    // spearman, kendall_tau: mean over defined values.
};

// One printed measure of a report.
struct ReportColumn {
  std::string name;  // As trec_eval prints it: P_10, iprec_at_recall_0.10.
  ValueFormat format = ValueFormat::kReal;
  bool per_query = true;  // Printed per query (with -q).
  bool summary = true;    // Printed in the `all` block.
  SummaryKind summary_kind = SummaryKind::kMean;
};

// The number of judged docs (retrieved or not) with one grade.
struct LevelCount {
  int64_t level;
  int64_t count;
};

// One query as trec_eval's measures see it (its RES_RELS): the relevance
// code of each retrieved doc in ranking order, after -M and -J, and the
// query's judgment counts. Views into a JudgedRankingBuilder's buffers.
struct JudgedRanking {
  std::span<const metrics::Grade> codes;
  // Grades 0 .. max, ascending, zero counts included, as trec_eval's
  // rel_levels array; above kMaxDenseGrade (far beyond trec_eval's
  // documented grades < 128, where it would allocate an array that large)
  // only the grades that occur.
  std::span<const LevelCount> levels;
  int64_t num_rel = 0;  // Judged docs with grade >= the relevance level.
  int64_t num_judged_nonrel = 0;  // Judged docs with 0 <= grade < level.
  int64_t num_rel_ret = 0;
  int64_t num_nonpool = 0;
  int64_t num_unjudged_in_pool = 0;
  int64_t num_ret() const { return static_cast<int64_t>(codes.size()); }
};

// Builds JudgedRankings, reusing its buffers. Not thread-safe.
class JudgedRankingBuilder {
 public:
  static constexpr metrics::Grade kMaxDenseGrade = 65535;

  // `codes`: the retrieved docs' codes in ranking order; `judgments`: every
  // grade of the query's qrels (negative ones included).
  JudgedRanking Build(std::span<const metrics::Grade> codes,
                      std::span<const metrics::Grade> judgments,
                      metrics::Grade relevance_level);

 private:
  std::vector<int64_t> counts_;
  std::vector<metrics::Grade> sorted_;
  std::vector<LevelCount> levels_;
};

// trec_eval's gain table (gain_init.c) for the gain-map families: a gain
// per relevance level, from the `level=gain` pairs whose name is an
// integer, else the level itself, with the number of judged docs at each
// level, sorted by gain as glibc's qsort sorts them under trec_eval's
// comparator, which compares the difference of two gains truncated to an
// int (so 4.5 and 4 compare equal and keep their order). Not thread-safe.
class GainTable {
 public:
  struct Entry {
    int64_t level;
    int64_t count;  // Judged docs at the level.
    double gain;
  };

  void Setup(std::span<const ParamPair> pairs,
             std::span<const LevelCount> levels);
  // The gain of a relevance code: its first entry's in gain order, else 0.
  // O(log levels) beyond kScanEntries entries.
  double Of(int64_t code) const;
  // In ascending gain order.
  const std::vector<Entry>& entries() const { return entries_; }
  // rbp's rescaling of every gain into [0, 1]: (gain - min) / (max - min).
  void Rescale(double min, double max) {
    for (Entry& e : entries_) e.gain = (e.gain - min) / (max - min);
    Reindex();
  }

 private:
  static constexpr size_t kScanEntries = 16;
  void Reindex();

  static bool IsIntegerName(std::string_view s);
  static int Compare(const Entry& a, const Entry& b);
  // glibc's msort_with_tmp: top-down merge sort, left half first.
  void MergeSort(Entry* b, size_t n);

  std::vector<Entry> entries_;
  std::vector<Entry> scratch_;
  // (level, gain) of each level's first entry in gain order, by level.
  std::vector<std::pair<int64_t, double>> by_level_;
};

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
