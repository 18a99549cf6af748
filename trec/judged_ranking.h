// One query as trec_eval's measures see it (JudgedRanking: the relevance
// code of each retrieved doc and the query's judgment counts), trec_eval's
// gain table for the gain-map families, and the measures `rankwatch eval`
// computes from that view rather than from the engine's ListScores
// (metrics/measures.h): gm_map, bpref, infAP, interpolated precision,
// Rprec_mult, relative_P, unj, binG, relstring, the gain-map families
// (dcg, ndcg with a map, ndcg_rel, Rndcg, G) and rbp. Each is computed from
// its definition in docs/metrics.md, in the order of operations trec_eval
// uses (its m_*.c file is named beside each), so that the printed digits
// agree with trec_eval's.
//
// Ownership: a JudgedRanking views the buffers of the JudgedRankingBuilder
// that built it (valid until its next Build) and the caller's codes.
// Thread-safety: the Compute* functions are pure but for the GainTable
// they are given (rbp rescales it); a JudgedRankingBuilder and a GainTable
// reuse their buffers: one per thread.
#ifndef RANKWATCH_TREC_JUDGED_RANKING_H_
#define RANKWATCH_TREC_JUDGED_RANKING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/measures.h"
#include "trec/measure_selection.h"

namespace rankwatch::trec {

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

// The per-query values of the families computed from a JudgedRanking.
// `level` is the relevance level (-l): codes >= level are relevant.

// log(max(AP, .00001)): gm_map's per-query value (m_gm_map.c).
double ComputeGmMap(const JudgedRanking& r, metrics::Grade level);
double ComputeBpref(const JudgedRanking& r, metrics::Grade level);
// log(max(bpref, .00001)): gm_bpref's per-query value (m_gm_bpref.c).
double ComputeGmBpref(const JudgedRanking& r, metrics::Grade level);
double ComputeInfAp(const JudgedRanking& r, metrics::Grade level);
// Interpolated precision at each of the ascending recall `levels`, into
// `out` (one value per level): iprec_at_recall, and 11pt_avg's input.
void InterpolatedPrecision(const JudgedRanking& r, metrics::Grade level,
                           std::span<const double> levels,
                           std::span<double> out);
// Precision at each multiple of R in `mults`, into `out`.
void ComputeRprecMult(const JudgedRanking& r, metrics::Grade level,
                      std::span<const double> mults, std::span<double> out);
// relative_P at each cutoff, into `out` (left as is when R is 0).
void ComputeRelativeP(const JudgedRanking& r, metrics::Grade level,
                      std::span<const int32_t> cutoffs, std::span<double> out);
// unj at each cutoff, into `out`.
void ComputeUnj(const JudgedRanking& r, std::span<const int32_t> cutoffs,
                std::span<double> out);
double ComputeBinG(const JudgedRanking& r, metrics::Grade level);
// The first `length` codes as trec_eval's relstring prints them.
void ComputeRelstring(const JudgedRanking& r, double length, std::string* text);

// The gain-map families; `gains` is set up from the item's pairs and the
// ranking's levels first.
// dcg, ideal_dcg or ndcg (by `m`), into *out (left as is when ndcg's ideal
// DCG is 0).
void ComputeNdcg(const JudgedRanking& r, GainTable* gains, TrecMeasure m,
                 double* out);
double ComputeNdcgRel(const JudgedRanking& r, GainTable* gains);
double ComputeRndcg(const JudgedRanking& r, GainTable* gains);
double ComputeG(const JudgedRanking& r, GainTable* gains);
// Rescales `gains` into [0, 1] when any lies outside.
double ComputeRbp(const JudgedRanking& r, std::span<const ParamPair> pairs,
                  GainTable* gains);
double ComputeRbpResid(const JudgedRanking& r,
                       std::span<const ParamPair> pairs);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_JUDGED_RANKING_H_
