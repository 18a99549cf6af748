#include "trec/judge_compare.h"

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "base/numeric.h"
#include "base/string_index.h"
#include "trec/report_format.h"

namespace rankwatch::trec {

namespace {

// Counts the docs of `a` that `b` grades too, calling `both(grade_a,
// grade_b)` for each; returns how many `a` grades that `b` does not.
template <typename Both>
int64_t WalkLabels(const Qrels& a, const Qrels& b, Both both) {
  int64_t only_a = 0;
  for (const QueryQrels& q : a.queries()) {
    const QueryQrels* other = b.FindQuery(q.qid);
    const std::span<const metrics::Grade> grades = a.grades(q);
    const std::span<const std::string_view> docnos = a.docnos(q);
    for (size_t i = 0; i < grades.size(); ++i) {
      if (grades[i] < 0) continue;  // Not a label.
      const metrics::Grade g =
          other == nullptr ? kNotInPool
                           : b.Lookup(*other, docnos[i], HashBytes(docnos[i]));
      if (g < 0) {
        ++only_a;
      } else {
        both(grades[i], g);
      }
    }
  }
  return only_a;
}

std::string_view WeightsName(metrics::KappaWeights w) {
  switch (w) {
    case metrics::KappaWeights::kNone:
      return "none";
    case metrics::KappaWeights::kLinear:
      return "linear";
    case metrics::KappaWeights::kQuadratic:
      return "quadratic";
  }
  return "?";
}

std::string_view MetricName(metrics::AlphaMetric m) {
  switch (m) {
    case metrics::AlphaMetric::kNominal:
      return "nominal";
    case metrics::AlphaMetric::kOrdinal:
      return "ordinal";
    case metrics::AlphaMetric::kInterval:
      return "interval";
  }
  return "?";
}

std::string Estimate(const std::optional<metrics::AgreementEstimate>& e) {
  if (!e) return "-";
  std::string s = Fixed(e->estimate);
  if (!std::isnan(e->lower)) {
    s += " [" + Fixed(e->lower) + ", " + Fixed(e->upper) + "]";
  }
  return s;
}

// KEY: estimate, KEY_interval: [lower, upper]; both null when undefined.
void WriteJsonEstimate(std::string_view key,
                       const std::optional<metrics::AgreementEstimate>& e,
                       JsonWriter* w) {
  w->Key(key);
  if (!e) {
    w->Null();
    w->Key(std::string(key) + "_interval");
    w->Null();
    return;
  }
  w->Double(e->estimate);
  w->Key(std::string(key) + "_interval");
  w->BeginArray();
  w->Double(e->lower);
  w->Double(e->upper);
  w->EndArray();
}

// KEY: value, KEY_interval: [lower, upper].
void WriteJsonInterval(std::string_view key, double value, double lower,
                       double upper, JsonWriter* w) {
  w->Key(key);
  w->Double(value);
  w->Key(std::string(key) + "_interval");
  w->BeginArray();
  w->Double(lower);
  w->Double(upper);
  w->EndArray();
}

// PpiRow of run `r` under measure `m`: trusted judge 0, cheap judge 1.
PpiRow Ppi(const RunScores& trusted, const RunScores& cheap, size_t r, size_t m,
           const JudgeCompareOptions& options) {
  PpiRow row;
  row.run = r;
  row.measure = m;
  std::vector<double> truth, predicted, others;
  // Both qid lists are ascending (strcmp order): a merge.
  size_t t = 0;
  for (size_t c = 0; c < cheap.qids.size(); ++c) {
    const double f = cheap.scores[m][c];
    while (t < trusted.qids.size() && trusted.qids[t] < cheap.qids[c]) ++t;
    const bool labelled = t < trusted.qids.size() &&
                          trusted.qids[t] == cheap.qids[c] &&
                          !std::isnan(trusted.scores[m][t]);
    if (std::isnan(f)) continue;
    if (labelled) {
      truth.push_back(trusted.scores[m][t]);
      predicted.push_back(f);
    } else {
      others.push_back(f);
    }
  }
  row.labelled = static_cast<int64_t>(truth.size());
  row.others = static_cast<int64_t>(others.size());
  row.estimate = metrics::PpiMean(truth, predicted, others, options.confidence,
                                  options.ppi_tune);
  return row;
}

}  // namespace

LabelAgreement AgreementOf(const metrics::GradePairs& both, int64_t only_first,
                           int64_t only_second,
                           const JudgeCompareOptions& options) {
  LabelAgreement a;
  a.pairs = both.items();
  a.only_first = only_first;
  a.only_second = only_second;
  a.kappa = metrics::CohenKappa(both, metrics::KappaWeights::kNone,
                                options.confidence);
  a.weighted_kappa =
      metrics::CohenKappa(both, options.weights, options.confidence);
  a.alpha = metrics::KrippendorffAlpha(both, options.alpha_metric,
                                       options.confidence);
  return a;
}

LabelAgreement CompareLabels(const Qrels& first, const Qrels& second,
                             const JudgeCompareOptions& options) {
  metrics::GradePairs both;
  const int64_t only_first =
      WalkLabels(first, second, [&](int gx, int gy) { both.Add(gx, gy); });
  const int64_t only_second = WalkLabels(second, first, [](int, int) {});
  return AgreementOf(both, only_first, only_second, options);
}

StatusOr<JudgeComparison> CompareJudges(
    std::span<const std::string> judges, std::span<const Qrels> qrels,
    std::span<const EvaluatedRuns> evaluated,
    const JudgeCompareOptions& options) {
  if (judges.size() < 2) {
    return Status::InvalidArgument("comparing judges needs two qrels or more");
  }
  if (qrels.size() != judges.size() || evaluated.size() != judges.size()) {
    return Status::InvalidArgument("one qrels and one evaluation per judge");
  }
  JudgeComparison c;
  c.options = options;
  c.judges.assign(judges.begin(), judges.end());
  c.measures = evaluated[0].measures;
  for (const RunScores& run : evaluated[0].runs) c.runs.push_back(run.name);
  for (size_t j = 0; j < judges.size(); ++j) {
    const EvaluatedRuns& e = evaluated[j];
    if (e.measures != c.measures || e.runs.size() != c.runs.size()) {
      return Status::InvalidArgument("the runs of judge '" + judges[j] +
                                     "' were evaluated differently");
    }
    std::vector<std::vector<double>> means;
    for (const RunScores& run : e.runs) {
      std::vector<double> m;
      for (const std::vector<double>& scores : run.scores) {
        m.push_back(MeanOfDefined(scores));
      }
      means.push_back(std::move(m));
    }
    c.means.push_back(std::move(means));
  }
  for (size_t a = 0; a < judges.size(); ++a) {
    for (size_t b = a + 1; b < judges.size(); ++b) {
      LabelAgreement l = CompareLabels(qrels[a], qrels[b], options);
      l.first = a;
      l.second = b;
      c.labels.push_back(l);
    }
  }
  for (size_t m = 0; m < c.measures.size(); ++m) {
    std::vector<double> reference;
    for (const auto& run : c.means[0]) reference.push_back(run[m]);
    for (size_t j = 1; j < judges.size(); ++j) {
      RankingAgreement r;
      r.measure = m;
      r.judge = j;
      std::vector<double> other;
      for (const auto& run : c.means[j]) other.push_back(run[m]);
      // A handful of runs: the exact permutation p-value.
      r.kendall =
          reference.size() <= metrics::kMaxExactPermutationN
              ? metrics::ExactPermutationCorrelations(reference, other).kendall
              : metrics::KendallTauB(reference, other);
      r.tau_ap = metrics::TauAp(reference, other);
      for (size_t p = 0; p < reference.size(); ++p) {
        for (size_t q = 0; q < reference.size(); ++q) {
          if (reference[p] > reference[q] && other[p] < other[q]) {
            r.swaps.push_back({p, q});
          }
        }
      }
      c.rankings.push_back(std::move(r));
    }
  }
  if (options.ppi) {
    for (size_t r = 0; r < c.runs.size(); ++r) {
      for (size_t m = 0; m < c.measures.size(); ++m) {
        c.ppi.push_back(
            Ppi(evaluated[0].runs[r], evaluated[1].runs[r], r, m, options));
      }
    }
  }
  return c;
}

namespace {

std::string WithInterval(double estimate, double lower, double upper) {
  return Fixed(estimate) + " [" + Fixed(lower) + ", " + Fixed(upper) + "]";
}

void AppendPpiText(const JudgeComparison& c, std::string* out) {
  if (!c.options.ppi) return;
  *out += "\nPrediction-powered means: " + c.judges[0] + " trusted, " +
          c.judges[1] + " cheap (" +
          (c.options.ppi_tune ? "PPI++, tuned lambda" : "PPI") + "); " +
          Format("%g", 100 * c.options.confidence) + "% intervals\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"run", "measure", "labelled", "others", "PPI", "trusted labels alone",
       "cheap judge alone"}};
  for (const PpiRow& p : c.ppi) {
    const auto& e = p.estimate;
    rows.push_back(
        {c.runs[p.run], c.measures[p.measure], Int(p.labelled), Int(p.others),
         e ? WithInterval(e->estimate, e->lower, e->upper) : "-",
         e ? WithInterval(e->classical, e->classical_lower, e->classical_upper)
           : "-",
         e ? Fixed(e->naive) : "-"});
  }
  AppendTable(rows, out);
}

}  // namespace

