// The ranking-metric engine: scores one ranked list against one query's
// judgments, for all configured cutoffs at once, in a single pass.
//
// Default semantics are NIST trec_eval's, exactly (see docs/metrics.md):
// relevance is grade >= relevance_threshold, R counts every judged doc of the
// query (retrieved or not), recall and AP divide by R, nDCG uses the linear
// grade as gain and its ideal ranking comes from all judged docs with grade
// > 0, negative grades mean "in the pool but unjudged". The other definitions
// in wide use are named options in `Definitions`.
//
// The engine works on grades, not doc ids: the caller maps each ranked doc to
// its grade (or kUnjudged) and passes the grades of all judged docs. That
// keeps it free of string handling and lets batch evaluation and the
// streaming join share it.
#ifndef RANKWATCH_METRICS_MEASURES_H_
#define RANKWATCH_METRICS_MEASURES_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/rank_correlation.h"

namespace rankwatch::metrics {

// A relevance grade as found in TREC qrels. Negative grades (trec_eval's -1)
// mark a doc as "in pool but unjudged"; they are never relevant, give no
// gain and do not count as judged.
using Grade = int32_t;
inline constexpr Grade kUnjudged = -1;  // A ranked doc with no judgment.

// Gain of a doc with grade g > 0 in (n)DCG.
enum class Gain {
  kLinear,       // g (trec_eval).
  kExponential,  // 2^g - 1 (Burges et al. 2005; Elasticsearch, TF-Ranking).
};

// Denominator of recall@k.
enum class RecallDenominator {
  kRelevant,           // R, all relevant judged docs (trec_eval).
  kMinCutoffRelevant,  // min(k, R): 1.0 is reachable for every k.
};

// Denominator of average precision (map, map_cut@k).
enum class ApDenominator {
  kRelevant,           // R (trec_eval).
  kMinCutoffRelevant,  // min(k, R).
  kRetrievedRelevant,  // Relevant docs retrieved in the top k (hits).
};

// What a query with R = 0 (no relevant judged doc) contributes to means.
// Applied by aggregators; the engine itself scores such a list as 0.
enum class ZeroRelevantPolicy {
  kScoreZero,  // Counts with 0 on every measure (trec_eval -c).
  kSkip,       // Left out of the means; counted separately.
};

struct Definitions {
  Grade relevance_threshold = 1;  // trec_eval -l.
  Gain gain = Gain::kLinear;
  RecallDenominator recall_denominator = RecallDenominator::kRelevant;
  ApDenominator ap_denominator = ApDenominator::kRelevant;
  ZeroRelevantPolicy zero_relevant = ZeroRelevantPolicy::kScoreZero;
  bool operator==(const Definitions&) const = default;
};

// Option names as written in configuration files and on command lines.
std::string_view GainName(Gain g);
std::string_view RecallDenominatorName(RecallDenominator d);
std::string_view ApDenominatorName(ApDenominator d);
std::string_view ZeroRelevantPolicyName(ZeroRelevantPolicy p);
std::optional<Gain> ParseGain(std::string_view name);
std::optional<RecallDenominator> ParseRecallDenominator(std::string_view name);
std::optional<ApDenominator> ParseApDenominator(std::string_view name);
std::optional<ZeroRelevantPolicy> ParseZeroRelevantPolicy(
    std::string_view name);

// Values at one cutoff k (ranks 1..k; a list shorter than k is padded with
// non-relevant docs, so precision and judged still divide by k).
struct AtCutoff {
  double precision = 0;          // P_k
  double recall = 0;             // recall_k
  double success = 0;            // success_k: 1 if a relevant doc in top k.
  double reciprocal_rank = 0;    // recip_rank_k: 0 if the first hit is > k.
  double average_precision = 0;  // map_cut_k
  double ndcg = 0;               // ndcg_cut_k
  double dcg = 0;                // DCG@k, unnormalized.
  double judged = 0;             // judged_k: judged docs in top k, over k.
  double hits = 0;  // Relevant (clicked) docs in the top k: clicks_k.
};

// Everything computed for one ranked list.
struct ListScores {
  int64_t num_ret = 0;           // Length of the ranked list.
  int64_t num_rel = 0;           // R.
  int64_t num_rel_ret = 0;       // Relevant docs anywhere in the list.
  int64_t num_judged_ret = 0;    // Judged (grade >= 0) docs in the list.
  int64_t first_rel_rank = 0;    // Rank of the first relevant doc; 0: none.
  double reciprocal_rank = 0;    // recip_rank, no cutoff.
  double average_precision = 0;  // map
  double ndcg = 0;               // ndcg over the whole list.
  double dcg = 0;
  double r_precision = 0;  // Rprec
  // Rank correlation of the order of the judged retrieved docs with their
  // grades (spearman, kendall_tau). NaN when undefined for the list, and
  // when the Evaluator does not compute them (set_rank_correlations).
  double spearman = std::numeric_limits<double>::quiet_NaN();
  double kendall_tau = std::numeric_limits<double>::quiet_NaN();
  std::vector<AtCutoff> at;  // Parallel to Evaluator::cutoffs().
};

// Scores ranked lists. Create one per thread: Evaluate() reuses internal
// scratch buffers so that the hot path does not allocate once warmed up.
// Not thread-safe; cheap to copy.
class Evaluator {
 public:
  // `cutoffs` may come in any order; they are sorted. Fails on a cutoff < 1,
  // a duplicate cutoff or a negative relevance threshold.
  static StatusOr<Evaluator> Create(std::vector<int32_t> cutoffs,
                                    Definitions definitions);

