#include "daemon/cli/replay_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/exit_code.h"
#include "base/strings.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/replay_report.h"
#include "daemon/stream/pipeline/replay.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kReplayCommand = "replay";

struct ReplayArgs {
  std::string config;
  std::string results;
  std::string judgments;
  std::string qrels;
  std::string dead_letter;
  std::string format = "table";
};

// Redraws one status line on stderr (only used when it is a terminal).
void DrawProgress(uint64_t done, uint64_t total) {
  const double pct =
      total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total)
                : 100.0;
  const int width = 30;
  const int filled = static_cast<int>(pct / 100.0 * width);
  std::fprintf(stderr, "\rreplay [%.*s%*s] %5.1f%% %.1f/%.1f MB", filled,
               "##############################", width - filled, "", pct,
               static_cast<double>(done) / 1e6,
               static_cast<double>(total) / 1e6);
  if (done >= total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

int RunReplayCommand(const ReplayArgs& args) {
  // Without --config, the defaults: `{}` is a valid configuration, and a
  // first replay of a hand-written file should not need one (issue 43).
  StatusOr<config::Config> config =
      args.config.empty() ? config::ParseConfig("{}", "the defaults")
                          : config::LoadConfigFile(args.config);
  if (!config.ok()) {
    // The loader escapes what it echoes from the file but not the file's
    // name ("cannot open NAME"): escaped here, so the error stays one line.
    return Fail(kReplayCommand,
                Printable(config.status().message(), std::string_view::npos),
                ExitCodeFor(config.status().code(), ErrorSource::kUsage));
  }
  // Strict: a flag the configured mode would ignore, or no events at all,
  // is refused rather than replayed into a table of zeros.
  if (args.results.empty() && args.judgments.empty()) {
    return Fail(kReplayCommand,
                "nothing to replay: give --results FILE and/or --judgments "
                "FILE (JSON lines)",
                ExitCode::kUsage);
  }
  if (!args.qrels.empty() &&
      config->join.mode == config::JoinMode::kImpression) {
    return Fail(kReplayCommand,
                "--qrels applies to join.mode: qrels, and " +
                    (args.config.empty()
                         ? std::string("the default configuration")
                         : Printable(args.config, std::string_view::npos)) +
                    " joins impressions (join.mode: impression): give "
                    "judgment events with --judgments, or set join.mode: "
                    "qrels",
                ExitCode::kUsage);
  }
  stream::ReplayOptions options;
  options.results_path = args.results;
  options.judgments_path = args.judgments;
  options.qrels_path = args.qrels;
  options.dead_letter_path = args.dead_letter;
  if (::isatty(STDERR_FILENO)) options.progress = DrawProgress;
  StatusOr<stream::ReplayResult> result =
      stream::RunReplay(*config, options, SystemClock::Get());
  if (!result.ok())
    return Fail(kReplayCommand, result.status(), ErrorSource::kInput);
  // RunReplay finished the pipeline (FinishAll: every list scored, a last
  // look taken); the report renders one snapshot of it.
  stream::PipelineSnapshot snapshot;
  stream::TakeSnapshot(*result->pipeline, &snapshot);
  const std::string out = args.format == "json" ? FormatReplayJson(snapshot)
                                                : FormatReplayTable(snapshot);
  const Status written = WriteStdout(out);
  if (!written.ok()) return Fail(kReplayCommand, written, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddReplayCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Run the streaming pipeline over JSON-lines files and print the final "
      "aggregates");
  cmd->add_option("--config", args->config,
                  "YAML configuration (default: the defaults, as `{}`)");
  cmd->add_option("--results", args->results,
                  "Results events, one JSON object per line");
  cmd->add_option("--judgments", args->judgments,
                  "Judgment events, one JSON object per line");
  cmd->add_option("--qrels", args->qrels,
                  "TREC qrels preloaded into the table (qrels mode)");
  cmd->add_option("--dead-letter", args->dead_letter,
                  "Write rejected events here (JSON lines)");
  cmd->add_option("--format", args->format, "Output: table | json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->callback([args, exit_code] { *exit_code = RunReplayCommand(*args); });
}

}  // namespace rankwatch::cli
