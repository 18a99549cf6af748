#include "daemon/cli/eval_command.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_code.h"
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
  int relevance_level = 1;
  int64_t max_docs = 0;
  std::string gain = "linear";
  std::string recall_denominator = "relevant";
  std::string ap_denominator = "relevant";
  std::string zero_relevant = "score_zero";
  bool json = false;
  int threads = 0;
};

constexpr std::string_view kCommand = "eval";

int RunEval(const EvalArgs& args) {
  trec::EvalOptions options;
  StatusOr<trec::MeasureSelection> measures =
      trec::MeasureSelection::Parse(args.measures);
  if (!measures.ok()) {
    return Fail(kCommand, measures.status(), ErrorSource::kUsage);
  }
  options.measures = *measures;
  options.per_query = args.per_query;
  options.complete = args.complete;
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
  if (!report.ok()) return Fail(kCommand, report.status(), ErrorSource::kInput);
  std::string out;
  if (args.json) {
    trec::WriteJson(*report, &out);
  } else {
    trec::WriteTrecText(*report, &out);
  }
  const Status written = WriteStdout(out);
  if (!written.ok()) return Fail(kCommand, written, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddEvalCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Evaluate a TREC run against TREC qrels (a drop-in for trec_eval's "
      "common measures)");
  cmd->add_option("QRELS", args->qrels, "Qrels file: qid iter docno grade")
      ->required();
  cmd->add_option("RUN", args->run,
                  "Run file: qid iter docno rank score run_id ('-' = stdin)")
      ->required();
  cmd->add_flag("-q", args->per_query, "Print every query, then 'all'");
  cmd->add_flag("-c", args->complete,
                "Average over all qrels queries; missing ones score 0");
  cmd->add_option("-l", args->relevance_level,
                  "Relevance threshold: grade >= N is relevant")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-M", args->max_docs, "Use only the top N docs per query")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-m", args->measures,
                  "Measure, optionally with cutoffs: P.5,10 recall.10 map "
                  "map_cut.10 ndcg ndcg_cut.10 recip_rank[.10] Rprec "
                  "success.1,5 judged.10 num_q num_ret num_rel num_rel_ret")
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
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args, exit_code] { *exit_code = RunEval(*args); });
}

}  // namespace rankwatch::cli
