#include "trec/trec_measures.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "trec/qrels.h"

namespace rankwatch::trec {

namespace {

using metrics::Grade;
using metrics::Measure;

// What the computation of one selected item reads and writes: `out` holds
// the item's columns, `text` the relstring.
struct ItemContext {
  const MeasureSelection::Item& item;
  const std::vector<int>& cut;  // Engine cutoff index per item cutoff.
  const metrics::ListScores& engine;
  const JudgedRanking& r;
  Grade level;                     // -l
  int64_t num_docs_in_collection;  // -N
  std::span<double> out;
  std::string* text;
  GainTable* gains;              // Scratch for the gain-map families.
  std::vector<double>* scratch;  // Scratch for 11pt_avg.
};

// The engine's value of `m` at each of the item's cutoffs.
template <Measure m>
void EngineCut(const ItemContext& c) {
  for (size_t i = 0; i < c.item.cutoffs.size(); ++i) {
    c.out[i] = metrics::MeasureValue(c.engine, m, c.cut[i]);
  }
}

// The engine's value of an uncut measure (-1: no cutoff).
template <Measure m>
void EngineUncut(const ItemContext& c) {
  c.out[0] = metrics::MeasureValue(c.engine, m, -1);
}

void SetupGains(const ItemContext& c) {
  c.gains->Setup(c.item.pairs, c.r.levels);
}

// runid and num_q: one per query (the summary counts or names them).
void One(const ItemContext& c) { c.out[0] = 1; }
void NumRet(const ItemContext& c) {
  c.out[0] = static_cast<double>(c.engine.num_ret);
}
void NumRel(const ItemContext& c) {
  c.out[0] = static_cast<double>(c.engine.num_rel);
}
void NumRelRet(const ItemContext& c) {
  c.out[0] = static_cast<double>(c.engine.num_rel_ret);
}
void Map(const ItemContext& c) { c.out[0] = c.engine.average_precision; }
void GmMap(const ItemContext& c) { c.out[0] = ComputeGmMap(c.r, c.level); }
void Rprec(const ItemContext& c) { c.out[0] = c.engine.r_precision; }
void Bpref(const ItemContext& c) { c.out[0] = ComputeBpref(c.r, c.level); }

// recip_rank without cutoffs first (when asked for bare), then at each
// cutoff (rankwatch's recip_rank.k).
void RecipRank(const ItemContext& c) {
  size_t o = 0;
  if (c.item.uncut) c.out[o++] = c.engine.reciprocal_rank;
  for (size_t i = 0; i < c.item.cutoffs.size(); ++i) {
    c.out[o++] =
        metrics::MeasureValue(c.engine, Measure::kReciprocalRank, c.cut[i]);
  }
}

void IprecAtRecall(const ItemContext& c) {
  InterpolatedPrecision(c.r, c.level, c.item.values, c.out);
}
void Relstring(const ItemContext& c) {
  ComputeRelstring(c.r, c.item.values.empty() ? 10.0 : c.item.values[0],
                   c.text);
}
void InfAp(const ItemContext& c) { c.out[0] = ComputeInfAp(c.r, c.level); }
void GmBpref(const ItemContext& c) { c.out[0] = ComputeGmBpref(c.r, c.level); }
void RprecMult(const ItemContext& c) {
  ComputeRprecMult(c.r, c.level, c.item.values, c.out);
}

// utility (m_utility.c): the coefficients weigh the four cells of the
// contingency table, the last from -N.
void Utility(const ItemContext& c) {
  const std::vector<double>& p = c.item.values;
  const JudgedRanking& r = c.r;
  const auto rel_ret = static_cast<double>(r.num_rel_ret);
  const auto ret = static_cast<double>(r.num_ret());
  const auto rel = static_cast<double>(r.num_rel);
  c.out[0] = p[0] * rel_ret + p[1] * (ret - rel_ret) + p[2] * (rel - rel_ret) +
             p[3] * (static_cast<double>(c.num_docs_in_collection) + rel_ret -
                     ret - rel);
}

void ElevenPtAvg(const ItemContext& c) {
  std::vector<double>& scratch = *c.scratch;
  scratch.assign(c.item.values.size(), 0.0);
  InterpolatedPrecision(c.r, c.level, c.item.values, scratch);
  double sum = 0.0;
  // trec_eval adds from the highest level down.
  for (size_t i = scratch.size(); i > 0; --i) sum += scratch[i - 1];
  c.out[0] = sum / static_cast<double>(c.item.values.size());
}

void BinG(const ItemContext& c) { c.out[0] = ComputeBinG(c.r, c.level); }
void G(const ItemContext& c) {
  SetupGains(c);
  c.out[0] = ComputeG(c.r, c.gains);
}
// dcg and ideal_dcg; ndcg with a gain map.
void Dcg(const ItemContext& c) {
  SetupGains(c);
  ComputeNdcg(c.r, c.gains, c.item.measure, &c.out[0]);
}
void Ndcg(const ItemContext& c) {
  if (c.item.pairs.empty()) {
    c.out[0] = c.engine.ndcg;
  } else {
    Dcg(c);
  }
}
void NdcgRel(const ItemContext& c) {
  SetupGains(c);
  c.out[0] = ComputeNdcgRel(c.r, c.gains);
}
void Rndcg(const ItemContext& c) {
  SetupGains(c);
  c.out[0] = ComputeRndcg(c.r, c.gains);
}
void RelativeP(const ItemContext& c) {
  ComputeRelativeP(c.r, c.level, c.item.cutoffs, c.out);
}

// The set measures (m_set_*.c) over the whole retrieved set; 0 where
// trec_eval leaves a 0/0 at its initial 0.
void SetP(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  if (r.num_ret()) {
    c.out[0] =
        static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_ret());
  }
}
void SetRelativeP(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  if (r.num_ret() && r.num_rel) {
    c.out[0] = static_cast<double>(r.num_rel_ret) /
               static_cast<double>(std::min(r.num_ret(), r.num_rel));
  }
}
void SetRecall(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  if (r.num_rel) {
    c.out[0] =
        static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_rel);
  }
}
void SetMap(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  if (r.num_ret() && r.num_rel) {
    c.out[0] =
        (static_cast<double>(r.num_rel_ret) *
         static_cast<double>(r.num_rel_ret)) /
        (static_cast<double>(r.num_ret()) * static_cast<double>(r.num_rel));
  }
}
void SetF(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  if (r.num_rel_ret) {
    const double p =
        static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_ret());
    const double rc =
        static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_rel);
    const double x = c.item.values.empty() ? 1.0 : c.item.values[0];
    c.out[0] = (x + 1.0) * p * rc / (x * p + rc);
  }
}

