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

#include "base/duration.h"
#include "base/strings.h"
#include "metrics/ab_stats.h"

namespace rankwatch::cli {

namespace {

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

std::string AbKey(std::string_view experiment, std::string_view treatment,
                  std::string_view measure, std::string_view k) {
  std::string key(experiment);
  for (std::string_view part : {treatment, measure, k}) {
    key.push_back('\x1f');
    key.append(part);
  }
  return key;
}

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

std::string FormatSequential(const Estimate& running, const Estimate& look) {
  const Estimate& d = running;
  // NaN compares false: without an interval the estimate prints alone.
  const bool outside = d.value < d.lower || d.value > d.upper;
  if (!outside) return FormatEstimate(d, true);
  Estimate at_look = look;
  at_look.value = d.value;
  const std::string since = FormatEstimate(d, true);
  return FormatEstimate(at_look, true) + " at this look; since start " +
         since.substr(since.find(" [") + 1);
}

std::string FormatAbDifference(const AbFigures& ab) {
  return FormatSequential(ab.difference, ab.look);
}

std::string FormatAdjusted(const AdjustedFigures& a) {
  if (a.status == "invalid_input") return "invalid input";
  const std::string figures = FormatSequential(a.difference, a.look);
  // The pairs' unadjusted figures: a ratio of 1 would read as "adjusted,
  // and it did not help".
  if (a.status == "no_covariate_variance") {
    return figures + ", not adjusted (no covariate variance)";
  }
  if (std::isnan(a.variance_ratio)) return figures;
  return figures + ", variance x" + FormatNumber(a.variance_ratio, 2, false);
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
  ObserveDecisions(s, &lines);
  ObserveInterleaving(s, &lines);
  // Query texts and variant names come from the events: never raw to the
  // terminal (issue 43).
  for (std::string& line : lines) line = TerminalSafe(line);
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

namespace {

// Why a decision keeps running, as a person asks it: the minimum sample
// not yet reached, else each primary series without a call yet, with its
// interval (it holds 0).
std::string WhyKeepRunning(const DecisionFigures& d) {
  if (!d.minimum_met) {
    return ": minimum sample not reached (lists " +
           Thousands(d.baseline_lists) + " and " +
           Thousands(d.treatment_lists) + " of " + Thousands(d.min_lists) +
           " per arm, " + FormatDuration(Duration(d.elapsed_ms / 1000 * 1000)) +
           " of " + FormatDuration(Duration(d.min_duration_ms / 1000 * 1000)) +
           ")";
  }
  std::string why;
  for (const DecisionInputFigures& in : d.inputs) {
    if (in.guardrail || in.input != 0) continue;
    why += (why.empty() ? ": " : "; ") + in.series.Label() +
           (std::isnan(in.lower)
                ? " has too few lists for an interval"
                : " inconclusive [" + FormatNumber(in.lower, 3, true) + ", " +
                      FormatNumber(in.upper, 3, true) + "]");
  }
  return why;
}

}  // namespace

std::string FormatDecision(const DecisionFigures& d) {
  const std::string what = d.value == "ship"      ? "ship " + d.treatment
                           : d.value == "no_ship" ? "do not ship " + d.treatment
                           : d.value == "invalid"
                               ? d.treatment +
                                     " cannot be judged (sample ratio "
                                     "mismatch)"
                               : "keep running " + d.treatment;
  // The series that made the decision: those blocking it for no_ship,
  // those supporting it for ship, none otherwise.
  const int wanted = d.value == "no_ship" ? -1 : d.value == "ship" ? 1 : 0;
  if (d.value == "keep_running") return what + WhyKeepRunning(d);
  std::string why;
  for (const DecisionInputFigures& in : d.inputs) {
    if (wanted == 0 || in.input != wanted) continue;
    std::string interval = "[" + FormatNumber(in.lower, 3, true) + ", " +
                           FormatNumber(in.upper, 3, true) + "]";
    std::string part;
    if (!in.guardrail) {
      part =
          in.series.Label() + (wanted > 0 ? " better " : " worse ") + interval;
    } else {
      const std::string margin =
          std::isnan(in.margin) ? std::string()
          : in.relative
              ? " (margin " + FormatNumber(100 * in.margin, 1, false) +
                    "% of the baseline)"
              : " (margin " + FormatNumber(in.margin, 3, false) + ")";
      part = "guardrail " + in.series.Label() +
             (wanted < 0 ? " beyond its margin " : " holds ") + interval +
             margin;
    }
    if (in.effect_changes > 0) part += " (since its effect changed)";
    why += (why.empty() ? ": " : "; ") + part;
  }
  // k > 1 primary series are read at level 1 - alpha / k (Bonferroni):
  // wider than the table's intervals of the same series, and said so.
  const auto primaries = std::count_if(
      d.inputs.begin(), d.inputs.end(),
      [](const DecisionInputFigures& in) { return !in.guardrail; });
  const bool shows_primary = std::any_of(
      d.inputs.begin(), d.inputs.end(), [&](const DecisionInputFigures& in) {
        return !in.guardrail && wanted != 0 && in.input == wanted;
      });
  if (primaries > 1 && shows_primary) {
    why +=
        " (primary series at 1 - alpha/" + std::to_string(primaries) + " each)";
  }
  return what + why;
}

void DemoStory::ObserveDecisions(const DemoSnapshot& s,
                                 std::vector<std::string>* lines) {
  for (const DecisionFigures& d : s.decisions) {
    // An effect that changed: said once per change, before the decision
    // it may bring (docs/statistics.md, "Effects that change").
    for (const DecisionInputFigures& in : d.inputs) {
      int64_t& told = effect_changes_[d.experiment + "/" + d.treatment + "/" +
                                      in.series.Label()];
      if (in.effect_changes > told) {
        lines->push_back(d.experiment + " effect changed: " + d.treatment +
                         "'s " + in.series.Label() +
                         " left its running interval; its interval now "
                         "counts from here");
      }
      told = in.effect_changes;
    }
    std::string& was = decisions_[d.experiment + "/" + d.treatment];
    // The first look's keep_running is the starting point, not news.
    if (d.value != was && !(was.empty() && d.value == "keep_running")) {
      lines->push_back(d.experiment + " decision: " + FormatDecision(d));
    }
    was = d.value;
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

namespace {

// The A/B rows of the table: per experiment and treatment the difference
// and verdict of each headline comparison and, with schema.covariate, a
// row of the regression-adjusted figures under it.
std::string AbTable(const DemoSnapshot& s) {
  if (s.ab.empty()) return "";
  std::string out;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"experiment", ""});
  // Each experiment and treatment is a row (s.ab is sorted by them);
  // with schema.covariate the row under it holds the regression-adjusted
  // figures of the same comparisons, column by column.
  bool adjusted = false;
  for (size_t i = 0; i < s.ab.size();) {
    size_t end = i;
    bool group_adjusted = false;
    while (end < s.ab.size() && s.ab[end].experiment == s.ab[i].experiment &&
           s.ab[end].treatment == s.ab[i].treatment) {
      group_adjusted = group_adjusted || s.ab[end].has_adjusted;
      ++end;
    }
    std::vector<std::string> row = {
        s.ab[i].experiment, s.ab[i].treatment + " vs " + s.ab[i].baseline};
    std::vector<std::string> adjusted_row = {"", "adjusted"};
    for (size_t j = i; j < end; ++j) {
      const AbFigures& ab = s.ab[j];
      if (i == 0) rows[0].push_back(ab.headline.Label());
      row.push_back(FormatAbDifference(ab) + " " +
                    std::string(VerdictName(ab.verdict)));
      adjusted_row.push_back(ab.has_adjusted ? FormatAdjusted(ab.adjusted)
                                             : "n/a");
    }
    rows.push_back(std::move(row));
    if (group_adjusted) rows.push_back(std::move(adjusted_row));
    adjusted = adjusted || group_adjusted;
    i = end;
  }
  out += "  A/B difference [" + Percent(s.level) +
         " always-valid interval] and verdict:\n";
  if (adjusted) {
    out += "  adjusted: regression-adjusted by " +
           (s.covariate.empty() ? std::string("the covariate") : s.covariate) +
           ", [" + Percent(s.level) +
           " always-valid interval] of its own test, variance adjusted / "
           "unadjusted\n";
  }
  out += RenderTable(rows);
  return out;
}

}  // namespace

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
  out += AbTable(s);
  for (const DecisionFigures& d : s.decisions) {
    out += "  " + d.experiment + " decision (" + d.treatment + " vs " +
           d.baseline + "): " + FormatDecision(d) + "\n";
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
  // What was lost or set aside, replay's lines indented as the table.
  for (size_t begin = 0; begin < s.set_aside.size();) {
    const size_t end = s.set_aside.find('\n', begin);
    out += "  " + s.set_aside.substr(begin, end + 1 - begin);
    begin = end + 1;
  }
  return TerminalSafe(out);  // Variant names come from the events.
}

}  // namespace rankwatch::cli
