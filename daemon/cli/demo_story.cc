#include "daemon/cli/demo_story.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <utility>

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

std::string AbKey(std::string_view experiment, std::string_view treatment,
                  std::string_view measure, std::string_view k) {
  std::string key(experiment);
  for (std::string_view part : {treatment, measure, k}) {
    key.push_back('\x1f');
    key.append(part);
  }
  return key;
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

std::string Printf(const char* format, double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, decimals, value);
  return buf;
}

std::string FormatNumber(double x, int decimals, bool sign) {
  if (std::isnan(x)) return "n/a";
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  return Printf(sign ? "%+.*f" : "%.*f", x, decimals);
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string Elapsed(int64_t ms) {
  const int64_t s = ms / 1000;
  return s < 60 ? std::to_string(s) + "s"
                : std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
}

std::string PValue(double p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), p < 0.001 ? "%.1e" : "%.3f", p);
  return buf;
}

// Rows of cells, each column padded to its widest cell.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string Percent(double level) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%g%%", level * 100);
  return buf;
}

}  // namespace

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNoData:
      return "no data";
    case Verdict::kInconclusive:
      return "inconclusive";
    case Verdict::kBetter:
      return "better";
    case Verdict::kWorse:
      return "worse";
    case Verdict::kSampleRatioMismatch:
      return "sample ratio mismatch";
  }
  return "?";
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
  FillInterleaving(families, &s);
  return s;
}

std::string FormatEstimate(const Estimate& e, bool sign) {
  const double width = e.upper - e.lower;
  int decimals = 3;
  if (std::isfinite(width) && width > 0) {
    // Two significant digits of the width.
    decimals =
        std::clamp(static_cast<int>(std::ceil(-std::log10(width))) + 1, 2, 4);
  }
  std::string out = FormatNumber(e.value, decimals, sign);
  if (std::isnan(e.value) || std::isnan(e.lower) || std::isnan(e.upper)) {
    return out;
  }
  return out + " [" + FormatNumber(e.lower, decimals, sign) + ", " +
         FormatNumber(e.upper, decimals, sign) + "]";
}

std::string FormatAbDifference(const AbFigures& ab) {
  const Estimate& d = ab.difference;
  // NaN compares false: without an interval the estimate prints alone.
  const bool outside = d.value < d.lower || d.value > d.upper;
  if (!outside) return FormatEstimate(d, true);
  Estimate look = ab.look;
  look.value = d.value;
  const std::string running = FormatEstimate(d, true);
  return FormatEstimate(look, true) + " at this look; since start " +
         running.substr(running.find(" [") + 1);
}

std::vector<std::string> DemoStory::Observe(const DemoSnapshot& s,
                                            int64_t now_ms) {
  std::vector<std::string> lines;
  if (!started_) {
    started_ = true;
    events_ = s.events_consumed;
    events_changed_ms_ = now_ms;
    table_ms_ = now_ms;
    table_events_ = s.events_consumed;
  }
  ObserveEvents(s, now_ms, &lines);
  ObserveSrm(s, &lines);
  ObserveAb(s, &lines);
  ObserveInterleaving(s, &lines);
  return lines;
}

void DemoStory::ObserveEvents(const DemoSnapshot& s, int64_t now_ms,
                              std::vector<std::string>* lines) {
  if (s.events_consumed > events_) {
    if (stalled_) {
      lines->push_back("events flowing again (none for " +
                       std::to_string((now_ms - events_changed_ms_) / 1000) +
                       " s)");
    }
    stalled_ = false;
    events_ = s.events_consumed;
    events_changed_ms_ = now_ms;
    return;
  }
  events_ = s.events_consumed;  // A restart may lower it.
  if (!stalled_ && now_ms - events_changed_ms_ >= kStallMs) {
    stalled_ = true;
    lines->push_back("no events for " +
                     std::to_string((now_ms - events_changed_ms_) / 1000) +
                     " s");
  }
}

void DemoStory::ObserveSrm(const DemoSnapshot& s,
                           std::vector<std::string>* lines) {
  for (const SrmFigures& srm : s.srm) {
    bool& was = srm_[srm.experiment];
    if (srm.detected && !was) {
      lines->push_back(
          srm.experiment +
          ": sample ratio mismatch detected (p = " + PValue(srm.p_value) +
          "): its A/B verdicts do not hold until it clears");
    } else if (!srm.detected && was) {
      lines->push_back(srm.experiment + ": sample ratio mismatch cleared");
    }
    was = srm.detected;
  }
}

namespace {

// "; most on queries q-12 (-0.41), q-3 (-0.27)": the first two exported
// movers (by |contribution|) that move the verdict's way, or "".
std::string TopMovers(const AbFigures& ab) {
  const double sign = ab.verdict == Verdict::kWorse ? -1 : 1;
  std::string out;
  int named = 0;
  for (const MoverFigures& m : ab.movers) {
    if (named == 2) break;
    if (m.query.empty() || !(m.contribution * sign > 0)) continue;
    out += (named++ == 0 ? "; most on queries " : ", ") + m.query + " (" +
           FormatNumber(m.difference, 2, true) + ")";
  }
  return out;
}

}  // namespace

