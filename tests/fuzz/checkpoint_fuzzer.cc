// libFuzzer target: checkpoint records (Pipeline::DecodeShard, issue 40),
// decoded and restored into a fresh pipeline, then used: its pending
// requests finalized (the join's Combine), its figures looked at. The
// changelog topic is input like any other. Properties beyond "no crash,
// no sanitizer report, bounded time and memory" (run.sh's -timeout and
// -rss_limit_mb):
//
// * a refused record is a one-line error and leaves nothing behind: no
//   group, no pending request, no shard;
// * a restored record obeys the live limits: every group label is valid
//   UTF-8 within max_id_length, no more pending requests than
//   max_pending_requests, no event time past the wall clock plus
//   max_future_skew;
// * what was restored encodes to a record that restores again, and
//   restoring settles: after two rounds, a round gives the same bytes.
//
// Delta records (Pipeline::ApplyShardDelta, issue 45) the same way: with
// bit 4 of byte 0 set, the input is a base and a delta of the shard, the
// delta applied onto what the base restored. A refused delta is a
// one-line error and leaves the shard empty (no pending request, no
// aggregates); an applied one obeys the same limits and re-encodes as
// above.
//
// Input: byte 0 picks the configuration (checkpoint_fuzz_config.h, bits
// 0-3) and whether a delta follows (bit 4); then the record, or a varint
// with the base's length, the base, and the delta. Seeds: corpus/
// checkpoint, written by checkpoint_seeds.cc.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/byte_codec.h"
#include "base/clock.h"
#include "base/json_writer.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "tests/fuzz/checkpoint_fuzz_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace rankwatch::fuzz {
namespace {

std::unique_ptr<stream::Pipeline> Fresh(const config::Config& config,
                                        const Clock* clock) {
  auto p = stream::Pipeline::Create(config, clock);
  FUZZ_CHECK(p.ok());
  return std::move(p).value();
}

void CheckLabels(const stream::Aggregator& agg, const config::Config& config) {
  const size_t max_length = static_cast<size_t>(config.events.max_id_length);
  for (size_t g = 0; g < agg.num_groups(); ++g) {
    FUZZ_CHECK(IsValidUtf8(agg.variant(g)));
    FUZZ_CHECK(agg.variant(g).size() <= max_length);
    for (const std::string& v : agg.segment_values(g)) {
      FUZZ_CHECK(IsValidUtf8(v));
      FUZZ_CHECK(v.size() <= max_length);
    }
  }
}

std::string Encoded(const stream::Pipeline& p) {
  std::string out;
  p.EncodeShard(0, &out);
  return out;
}

// `record` restored into a fresh pipeline (which must accept it), encoded.
std::string Reencode(std::string_view record, const config::Config& config,
                     const Clock* clock) {
  std::unique_ptr<stream::Pipeline> p = Fresh(config, clock);
  FUZZ_CHECK(p->DecodeShard(0, record).ok());
  return Encoded(*p);
}

// What a restore left (of a base, or of a base and a delta) obeys the
// live limits, re-encodes to a record that restores and settles, and can
// be used.
void CheckRestored(stream::Pipeline* p, const config::Config& config,
                   const Clock* clock) {
  CheckLabels(p->aggregator(), config);
  FUZZ_CHECK(p->pending_requests() <= config.join.max_pending_requests);
  const int64_t latest =
      kCheckpointNowMs + config.events.max_future_skew.count();
  FUZZ_CHECK(p->aggregator().newest_time_ms() <= latest);

  // What was restored encodes to a record that restores, and restoring
  // settles after two rounds: the first drops what this configuration has
  // no use for, folds duplicates and "other", the second adds the empty
  // sections a configured covariate or experiment keeps.
  const std::string once = Encoded(*p);
  const std::string twice = Reencode(once, config, clock);
  FUZZ_CHECK(Reencode(twice, config, clock) == twice);

  // Use what was restored: score the pending requests, look at the figures.
  p->FinishAll();
  CheckLabels(p->aggregator(), config);
  for (size_t g = 0; g < p->aggregator().num_groups(); ++g) {
    (void)p->aggregator().group(g);
  }
}

void Restore(uint8_t variant, std::string_view record) {
  const config::Config config = CheckpointFuzzConfig(variant);
  FakeClock clock(kCheckpointNowMs);
  std::unique_ptr<stream::Pipeline> p = Fresh(config, &clock);
  const Status status = p->DecodeShard(0, record);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().find('\n') == std::string::npos);
    FUZZ_CHECK(p->aggregator().num_groups() == 0);
    FUZZ_CHECK(p->pending_requests() == 0);
    FUZZ_CHECK(!p->aggregator().HasShard(0));
    return;
  }
  CheckRestored(p.get(), config, &clock);
}

// `input`: a varint with the base's length, the base, the delta.
void RestoreDelta(uint8_t variant, std::string_view input) {
  ByteReader in(input);
  const uint64_t base_size = in.Varint();
  if (!in.ok() || base_size > in.remaining()) return;
  const size_t start = input.size() - in.remaining();
  const std::string_view base = input.substr(start, base_size);
  const std::string_view delta = input.substr(start + base_size);
  const config::Config config = CheckpointFuzzConfig(variant);
  FakeClock clock(kCheckpointNowMs);
  std::unique_ptr<stream::Pipeline> p = Fresh(config, &clock);
  if (!p->DecodeShard(0, base).ok()) return;  // The base's own target.
  const Status status = p->ApplyShardDelta(0, delta);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().find('\n') == std::string::npos);
    FUZZ_CHECK(p->pending_requests() == 0);
    FUZZ_CHECK(!p->aggregator().HasShard(0));
    return;
  }
  CheckRestored(p.get(), config, &clock);
}

}  // namespace
}  // namespace rankwatch::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  if (data[0] & 16) {
    rankwatch::fuzz::RestoreDelta(data[0] & 15, rest);
  } else {
    rankwatch::fuzz::Restore(data[0] & 15, rest);
  }
  return 0;
}
