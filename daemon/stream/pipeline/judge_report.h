// The figures of several judges (issue 29) as the views render them: one
// JSON object, `judge_figures`, written by replay's report and by
// /api/v1/summary alike (so that the two cannot drift), and the lines of
// replay's text table. Everything is read from a PipelineSnapshot: the
// judge monitor's series (judge_layout, judge_series, judge_groups), the
// prediction-powered means (ppi), the coverage checks (coverage) and the
// judges' agreement per window (window_agreement). The PPI roles' series
// are internal sums, never rendered as series: their estimates are (ppi).
//
// The JSON's member names are a contract read by other tools
// (docs/metrics-reference.md, "Status page and /api/v1/summary"):
//   {"names": [...], "combine": "precedence",
//    "measures": [{variant, judge, measure, k, window, lists, mean}],
//    "coverage": [{variant, judge, k, window, lists, mean}],
//    "unjudged": [{variant, k, window, lists, mean}],
//    "ppi": [{variant, measure, k, window, trusted, cheap, labelled, others,
//             estimate, lower, upper, lambda, classical, classical_lower,
//             classical_upper, naive}],
//    "coverage_checks": [{experiment, baseline, treatment, k,
//                         baseline_unjudged, treatment_unjudged, tolerance,
//                         flagged}],
//    "agreement_windows": [{window, judges, pairs, ...}]}
// Rows come per variant (judge_groups order), then series, then window:
// "all" (since start) first, then each of aggregation.windows, labelled as
// the exporter labels them (FormatDuration: "5m", "1h"). A mean of no list
// and a PPI figure without an estimate are null.
//
// Pure functions of the snapshot; thread-compatible.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_JUDGE_REPORT_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_JUDGE_REPORT_H_

#include <string>

#include "base/json_writer.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::stream {

// The key the object is written under in both documents.
inline constexpr char kJudgeFiguresKey[] = "judge_figures";

// Writes the object above as one value (the caller writes the key).
void WriteJudgeFiguresJson(const PipelineSnapshot& s, JsonWriter* out);

// Appends replay's table section: per variant and judge the measures and
// coverage since start, the unjudged share, the PPI estimates (since
// start) and the coverage checks, a flagged one marked. Nothing without
// judges.
void AppendJudgeFiguresTable(const PipelineSnapshot& s, std::string* out);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_JUDGE_REPORT_H_