void DemoStory::ObserveAb(const DemoSnapshot& s,
                          std::vector<std::string>* lines) {
  for (const AbFigures& ab : s.ab) {
    // While the sample ratio is off the verdict says so; the SRM line tells
    // it once, and the verdict before it still stands for the story.
    if (ab.verdict == Verdict::kSampleRatioMismatch) continue;
    Verdict& was = ab_.try_emplace(AbKey(ab.experiment, ab.treatment,
                                         ab.headline.measure, ab.headline.k),
                                   Verdict::kNoData)
                       .first->second;
    if (ab.verdict == was) continue;
    const std::string tail =
        " than " + ab.baseline + " on " + ab.headline.Label() + ": " +
        FormatAbDifference(ab) + " (" + ab.experiment + ")";
    const bool decided =
        ab.verdict == Verdict::kBetter || ab.verdict == Verdict::kWorse;
    const bool was_decided = was == Verdict::kBetter || was == Verdict::kWorse;
    if (decided) {
      lines->push_back(ab.treatment + " is now " +
                       std::string(VerdictName(ab.verdict)) + tail +
                       TopMovers(ab));
    } else if (was_decided) {
      lines->push_back(ab.treatment + " is no longer " +
                       std::string(VerdictName(was)) + tail);
    }
    was = ab.verdict;
  }
}

void DemoStory::ObserveInterleaving(const DemoSnapshot& s,
                                    std::vector<std::string>* lines) {
  for (const InterleavingFigures& il : s.interleaving) {
    Verdict& was = interleaving_.try_emplace(il.experiment, Verdict::kNoData)
                       .first->second;
    if (il.verdict == was) continue;
    const std::string figures = ": preference " +
                                FormatNumber(il.preference, 3, true) +
                                ", p = " + PValue(il.p_value);
    const std::string head = "interleaving " + il.experiment + ": ";
    switch (il.verdict) {
      case Verdict::kBetter:
        lines->push_back(head + "users now prefer " + il.challenger + " to " +
                         il.incumbent + figures);
        break;
      case Verdict::kWorse:
        lines->push_back(head + "users now prefer " + il.incumbent + " to " +
                         il.challenger + figures);
        break;
      case Verdict::kNoData:
      case Verdict::kInconclusive:
      case Verdict::kSampleRatioMismatch:
        if (was == Verdict::kBetter || was == Verdict::kWorse) {
          lines->push_back(head + "no longer conclusive" + figures);
        }
        break;
    }
    was = il.verdict;
  }
}

std::string DemoStory::Table(const DemoSnapshot& s, int64_t now_ms) {
  if (!started_) Observe(s, now_ms);
  const double seconds = static_cast<double>(now_ms - table_ms_) / 1000;
  const double rate =
      seconds > 0
          ? static_cast<double>(s.events_consumed - table_events_) / seconds
          : 0;
  table_ms_ = now_ms;
  table_events_ = s.events_consumed;
  char head[128];
  std::snprintf(head, sizeof(head), "-- %s: %.0f events/s --\n",
                Elapsed(now_ms).c_str(), rate);
  std::string out = head;
  if (std::none_of(s.variants.begin(), s.variants.end(),
                   [](const VariantFigures& v) { return v.lists > 0; })) {
    return out + "  no list scored yet (the first join windows must close)\n";
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"variant", "lists"});
  for (const Headline& h : s.headlines) rows[0].push_back(h.Label());
  for (const VariantFigures& v : s.variants) {
    std::vector<std::string> row = {v.variant, Thousands(v.lists)};
    for (const Estimate& e : v.headlines)
      row.push_back(FormatEstimate(e, false));
    rows.push_back(std::move(row));
  }
  out += "  since start, mean [" + Percent(s.level) + " interval]:\n" +
         RenderTable(rows);
  if (!s.ab.empty()) {
    rows.clear();
    rows.push_back({"experiment", ""});
    std::vector<std::string>* row = nullptr;
    for (const AbFigures& ab : s.ab) {
      if (row == nullptr || (*row)[0] != ab.experiment ||
          (*row)[1] != ab.treatment + " vs " + ab.baseline) {
        rows.push_back({ab.experiment, ab.treatment + " vs " + ab.baseline});
        row = &rows.back();
      }
      if (rows.size() == 2) rows[0].push_back(ab.headline.Label());
      row->push_back(FormatAbDifference(ab) + " " +
                     std::string(VerdictName(ab.verdict)));
    }
    out += "  A/B difference [" + Percent(s.level) +
           " always-valid interval] and verdict:\n" + RenderTable(rows);
  }
  for (const SrmFigures& srm : s.srm) {
    out += "  " + srm.experiment +
           " sample ratio: " + (srm.detected ? "MISMATCH" : "ok") +
           " (p = " + PValue(srm.p_value) + ")\n";
  }
  for (const InterleavingFigures& il : s.interleaving) {
    out += "  interleaving " + il.experiment + " (" + il.challenger + " vs " +
           il.incumbent + "): preference " +
           FormatNumber(il.preference, 3, true) +
           ", p = " + PValue(il.p_value) + ", " +
           std::string(VerdictName(il.verdict)) + ", " +
           Thousands(il.impressions) + " impressions\n";
    const auto ranking = s.multileaving_ranking.find(il.experiment);
    if (ranking == s.multileaving_ranking.end()) continue;
    std::string teams;
    for (const std::string& team : ranking->second) {
      teams += (teams.empty() ? "" : " > ") + team;
    }
    const auto winner = s.multileaving_winner.find(il.experiment);
    out +=
        "  multileaving " + il.experiment + " ranking: " + teams +
        (winner == s.multileaving_winner.end() ? std::string(", no winner yet")
                                               : ", winner " + winner->second) +
        "\n";
  }
  return out;
}

}  // namespace rankwatch::cli