void AppendLabelAgreementTable(std::span<const std::string> judges,
                               std::span<const LabelAgreement> labels,
                               const JudgeCompareOptions& options,
                               std::string* out) {
  std::vector<std::vector<std::string>> rows = {
      {"judges", "pairs", "only first", "only second", "kappa",
       "weighted kappa (" + std::string(WeightsName(options.weights)) + ")",
       "alpha (" + std::string(MetricName(options.alpha_metric)) + ")"}};
  for (const LabelAgreement& l : labels) {
    rows.push_back({judges[l.first] + " ~ " + judges[l.second], Int(l.pairs),
                    Int(l.only_first), Int(l.only_second), Estimate(l.kappa),
                    Estimate(l.weighted_kappa), Estimate(l.alpha)});
  }
  AppendTable(rows, out);
}

void WriteJudgeComparisonText(const JudgeComparison& c, std::string* out) {
  const std::string level = Format("%g", 100 * c.options.confidence) + "%";
  *out += "Label agreement: the (query, doc) pairs both judges graded; " +
          level + " intervals\n\n";
  AppendLabelAgreementTable(c.judges, c.labels, c.options, out);
  std::vector<std::vector<std::string>> rows;
  if (c.runs.empty()) {
    *out += "\nNo runs given: no system rankings to compare.\n";
    return;
  }
  *out += "\nSystem rankings under each judge against " + c.judges[0] +
          " (the reference)\n\n";
  rows = {{"measure", "judge", "kendall_tau", "p", "tau_ap", "swapped pairs"}};
  for (const RankingAgreement& r : c.rankings) {
    rows.push_back({c.measures[r.measure], c.judges[r.judge],
                    r.kendall ? Fixed(r.kendall->coefficient) : "-",
                    r.kendall ? PValue(r.kendall->p_value) : "-",
                    r.tau_ap ? Fixed(*r.tau_ap) : "-",
                    Int(static_cast<int64_t>(r.swaps.size()))});
  }
  AppendTable(rows, out);
  AppendPpiText(c, out);
  bool any = false;
  for (const RankingAgreement& r : c.rankings) {
    for (const RankSwap& s : r.swaps) {
      if (!any) *out += "\nRuns that swap places\n\n";
      any = true;
      const auto& ref = c.means[0];
      const auto& judge = c.means[r.judge];
      *out += c.measures[r.measure] + ": " + c.judges[0] + " ranks " +
              c.runs[s.above] + " (" + Fixed(ref[s.above][r.measure]) +
              ") above " + c.runs[s.below] + " (" +
              Fixed(ref[s.below][r.measure]) + "); " + c.judges[r.judge] +
              " the other way (" + Fixed(judge[s.above][r.measure]) + " < " +
              Fixed(judge[s.below][r.measure]) + ")\n";
    }
  }
}

