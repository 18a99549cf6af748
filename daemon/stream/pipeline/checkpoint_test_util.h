// Builders of checkpoint records field by field, after the layout
// Pipeline::EncodeShard writes, so that a test makes one field hostile
// (issue 40): the unit tests of the restore's limits
// (checkpoint_limits_test.cc) and the end-to-end test that appends such
// records to a changelog (tests/daemon_e2e_test.cc). Test-only.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_CHECKPOINT_TEST_UTIL_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_CHECKPOINT_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"

namespace rankwatch::stream::checkpoint_testing {

// 2100-01-01T00:00:00Z: date -u -d 2100-01-01 +%s -> 4102444800.
inline constexpr int64_t k2100 = 4'102'444'800'000;

inline size_t VarintBytes(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A pending request as format 1 (JNS1) writes it.
struct HostileRequest {
  std::string key = "r1";
  std::string query = "q1";
  std::vector<std::string> docs = {"a", "b"};
  std::vector<std::string> judged;  // Each graded 1 at served_ms + 1 s.
  std::string variant = "B";
  int64_t served_ms = kNow - 60'000;
  int64_t deadline_ms = kNow - 50'000;  // served + join.window (10 s).
};

inline void WriteRequest(const HostileRequest& r, ByteWriter* w) {
  w->String(r.key);
  w->String(r.query);
  std::string docs;
  for (const std::string& d : r.docs) docs += d;
  w->String(docs);
  w->Varint(r.docs.size());
  size_t end = 0;
  for (const std::string& d : r.docs) w->Varint(end += d.size());
  std::string judged;
  for (const std::string& d : r.judged) judged += d;
  w->String(judged);
  w->Varint(r.judged.size());
  size_t begin = 0;
  for (const std::string& d : r.judged) {
    w->Varint(begin);
    w->Varint(begin += d.size());
    w->I64(r.served_ms + 1000);
    w->I64(1);  // Grade.
    w->U8(0);   // Flags.
    w->Varint(0);
  }
  w->Bool(true);  // has_results, then the group's labels.
  w->String(r.variant);
  w->Varint(0);   // Segments.
  w->Fixed64(0);  // unit_hash.
  w->I64(-1);     // interleaving.
  w->String("");  // teams.
  w->I64(r.served_ms);
  w->I64(r.deadline_ms);
}

inline std::string JoinSection(const std::vector<HostileRequest>& requests) {
  std::string out;
  ByteWriter w(&out);
  w.Fixed32(0x4a4e5331);  // "JNS1".
  w.I64(INT64_MIN);
  w.I64(INT64_MIN);
  w.Varint(requests.size());
  for (const HostileRequest& r : requests) WriteRequest(r, &w);
  return out;
}

// A window ring of no series: bucket width, newest bucket, the buckets.
inline void WriteRing(int64_t bucket_ms, int64_t newest,
                      const std::vector<int64_t>& buckets, ByteWriter* w) {
  w->I64(bucket_ms);
  w->I64(newest);
  w->Varint(0);
  w->Varint(buckets.size());
  for (int64_t b : buckets) w->I64(b);
}

// The aggregates of a shard: no series, no segments, one group per
// variant (one request each, with `ring`'s buckets).
inline std::string Aggregates(int64_t newest_time_ms,
                              const std::vector<std::string>& variants = {},
                              int64_t newest_bucket = INT64_MIN,
                              const std::vector<int64_t>& buckets = {}) {
  std::string out;
  ByteWriter w(&out);
  w.Fixed32(0x41475231);  // "AGR1".
  w.Varint(0);            // Series.
  w.Varint(0);            // Segment labels.
  w.I64(newest_time_ms);
  w.Varint(variants.size());
  for (const std::string& v : variants) {
    w.String(v);
    w.I64(1);  // requests.
    w.I64(0);  // without_relevant.
    for (size_t i = 0; i < FirstClickHistogram{}.counts.size(); ++i) {
      w.Varint(0);
    }
    w.I64(0);
    w.Double(0);
    WriteRing(10'000, newest_bucket, buckets, &w);
  }
  return out;
}

// Experiment sums of `num_series` series in `buckets` unit buckets and
// `arms` arms (whose bytes are left out), then no units; with a
// covariate section of no arms when `covariate`.
inline std::string Experiments(uint64_t buckets, uint64_t num_series,
                               uint64_t arms, bool covariate = false) {
  std::string out;
  ByteWriter w(&out);
  w.Fixed32(covariate ? 0x41524d33 : 0x41524d32);  // "ARM3", "ARM2".
  w.Varint(buckets);
  w.Varint(num_series);
  for (uint64_t s = 0; s < num_series; ++s) w.String("s");
  w.Varint(arms);
  if (arms > 0) return out;  // The arms' bytes are missing.
  w.Fixed32(0x554e5431);     // "UNT1": no experiments, no units.
  w.Varint(0);
  w.Varint(0);
  if (covariate) {
    w.String("x");
    w.Bool(true);  // With bucket sums.
    w.Varint(0);
  }
  return out;
}

struct Sections {
  std::string aggregates = Aggregates(INT64_MIN);
  std::string join = JoinSection({});
  std::string experiments = Experiments(0, 0, 0);
  std::string interleaving = std::string("\x32\x56\x4c\x49\x00", 5);
  std::string movers = std::string("\x31\x56\x4d\x51\x00\x00", 6);

  std::string Record() const {
    std::string out;
    ByteWriter w(&out);
    w.Fixed32(0x4b435752);  // "RWCK".
    w.Fixed32(Pipeline::kCheckpointVersion);
    return out + aggregates + join + experiments + interleaving + movers;
  }
  size_t JoinOffset() const { return 8 + aggregates.size(); }
  size_t ExperimentsOffset() const { return JoinOffset() + join.size(); }
  size_t MoversOffset() const {
    return ExperimentsOffset() + experiments.size() + interleaving.size();
  }
};

}  // namespace rankwatch::stream::checkpoint_testing

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_CHECKPOINT_TEST_UTIL_H_
