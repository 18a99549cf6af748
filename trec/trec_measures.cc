#include "trec/trec_measures.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "base/strings.h"
#include "metrics/measure_names.h"

namespace rankwatch::trec {

namespace {

using metrics::Grade;
using metrics::Measure;

// trec_eval's floor for the geometric means (MIN_GEO_MEAN) and infAP's
// smoothing (INFAP_EPSILON), both .00001 in trec_eval.h.
constexpr double kMinGeoMean = 0.00001;
constexpr double kInfApEpsilon = 0.00001;

enum class Params {
  kNone,           // Parameters are ignored.
  kRecipRank,      // None, or rankwatch's integer cutoffs.
  kLongCutoffs,    // name.5,10: one row per cutoff, NAME_5.
  kDoubleCutoffs,  // name.0.1,0.2: one row per cutoff, NAME_0.10.
  kDoubleParams,   // name.1,-1,0,0: one row, NAME_<params as given>.
  kPairs,          // name.1=3,p=0.5: one row, NAME_<params as given>.
};

struct Family {
  std::string_view name;
  TrecMeasure measure;
  Params params;
  std::vector<double> defaults;  // Cutoffs or parameters.
  ValueFormat format;
  SummaryKind summary;
  bool per_query;
};

const std::vector<Family>& Families() {
  static const std::vector<double> kLong = {5,   10,  15,  20,  30,
                                            100, 200, 500, 1000};
  static const std::vector<double> kRecallLevels = {
      0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  static const std::vector<double> kRprecMults = {0.2, 0.4, 0.6, 0.8, 1.0,
                                                  1.2, 1.4, 1.6, 1.8, 2.0};
  using P = Params;
  using F = ValueFormat;
  using S = SummaryKind;
  using M = TrecMeasure;
  static const std::vector<Family>* families = new std::vector<Family>{
      {"runid", M::kRunid, P::kNone, {}, F::kText, S::kRunid, false},
      {"num_q", M::kNumQ, P::kNone, {}, F::kInteger, S::kNumQ, false},
      {"num_ret", M::kNumRet, P::kNone, {}, F::kInteger, S::kSum, true},
      {"num_rel", M::kNumRel, P::kNone, {}, F::kInteger, S::kSum, true},
      {"num_rel_ret", M::kNumRelRet, P::kNone, {}, F::kInteger, S::kSum, true},
      {"map", M::kMap, P::kNone, {}, F::kReal, S::kMean, true},
      {"gm_map", M::kGmMap, P::kNone, {}, F::kReal, S::kGeometricMean, false},
      {"Rprec", M::kRprec, P::kNone, {}, F::kReal, S::kMean, true},
      {"bpref", M::kBpref, P::kNone, {}, F::kReal, S::kMean, true},
      {"recip_rank",
       M::kRecipRank,
       P::kRecipRank,
       {},
       F::kReal,
       S::kMean,
       true},
      {"iprec_at_recall", M::kIprecAtRecall, P::kDoubleCutoffs, kRecallLevels,
       F::kReal, S::kMean, true},
      {"P", M::kP, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
      {"relstring",
       M::kRelstring,
       P::kDoubleParams,
       {10},
       F::kText,
       S::kNone,
       true},
      {"recall", M::kRecall, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
      {"infAP", M::kInfAP, P::kNone, {}, F::kReal, S::kMean, true},
      {"gm_bpref",
       M::kGmBpref,
       P::kNone,
       {},
       F::kReal,
       S::kGeometricMean,
       false},
      {"Rprec_mult", M::kRprecMult, P::kDoubleCutoffs, kRprecMults, F::kReal,
       S::kMean, true},
      {"utility",
       M::kUtility,
       P::kDoubleParams,
       {1.0, -1.0, 0.0, 0.0},
       F::kReal,
       S::kMean,
       true},
      {"11pt_avg", M::k11ptAvg, P::kDoubleParams, kRecallLevels, F::kReal,
       S::kMean, true},
      {"binG", M::kBinG, P::kNone, {}, F::kReal, S::kMean, true},
      {"G", M::kG, P::kPairs, {}, F::kReal, S::kMean, true},
      {"dcg", M::kDcg, P::kPairs, {}, F::kReal, S::kMean, true},
      {"ideal_dcg", M::kIdealDcg, P::kPairs, {}, F::kReal, S::kMean, true},
      {"ndcg", M::kNdcg, P::kPairs, {}, F::kReal, S::kMean, true},
      {"ndcg_rel", M::kNdcgRel, P::kPairs, {}, F::kReal, S::kMean, true},
      {"Rndcg", M::kRndcg, P::kPairs, {}, F::kReal, S::kMean, true},
      {"ndcg_cut", M::kNdcgCut, P::kLongCutoffs, kLong, F::kReal, S::kMean,
       true},
      {"map_cut", M::kMapCut, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
      {"relative_P", M::kRelativeP, P::kLongCutoffs, kLong, F::kReal, S::kMean,
       true},
      {"success",
       M::kSuccess,
       P::kLongCutoffs,
       {1, 5, 10},
       F::kReal,
       S::kMean,
       true},
      {"set_P", M::kSetP, P::kNone, {}, F::kReal, S::kMean, true},
      {"set_relative_P",
       M::kSetRelativeP,
       P::kNone,
       {},
       F::kReal,
       S::kMean,
       true},
      {"set_recall", M::kSetRecall, P::kNone, {}, F::kReal, S::kMean, true},
      {"set_map", M::kSetMap, P::kNone, {}, F::kReal, S::kMean, true},
      {"set_F", M::kSetF, P::kDoubleParams, {1.0}, F::kReal, S::kMean, true},
      {"num_nonrel_judged_ret",
       M::kNumNonrelJudgedRet,
       P::kNone,
       {},
       F::kInteger,
       S::kSum,
       true},
      {"rbp", M::kRbp, P::kPairs, {}, F::kReal, S::kMean, true},
      {"rbp_resid", M::kRbpResid, P::kPairs, {}, F::kReal, S::kMean, true},
      {"unj", M::kUnj, P::kLongCutoffs, {5, 10, 20}, F::kReal, S::kMean, true},
      {"judged",
       M::kJudged,
       P::kLongCutoffs,
       {5, 10, 20},
       F::kReal,
       S::kMean,
       true},
      {"spearman", M::kSpearman, P::kNone, {}, F::kReal, S::kDefinedMean, true},
      {"kendall_tau",
       M::kKendallTau,
       P::kNone,
       {},
       F::kReal,
       S::kDefinedMean,
       true},
  };
  return *families;
}

// trec_eval's nicknames (measures.c). The preference sets need judgment
// formats rankwatch does not read.
const std::vector<std::string_view>* Nickname(std::string_view name) {
  static const std::vector<std::string_view> kOfficial = {
      "runid",  "num_q", "num_ret", "num_rel",    "num_rel_ret",     "map",
      "gm_map", "Rprec", "bpref",   "recip_rank", "iprec_at_recall", "P"};
  static const std::vector<std::string_view> kAllTrec = {
      "runid",
      "num_q",
      "num_ret",
      "num_rel",
      "num_rel_ret",
      "map",
      "gm_map",
      "Rprec",
      "bpref",
      "recip_rank",
      "iprec_at_recall",
      "P",
      "relstring",
      "recall",
      "unj",
      "rbp",
      "rbp_resid",
      "infAP",
      "gm_bpref",
      "utility",
      "11pt_avg",
      "ndcg",
      "relative_P",
      "Rprec_mult",
      "success",
      "map_cut",
      "ndcg_cut",
      "ndcg_rel",
      "Rndcg",
      "binG",
      "G",
      "set_P",
      "set_recall",
      "set_relative_P",
      "set_map",
      "set_F",
      "num_nonrel_judged_ret"};
  static const std::vector<std::string_view> kSet = {
      "runid",          "num_q",   "num_ret", "num_rel",
      "num_rel_ret",    "utility", "set_P",   "set_recall",
      "set_relative_P", "set_map", "set_F"};
  if (name == "official") return &kOfficial;
  if (name == "all_trec") return &kAllTrec;
  if (name == "set") return &kSet;
  return nullptr;
}

bool IsPreferenceSet(std::string_view name) {
  return name == "all_prefs" || name == "prefs" || name == "qrels_jg";
}

// C's atol: leading blanks, a sign, digits up to the first non-digit; 0
// when there are none. Saturates instead of overflowing.
int64_t AtolLike(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) {
      v = std::numeric_limits<int64_t>::max();
      continue;
    }
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

// C's atof (0 when the text is not a number).
double AtofLike(std::string_view s) {
  const std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

Status SpecError(std::string_view spec, std::string_view what) {
  return Status::InvalidArgument("measure '" + Printable(spec) +
                                 "': " + std::string(what));
}

Status ParseLongCutoffs(std::string_view spec, std::string_view params,
                        std::vector<int32_t>* out) {
  std::vector<int64_t> cutoffs;
  for (std::string_view tok : SplitOn(params, ',')) {
    cutoffs.push_back(AtolLike(tok));
  }
  std::sort(cutoffs.begin(), cutoffs.end());
  if (cutoffs.front() <= 0) {
    return SpecError(spec, "cutoffs must be positive integers");
  }
  if (cutoffs.back() > std::numeric_limits<int32_t>::max()) {
    return SpecError(spec, "cutoff too large");
  }
  if (std::adjacent_find(cutoffs.begin(), cutoffs.end()) != cutoffs.end()) {
    return SpecError(spec, "duplicate cutoffs");
  }
  out->assign(cutoffs.begin(), cutoffs.end());
  return Status::Ok();
}

Status ParseDoubles(std::string_view spec, std::string_view params,
                    bool sorted_unique, std::vector<double>* out) {
  out->clear();
  for (std::string_view tok : SplitOn(params, ',')) {
    out->push_back(AtofLike(tok));
  }
  if (sorted_unique) {
    std::sort(out->begin(), out->end());
    if (std::adjacent_find(out->begin(), out->end()) != out->end()) {
      return SpecError(spec, "duplicate cutoffs");
    }
  }
  return Status::Ok();
}

// trec_eval's get_param_pairs: comma-separated name=value, each with one
// '=' and a name.
Status ParsePairs(std::string_view spec, std::string_view params,
                  std::vector<ParamPair>* out) {
  out->clear();
  for (std::string_view tok : SplitOn(params, ',')) {
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0 ||
        tok.find('=', eq + 1) != std::string_view::npos) {
      return SpecError(spec, "parameters must be name=value pairs");
    }
    out->push_back(ParamPair{std::string(tok.substr(0, eq)),
                             AtofLike(tok.substr(eq + 1))});
  }
  return Status::Ok();
}

const Family* FindFamily(std::string_view name) {
  for (const Family& f : Families()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const Family& FamilyOf(TrecMeasure m) {
  return Families()[static_cast<size_t>(m)];
}

// Fills `item`'s parameters from `params` (nullopt: the defaults).
Status InitItem(const Family& f, const std::string* spec,
                std::optional<std::string_view> params,
                MeasureSelection::Item* item) {
  switch (f.params) {
    case Params::kNone:
      return Status::Ok();
    case Params::kRecipRank:
      if (params) return ParseLongCutoffs(*spec, *params, &item->cutoffs);
      return Status::Ok();
    case Params::kLongCutoffs:
      if (params) return ParseLongCutoffs(*spec, *params, &item->cutoffs);
      item->cutoffs.assign(f.defaults.begin(), f.defaults.end());
      return Status::Ok();
    case Params::kDoubleCutoffs:
    case Params::kDoubleParams: {
      if (!params) {
        item->values = f.defaults;
        return Status::Ok();
      }
      item->printable = std::string(*params);
      RW_RETURN_IF_ERROR(ParseDoubles(
          *spec, *params, f.params == Params::kDoubleCutoffs, &item->values));
      if (f.measure == TrecMeasure::kUtility && item->values.size() != 4) {
        return SpecError(*spec, "utility takes exactly 4 coefficients");
      }
      return Status::Ok();
    }
    case Params::kPairs:
      if (!params) return Status::Ok();
      item->printable = std::string(*params);
      return ParsePairs(*spec, *params, &item->pairs);
  }
  return Status::Ok();
}

// A measure named in another spelling than trec_eval's `-m`: its family
// and the one parameter given ("" for none).
struct OtherSpelling {
  const Family* family = nullptr;
  std::string param;
};

bool IsCutoffFamily(const Family& f) {
  return f.params == Params::kLongCutoffs || f.params == Params::kRecipRank ||
         f.params == Params::kDoubleCutoffs;
}

// Whether `text` reads as a cutoff of `f`: a positive integer, or for the
// real cutoffs (recall levels) a number in [0, 1] written with digits and
// at most one point between them (iprec_at_recall_0.10, printed %3.2f):
// not "5", ".", "0.1.2".
bool IsCutoffText(const Family& f, std::string_view text) {
  const bool real = f.params == Params::kDoubleCutoffs;
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
        return (c >= '0' && c <= '9') || (real && c == '.');
      });
  if (!digits) return false;
  if (!real) return AtolLike(text) > 0;
  if (std::count(text.begin(), text.end(), '.') > 1 || text.front() == '.' ||
      text.back() == '.') {
    return false;
  }
  double level = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), level);
  return ec == std::errc() && end == text.data() + text.size() && level >= 0 &&
         level <= 1;
}

// trec_eval's printed row names (P_10, iprec_at_recall_0.10, as eval
// prints them), then the one measure-name reader of metrics/
// measure_names.h: rankwatch's (ndcg@10) and ir_measures' (nDCG@10)
// spellings. Errors suggest the closest name, eval's sets and families
// included.
StatusOr<OtherSpelling> ReadOtherSpelling(const std::string& spec) {
  for (const Family& f : Families()) {
    if (IsCutoffFamily(f) && spec.size() > f.name.size() + 1 &&
        spec.starts_with(f.name) && spec[f.name.size()] == '_' &&
        IsCutoffText(f, std::string_view(spec).substr(f.name.size() + 1))) {
      return OtherSpelling{&f, spec.substr(f.name.size() + 1)};
    }
  }
  static const std::vector<std::string_view>* const kEvalNames = [] {
    auto* names =
        new std::vector<std::string_view>{"official", "all_trec", "set"};
    for (const Family& f : Families()) names->push_back(f.name);
    return names;
  }();
  StatusOr<metrics::MeasureRef> ref =
      metrics::ParseMeasureName(spec, *kEvalNames);
  if (!ref.ok()) return ref.status();
  const Family* f = FindFamily(ref->trec_family);
  if (f == nullptr) {
    return SpecError(spec,
                     "a click measure of the daemon's impression mode, not a "
                     "trec_eval measure: rankwatch eval does not compute it");
  }
  return OtherSpelling{f, ref->trec_param};
}

// Joins the cutoffs given in other spellings (`extra`) to `item`'s.
Status AddOtherCutoffs(const Family& f, std::span<const std::string> extra,
                       MeasureSelection::Item* item) {
  if (extra.empty()) return Status::Ok();
  if (f.params == Params::kDoubleCutoffs) {
    for (const std::string& v : extra) item->values.push_back(AtofLike(v));
    std::sort(item->values.begin(), item->values.end());
    item->values.erase(std::unique(item->values.begin(), item->values.end()),
                       item->values.end());
    return Status::Ok();
  }
  for (const std::string& k : extra) {
    const int64_t cutoff = AtolLike(k);
    if (cutoff <= 0 || cutoff > std::numeric_limits<int32_t>::max()) {
      return SpecError(k, "cutoffs must be positive integers");
    }
    item->cutoffs.push_back(static_cast<int32_t>(cutoff));
  }
  std::sort(item->cutoffs.begin(), item->cutoffs.end());
  item->cutoffs.erase(std::unique(item->cutoffs.begin(), item->cutoffs.end()),
                      item->cutoffs.end());
  return Status::Ok();
}

// The printed names of an item's rows.
void AppendColumns(const Family& f, const MeasureSelection::Item& item,
                   std::vector<ReportColumn>* columns) {
  auto add = [&](std::string name) {
    columns->push_back(ReportColumn{std::move(name), f.format, f.per_query,
                                    f.summary != SummaryKind::kNone,
                                    f.summary});
  };
  const std::string base(f.name);
  switch (f.params) {
    case Params::kRecipRank:
      if (item.uncut) add(base);
      for (int32_t k : item.cutoffs) add(base + "_" + std::to_string(k));
      return;
    case Params::kLongCutoffs:
      for (int32_t k : item.cutoffs) add(base + "_" + std::to_string(k));
      return;
    case Params::kDoubleCutoffs:
      for (double v : item.values) {
        // trec_eval's append_double: "%s_%3.2f" in strlen(name) + 10 bytes.
        std::vector<char> buf(base.size() + 10);
        std::snprintf(buf.data(), buf.size(), "%s_%3.2f", base.c_str(), v);
        add(buf.data());
      }
      return;
    case Params::kDoubleParams:
    case Params::kPairs:
      add(item.printable.empty() ? base : base + "_" + item.printable);
      return;
    case Params::kNone:
      add(base);
      return;
  }
}

// Whether the engine (metrics/measures.h) computes the item: ndcg only
// without a gain map.
bool UsesEngine(const MeasureSelection::Item& item) {
  switch (item.measure) {
    case TrecMeasure::kNumRet:
    case TrecMeasure::kNumRel:
    case TrecMeasure::kNumRelRet:
    case TrecMeasure::kMap:
    case TrecMeasure::kRprec:
    case TrecMeasure::kRecipRank:
    case TrecMeasure::kP:
    case TrecMeasure::kRecall:
    case TrecMeasure::kNdcgCut:
    case TrecMeasure::kMapCut:
    case TrecMeasure::kSuccess:
    case TrecMeasure::kJudged:
    case TrecMeasure::kSpearman:
    case TrecMeasure::kKendallTau:
      return true;
    case TrecMeasure::kRunid:
    case TrecMeasure::kNumQ:
    case TrecMeasure::kGmMap:
    case TrecMeasure::kBpref:
    case TrecMeasure::kIprecAtRecall:
    case TrecMeasure::kRelstring:
    case TrecMeasure::kInfAP:
    case TrecMeasure::kGmBpref:
    case TrecMeasure::kRprecMult:
    case TrecMeasure::kUtility:
    case TrecMeasure::k11ptAvg:
    case TrecMeasure::kBinG:
    case TrecMeasure::kG:
    case TrecMeasure::kDcg:
    case TrecMeasure::kIdealDcg:
    case TrecMeasure::kNdcgRel:
    case TrecMeasure::kRndcg:
    case TrecMeasure::kRelativeP:
    case TrecMeasure::kSetP:
    case TrecMeasure::kSetRelativeP:
    case TrecMeasure::kSetRecall:
    case TrecMeasure::kSetMap:
    case TrecMeasure::kSetF:
    case TrecMeasure::kNumNonrelJudgedRet:
    case TrecMeasure::kRbp:
    case TrecMeasure::kRbpResid:
    case TrecMeasure::kUnj:
      return false;
    case TrecMeasure::kNdcg:
      return item.pairs.empty();
  }
  return false;
}

}  // namespace

StatusOr<MeasureSelection> MeasureSelection::Parse(
    std::span<const std::string> specs) {
  static const std::vector<std::string> kDefault = {"official"};
  if (specs.empty()) specs = kDefault;
  const std::vector<Family>& families = Families();
  // Per family: marked, and the spec whose parameters it takes.
  std::vector<bool> marked(families.size(), false);
  std::vector<bool> bare(families.size(), false);
  std::vector<const std::string*> with_params(families.size(), nullptr);
  // Per family: the parameters given in the other spellings (ndcg@10,
  // nDCG@10, ndcg_cut_10), each one cutoff, joined to the family's list.
  std::vector<std::vector<std::string>> extra(families.size());
  for (const std::string& spec : specs) {
    const size_t dot = spec.find('.');
    const std::string_view name = std::string_view(spec).substr(0, dot);
    const bool has_params = dot != std::string::npos;
    if (has_params && dot + 1 == spec.size()) {
      return SpecError(spec, "empty parameter list after '.'");
    }
    if (const std::vector<std::string_view>* names = Nickname(name)) {
      for (std::string_view n : *names) {
        const size_t i = static_cast<size_t>(FindFamily(n)->measure);
        marked[i] = true;
        bare[i] = true;
      }
      continue;
    }
    if (IsPreferenceSet(name)) {
      return Status::InvalidArgument(
          "measure set '" + Printable(name) +
          "' needs preference or judgment-group qrels (trec_eval -R), which "
          "rankwatch does not read");
    }
    const Family* f = FindFamily(name);
    if (f == nullptr) {
      StatusOr<OtherSpelling> other = ReadOtherSpelling(spec);
      if (!other.ok()) return other.status();
      const size_t i = static_cast<size_t>(other->family->measure);
      marked[i] = true;
      if (other->param.empty()) {
        bare[i] = true;
      } else {
        extra[i].push_back(std::move(other->param));
      }
      continue;
    }
    const size_t i = static_cast<size_t>(f->measure);
    marked[i] = true;
    if (!has_params) {
      bare[i] = true;
    } else if (with_params[i] == nullptr) {
      with_params[i] = &spec;  // trec_eval: the first parameters win.
    }
  }
  MeasureSelection sel;
  for (size_t i = 0; i < families.size(); ++i) {
    if (!marked[i]) continue;
    const Family& f = families[i];
    Item item;
    item.measure = f.measure;
    item.uncut = f.params == Params::kRecipRank && bare[i];
    std::optional<std::string_view> params;
    if (with_params[i] != nullptr) {
      params = std::string_view(*with_params[i])
                   .substr(with_params[i]->find('.') + 1);
    }
    // A family asked for only as ndcg@10 gets that cutoff, not the defaults
    // of a bare ndcg_cut.
    const bool trec_spelled = bare[i] || with_params[i] != nullptr;
    if (trec_spelled) {
      RW_RETURN_IF_ERROR(InitItem(f, with_params[i], params, &item));
    }
    RW_RETURN_IF_ERROR(AddOtherCutoffs(f, extra[i], &item));
    sel.items_.push_back(std::move(item));
  }
  return sel;
}

std::vector<int32_t> MeasureSelection::EngineCutoffs() const {
  std::vector<int32_t> all;
  for (const Item& item : items_) {
    if (UsesEngine(item)) {
      all.insert(all.end(), item.cutoffs.begin(), item.cutoffs.end());
    }
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

bool MeasureSelection::NeedsJudgedRanking() const {
  return std::any_of(items_.begin(), items_.end(),
                     [](const Item& item) { return !UsesEngine(item); });
}

JudgedRanking JudgedRankingBuilder::Build(std::span<const Grade> codes,
                                          std::span<const Grade> judgments,
                                          Grade relevance_level) {
  Grade max_grade = -1;
  for (Grade g : judgments) max_grade = std::max(max_grade, g);
  levels_.clear();
  if (max_grade <= kMaxDenseGrade) {
    counts_.assign(static_cast<size_t>(max_grade + 1), 0);
    for (Grade g : judgments) {
      if (g >= 0) ++counts_[static_cast<size_t>(g)];
    }
    for (size_t g = 0; g < counts_.size(); ++g) {
      levels_.push_back(LevelCount{static_cast<int64_t>(g), counts_[g]});
    }
  } else {
    sorted_.clear();
    for (Grade g : judgments) {
      if (g >= 0) sorted_.push_back(g);
    }
    std::sort(sorted_.begin(), sorted_.end());
    for (Grade g : sorted_) {
      if (levels_.empty() || levels_.back().level != g) {
        levels_.push_back(LevelCount{g, 0});
      }
      ++levels_.back().count;
    }
  }
  JudgedRanking r;
  r.codes = codes;
  r.levels = levels_;
  for (const LevelCount& l : levels_) {
    (l.level >= relevance_level ? r.num_rel : r.num_judged_nonrel) += l.count;
  }
  for (Grade c : codes) {
    if (c == kNotInPool) {
      ++r.num_nonpool;
    } else if (c < 0) {
      ++r.num_unjudged_in_pool;
    } else if (c >= relevance_level) {
      ++r.num_rel_ret;
    }
  }
  return r;
}

namespace {

// The ideal ranking's gains, walked as trec_eval walks them: from the
// highest-gain level down, each level as many times as it has judged docs,
// until a gain <= 0.
class IdealWalk {
 public:
  explicit IdealWalk(GainTable* gains) : entries_(gains->entries()) {
    level_ = static_cast<int64_t>(entries_.size()) - 1;
    gain_ = level_ >= 0 ? entries_[static_cast<size_t>(level_)].gain : 0.0;
  }
  // Advances to the next rank; returns the ideal gain there.
  double Next() {
    ++at_level_;
    while (level_ >= 0 &&
           at_level_ > entries_[static_cast<size_t>(level_)].count) {
      at_level_ = 1;
      --level_;
      gain_ = level_ >= 0 ? entries_[static_cast<size_t>(level_)].gain : 0.0;
    }
    return gain_;
  }
  double gain() const { return gain_; }

 private:
  const std::vector<GainTable::Entry>& entries_;
  int64_t level_;
  int64_t at_level_ = 0;
  double gain_;
};

double Log2Rank(int64_t i) { return std::log2(static_cast<double>(i + 2)); }

// The DCG of the run and of the ideal ranking up to some rank, with
// trec_eval's log2(rank + 1) discount, added in trec_eval's order.
struct RunningDcg {
  double run = 0.0;
  double ideal = 0.0;

  // Adds the run's doc at 0-based rank i (a gain of 0 adds nothing, as in
  // trec_eval); returns its gain.
  double AddRun(const JudgedRanking& r, const GainTable& gains, int64_t i) {
    const double g = gains.Of(r.codes[static_cast<size_t>(i)]);
    if (g != 0) run += g / Log2Rank(i);
    return g;
  }
  // Adds the ideal gain `ig` at rank i when positive; returns whether.
  bool AddIdeal(double ig, int64_t i) {
    if (ig <= 0.0) return false;
    ideal += ig / Log2Rank(i);
    return true;
  }
};

// dcg, ideal_dcg and ndcg with a gain map (m_ndcg.c).
void ComputeNdcg(const JudgedRanking& r, GainTable* gains, TrecMeasure m,
                 double* out) {
  RunningDcg dcg;
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    dcg.AddRun(r, *gains, i);
    dcg.AddIdeal(ideal.Next(), i);
  }
  for (; i < n; ++i) dcg.AddRun(r, *gains, i);
  for (; ideal.gain() > 0.0; ++i) dcg.AddIdeal(ideal.Next(), i);
  if (m == TrecMeasure::kDcg) {
    *out = dcg.run;
  } else if (m == TrecMeasure::kIdealDcg) {
    *out = dcg.ideal;
  } else if (dcg.ideal > 0.0) {
    *out = dcg.run / dcg.ideal;
  }
}

// ndcg_rel (m_ndcg_rel.c): nDCG averaged over the ranks of relevant docs.
double ComputeNdcgRel(const JudgedRanking& r, GainTable* gains) {
  RunningDcg dcg;
  double sum = 0.0;
  int64_t num_rel_ret = 0;
  int64_t num_rel = 0;
  auto add_run = [&](int64_t i) {
    if (dcg.AddRun(r, *gains, i) > 0) {
      sum += dcg.run / dcg.ideal;
      ++num_rel_ret;
    }
  };
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    // trec_eval adds the run's gain, then the ideal's, then the ratio.
    const double g = dcg.AddRun(r, *gains, i);
    if (dcg.AddIdeal(ideal.Next(), i)) ++num_rel;
    if (g > 0) {
      sum += dcg.run / dcg.ideal;
      ++num_rel_ret;
    }
  }
  for (; i < n; ++i) add_run(i);
  for (; ideal.gain() > 0.0; ++i) {
    if (dcg.AddIdeal(ideal.Next(), i)) ++num_rel;
  }
  sum += static_cast<double>(num_rel - num_rel_ret) * dcg.run / dcg.ideal;
  return sum > 0.0 ? sum / static_cast<double>(num_rel) : 0.0;
}

// Rndcg (m_Rndcg.c): nDCG averaged over the ranks where the ideal gain
// changes, and at the end of the ranking.
double ComputeRndcg(const JudgedRanking& r, GainTable* gains) {
  if (r.num_rel == 0) return 0.0;
  RunningDcg dcg;
  double sum = 0.0;
  int64_t changes = 0;
  auto add_ratio = [&] {
    if (dcg.ideal > 0.0) {
      sum += dcg.run / dcg.ideal;
      ++changes;
    }
  };
  IdealWalk ideal(gains);
  double old_gain = ideal.gain();
  // The ratio is taken before the rank's own gains are added.
  auto next_ideal = [&] {
    const double ig = ideal.Next();
    if (old_gain != ig) {
      add_ratio();
      old_gain = ig;
    }
    return ig;
  };
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    const double ig = next_ideal();
    dcg.AddRun(r, *gains, i);
    dcg.AddIdeal(ig, i);
  }
  if (i < n) {
    for (; i < n; ++i) dcg.AddRun(r, *gains, i);
    add_ratio();
  }
  for (; ideal.gain() > 0.0; ++i) dcg.AddIdeal(next_ideal(), i);
  return sum / static_cast<double>(changes);
}

// G (m_G.c): gain discounted by how far the run's cumulated gain lags the
// ideal's, normalized by the ideal cumulated gain.
double ComputeG(const JudgedRanking& r, GainTable* gains) {
  constexpr double kMinCost = 1.0;
  double results_g = 0.0;
  double sum_results = 0.0;
  double sum_ideal = 0.0;
  double sum_cost = 0.0;
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    const double g = gains->Of(r.codes[static_cast<size_t>(i)]);
    sum_results += g;
    const double ig = ideal.Next();
    if (ig > 0.0) sum_ideal += ig;
    sum_cost += ig >= kMinCost ? ig : kMinCost;
    if (g != 0) results_g += g / std::log2(2 + sum_cost - sum_results);
  }
  for (; i < n; ++i) {
    const double g = gains->Of(r.codes[static_cast<size_t>(i)]);
    sum_results += g;
    sum_cost += kMinCost;
    if (g != 0) results_g += g / std::log2(2 + sum_cost - sum_results);
  }
  while (ideal.gain() > 0.0) {
    const double ig = ideal.Next();
    if (ig > 0.0) sum_ideal += ig;
  }
  return sum_ideal > 0.0 ? results_g / sum_ideal : 0.0;
}

double ParamP(std::span<const ParamPair> pairs) {
  double p = 0.9;
  for (const ParamPair& pair : pairs) {
    if (pair.name == "p") p = pair.value;
  }
  return p;
}

// rbp (m_rbp.c; Moffat and Zobel, TOIS 2008): gains scaled into [0, 1]
// when any lies outside, discounted geometrically with persistence p.
double ComputeRbp(const JudgedRanking& r, std::span<const ParamPair> pairs,
                  GainTable* gains) {
  const double p = ParamP(pairs);
  double min = 0.0;
  double max = 0.0;
  for (const GainTable::Entry& e : gains->entries()) {
    min = std::min(min, e.gain);
    max = std::max(max, e.gain);
  }
  if (min < 0 || max > 1) gains->Rescale(min, max);
  double sum = 0.0;
  double cur_p = 1.0;
  for (Grade c : r.codes) {
    const double g = gains->Of(c);
    if (g != 0) sum += g * cur_p;
    cur_p *= p;
  }
  return (1.0 - p) * sum;
}

// rbp_resid: the most rbp could grow if every unjudged doc were relevant.
double ComputeRbpResid(const JudgedRanking& r,
                       std::span<const ParamPair> pairs) {
  const double p = ParamP(pairs);
  int64_t unjudged = 0;
  double sum = 0.0;
  double cur_p = 1.0;
  for (Grade c : r.codes) {
    if (c < 0) {
      ++unjudged;
      sum += cur_p;
    }
    cur_p *= p;
  }
  return unjudged > 0 ? cur_p + (1 - p) * sum : 0.0;
}

double ComputeGmMap(const JudgedRanking& r, Grade level) {
  int64_t rel_so_far = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (r.codes[static_cast<size_t>(i)] >= level) {
      ++rel_so_far;
      sum += static_cast<double>(rel_so_far) / static_cast<double>(i + 1);
    }
  }
  if (rel_so_far) sum /= static_cast<double>(r.num_rel);
  return std::log(std::max(sum, kMinGeoMean));
}

// bpref (Buckley and Voorhees, SIGIR 2004), as trec_eval computes it.
double ComputeBpref(const JudgedRanking& r, Grade level) {
  const int64_t num_nonrel = r.num_judged_nonrel;
  int64_t nonrel_so_far = 0;
  double bpref = 0.0;
  for (Grade c : r.codes) {
    if (c < 0) continue;
    if (c < level) {
      ++nonrel_so_far;
    } else if (nonrel_so_far > 0) {
      bpref += 1.0 - static_cast<double>(std::min(nonrel_so_far, r.num_rel)) /
                         static_cast<double>(std::min(num_nonrel, r.num_rel));
    } else {
      bpref += 1.0;
    }
  }
  if (r.num_rel) bpref /= static_cast<double>(r.num_rel);
  return bpref;
}

// infAP (Yilmaz and Aslam, CIKM 2006), as trec_eval computes it.
double ComputeInfAp(const JudgedRanking& r, Grade level) {
  int64_t nonrel_so_far = 0;
  int64_t rel_so_far = 0;
  int64_t pool_unjudged_so_far = 0;
  double inf_ap = 0.0;
  for (int64_t j = 0; j < r.num_ret(); ++j) {
    const Grade c = r.codes[static_cast<size_t>(j)];
    if (c == kNotInPool) continue;
    if (c < 0) {
      ++pool_unjudged_so_far;
      continue;
    }
    if (c < level) {
      ++nonrel_so_far;
      continue;
    }
    ++rel_so_far;
    if (j == 0) {
      inf_ap += 1.0;
    } else {
      const double fj = static_cast<double>(j);
      inf_ap += 1.0 / (fj + 1.0) +
                (fj / (fj + 1.0)) *
                    (static_cast<double>(rel_so_far - 1 + nonrel_so_far +
                                         pool_unjudged_so_far) /
                     fj) *
                    ((static_cast<double>(rel_so_far - 1) + kInfApEpsilon) /
                     (static_cast<double>(rel_so_far - 1 + nonrel_so_far) +
                      2 * kInfApEpsilon));
    }
  }
  if (r.num_rel) inf_ap /= static_cast<double>(r.num_rel);
  return inf_ap;
}

// Interpolated precision at recall levels: what iprec_at_recall prints
// and 11pt_avg averages. `cutoffs` are ascending recall levels.
void InterpolatedPrecision(const JudgedRanking& r, Grade level,
                           std::span<const double> levels,
                           std::span<double> out) {
  const int64_t num = static_cast<int64_t>(levels.size());
  int64_t current = num - 1;
  auto cutoff = [&](int64_t c) {
    return std::lround(levels[static_cast<size_t>(c)] *
                       static_cast<double>(r.num_rel));
  };
  while (current >= 0 && cutoff(current) > r.num_rel_ret) --current;
  // 0/0 (NaN, printed -nan) when -J leaves no doc, as in trec_eval; a
  // query missing under -c is scored with one doc.
  double int_precis =
      static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_ret());
  int64_t rel_so_far = r.num_rel_ret;
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis =
        static_cast<double>(rel_so_far) / static_cast<double>(i);
    if (int_precis < precis) int_precis = precis;
    if (r.codes[static_cast<size_t>(i - 1)] >= level) {
      while (current >= 0 && rel_so_far == cutoff(current)) {
        out[static_cast<size_t>(current)] = int_precis;
        --current;
      }
      --rel_so_far;
    }
  }
  while (current >= 0) {
    out[static_cast<size_t>(current)] = int_precis;
    --current;
  }
}

