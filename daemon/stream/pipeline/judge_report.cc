#include "daemon/stream/pipeline/judge_report.h"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include "base/duration.h"

namespace rankwatch::stream {

namespace {

constexpr std::string_view kWindowAll = "all";

// A series' totals over the whole run (window -1) or window w.
WindowTotals TotalsOf(const PipelineSnapshot& s, const GroupStats& g,
                      size_t series, int w) {
  return stream::TotalsOf(g, series, w, s.windows_ms, s.window_now_ms);
}

std::string_view WindowName(const std::vector<std::string>& labels, int w) {
  return w < 0 ? kWindowAll : std::string_view(labels[static_cast<size_t>(w)]);
}

// "lists" and "mean" (null without a list) of one series and window. The
// whole run's mean is RunningStats' (Welford), as replay's means are.
void WriteListsAndMean(const PipelineSnapshot& s, const GroupStats& g,
                       size_t series, int w, JsonWriter* out) {
  const WindowTotals t = TotalsOf(s, g, series, w);
  out->Key("lists");
  out->Int(t.count);
  out->Key("mean");
  if (t.count == 0) {
    out->Null();
  } else {
    out->Double(w < 0 ? g.all[series].mean() : t.mean());
  }
}

// The rows of one role: per group, series of that role, window.
void WriteRoleRows(const PipelineSnapshot& s,
                   const std::vector<std::string>& labels, JudgeSeriesRole role,
                   JsonWriter* out) {
  const int num_windows = static_cast<int>(s.windows_ms.size());
  out->BeginArray();
  for (const GroupStats& g : s.judge_groups) {
    for (size_t i = 0; i < s.judge_layout.size(); ++i) {
      const JudgeSeries& l = s.judge_layout[i];
      if (l.role != role) continue;
      const SeriesSpec& spec = s.judge_series[i];
      for (int w = -1; w < num_windows; ++w) {
        out->BeginObject();
        out->Key("variant");
        out->String(g.variant);
        if (l.judge >= 0) {
          out->Key("judge");
          out->String(s.judges[static_cast<size_t>(l.judge)]);
        }
        if (role == JudgeSeriesRole::kMeasure) {
          out->Key("measure");
          out->String(spec.name);
        }
        out->Key("k");
        out->String(spec.k_label);
        out->Key("window");
        out->String(WindowName(labels, w));
        WriteListsAndMean(s, g, i, w, out);
        out->EndObject();
      }
    }
  }
  out->EndArray();
}

void WritePpi(const PipelineSnapshot& s, const std::vector<std::string>& labels,
              JsonWriter* out) {
  const config::JudgesPpiConfig& c = s.config.judges.ppi;
  out->BeginArray();
  for (const PpiFigure& f : s.ppi) {
    const SeriesSpec& spec = s.series[f.series];
    out->BeginObject();
    out->Key("variant");
    out->String(s.judge_groups[f.group].variant);
    out->Key("measure");
    out->String(spec.name);
    out->Key("k");
    out->String(spec.k_label);
    out->Key("window");
    out->String(WindowName(labels, f.window));
    out->Key("trusted");
    out->String(c.trusted);
    out->Key("cheap");
    out->String(c.cheap);
    out->Key("labelled");
    out->Int(f.moments.n);
    out->Key("others");
    out->Int(f.moments.others);
    const std::optional<metrics::PpiMeanEstimate>& e = f.estimate;
    const auto figure = [&](std::string_view key, double v) {
      out->Key(key);
      if (e) {
        out->Double(v);
      } else {
        out->Null();
      }
    };
    const metrics::PpiMeanEstimate none;
    const metrics::PpiMeanEstimate& v = e ? *e : none;
    figure("estimate", v.estimate);
    figure("lower", v.lower);
    figure("upper", v.upper);
    figure("lambda", v.lambda);
    figure("classical", v.classical);
    figure("classical_lower", v.classical_lower);
    figure("classical_upper", v.classical_upper);
    figure("naive", v.naive);
    out->EndObject();
  }
  out->EndArray();
}

void WriteCoverageChecks(const PipelineSnapshot& s, JsonWriter* out) {
  out->BeginArray();
  for (const CoverageCheck& c : s.coverage) {
    const config::ExperimentConfig& x = s.config.experiments[c.experiment];
    out->BeginObject();
    out->Key("experiment");
    out->String(x.name);
    out->Key("baseline");
    out->String(x.baseline);
    out->Key("treatment");
    out->String(c.treatment);
    out->Key("k");
    out->String(std::to_string(c.cutoff));
    out->Key("baseline_unjudged");
    out->Double(c.baseline_unjudged);  // NaN (no list yet) is null.
    out->Key("treatment_unjudged");
    out->Double(c.treatment_unjudged);
    out->Key("tolerance");
    out->Double(s.config.judges.coverage_tolerance);
    out->Key("flagged");
    out->Bool(c.flagged);
    out->EndObject();
  }
  out->EndArray();
}

void WriteAgreementWindows(const PipelineSnapshot& s,
                           const std::vector<std::string>& labels,
                           JsonWriter* out) {
  out->BeginArray();
  for (size_t w = 0; w < s.window_agreement.size() && w < labels.size(); ++w) {
    for (const trec::LabelAgreement& a : s.window_agreement[w]) {
      out->BeginObject();
      out->Key("window");
      out->String(labels[w]);
      trec::WriteLabelAgreementMembers(s.judges[a.first], s.judges[a.second], a,
                                       out);
      out->EndObject();
    }
  }
  out->EndArray();
}

// "0.1234", or "-" for NaN.
std::string Fixed(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", v);
  return buf;
}

std::string Interval(double lower, double upper) {
  return "[" + Fixed(lower) + ", " + Fixed(upper) + "]";
}

void AppendPpiTable(const PipelineSnapshot& s, std::string* out) {
  bool header = false;
  char buf[320];
  for (const PpiFigure& f : s.ppi) {
    if (f.window >= 0) continue;  // Since start, as the table's means.
    if (!header) {
      const config::JudgesPpiConfig& c = s.config.judges.ppi;
      std::snprintf(buf, sizeof(buf),
                    "\nprediction-powered means since start (%s's labels "
                    "corrected by %s's; %g%% intervals)\n"
                    "  %-12s %-16s %8s %8s %9s %-20s %9s %-20s %8s\n",
                    c.trusted.c_str(), c.cheap.c_str(),
                    100 * s.config.statistics.level, "variant", "measure",
                    "labelled", "others", "estimate", "interval", "classical",
                    "interval", "naive");
      *out += buf;
      header = true;
    }
    const metrics::PpiMeanEstimate none;
    const metrics::PpiMeanEstimate& e = f.estimate ? *f.estimate : none;
    const bool has = f.estimate.has_value();
    std::snprintf(
        buf, sizeof(buf), "  %-12s %-16s %8lld %8lld %9s %-20s %9s %-20s %8s\n",
        s.judge_groups[f.group].variant.c_str(),
        s.series[f.series].trec_name.c_str(),
        static_cast<long long>(f.moments.n),
        static_cast<long long>(f.moments.others),
        has ? Fixed(e.estimate).c_str() : "-",
        has ? Interval(e.lower, e.upper).c_str() : "(too few labels)",
        has ? Fixed(e.classical).c_str() : "-",
        has ? Interval(e.classical_lower, e.classical_upper).c_str() : "",
        has ? Fixed(e.naive).c_str() : "-");
    *out += buf;
  }
}

void AppendCoverageTable(const PipelineSnapshot& s, std::string* out) {
  if (s.coverage.empty()) return;
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "\ncoverage checks: share of the served top k no judge "
                "labelled, since start (tolerance %g)\n"
                "  %-16s %-12s %-12s %4s %9s %9s\n",
                s.config.judges.coverage_tolerance, "experiment", "baseline",
                "treatment", "k", "baseline", "treatment");
  *out += buf;
  for (const CoverageCheck& c : s.coverage) {
    const config::ExperimentConfig& x = s.config.experiments[c.experiment];
    std::snprintf(buf, sizeof(buf), "  %-16s %-12s %-12s %4d %9s %9s%s\n",
                  x.name.c_str(), x.baseline.c_str(), c.treatment.c_str(),
                  c.cutoff, Fixed(c.baseline_unjudged).c_str(),
                  Fixed(c.treatment_unjudged).c_str(),
                  c.flagged ? "  FLAGGED: the arms are judged unequally; "
                              "unjudged docs count as non-relevant"
                            : "");
    *out += buf;
  }
}

}  // namespace

