#include "trec/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "base/json_writer.h"
#include "base/numeric.h"
#include "metrics/multiple_testing.h"
#include "trec/parallel.h"
#include "trec/report_format.h"

namespace rankwatch::trec {

namespace {

Status CheckOptions(const CompareOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1)) {
    return Status::InvalidArgument("alpha must be in (0, 1)");
  }
  if (!(o.confidence > 0 && o.confidence < 1)) {
    return Status::InvalidArgument("confidence must be in (0, 1)");
  }
  if (o.permutations < 1) {
    return Status::InvalidArgument("permutations must be at least 1");
  }
  if (o.bootstrap < 1) {
    return Status::InvalidArgument("bootstrap resamples must be at least 1");
  }
  return Status::Ok();
}

Status CheckShape(std::span<const std::string> measures,
                  std::span<const RunScores> runs, size_t baseline) {
  if (runs.size() < 2) {
    return Status::InvalidArgument("compare needs at least two runs");
  }
  if (baseline >= runs.size()) {
    return Status::InvalidArgument("baseline run out of range");
  }
  if (measures.empty()) return Status::InvalidArgument("no measure to compare");
  for (const RunScores& run : runs) {
    bool ok = run.scores.size() == measures.size();
    for (size_t m = 0; ok && m < run.scores.size(); ++m) {
      ok = run.scores[m].size() == run.qids.size();
    }
    for (size_t q = 1; ok && q < run.qids.size(); ++q) {
      ok = run.qids[q - 1] < run.qids[q];
    }
    if (!ok) {
      return Status::InvalidArgument("malformed score table of run " +
                                     run.name);
    }
  }
  return Status::Ok();
}

// The qids present in every run (each run's list is sorted and unique).
std::vector<std::string> CommonQids(std::span<const RunScores> runs) {
  std::vector<std::string> common = runs[0].qids;
  for (size_t r = 1; r < runs.size(); ++r) {
    std::vector<std::string> next;
    std::set_intersection(common.begin(), common.end(), runs[r].qids.begin(),
                          runs[r].qids.end(), std::back_inserter(next));
    common = std::move(next);
  }
  return common;
}

// aligned[m][i]: the run's score of measure m on common[i].
std::vector<std::vector<double>> Align(const RunScores& run,
                                       const std::vector<std::string>& common) {
  std::vector<std::vector<double>> aligned(run.scores.size());
  for (auto& column : aligned) column.reserve(common.size());
  size_t q = 0;
  for (const std::string& qid : common) {
    while (run.qids[q] != qid) ++q;  // `common` is a sorted subset.
    for (size_t m = 0; m < run.scores.size(); ++m) {
      aligned[m].push_back(run.scores[m][q]);
    }
  }
  return aligned;
}

// The `n` largest differences (run - baseline) of one sign, largest in
// magnitude first.
std::vector<QueryDifference> Extremes(std::span<const double> run,
                                      std::span<const double> baseline,
                                      const std::vector<std::string>& qids,
                                      int64_t n, bool gains) {
  std::vector<QueryDifference> out;
  for (size_t i = 0; i < run.size(); ++i) {
    const double d = run[i] - baseline[i];
    if (std::isnan(d) || (gains ? d <= 0 : d >= 0)) continue;
    out.push_back({qids[i], baseline[i], run[i], d});
  }
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return gains ? a.difference > b.difference : a.difference < b.difference;
  });
  if (static_cast<int64_t>(out.size()) > n) out.resize(static_cast<size_t>(n));
  return out;
}

