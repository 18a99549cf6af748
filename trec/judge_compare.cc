#include "trec/judge_compare.h"

#include <cmath>
#include <string_view>

#include "base/json_writer.h"
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

void AppendJsonEstimate(std::string* out, std::string_view key,
                        const std::optional<metrics::AgreementEstimate>& e) {
  AppendJsonKey(out, key);
  if (!e) {
    *out += "null, ";
    AppendJsonKey(out, std::string(key) + "_interval");
    *out += "null";
    return;
  }
  AppendJsonNumber(out, e->estimate);
  *out += ", ";
  AppendJsonKey(out, std::string(key) + "_interval");
  *out += "[";
  AppendJsonNumber(out, e->lower);
  *out += ", ";
  AppendJsonNumber(out, e->upper);
  *out += "]";
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

LabelAgreement CompareLabels(const Qrels& first, const Qrels& second,
                             const JudgeCompareOptions& options) {
  LabelAgreement a;
  std::vector<int> x, y;
  a.only_first = WalkLabels(first, second, [&](int gx, int gy) {
    x.push_back(gx);
    y.push_back(gy);
  });
  a.only_second = WalkLabels(second, first, [](int, int) {});
  a.pairs = static_cast<int64_t>(x.size());
  a.kappa = metrics::CohenKappa(x, y, metrics::KappaWeights::kNone,
                                options.confidence);
  a.weighted_kappa =
      metrics::CohenKappa(x, y, options.weights, options.confidence);
  a.alpha = metrics::KrippendorffAlpha(x, y, options.alpha_metric,
                                       options.confidence);
  return a;
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
      r.kendall = metrics::KendallTauB(reference, other);
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

void WriteJudgeComparisonText(const JudgeComparison& c, std::string* out) {
  const std::string level = Format("%g", 100 * c.options.confidence) + "%";
  *out += "Label agreement: the (query, doc) pairs both judges graded; " +
          level + " intervals\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"judges", "pairs", "only first", "only second", "kappa",
       "weighted kappa (" + std::string(WeightsName(c.options.weights)) + ")",
       "alpha (" + std::string(MetricName(c.options.alpha_metric)) + ")"}};
  for (const LabelAgreement& l : c.labels) {
    rows.push_back({c.judges[l.first] + " ~ " + c.judges[l.second],
                    Int(l.pairs), Int(l.only_first), Int(l.only_second),
                    Estimate(l.kappa), Estimate(l.weighted_kappa),
                    Estimate(l.alpha)});
  }
  AppendTable(rows, out);
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

void WriteJudgeComparisonJson(const JudgeComparison& c, std::string* out) {
  auto strings = [&](std::string_view key,
                     const std::vector<std::string>& values) {
    AppendJsonKey(out, key);
    *out += "[";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) *out += ", ";
      AppendJsonString(out, values[i]);
    }
    *out += "]";
  };
  *out += "{";
  strings("judges", c.judges);
  *out += ", ";
  strings("runs", c.runs);
  *out += ", ";
  strings("measures", c.measures);
  *out += ", ";
  AppendJsonKey(out, "options");
  *out += "{\"weights\": ";
  AppendJsonString(out, WeightsName(c.options.weights));
  *out += ", \"alpha_metric\": ";
  AppendJsonString(out, MetricName(c.options.alpha_metric));
  *out += ", \"confidence\": ";
  AppendJsonNumber(out, c.options.confidence);
  *out += "}, ";
  AppendJsonKey(out, "agreement");
  *out += "[";
  for (size_t i = 0; i < c.labels.size(); ++i) {
    const LabelAgreement& l = c.labels[i];
    if (i > 0) *out += ", ";
    *out += "{";
    strings("judges", {c.judges[l.first], c.judges[l.second]});
    *out += ", \"pairs\": " + Int(l.pairs) +
            ", \"only_first\": " + Int(l.only_first) +
            ", \"only_second\": " + Int(l.only_second) + ", ";
    AppendJsonEstimate(out, "kappa", l.kappa);
    *out += ", ";
    AppendJsonEstimate(out, "weighted_kappa", l.weighted_kappa);
    *out += ", ";
    AppendJsonEstimate(out, "alpha", l.alpha);
    *out += "}";
  }
  *out += "], ";
  AppendJsonKey(out, "means");
  *out += "{";
  for (size_t j = 0; j < c.judges.size(); ++j) {
    if (j > 0) *out += ", ";
    AppendJsonKey(out, c.judges[j]);
    *out += "{";
    for (size_t r = 0; r < c.runs.size(); ++r) {
      if (r > 0) *out += ", ";
      AppendJsonKey(out, c.runs[r]);
      *out += "{";
      for (size_t m = 0; m < c.measures.size(); ++m) {
        if (m > 0) *out += ", ";
        AppendJsonKey(out, c.measures[m]);
        AppendJsonNumber(out, c.means[j][r][m]);
      }
      *out += "}";
    }
    *out += "}";
  }
  *out += "}, ";
  AppendJsonKey(out, "rankings");
  *out += "[";
  for (size_t i = 0; i < c.rankings.size(); ++i) {
    const RankingAgreement& r = c.rankings[i];
    if (i > 0) *out += ", ";
    *out += "{\"measure\": ";
    AppendJsonString(out, c.measures[r.measure]);
    *out += ", \"reference\": ";
    AppendJsonString(out, c.judges[0]);
    *out += ", \"judge\": ";
    AppendJsonString(out, c.judges[r.judge]);
    *out += ", \"kendall_tau\": ";
    AppendJsonNumber(out, r.kendall ? r.kendall->coefficient : std::nan(""));
    *out += ", \"kendall_p_value\": ";
    AppendJsonNumber(out, r.kendall ? r.kendall->p_value : std::nan(""));
    *out += ", \"tau_ap\": ";
    AppendJsonNumber(out, r.tau_ap.value_or(std::nan("")));
    *out += ", \"swaps\": [";
    // Each [above, below]: the reference ranks `above` higher, the judge
    // lower.
    for (size_t s = 0; s < r.swaps.size(); ++s) {
      if (s > 0) *out += ", ";
      *out += "[";
      AppendJsonString(out, c.runs[r.swaps[s].above]);
      *out += ", ";
      AppendJsonString(out, c.runs[r.swaps[s].below]);
      *out += "]";
    }
    *out += "]}";
  }
  *out += "]";
  if (c.options.ppi) {
    *out += ", ";
    AppendJsonKey(out, "ppi");
    *out += "{\"trusted\": ";
    AppendJsonString(out, c.judges[0]);
    *out += ", \"cheap\": ";
    AppendJsonString(out, c.judges[1]);
    *out += ", \"tuned\": ";
    *out += c.options.ppi_tune ? "true" : "false";
    *out += ", \"means\": [";
    for (size_t i = 0; i < c.ppi.size(); ++i) {
      const PpiRow& p = c.ppi[i];
      if (i > 0) *out += ", ";
      *out += "{\"run\": ";
      AppendJsonString(out, c.runs[p.run]);
      *out += ", \"measure\": ";
      AppendJsonString(out, c.measures[p.measure]);
      *out += ", \"labelled\": " + Int(p.labelled) +
              ", \"others\": " + Int(p.others);
      const auto& e = p.estimate;
      const auto pair = [&](std::string_view key, double v, double lo,
                            double hi) {
        *out += ", ";
        AppendJsonKey(out, key);
        AppendJsonNumber(out, v);
        *out += ", ";
        AppendJsonKey(out, std::string(key) + "_interval");
        *out += "[";
        AppendJsonNumber(out, lo);
        *out += ", ";
        AppendJsonNumber(out, hi);
        *out += "]";
      };
      if (e) {
        pair("estimate", e->estimate, e->lower, e->upper);
        *out += ", \"lambda\": ";
        AppendJsonNumber(out, e->lambda);
        pair("classical", e->classical, e->classical_lower, e->classical_upper);
        *out += ", \"naive\": ";
        AppendJsonNumber(out, e->naive);
      } else {
        *out += ", \"estimate\": null";
      }
      *out += "}";
    }
    *out += "]}";
  }
  *out += "}\n";
}

}  // namespace rankwatch::trec