void WriteLabelAgreementJson(const std::string& first,
                             const std::string& second, const LabelAgreement& l,
                             JsonWriter* w) {
  w->BeginObject();
  WriteLabelAgreementMembers(first, second, l, w);
  w->EndObject();
}

void WriteLabelAgreementMembers(const std::string& first,
                                const std::string& second,
                                const LabelAgreement& l, JsonWriter* w) {
  w->Key("judges");
  w->StringArray(std::vector<std::string>{first, second});
  w->Key("pairs");
  w->Int(l.pairs);
  w->Key("only_first");
  w->Int(l.only_first);
  w->Key("only_second");
  w->Int(l.only_second);
  WriteJsonEstimate("kappa", l.kappa, w);
  WriteJsonEstimate("weighted_kappa", l.weighted_kappa, w);
  WriteJsonEstimate("alpha", l.alpha, w);
}

namespace {

void WriteJsonOptions(const JudgeCompareOptions& o, JsonWriter* w) {
  w->Key("options");
  w->BeginObject();
  w->Key("weights");
  w->String(WeightsName(o.weights));
  w->Key("alpha_metric");
  w->String(MetricName(o.alpha_metric));
  w->Key("confidence");
  w->Double(o.confidence);
  w->EndObject();
}

void WriteJsonLabels(const JudgeComparison& c, JsonWriter* w) {
  w->Key("agreement");
  w->BeginArray();
  for (const LabelAgreement& l : c.labels) {
    WriteLabelAgreementJson(c.judges[l.first], c.judges[l.second], l, w);
  }
  w->EndArray();
}

// {judge: {run: {measure: mean}}}.
void WriteJsonMeans(const JudgeComparison& c, JsonWriter* w) {
  w->Key("means");
  w->BeginObject();
  for (size_t j = 0; j < c.judges.size(); ++j) {
    w->Key(c.judges[j]);
    w->BeginObject();
    for (size_t r = 0; r < c.runs.size(); ++r) {
      w->Key(c.runs[r]);
      w->BeginObject();
      for (size_t m = 0; m < c.measures.size(); ++m) {
        w->Key(c.measures[m]);
        w->Double(c.means[j][r][m]);
      }
      w->EndObject();
    }
    w->EndObject();
  }
  w->EndObject();
}

void WriteJsonRankings(const JudgeComparison& c, JsonWriter* w) {
  w->Key("rankings");
  w->BeginArray();
  for (const RankingAgreement& r : c.rankings) {
    w->BeginObject();
    w->Key("measure");
    w->String(c.measures[r.measure]);
    w->Key("reference");
    w->String(c.judges[0]);
    w->Key("judge");
    w->String(c.judges[r.judge]);
    w->Key("kendall_tau");
    w->Double(r.kendall ? r.kendall->coefficient : kNaN);
    w->Key("kendall_p_value");
    w->Double(r.kendall ? r.kendall->p_value : kNaN);
    w->Key("tau_ap");
    w->OptionalDouble(r.tau_ap);
    // Each [above, below]: the reference ranks `above` higher, the judge
    // lower.
    w->Key("swaps");
    w->BeginArray();
    for (const RankSwap& s : r.swaps) {
      w->StringArray(
          std::vector<std::string>{c.runs[s.above], c.runs[s.below]});
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

void WriteJsonPpiRow(const JudgeComparison& c, const PpiRow& p, JsonWriter* w) {
  w->BeginObject();
  w->Key("run");
  w->String(c.runs[p.run]);
  w->Key("measure");
  w->String(c.measures[p.measure]);
  w->Key("labelled");
  w->Int(p.labelled);
  w->Key("others");
  w->Int(p.others);
  if (const std::optional<metrics::PpiMeanEstimate>& e = p.estimate) {
    WriteJsonInterval("estimate", e->estimate, e->lower, e->upper, w);
    w->Key("lambda");
    w->Double(e->lambda);
    WriteJsonInterval("classical", e->classical, e->classical_lower,
                      e->classical_upper, w);
    w->Key("naive");
    w->Double(e->naive);
  } else {
    w->Key("estimate");
    w->Null();
  }
  w->EndObject();
}

void WriteJsonPpi(const JudgeComparison& c, JsonWriter* w) {
  w->Key("ppi");
  w->BeginObject();
  w->Key("trusted");
  w->String(c.judges[0]);
  w->Key("cheap");
  w->String(c.judges[1]);
  w->Key("tuned");
  w->Bool(c.options.ppi_tune);
  w->Key("means");
  w->BeginArray();
  for (const PpiRow& p : c.ppi) WriteJsonPpiRow(c, p, w);
  w->EndArray();
  w->EndObject();
}

}  // namespace

void WriteJudgeComparisonJson(const JudgeComparison& c, std::string* out) {
  JsonWriter w(JsonSpacing::kSpaced);
  w.BeginObject();
  w.Key("judges");
  w.StringArray(c.judges);
  w.Key("runs");
  w.StringArray(c.runs);
  w.Key("measures");
  w.StringArray(c.measures);
  WriteJsonOptions(c.options, &w);
  WriteJsonLabels(c, &w);
  WriteJsonMeans(c, &w);
  WriteJsonRankings(c, &w);
  if (c.options.ppi) WriteJsonPpi(c, &w);
  w.EndObject();
  *out += w.Take();
  *out += '\n';
}

}  // namespace rankwatch::trec