  const std::vector<int32_t>& cutoffs() const { return cutoffs_; }
  const Definitions& definitions() const { return definitions_; }
  // Index of `k` in cutoffs(), or -1.
  int CutoffIndex(int32_t k) const;

  // Whether Evaluate computes ListScores::spearman and kendall_tau (an
  // O(n log n) pass over the judged retrieved docs that the other measures
  // do not need); off by default, when both stay NaN. Turn it on when
  // any measure asked for IsRankCorrelationMeasure.
  void set_rank_correlations(bool on) { rank_correlations_ = on; }
  bool rank_correlations() const { return rank_correlations_; }

  // `ranked`: the grade of the doc at each rank, rank 1 first; kUnjudged
  // (or any negative grade) for a doc without a judgment.
  // `judgments`: the grades of every judged doc of the query, retrieved or
  // not, in any order (they determine R and the ideal DCG).
  void Evaluate(std::span<const Grade> ranked, std::span<const Grade> judgments,
                ListScores* out);

  double GainOf(Grade g) const;

 private:
  Evaluator(std::vector<int32_t> cutoffs, Definitions definitions);

  void ComputeIdeal(std::span<const Grade> judgments, ListScores* out);
  void ComputeRankCorrelations(std::span<const Grade> ranked, ListScores* out);
  double ApDivisor(int64_t num_rel, int64_t k, int64_t hits) const;
  double RecallDivisor(int64_t num_rel, int64_t k) const;

