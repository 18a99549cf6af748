// The configurations the checkpoint fuzz target restores into, shared with
// the program that writes its seeds (checkpoint_seeds.cc), so that the
// seeds are real checkpoints of the configuration they are fuzzed under.
// Limits are small so that inputs reach them.
//
// An input's byte 0 picks the configuration (bit 0: an A/B experiment
// with a randomization unit and a covariate; bit 1: two judges, so the
// agreement and judge sections; bit 2: a segment label; bit 3: an
// interleaving experiment of two teams on variant "I"); the rest is the
// record.
#ifndef RANKWATCH_TESTS_FUZZ_CHECKPOINT_FUZZ_CONFIG_H_
#define RANKWATCH_TESTS_FUZZ_CHECKPOINT_FUZZ_CONFIG_H_

#include <chrono>
#include <cstdint>

#include "config/config.h"
#include "metrics/measures.h"

namespace rankwatch::fuzz {

inline constexpr int64_t kCheckpointNowMs = 1'700'000'000'000;  // 2023-11-14.

inline config::Config CheckpointFuzzConfig(uint8_t variant) {
  config::Config c;
  c.join.window = std::chrono::seconds(10);
  c.join.allowed_lateness = std::chrono::seconds(1);
  c.join.max_pending_requests = 16;
  c.join.max_judgments_per_request = 6;
  c.events.max_results = 8;
  c.events.max_id_length = 16;
  c.metrics.cutoffs = {1, 3};
  c.metrics.measures = {metrics::Measure::kPrecision, metrics::Measure::kNdcg};
  c.aggregation.max_variants = 4;
  c.aggregation.max_segment_values = 4;
  c.statistics.unit_buckets = 8;
  if (variant & 1) {
    c.experiments = {{"x", "A", {"B"}}};
    c.schema.unit = "user";
    c.schema.covariate = "pre";
  }
  if (variant & 2) {
    c.judges.names = {"human", "llm"};
    c.judges.default_judge = "llm";
  }
  if (variant & 4) c.aggregation.segments = {"locale"};
  if (variant & 8) c.interleaving = {{"il", "I", {"x", "y"}}};
  return c;
}

}  // namespace rankwatch::fuzz

#endif  // RANKWATCH_TESTS_FUZZ_CHECKPOINT_FUZZ_CONFIG_H_
