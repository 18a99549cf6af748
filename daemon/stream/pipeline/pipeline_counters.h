// PipelineCounters: what a pipeline counted of the events it was fed, by
// topic and outcome. Process counters (not in a checkpoint): a Pipeline
// owns them, and a PipelineSnapshot copies them for the views.
//
// A plain value; not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_COUNTERS_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_COUNTERS_H_

#include <array>
#include <cstdint>
#include <numeric>

#include "config/config.h"
#include "daemon/stream/decode/events.h"

namespace rankwatch::stream {

struct PipelineCounters {
  std::array<int64_t, 2> consumed{};  // Per Topic, every event fed.
  std::array<std::array<int64_t, kNumRejectReasons>, 2> rejected{};
  // Valid events of no interest (schema.actions maps no grade to their
  // action): counted, never joined or rejected.
  std::array<int64_t, 2> ignored{};
  std::array<int64_t, 2> last_event_ms{INT64_MIN, INT64_MIN};  // Per Topic.
  // The earliest event time of a results event read (INT64_MIN: none): when
  // the first lists are due (join.window after it; issue 43). Not kept in
  // checkpoints: after a restart, the earliest read since.
  int64_t first_results_ms = INT64_MIN;
  int64_t without_relevant = 0;  // Finalized lists with R = 0.
  // Results events read without a query id (schema.query_id): they feed
  // the means but not the query movers. Counted so that a misnamed field
  // ("query" for query_id) is seen, not silently ignored (issue 43).
  int64_t without_query_id = 0;
  int64_t scored = 0;  // Lists folded into the means.
  // With schema.covariate: results events consumed (not rejected), per
  // CovariateOutcome of their covariate field.
  std::array<int64_t, kNumCovariateOutcomes> covariate{};
  // The same per field of schema.fields (in their order).
  std::array<std::array<int64_t, kNumCovariateOutcomes>,
             config::kMaxResultFields>
      fields{};

  int64_t rejected_total(Topic t) const {
    const auto& by_reason = rejected[static_cast<size_t>(t)];
    return std::accumulate(by_reason.begin(), by_reason.end(), int64_t{0});
  }
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_PIPELINE_COUNTERS_H_