void ComparePair(std::vector<double> treatment, std::vector<double> baseline,
                 const std::vector<std::string>& qids,
                 const CompareOptions& options, PairComparison* pair) {
  if (options.per_query > 0) {
    pair->gains = Extremes(treatment, baseline, qids, options.per_query, true);
    pair->losses =
        Extremes(treatment, baseline, qids, options.per_query, false);
  }
  // A measure undefined on a query for either run (rankwatch's per-list
  // spearman and kendall_tau) leaves that query out of the pair.
  size_t kept = 0;
  for (size_t i = 0; i < treatment.size(); ++i) {
    if (std::isnan(treatment[i]) || std::isnan(baseline[i])) continue;
    treatment[kept] = treatment[i];
    baseline[kept] = baseline[i];
    ++kept;
  }
  treatment.resize(kept);
  baseline.resize(kept);
  pair->t_test = metrics::PairedTTest(treatment, baseline);
  pair->randomization = metrics::PairedRandomizationTest(
      treatment, baseline, {options.permutations, options.seed});
  pair->bootstrap = metrics::PairedBootstrapInterval(
      treatment, baseline,
      {options.bootstrap, options.confidence, options.seed});
  pair->win_tie_loss = metrics::CountWinTieLoss(treatment, baseline)
                           .value_or(metrics::WinTieLoss{});
  pair->query_kendall = metrics::KendallTauB(treatment, baseline);
  pair->query_spearman = metrics::SpearmanRho(treatment, baseline);
}

double ChosenP(const PairComparison& p, Correction correction) {
  switch (correction) {
    case Correction::kHolm:
      return p.randomization_holm;
    case Correction::kBenjaminiHochberg:
      return p.randomization_bh;
    case Correction::kNone:
      return p.randomization.p_value;
  }
  return kNaN;
}

// Fills the adjusted p-values and the significance marks of every pair.
void Adjust(const CompareOptions& options, std::vector<PairComparison>* pairs) {
  std::vector<double> randomization, t;
  for (const PairComparison& p : *pairs) {
    randomization.push_back(p.randomization.p_value);
    t.push_back(p.t_test.p_value);
  }
  std::vector<double> r_holm(pairs->size()), r_bh(pairs->size());
  std::vector<double> t_holm(pairs->size()), t_bh(pairs->size());
  metrics::Holm(randomization, r_holm);
  metrics::BenjaminiHochberg(randomization, r_bh);
  metrics::Holm(t, t_holm);
  metrics::BenjaminiHochberg(t, t_bh);
  for (size_t i = 0; i < pairs->size(); ++i) {
    PairComparison& p = (*pairs)[i];
    p.randomization_holm = r_holm[i];
    p.randomization_bh = r_bh[i];
    p.t_holm = t_holm[i];
    p.t_bh = t_bh[i];
    p.significant = ChosenP(p, options.correction) < options.alpha;
  }
}

