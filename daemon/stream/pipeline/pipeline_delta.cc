// Pipeline's checkpoints proportional to change: a shard's delta records
// (EncodeShardDelta, ApplyShardDelta). The whole-state records are in
// pipeline.cc; the header comment in pipeline.h describes both.
#include "base/byte_codec.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::stream {

namespace {

// "RWSD": a shard's delta, never taken for a whole record ("RWCK") by a
// version that reads only those.
constexpr uint32_t kShardDeltaMagic = 0x44535752;

}  // namespace

void Pipeline::EncodeShardBase(int32_t shard, std::string* out) {
  join_->StartShardTracking(shard);
  EncodeShard(shard, out);
  MarkShardRecorded(shard);
}

void Pipeline::MarkShardRecorded(int32_t shard) {
  aggregator_.MarkShardRecorded(shard);
  interleaving_->MarkShardRecorded(shard);
}

bool Pipeline::EncodeShardDelta(int32_t shard, std::string* out) {
  const size_t start = out->size();
  ByteWriter w(out);
  w.Fixed32(kShardDeltaMagic);
  w.Fixed32(kDeltaVersion);
  const AggregatorGroups groups(&aggregator_);
  aggregator_.EncodeShardChanges(shard, &w);
  if (!join_->EncodeShardDelta(shard, groups, &w)) {
    out->resize(start);
    return false;
  }
  EncodeShardSections(shard, &w, /*changes=*/true);
  MarkShardRecorded(shard);
  return true;
}

Status Pipeline::ApplyShardDelta(int32_t shard, std::string_view record) {
  ++state_version_;
  ByteReader in(record);
  if (in.Fixed32() != kShardDeltaMagic) {
    DropShard(shard);
    return Status::InvalidArgument("not a rankwatch checkpoint delta");
  }
  const uint32_t version = in.Fixed32();
  if (version != kDeltaVersion && version != kDeltaVersionWholeWindows) {
    DropShard(shard);
    return Status::InvalidArgument("checkpoint delta version " +
                                   std::to_string(version) +
                                   ", this rankwatch reads versions " +
                                   std::to_string(kDeltaVersionWholeWindows) +
                                   " and " + std::to_string(kDeltaVersion));
  }
  // Every section but the pending requests and (from version 2) the
  // sliding windows is written whole: read again.
  const RecordKind kind =
      version == kDeltaVersion ? RecordKind::kDelta : RecordKind::kDeltaWhole;
  DropShardSections(shard, kind == RecordKind::kDelta);
  return RestoreSections(shard, &in, kind);
}

}  // namespace rankwatch::stream
