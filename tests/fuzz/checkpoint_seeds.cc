// Writes the checkpoint fuzz target's seeds: real checkpoint records
// (Pipeline::EncodeShard) of a stream run through each configuration of
// checkpoint_fuzz_config.h, prefixed with the byte that picks it. Finalized
// requests (aggregates, windows, experiment sums, units, covariate moments,
// judge agreement and judge series) and pending ones (with and without
// results, with judgments) are in every record. And per configuration a
// delta seed (byte 0 with bit 4 set): a base written mid-stream, then the
// delta of what changed until the end (requests finalized, created and
// changed), as the daemon writes them (Pipeline::EncodeShardBase and
// EncodeShardDelta).
//
//   build-fuzzers/tests/fuzz/checkpoint_seeds tests/fuzz/corpus/checkpoint
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "base/byte_codec.h"
#include "base/clock.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "tests/fuzz/checkpoint_fuzz_config.h"

namespace rankwatch::fuzz {
namespace {

using stream::EventOrigin;
using stream::Pipeline;
using stream::Topic;

std::string ResultsJson(int i, int64_t t, uint8_t variant) {
  // With interleaving, every third request is interleaved: its docs name
  // their team.
  const bool interleaved = (variant & 8) != 0 && i % 3 == 2;
  const char* arm = interleaved ? "I" : i % 2 == 0 ? "A" : "B";
  std::string s = "{\"request_id\":\"r" + std::to_string(i) +
                  "\",\"timestamp\":" + std::to_string(t) + ",\"variant\":\"" +
                  arm + "\",\"query_id\":\"q" + std::to_string(i % 3) + "\"";
  if (variant & 1) {
    s += ",\"user\":\"u" + std::to_string(i % 5) +
         "\",\"pre\":" + std::to_string(0.25 * (i % 4));
  }
  if (variant & 4) {
    s += std::string(",\"segments\":{\"locale\":\"") +
         (i % 3 == 0 ? "de" : "en") + "\"}";
  }
  if (interleaved) {
    return s +
           ",\"results\":[{\"doc_id\":\"a\",\"team\":\"x\"},"
           "{\"doc_id\":\"b\",\"team\":\"y\"},{\"doc_id\":\"c\",\"team\":"
           "\"y\"},{\"doc_id\":\"d\",\"team\":\"x\"}]}";
  }
  return s + ",\"results\":[\"a\",\"b\",\"c\",\"d\"]}";
}

std::string JudgmentsJson(int i, int64_t t, uint8_t variant) {
  const bool judges = (variant & 2) != 0;
  std::string s = "{\"request_id\":\"r" + std::to_string(i) +
                  "\",\"timestamp\":" + std::to_string(t) +
                  ",\"judgments\":[{\"doc_id\":\"a\",\"relevance\":" +
                  std::to_string(i % 3) +
                  (judges ? ",\"judge\":\"human\"" : "") +
                  "},{\"doc_id\":\"c\",\"relevance\":1}";
  if (i % 4 == 1) s += ",{\"doc_id\":\"b\",\"relevance\":null}";
  return s + "]}";
}

bool WriteSeed(const std::string& dir, uint8_t variant, int moment,
               const Pipeline& pipeline) {
  std::string record(1, static_cast<char>(variant));
  pipeline.EncodeShard(0, &record);
  // A seed restores: the fuzzer starts from records that pass.
  FakeClock clock(kCheckpointNowMs);
  auto fresh = Pipeline::Create(CheckpointFuzzConfig(variant), &clock);
  const Status restored =
      fresh.ok() ? (*fresh)->DecodeShard(0, std::string_view(record).substr(1))
                 : fresh.status();
  if (!restored.ok() || (*fresh)->pending_requests() == 0 ||
      (*fresh)->aggregator().num_groups() == 0) {
    std::fprintf(
        stderr, "seed v%d-%d: %s, %lld pending\n", variant, moment,
        restored.ToString().c_str(),
        static_cast<long long>(fresh.ok() ? (*fresh)->pending_requests() : 0));
    return false;
  }
  const std::string path = dir + "/v" + std::to_string(variant) + "-" +
                           std::to_string(moment) + ".bin";
  std::ofstream out(path, std::ios::binary);
  out << record;
  return static_cast<bool>(out);
}

// "d<variant>.bin": byte 0 (variant | 16), a varint with the base's
// length, the base, the delta; checked to restore as the fuzzer does.
bool WriteDeltaSeed(const std::string& dir, uint8_t variant,
                    std::string_view base, std::string_view delta) {
  std::string seed(1, static_cast<char>(variant | 16));
  ByteWriter(&seed).Varint(base.size());
  seed.append(base);
  seed.append(delta);
  FakeClock clock(kCheckpointNowMs);
  auto fresh = Pipeline::Create(CheckpointFuzzConfig(variant), &clock);
  Status restored =
      fresh.ok() ? (*fresh)->DecodeShard(0, base) : fresh.status();
  if (restored.ok()) restored = (*fresh)->ApplyShardDelta(0, delta);
  if (!restored.ok() || (*fresh)->aggregator().num_groups() == 0) {
    std::fprintf(stderr, "delta seed v%d: %s\n", variant,
                 restored.ToString().c_str());
    return false;
  }
  std::ofstream out(dir + "/d" + std::to_string(variant) + ".bin",
                    std::ios::binary);
  out << seed;
  return static_cast<bool>(out);
}

int Run(const std::string& dir) {
  for (uint8_t variant = 0; variant < 16; ++variant) {
    FakeClock clock(kCheckpointNowMs);
    auto created = Pipeline::Create(CheckpointFuzzConfig(variant), &clock);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
      return 1;
    }
    Pipeline& p = **created;
    int64_t offset = 0;
    std::string base;
    const int64_t start = kCheckpointNowMs - 600'000;
    for (int i = 0; i < 24; ++i) {
      const int64_t t = start + i * 2'000;
      (void)p.OnPayload(Topic::kResults, ResultsJson(i, t, variant),
                        EventOrigin{0, offset++});
      (void)p.OnPayload(Topic::kJudgments, JudgmentsJson(i, t + 500, variant),
                        EventOrigin{1, offset++});
      if (i == 11 && !WriteSeed(dir, variant, 0, p)) return 1;
      if (i == 11) p.EncodeShardBase(0, &base);
    }
    // Judgments of a request not served yet: pending without results.
    (void)p.OnPayload(Topic::kJudgments,
                      JudgmentsJson(99, start + 48'000, variant),
                      EventOrigin{1, offset++});
    if (!WriteSeed(dir, variant, 1, p)) return 1;
    std::string delta;
    if (!p.EncodeShardDelta(0, &delta) ||
        !WriteDeltaSeed(dir, variant, base, delta)) {
      return 1;
    }
    const int64_t rejected = p.counters().rejected_total(Topic::kResults) +
                             p.counters().rejected_total(Topic::kJudgments);
    if (rejected > 0) {
      std::fprintf(stderr, "v%d: %lld events rejected\n", variant,
                   static_cast<long long>(rejected));
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace rankwatch::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_seeds DIR\n");
    return 2;
  }
  return rankwatch::fuzz::Run(argv[1]);
}