// Precision at multiples of R (m_Rprec_mult.c).
void ComputeRprecMult(const JudgedRanking& r, Grade level,
                      std::span<const double> mults, std::span<double> out) {
  const int64_t num = static_cast<int64_t>(mults.size());
  auto cutoff = [&](int64_t c) -> int64_t {
    // trec_eval's (long)(m R + 0.9), saturated: a huge multiplier is a
    // rank past any list, not undefined behaviour.
    const double x =
        mults[static_cast<size_t>(c)] * static_cast<double>(r.num_rel) + 0.9;
    if (!(x < 9.2e18)) return std::numeric_limits<int64_t>::max();
    if (x <= -9.2e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(x);
  };
  int64_t current = num - 1;
  while (current >= 0 && cutoff(current) > r.num_ret()) {
    out[static_cast<size_t>(current)] = static_cast<double>(r.num_rel_ret) /
                                        static_cast<double>(cutoff(current));
    --current;
  }
  int64_t rel_so_far = r.num_rel_ret;
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis =
        static_cast<double>(rel_so_far) / static_cast<double>(i);
    while (current >= 0 && i == cutoff(current)) {
      out[static_cast<size_t>(current)] = precis;
      --current;
    }
    if (r.codes[static_cast<size_t>(i - 1)] >= level) --rel_so_far;
  }
}

