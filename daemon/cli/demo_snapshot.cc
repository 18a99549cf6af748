// The parser half of the demo story (demo_story.h): the few families of a
// /metrics page the story reads, into a DemoSnapshot.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "daemon/cli/demo_story.h"
#include "metrics/ab_stats.h"

namespace rankwatch::cli {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0;

  const std::string* Label(std::string_view name) const {
    for (const auto& [k, v] : labels) {
      if (k == name) return &v;
    }
    return nullptr;
  }
  std::string LabelOr(std::string_view name) const {
    const std::string* v = Label(name);
    return v == nullptr ? std::string() : *v;
  }
};

using Families = std::map<std::string, std::vector<Sample>, std::less<>>;

// Parses `{a="x",b="y"}` starting at `*pos` (on the brace). The text
// format escapes \\, \" and \n in label values.
bool ParseLabels(std::string_view line, size_t* pos, Labels* out) {
  size_t i = *pos + 1;
  while (i < line.size() && line[i] != '}') {
    const size_t eq = line.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= line.size() ||
        line[eq + 1] != '"') {
      return false;
    }
    std::string name(line.substr(i, eq - i));
    std::string value;
    size_t j = eq + 2;
    for (; j < line.size() && line[j] != '"'; ++j) {
      if (line[j] == '\\' && j + 1 < line.size()) {
        ++j;
        value.push_back(line[j] == 'n' ? '\n' : line[j]);
      } else {
        value.push_back(line[j]);
      }
    }
    if (j >= line.size()) return false;
    out->emplace_back(std::move(name), std::move(value));
    i = j + 1;
    if (i < line.size() && line[i] == ',') ++i;
  }
  if (i >= line.size()) return false;
  *pos = i + 1;
  return true;
}

// One sample line: name, optional labels, value (NaN, +Inf and -Inf as
// strtod reads them), an optional timestamp ignored.
bool ParseSampleLine(std::string_view line, std::string* name, Sample* s) {
  size_t i = line.find_first_of("{ ");
  if (i == std::string_view::npos || i == 0) return false;
  *name = std::string(line.substr(0, i));
  if (line[i] == '{' && !ParseLabels(line, &i, &s->labels)) return false;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t end = line.find(' ', i);
  const std::string value(line.substr(
      i, end == std::string_view::npos ? std::string_view::npos : end - i));
  if (value.empty()) return false;
  char* parsed_end = nullptr;
  s->value = std::strtod(value.c_str(), &parsed_end);
  return parsed_end == value.c_str() + value.size();
}

bool Wanted(std::string_view name, const std::vector<Headline>& headlines) {
  if (name.starts_with("rankwatch_ab_") ||
      name.starts_with("rankwatch_interleaving_") ||
      name.starts_with("rankwatch_query_mover_") ||
      name == "rankwatch_events_consumed_total") {
    return true;
  }
  for (const Headline& h : headlines) {
    const std::string base = "rankwatch_" + h.measure;
    if (name == base + "_sum" || name == base + "_count" ||
        name == base + "_squares_total") {
      return true;
    }
  }
  return false;
}

const std::vector<Sample>& Family(const Families& f, const std::string& name) {
  static const std::vector<Sample> kEmpty;
  auto it = f.find(name);
  return it == f.end() ? kEmpty : it->second;
}

Verdict ParseVerdict(std::string_view state) {
  if (state == "inconclusive") return Verdict::kInconclusive;
  if (state == "better") return Verdict::kBetter;
  if (state == "worse") return Verdict::kWorse;
  if (state == "sample_ratio_mismatch") return Verdict::kSampleRatioMismatch;
  return Verdict::kNoData;
}

// n, sum and sum of squares of one variant and headline.
struct Moments {
  double n = 0;
  double sum = 0;
  double squares = 0;
};

Estimate MeanInterval(const Moments& m, double z) {
  Estimate e;
  if (m.n <= 0) return e;
  e.value = m.sum / m.n;
  if (m.n < 2) {
    e.lower = -INFINITY;
    e.upper = INFINITY;
    return e;
  }
  const double variance =
      std::max(0.0, (m.squares - m.n * e.value * e.value) / (m.n - 1));
  const double half = z * std::sqrt(variance / m.n);
  e.lower = e.value - half;
  e.upper = e.value + half;
  return e;
}

