// Comparing judges offline (issue 29): several qrels files of the same
// topics (human assessors, an LLM judge, clicks turned into labels), how
// far their labels agree, and whether they rank the same systems the same
// way. `rankwatch compare --qrels human.txt --qrels llm.txt RUN...` prints
// it (docs/compare.md).
//
// Labels: for every pair of qrels, the (query, doc) pairs both graded
// (grade >= 0; a negative grade, trec_eval's "judged but not in the pool",
// is no label), with Cohen's kappa, a weighted kappa and Krippendorff's
// alpha (metrics/agreement.h). Rankings: for every measure and every qrels
// after the first (the reference, the trusted judge), the runs' means under
// it against their means under the reference: Kendall's tau-b, Yilmaz et
// al.'s tau_AP (weighs swaps at the top more) and the pairs of runs the two
// order differently, the meta-evaluation that papers on automatic judges
// report (e.g. Faggioli et al., ICTIR 2023; Upadhyay et al., UMBRELA 2024).
//
// Pure functions over loaded files; thread-safe.
#ifndef RANKWATCH_TREC_JUDGE_COMPARE_H_
#define RANKWATCH_TREC_JUDGE_COMPARE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "base/status.h"
#include "metrics/agreement.h"
#include "metrics/ppi.h"
#include "metrics/rank_correlation.h"
#include "trec/compare.h"
#include "trec/qrels.h"

namespace rankwatch::trec {

struct JudgeCompareOptions {
  metrics::KappaWeights weights = metrics::KappaWeights::kLinear;
  metrics::AlphaMetric alpha_metric = metrics::AlphaMetric::kOrdinal;
  double confidence = 0.95;
  // Prediction-powered means (metrics/ppi.h): the first judge trusted, the
  // second cheap; `ppi_tune`: PPI++'s lambda instead of plain PPI's 1.
  bool ppi = false;
  bool ppi_tune = false;
};

// Two judges' labels.
struct LabelAgreement {
  size_t first = 0;  // Into JudgeComparison::judges.
  size_t second = 0;
  int64_t pairs = 0;        // (query, doc) pairs both graded.
  int64_t only_first = 0;   // Graded by the first judge only.
  int64_t only_second = 0;  // By the second only.
  // nullopt where undefined (fewer than two pairs, or every grade alike).
  std::optional<metrics::AgreementEstimate> kappa;
  std::optional<metrics::AgreementEstimate> weighted_kappa;
  std::optional<metrics::AgreementEstimate> alpha;
};

// `above` and `below` are runs the reference orders so (strictly higher
// mean) and the judge the other way round (strictly lower).
struct RankSwap {
  size_t above = 0;
  size_t below = 0;
};

// The runs' ranking by one measure under one judge against the reference.
struct RankingAgreement {
  size_t measure = 0;  // Into JudgeComparison::measures.
  size_t judge = 0;    // Into JudgeComparison::judges, >= 1.
  std::optional<metrics::RankCorrelation> kendall;  // Needs 2+ runs.
  std::optional<double> tau_ap;
  std::vector<RankSwap> swaps;
};

// One run's mean of one measure as the first (trusted) judge would give it
// over every query the second (cheap) judge labelled: the queries both
// judges evaluated are the labelled sample, those only the cheap judge
// evaluated the others (a query only the trusted judge has is left out).
struct PpiRow {
  size_t run = 0;
  size_t measure = 0;
  int64_t labelled = 0;
  int64_t others = 0;
  std::optional<metrics::PpiMeanEstimate> estimate;  // nullopt: too few.
};

struct JudgeComparison {
  JudgeCompareOptions options;
  std::vector<std::string> judges;  // The first is the reference.
  std::vector<std::string> runs;
  std::vector<std::string> measures;
  // means[judge][run][measure]: the mean over the queries the measure is
  // defined on (trec_eval's "all" row).
  std::vector<std::vector<std::vector<double>>> means;
  std::vector<LabelAgreement> labels;      // Every pair of judges.
  std::vector<RankingAgreement> rankings;  // Measure-major, then judge.
  std::vector<PpiRow> ppi;                 // With options.ppi; run-major.
};

// The figures of two judges' labels from their counted pairs (what a live
// count keeps: stream/judge_agreement.h); `first` and `second` are left 0.
LabelAgreement AgreementOf(const metrics::GradePairs& both, int64_t only_first,
                           int64_t only_second,
                           const JudgeCompareOptions& options = {});
// One agreement as a JSON object: {"judges": [first, second], "pairs",
// "only_first", "only_second", "kappa", "kappa_interval", "weighted_kappa",
// ..., "alpha", "alpha_interval"} (null where undefined). Every output of
// judges' agreement writes this (compare, replay, /api/v1/summary).
void WriteLabelAgreementJson(const std::string& first,
                             const std::string& second, const LabelAgreement& l,
                             JsonWriter* w);
// The same members without the braces, into an object the caller opened
// (the status API's per-window agreement adds its "window" beside them).
void WriteLabelAgreementMembers(const std::string& first,
                                const std::string& second,
                                const LabelAgreement& l, JsonWriter* w);
// The text table of label agreements (`judges` names what first and
// second index): judges, pairs, only first, only second, kappa, weighted
// kappa, alpha, each estimate with its interval.
void AppendLabelAgreementTable(std::span<const std::string> judges,
                               std::span<const LabelAgreement> labels,
                               const JudgeCompareOptions& options,
                               std::string* out);
// The labels both qrels grade.
LabelAgreement CompareLabels(const Qrels& first, const Qrels& second,
                             const JudgeCompareOptions& options);

// `qrels[j]` named `judges[j]`, and `evaluated[j]` the same runs evaluated
// under it (EvaluateRunFiles). Errors: fewer than two judges, sizes that
// differ, or evaluations whose runs or measures differ.
StatusOr<JudgeComparison> CompareJudges(
    std::span<const std::string> judges, std::span<const Qrels> qrels,
    std::span<const EvaluatedRuns> evaluated,
    const JudgeCompareOptions& options);

void WriteJudgeComparisonText(const JudgeComparison& c, std::string* out);
// {"judges": [...], "runs": [...], "measures": [...], "options": {...},
//  "agreement": [{"judges": [X, Y], "pairs": N, "kappa": k, ...}],
//  "means": {judge: {run: {measure: mean}}}, "rankings": [...]}.
void WriteJudgeComparisonJson(const JudgeComparison& c, std::string* out);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_JUDGE_COMPARE_H_