void NumNonrelJudgedRet(const ItemContext& c) {
  const JudgedRanking& r = c.r;
  c.out[0] = static_cast<double>(r.num_ret() - r.num_nonpool -
                                 r.num_unjudged_in_pool - r.num_rel_ret);
}
void Rbp(const ItemContext& c) {
  SetupGains(c);
  c.out[0] = ComputeRbp(c.r, c.item.pairs, c.gains);
}
void RbpResid(const ItemContext& c) {
  c.out[0] = ComputeRbpResid(c.r, c.item.pairs);
}
void Unj(const ItemContext& c) { ComputeUnj(c.r, c.item.cutoffs, c.out); }

// Which function computes each family: one row per TrecMeasure, in its
// order (checked below), so a new family fails to compile until it has
// its row.
struct ComputeRow {
  TrecMeasure measure;
  void (*compute)(const ItemContext&);
};

using M = TrecMeasure;
constexpr ComputeRow kComputeRows[] = {
    {M::kRunid, One},
    {M::kNumQ, One},
    {M::kNumRet, NumRet},
    {M::kNumRel, NumRel},
    {M::kNumRelRet, NumRelRet},
    {M::kMap, Map},
    {M::kGmMap, GmMap},
    {M::kRprec, Rprec},
    {M::kBpref, Bpref},
    {M::kRecipRank, RecipRank},
    {M::kIprecAtRecall, IprecAtRecall},
    {M::kP, EngineCut<Measure::kPrecision>},
    {M::kRelstring, Relstring},
    {M::kRecall, EngineCut<Measure::kRecall>},
    {M::kInfAP, InfAp},
    {M::kGmBpref, GmBpref},
    {M::kRprecMult, RprecMult},
    {M::kUtility, Utility},
    {M::k11ptAvg, ElevenPtAvg},
    {M::kBinG, BinG},
    {M::kG, G},
    {M::kDcg, Dcg},
    {M::kIdealDcg, Dcg},
    {M::kNdcg, Ndcg},
    {M::kNdcgRel, NdcgRel},
    {M::kRndcg, Rndcg},
    {M::kNdcgCut, EngineCut<Measure::kNdcg>},
    {M::kMapCut, EngineCut<Measure::kAveragePrecision>},
    {M::kRelativeP, RelativeP},
    {M::kSuccess, EngineCut<Measure::kSuccess>},
    {M::kSetP, SetP},
    {M::kSetRelativeP, SetRelativeP},
    {M::kSetRecall, SetRecall},
    {M::kSetMap, SetMap},
    {M::kSetF, SetF},
    {M::kNumNonrelJudgedRet, NumNonrelJudgedRet},
    {M::kRbp, Rbp},
    {M::kRbpResid, RbpResid},
    {M::kUnj, Unj},
    {M::kJudged, EngineCut<Measure::kJudged>},
    {M::kSpearman, EngineUncut<Measure::kSpearman>},
    {M::kKendallTau, EngineUncut<Measure::kKendallTau>},
};
static_assert(std::size(kComputeRows) == kTrecMeasureCount,
              "every TrecMeasure needs its row in kComputeRows");

