// The one reader of measure names, for every place that takes one (the
// configuration's metrics.measures and experiments' primary, `rankwatch
// eval -m`, `rankwatch compare -m`). It accepts the three spellings a
// relevance engineer meets, for every measure that has an exact equivalent
// in rankwatch (the table is in docs/metrics.md, "Measure names"; each
// measure's spellings are its row in kMeasureTable, metrics/measures.h):
//
//   trec_eval    ndcg_cut.10  P.5  recall.10  map  map_cut.10  recip_rank
//                success.10  Rprec  ndcg, and the printed form ndcg_cut_10,
//                P_10 (what eval, replay and the status page print);
//   rankwatch    ndcg@10  precision@5  average_precision@10
//                reciprocal_rank  ndcg@all (Prometheus and YAML names);
//   ir_measures  nDCG@10  nDCG  P@5  R@10  AP  AP@10  RR  RR@10
//                Success@10  Rprec  Judged@10, their aliases (NDCG, MAP,
//                MRR, Precision, Recall, BPref, RPrec) and the trec_eval
//                families they name (Bpref, infAP, IPrec@0.5, NumQ, NumRet,
//                NumRel, NumRelRet, SetP, SetRelP, SetR, SetF, SetAP).
//
// A spelling is resolved to what rankwatch computes, never to something
// merely similar: ir_measures' RR@10 is the reciprocal rank cut at 10
// (rankwatch's recip_rank_10), AP@10 is trec_eval's map_cut_10 (divided by
// R). ir_measures measures without an exact equivalent (ERR, RBP, ...) and
// ir_measures parameters in parentheses (P(rel=2)@5) are refused with the
// reason. A miss names the closest known spelling when it is a likely typo
// (ClosestKey, base/strings.h).
//
// Outputs name measures one way per format: Prometheus, the configuration
// and the JSON summaries use rankwatch's names (MeasureName), eval, compare,
// replay and the status page trec_eval's printed names (TrecName).
//
// Stateless functions over constant tables; thread-safe.
#ifndef RANKWATCH_METRICS_MEASURE_NAMES_H_
#define RANKWATCH_METRICS_MEASURE_NAMES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "metrics/measures.h"

namespace rankwatch::metrics {

// The naming convention a spelling belongs to.
enum class MeasureDialect {
  kRankwatch,   // ndcg@10, precision@5 (metrics/measures.h MeasureName).
  kTrecEval,    // ndcg_cut.10 (its -m syntax) or ndcg_cut_10 (printed).
  kIrMeasures,  // nDCG@10, P@5 (https://ir-measur.es).
};

// "rankwatch", "trec_eval", "ir_measures".
std::string_view MeasureDialectName(MeasureDialect d);

// One measure name, resolved.
struct MeasureRef {
  // The engine's measure; nullopt for a trec_eval family that only
  // `rankwatch eval` computes (bpref, infAP, iprec_at_recall, the counts and
  // the set measures, named in ir_measures' spelling).
  std::optional<Measure> measure;
  // The cutoff k of the series; nullopt for the uncut series (and for the
  // families whose parameter is not a cutoff, see trec_param).
  std::optional<int32_t> cutoff;
  // trec_eval's `-m` family of the series ("ndcg_cut", "map", "bpref"); ""
  // when trec_eval has none (the click measures, rankwatch's own).
  std::string_view trec_family;
  // The family's parameter as `-m` takes it ("10", "0.5"); "" for none.
  std::string trec_param;
  MeasureDialect dialect = MeasureDialect::kRankwatch;

  // trec_eval's `-m` spec: "ndcg_cut.10", "map", "iprec_at_recall.0.5";
  // "" when trec_family is.
  std::string TrecSpec() const;
};

// Reads one name of a series (a measure, and its cutoff if it has one) in
// any of the three spellings. Errors (InvalidArgument, one line naming
// `text`): an unknown name, with " (did you mean 'X'?)" when one of the
// accepted spellings (or of `more_names`, names the caller accepts besides,
// such as eval's measure sets) is a likely typo of it; a cutoff where the
// measure takes none, none where it needs one, or a cutoff that is not an
// integer >= 1; ir_measures parameters in parentheses; an ir_measures
// measure without an exact rankwatch equivalent.
StatusOr<MeasureRef> ParseMeasureName(
    std::string_view text, std::span<const std::string_view> more_names = {});

// Reads the name of a measure without its cutoff, as metrics.measures lists
// them: the base name in any spelling ("ndcg", "ndcg_cut", "nDCG",
// "precision", "P", "AP", "map_cut"). Errors as ParseMeasureName, and a
// trec_eval family the engine does not compute (bpref: eval only).
StatusOr<Measure> ParseMeasureFamily(std::string_view text);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_MEASURE_NAMES_H_
