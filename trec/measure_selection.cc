#include "trec/measure_selection.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>

#include "base/strings.h"
#include "metrics/measure_names.h"

namespace rankwatch::trec {

namespace {

// How a family reads the parameters after its name (`-m name.params`).
enum class Params {
  kNone,           // Parameters are ignored.
  kRecipRank,      // None, or rankwatch's integer cutoffs.
  kLongCutoffs,    // name.5,10: one row per cutoff, NAME_5.
  kDoubleCutoffs,  // name.0.1,0.2: one row per cutoff, NAME_0.10.
  kDoubleParams,   // name.1,-1,0,0: one row, NAME_<params as given>.
  kPairs,          // name.1=3,p=0.5: one row, NAME_<params as given>.
};

// What is known about one `-m` family: a row of kFamilies.
struct Family {
  std::string_view name;  // trec_eval's.
  TrecMeasure measure;
  Params params;
  std::span<const double> defaults;  // Cutoffs or parameters.
  ValueFormat format;
  SummaryKind summary;
  bool per_query;
};

constexpr double kLong[] = {5, 10, 15, 20, 30, 100, 200, 500, 1000};
constexpr double kRecallLevels[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5,
                                    0.6, 0.7, 0.8, 0.9, 1.0};
constexpr double kRprecMults[] = {0.2, 0.4, 0.6, 0.8, 1.0,
                                  1.2, 1.4, 1.6, 1.8, 2.0};
constexpr double kRelstringLength[] = {10};
constexpr double kUtilityCoefficients[] = {1.0, -1.0, 0.0, 0.0};
constexpr double kSuccessCutoffs[] = {1, 5, 10};
constexpr double kUnjudgedCutoffs[] = {5, 10, 20};
constexpr double kSetFBeta[] = {1.0};

using P = Params;
using F = ValueFormat;
using S = SummaryKind;
using M = TrecMeasure;

// One row per family, in TrecMeasure order (checked below).
constexpr Family kFamilies[] = {
    {"runid", M::kRunid, P::kNone, {}, F::kText, S::kRunid, false},
    {"num_q", M::kNumQ, P::kNone, {}, F::kInteger, S::kNumQ, false},
    {"num_ret", M::kNumRet, P::kNone, {}, F::kInteger, S::kSum, true},
    {"num_rel", M::kNumRel, P::kNone, {}, F::kInteger, S::kSum, true},
    {"num_rel_ret", M::kNumRelRet, P::kNone, {}, F::kInteger, S::kSum, true},
    {"map", M::kMap, P::kNone, {}, F::kReal, S::kMean, true},
    {"gm_map", M::kGmMap, P::kNone, {}, F::kReal, S::kGeometricMean, false},
    {"Rprec", M::kRprec, P::kNone, {}, F::kReal, S::kMean, true},
    {"bpref", M::kBpref, P::kNone, {}, F::kReal, S::kMean, true},
    {"recip_rank", M::kRecipRank, P::kRecipRank, {}, F::kReal, S::kMean, true},
    {"iprec_at_recall", M::kIprecAtRecall, P::kDoubleCutoffs, kRecallLevels,
     F::kReal, S::kMean, true},
    {"P", M::kP, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
    {"relstring", M::kRelstring, P::kDoubleParams, kRelstringLength, F::kText,
     S::kNone, true},
    {"recall", M::kRecall, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
    {"infAP", M::kInfAP, P::kNone, {}, F::kReal, S::kMean, true},
    {"gm_bpref", M::kGmBpref, P::kNone, {}, F::kReal, S::kGeometricMean, false},
    {"Rprec_mult", M::kRprecMult, P::kDoubleCutoffs, kRprecMults, F::kReal,
     S::kMean, true},
    {"utility", M::kUtility, P::kDoubleParams, kUtilityCoefficients, F::kReal,
     S::kMean, true},
    {"11pt_avg", M::k11ptAvg, P::kDoubleParams, kRecallLevels, F::kReal,
     S::kMean, true},
    {"binG", M::kBinG, P::kNone, {}, F::kReal, S::kMean, true},
    {"G", M::kG, P::kPairs, {}, F::kReal, S::kMean, true},
    {"dcg", M::kDcg, P::kPairs, {}, F::kReal, S::kMean, true},
    {"ideal_dcg", M::kIdealDcg, P::kPairs, {}, F::kReal, S::kMean, true},
    {"ndcg", M::kNdcg, P::kPairs, {}, F::kReal, S::kMean, true},
    {"ndcg_rel", M::kNdcgRel, P::kPairs, {}, F::kReal, S::kMean, true},
    {"Rndcg", M::kRndcg, P::kPairs, {}, F::kReal, S::kMean, true},
    {"ndcg_cut", M::kNdcgCut, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
    {"map_cut", M::kMapCut, P::kLongCutoffs, kLong, F::kReal, S::kMean, true},
    {"relative_P", M::kRelativeP, P::kLongCutoffs, kLong, F::kReal, S::kMean,
     true},
    {"success", M::kSuccess, P::kLongCutoffs, kSuccessCutoffs, F::kReal,
     S::kMean, true},
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
    {"set_F", M::kSetF, P::kDoubleParams, kSetFBeta, F::kReal, S::kMean, true},
    {"num_nonrel_judged_ret",
     M::kNumNonrelJudgedRet,
     P::kNone,
     {},
     F::kInteger,
     S::kSum,
     true},
    {"rbp", M::kRbp, P::kPairs, {}, F::kReal, S::kMean, true},
    {"rbp_resid", M::kRbpResid, P::kPairs, {}, F::kReal, S::kMean, true},
    {"unj", M::kUnj, P::kLongCutoffs, kUnjudgedCutoffs, F::kReal, S::kMean,
     true},
    {"judged", M::kJudged, P::kLongCutoffs, kUnjudgedCutoffs, F::kReal,
     S::kMean, true},
    {"spearman", M::kSpearman, P::kNone, {}, F::kReal, S::kDefinedMean, true},
    {"kendall_tau",
     M::kKendallTau,
     P::kNone,
     {},
     F::kReal,
     S::kDefinedMean,
     true},
};
static_assert(std::size(kFamilies) == kTrecMeasureCount,
              "every TrecMeasure needs its row in kFamilies");

constexpr bool FamiliesInMeasureOrder() {
  for (size_t i = 0; i < std::size(kFamilies); ++i) {
    if (static_cast<size_t>(kFamilies[i].measure) != i) return false;
  }
  return true;
}
static_assert(FamiliesInMeasureOrder(),
              "kFamilies rows must follow TrecMeasure's order");

std::span<const Family> Families() { return kFamilies; }

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

const Family* FindFamily(std::string_view name);

// trec_eval's get_param_pairs: comma-separated name=value, each with one
// '=' and a name. `family` names the measure for the hint: a bare number
// (ndcg.10) is most likely a cutoff meant for the family's cut variant
// (ndcg_cut.10), which docs/metrics.md promises to say.
Status ParsePairs(std::string_view family, std::string_view spec,
                  std::string_view params, std::vector<ParamPair>* out) {
  out->clear();
  for (std::string_view tok : SplitOn(params, ',')) {
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0 ||
        tok.find('=', eq + 1) != std::string_view::npos) {
      std::string what = "parameters must be name=value pairs";
      const std::string cut = std::string(family) + "_cut";
      if (tok == params && FindFamily(cut) != nullptr && !tok.empty() &&
          std::all_of(tok.begin(), tok.end(),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        what += " (gain values, as in " + std::string(family) +
                ".1=0,2=3; at a cutoff it is " + cut + "." + std::string(tok) +
                ")";
      }
      return SpecError(spec, what);
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
        item->values.assign(f.defaults.begin(), f.defaults.end());
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
      return ParsePairs(f.name, *spec, *params, &item->pairs);
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

// pytrec_eval's NAME_5,10 (a cutoff family, an underscore, a list of two or
// more cutoffs) as NAME.5,10; any other spec as it is.
std::string DottedCutoffList(const std::string& spec) {
  if (spec.find(',') == std::string::npos) return spec;
  for (const Family& f : Families()) {
    if (!IsCutoffFamily(f) || spec.size() <= f.name.size() + 1 ||
        !spec.starts_with(f.name) || spec[f.name.size()] != '_') {
      continue;
    }
    const std::string_view list =
        std::string_view(spec).substr(f.name.size() + 1);
    const std::vector<std::string_view> parts = SplitOn(list, ',');
    if (std::all_of(parts.begin(), parts.end(),
                    [&f](std::string_view p) { return IsCutoffText(f, p); })) {
      return std::string(f.name) + "." + std::string(list);
    }
  }
  return spec;
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
void AppendFamilyColumns(const Family& f, const MeasureSelection::Item& item,
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

void AppendColumns(const MeasureSelection::Item& item,
                   std::vector<ReportColumn>* columns) {
  AppendFamilyColumns(FamilyOf(item.measure), item, columns);
}

bool HasCutoffRows(TrecMeasure measure) {
  return IsCutoffFamily(FamilyOf(measure));
}

std::vector<std::string_view> MeasureFamilyNames() {
  std::vector<std::string_view> names;
  for (const Family& f : Families()) names.push_back(f.name);
  return names;
}

std::vector<std::string_view> MeasureNicknames() {
  return {"official", "all_trec", "set"};
}

const std::vector<std::string_view>* NicknameFamilies(std::string_view name) {
  return Nickname(name);
}

StatusOr<MeasureSelection> MeasureSelection::Parse(
    std::span<const std::string> specs, SpecJoin join) {
  static const std::vector<std::string> kDefault = {"official"};
  if (specs.empty()) specs = kDefault;
  const std::span<const Family> families = Families();
  // Per family: marked, and the spec whose parameters it takes.
  std::vector<bool> marked(families.size(), false);
  std::vector<bool> bare(families.size(), false);
  std::vector<const std::string*> with_params(families.size(), nullptr);
  // Per family: the parameters given in the other spellings (ndcg@10,
  // nDCG@10, ndcg_cut_10), each one cutoff, joined to the family's list.
  std::vector<std::vector<std::string>> extra(families.size());
  std::vector<std::string> joined;  // kJoinCutoffs: NAME_5,10 as NAME.5,10.
  if (join == SpecJoin::kJoinCutoffs) {
    joined.assign(specs.begin(), specs.end());
    for (std::string& spec : joined) spec = DottedCutoffList(spec);
    specs = joined;
  }
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
    } else if (join == SpecJoin::kJoinCutoffs && IsCutoffFamily(*f)) {
      for (std::string_view k :
           SplitOn(std::string_view(spec).substr(dot + 1), ',')) {
        extra[i].emplace_back(k);
      }
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
    // of a bare ndcg_cut; pytrec_eval's joining also drops the defaults of
    // a bare P beside P_5.
    const bool defaults =
        join == SpecJoin::kJoinCutoffs ? bare[i] && extra[i].empty() : bare[i];
    const bool trec_spelled = defaults || with_params[i] != nullptr;
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

}  // namespace rankwatch::trec