std::vector<MeasureAgreement> Agreements(
    const std::vector<std::vector<double>>& means, size_t measures) {
  std::vector<MeasureAgreement> out;
  for (size_t a = 0; a < measures; ++a) {
    for (size_t b = a + 1; b < measures; ++b) {
      MeasureAgreement agreement{a, b, std::nullopt, std::nullopt};
      // Two runs always correlate +-1: no evidence of agreement.
      if (means.size() >= 3) {
        std::vector<double> x, y;
        for (const auto& run : means) {
          x.push_back(run[a]);
          y.push_back(run[b]);
        }
        // A handful of systems: exact permutation p-values (the
        // asymptotic ones say p = 0 for 3 runs in one order).
        if (x.size() <= metrics::kMaxExactPermutationN) {
          const metrics::ExactRankCorrelations exact =
              metrics::ExactPermutationCorrelations(x, y);
          agreement.kendall = exact.kendall;
          agreement.spearman = exact.spearman;
        } else {
          agreement.kendall = metrics::KendallTauB(x, y);
          agreement.spearman = metrics::SpearmanRho(x, y);
        }
      }
      out.push_back(agreement);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Formatting.

std::string CorrectionLabel(Correction correction) {
  switch (correction) {
    case Correction::kHolm:
      return "Holm-adjusted";
    case Correction::kBenjaminiHochberg:
      return "Benjamini-Hochberg-adjusted";
    case Correction::kNone:
      return "unadjusted";
  }
  return "";
}

std::string Coefficient(const std::optional<metrics::RankCorrelation>& c) {
  return c ? Format("%.4f", c->coefficient) : "-";
}

std::string CoefficientP(const std::optional<metrics::RankCorrelation>& c) {
  return c ? PValue(c->p_value) : "-";
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    return std::string(s);
  }
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string LatexEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '_':
      case '&':
      case '%':
      case '$':
      case '#':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

// {"coefficient": ..., "p_value": ...}, or null when undefined.
void WriteJsonCorrelation(std::string_view key,
                          const std::optional<metrics::RankCorrelation>& c,
                          JsonWriter* w) {
  w->Key(key);
  if (!c) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("coefficient");
  w->Double(c->coefficient);
  w->Key("p_value");
  w->Double(c->p_value);
  w->EndObject();
}

void WriteJsonOptions(const CompareOptions& o, JsonWriter* w) {
  w->Key("options");
  w->BeginObject();
  w->Key("correction");
  w->String(CorrectionName(o.correction));
  w->Key("alpha");
  w->Double(o.alpha);
  w->Key("permutations");
  w->Int(o.permutations);
  w->Key("bootstrap");
  w->Int(o.bootstrap);
  w->Key("confidence");
  w->Double(o.confidence);
  w->Key("seed");
  w->Uint(o.seed);
  w->EndObject();
}

void WriteJsonRuns(const Comparison& c, JsonWriter* w) {
  w->Key("runs");
  w->BeginArray();
  for (size_t r = 0; r < c.runs.size(); ++r) {
    w->BeginObject();
    w->Key("name");
    w->String(c.runs[r]);
    w->Key("excluded_queries");
    w->Int(c.excluded[r]);
    w->Key("means");
    w->BeginObject();
    for (size_t m = 0; m < c.measures.size(); ++m) {
      w->Key(c.measures[m]);
      w->Double(c.means[r][m]);
    }
    w->EndObject();
    w->EndObject();
  }
  w->EndArray();
}

// "gains" or "losses": [{query, baseline, run, difference}, ...].
void WriteJsonQueryDifferences(std::string_view key,
                               const std::vector<QueryDifference>& list,
                               JsonWriter* w) {
  w->Key(key);
  w->BeginArray();
  for (const QueryDifference& d : list) {
    w->BeginObject();
    w->Key("query");
    w->String(d.qid);
    w->Key("baseline");
    w->Double(d.baseline);
    w->Key("run");
    w->Double(d.run);
    w->Key("difference");
    w->Double(d.difference);
    w->EndObject();
  }
  w->EndArray();
}

void WriteJsonPair(const Comparison& c, const PairComparison& p,
                   JsonWriter* w) {
  w->BeginObject();
  w->Key("run");
  w->String(c.runs[p.run]);
  w->Key("measure");
  w->String(c.measures[p.measure]);
  const std::pair<const char*, double> numbers[] = {
      {"mean", c.means[p.run][p.measure]},
      {"baseline_mean", c.means[c.baseline][p.measure]},
      {"difference", p.randomization.mean_difference},
      {"t_statistic", p.t_test.t_statistic},
      {"t_p", p.t_test.p_value},
      {"randomization_p", p.randomization.p_value},
      {"bootstrap_lower", p.bootstrap.ci_lower},
      {"bootstrap_upper", p.bootstrap.ci_upper},
      {"randomization_p_holm", p.randomization_holm},
      {"randomization_p_bh", p.randomization_bh},
      {"t_p_holm", p.t_holm},
      {"t_p_bh", p.t_bh},
  };
  for (const auto& [key, value] : numbers) {
    w->Key(key);
    w->Double(value);
  }
  w->Key("permutations");
  w->Int(p.randomization.permutations);
  w->Key("exact");
  w->Bool(p.randomization.exact);
  const std::pair<const char*, int64_t> counts[] = {
      {"resamples", p.bootstrap.resamples},
      {"wins", p.win_tie_loss.wins},
      {"ties", p.win_tie_loss.ties},
      {"losses", p.win_tie_loss.losses},
  };
  for (const auto& [key, value] : counts) {
    w->Key(key);
    w->Int(value);
  }
  w->Key("significant");
  w->Bool(p.significant);
  WriteJsonCorrelation("kendall_tau_b", p.query_kendall, w);
  WriteJsonCorrelation("spearman_rho", p.query_spearman, w);
  if (c.options.per_query > 0) {
    WriteJsonQueryDifferences("gains", p.gains, w);
    WriteJsonQueryDifferences("losses", p.losses, w);
  }
  w->EndObject();
}

void WriteJsonAgreements(const Comparison& c, JsonWriter* w) {
  w->Key("measure_agreement");
  w->BeginArray();
  for (const MeasureAgreement& a : c.agreements) {
    w->BeginObject();
    w->Key("first");
    w->String(c.measures[a.first]);
    w->Key("second");
    w->String(c.measures[a.second]);
    WriteJsonCorrelation("kendall_tau_b", a.kendall, w);
    WriteJsonCorrelation("spearman_rho", a.spearman, w);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

std::string_view CorrectionName(Correction correction) {
  switch (correction) {
    case Correction::kHolm:
      return "holm";
    case Correction::kBenjaminiHochberg:
      return "bh";
    case Correction::kNone:
      return "none";
  }
  return "";
}

std::optional<Correction> ParseCorrection(std::string_view name) {
  for (Correction c :
       {Correction::kHolm, Correction::kBenjaminiHochberg, Correction::kNone}) {
    if (name == CorrectionName(c)) return c;
  }
  return std::nullopt;
}

double MeanOfDefined(std::span<const double> values) {
  double sum = 0;
  int64_t count = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++count;
  }
  return count == 0 ? kNaN : sum / static_cast<double>(count);
}

const PairComparison& Comparison::Pair(size_t run, size_t measure) const {
  const size_t row = run < baseline ? run : run - 1;
  return pairs[row * measures.size() + measure];
}

StatusOr<Comparison> CompareRuns(std::span<const std::string> measures,
                                 std::span<const RunScores> runs,
                                 size_t baseline,
                                 const CompareOptions& options) {
  if (Status s = CheckOptions(options); !s.ok()) return s;
  if (Status s = CheckShape(measures, runs, baseline); !s.ok()) return s;
  Comparison c;
  c.options = options;
  c.measures.assign(measures.begin(), measures.end());
  c.baseline = baseline;
  c.qids = CommonQids(runs);
  if (c.qids.empty()) {
    return Status::InvalidArgument("no query was evaluated in every run");
  }
  std::vector<std::vector<std::vector<double>>> aligned;
  for (const RunScores& run : runs) {
    c.runs.push_back(run.name);
    c.excluded.push_back(static_cast<int64_t>(run.qids.size()) -
                         static_cast<int64_t>(c.qids.size()));
    aligned.push_back(Align(run, c.qids));
    std::vector<double> means;
    for (const auto& column : aligned.back())
      means.push_back(MeanOfDefined(column));
    c.means.push_back(std::move(means));
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    if (r == baseline) continue;
    for (size_t m = 0; m < measures.size(); ++m) {
      PairComparison pair;
      pair.run = r;
      pair.measure = m;
      c.pairs.push_back(pair);
    }
  }
  // The randomization and bootstrap loops dominate (n x 10,000 per pair):
  // one pair per task.
  RunParallel(c.pairs.size(), options.threads, [&](size_t i, size_t) {
    PairComparison& pair = c.pairs[i];
    ComparePair(aligned[pair.run][pair.measure],
                aligned[baseline][pair.measure], c.qids, options, &pair);
    return true;
  });
  Adjust(options, &c.pairs);
  c.agreements = Agreements(c.means, measures.size());
  return c;
}

bool IsComparedColumn(const ReportColumn& column) {
  if (!column.per_query) return false;
  switch (column.format) {
    case ValueFormat::kInteger:
    case ValueFormat::kReal:
      break;
    case ValueFormat::kText:
      return false;
  }
  switch (column.summary_kind) {
    case SummaryKind::kMean:
    case SummaryKind::kSum:
    case SummaryKind::kDefinedMean:
      return true;
    case SummaryKind::kGeometricMean:
    case SummaryKind::kNumQ:
    case SummaryKind::kRunid:
    case SummaryKind::kNone:
      return false;
  }
  return false;
}

namespace {

// The scores of the compared columns, column-major.
RunScores ToScores(const EvalReport& report,
                   const std::vector<size_t>& columns) {
  RunScores run;
  run.scores.resize(columns.size());
  for (auto& column : run.scores) column.reserve(report.queries().size());
  for (const QueryResult& query : report.queries()) {
    run.qids.emplace_back(query.qid);
    for (size_t c = 0; c < columns.size(); ++c) {
      run.scores[c].push_back(query.values[columns[c]]);
    }
  }
  return run;
}

}  // namespace

StatusOr<EvaluatedRuns> EvaluateRunFiles(const std::string& qrels_path,
                                         std::span<const std::string> run_paths,
                                         const EvalOptions& options,
                                         int parallel_runs) {
  EvaluatedRuns out;
  out.runs.resize(run_paths.size());
  std::vector<std::string> run_ids(run_paths.size());
  std::vector<std::vector<std::string>> names(run_paths.size());
  const Status status = RunParallelUntilError(
      run_paths.size(), parallel_runs, [&](size_t i, size_t) -> Status {
        StatusOr<EvalReport> report =
            EvaluateFiles(qrels_path, run_paths[i], options);
        if (!report.ok()) {
          const std::string message(report.status().message());
          // Most errors name the file already; the others get its name.
          if (message.find(run_paths[i]) != std::string::npos) {
            return report.status();
          }
          return Status(report.status().code(),
                        "'" + run_paths[i] + "': " + message);
        }
        std::vector<size_t> columns;
        for (size_t c = 0; c < report->columns().size(); ++c) {
          if (!IsComparedColumn(report->columns()[c])) continue;
          columns.push_back(c);
          names[i].push_back(report->columns()[c].name);
        }
        out.runs[i] = ToScores(*report, columns);
        run_ids[i] = std::string(report->run_id());
        return Status::Ok();
      });
  if (!status.ok()) return status;
  out.measures = names.empty() ? std::vector<std::string>() : names[0];
  if (out.measures.empty()) {
    return Status::InvalidArgument(
        "no selected measure has per-query values to compare");
  }
  const std::vector<std::string> run_names = RunNames(run_ids, run_paths);
  for (size_t i = 0; i < out.runs.size(); ++i) out.runs[i].name = run_names[i];
  return out;
}

void WriteCompareText(const Comparison& c, std::string* out) {
  const CompareOptions& o = c.options;
  *out += "baseline: " + c.runs[c.baseline] + "; " + Int(c.qids.size()) +
          " queries evaluated in every run";
  int64_t excluded = 0;
  for (int64_t e : c.excluded) excluded += e;
  if (excluded > 0) {
    *out += " (" + Int(excluded) + " run queries left out, docs/compare.md)";
  }
  *out += "\n\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"run"};
  for (const std::string& m : c.measures) {
    header.push_back(m);
    header.push_back("diff ");
  }
  rows.push_back(header);
  for (size_t r = 0; r < c.runs.size(); ++r) {
    std::vector<std::string> row = {r == c.baseline ? c.runs[r] + " (baseline)"
                                                    : c.runs[r]};
    for (size_t m = 0; m < c.measures.size(); ++m) {
      row.push_back(Fixed(c.means[r][m]));
      if (r == c.baseline) {
        row.push_back("");
        continue;
      }
      // The mark after the digits, a space when none: digits stay aligned.
      const PairComparison& p = c.Pair(r, m);
      row.push_back(Signed(p.randomization.mean_difference) +
                    (p.significant ? "*" : " "));
    }
    rows.push_back(row);
  }
  AppendTable(rows, out);
  *out += "mean over the queries; diff = run - baseline; * = " +
          CorrectionLabel(o.correction) + " randomization-test p < " +
          Format("%g", o.alpha) + " (" + Int(c.pairs.size()) +
          " comparisons, " + Int(o.permutations) + " permutations, seed " +
          Int(static_cast<int64_t>(o.seed)) + ")\n\n";

  rows.clear();
  const std::string ci = Format("%g", 100 * o.confidence) + "% bootstrap CI";
  rows.push_back({"run", "measure", "diff", "t_p", "rand_p", ci, "W/T/L",
                  "p_holm", "p_bh"});
  for (const PairComparison& p : c.pairs) {
    rows.push_back({c.runs[p.run], c.measures[p.measure],
                    Signed(p.randomization.mean_difference),
                    PValue(p.t_test.p_value), PValue(p.randomization.p_value),
                    "[" + Signed(p.bootstrap.ci_lower) + ", " +
                        Signed(p.bootstrap.ci_upper) + "]",
                    Int(p.win_tie_loss.wins) + "/" + Int(p.win_tie_loss.ties) +
                        "/" + Int(p.win_tie_loss.losses),
                    PValue(p.randomization_holm), PValue(p.randomization_bh)});
  }
  AppendTable(rows, out);
  *out += "p_holm, p_bh: randomization p adjusted over the " +
          Int(c.pairs.size()) + " comparisons; bootstrap: " + Int(o.bootstrap) +
          " resamples\n";

  if (!c.agreements.empty()) {
    *out += "\nsystem orderings under two measures: correlation of the " +
            Int(c.runs.size()) + " runs' means (undefined below 3 runs)\n";
    rows.clear();
    rows.push_back(
        {"measure", "measure", "kendall_tau_b", "p", "spearman_rho", "p"});
    for (const MeasureAgreement& a : c.agreements) {
      rows.push_back({c.measures[a.first], c.measures[a.second],
                      Coefficient(a.kendall), CoefficientP(a.kendall),
                      Coefficient(a.spearman), CoefficientP(a.spearman)});
    }
    AppendTable(rows, out);
  }

  *out += "\nper-query scores against the baseline's\n";
  rows.clear();
  rows.push_back({"run", "measure", "kendall_tau_b", "p", "spearman_rho", "p"});
  for (const PairComparison& p : c.pairs) {
    rows.push_back({c.runs[p.run], c.measures[p.measure],
                    Coefficient(p.query_kendall), CoefficientP(p.query_kendall),
                    Coefficient(p.query_spearman),
                    CoefficientP(p.query_spearman)});
  }
  AppendTable(rows, out);
  if (o.per_query <= 0) return;
  *out += "\nqueries that gain and lose most against the baseline (at most " +
          Int(o.per_query) + " each)\n";
  rows = {{"run", "measure", "moved", "query", "baseline", "run", "diff"}};
  for (const PairComparison& p : c.pairs) {
    for (const auto* list : {&p.gains, &p.losses}) {
      for (const QueryDifference& q : *list) {
        rows.push_back({c.runs[p.run], c.measures[p.measure],
                        list == &p.gains ? "gain" : "loss", q.qid,
                        Fixed(q.baseline), Fixed(q.run), Signed(q.difference)});
      }
    }
  }
  AppendTable(rows, out);
}

void WriteCompareCsv(const Comparison& c, std::string* out) {
  *out +=
      "run,measure,baseline,queries,mean,baseline_mean,difference,"
      "t_statistic,t_p,randomization_p,permutations,exact,bootstrap_lower,"
      "bootstrap_upper,resamples,confidence,wins,ties,losses,"
      "randomization_p_holm,randomization_p_bh,t_p_holm,t_p_bh,significant,"
      "kendall_tau_b,kendall_p,spearman_rho,spearman_p\n";
  auto corr = [](const std::optional<metrics::RankCorrelation>& x) {
    return x ? Exact(x->coefficient, "") + "," + Exact(x->p_value, "")
             : std::string(",");
  };
  for (size_t r = 0; r < c.runs.size(); ++r) {
    for (size_t m = 0; m < c.measures.size(); ++m) {
      std::string line = CsvField(c.runs[r]) + "," + CsvField(c.measures[m]) +
                         "," + CsvField(c.runs[c.baseline]) + "," +
                         Int(c.qids.size()) + "," + Exact(c.means[r][m], "") +
                         "," + Exact(c.means[c.baseline][m], "") + ",";
      if (r == c.baseline) {
        line += std::string(21, ',');
      } else {
        const PairComparison& p = c.Pair(r, m);
        line +=
            Exact(p.randomization.mean_difference, "") + "," +
            Exact(p.t_test.t_statistic, "") + "," +
            Exact(p.t_test.p_value, "") + "," +
            Exact(p.randomization.p_value, "") + "," +
            Int(p.randomization.permutations) + "," +
            (p.randomization.exact ? "true" : "false") + "," +
            Exact(p.bootstrap.ci_lower, "") + "," +
            Exact(p.bootstrap.ci_upper, "") + "," + Int(p.bootstrap.resamples) +
            "," + Exact(c.options.confidence, "") + "," +
            Int(p.win_tie_loss.wins) + "," + Int(p.win_tie_loss.ties) + "," +
            Int(p.win_tie_loss.losses) + "," + Exact(p.randomization_holm, "") +
            "," + Exact(p.randomization_bh, "") + "," + Exact(p.t_holm, "") +
            "," + Exact(p.t_bh, "") + "," + (p.significant ? "true" : "false") +
            "," + corr(p.query_kendall) + "," + corr(p.query_spearman);
      }
      *out += line + "\n";
    }
  }
}

void WriteCompareJson(const Comparison& c, std::string* out) {
  JsonWriter w(JsonSpacing::kSpaced);
  w.BeginObject();
  w.Key("baseline");
  w.String(c.runs[c.baseline]);
  WriteJsonOptions(c.options, &w);
  w.Key("queries");
  w.Int(static_cast<int64_t>(c.qids.size()));
  w.Key("measures");
  w.StringArray(c.measures);
  WriteJsonRuns(c, &w);
  w.Key("comparisons");
  w.BeginArray();
  for (const PairComparison& p : c.pairs) WriteJsonPair(c, p, &w);
  w.EndArray();
  WriteJsonAgreements(c, &w);
  w.EndObject();
  *out += w.Take();
  *out += '\n';
}

void WriteCompareLatex(const Comparison& c, std::string* out) {
  const CompareOptions& o = c.options;
  *out += "% rankwatch compare: mean over " + Int(c.qids.size()) +
          " queries; $^{*}$: " + CorrectionLabel(o.correction) +
          " randomization-test p < " + Format("%g", o.alpha) + " against " +
          LatexEscape(c.runs[c.baseline]) + "\n";
  *out += "\\begin{tabular}{l" + std::string(c.measures.size(), 'r') + "}\n";
  *out += "\\toprule\nRun";
  for (const std::string& m : c.measures) *out += " & " + LatexEscape(m);
  *out += " \\\\\n\\midrule\n";
  for (size_t r = 0; r < c.runs.size(); ++r) {
    *out += LatexEscape(c.runs[r]);
    for (size_t m = 0; m < c.measures.size(); ++m) {
      *out += " & " + Fixed(c.means[r][m]);
      if (r != c.baseline && c.Pair(r, m).significant) *out += "$^{*}$";
    }
    *out += " \\\\\n";
  }
  *out += "\\bottomrule\n\\end{tabular}\n";
}

}  // namespace rankwatch::trec
