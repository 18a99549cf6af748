#include "daemon/cli/eval_command.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_code.h"
#include "base/strings.h"
#include "daemon/cli/command_util.h"
#include "trec/batch_eval.h"

namespace rankwatch::cli {

namespace {

struct EvalArgs {
  std::string qrels;
  std::string run;
  std::vector<std::string> measures;
  bool per_query = false;
  bool complete = false;
  bool no_summary = false;
  bool judged_only = false;
  int64_t num_docs_in_collection = 0;
  std::string rel_format = "qrels";
  std::string results_format = "trec_results";
  bool obsolete = false;  // -o: a no-op in trec_eval too.
  // trec_eval flags rankwatch refuses, by name, with one line each.
  bool zscores = false;
  bool debug = false;
  int relevance_level = 1;
  int64_t max_docs = 0;
  std::string gain = "linear";
  std::string recall_denominator = "relevant";
  std::string ap_denominator = "relevant";
  std::string zero_relevant = "score_zero";
  bool json = false;
  int threads = 0;
};

constexpr std::string_view kEvalCommand = "eval";

// The trec_eval flags rankwatch does not support: one line naming the flag.
Status CheckUnsupported(const EvalArgs& args) {
  if (args.zscores) {
    return Status::InvalidArgument(
        "-Z (z-scores against a file of per-query means) is not supported");
  }
  if (args.debug) {
    return Status::InvalidArgument(
        "-D (trec_eval's debug output) is not "
        "supported");
  }
  if (args.rel_format != "qrels") {
    return Status::InvalidArgument(
        "-R " + Printable(args.rel_format) +
        ": only qrels relevance files are supported (not prefs, qrels_prefs "
        "or qrels_jg)");
  }
  if (args.results_format != "trec_results") {
    return Status::InvalidArgument("-T " + Printable(args.results_format) +
                                   ": only trec_results run files are "
                                   "supported");
  }
  return Status::Ok();
}

int RunEval(const EvalArgs& args) {
  if (Status s = CheckUnsupported(args); !s.ok()) {
    return Fail(kEvalCommand, s, ErrorSource::kUsage);
  }
  trec::EvalOptions options;
  StatusOr<trec::MeasureSelection> measures =
      trec::MeasureSelection::Parse(args.measures);
  if (!measures.ok()) {
    return Fail(kEvalCommand, measures.status(), ErrorSource::kUsage);
  }
  options.measures = *measures;
  options.per_query = args.per_query;
  options.summary = !args.no_summary;
  options.complete = args.complete;
  options.judged_only = args.judged_only;
  options.num_docs_in_collection = args.num_docs_in_collection;
  options.threads = args.threads;
  if (args.max_docs > 0) options.max_docs_per_query = args.max_docs;
  options.definitions.relevance_threshold = args.relevance_level;
  // CLI11 has already checked these names against the same tables.
  options.definitions.gain = *metrics::ParseGain(args.gain);
  options.definitions.recall_denominator =
      *metrics::ParseRecallDenominator(args.recall_denominator);
  options.definitions.ap_denominator =
      *metrics::ParseApDenominator(args.ap_denominator);
  options.definitions.zero_relevant =
      *metrics::ParseZeroRelevantPolicy(args.zero_relevant);

  StatusOr<trec::EvalReport> report =
      trec::EvaluateFiles(args.qrels, args.run, options);
  if (!report.ok()) {
    return Fail(kEvalCommand,
                WithSwapHint(report.status(), args.qrels,
                             std::span<const std::string>(&args.run, 1),
                             "rankwatch eval QRELS RUN"),
                ErrorSource::kInput);
  }
  std::string out;
  if (args.json) {
    trec::WriteJson(*report, &out);
  } else {
    trec::WriteTrecText(*report, &out);
  }
  const Status written = WriteStdout(out);
  if (!written.ok()) return Fail(kEvalCommand, written, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddEvalCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Evaluate a TREC run against TREC qrels (a drop-in for trec_eval "
      "10.0: its official set by default, -m all_trec for every measure)");
  cmd->add_option("QRELS", args->qrels, "Qrels file: qid iter docno grade")
      ->required();
  cmd->add_option("RUN", args->run,
                  "Run file: qid iter docno rank score run_id ('-' = stdin)")
      ->required();
  cmd->add_flag("-q", args->per_query, "Print every query, then 'all'");
  cmd->add_flag("-c", args->complete,
                "Average over all qrels queries; missing ones score 0");
  cmd->add_flag("-n", args->no_summary, "No summary ('all') block");
  cmd->add_flag("-J", args->judged_only,
                "Drop unjudged docs from each ranking before scoring");
  cmd->add_option("-N", args->num_docs_in_collection,
                  "Number of docs in the collection (for utility)")
      ->check(IntegerAtLeast(0));
  cmd->add_option("-R", args->rel_format,
                  "Relevance file format (only 'qrels')");
  cmd->add_option("-T", args->results_format,
                  "Run file format (only 'trec_results')");
  cmd->add_flag("-o", args->obsolete,
                "Obsolete in trec_eval; accepted and ignored");
  cmd->add_option_function<std::string>(
      "-Z", [args](const std::string&) { args->zscores = true; },
      "Not supported (trec_eval's z-scores)");
  cmd->add_option_function<std::string>(
      "-D", [args](const std::string&) { args->debug = true; },
      "Not supported (trec_eval's debug level)");
  cmd->add_flag_callback(
      "-v",
      [] {
        std::printf("rankwatch eval %s (trec_eval 10.0 measures)\n",
                    RANKWATCH_VERSION);
        std::exit(0);
      },
      "Print the version and exit");
  cmd->add_option("-l", args->relevance_level,
                  "Relevance threshold: grade >= N is relevant")
      ->check(IntegerAtLeast(0));
  cmd->add_option("-M", args->max_docs, "Use only the top N docs per query")
      ->check(IntegerAtLeast(1));
  cmd->add_option("-m", args->measures,
                  "Measure or set, with trec_eval's parameters: official "
                  "(default), all_trec, set, or a family such as P.5,10 "
                  "ndcg_cut.10 ndcg.1=1,2=3 iprec_at_recall.0.5 utility.1,-1,"
                  "0,0 bpref infAP; rankwatch adds judged.k, recip_rank.k, "
                  "spearman, kendall_tau. Printed names (ndcg_cut_10), "
                  "rankwatch's (ndcg@10) and ir_measures' (nDCG@10, AP, RR) "
                  "work too (docs/metrics.md)")
      ->allow_extra_args(false)
      ->take_all();
  cmd->add_option("--gain", args->gain, "nDCG gain: linear | exponential")
      ->check(CLI::IsMember({"linear", "exponential"}));
  cmd->add_option("--recall-denominator", args->recall_denominator,
                  "recall@k divides by: relevant (R) | min_k_relevant")
      ->check(CLI::IsMember({"relevant", "min_k_relevant"}));
  cmd->add_option(
         "--ap-denominator", args->ap_denominator,
         "AP divides by: relevant (R) | min_k_relevant | retrieved_relevant")
      ->check(
          CLI::IsMember({"relevant", "min_k_relevant", "retrieved_relevant"}));
  cmd->add_option("--zero-relevant", args->zero_relevant,
                  "Queries with R = 0: score_zero (count as 0) | skip")
      ->check(CLI::IsMember({"score_zero", "skip"}));
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--threads", args->threads, "Worker threads (0 = all cores)")
      ->check(IntegerAtLeast(0));
  cmd->callback([args, exit_code] { *exit_code = RunEval(*args); });
}

}  // namespace rankwatch::cli
