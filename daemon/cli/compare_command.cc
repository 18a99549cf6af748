#include "daemon/cli/compare_command.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/exit_code.h"
#include "base/strings.h"
#include "daemon/cli/command_util.h"
#include "trec/batch_eval.h"
#include "trec/compare.h"
#include "trec/judge_compare.h"
#include "trec/qrels.h"

namespace rankwatch::cli {

namespace {

struct CompareArgs {
  std::string qrels;
  std::vector<std::string> runs;
  // --qrels, twice or more: compare the judges (every positional is a run).
  std::vector<std::string> judges;
  std::string kappa_weights = "linear";
  std::string alpha_metric = "ordinal";
  int64_t per_query = 0;
  bool ppi = false;
  bool ppi_tune = false;
  std::vector<std::string> measures = {"ndcg_cut.10", "map", "recip_rank",
                                       "P.10", "recall.100"};
  bool complete = false;
  int relevance_level = 1;
  int64_t max_docs = 0;
  std::string baseline;
  std::string correction = "holm";
  double alpha = 0.05;
  int64_t permutations = 10000;
  int64_t bootstrap = 10000;
  double confidence = 0.95;
  uint64_t seed = 0x5eed;
  std::string format = "text";
  int threads = 0;
};

constexpr std::string_view kCompareCommand = "compare";

int Usage(std::string_view message) {
  return Fail(kCompareCommand, message, ExitCode::kUsage);
}

// Names of the judges: their files' names, or the paths as given when two
// files share a name.
std::vector<std::string> JudgeNames(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& p : paths) {
    names.push_back(std::filesystem::path(p).filename().string());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::count(names.begin(), names.end(), names[i]) > 1) return paths;
  }
  return names;
}

