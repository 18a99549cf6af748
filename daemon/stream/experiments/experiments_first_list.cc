// ExperimentMonitor's first lists: per shard and variant the event time of
// the earliest list, the start of an experiment's min_duration
// (FirstListMs), and their checkpoint entry. See experiments.h and
// docs/statistics.md, "Minimum sample".
//
// The entry rides in the units section (EncodeUnits) as one more
// "experiment" after the configured ones, named kFirstListsEntry, whose
// "variants" are one string per variant with a first list: its event time
// (8 bytes, little-endian, two's complement), then the variant's name. A
// version before first lists reads it as an experiment no longer
// configured and keeps none of it, so a rollback restores every other
// figure of the record, and its min_duration starts again as it did.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "daemon/stream/experiments/experiments.h"

namespace rankwatch::stream {

void ExperimentMonitor::AddFirstList(size_t arm, size_t shard,
                                     int64_t event_ms) {
  if (event_ms == kNoEventTime) return;
  if (shard >= shard_first_.size()) shard_first_.resize(shard + 1);
  std::vector<int64_t>& first = shard_first_[shard];
  if (first.empty()) first.assign(variants_.size(), kNoEventTime);
  first[arm] = std::min(first[arm], event_ms);
  first_list_ms_[arm] = std::min(first_list_ms_[arm], event_ms);
}

const std::vector<int64_t>* ExperimentMonitor::ShardFirstLists(
    int32_t shard) const {
  if (shard < 0 || static_cast<size_t>(shard) >= shard_first_.size()) {
    return nullptr;
  }
  const std::vector<int64_t>& first = shard_first_[static_cast<size_t>(shard)];
  const bool any = std::any_of(first.begin(), first.end(),
                               [](int64_t t) { return t != kNoEventTime; });
  return any ? &first : nullptr;
}

void ExperimentMonitor::EncodeFirstLists(const std::vector<int64_t>& first,
                                         ByteWriter* out) const {
  out->String(kFirstListsEntry);
  const auto known = static_cast<size_t>(std::count_if(
      first.begin(), first.end(), [](int64_t t) { return t != kNoEventTime; }));
  out->Varint(known);
  std::string entry;
  for (size_t a = 0; a < first.size(); ++a) {
    if (first[a] == kNoEventTime) continue;
    entry.clear();
    ByteWriter w(&entry);
    w.I64(first[a]);
    w.Raw(variants_[a]);
    out->String(entry);
  }
}

void ExperimentMonitor::DecodeFirstLists(ByteReader* in,
                                         const CheckpointLimits& limits,
                                         std::vector<int64_t>* first) const {
  // Nothing is allocated per entry: a short one is refused below, with
  // what it lacks.
  const uint64_t n = in->Count(1);
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    const std::string_view entry = in->String();
    if (!in->ok()) break;
    if (entry.size() < 8) {
      in->Fail("a first list of " + std::to_string(entry.size()) +
               " bytes (its time takes 8)");
      break;
    }
    ByteReader r(entry);
    const int64_t time_ms = r.I64();
    limits.CheckTime(in, time_ms, "an experiment's first list");
    const std::string_view variant = entry.substr(8);
    for (size_t a = 0; a < variants_.size() && in->ok(); ++a) {
      // A variant no longer configured is left out.
      if (variants_[a] == variant) {
        (*first)[a] = std::min((*first)[a], time_ms);
      }
    }
  }
}

void ExperimentMonitor::SetShardFirstLists(size_t shard,
                                           std::vector<int64_t> first) {
  if (shard >= shard_first_.size()) shard_first_.resize(shard + 1);
  const bool any = std::any_of(first.begin(), first.end(),
                               [](int64_t t) { return t != kNoEventTime; });
  shard_first_[shard] = any ? std::move(first) : std::vector<int64_t>();
}

void ExperimentMonitor::RebuildFirstLists() {
  first_list_ms_.assign(variants_.size(), kNoEventTime);
  for (const std::vector<int64_t>& shard : shard_first_) {
    for (size_t a = 0; a < shard.size() && a < first_list_ms_.size(); ++a) {
      first_list_ms_[a] = std::min(first_list_ms_[a], shard[a]);
    }
  }
}

}  // namespace rankwatch::stream