void FillVariants(const Families& f, DemoSnapshot* s) {
  const double z = metrics::NormalQuantile(0.5 + s->level / 2);
  std::map<std::string, std::vector<Moments>> by_variant;
  for (size_t h = 0; h < s->headlines.size(); ++h) {
    const Headline& headline = s->headlines[h];
    const std::string base = "rankwatch_" + headline.measure;
    auto add = [&](const std::string& family, double Moments::*field) {
      for (const Sample& x : Family(f, family)) {
        if (x.LabelOr("k") != headline.k) continue;
        std::vector<Moments>& m = by_variant[x.LabelOr("variant")];
        m.resize(s->headlines.size());
        m[h].*field += x.value;
      }
    };
    add(base + "_count", &Moments::n);
    add(base + "_sum", &Moments::sum);
    add(base + "_squares_total", &Moments::squares);
  }
  for (auto& [variant, moments] : by_variant) {
    VariantFigures v;
    v.variant = variant;
    v.lists = static_cast<int64_t>(moments.empty() ? 0 : moments[0].n);
    for (const Moments& m : moments) v.headlines.push_back(MeanInterval(m, z));
    s->variants.push_back(std::move(v));
  }
}

// The exported top movers of each comparison of `s->ab` (the headline's
// series is a primary one), by rank.
void FillMovers(const Families& f, DemoSnapshot* s) {
  auto rank_of = [](const Sample& x) {
    int rank = 0;
    const std::string r = x.LabelOr("rank");
    std::from_chars(r.data(), r.data() + r.size(), rank);
    return rank;
  };
  for (AbFigures& ab : s->ab) {
    const std::string key =
        AbKey(ab.experiment, ab.treatment, ab.headline.measure, ab.headline.k);
    auto mover = [&](const Sample& x) -> MoverFigures* {
      const int rank = rank_of(x);
      if (rank < 1 || rank > 100 ||
          AbKey(x.LabelOr("experiment"), x.LabelOr("variant"),
                x.LabelOr("measure"), x.LabelOr("k")) != key) {
        return nullptr;
      }
      if (ab.movers.size() < static_cast<size_t>(rank)) {
        ab.movers.resize(static_cast<size_t>(rank));
      }
      return &ab.movers[static_cast<size_t>(rank) - 1];
    };
    for (const Sample& x : Family(f, "rankwatch_query_mover_info")) {
      if (MoverFigures* m = mover(x)) m->query = x.LabelOr("query");
    }
    for (const Sample& x : Family(f, "rankwatch_query_mover_difference")) {
      if (MoverFigures* m = mover(x)) m->difference = x.value;
    }
    for (const Sample& x : Family(f, "rankwatch_query_mover_contribution")) {
      if (MoverFigures* m = mover(x)) m->contribution = x.value;
    }
  }
}

// The regression-adjusted figures (schema.covariate) of each comparison of
// `s->ab`, from the window-"all" rankwatch_ab_adjusted_* samples.
void FillAdjusted(const Families& f, DemoSnapshot* s) {
  for (const Sample& x : Family(f, "rankwatch_ab_covariate_info")) {
    s->covariate = x.LabelOr("covariate");
  }
  // Calls set(&comparison, value) for each comparison a sample of `family`
  // belongs to (`status` labels aside, the same labels).
  auto each = [&](const char* family, auto set) {
    for (const Sample& x : Family(f, family)) {
      if (x.LabelOr("window") != "all") continue;
      const std::string key =
          AbKey(x.LabelOr("experiment"), x.LabelOr("variant"),
                x.LabelOr("measure"), x.LabelOr("k"));
      for (AbFigures& ab : s->ab) {
        if (AbKey(ab.experiment, ab.treatment, ab.headline.measure,
                  ab.headline.k) == key) {
          set(&ab, x);
        }
      }
    }
  };
  // Sets `field` of the running (`look` false) or latest look's estimate.
  auto estimate = [&](const char* family, bool look, double Estimate::*field) {
    each(family, [&](AbFigures* ab, const Sample& x) {
      ab->has_adjusted = true;
      // Through a reference: GCC 12 assigns `(c ? a : b).*field` to a
      // temporary.
      Estimate& e = look ? ab->adjusted.look : ab->adjusted.difference;
      e.*field = x.value;
    });
  };
  estimate("rankwatch_ab_adjusted_difference", false, &Estimate::value);
  estimate("rankwatch_ab_adjusted_difference", true, &Estimate::value);
  estimate("rankwatch_ab_adjusted_sequential_ci_lower", false,
           &Estimate::lower);
  estimate("rankwatch_ab_adjusted_sequential_ci_upper", false,
           &Estimate::upper);
  estimate("rankwatch_ab_adjusted_sequential_look_ci_lower", true,
           &Estimate::lower);
  estimate("rankwatch_ab_adjusted_sequential_look_ci_upper", true,
           &Estimate::upper);
  each("rankwatch_ab_adjusted_variance_ratio",
       [](AbFigures* ab, const Sample& x) {
         ab->adjusted.variance_ratio = x.value;
       });
  each("rankwatch_ab_adjusted_status", [](AbFigures* ab, const Sample& x) {
    if (x.value == 1) ab->adjusted.status = x.LabelOr("status");
  });
}

