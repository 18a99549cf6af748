// Replay's report (`rankwatch replay`): the final figures of a pipeline that
// stream::RunReplay has fed and finished, rendered from one snapshot of it
// (stream::PipelineSnapshot, taken after FinishAll: the read model the
// daemon's /metrics and /api/v1/summary render from too), as one JSON
// document (`--format json`) or as an aligned text table (the default). The
// report only renders: running the replay stays in
// daemon/stream/pipeline/replay.h.
//
// The JSON's member names and nesting are a contract read by other tools
// and tests (docs/metrics-reference.md, docs/statistics.md); numbers are
// written by JsonWriter (base/json_writer.h): the shortest decimal that
// reads back as the same double, null when not finite.
//
// Ownership: pure functions of the snapshot; nothing is kept. An
// interleaving experiment is named through InterleavingState::config, so
// the pipeline the snapshot was taken from must outlive the call.
// Thread-safety: none needed; the snapshot is only read.
#ifndef RANKWATCH_DAEMON_CLI_REPLAY_REPORT_H_
#define RANKWATCH_DAEMON_CLI_REPLAY_REPORT_H_

#include <string>

#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::cli {

// The final aggregates as one JSON object and a line break:
// {"variants": {"A": {"requests": N, "measures": {"ndcg_cut_10": {"count":
// N, "mean": x, "stddev": s}, ...}, "time_to_first_click_seconds": {...}
// (when clicks are tracked)}, ...},
//  "groups": [{"variant", "segments": {LABEL: VALUE}, "requests",
//  "measures"}] (when segments are configured),
//  "experiments": {NAME: {"baseline", "srm": {...}, "treatments": {VARIANT:
//  {SERIES: {comparison, "adjusted", "query_movers"}, "decision"}}}} (when
//  experiments are configured), "interleaving": {...} (when interleaving
//  experiments are configured), "agreement": [...] (with two or more
//  judges) and "judge_figures": {...} (with judges;
//  stream/judge_report.h),
//  "events": {"results": N, "judgments": N, "ignored": N, "rejected":
//  {"<reason>": N}, "covariate": {...} (with schema.covariate), "late": N,
//  "late_results", "evicted", "unjudged", "without_relevant",
//  "duplicate_results", "orphaned_judgments",
//  "judgments_after_finalization", "finalized", "scored",
//  "table_full", "position_mismatches", "over_limit_judgments",
//  "ranked_by_impressions", "unranked_requests", "ignored_impressions"}}.
std::string FormatReplayJson(const stream::PipelineSnapshot& snapshot);

// The same figures for people: per variant and series count, mean and
// stddev; the event counts, then a line of the rejections by reason and
// one of what was set aside (ignored, orphaned, duplicates, position
// mismatches...), each only when not all 0; per experiment the sample-ratio
// check, the decisions, the window-"all" comparisons and the top five query
// movers; the interleaving experiments; with judges, their agreement, each
// judge's figures, the prediction-powered means and the coverage checks.
std::string FormatReplayTable(const stream::PipelineSnapshot& snapshot);

// The demo's lines of what was lost or set aside: "rejected: <reason>=N
// ..." and "set aside: ignored=N orphaned_judgments=N ...", each with the
// counts that are not 0 and only when one is (a live terminal shows what
// happened; replay's table prints every count, zeros included).
std::string FormatSetAside(const stream::PipelineSnapshot& snapshot);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_REPLAY_REPORT_H_
