#include "daemon/stream/join/join.h"

#include <algorithm>
#include <cmath>

#include "base/string_index.h"

namespace rankwatch::stream {

namespace {

// "JNS4": pending requests of format 4 (with judges); "JNS3" (with field
// values), "JNS2" and "JNS1", written before judges, schema.fields and
// schema.covariate existed, still read (formats 3 to 1), and written while
// they suffice.
constexpr uint32_t kJoinShardMagic = 0x4a4e5334;
constexpr uint32_t kJoinShardMagicV3 = 0x4a4e5333;
constexpr uint32_t kJoinShardMagicV2 = 0x4a4e5332;
constexpr uint32_t kJoinShardMagicV1 = 0x4a4e5331;
// "JND4": the changes of a shard since the previous record (EncodeShardDelta),
// its requests in format 4.
constexpr uint32_t kJoinDeltaMagic = 0x4a4e4434;

uint32_t MagicOf(int format) {
  switch (format) {
    case 1:
      return kJoinShardMagicV1;
    case 2:
      return kJoinShardMagicV2;
    case 3:
      return kJoinShardMagicV3;
    default:
      return kJoinShardMagic;
  }
}

int FormatOf(uint32_t magic) {
  switch (magic) {
    case kJoinShardMagic:
      return 4;
    case kJoinShardMagicV3:
      return 3;
    case kJoinShardMagicV2:
      return 2;
    case kJoinShardMagicV1:
      return 1;
    default:
      return 0;
  }
}

}  // namespace

void WatermarkedJoin::SetJudges(const config::JudgesConfig& judges) {
  judge_names_ = judges.names;
  const auto it =
      std::find(judges.names.begin(), judges.names.end(), judges.default_judge);
  default_judge_ = judges.default_judge.empty() || it == judges.names.end()
                       ? -1
                       : static_cast<int32_t>(it - judges.names.begin());
  judge_combine_ = judges.combine;
  judge_grades_.resize(judges.names.size());
}

void WatermarkedJoin::EncodeShard(int32_t shard, const GroupCodec& groups,
                                  ByteWriter* out) const {
  PendingStore* pending =
      const_cast<WatermarkedJoin*>(this)->store().Find(shard);
  // The oldest format that holds the requests: format 1 while none has a
  // covariate or a field value is what a version before covariates reads
  // (a rollback keeps its checkpoints).
  int format = 1;
  if (pending != nullptr) {
    pending->ForEach([&](PendingRequest& r) {
      if (!std::isnan(r.covariate)) format = std::max(format, 2);
      for (double v : r.fields()) {
        if (!std::isnan(v)) format = std::max(format, 3);
      }
      for (const JudgmentRecord& j : r.records) {
        if (j.judge >= 0) format = 4;
      }
    });
  }
  out->Fixed32(MagicOf(format));
  WriteShardHeader(shard, format, out);
  out->Varint(pending == nullptr ? 0 : pending->size());
  if (pending == nullptr) return;
  pending->ForEach(
      [&](PendingRequest& r) { EncodePendingRequest(r, groups, out, format); });
}

void WatermarkedJoin::WriteShardHeader(int32_t shard, int format,
                                       ByteWriter* out) const {
  out->I64(watermark_.progress(EventOrigin::SourceOf(0, shard)));
  out->I64(watermark_.progress(EventOrigin::SourceOf(1, shard)));
  if (format >= 3) {
    out->Varint(field_keys_.size());
    for (const std::string& key : field_keys_) out->String(key);
  }
  if (format >= 4) {
    out->Varint(judge_names_.size());
    for (const std::string& name : judge_names_) out->String(name);
  }
}

void WatermarkedJoin::DecodeShardHeader(ByteReader* in, int format,
                                        const CheckpointLimits& limits,
                                        ShardHeader* header) const {
  header->results_progress = in->I64();
  header->judgments_progress = in->I64();
  limits.CheckTime(in, header->results_progress,
                   "the results' event-time progress");
  limits.CheckTime(in, header->judgments_progress,
                   "the judgments' event-time progress");
  // Format 3: the keys of the writer's fields, mapped to this
  // configuration's positions (-1: no such field here, the value dropped).
  if (format >= 3) {
    const uint64_t n = in->Count(1);
    if (n > config::kMaxResultFields) in->Fail("more fields than supported");
    header->field_map.resize(in->ok() ? n : 0);
    for (int32_t& to : header->field_map) {
      const std::string_view key = in->String();
      const auto it = std::find(field_keys_.begin(), field_keys_.end(), key);
      to = it == field_keys_.end()
               ? -1
               : static_cast<int32_t>(it - field_keys_.begin());
    }
  }
  // Format 4: the writer's judges, mapped to this configuration's by name.
  JudgeMap& judges = header->judges;
  judges.judges_configured = !judge_names_.empty();
  judges.unnamed = default_judge_;
  if (format >= 4) {
    const uint64_t n = in->Count(1);
    // JudgmentRecord::judge is an int8_t: no writer names more judges.
    if (n > INT8_MAX) in->Fail("more judges than supported");
    judges.to.resize(in->ok() ? n : 0);
    for (int32_t& to : judges.to) {
      const std::string_view name = in->String();
      const auto it = std::find(judge_names_.begin(), judge_names_.end(), name);
      to = it == judge_names_.end()
               ? -1
               : static_cast<int32_t>(it - judge_names_.begin());
    }
  }
}

Status WatermarkedJoin::DecodeShard(int32_t shard, const GroupCodec& groups,
                                    ByteReader* in,
                                    const CheckpointLimits& limits) {
  const int format = FormatOf(in->Fixed32());
  if (format == 0) in->Fail("not a join record");
  ShardHeader header;
  DecodeShardHeader(in, format, limits, &header);
  // A request takes at least its 16 fixed bytes of times and hash.
  const uint64_t n = in->Count(16);
  if (n > limits.max_pending_requests) {
    in->Fail(std::to_string(n) +
             " pending requests, over join.max_pending_requests " +
             std::to_string(limits.max_pending_requests));
  }
  staged_requests_.clear();
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    DecodeRequest(in, groups, shard, &store().Shard(shard), format, header,
                  limits);
  }
  if (!in->ok()) {
    DropShard(shard);
    return Status::InvalidArgument("pending requests of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  RestoreShardProgress(shard, header);
  return Status::Ok();
}

void WatermarkedJoin::RestoreShardProgress(int32_t shard,
                                           const ShardHeader& header) {
  // Both sources are assigned with the shard: each holds event time back
  // until it delivers or is idle, even one the checkpoint saw no event of,
  // and both catch up with their backlog before the wall clock may close
  // the shard's windows (Watermark, "restored"). Both are registered
  // before either's progress: a shard's event time never decreases, so
  // the results' progress alone must not set it past the judgments'.
  watermark_.AddSource(EventOrigin::SourceOf(0, shard));
  watermark_.AddSource(EventOrigin::SourceOf(1, shard));
  watermark_.RestoreProgress(EventOrigin::SourceOf(0, shard),
                             header.results_progress);
  watermark_.RestoreProgress(EventOrigin::SourceOf(1, shard),
                             header.judgments_progress);
}

bool WatermarkedJoin::EncodeShardDelta(int32_t shard, const GroupCodec& groups,
                                       ByteWriter* out) {
  PendingStore* pending = store().Find(shard);
  if (pending == nullptr || !pending->tracking()) return false;
  // Always the newest format: a delta is read only by a version that
  // writes deltas.
  out->Fixed32(kJoinDeltaMagic);
  WriteShardHeader(shard, kPendingRequestFormat, out);
  out->Varint(pending->released_count());
  out->Raw(pending->released_keys());
  uint64_t changed = 0;
  pending->ForEachChanged([&](const PendingRequest&) { ++changed; });
  out->Varint(changed);
  pending->ForEachChanged([&](const PendingRequest& r) {
    EncodePendingRequest(r, groups, out, kPendingRequestFormat);
  });
  pending->StartTracking();
  return true;
}

Status WatermarkedJoin::ApplyShardDelta(int32_t shard, const GroupCodec& groups,
                                        ByteReader* in,
                                        const CheckpointLimits& limits) {
  if (in->Fixed32() != kJoinDeltaMagic) in->Fail("not a join delta");
  ShardHeader header;
  DecodeShardHeader(in, kPendingRequestFormat, limits, &header);
  PendingStore& pending = store().Shard(shard);
  const uint64_t released = in->Count(1);
  for (uint64_t i = 0; i < released && in->ok(); ++i) {
    const std::string_view key = in->Text(limits.max_id_length, "a request id");
    PendingRequest* r = in->ok() ? pending.Find(key, HashBytes(key)) : nullptr;
    if (r == nullptr) {
      in->Fail("a deletion of a request the state before it does not hold");
    } else {
      pending.Release(r);
    }
  }
  const uint64_t changed = in->Count(16);
  staged_requests_.clear();
  for (uint64_t i = 0; i < changed && in->ok(); ++i) {
    DecodeRequest(in, groups, shard, &pending, kPendingRequestFormat, header,
                  limits);
  }
  if (in->ok() && pending.size() > limits.max_pending_requests) {
    in->Fail(std::to_string(pending.size()) +
             " pending requests, over join.max_pending_requests " +
             std::to_string(limits.max_pending_requests));
  }
  if (!in->ok()) {
    DropShard(shard);
    return Status::InvalidArgument("changed requests of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  watermark_.RemoveSource(EventOrigin::SourceOf(0, shard));
  watermark_.RemoveSource(EventOrigin::SourceOf(1, shard));
  RestoreShardProgress(shard, header);
  return Status::Ok();
}

void WatermarkedJoin::DecodeRequest(ByteReader* in, const GroupCodec& groups,
                                    int32_t shard, PendingStore* store,
                                    int format, const ShardHeader& header,
                                    const CheckpointLimits& limits) {
  PendingRequest* r =
      DecodePendingRequest(in, groups, shard, store, format, header.field_map,
                           header.judges, limits);
  if (r != nullptr && r->has_results && r->group >= kStagedGroup) {
    staged_requests_.push_back(r);
  }
}

void WatermarkedJoin::ResolveStagedGroups(int32_t shard,
                                          std::span<const uint32_t> groups) {
  (void)shard;  // The requests of the record just restored: its shard's.
  for (PendingRequest* r : staged_requests_) {
    // Decoded twice in one record: resolved the first time.
    if (!r->has_results || r->group < kStagedGroup) continue;
    const size_t i = r->group - kStagedGroup;
    r->group = i < groups.size() ? groups[i] : 0;
  }
  staged_requests_.clear();
}

void WatermarkedJoin::DropShard(int32_t shard) {
  staged_requests_.clear();
  store().Drop(shard);
  watermark_.RemoveSource(EventOrigin::SourceOf(0, shard));
  watermark_.RemoveSource(EventOrigin::SourceOf(1, shard));
}

}  // namespace rankwatch::stream