void FillAb(const Families& f, DemoSnapshot* s) {
  auto key_of = [](const Sample& x) {
    return AbKey(x.LabelOr("experiment"), x.LabelOr("variant"),
                 x.LabelOr("measure"), x.LabelOr("k"));
  };
  auto all_window = [](const Sample& x) {
    return x.LabelOr("window") == "all";
  };
  for (const Sample& x : Family(f, "rankwatch_ab_verdict_state")) {
    if (x.value != 1 || !all_window(x)) continue;
    const Headline h{x.LabelOr("measure"), x.LabelOr("k")};
    if (std::find(s->headlines.begin(), s->headlines.end(), h) ==
        s->headlines.end()) {
      continue;
    }
    AbFigures ab;
    ab.experiment = x.LabelOr("experiment");
    ab.baseline = x.LabelOr("baseline");
    ab.treatment = x.LabelOr("variant");
    ab.headline = h;
    ab.verdict = ParseVerdict(x.LabelOr("state"));
    s->ab.push_back(std::move(ab));
  }
  // Sets field `field` of estimate `which` of each comparison from the
  // window-"all" samples of `family`.
  auto fill = [&](const char* family, Estimate AbFigures::*which,
                  double Estimate::*field) {
    for (const Sample& x : Family(f, family)) {
      if (!all_window(x)) continue;
      const std::string key = key_of(x);
      for (AbFigures& ab : s->ab) {
        if (AbKey(ab.experiment, ab.treatment, ab.headline.measure,
                  ab.headline.k) == key) {
          (ab.*which).*field = x.value;
        }
      }
    }
  };
  FillMovers(f, s);
  fill("rankwatch_ab_difference", &AbFigures::difference, &Estimate::value);
  fill("rankwatch_ab_difference", &AbFigures::look, &Estimate::value);
  fill("rankwatch_ab_sequential_ci_lower", &AbFigures::difference,
       &Estimate::lower);
  fill("rankwatch_ab_sequential_ci_upper", &AbFigures::difference,
       &Estimate::upper);
  fill("rankwatch_ab_sequential_look_ci_lower", &AbFigures::look,
       &Estimate::lower);
  fill("rankwatch_ab_sequential_look_ci_upper", &AbFigures::look,
       &Estimate::upper);
  FillAdjusted(f, s);
  // Headline order within an experiment, as configured.
  std::stable_sort(s->ab.begin(), s->ab.end(),
                   [&](const AbFigures& a, const AbFigures& b) {
                     auto rank = [&](const AbFigures& x) {
                       return std::find(s->headlines.begin(),
                                        s->headlines.end(), x.headline) -
                              s->headlines.begin();
                     };
                     return std::tie(a.experiment, a.treatment) <
                                std::tie(b.experiment, b.treatment) ||
                            (std::tie(a.experiment, a.treatment) ==
                                 std::tie(b.experiment, b.treatment) &&
                             rank(a) < rank(b));
                   });
}

void FillSrm(const Families& f, DemoSnapshot* s) {
  for (const Sample& x : Family(f, "rankwatch_ab_srm_detected")) {
    SrmFigures srm;
    srm.experiment = x.LabelOr("experiment");
    srm.detected = x.value == 1;
    for (const Sample& p : Family(f, "rankwatch_ab_srm_sequential_p_value")) {
      if (p.LabelOr("experiment") == srm.experiment) srm.p_value = p.value;
    }
    s->srm.push_back(std::move(srm));
  }
}

// The labels of a decision input: its headline and role.
DecisionInputFigures* FindInput(DecisionFigures* d, const Sample& x) {
  const Headline h{x.LabelOr("measure"), x.LabelOr("k")};
  for (DecisionInputFigures& in : d->inputs) {
    if (in.series == h) return &in;
  }
  return nullptr;
}

DecisionFigures* FindDecision(DemoSnapshot* s, const Sample& x) {
  for (DecisionFigures& d : s->decisions) {
    if (d.experiment == x.LabelOr("experiment") &&
        d.treatment == x.LabelOr("variant")) {
      return &d;
    }
  }
  return nullptr;
}