constexpr bool RowsInMeasureOrder() {
  for (size_t i = 0; i < std::size(kComputeRows); ++i) {
    if (static_cast<size_t>(kComputeRows[i].measure) != i) return false;
  }
  return true;
}
static_assert(RowsInMeasureOrder(),
              "kComputeRows must follow TrecMeasure's order");

}  // namespace

MeasureTable MeasureTable::Create(const MeasureSelection& selection,
                                  const Options& options) {
  MeasureTable t;
  t.selection_ = selection;
  t.options_ = options;
  const std::vector<int32_t> engine_cutoffs = selection.EngineCutoffs();
  for (size_t i = 0; i < selection.items().size(); ++i) {
    const MeasureSelection::Item& item = selection.items()[i];
    t.slots_.push_back(Slot{i, t.columns_.size()});
    AppendColumns(item, &t.columns_);
    std::vector<int> index;
    for (int32_t k : item.cutoffs) {
      auto it =
          std::lower_bound(engine_cutoffs.begin(), engine_cutoffs.end(), k);
      index.push_back(it != engine_cutoffs.end() && *it == k
                          ? static_cast<int>(it - engine_cutoffs.begin())
                          : -1);
    }
    t.cutoff_index_.push_back(std::move(index));
  }
  // trec_eval resets these for a missing query by their printed names:
  // utility, rbp_resid and relstring only without parameters, every unj_k.
  for (size_t c = 0; c < t.columns_.size(); ++c) {
    const std::string& name = t.columns_[c].name;
    if (name == "num_ret" || name == "utility" || name == "rbp_resid" ||
        name.starts_with("unj")) {
      t.reset_columns_.push_back(c);
    } else if (name == "relstring") {
      t.reset_relstring_ = true;
    }
  }
  return t;
}

void MeasureTable::Compute(const metrics::ListScores& engine,
                           const JudgedRanking& ranking, std::span<double> row,
                           std::string* text) {
  std::fill(row.begin(), row.end(), 0.0);
  text->clear();
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    const size_t end =
        s + 1 < slots_.size() ? slots_[s + 1].column : columns_.size();
    ComputeItem(selection_.items()[slot.item], cutoff_index_[s], engine,
                ranking, row.subspan(slot.column, end - slot.column), text);
  }
}

void MeasureTable::ComputeMissing(const metrics::ListScores& engine,
                                  std::span<const Grade> judgments,
                                  std::span<double> row, std::string* text) {
  missing_codes_.assign(options_.judged_only ? 0 : 1, kNotInPool);
  const JudgedRanking r = missing_builder_.Build(missing_codes_, judgments,
                                                 options_.relevance_level);
  Compute(engine, r, row, text);
  for (size_t c : reset_columns_) row[c] = 0.0;
  if (reset_relstring_) text->clear();
}

void MeasureTable::ComputeItem(const MeasureSelection::Item& item,
                               const std::vector<int>& cut,
                               const metrics::ListScores& engine,
                               const JudgedRanking& r, std::span<double> out,
                               std::string* text) {
  const ItemContext context{item,
                            cut,
                            engine,
                            r,
                            options_.relevance_level,
                            options_.num_docs_in_collection,
                            out,
                            text,
                            &gains_,
                            &scratch_};
  kComputeRows[static_cast<size_t>(item.measure)].compute(context);
}

void MeasureTable::AppendValue(const ReportColumn& column, double value,
                               std::string* out) {
  switch (column.format) {
    case ValueFormat::kInteger: {
      char buf[24];  // A 64-bit integer is at most 20 digits and a sign.
      const char* end =
          std::to_chars(buf, buf + sizeof(buf), static_cast<long>(value)).ptr;
      out->append(buf, static_cast<size_t>(end - buf));
      return;
    }
    case ValueFormat::kReal:
      AppendFixed4(value, out);
      return;
    case ValueFormat::kText:
      return;
  }
}

// std::to_chars with a precision is specified as printf's "%.*f" in the C
// locale (the exact decimal expansion, ties to even), without printf's
// format parsing and locale: a -q report formats 90,000 values or more.
// The width of 6 pads with leading spaces. Non-finite values, which printf
// spells "nan", "-nan", "inf" and "-inf", go to snprintf.
void MeasureTable::AppendFixed4(double value, std::string* out) {
  constexpr size_t kWidth = 6;
  // The largest double has 309 integer digits: with a sign, the point and
  // 4 decimals, 315 bytes.
  char buf[320];
  size_t n;
  if (std::isfinite(value)) {
    n = static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), value,
                                          std::chars_format::fixed, 4)
                                .ptr -
                            buf);
  } else {
    n = static_cast<size_t>(std::snprintf(buf, sizeof(buf), "%.4f", value));
  }
  if (n < kWidth) out->append(kWidth - n, ' ');
  out->append(buf, n);
}

}  // namespace rankwatch::trec