// `rankwatch compare --qrels A --qrels B [RUN...]`: label agreement between
// the judges, and the runs' rankings under each (trec/judge_compare.h).
int RunCompareJudges(const CompareArgs& args, const trec::EvalOptions& eval,
                     int parallel_runs) {
  std::vector<std::string> runs = args.runs;
  if (!args.qrels.empty()) runs.insert(runs.begin(), args.qrels);
  if (args.judges.size() < 2) {
    return Usage(
        "--qrels compares judges: give it twice or more (one qrels file is "
        "the QRELS argument)");
  }
  if ((args.ppi || args.ppi_tune) && runs.empty()) {
    return Usage("--ppi estimates the runs' means: give runs");
  }
  if (args.format != "text" && args.format != "json") {
    return Usage("comparing judges prints text or json, not " + args.format);
  }
  trec::JudgeCompareOptions options;
  options.weights = args.kappa_weights == "quadratic"
                        ? metrics::KappaWeights::kQuadratic
                        : metrics::KappaWeights::kLinear;
  options.alpha_metric =
      args.alpha_metric == "nominal"    ? metrics::AlphaMetric::kNominal
      : args.alpha_metric == "interval" ? metrics::AlphaMetric::kInterval
                                        : metrics::AlphaMetric::kOrdinal;
  options.confidence = args.confidence;
  options.ppi = args.ppi || args.ppi_tune;
  options.ppi_tune = args.ppi_tune;
  std::vector<trec::Qrels> qrels;
  std::vector<trec::EvaluatedRuns> evaluated;
  for (const std::string& path : args.judges) {
    StatusOr<trec::Qrels> q = trec::Qrels::Load(path);
    if (!q.ok()) return Fail(kCompareCommand, q.status(), ErrorSource::kInput);
    qrels.push_back(std::move(q).value());
    if (runs.empty()) {
      evaluated.emplace_back();
      continue;
    }
    StatusOr<trec::EvaluatedRuns> e =
        trec::EvaluateRunFiles(path, runs, eval, parallel_runs);
    if (!e.ok()) return Fail(kCompareCommand, e.status(), ErrorSource::kInput);
    evaluated.push_back(std::move(e).value());
  }
  StatusOr<trec::JudgeComparison> c =
      trec::CompareJudges(JudgeNames(args.judges), qrels, evaluated, options);
  if (!c.ok()) return Fail(kCompareCommand, c.status(), ErrorSource::kInput);
  std::string out;
  if (args.format == "json") {
    trec::WriteJudgeComparisonJson(*c, &out);
  } else {
    trec::WriteJudgeComparisonText(*c, &out);
    out = TerminalSafe(out);  // Run names and qrels' file names.
  }
  const Status written = WriteStdout(out);
  if (!written.ok()) return Fail(kCompareCommand, written, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

// The comparison in `format` (csv, json, latex, else text). Query ids and
// run names come from the files: never raw to the terminal (issue 43);
// JSON escapes them itself.
std::string FormatComparison(const trec::Comparison& comparison,
                             const std::string& format) {
  std::string out;
  if (format == "csv") {
    trec::WriteCompareCsv(comparison, &out);
  } else if (format == "json") {
    trec::WriteCompareJson(comparison, &out);
    return out;
  } else if (format == "latex") {
    trec::WriteCompareLatex(comparison, &out);
  } else {
    trec::WriteCompareText(comparison, &out);
  }
  return TerminalSafe(out);
}

int RunCompare(const CompareArgs& args) {
  if (args.judges.empty() && args.qrels.empty()) {
    return Usage(
        "give a QRELS file and two runs or more (or --qrels twice "
        "or more to compare judges)");
  }
  if (args.judges.empty() && (args.ppi || args.ppi_tune)) {
    return Usage("--ppi needs two judges: --qrels TRUSTED --qrels CHEAP");
  }
  if (args.judges.empty() && args.runs.size() < 2) {
    return Usage("compare needs at least two run files (got " +
                 std::to_string(args.runs.size()) + ")");
  }
  if (!(args.alpha > 0 && args.alpha < 1)) {
    return Usage("--alpha must be in (0, 1)");
  }
  if (!(args.confidence > 0 && args.confidence < 1)) {
    return Usage("--confidence must be in (0, 1)");
  }
  StatusOr<trec::MeasureSelection> measures =
      trec::MeasureSelection::Parse(args.measures);
  if (!measures.ok()) {
    return Fail(kCompareCommand, measures.status(), ErrorSource::kUsage);
  }
  trec::CompareOptions compare;
  compare.correction = *trec::ParseCorrection(args.correction);  // Checked.
  compare.alpha = args.alpha;
  compare.permutations = args.permutations;
  compare.bootstrap = args.bootstrap;
  compare.confidence = args.confidence;
  compare.seed = args.seed;
  compare.per_query = args.per_query;
  const int cores =
      args.threads > 0
          ? args.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  compare.threads = cores;
  // Up to `cores` runs at once, the cores split among them. Comparing
  // judges, the QRELS positional is a run too.
  const size_t num_runs =
      args.runs.size() + (args.judges.empty() || args.qrels.empty() ? 0 : 1);
  const int parallel_runs =
      static_cast<int>(std::max<size_t>(1, std::min<size_t>(cores, num_runs)));
  trec::EvalOptions eval;
  eval.measures = *measures;
  eval.complete = args.complete;
  eval.threads = std::max(1, cores / parallel_runs);
  if (args.max_docs > 0) eval.max_docs_per_query = args.max_docs;
  eval.definitions.relevance_threshold = args.relevance_level;

  if (!args.judges.empty()) {
    return RunCompareJudges(args, eval, parallel_runs);
  }
  StatusOr<trec::EvaluatedRuns> runs =
      trec::EvaluateRunFiles(args.qrels, args.runs, eval, parallel_runs);
  if (!runs.ok()) {
    return Fail(kCompareCommand,
                WithSwapHint(runs.status(), args.qrels, args.runs,
                             "rankwatch compare QRELS RUN RUN..."),
                ErrorSource::kInput);
  }
  size_t baseline = 0;
  if (!args.baseline.empty()) {
    std::vector<std::string> names;
    for (const trec::RunScores& run : runs->runs) names.push_back(run.name);
    const std::optional<size_t> found =
        trec::FindBaseline(args.baseline, args.runs, names);
    if (!found) {
      // The names come from the files' run ids, which the user may never
      // have seen: list them.
      std::string listed;
      for (size_t i = 0; i < names.size(); ++i) {
        listed += (i == 0 ? "" : ", ") + std::to_string(i) + " " + names[i];
      }
      return Usage("unknown --baseline '" + Printable(args.baseline) +
                   "': give a run file, a run name or a 0-based index (runs: " +
                   listed + ")");
    }
    baseline = *found;
  }
  StatusOr<trec::Comparison> comparison =
      trec::CompareRuns(runs->measures, runs->runs, baseline, compare);
  if (!comparison.ok()) {
    return Fail(kCompareCommand, comparison.status(), ErrorSource::kInput);
  }
  const Status written =
      WriteStdout(FormatComparison(*comparison, args.format));
  if (!written.ok()) return Fail(kCompareCommand, written, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare TREC runs with the first (or --baseline): paired t and "
      "randomization tests, bootstrap intervals, Holm/BH correction, "
      "Kendall's tau and Spearman's rho (docs/compare.md)");
  cmd->add_option("QRELS", args->qrels, "Qrels file: qid iter docno grade");
  cmd->add_option("RUN", args->runs,
                  "Two or more run files: qid iter docno rank score run_id");
  cmd->add_option("--per-query", args->per_query,
                  "Per run and measure, the N queries that gain and the N "
                  "that lose most against the baseline (text and json)")
      ->check(IntegerAtLeast(1));
  cmd->add_option("--qrels", args->judges,
                  "Compare judges: a qrels file per judge, the first the "
                  "reference (give it twice or more; every positional is "
                  "then a run): label agreement and the runs' rankings under "
                  "each")
      ->allow_extra_args(false);
  cmd->add_option("--kappa-weights", args->kappa_weights,
                  "Weighted kappa's weights with --qrels: linear | quadratic")
      ->check(CLI::IsMember({"linear", "quadratic"}));
  cmd->add_option("--alpha-metric", args->alpha_metric,
                  "Krippendorff's alpha's difference with --qrels: nominal | "
                  "ordinal | interval")
      ->check(CLI::IsMember({"nominal", "ordinal", "interval"}));
  cmd->add_flag("--ppi", args->ppi,
                "With --qrels: prediction-powered means, the first qrels "
                "trusted (a random sample of the queries), the second cheap");
  cmd->add_flag("--ppi-tune", args->ppi_tune,
                "--ppi with PPI++'s tuned lambda (narrower; see "
                "docs/compare.md for its coverage)");
  cmd->add_option("-m", args->measures,
                  "Measures as in eval, in trec_eval's, rankwatch's or "
                  "ir_measures' spelling (default: ndcg_cut.10 map "
                  "recip_rank P.10 recall.100)")
      ->allow_extra_args(false)
      ->take_all();
  cmd->add_flag("-c", args->complete,
                "Compare on every qrels query; a run's missing ones score 0");
  cmd->add_option("-l", args->relevance_level,
                  "Relevance threshold: grade >= N is relevant")
      ->check(IntegerAtLeast(0));
  cmd->add_option("-M", args->max_docs, "Use only the top N docs per query")
      ->check(IntegerAtLeast(1));
  cmd->add_option("--baseline", args->baseline,
                  "Baseline: a run file, a run name or a 0-based index "
                  "(default: the first run)");
  cmd->add_option("--correction", args->correction,
                  "p-value adjustment marking significance: holm | bh | none")
      ->check(CLI::IsMember({"holm", "bh", "none"}));
  cmd->add_option("--alpha", args->alpha, "Significance level (0.05)");
  cmd->add_option("--permutations", args->permutations,
                  "Randomization test permutations (10000)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bootstrap", args->bootstrap, "Bootstrap resamples (10000)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--confidence", args->confidence,
                  "Bootstrap interval level (0.95)");
  cmd->add_option("--seed", args->seed,
                  "Seed of the randomization test and the bootstrap");
  cmd->add_option("--format", args->format, "text | csv | json | latex")
      ->check(CLI::IsMember({"text", "csv", "json", "latex"}));
  cmd->add_option("--threads", args->threads, "Worker threads (0 = all cores)")
      ->check(IntegerAtLeast(0));
  cmd->callback([args, exit_code] { *exit_code = RunCompare(*args); });
}

}  // namespace rankwatch::cli
