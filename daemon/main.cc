// rankwatch: one binary, one subcommand per job. Untested glue: every
// subcommand lives (and is tested) in daemon/cli.
#include <CLI/CLI.hpp>

#include "daemon/cli/eval_command.h"
#include "daemon/cli/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rankwatch: live ranking-quality metrics (recall, precision, MRR, MAP, "
      "nDCG) from search-result and judgment streams"};
  app.set_version_flag("--version", RANKWATCH_VERSION);
  app.require_subcommand(1);
  int exit_code = rankwatch::cli::kExitOk;
  rankwatch::cli::AddEvalCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : rankwatch::cli::kExitUsage;
  }
  return exit_code;
}