// Relevant docs in the top k over min(k, R) (m_rel_P.c).
void ComputeRelativeP(const JudgedRanking& r, Grade level,
                      std::span<const int32_t> cutoffs, std::span<double> out) {
  if (r.num_rel == 0) return;
  size_t c = 0;
  int64_t rel_so_far = 0;
  auto value = [&](int64_t k) {
    return static_cast<double>(rel_so_far) /
           static_cast<double>(k > r.num_rel ? r.num_rel : k);
  };
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (i == cutoffs[c]) {
      out[c] = value(i);
      if (++c == cutoffs.size()) break;
    }
    if (r.codes[static_cast<size_t>(i)] >= level) ++rel_so_far;
  }
  for (; c < cutoffs.size(); ++c) out[c] = value(cutoffs[c]);
}

// Unjudged docs in the top k over k (m_unjudged.c).
void ComputeUnj(const JudgedRanking& r, std::span<const int32_t> cutoffs,
                std::span<double> out) {
  size_t c = 0;
  int64_t unj = 0;
  for (int64_t i = 0; i < r.num_ret() && c < cutoffs.size(); ++i) {
    if (i == cutoffs[c]) {
      out[c] = static_cast<double>(unj) / static_cast<double>(i);
      if (++c == cutoffs.size()) break;
    }
    if (r.codes[static_cast<size_t>(i)] < 0) ++unj;
  }
  for (; c < cutoffs.size(); ++c) {
    out[c] = static_cast<double>(unj) / static_cast<double>(cutoffs[c]);
  }
}

