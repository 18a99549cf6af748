// The measures `rankwatch eval -m` selects, as trec_eval 10.0 reads them:
// the `-m NAME[.params]` syntax with its nicknames (official, all_trec,
// set), every measure family of `all_trec` with its parameters (cutoff
// lists, float cutoffs truncated like atol, recall levels, Rprec
// multipliers, utility coefficients, gain maps, relstring length, rbp's
// p), the other spellings eval reads (P_10, ndcg@10, nDCG@10), trec_eval's
// measure order and the printed row names of each selected family.
//
// What is known about each family (its name, parameter kind, defaults,
// value format, summary) is its row in one table in measure_selection.cc;
// the computation of the values is MeasureTable's (trec_measures.h).
//
// Ownership: a MeasureSelection owns its items (plain values; copy freely).
// Thread-safety: immutable once parsed; safe to share between threads.
#ifndef RANKWATCH_TREC_MEASURE_SELECTION_H_
#define RANKWATCH_TREC_MEASURE_SELECTION_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

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
inline constexpr size_t kTrecMeasureCount =
    static_cast<size_t>(TrecMeasure::kKendallTau) + 1;

// A `level=gain` parameter (ndcg.1=3,2=9) or rbp's `p=0.8`.
struct ParamPair {
  std::string name;
  double value = 0;
};

// How the specs of one family combine.
enum class SpecJoin {
  // trec_eval's `-m`: the first NAME.params of a family sets its
  // parameters; later ones only mark it.
  kFirstWins,
  // pytrec_eval's RelevanceEvaluator (its _combine_measures): the cutoffs
  // of every spec of a cutoff family are joined ({'P.5', 'P.10'} is P.5,10),
  // and NAME_5,10 reads as NAME.5,10. Other families keep the first
  // parameters, as under kFirstWins. The Python package parses this way.
  kJoinCutoffs,
};

// The measures requested with `-m`, as trec_eval reads them: the first
// `-m NAME.params` of a family sets its parameters (later ones only mark
// it; SpecJoin::kJoinCutoffs joins them), a family without parameters
// takes its defaults, and parameters of a family that takes none are
// ignored.
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
  static StatusOr<MeasureSelection> Parse(std::span<const std::string> specs,
                                          SpecJoin join = SpecJoin::kFirstWins);

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

// Appends the printed columns of one selected item (P_5, P_10, ...;
// iprec_at_recall_0.10; utility_1,-1,0,0), in printing order.
void AppendColumns(const MeasureSelection::Item& item,
                   std::vector<ReportColumn>* columns);

// Whether a family prints one row per cutoff (P_5, iprec_at_recall_0.10,
// recip_rank_5) rather than one row named with its parameters as given
// (set_F_0.5, utility_1,-1,0,0): pytrec_eval keys the first kind by row
// name, the second by the family's name alone.
bool HasCutoffRows(TrecMeasure measure);

// The `-m` family names eval reads (trec_eval's, then rankwatch's: dcg,
// rbp, unj, judged, spearman, ...), in TrecMeasure order.
std::vector<std::string_view> MeasureFamilyNames();
// trec_eval's nicknames eval reads (official, all_trec, set) and the
// families each stands for; null for a name that is none of them.
std::vector<std::string_view> MeasureNicknames();
const std::vector<std::string_view>* NicknameFamilies(std::string_view name);

// C's atol, as trec_eval reads integer parameters (cutoffs, gain-map
// levels): leading blanks, a sign, digits up to the first non-digit; 0
// when there are none. Saturates instead of overflowing.
int64_t AtolLike(std::string_view s);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_MEASURE_SELECTION_H_
