#include "daemon/stream/join.h"

namespace rankwatch::stream {

namespace {

constexpr uint32_t kJoinShardMagic = 0x4a4e5331;  // "JNS1"

}  // namespace

void WatermarkedJoin::EncodeShard(int32_t shard, const GroupCodec& groups,
                                  ByteWriter* out) const {
  out->Fixed32(kJoinShardMagic);
  out->I64(watermark_.progress(EventOrigin::SourceOf(0, shard)));
  out->I64(watermark_.progress(EventOrigin::SourceOf(1, shard)));
  PendingStore* pending =
      const_cast<WatermarkedJoin*>(this)->store().Find(shard);
  out->Varint(pending == nullptr ? 0 : pending->size());
  if (pending == nullptr) return;
  pending->ForEach(
      [&](PendingRequest& r) { EncodePendingRequest(r, groups, out); });
}

Status WatermarkedJoin::DecodeShard(int32_t shard, const GroupCodec& groups,
                                    ByteReader* in) {
  if (in->Fixed32() != kJoinShardMagic) in->Fail("not a join record");
  const int64_t results_progress = in->I64();
  const int64_t judgments_progress = in->I64();
  // A request takes at least its 16 fixed bytes of times and hash.
  const uint64_t n = in->Count(16);
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    (void)DecodePendingRequest(in, groups, shard, &store().Shard(shard));
  }
  if (!in->ok()) {
    DropShard(shard);
    return Status::InvalidArgument("pending requests of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  // Both sources are assigned with the shard: each holds event time back
  // until it delivers or is idle, even one the checkpoint saw no event of.
  watermark_.AddSource(EventOrigin::SourceOf(0, shard));
  watermark_.AddSource(EventOrigin::SourceOf(1, shard));
  if (results_progress != INT64_MIN) {
    watermark_.RestoreProgress(EventOrigin::SourceOf(0, shard),
                               results_progress);
  }
  if (judgments_progress != INT64_MIN) {
    watermark_.RestoreProgress(EventOrigin::SourceOf(1, shard),
                               judgments_progress);
  }
  return Status::Ok();
}

void WatermarkedJoin::DropShard(int32_t shard) {
  store().Drop(shard);
  watermark_.RemoveSource(EventOrigin::SourceOf(0, shard));
  watermark_.RemoveSource(EventOrigin::SourceOf(1, shard));
}

}  // namespace rankwatch::stream
