#include "daemon/cli/compare_command.h"

#include <algorithm>
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

namespace rankwatch::cli {

namespace {

struct CompareArgs {
  std::string qrels;
  std::vector<std::string> runs;
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

constexpr std::string_view kCommand = "compare";

int Usage(std::string_view message) {
  return Fail(kCommand, message, ExitCode::kUsage);
}

int RunCompare(const CompareArgs& args) {
  if (args.runs.size() < 2) {
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
    return Fail(kCommand, measures.status(), ErrorSource::kUsage);
  }
  trec::CompareOptions compare;
  compare.correction = *trec::ParseCorrection(args.correction);  // Checked.
  compare.alpha = args.alpha;
  compare.permutations = args.permutations;
  compare.bootstrap = args.bootstrap;
  compare.confidence = args.confidence;
  compare.seed = args.seed;
  const int cores =
      args.threads > 0
          ? args.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  compare.threads = cores;
  // Up to `cores` runs at once, the cores split among them.
  const int parallel_runs =
      static_cast<int>(std::min<size_t>(cores, args.runs.size()));
  trec::EvalOptions eval;
  eval.measures = *measures;
  eval.complete = args.complete;
  eval.threads = std::max(1, cores / parallel_runs);
  if (args.max_docs > 0) eval.max_docs_per_query = args.max_docs;
  eval.definitions.relevance_threshold = args.relevance_level;

  StatusOr<trec::EvaluatedRuns> runs =
      trec::EvaluateRunFiles(args.qrels, args.runs, eval, parallel_runs);
  if (!runs.ok()) {
    return Fail(kCommand,
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
    return Fail(kCommand, comparison.status(), ErrorSource::kInput);
  }
  std::string out;
  if (args.format == "csv") {
    trec::WriteCompareCsv(*comparison, &out);
  } else if (args.format == "json") {
    trec::WriteCompareJson(*comparison, &out);
  } else if (args.format == "latex") {
    trec::WriteCompareLatex(*comparison, &out);
  } else {
    trec::WriteCompareText(*comparison, &out);
  }
  const Status written = WriteStdout(out);
  if (!written.ok()) return Fail(kCommand, written, ErrorSource::kInput);
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
  cmd->add_option("QRELS", args->qrels, "Qrels file: qid iter docno grade")
      ->required();
  cmd->add_option("RUN", args->runs,
                  "Two or more run files: qid iter docno rank score run_id")
      ->required();
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