double ComputeBinG(const JudgedRanking& r, Grade level) {
  int64_t rel_so_far = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (r.codes[static_cast<size_t>(i)] >= level) {
      ++rel_so_far;
      sum += 1.0 / std::log2(static_cast<double>(3 + i - rel_so_far));
    }
  }
  return rel_so_far ? sum / static_cast<double>(r.num_rel) : 0.0;
}

void ComputeRelstring(const JudgedRanking& r, double length,
                      std::string* text) {
  // trec_eval's MIN((long) length, num_ret), without the undefined cast:
  // a length beyond long's range or NaN converts to LONG_MIN on x86-64
  // (trec_eval then prints ''), so it gives 0 here too.
  const bool representable = length > -9.2e18 && length < 9.2e18;
  const int64_t len =
      representable
          ? std::clamp<int64_t>(static_cast<int64_t>(length), 0, r.num_ret())
          : 0;
  text->clear();
  for (int64_t i = 0; i < len; ++i) {
    const Grade c = r.codes[static_cast<size_t>(i)];
    if (c > 9) {
      text->push_back('>');
    } else if (c >= 0) {
      text->push_back(static_cast<char>('0' + c));
    } else if (c == kNotInPool) {
      text->push_back('-');
    } else {
      text->push_back('.');
    }
  }
}

}  // namespace

