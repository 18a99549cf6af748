#include "daemon/stream/judge_agreement.h"

#include <algorithm>
#include <utility>

namespace rankwatch::stream {

namespace {

constexpr uint32_t kMagic = 0x4a414731;  // "JAG1"

}  // namespace

JudgeAgreement::JudgeAgreement(std::vector<std::string> judges)
    : judges_(std::move(judges)) {}

std::vector<JudgePairCounts>& JudgeAgreement::ShardAt(int32_t shard) {
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  if (shards_.size() <= i) shards_.resize(i + 1);
  if (!shards_[i]) {
    shards_[i] = std::make_unique<std::vector<JudgePairCounts>>(
        NumJudgePairs(judges_.size()));
  }
  return *shards_[i];
}

void JudgeAgreement::AddList(std::span<const JudgeGrades> judges,
                             int32_t shard) {
  const size_t n = std::min(judges.size(), judges_.size());
  if (n < 2) return;
  std::vector<JudgePairCounts>& counts = ShardAt(shard);
  const size_t ranks = judges[0].ranked.size();
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      JudgePairCounts& pair = counts[PairIndex(a, b, judges_.size())];
      for (size_t r = 0; r < ranks; ++r) {
        pair.Tally(judges[a].ranked[r], judges[b].ranked[r]);
      }
    }
  }
}

void JudgeAgreement::EncodeShard(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kMagic);
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  const std::vector<JudgePairCounts>* counts =
      i < shards_.size() ? shards_[i].get() : nullptr;
  out->Varint(counts == nullptr ? 0 : counts->size());
  if (counts == nullptr) return;
  for (size_t a = 0; a < judges_.size(); ++a) {
    for (size_t b = a + 1; b < judges_.size(); ++b) {
      const JudgePairCounts& p = (*counts)[PairIndex(a, b, judges_.size())];
      out->String(judges_[a]);
      out->String(judges_[b]);
      out->I64(p.only_first);
      out->I64(p.only_second);
      out->Varint(p.both.counts().size());
      for (const auto& [xy, count] : p.both.counts()) {
        out->I64(xy.first);
        out->I64(xy.second);
        out->I64(count);
      }
    }
  }
}

Status JudgeAgreement::DecodeShard(int32_t shard, ByteReader* in) {
  DropShard(shard);
  if (in->Fixed32() != kMagic) in->Fail("not a judge agreement record");
  // Two names and three numbers at least per pair.
  const uint64_t pairs = in->Count(5);
  std::vector<JudgePairCounts> restored(NumJudgePairs(judges_.size()));
  for (uint64_t k = 0; k < pairs && in->ok(); ++k) {
    const std::string_view first = in->String();
    const std::string_view second = in->String();
    JudgePairCounts p;
    p.only_first = in->I64();
    p.only_second = in->I64();
    const uint64_t cells = in->Count(3);
    for (uint64_t c = 0; c < cells && in->ok(); ++c) {
      const int64_t x = in->I64();
      const int64_t y = in->I64();
      const int64_t count = in->I64();
      if (count < 0 || x < INT32_MIN || x > INT32_MAX || y < INT32_MIN ||
          y > INT32_MAX) {
        in->Fail("a grade pair out of range");
        break;
      }
      p.both.Add(static_cast<int>(x), static_cast<int>(y), count);
    }
    const auto a = std::find(judges_.begin(), judges_.end(), first);
    const auto b = std::find(judges_.begin(), judges_.end(), second);
    if (a == judges_.end() || b == judges_.end() || a == b) continue;
    // The writer's order may differ from this configuration's.
    if (a > b) {
      metrics::GradePairs swapped;
      for (const auto& [xy, count] : p.both.counts()) {
        swapped.Add(xy.second, xy.first, count);
      }
      p.both = std::move(swapped);
      std::swap(p.only_first, p.only_second);
    }
    const size_t lo = static_cast<size_t>(std::min(a, b) - judges_.begin());
    const size_t hi = static_cast<size_t>(std::max(a, b) - judges_.begin());
    restored[PairIndex(lo, hi, judges_.size())].Merge(p);
  }
  if (!in->ok()) {
    return Status::InvalidArgument("judge agreement of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  ShardAt(shard) = std::move(restored);
  return Status::Ok();
}

void JudgeAgreement::DropShard(int32_t shard) {
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  if (i < shards_.size()) shards_[i].reset();
}

std::vector<JudgePairCounts> JudgeAgreement::Merged() const {
  std::vector<JudgePairCounts> out(NumJudgePairs(judges_.size()));
  for (const auto& shard : shards_) {
    if (!shard) continue;
    for (size_t p = 0; p < out.size(); ++p) out[p].Merge((*shard)[p]);
  }
  return out;
}

}  // namespace rankwatch::stream