void FillDecisions(const Families& f, DemoSnapshot* s) {
  for (const Sample& x : Family(f, "rankwatch_ab_decision")) {
    if (x.value != 1) continue;
    DecisionFigures d;
    d.experiment = x.LabelOr("experiment");
    d.baseline = x.LabelOr("baseline");
    d.treatment = x.LabelOr("variant");
    d.value = x.LabelOr("decision");
    s->decisions.push_back(std::move(d));
  }
  for (const Sample& x : Family(f, "rankwatch_ab_decision_input")) {
    DecisionFigures* d = FindDecision(s, x);
    if (d == nullptr) continue;
    DecisionInputFigures in;
    in.guardrail = x.LabelOr("role") == "guardrail";
    in.series = {x.LabelOr("measure"), x.LabelOr("k")};
    in.input = x.value > 0 ? 1 : x.value < 0 ? -1 : 0;
    d->inputs.push_back(std::move(in));
  }
  // Primary series first, as the daemon lists them.
  for (DecisionFigures& d : s->decisions) {
    std::stable_sort(
        d.inputs.begin(), d.inputs.end(),
        [](const DecisionInputFigures& a, const DecisionInputFigures& b) {
          return !a.guardrail && b.guardrail;
        });
  }
  const auto fill = [&](const char* family, auto set) {
    for (const Sample& x : Family(f, family)) {
      DecisionFigures* d = FindDecision(s, x);
      DecisionInputFigures* in = d == nullptr ? nullptr : FindInput(d, x);
      if (in != nullptr) set(in, x);
    }
  };
  fill("rankwatch_ab_decision_ci_lower",
       [](DecisionInputFigures* in, const Sample& x) { in->lower = x.value; });
  fill("rankwatch_ab_decision_ci_upper",
       [](DecisionInputFigures* in, const Sample& x) { in->upper = x.value; });
  fill("rankwatch_ab_guardrail_margin",
       [](DecisionInputFigures* in, const Sample& x) {
         in->margin = x.value;
         in->relative = x.LabelOr("kind") == "relative";
       });
}

void FillInterleaving(const Families& f, DemoSnapshot* s) {
  for (const Sample& x : Family(f, "rankwatch_interleaving_info")) {
    InterleavingFigures il;
    il.experiment = x.LabelOr("experiment");
    il.incumbent = x.LabelOr("incumbent");
    il.challenger = x.LabelOr("challenger");
    auto mine = [&](const Sample& y) {
      return y.LabelOr("experiment") == il.experiment;
    };
    for (const Sample& y : Family(f, "rankwatch_interleaving_verdict_state")) {
      if (mine(y) && y.value == 1)
        il.verdict = ParseVerdict(y.LabelOr("state"));
    }
    for (const Sample& y : Family(f, "rankwatch_interleaving_preference")) {
      if (mine(y) && y.LabelOr("window") == "all") il.preference = y.value;
    }
    for (const Sample& y :
         Family(f, "rankwatch_interleaving_sequential_p_value")) {
      if (mine(y)) il.p_value = y.value;
    }
    for (const Sample& y :
         Family(f, "rankwatch_interleaving_impressions_total")) {
      if (mine(y)) il.impressions = static_cast<int64_t>(y.value);
    }
    s->interleaving.push_back(std::move(il));
  }
  // Teams by place (1: best); shown only for more than two teams.
  std::map<std::string, std::map<double, std::string>> places;
  for (const Sample& y : Family(f, "rankwatch_interleaving_rank")) {
    places[y.LabelOr("experiment")][y.value] = y.LabelOr("team");
  }
  for (const auto& [experiment, teams] : places) {
    if (teams.size() <= 2) continue;
    std::vector<std::string>& ranking = s->multileaving_ranking[experiment];
    for (const auto& [place, team] : teams) ranking.push_back(team);
  }
  for (const Sample& y : Family(f, "rankwatch_interleaving_winner")) {
    if (y.value == 1) {
      s->multileaving_winner[y.LabelOr("experiment")] = y.LabelOr("team");
    }
  }
}

}  // namespace

std::string AbKey(std::string_view experiment, std::string_view treatment,
                  std::string_view measure, std::string_view k) {
  std::string key(experiment);
  for (std::string_view part : {treatment, measure, k}) {
    key.push_back('\x1f');
    key.append(part);
  }
  return key;
}

StatusOr<DemoSnapshot> ParseMetricsSnapshot(
    std::string_view text, const std::vector<Headline>& headlines) {
  Families families;
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    const std::string_view name = line.substr(0, line.find_first_of("{ "));
    if (!Wanted(name, headlines) && name != "rankwatch_ab_confidence_level") {
      continue;
    }
    std::string parsed_name;
    Sample sample;
    if (!ParseSampleLine(line, &parsed_name, &sample)) {
      return Status::InvalidArgument("/metrics line " +
                                     std::to_string(line_number) +
                                     ": not a sample: " + std::string(line));
    }
    families[parsed_name].push_back(std::move(sample));
  }
  DemoSnapshot s;
  s.headlines = headlines;
  for (const Sample& x : Family(families, "rankwatch_ab_confidence_level")) {
    s.level = x.value;
  }
  for (const Sample& x : Family(families, "rankwatch_events_consumed_total")) {
    s.events_consumed += static_cast<int64_t>(x.value);
  }
  FillVariants(families, &s);
  FillAb(families, &s);
  FillSrm(families, &s);
  FillDecisions(families, &s);
  FillInterleaving(families, &s);
  return s;
}

}  // namespace rankwatch::cli