void GainTable::Setup(std::span<const ParamPair> pairs,
                      std::span<const LevelCount> levels) {
  entries_.clear();
  for (const ParamPair& p : pairs) {
    if (!IsIntegerName(p.name)) continue;
    entries_.push_back(Entry{AtolLike(p.name), 0, p.value});
  }
  const size_t mapped = entries_.size();
  // trec_eval walks levels 0 .. num_rel_levels - 1: up to the highest one
  // with a judgment. Only the mapped entries can hold a level already (the
  // levels are distinct), so only they are searched.
  size_t n = levels.size();
  while (n > 0 && levels[n - 1].count == 0) --n;
  for (const LevelCount& l : levels.first(n)) {
    const auto end = entries_.begin() + static_cast<ptrdiff_t>(mapped);
    auto it = std::find_if(entries_.begin(), end,
                           [&](const Entry& e) { return e.level == l.level; });
    if (it != end) {
      it->count = l.count;
    } else {
      entries_.push_back(Entry{l.level, l.count, static_cast<double>(l.level)});
    }
  }
  scratch_.resize(entries_.size());
  MergeSort(entries_.data(), entries_.size());
  Reindex();
}

void GainTable::Reindex() {
  // get_gain returns the first entry of the level in gain order: keep that
  // one per level, then sort by level for a binary search. A few levels
  // (the usual 0..3) are scanned instead: cheaper than indexing.
  by_level_.clear();
  if (entries_.size() <= kScanEntries) return;
  for (const Entry& e : entries_) by_level_.emplace_back(e.level, e.gain);
  std::stable_sort(
      by_level_.begin(), by_level_.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  by_level_.erase(std::unique(by_level_.begin(), by_level_.end(),
                              [](const auto& a, const auto& b) {
                                return a.first == b.first;
                              }),
                  by_level_.end());
}

double GainTable::Of(int64_t code) const {
  if (entries_.size() <= kScanEntries) {
    for (const Entry& e : entries_) {
      if (e.level == code) return e.gain;
    }
    return 0.0;
  }
  const auto it = std::lower_bound(by_level_.begin(), by_level_.end(), code,
                                   [](const std::pair<int64_t, double>& e,
                                      int64_t c) { return e.first < c; });
  return it != by_level_.end() && it->first == code ? it->second : 0.0;
}

bool GainTable::IsIntegerName(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

int GainTable::Compare(const Entry& a, const Entry& b) {
  const double d = a.gain - b.gain;
  if (d >= 2147483647.0) return std::numeric_limits<int>::max();
  if (d <= -2147483648.0) return std::numeric_limits<int>::min();
  return static_cast<int>(d);
}

void GainTable::MergeSort(Entry* b, size_t n) {
  if (n <= 1) return;
  size_t n1 = n / 2;
  size_t n2 = n - n1;
  Entry* b1 = b;
  Entry* b2 = b + n1;
  MergeSort(b1, n1);
  MergeSort(b2, n2);
  Entry* t = scratch_.data();
  while (n1 > 0 && n2 > 0) {
    if (Compare(*b1, *b2) <= 0) {
      *t++ = *b1++;
      --n1;
    } else {
      *t++ = *b2++;
      --n2;
    }
  }
  t = std::copy(b1, b1 + n1, t);
  std::copy(scratch_.data(), t, b);
}

MeasureTable MeasureTable::Create(const MeasureSelection& selection,
                                  const Options& options) {
  MeasureTable t;
  t.selection_ = selection;
  t.options_ = options;
  const std::vector<int32_t> engine_cutoffs = selection.EngineCutoffs();
  for (size_t i = 0; i < selection.items().size(); ++i) {
    const MeasureSelection::Item& item = selection.items()[i];
    t.slots_.push_back(Slot{i, t.columns_.size()});
    AppendColumns(FamilyOf(item.measure), item, &t.columns_);
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
  const Grade level = options_.relevance_level;
  auto engine_cut = [&](Measure m) {
    for (size_t c = 0; c < item.cutoffs.size(); ++c) {
      out[c] = metrics::MeasureValue(engine, m, cut[c]);
    }
  };
  auto setup_gains = [&] { gains_.Setup(item.pairs, r.levels); };
  switch (item.measure) {
    case TrecMeasure::kRunid:
    case TrecMeasure::kNumQ:
      out[0] = 1;
      return;
    case TrecMeasure::kNumRet:
      out[0] = static_cast<double>(engine.num_ret);
      return;
    case TrecMeasure::kNumRel:
      out[0] = static_cast<double>(engine.num_rel);
      return;
    case TrecMeasure::kNumRelRet:
      out[0] = static_cast<double>(engine.num_rel_ret);
      return;
    case TrecMeasure::kMap:
      out[0] = engine.average_precision;
      return;
    case TrecMeasure::kGmMap:
      out[0] = ComputeGmMap(r, level);
      return;
    case TrecMeasure::kRprec:
      out[0] = engine.r_precision;
      return;
    case TrecMeasure::kBpref:
      out[0] = ComputeBpref(r, level);
      return;
    case TrecMeasure::kRecipRank: {
      size_t c = 0;
      if (item.uncut) out[c++] = engine.reciprocal_rank;
      for (size_t i = 0; i < item.cutoffs.size(); ++i) {
        out[c++] =
            metrics::MeasureValue(engine, Measure::kReciprocalRank, cut[i]);
      }
      return;
    }
    case TrecMeasure::kIprecAtRecall:
      InterpolatedPrecision(r, level, item.values, out);
      return;
    case TrecMeasure::kP:
      engine_cut(Measure::kPrecision);
      return;
    case TrecMeasure::kRelstring:
      ComputeRelstring(r, item.values.empty() ? 10.0 : item.values[0], text);
      return;
    case TrecMeasure::kRecall:
      engine_cut(Measure::kRecall);
      return;
    case TrecMeasure::kInfAP:
      out[0] = ComputeInfAp(r, level);
      return;
    case TrecMeasure::kGmBpref:
      out[0] = std::log(std::max(ComputeBpref(r, level), kMinGeoMean));
      return;
    case TrecMeasure::kRprecMult:
      ComputeRprecMult(r, level, item.values, out);
      return;
    case TrecMeasure::kUtility: {
      const std::vector<double>& p = item.values;
      const auto rel_ret = static_cast<double>(r.num_rel_ret);
      const auto ret = static_cast<double>(r.num_ret());
      const auto rel = static_cast<double>(r.num_rel);
      out[0] = p[0] * rel_ret + p[1] * (ret - rel_ret) +
               p[2] * (rel - rel_ret) +
               p[3] * (static_cast<double>(options_.num_docs_in_collection) +
                       rel_ret - ret - rel);
      return;
    }
    case TrecMeasure::k11ptAvg: {
      scratch_.assign(item.values.size(), 0.0);
      InterpolatedPrecision(r, level, item.values, scratch_);
      double sum = 0.0;
      // trec_eval adds from the highest level down.
      for (size_t i = scratch_.size(); i > 0; --i) sum += scratch_[i - 1];
      out[0] = sum / static_cast<double>(item.values.size());
      return;
    }
    case TrecMeasure::kBinG:
      out[0] = ComputeBinG(r, level);
      return;
    case TrecMeasure::kG:
      setup_gains();
      out[0] = ComputeG(r, &gains_);
      return;
    case TrecMeasure::kDcg:
    case TrecMeasure::kIdealDcg:
      setup_gains();
      ComputeNdcg(r, &gains_, item.measure, &out[0]);
      return;
    case TrecMeasure::kNdcg:
      if (item.pairs.empty()) {
        out[0] = engine.ndcg;
      } else {
        setup_gains();
        ComputeNdcg(r, &gains_, item.measure, &out[0]);
      }
      return;
    case TrecMeasure::kNdcgRel:
      setup_gains();
      out[0] = ComputeNdcgRel(r, &gains_);
      return;
    case TrecMeasure::kRndcg:
      setup_gains();
      out[0] = ComputeRndcg(r, &gains_);
      return;
    case TrecMeasure::kNdcgCut:
      engine_cut(Measure::kNdcg);
      return;
    case TrecMeasure::kMapCut:
      engine_cut(Measure::kAveragePrecision);
      return;
    case TrecMeasure::kRelativeP:
      ComputeRelativeP(r, level, item.cutoffs, out);
      return;
    case TrecMeasure::kSuccess:
      engine_cut(Measure::kSuccess);
      return;
    case TrecMeasure::kSetP:
      if (r.num_ret()) {
        out[0] = static_cast<double>(r.num_rel_ret) /
                 static_cast<double>(r.num_ret());
      }
      return;
    case TrecMeasure::kSetRelativeP:
      if (r.num_ret() && r.num_rel) {
        out[0] = static_cast<double>(r.num_rel_ret) /
                 static_cast<double>(std::min(r.num_ret(), r.num_rel));
      }
      return;
    case TrecMeasure::kSetRecall:
      if (r.num_rel) {
        out[0] =
            static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_rel);
      }
      return;
    case TrecMeasure::kSetMap:
      if (r.num_ret() && r.num_rel) {
        out[0] =
            (static_cast<double>(r.num_rel_ret) *
             static_cast<double>(r.num_rel_ret)) /
            (static_cast<double>(r.num_ret()) * static_cast<double>(r.num_rel));
      }
      return;
    case TrecMeasure::kSetF:
      if (r.num_rel_ret) {
        const double p = static_cast<double>(r.num_rel_ret) /
                         static_cast<double>(r.num_ret());
        const double rc =
            static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_rel);
        const double x = item.values.empty() ? 1.0 : item.values[0];
        out[0] = (x + 1.0) * p * rc / (x * p + rc);
      }
      return;
    case TrecMeasure::kNumNonrelJudgedRet:
      out[0] = static_cast<double>(r.num_ret() - r.num_nonpool -
                                   r.num_unjudged_in_pool - r.num_rel_ret);
      return;
    case TrecMeasure::kRbp:
      setup_gains();
      out[0] = ComputeRbp(r, item.pairs, &gains_);
      return;
    case TrecMeasure::kRbpResid:
      out[0] = ComputeRbpResid(r, item.pairs);
      return;
    case TrecMeasure::kUnj:
      ComputeUnj(r, item.cutoffs, out);
      return;
    case TrecMeasure::kJudged:
      engine_cut(Measure::kJudged);
      return;
    case TrecMeasure::kSpearman:
      out[0] = metrics::MeasureValue(engine, Measure::kSpearman, -1);
      return;
    case TrecMeasure::kKendallTau:
      out[0] = metrics::MeasureValue(engine, Measure::kKendallTau, -1);
      return;
  }
}

void MeasureTable::AppendValue(const ReportColumn& column, double value,
                               std::string* out) {
  char buf[64];
  int n = 0;
  switch (column.format) {
    case ValueFormat::kInteger:
      n = std::snprintf(buf, sizeof(buf), "%ld", static_cast<long>(value));
      break;
    case ValueFormat::kReal:
      n = std::snprintf(buf, sizeof(buf), "%6.4f", value);
      break;
    case ValueFormat::kText:
      return;
  }
  out->append(buf, static_cast<size_t>(n));
}

}  // namespace rankwatch::trec
