#include "daemon/stream/judges/judge_agreement.h"

#include <algorithm>
#include <utility>

#include "base/saturating.h"

namespace rankwatch::stream {

namespace {

// One pair block of a record: count, then per pair its two judges' names,
// the counts of items one graded, and the grade pairs of both.
void EncodePairs(const std::vector<std::string>& judges,
                 const std::vector<metrics::JudgePairCounts>& counts,
                 ByteWriter* out) {
  out->Varint(counts.size());
  if (counts.empty()) return;  // A shard never touched.
  for (size_t a = 0; a < judges.size(); ++a) {
    for (size_t b = a + 1; b < judges.size(); ++b) {
      const metrics::JudgePairCounts& p =
          counts[metrics::PairIndex(a, b, judges.size())];
      out->String(judges[a]);
      out->String(judges[b]);
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

// Reads a pair block into per-pair counts of `judges`, by name.
std::vector<metrics::JudgePairCounts> DecodePairs(
    const std::vector<std::string>& judges, ByteReader* in) {
  constexpr size_t kMaxCells = JudgeAgreement::kMaxGradeCells;
  // Two names and three numbers at least per pair.
  const uint64_t pairs = in->Count(5);
  std::vector<metrics::JudgePairCounts> restored(
      metrics::NumPairs(judges.size()));
  for (uint64_t k = 0; k < pairs && in->ok(); ++k) {
    const std::string_view first = in->String();
    const std::string_view second = in->String();
    metrics::JudgePairCounts p;
    p.only_first = in->I64();
    p.only_second = in->I64();
    CheckCount(in, p.only_first, "an agreement count");
    CheckCount(in, p.only_second, "an agreement count");
    const uint64_t cells = in->Count(3);
    if (cells > kMaxCells) {
      in->Fail(std::to_string(cells) + " grade pairs for one pair of judges, " +
               "over the " + std::to_string(kMaxCells) + " kept");
    }
    for (uint64_t c = 0; c < cells && in->ok(); ++c) {
      const int64_t x = in->I64();
      const int64_t y = in->I64();
      const int64_t count = in->I64();
      if (count < 0 || count > kMaxRestoredCount || x < INT32_MIN ||
          x > INT32_MAX || y < INT32_MIN || y > INT32_MAX) {
        in->Fail("a grade pair out of range");
        break;
      }
      p.both.Add(static_cast<int>(x), static_cast<int>(y), count);
    }
    const auto a = std::find(judges.begin(), judges.end(), first);
    const auto b = std::find(judges.begin(), judges.end(), second);
    if (!in->ok() || a == judges.end() || b == judges.end() || a == b) {
      continue;
    }
    // The writer's order may differ from this configuration's.
    if (a > b) {
      metrics::GradePairs swapped;
      for (const auto& [xy, count] : p.both.counts()) {
        swapped.Add(xy.second, xy.first, count);
      }
      p.both = std::move(swapped);
      std::swap(p.only_first, p.only_second);
    }
    const size_t lo = static_cast<size_t>(std::min(a, b) - judges.begin());
    const size_t hi = static_cast<size_t>(std::max(a, b) - judges.begin());
    metrics::JudgePairCounts& into =
        restored[metrics::PairIndex(lo, hi, judges.size())];
    into.Merge(p);
    // A pair written twice must not add up past the bounds either.
    if (into.both.items() > kMaxRestoredCount ||
        into.only_first > kMaxRestoredCount ||
        into.only_second > kMaxRestoredCount) {
      in->Fail("agreement counts out of range");
    } else if (into.both.counts().size() > kMaxCells) {
      in->Fail("more than " + std::to_string(kMaxCells) +
               " grade pairs for one pair of judges");
    }
  }
  return restored;
}

void MergeInto(const std::vector<metrics::JudgePairCounts>& from,
               std::vector<metrics::JudgePairCounts>* into) {
  for (size_t p = 0; p < into->size() && p < from.size(); ++p) {
    (*into)[p].Merge(from[p]);
  }
}

}  // namespace

JudgeAgreement::JudgeAgreement(std::vector<std::string> judges,
                               int64_t bucket_ms, int64_t span_ms)
    : judges_(std::move(judges)),
      bucket_ms_(std::max<int64_t>(bucket_ms, 0)),
      span_ms_(std::max<int64_t>(span_ms, 0)) {}

int64_t JudgeAgreement::num_buckets() const {
  return bucket_ms_ > 0 ? span_ms_ / bucket_ms_ + 1 : 0;
}

JudgeAgreement::Shard& JudgeAgreement::ShardAt(int32_t shard) {
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  if (shards_.size() <= i) shards_.resize(i + 1);
  if (!shards_[i]) {
    shards_[i] = std::make_unique<Shard>();
    shards_[i]->total.resize(metrics::NumPairs(judges_.size()));
  }
  return *shards_[i];
}

void JudgeAgreement::Prune(Shard* s) const {
  if (s->newest_bucket == INT64_MIN) return;
  const int64_t oldest_kept =
      SatAdd(SatSub(s->newest_bucket, num_buckets()), 1);
  s->buckets.erase(s->buckets.begin(), s->buckets.lower_bound(oldest_kept));
}

void JudgeAgreement::AddList(std::span<const JudgeGrades> judges, int32_t shard,
                             int64_t time_ms) {
  const size_t n = std::min(judges.size(), judges_.size());
  if (n < 2) return;
  Shard& s = ShardAt(shard);
  std::vector<metrics::JudgePairCounts>* bucket = nullptr;
  if (bucket_ms_ > 0) {
    const int64_t b = FloorDiv(time_ms, bucket_ms_);
    if (b > s.newest_bucket) {
      s.newest_bucket = b;
      Prune(&s);
    }
    // Older than the span: in the total only, as WindowRing::Add.
    if (b > SatSub(s.newest_bucket, num_buckets())) {
      bucket = &s.buckets[b];
      if (bucket->empty()) bucket->resize(s.total.size());
    }
  }
  const size_t ranks = judges[0].ranked.size();
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      const size_t p = metrics::PairIndex(a, b, judges_.size());
      for (size_t r = 0; r < ranks; ++r) {
        const metrics::Grade x = judges[a].ranked[r];
        const metrics::Grade y = judges[b].ranked[r];
        // A bucket's cells are among the total's: bounding the total's
        // bounds every bucket's.
        const auto& cells = s.total[p].both.counts();
        if (x != metrics::kUnjudged && y != metrics::kUnjudged &&
            cells.size() >= kMaxGradeCells && !cells.contains({x, y})) {
          ++refused_items_;
          continue;
        }
        s.total[p].Tally(x, y);
        if (bucket != nullptr) (*bucket)[p].Tally(x, y);
      }
    }
  }
}

void JudgeAgreement::EncodeShard(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kMagic);
  out->I64(bucket_ms_);
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  const Shard* s = i < shards_.size() ? shards_[i].get() : nullptr;
  static const std::vector<metrics::JudgePairCounts> kNone;
  EncodePairs(judges_, s == nullptr ? kNone : s->total, out);
  out->Varint(s == nullptr ? 0 : s->buckets.size());
  if (s == nullptr) return;
  for (const auto& [b, counts] : s->buckets) {
    out->I64(b);
    EncodePairs(judges_, counts, out);
  }
}

Status JudgeAgreement::DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits) {
  DropShard(shard);
  const uint32_t magic = in->Fixed32();
  if (magic != kMagic && magic != kMagicTotals) {
    in->Fail("not a judge agreement record");
  }
  const int64_t bucket_ms = magic == kMagic ? in->I64() : 0;
  Shard restored;
  restored.total = DecodePairs(judges_, in);
  // A record without windows (kMagicTotals) had no pairs written when the
  // shard was empty: its block is the count 0 alone, as here.
  if (magic == kMagic) {
    const uint64_t buckets = in->Count(9);
    for (uint64_t k = 0; k < buckets && in->ok(); ++k) {
      const int64_t b = in->I64();
      if (bucket_ms > 0)
        limits.CheckBucket(in, b, bucket_ms, "an agreement bucket");
      std::vector<metrics::JudgePairCounts> counts = DecodePairs(judges_, in);
      if (bucket_ms != bucket_ms_ || bucket_ms_ == 0) continue;
      restored.newest_bucket = std::max(restored.newest_bucket, b);
      restored.buckets[b] = std::move(counts);
    }
  }
  if (!in->ok()) {
    return Status::InvalidArgument("judge agreement of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  Prune(&restored);
  ShardAt(shard) = std::move(restored);
  return Status::Ok();
}

void JudgeAgreement::DropShard(int32_t shard) {
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  if (i < shards_.size()) shards_[i].reset();
}

void JudgeAgreement::SetWindows(int64_t bucket_ms, int64_t span_ms) {
  const bool same_width = std::max<int64_t>(bucket_ms, 0) == bucket_ms_;
  bucket_ms_ = std::max<int64_t>(bucket_ms, 0);
  span_ms_ = std::max<int64_t>(span_ms, 0);
  for (const auto& s : shards_) {
    if (!s) continue;
    if (!same_width || bucket_ms_ == 0) {
      s->buckets.clear();
      s->newest_bucket = INT64_MIN;
    }
    Prune(s.get());
  }
}

std::vector<metrics::JudgePairCounts> JudgeAgreement::Merged() const {
  std::vector<metrics::JudgePairCounts> out(metrics::NumPairs(judges_.size()));
  for (const auto& shard : shards_) {
    if (shard) MergeInto(shard->total, &out);
  }
  return out;
}

std::vector<metrics::JudgePairCounts> JudgeAgreement::MergedWindow(
    int64_t now_ms, int64_t window_ms) const {
  std::vector<metrics::JudgePairCounts> out(metrics::NumPairs(judges_.size()));
  if (bucket_ms_ == 0) return out;
  const int64_t last = FloorDiv(now_ms, bucket_ms_);
  const int64_t buckets = std::min<int64_t>(
      std::max<int64_t>(1, window_ms / bucket_ms_), num_buckets());
  for (const auto& shard : shards_) {
    if (!shard || shard->newest_bucket == INT64_MIN) continue;
    const int64_t oldest_kept =
        SatAdd(SatSub(shard->newest_bucket, num_buckets()), 1);
    const int64_t first =
        std::max(SatAdd(SatSub(last, buckets), 1), oldest_kept);
    for (auto it = shard->buckets.lower_bound(first);
         it != shard->buckets.end() && it->first <= last; ++it) {
      MergeInto(it->second, &out);
    }
  }
  return out;
}

}  // namespace rankwatch::stream
