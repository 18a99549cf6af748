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
  D dialect = D::kRankwatch;
  std::optional<Measure> measure;  // nullopt: a trec_eval-only family.
  std::string_view uncut_family;   // trec_eval's family of the uncut series.
  std::string_view cut_family;     // trec_eval's family at a cutoff.
  bool uncut = false;              // The name alone is a series.
  bool cut = false;                // The name with a cutoff is a series.
  bool real_param = false;         // A recall level in [0, 1], not a cutoff k.
};

// A name, in `dialect`, of a trec_eval family the engine does not compute.
constexpr Entry EvalOnly(D dialect, std::string_view name,
                         std::string_view family) {
  return Entry{name, dialect, std::nullopt, family, "", true, false, false};
}
constexpr Entry TrecOnly(std::string_view name, std::string_view family) {
  return EvalOnly(D::kIrMeasures, name, family);
}
constexpr Entry TrecEvalOnly(std::string_view family) {
  return EvalOnly(D::kTrecEval, family, family);
}

// The names, in trec_eval's and ir_measures' spellings, of trec_eval
// families only eval computes: accepted everywhere, so that `primary:
// [bpref]` says "eval only" rather than suggesting ir_measures' 'Bpref'.
constexpr std::array kTrecOnlyEntries = {
    TrecEvalOnly("bpref"),
    TrecEvalOnly("num_q"),
    TrecEvalOnly("num_ret"),
    TrecEvalOnly("num_rel"),
    TrecEvalOnly("num_rel_ret"),
    TrecEvalOnly("set_P"),
    TrecEvalOnly("set_relative_P"),
    TrecEvalOnly("set_recall"),
    TrecEvalOnly("set_F"),
    TrecEvalOnly("set_map"),
    Entry{"iprec_at_recall", D::kTrecEval, std::nullopt, "", "iprec_at_recall",
          false, true, true},
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

// The entry of one spelling of `info`'s measure: the measure's trec_eval
// families, for the series the spelling names.
constexpr Entry Named(const MeasureInfo& info, D dialect,
                      const MeasureSpelling& spelling) {
  return Entry{spelling.name,
               dialect,
               info.measure,
               spelling.uncut ? info.trec_family : std::string_view(),
               spelling.cut ? info.trec_cut_family : std::string_view(),
               spelling.uncut,
               spelling.cut,
               false};
}

// The trec_eval and ir_measures spellings in kMeasureTable.
constexpr size_t CountSpellings() {
  size_t n = 0;
  for (const MeasureInfo& info : kMeasureTable) {
    for (const MeasureSpelling& s : info.trec_spellings) n += !s.name.empty();
    for (const MeasureSpelling& s : info.ir_spellings) n += !s.name.empty();
  }
  return n;
}

// Every accepted base name, from kMeasureTable: rankwatch's names, then
// trec_eval's, then ir_measures' (names first, then aliases), then the
// trec_eval-only families. Within a dialect a name appears once; the same
// name in two dialects (recall, ndcg, Rprec) means the same measure in
// both. Candidates for "did you mean" come in this order, which settles
// ties.
constexpr auto kEntries = [] {
  std::array<Entry,
             kMeasureTable.size() + CountSpellings() + kTrecOnlyEntries.size()>
      entries{};
  size_t n = 0;
  for (const MeasureInfo& info : kMeasureTable) {
    const bool uncut = (info.flags & MeasureFlag::kUncutVariant) != 0;
    const bool cut = (info.flags & MeasureFlag::kCutVariant) != 0;
    entries[n++] =
        Named(info, D::kRankwatch, MeasureSpelling{info.name, uncut, cut});
  }
  for (const MeasureInfo& info : kMeasureTable) {
    for (const MeasureSpelling& s : info.trec_spellings) {
      if (!s.name.empty()) entries[n++] = Named(info, D::kTrecEval, s);
    }
  }
  for (size_t slot = 0; slot < 2; ++slot) {
    for (const MeasureInfo& info : kMeasureTable) {
      const MeasureSpelling& s = info.ir_spellings[slot];
      if (!s.name.empty()) entries[n++] = Named(info, D::kIrMeasures, s);
    }
  }
  for (const Entry& e : kTrecOnlyEntries) entries[n++] = e;
  return entries;
}();
static_assert(
    [] {
      for (size_t i = 0; i < kEntries.size(); ++i) {
        for (size_t j = i + 1; j < kEntries.size(); ++j) {
          if (kEntries[i].dialect == kEntries[j].dialect &&
              kEntries[i].name == kEntries[j].name) {
            return false;
          }
        }
      }
      return true;
    }(),
    "a spelling appears twice in one dialect (kMeasureTable, "
    "kTrecOnlyEntries): Find would read only the first");

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

// A name known in another letter case (mrr for ir_measures' MRR, Map):
// the same measure's trec_eval name (recip_rank), which every reader
// accepts, else the name as known. Edit distance misses these (mrr is
// three letters from MRR).
const Entry* OtherCase(std::string_view text) {
  for (const Entry& e : kEntries) {
    if (!EqualsIgnoreCase(e.name, text)) continue;
    for (const Entry& t : kEntries) {
      if (t.dialect == D::kTrecEval && e.measure && t.measure == e.measure &&
          t.uncut == e.uncut) {
        return &t;
      }
    }
    return &e;
  }
  return nullptr;
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
  if (const Entry* e = OtherCase(text)) {
    message += " (did you mean '" + std::string(e->name) + "'?)";
  } else if (std::optional<std::string_view> close = ClosestKey(text, known)) {
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
      // At the user's own cutoff when it is one (map@100: map_cut.100).
      what += " (at a cutoff it is " +
              (AllDigits(param) && !sibling->real_param
                   ? WithCutoff(*sibling, param)
                   : Example(*sibling)) +
              ")";
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
