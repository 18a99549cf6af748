// Helpers shared by the DecisionBoard tests (decisions_test.cc and
// decisions_evidence_test.cc): the aggregation they score into and one
// look of a monitor and its board.
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_TEST_UTIL_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_TEST_UTIL_H_

#include <chrono>
#include <cstdint>

#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/experiments/decisions.h"
#include "daemon/stream/experiments/experiments.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {

// No sliding windows (only window "all"), 10 s buckets.
inline config::AggregationConfig DecisionTestAggregation() {
  config::AggregationConfig c;
  c.bucket = std::chrono::seconds(10);
  c.windows = {};
  return c;
}

// A look at `now_ms`: the monitor's, then the board's; the board's one
// decision (the tests configure one experiment with one treatment).
inline const Decision& LookOnce(ExperimentMonitor* monitor,
                                DecisionBoard* board, const Aggregator& agg,
                                int64_t now_ms) {
  monitor->Update(now_ms);
  board->Update(*monitor, agg.series(), now_ms);
  EXPECT_EQ(board->decisions().size(), 1u);
  return board->decisions()[0];
}

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_TEST_UTIL_H_
