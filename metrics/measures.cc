#include "metrics/measures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>

namespace rankwatch::metrics {

namespace {

template <typename Enum, size_t N>
std::optional<Enum> ParseByName(
    std::string_view name,
    const std::array<std::pair<std::string_view, Enum>, N>& table) {
  for (const auto& [n, e] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<std::string_view, Gain>, 2> kGainNames = {{
    {"linear", Gain::kLinear},
    {"exponential", Gain::kExponential},
}};
constexpr std::array<std::pair<std::string_view, RecallDenominator>, 2>
    kRecallNames = {{
        {"relevant", RecallDenominator::kRelevant},
        {"min_k_relevant", RecallDenominator::kMinCutoffRelevant},
    }};
constexpr std::array<std::pair<std::string_view, ApDenominator>, 3> kApNames = {
    {
        {"relevant", ApDenominator::kRelevant},
        {"min_k_relevant", ApDenominator::kMinCutoffRelevant},
        {"retrieved_relevant", ApDenominator::kRetrievedRelevant},
    }};
constexpr std::array<std::pair<std::string_view, ZeroRelevantPolicy>, 2>
    kZeroNames = {{
        {"score_zero", ZeroRelevantPolicy::kScoreZero},
        {"skip", ZeroRelevantPolicy::kSkip},
    }};
template <typename Enum, size_t N>
std::string_view NameOf(
    Enum e, const std::array<std::pair<std::string_view, Enum>, N>& table) {
  for (const auto& [n, v] : table) {
    if (v == e) return n;
  }
  return "?";
}

// log2(r + 1) for ranks below kDiscountTableSize, computed once by
// std::log2 itself (so the same bits): a lookup instead of a libm call per
// relevant doc on the hot path.
constexpr int64_t kDiscountTableSize = 1024;

const std::array<double, kDiscountTableSize>& DiscountTable() {
  static const std::array<double, kDiscountTableSize> table = [] {
    std::array<double, kDiscountTableSize> t{};
    for (int64_t r = 0; r < kDiscountTableSize; ++r) {
      t[static_cast<size_t>(r)] = std::log2(static_cast<double>(r + 1));
    }
    return t;
  }();
  return table;
}

// Discount of rank r (1-based): log2(r + 1), as trec_eval computes it.
inline double Discount(int64_t rank) {
  if (rank < kDiscountTableSize) {
    return DiscountTable()[static_cast<size_t>(rank)];
  }
  return std::log2(static_cast<double>(rank + 1));
}

inline double Ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

}  // namespace

std::string_view GainName(Gain g) { return NameOf(g, kGainNames); }
std::string_view RecallDenominatorName(RecallDenominator d) {
  return NameOf(d, kRecallNames);
}
std::string_view ApDenominatorName(ApDenominator d) {
  return NameOf(d, kApNames);
}
std::string_view ZeroRelevantPolicyName(ZeroRelevantPolicy p) {
  return NameOf(p, kZeroNames);
}
std::optional<Gain> ParseGain(std::string_view name) {
  return ParseByName(name, kGainNames);
}
std::optional<RecallDenominator> ParseRecallDenominator(std::string_view name) {
  return ParseByName(name, kRecallNames);
}
std::optional<ApDenominator> ParseApDenominator(std::string_view name) {
  return ParseByName(name, kApNames);
}
std::optional<ZeroRelevantPolicy> ParseZeroRelevantPolicy(
    std::string_view name) {
  return ParseByName(name, kZeroNames);
}
std::string_view MeasureName(Measure m) { return GetMeasureInfo(m).name; }
std::optional<Measure> ParseMeasure(std::string_view name) {
  for (const MeasureInfo& info : kMeasureTable) {
    if (info.name == name) return info.measure;
  }
  return std::nullopt;
}

Evaluator::Evaluator(std::vector<int32_t> cutoffs, Definitions definitions)
    : cutoffs_(std::move(cutoffs)),
      definitions_(definitions),
      ideal_at_cutoff_(cutoffs_.size()) {}

StatusOr<Evaluator> Evaluator::Create(std::vector<int32_t> cutoffs,
                                      Definitions definitions) {
  std::sort(cutoffs.begin(), cutoffs.end());
  for (size_t i = 0; i < cutoffs.size(); ++i) {
    if (cutoffs[i] < 1) {
      return Status::InvalidArgument("cutoff " + std::to_string(cutoffs[i]) +
                                     " is not a positive integer");
    }
    if (i > 0 && cutoffs[i] == cutoffs[i - 1]) {
      return Status::InvalidArgument("duplicate cutoff " +
                                     std::to_string(cutoffs[i]));
    }
  }
  if (definitions.relevance_threshold < 0) {
    return Status::InvalidArgument(
        "relevance threshold must be >= 0 (negative grades mean unjudged)");
  }
  return Evaluator(std::move(cutoffs), definitions);
}

int Evaluator::CutoffIndex(int32_t k) const {
  auto it = std::lower_bound(cutoffs_.begin(), cutoffs_.end(), k);
  if (it == cutoffs_.end() || *it != k) return -1;
  return static_cast<int>(it - cutoffs_.begin());
}

double Evaluator::GainOf(Grade g) const {
  if (g <= 0) return 0.0;
  switch (definitions_.gain) {
    case Gain::kLinear:
      return static_cast<double>(g);
    case Gain::kExponential:
      return std::exp2(static_cast<double>(g)) - 1.0;
  }
  return 0.0;
}

double Evaluator::RecallDivisor(int64_t num_rel, int64_t k) const {
  switch (definitions_.recall_denominator) {
    case RecallDenominator::kRelevant:
      return static_cast<double>(num_rel);
    case RecallDenominator::kMinCutoffRelevant:
      return static_cast<double>(std::min(k, num_rel));
  }
  return 0.0;
}

double Evaluator::ApDivisor(int64_t num_rel, int64_t k, int64_t hits) const {
  switch (definitions_.ap_denominator) {
    case ApDenominator::kRelevant:
      return static_cast<double>(num_rel);
    case ApDenominator::kMinCutoffRelevant:
      return static_cast<double>(std::min(k, num_rel));
    case ApDenominator::kRetrievedRelevant:
      return static_cast<double>(hits);
  }
  return 0.0;
}

// Ideal DCG at each cutoff and over all judged docs with grade > 0, summed in
// rank order exactly as trec_eval's ndcg and ndcg_cut do.
void Evaluator::ComputeIdeal(std::span<const Grade> judgments,
                             ListScores* out) {
  ideal_grades_.clear();
  int64_t num_rel = 0;
  for (Grade g : judgments) {
    if (g >= definitions_.relevance_threshold) ++num_rel;
    if (g > 0) ideal_grades_.push_back(g);
  }
  out->num_rel = num_rel;
  std::sort(ideal_grades_.begin(), ideal_grades_.end(), std::greater<>());

  double sum = 0.0;
  size_t c = 0;
  const int64_t m = static_cast<int64_t>(ideal_grades_.size());
  for (int64_t i = 0; i < m; ++i) {
    while (c < cutoffs_.size() && cutoffs_[c] == i) {
      ideal_at_cutoff_[c++] = sum;
    }
    sum += GainOf(ideal_grades_[i]) / Discount(i + 1);
  }
  for (; c < cutoffs_.size(); ++c) ideal_at_cutoff_[c] = sum;
  ideal_total_ = sum;
}

void Evaluator::Evaluate(std::span<const Grade> ranked,
                         std::span<const Grade> judgments, ListScores* out) {
  ComputeIdeal(judgments, out);
  const int64_t num_rel = out->num_rel;
  const Grade threshold = definitions_.relevance_threshold;
  const int64_t n = static_cast<int64_t>(ranked.size());
  out->at.resize(cutoffs_.size());
  out->num_ret = n;
  out->r_precision = 0;

  int64_t rel_so_far = 0;
  int64_t judged_so_far = 0;
  int64_t first_rel_rank = 0;
  double ap_sum = 0.0;
  double dcg = 0.0;
  size_t c = 0;  // Next cutoff to record.

  // Records the values at cutoff index `ci` from the running counters, which
  // cover ranks 1..min(k, n).
  auto record = [&](size_t ci) {
    const int64_t k = cutoffs_[ci];
    AtCutoff& a = out->at[ci];
    a.precision = Ratio(rel_so_far, k);
    a.judged = Ratio(judged_so_far, k);
    a.hits = static_cast<double>(rel_so_far);
    a.success = rel_so_far > 0 ? 1.0 : 0.0;
    a.reciprocal_rank =
        first_rel_rank > 0 ? 1.0 / static_cast<double>(first_rel_rank) : 0.0;
    a.dcg = dcg;
    a.ndcg = ideal_at_cutoff_[ci] > 0.0 ? dcg / ideal_at_cutoff_[ci] : 0.0;
    if (num_rel > 0) {
      const double rd = RecallDivisor(num_rel, k);
      a.recall = rd > 0 ? static_cast<double>(rel_so_far) / rd : 0.0;
      const double ad = ApDivisor(num_rel, k, rel_so_far);
      a.average_precision = ad > 0 ? ap_sum / ad : 0.0;
    } else {
      a.recall = 0.0;
      a.average_precision = 0.0;
    }
  };

  for (int64_t i = 0; i < n; ++i) {
    const Grade g = ranked[i];
    if (g >= 0) ++judged_so_far;
    if (g >= threshold && g >= 0) {
      ++rel_so_far;
      ap_sum += static_cast<double>(rel_so_far) / static_cast<double>(i + 1);
      if (first_rel_rank == 0) first_rel_rank = i + 1;
    }
    if (g > 0) dcg += GainOf(g) / Discount(i + 1);
    if (i + 1 == num_rel) out->r_precision = Ratio(rel_so_far, num_rel);
    while (c < cutoffs_.size() && cutoffs_[c] == i + 1) record(c++);
  }
  for (; c < cutoffs_.size(); ++c) record(c);  // Cutoffs beyond the list.

  if (n < num_rel) out->r_precision = Ratio(rel_so_far, num_rel);
  out->num_rel_ret = rel_so_far;
  out->num_judged_ret = judged_so_far;
  out->first_rel_rank = first_rel_rank;
  out->reciprocal_rank =
      first_rel_rank > 0 ? 1.0 / static_cast<double>(first_rel_rank) : 0.0;
  out->dcg = dcg;
  out->ndcg = ideal_total_ > 0.0 ? dcg / ideal_total_ : 0.0;
  // No cutoff: k is unbounded, so min(k, R) = R.
  const double ad =
      ApDivisor(num_rel, std::numeric_limits<int64_t>::max(), rel_so_far);
  out->average_precision = (num_rel > 0 && ad > 0) ? ap_sum / ad : 0.0;
  ComputeRankCorrelations(ranked, out);
}

// Spearman's rho (Spearman 1904) and Kendall's tau-b (Kendall 1945) of
// x = -rank and y = grade over the judged retrieved docs, as
// scipy.stats.spearmanr and kendalltau compute them: undefined (NaN) below
// two such docs or when they all have one grade. x = -rank so that a list
// with its higher grades first scores +1.
void Evaluator::ComputeRankCorrelations(std::span<const Grade> ranked,
                                        ListScores* out) {
  constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();
  out->spearman = kUndefined;
  out->kendall_tau = kUndefined;
  if (!rank_correlations_) return;
  judged_grades_.clear();
  for (const Grade g : ranked) {
    if (g >= 0) judged_grades_.push_back(g);  // Negative: unjudged.
  }
  const OrderGradeCorrelation c =
      OrderGradeCorrelations(judged_grades_, &correlation_scratch_);
  out->spearman = c.spearman.value_or(kUndefined);
  out->kendall_tau = c.kendall_tau.value_or(kUndefined);
}

namespace {

// The number of Measure enumerators. The switch has no default, so a new
// enumerator fails the build here (-Wswitch is an error) until it is
// listed and, as the last one, named below; the static_assert then asks
// for its row in kMeasureTable.
constexpr size_t MeasureCount() {
  constexpr Measure kLast = Measure::kKendallTau;
  switch (kLast) {
    case Measure::kPrecision:
    case Measure::kRecall:
    case Measure::kReciprocalRank:
    case Measure::kAveragePrecision:
    case Measure::kNdcg:
    case Measure::kSuccess:
    case Measure::kRPrecision:
    case Measure::kJudged:
    case Measure::kCtr:
    case Measure::kClicks:
    case Measure::kAbandonment:
    case Measure::kFirstClickRank:
    case Measure::kRecipRankFirstClick:
    case Measure::kSpearman:
    case Measure::kKendallTau:
      break;
  }
  return static_cast<size_t>(kLast) + 1;
}
static_assert(MeasureCount() == kMeasureTable.size(),
              "every Measure needs its row in kMeasureTable");

bool Has(Measure m, uint32_t flag) {
  return (GetMeasureInfo(m).flags & flag) != 0;
}

}  // namespace

bool HasCutoffVariant(Measure m) { return Has(m, MeasureFlag::kCutVariant); }
bool HasUncutVariant(Measure m) { return Has(m, MeasureFlag::kUncutVariant); }
bool HigherIsBetter(Measure m) { return !Has(m, MeasureFlag::kLowerIsBetter); }
bool IsClickMeasure(Measure m) { return Has(m, MeasureFlag::kClick); }
bool IsQualityMeasure(Measure m) { return Has(m, MeasureFlag::kQuality); }
bool DefinedForEveryList(Measure m) {
  return !Has(m, MeasureFlag::kSometimesUndefined);
}
bool IsRankCorrelationMeasure(Measure m) {
  return Has(m, MeasureFlag::kRankCorrelation);
}

std::string TrecName(Measure m, std::optional<int32_t> k) {
  const MeasureInfo& info = GetMeasureInfo(m);
  // A measure without a cut series prints its one name at any k.
  if (!k || info.trec_cut_name.empty()) return std::string(info.trec_name);
  return std::string(info.trec_cut_name) + "_" + std::to_string(*k);
}

double MeasureValue(const ListScores& s, Measure m, int cutoff_index) {
  if (cutoff_index >= 0) {
    const AtCutoff& a = s.at[cutoff_index];
    switch (m) {
      case Measure::kPrecision:
        return a.precision;
      case Measure::kRecall:
        return a.recall;
      case Measure::kReciprocalRank:
        return a.reciprocal_rank;
      case Measure::kAveragePrecision:
        return a.average_precision;
      case Measure::kNdcg:
        return a.ndcg;
      case Measure::kSuccess:
        return a.success;
      case Measure::kRPrecision:
        return s.r_precision;
      case Measure::kJudged:
        return a.judged;
      case Measure::kCtr:
        return a.success;  // A click in the top k.
      case Measure::kClicks:
        return a.hits;
      case Measure::kAbandonment:
      case Measure::kFirstClickRank:
      case Measure::kRecipRankFirstClick:
      case Measure::kSpearman:
      case Measure::kKendallTau:
        // Uncut only: no series asks with a cutoff index; the uncut value.
        return MeasureValue(s, m, -1);
    }
    return 0.0;
  }
  // Uncut: set-based values for the measures trec_eval only has at cutoffs.
  switch (m) {
    case Measure::kPrecision:
      return Ratio(s.num_rel_ret, s.num_ret);
    case Measure::kRecall:
      return Ratio(s.num_rel_ret, s.num_rel);
    case Measure::kReciprocalRank:
      return s.reciprocal_rank;
    case Measure::kAveragePrecision:
      return s.average_precision;
    case Measure::kNdcg:
      return s.ndcg;
    case Measure::kSuccess:
      return s.num_rel_ret > 0 ? 1.0 : 0.0;
    case Measure::kRPrecision:
      return s.r_precision;
    case Measure::kJudged:
      return Ratio(s.num_judged_ret, s.num_ret);
    case Measure::kCtr:
      return s.num_rel_ret > 0 ? 1.0 : 0.0;
    case Measure::kClicks:
      return static_cast<double>(s.num_rel_ret);
    case Measure::kAbandonment:
      return s.num_rel_ret > 0 ? 0.0 : 1.0;
    case Measure::kFirstClickRank:
      // Undefined without a click: NaN keeps the request out of the mean
      // rather than counting it at some made-up rank.
      return s.first_rel_rank > 0 ? static_cast<double>(s.first_rel_rank)
                                  : std::numeric_limits<double>::quiet_NaN();
    case Measure::kRecipRankFirstClick:
      return s.reciprocal_rank;  // Equal by definition under binary clicks.
    case Measure::kSpearman:
      return s.spearman;  // NaN when undefined for the list.
    case Measure::kKendallTau:
      return s.kendall_tau;
  }
  return 0.0;
}

}  // namespace rankwatch::metrics