void WriteJudgeFiguresJson(const PipelineSnapshot& s, JsonWriter* out) {
  const std::vector<std::string> labels = WindowLabels(s.windows_ms);
  out->BeginObject();
  out->Key("names");
  out->StringArray(s.judges);
  out->Key("combine");
  out->String(config::JudgeCombineName(s.config.judges.combine));
  out->Key("measures");
  WriteRoleRows(s, labels, JudgeSeriesRole::kMeasure, out);
  out->Key("coverage");
  WriteRoleRows(s, labels, JudgeSeriesRole::kCoverage, out);
  out->Key("unjudged");
  WriteRoleRows(s, labels, JudgeSeriesRole::kUnjudged, out);
  out->Key("ppi");
  WritePpi(s, labels, out);
  out->Key("coverage_checks");
  WriteCoverageChecks(s, out);
  out->Key("agreement_windows");
  WriteAgreementWindows(s, labels, out);
  out->EndObject();
}

void AppendJudgeFiguresTable(const PipelineSnapshot& s, std::string* out) {
  if (s.judges.empty() || s.judge_layout.empty()) return;
  char buf[256];
  std::snprintf(
      buf, sizeof(buf),
      "\njudges (%s): each judge's labels alone, since start "
      "(a measure counts the lists the judge labelled)\n"
      "  %-12s %-12s %-16s %10s %10s\n",
      std::string(config::JudgeCombineName(s.config.judges.combine)).c_str(),
      "variant", "judge", "series", "lists", "mean");
  *out += buf;
  for (const GroupStats& g : s.judge_groups) {
    // Layout order: each judge's measures then coverage, then unjudged.
    for (size_t i = 0; i < s.judge_layout.size(); ++i) {
      const JudgeSeries& l = s.judge_layout[i];
      if (l.role != JudgeSeriesRole::kMeasure &&
          l.role != JudgeSeriesRole::kCoverage &&
          l.role != JudgeSeriesRole::kUnjudged) {
        continue;
      }
      const metrics::RunningStats& r = g.all[i];
      const std::string judge =
          l.judge >= 0 ? s.judges[static_cast<size_t>(l.judge)] : "(none)";
      std::snprintf(buf, sizeof(buf), "  %-12s %-12s %-16s %10lld %10s\n",
                    g.variant.c_str(), judge.c_str(),
                    s.judge_series[i].trec_name.c_str(),
                    static_cast<long long>(r.count()),
                    r.count() > 0 ? Fixed(r.mean()).c_str() : "-");
      *out += buf;
    }
  }
  AppendPpiTable(s, out);
  AppendCoverageTable(s, out);
}

}  // namespace rankwatch::stream
