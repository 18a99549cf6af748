#include "metrics/measure_names.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <system_error>
#include <vector>

#include "base/strings.h"

namespace rankwatch::metrics {

namespace {

using D = MeasureDialect;

// One accepted base name, in one dialect.
struct Entry {
  std::string_view name;
  D dialect;
  std::optional<Measure> measure;  // nullopt: a trec_eval-only family.
  std::string_view uncut_family;   // trec_eval's family of the uncut series.
  std::string_view cut_family;     // trec_eval's family at a cutoff.
  bool uncut;                      // The name alone is a series.
  bool cut;                        // The name with a cutoff is a series.
  bool real_param;  // The parameter is a recall level in [0, 1], not a k.
};

constexpr Entry Named(std::string_view name, D dialect, Measure m,
                      std::string_view uncut_family,
                      std::string_view cut_family, bool uncut, bool cut) {
  return Entry{name, dialect, m, uncut_family, cut_family, uncut, cut, false};
}

// An ir_measures name of a trec_eval family the engine does not compute.
constexpr Entry TrecOnly(std::string_view name, std::string_view family) {
  return Entry{name, D::kIrMeasures, std::nullopt, family,
               "",   true,           false,        false};
}

// The three spellings of every measure with an exact equivalent. Within a
// dialect a name appears once; the same name in two dialects (recall,
// ndcg, Rprec) means the same measure in both. Candidates for "did you
// mean" come in this order, which settles ties.
constexpr std::array kEntries = {
    // rankwatch: MeasureName(m), "@k" or "@all"; the cut and uncut variants
    // are HasCutoffVariant and HasUncutVariant (measure_names_test checks).
    Named("precision", D::kRankwatch, Measure::kPrecision, "", "P", false,
          true),
    Named("recall", D::kRankwatch, Measure::kRecall, "", "recall", false, true),
    Named("reciprocal_rank", D::kRankwatch, Measure::kReciprocalRank,
          "recip_rank", "recip_rank", true, true),
    Named("average_precision", D::kRankwatch, Measure::kAveragePrecision, "map",
          "map_cut", true, true),
    Named("ndcg", D::kRankwatch, Measure::kNdcg, "ndcg", "ndcg_cut", true,
          true),
    Named("success", D::kRankwatch, Measure::kSuccess, "", "success", false,
          true),
    Named("r_precision", D::kRankwatch, Measure::kRPrecision, "Rprec", "", true,
          false),
    Named("judged", D::kRankwatch, Measure::kJudged, "", "judged", false, true),
    Named("ctr", D::kRankwatch, Measure::kCtr, "", "", false, true),
    Named("clicks", D::kRankwatch, Measure::kClicks, "", "", false, true),
    Named("abandonment", D::kRankwatch, Measure::kAbandonment, "", "", true,
          false),
    Named("first_click_rank", D::kRankwatch, Measure::kFirstClickRank, "", "",
          true, false),
    Named("recip_rank_first_click", D::kRankwatch,
          Measure::kRecipRankFirstClick, "", "", true, false),
    Named("spearman", D::kRankwatch, Measure::kSpearman, "spearman", "", true,
          false),
    Named("kendall_tau", D::kRankwatch, Measure::kKendallTau, "kendall_tau", "",
          true, false),
    // trec_eval: "-m family.k" and the printed "family_k" (TrecName).
    Named("P", D::kTrecEval, Measure::kPrecision, "", "P", false, true),
    Named("recall", D::kTrecEval, Measure::kRecall, "", "recall", false, true),
    Named("recip_rank", D::kTrecEval, Measure::kReciprocalRank, "recip_rank",
          "recip_rank", true, true),
    Named("map", D::kTrecEval, Measure::kAveragePrecision, "map", "", true,
          false),
    Named("map_cut", D::kTrecEval, Measure::kAveragePrecision, "", "map_cut",
          false, true),
    Named("ndcg", D::kTrecEval, Measure::kNdcg, "ndcg", "", true, false),
    Named("ndcg_cut", D::kTrecEval, Measure::kNdcg, "", "ndcg_cut", false,
          true),
    Named("success", D::kTrecEval, Measure::kSuccess, "", "success", false,
          true),
    Named("Rprec", D::kTrecEval, Measure::kRPrecision, "Rprec", "", true,
          false),
    Named("judged", D::kTrecEval, Measure::kJudged, "", "judged", false, true),
    Named("spearman", D::kTrecEval, Measure::kSpearman, "spearman", "", true,
          false),
    Named("kendall_tau", D::kTrecEval, Measure::kKendallTau, "kendall_tau", "",
          true, false),
    // The click measures' printed names (replay, the status page).
    Named("ctr", D::kTrecEval, Measure::kCtr, "", "", false, true),
    Named("clicks", D::kTrecEval, Measure::kClicks, "", "", false, true),
    // ir_measures: "Name@k"; P, R, Success and Judged require the cutoff.
    Named("nDCG", D::kIrMeasures, Measure::kNdcg, "ndcg", "ndcg_cut", true,
          true),
    Named("P", D::kIrMeasures, Measure::kPrecision, "", "P", false, true),
    Named("R", D::kIrMeasures, Measure::kRecall, "", "recall", false, true),
    Named("AP", D::kIrMeasures, Measure::kAveragePrecision, "map", "map_cut",
          true, true),
    Named("RR", D::kIrMeasures, Measure::kReciprocalRank, "recip_rank",
          "recip_rank", true, true),
    Named("Success", D::kIrMeasures, Measure::kSuccess, "", "success", false,
          true),
    Named("Judged", D::kIrMeasures, Measure::kJudged, "", "judged", false,
          true),
    Named("Rprec", D::kIrMeasures, Measure::kRPrecision, "Rprec", "", true,
          false),
    // ir_measures' aliases (its measures/__init__.py registry).
    Named("NDCG", D::kIrMeasures, Measure::kNdcg, "ndcg", "ndcg_cut", true,
          true),
    Named("Precision", D::kIrMeasures, Measure::kPrecision, "", "P", false,
          true),
    Named("Recall", D::kIrMeasures, Measure::kRecall, "", "recall", false,
          true),
    Named("MAP", D::kIrMeasures, Measure::kAveragePrecision, "map", "map_cut",
          true, true),
    Named("MRR", D::kIrMeasures, Measure::kReciprocalRank, "recip_rank",
          "recip_rank", true, true),
    Named("RPrec", D::kIrMeasures, Measure::kRPrecision, "Rprec", "", true,
          false),
    // ir_measures' names of trec_eval families only eval computes.
    TrecOnly("Bpref", "bpref"),
    TrecOnly("BPref", "bpref"),
    TrecOnly("infAP", "infAP"),
    TrecOnly("NumQ", "num_q"),
    TrecOnly("NumRet", "num_ret"),
    TrecOnly("NumRel", "num_rel"),
    TrecOnly("NumRelRet", "num_rel_ret"),
    TrecOnly("SetP", "set_P"),
    TrecOnly("SetRelP", "set_relative_P"),
    TrecOnly("SetR", "set_recall"),
    TrecOnly("SetF", "set_F"),
    TrecOnly("SetAP", "set_map"),
    Entry{"IPrec", D::kIrMeasures, std::nullopt, "", "iprec_at_recall", false,
          true, true},
};

// ir_measures measures rankwatch has no exact equivalent of: refused by
// name rather than read as something close.
constexpr std::array<std::string_view, 21> kIrMeasuresUnmapped = {
    "ERR",    "ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP",
    "nNRBP",  "AP_IA",  "P_IA",    "STREC",     "INST",       "INSQ",
    "SDCG",   "BPM",    "Compat",  "NERR8",     "NERR9",      "NERR10",
    "NERR11", "RBP",    "Accuracy"};

// Cutoffs tried, most common first, when suggesting a spelling for a name
// whose own cutoff does not read ("nDCG@1O" is as close to nDCG@10 as to
// nDCG@1: the first wins).
constexpr std::array<std::string_view, 7> kCommonCutoffs = {
    "10", "5", "20", "100", "1000", "1", "3"};

bool InDialects(const Entry& e, bool rankwatch, bool trec, bool ir) {
  switch (e.dialect) {
    case D::kRankwatch:
      return rankwatch;
    case D::kTrecEval:
      return trec;
    case D::kIrMeasures:
      return ir;
  }
  return false;
}

const Entry* Find(std::string_view name, bool rankwatch, bool trec, bool ir) {
  for (const Entry& e : kEntries) {
    if (e.name == name && InDialects(e, rankwatch, trec, ir)) return &e;
  }
  return nullptr;
}

bool IsUnmapped(std::string_view name) {
  return std::find(kIrMeasuresUnmapped.begin(), kIrMeasuresUnmapped.end(),
                   name) != kIrMeasuresUnmapped.end();
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

Status Error(std::string_view text, std::string_view what) {
  return Status::InvalidArgument("measure '" + Printable(text) +
                                 "': " + std::string(what));
}

// The entry's spelling of its series at `param`: ndcg@10, ndcg_cut.10.
std::string WithCutoff(const Entry& e, std::string_view param) {
  const char sep = e.dialect == D::kTrecEval ? '.' : '@';
  return std::string(e.name) + sep + std::string(param);
}

std::string Example(const Entry& e) {
  return WithCutoff(e, e.real_param ? "0.5" : "10");
}

// "unknown measure 'X' (did you mean 'Y'?)": Y among every accepted
// spelling, at the user's own cutoff when it reads and at common ones.
Status Unknown(std::string_view text, std::span<const std::string_view> more,
               std::string_view own_param, bool series) {
  std::vector<std::string> names;
  std::vector<std::string_view> params;
  if (AllDigits(own_param)) params.push_back(own_param);
  params.insert(params.end(), kCommonCutoffs.begin(), kCommonCutoffs.end());
  for (const Entry& e : kEntries) {
    if (e.uncut || !series) names.emplace_back(e.name);
    if (!e.cut || !series) continue;
    if (e.real_param) {
      names.push_back(WithCutoff(e, "0.5"));
      continue;
    }
    for (std::string_view p : params) {
      names.push_back(WithCutoff(e, p));
      if (e.dialect == D::kTrecEval) {
        names.push_back(std::string(e.name) + "_" + std::string(p));
      }
    }
  }
  std::vector<std::string_view> known(more.begin(), more.end());
  known.insert(known.end(), names.begin(), names.end());
  std::string message = "unknown measure '" + Printable(text) + "'";
  if (std::optional<std::string_view> close = ClosestKey(text, known)) {
    message += " (did you mean '" + std::string(*close) + "'?)";
  } else {
    message +=
        " (trec_eval's, rankwatch's and ir_measures' names are listed in "
        "docs/metrics.md)";
  }
  return Status::InvalidArgument(message);
}

Status Unmapped(std::string_view text, std::string_view name) {
  return Error(text, "ir_measures' " + std::string(name) +
                         " has no exact equivalent in rankwatch (the ones "
                         "that do are listed in docs/metrics.md)");
}

Status Parenthesized(std::string_view text) {
  return Error(text,
               "ir_measures parameters in parentheses are not read: rankwatch "
               "sets its definitions with its own options (eval's -l, "
               "--gain, -J; metrics.* in a configuration)");
}

StatusOr<MeasureRef> Uncut(const Entry& e, std::string_view text) {
  if (!e.uncut) {
    return Error(text, "needs a cutoff, as in " + Example(e));
  }
  MeasureRef ref;
  ref.measure = e.measure;
  ref.trec_family = e.uncut_family;
  ref.dialect = e.dialect;
  return ref;
}

// The entry of `e`'s dialect that spells `e`'s measure at a cutoff (ndcg
// for ndcg_cut, map for map_cut), if any.
const Entry* CutSibling(const Entry& e) {
  for (const Entry& o : kEntries) {
    if (o.dialect == e.dialect && o.measure == e.measure && o.cut) return &o;
  }
  return nullptr;
}

StatusOr<MeasureRef> AtParam(const Entry& e, std::string_view text,
                             std::string_view param,
                             std::span<const std::string_view> more) {
  if (e.dialect == D::kRankwatch && param == "all") return Uncut(e, text);
  if (!e.cut) {
    std::string what = std::string(e.name) + " takes no cutoff";
    const Entry* sibling = e.measure ? CutSibling(e) : nullptr;
    if (sibling != nullptr) {
      what += " (at a cutoff it is " + Example(*sibling) + ")";
    }
    return Error(text, what);
  }
  MeasureRef ref;
  ref.measure = e.measure;
  ref.trec_family = e.cut_family;
  ref.dialect = e.dialect;
  ref.trec_param = std::string(param);
  if (e.real_param) {
    double level = -1;
    const auto [end, ec] =
        std::from_chars(param.data(), param.data() + param.size(), level);
    if (ec != std::errc() || end != param.data() + param.size() ||
        !(level >= 0 && level <= 1)) {
      return Error(text, "the recall level must be a number from 0 to 1");
    }
    return ref;
  }
  if (param.find(',') != std::string_view::npos) {
    return Error(text, "one cutoff per name here, as in " + Example(e));
  }
  if (!AllDigits(param)) {
    // A typo in a number (1O for 10) has a likely meaning; a word does not.
    if (std::any_of(param.begin(), param.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      return Unknown(text, more, "", true);
    }
    return Error(text, "the cutoff must be an integer >= 1");
  }
  int64_t k = 0;
  const auto [end, ec] =
      std::from_chars(param.data(), param.data() + param.size(), k);
  if (ec != std::errc() || k < 1 || k > std::numeric_limits<int32_t>::max()) {
    return Error(text, "the cutoff must be an integer >= 1");
  }
  ref.cutoff = static_cast<int32_t>(k);
  ref.trec_param = std::to_string(k);
  return ref;
}

}  // namespace

std::string_view MeasureDialectName(MeasureDialect d) {
  switch (d) {
    case D::kRankwatch:
      return "rankwatch";
    case D::kTrecEval:
      return "trec_eval";
    case D::kIrMeasures:
      return "ir_measures";
  }
  return "?";
}

std::string MeasureRef::TrecSpec() const {
  if (trec_family.empty()) return "";
  std::string spec(trec_family);
  if (!trec_param.empty()) spec += "." + trec_param;
  return spec;
}

StatusOr<MeasureRef> ParseMeasureName(
    std::string_view text, std::span<const std::string_view> more_names) {
  if (text.empty()) return Status::InvalidArgument("empty measure name");
  if (const size_t paren = text.find('('); paren != std::string_view::npos) {
    const std::string_view base = text.substr(0, paren);
    if (IsUnmapped(base)) return Unmapped(text, base);
    if (Find(base, false, false, true) != nullptr) return Parenthesized(text);
    return Unknown(text, more_names, "", true);
  }
  if (const Entry* e = Find(text, true, true, true)) return Uncut(*e, text);
  if (const size_t at = text.rfind('@'); at != std::string_view::npos) {
    const std::string_view base = text.substr(0, at);
    const std::string_view param = text.substr(at + 1);
    if (IsUnmapped(base)) return Unmapped(text, base);
    // A trec_eval name with '@' (map@10, ndcg_cut@10) is still plain.
    if (const Entry* e = Find(base, true, false, true);
        e != nullptr || (e = Find(base, false, true, false)) != nullptr) {
      return AtParam(*e, text, param, more_names);
    }
    return Unknown(text, more_names, param, true);
  }
  if (IsUnmapped(text)) return Unmapped(text, text);
  if (const size_t dot = text.find('.'); dot != std::string_view::npos) {
    const std::string_view param = text.substr(dot + 1);
    const std::string_view base = text.substr(0, dot);
    if (const Entry* e = Find(base, false, true, false);
        e != nullptr || (e = Find(base, true, false, true)) != nullptr) {
      return AtParam(*e, text, param, more_names);
    }
    return Unknown(text, more_names, param, true);
  }
  // trec_eval's printed form: ndcg_cut_10, P_5.
  if (const size_t us = text.rfind('_'); us != std::string_view::npos) {
    const std::string_view param = text.substr(us + 1);
    const Entry* e = Find(text.substr(0, us), false, true, false);
    if (e != nullptr && AllDigits(param)) {
      return AtParam(*e, text, param, more_names);
    }
    return Unknown(text, more_names, param, true);
  }
  return Unknown(text, more_names, "", true);
}

StatusOr<Measure> ParseMeasureFamily(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("empty measure name");
  if (const Entry* e = Find(text, true, true, true)) {
    if (e->measure) return *e->measure;
    return Error(text, "trec_eval's " + std::string(e->uncut_family) +
                           " is computed by `rankwatch eval` only, not by "
                           "the daemon's engine");
  }
  if (IsUnmapped(text)) return Unmapped(text, text);
  // A series name (ndcg@10, ndcg_cut.10, P_5): the measure without its
  // cutoff is what is meant.
  StatusOr<MeasureRef> series = ParseMeasureName(text);
  if (series.ok()) {
    if (!series->measure) {
      return Error(text, "trec_eval's " + std::string(series->trec_family) +
                             " is computed by `rankwatch eval` only, not by "
                             "the daemon's engine");
    }
    // The longest base name of its dialect that `text` starts with.
    std::string_view base;
    for (const Entry& e : kEntries) {
      if (e.dialect == series->dialect && e.measure == series->measure &&
          text.starts_with(e.name) && e.name.size() > base.size()) {
        base = e.name;
      }
    }
    return Error(text, "name the measure without its cutoff ('" +
                           std::string(base) + "'): cutoffs are listed apart");
  }
  if (!series.status().message().starts_with("unknown measure")) {
    return series.status();  // Parentheses, a bad cutoff: said precisely.
  }
  return Unknown(text, {}, "", false);
}

}  // namespace rankwatch::metrics
