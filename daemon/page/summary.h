// The live summary behind the status page: GET /api/v1/summary, one JSON
// object rendered from a snapshot of the pipeline (stream::PipelineSnapshot:
// means per variant and segment group, per window, with a short history;
// the A/B comparisons, their latest verdict changes and sample-ratio
// checks; the interleaving experiments) and a copy of the Kafka consumer's
// status (lag, readiness). Every field is documented in
// docs/metrics-reference.md, "Status page and /api/v1/summary". Numbers
// that are NaN or infinite (an empty mean, an interval without
// information) are written as null.
//
// Ownership: reads its arguments during the call only. Thread-safety: none
// of its own, and no lock needed: its inputs are copies (the daemon takes
// them under its mutex, then renders without it; handlers.h).
#ifndef RANKWATCH_DAEMON_PAGE_SUMMARY_H_
#define RANKWATCH_DAEMON_PAGE_SUMMARY_H_

#include <cstdint>
#include <string>

#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::page {

// Version of the summary's layout, written as "schema_version": bumped when
// a field changes meaning or goes away (new fields do not bump it).
inline constexpr int kSummarySchemaVersion = 1;

// The history of a series has at most this many points: the buckets of the
// longest window, adjacent ones merged (sums and counts added, so each
// point's mean is exact) when there are more.
inline constexpr int kMaxHistoryPoints = 60;

// Clock readings stamped into the summary: wall time of the snapshot, and
// the monotonic time readiness is judged at (and rates are computed from).
struct SummaryTimes {
  int64_t wall_ms = 0;
  int64_t mono_ms = 0;
};

// The summary of `pipeline` and `kafka` (null: no consumer, as in tests).
std::string BuildSummaryJson(const stream::PipelineSnapshot& pipeline,
                             const kafka::IngestState* kafka,
                             const SummaryTimes& times);

}  // namespace rankwatch::page

#endif  // RANKWATCH_DAEMON_PAGE_SUMMARY_H_