  std::vector<int32_t> cutoffs_;
  Definitions definitions_;
  std::vector<Grade> ideal_grades_;      // Scratch: positive grades, desc.
  std::vector<double> ideal_at_cutoff_;  // Scratch: IDCG@k per cutoff.
  double ideal_total_ = 0;               // Scratch: IDCG of all positives.
  bool rank_correlations_ = false;
  std::vector<Grade> judged_grades_;  // Scratch: judged, in rank order.
  RankCorrelationScratch correlation_scratch_;
};

// The measures rankwatch aggregates and exports, by their long names.
//
// The click measures (kCtr ... kRecipRankFirstClick) read the judgments of a
// request as clicks: a doc is clicked when its grade is >= the relevance
// threshold (binary click relevance). They are meant for impression mode,
// where each request's judgments are its own clicks; see docs/metrics.md.
//
// The rank correlation measures (kSpearman, kKendallTau) are rankwatch's:
// how well the order of a list's judged retrieved docs agrees with their
// grades, +1 when higher grades always come first.
//
// A new measure goes last, with its row in kMeasureTable below.
enum class Measure {
  kPrecision,
  kRecall,
  kReciprocalRank,
  kAveragePrecision,
  kNdcg,
  kSuccess,
  kRPrecision,
  kJudged,
  kCtr,                  // ctr_k: 1 if a doc in the top k was clicked.
  kClicks,               // clicks_k: clicked docs in the top k.
  kAbandonment,          // 1 if no served doc was clicked. Lower is better.
  kFirstClickRank,       // Rank of the first click; undefined without one.
  kRecipRankFirstClick,  // 1 / first_click_rank, 0 without a click.
  kSpearman,             // Spearman's rho of -rank and grade.
  kKendallTau,           // Kendall's tau-b of -rank and grade.
};

// One accepted spelling of a measure's name outside rankwatch's own
// (metrics/measure_names.h reads them), and which series it names: the
// measure without a cutoff (uncut), at a cutoff k (cut), or both.
struct MeasureSpelling {
  std::string_view name;  // "" for an unused slot.
  bool uncut = false;
  bool cut = false;
};

// Bits of MeasureInfo::flags.
struct MeasureFlag {
  static constexpr uint32_t kCutVariant = 1u << 0;    // Defined at a cutoff.
  static constexpr uint32_t kUncutVariant = 1u << 1;  // Defined without one.
  static constexpr uint32_t kLowerIsBetter = 1u << 2;
  static constexpr uint32_t kQuality = 1u << 3;  // Rates ranking quality.
  static constexpr uint32_t kClick = 1u << 4;    // Reads judgments as clicks.
  // Some lists have no value (NaN, left out of the means).
  static constexpr uint32_t kSometimesUndefined = 1u << 5;
  // Computed only when asked (Evaluator::set_rank_correlations).
  static constexpr uint32_t kRankCorrelation = 1u << 6;
};

// Everything rankwatch knows about a measure except how to compute it
// (Evaluator::Evaluate and MeasureValue do that): its names, its flags and
// its help text. The predicates below, MeasureName, ParseMeasure, TrecName,
// the exporter's HELP texts and measure_names' spelling tables all read
// kMeasureTable; adding a measure means adding its enumerator, its row
// (static_asserts below check that every enumerator has one, in order) and
// its computation (Evaluator::Evaluate, MeasureValue).
struct MeasureInfo {
  Measure measure;
  std::string_view name;  // rankwatch's (Prometheus, YAML, JSON) name.
  uint32_t flags;         // MeasureFlag bits.
  // How trec_eval-style outputs (eval, compare, replay, the status page)
  // print the series: trec_name without a cutoff, trec_cut_name + "_k" at
  // cutoff k ("" when only the uncut series exists).
  std::string_view trec_name;
  std::string_view trec_cut_name;
  // trec_eval's `-m` family of the uncut and the cut series; "" when
  // trec_eval has none (the click measures are rankwatch's).
  std::string_view trec_family;
  std::string_view trec_cut_family;
  // The names trec_eval's `-m` and its printed output accept (with '.' or
  // '_' before k), and ir_measures' names and aliases (with '@' before k).
  std::array<MeasureSpelling, 2> trec_spellings;
  std::array<MeasureSpelling, 2> ir_spellings;
  // What the measure is, for the Prometheus HELP texts ("Per-list <help>,
  // ..."). Dashboards may compare them: change with care.
  std::string_view help;
};

// One row per enumerator of Measure, in enumerator order.
inline constexpr std::array<MeasureInfo, 15> kMeasureTable = [] {
  using F = MeasureFlag;
  constexpr auto uncut = [](std::string_view n) {
    return MeasureSpelling{n, true, false};
  };
  constexpr auto cut = [](std::string_view n) {
    return MeasureSpelling{n, false, true};
  };
  constexpr auto both = [](std::string_view n) {
    return MeasureSpelling{n, true, true};
  };
  constexpr MeasureSpelling none{};
  constexpr uint32_t kQualityCut = F::kCutVariant | F::kQuality;
  constexpr uint32_t kQualityUncut = F::kUncutVariant | F::kQuality;
  constexpr uint32_t kQualityBoth = kQualityCut | kQualityUncut;
  return std::array<MeasureInfo, 15>{{
      {.measure = Measure::kPrecision,
       .name = "precision",
       .flags = kQualityCut,
       .trec_name = "P",
       .trec_cut_name = "P",
       .trec_family = "",
       .trec_cut_family = "P",
       .trec_spellings = {cut("P"), none},
       .ir_spellings = {cut("P"), cut("Precision")},
       .help = "precision at k (trec_eval P_k)"},
      {.measure = Measure::kRecall,
       .name = "recall",
       .flags = kQualityCut,
       .trec_name = "recall",
       .trec_cut_name = "recall",
       .trec_family = "",
       .trec_cut_family = "recall",
       .trec_spellings = {cut("recall"), none},
       .ir_spellings = {cut("R"), cut("Recall")},
       .help = "recall at k (trec_eval recall_k)"},
      {.measure = Measure::kReciprocalRank,
       .name = "reciprocal_rank",
       .flags = kQualityBoth,
       .trec_name = "recip_rank",
       .trec_cut_name = "recip_rank",
       .trec_family = "recip_rank",
       .trec_cut_family = "recip_rank",
       .trec_spellings = {both("recip_rank"), none},
       .ir_spellings = {both("RR"), both("MRR")},
       .help = "reciprocal rank of the first relevant doc in the top k or, "
               "for k=all, the whole list (trec_eval recip_rank)"},
      {.measure = Measure::kAveragePrecision,
       .name = "average_precision",
       .flags = kQualityBoth,
       .trec_name = "map",
       .trec_cut_name = "map_cut",
       .trec_family = "map",
       .trec_cut_family = "map_cut",
       .trec_spellings = {uncut("map"), cut("map_cut")},
       .ir_spellings = {both("AP"), both("MAP")},
       .help = "average precision at k or, for k=all, over the whole list "
               "(trec_eval map_cut_k, map)"},
      {.measure = Measure::kNdcg,
       .name = "ndcg",
       .flags = kQualityBoth,
       .trec_name = "ndcg",
       .trec_cut_name = "ndcg_cut",
       .trec_family = "ndcg",
       .trec_cut_family = "ndcg_cut",
       .trec_spellings = {uncut("ndcg"), cut("ndcg_cut")},
       .ir_spellings = {both("nDCG"), both("NDCG")},
       .help = "nDCG at k or, for k=all, over the whole list (trec_eval "
               "ndcg_cut_k, ndcg)"},
      {.measure = Measure::kSuccess,
       .name = "success",
       .flags = kQualityCut,
       .trec_name = "success",
       .trec_cut_name = "success",
       .trec_family = "",
       .trec_cut_family = "success",
       .trec_spellings = {cut("success"), none},
       .ir_spellings = {cut("Success"), none},
       .help = "success at k: 1 if a relevant doc is in the top k, else 0 "
               "(trec_eval success_k)"},
      {.measure = Measure::kRPrecision,
       .name = "r_precision",
       .flags = kQualityUncut,
       .trec_name = "Rprec",
       .trec_cut_name = "",
       .trec_family = "Rprec",
       .trec_cut_family = "",
       .trec_spellings = {uncut("Rprec"), none},
       .ir_spellings = {uncut("Rprec"), uncut("RPrec")},
       .help = "precision at rank R, the number of relevant docs (trec_eval "
               "Rprec)"},
      // Rates judgment coverage, not ranking quality: no kQuality.
      {.measure = Measure::kJudged,
       .name = "judged",
       .flags = F::kCutVariant,
       .trec_name = "judged",
       .trec_cut_name = "judged",
       .trec_family = "",
       .trec_cut_family = "judged",
       .trec_spellings = {cut("judged"), none},
       .ir_spellings = {cut("Judged"), none},
       .help = "fraction of the top k that is judged (judged_k)"},
      // The click measures are rankwatch's: no trec_eval family.
      {.measure = Measure::kCtr,
       .name = "ctr",
       .flags = kQualityCut | F::kClick,
       .trec_name = "ctr",
       .trec_cut_name = "ctr",
       .trec_family = "",
       .trec_cut_family = "",
       .trec_spellings = {cut("ctr"), none},
       .ir_spellings = {none, none},
       .help = "click-through at k: 1 if a doc in the top k was clicked, else "
               "0 (ctr_k)"},
      {.measure = Measure::kClicks,
       .name = "clicks",
       .flags = kQualityCut | F::kClick,
       .trec_name = "clicks",
       .trec_cut_name = "clicks",
       .trec_family = "",
       .trec_cut_family = "",
       .trec_spellings = {cut("clicks"), none},
       .ir_spellings = {none, none},
       .help = "clicked docs in the top k (clicks_k; counts above 1 fall in "
               "the +Inf bucket)"},
      // Fewer abandoned requests is better.
      {.measure = Measure::kAbandonment,
       .name = "abandonment",
       .flags = kQualityUncut | F::kClick | F::kLowerIsBetter,
       .trec_name = "abandonment",
       .trec_cut_name = "",
       .trec_family = "",
       .trec_cut_family = "",
       .trec_spellings = {none, none},
       .ir_spellings = {none, none},
       .help = "abandonment: 1 if no served doc was clicked, else 0; lower is "
               "better"},
      // A first click nearer the top is better; a list without a click has
      // none.
      {.measure = Measure::kFirstClickRank,
       .name = "first_click_rank",
       .flags = kQualityUncut | F::kClick | F::kLowerIsBetter |
                F::kSometimesUndefined,
       .trec_name = "first_click_rank",
       .trec_cut_name = "",
       .trec_family = "",
       .trec_cut_family = "",
       .trec_spellings = {none, none},
       .ir_spellings = {none, none},
       .help = "rank of the first clicked doc, over lists with a click only; "
               "lower is better (ranks above 1 fall in the +Inf bucket)"},
      {.measure = Measure::kRecipRankFirstClick,
       .name = "recip_rank_first_click",
       .flags = kQualityUncut | F::kClick,
       .trec_name = "recip_rank_first_click",
       .trec_cut_name = "",
       .trec_family = "",
       .trec_cut_family = "",
       .trec_spellings = {none, none},
       .ir_spellings = {none, none},
       .help = "reciprocal rank of the first clicked doc, 0 without a click "
               "(recip_rank under binary click relevance)"},
      // Undefined below two judged retrieved docs or with one grade.
      {.measure = Measure::kSpearman,
       .name = "spearman",
       .flags = kQualityUncut | F::kSometimesUndefined | F::kRankCorrelation,
       .trec_name = "spearman",
       .trec_cut_name = "",
       .trec_family = "spearman",
       .trec_cut_family = "",
       .trec_spellings = {uncut("spearman"), none},
       .ir_spellings = {none, none},
       .help = "Spearman's rho between the order of the judged retrieved docs "
               "and their grades, in [-1, 1], over lists with two or more such "
               "docs and two or more grades (values below 0.1 fall in the "
               "0.1 bucket)"},
      {.measure = Measure::kKendallTau,
       .name = "kendall_tau",
       .flags = kQualityUncut | F::kSometimesUndefined | F::kRankCorrelation,
       .trec_name = "kendall_tau",
       .trec_cut_name = "",
       .trec_family = "kendall_tau",
       .trec_cut_family = "",
       .trec_spellings = {uncut("kendall_tau"), none},
       .ir_spellings = {none, none},
       .help = "Kendall's tau-b between the order of the judged retrieved docs "
               "and their grades, in [-1, 1], over lists with two or more such "
               "docs and two or more grades (values below 0.1 fall in the "
               "0.1 bucket)"},
  }};
}();

// The table has a row for every enumerator (measures.cc counts them), in
// order, so that kMeasureTable[static_cast<size_t>(m)] is m's row.
static_assert(
    [] {
      for (size_t i = 0; i < kMeasureTable.size(); ++i) {
        if (kMeasureTable[i].measure != static_cast<Measure>(i)) return false;
      }
      return true;
    }(),
    "kMeasureTable rows must follow the order of Measure's enumerators");

inline constexpr const MeasureInfo& GetMeasureInfo(Measure m) {
  return kMeasureTable[static_cast<size_t>(m)];
}

inline constexpr std::array<Measure, kMeasureTable.size()> kAllMeasures = [] {
  std::array<Measure, kMeasureTable.size()> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = kMeasureTable[i].measure;
  return all;
}();
// The measures computed when the configuration lists none (metrics.measures
// absent): the relevance measures. The click and rank correlation measures
// are opt-in.
inline constexpr std::array<Measure, 8> kDefaultMeasures = {
    Measure::kPrecision,        Measure::kRecall, Measure::kReciprocalRank,
    Measure::kAveragePrecision, Measure::kNdcg,   Measure::kSuccess,
    Measure::kRPrecision,       Measure::kJudged};

// "precision", "recall", "reciprocal_rank", ... (Prometheus and YAML names).
std::string_view MeasureName(Measure m);
std::optional<Measure> ParseMeasure(std::string_view name);
// Whether the measure is defined at a cutoff k, and without one ("all").
bool HasCutoffVariant(Measure m);
bool HasUncutVariant(Measure m);
// Whether a higher value is better: false for abandonment and
// first_click_rank, so A/B verdicts and alerts flip for them.
bool HigherIsBetter(Measure m);
// Whether the measure rates ranking quality. `judged` rates judgment
// coverage instead: A/B verdicts, multiple-testing families and regression
// alerts leave it out.
bool IsQualityMeasure(Measure m);
// Whether the measure reads a request's judgments as clicks (kCtr ...
// kRecipRankFirstClick): with metrics.click_exclude_kinds, from the
// judgments that may be clicks only.
bool IsClickMeasure(Measure m);
// Whether every scored list has a value (false for first_click_rank, which
// a list without a click lacks, and for spearman and kendall_tau, which a
// list with fewer than two judged retrieved docs or with all of them of one
// grade lacks: NaN, left out of its series' means).
bool DefinedForEveryList(Measure m);
// Whether the measure is spearman or kendall_tau, which the Evaluator
// computes only when asked (Evaluator::set_rank_correlations).
bool IsRankCorrelationMeasure(Measure m);
// trec_eval's name for the measure at cutoff k, or without one when k is
// nullopt: P_5, recall_10, map, map_cut_10, ndcg_cut_10, recip_rank,
// recip_rank_10 (rankwatch extension), Rprec, success_5, judged_10; for the
// click measures (rankwatch's): ctr_5, clicks_5, abandonment,
// first_click_rank, recip_rank_first_click; spearman and kendall_tau
// (rankwatch's, uncut only).
std::string TrecName(Measure m, std::optional<int32_t> k);

// The value of `m` in `scores`; `cutoff_index` indexes ListScores::at, or is
// -1 for the uncut variant. NaN when the measure is undefined for the list
// (first_click_rank without a click; spearman and kendall_tau below two
// judged retrieved docs or with one grade): aggregators leave NaN values
// out of that series' means (see IsDefinedValue).
double MeasureValue(const ListScores& scores, Measure m, int cutoff_index);

// Whether a value from MeasureValue enters means (false for NaN).
inline bool IsDefinedValue(double v) { return !std::isnan(v); }

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_MEASURES_H_
