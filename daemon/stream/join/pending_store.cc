#include "daemon/stream/join/pending_store.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "base/json_writer.h"
#include "base/rfc3339.h"
#include "base/saturating.h"
#include "base/string_index.h"

namespace rankwatch::stream {

namespace {
constexpr uint32_t kEmpty = UINT32_MAX;
constexpr size_t kMinIndex = 64;
}  // namespace

int32_t PendingRequest::FindDoc(std::string_view doc) const {
  uint32_t begin = 0;
  for (size_t i = 0; i < doc_ends.size(); ++i) {
    const uint32_t end = doc_ends[i];
    // Ids of one list share their prefixes ("doc-"), so a memcmp call per
    // doc of equal length mostly compared those (2% of BM_PipelineEvents):
    // BytesEqual compares the last bytes in the same load as the first.
    if (BytesEqual(std::string_view(docs).substr(begin, end - begin), doc)) {
      return static_cast<int32_t>(i);
    }
    begin = end;
  }
  return -1;
}

void PendingRequest::SetFields(const FieldValues& values) {
  if (fields_ != nullptr) {
    *fields_ = values;
    return;
  }
  // A request without values (all NaN) needs no storage.
  for (double v : values) {
    if (!std::isnan(v)) {
      fields_ = std::make_unique<FieldValues>(values);
      return;
    }
  }
}

size_t PendingStore::FindIndex(std::string_view key, uint64_t hash) const {
  if (index_.empty()) return SIZE_MAX;
  for (size_t i = hash & index_mask_;; i = (i + 1) & index_mask_) {
    const IndexEntry& e = index_[i];
    if (e.slot == kEmpty) return SIZE_MAX;
    if (e.hash == hash && BytesEqual(SlotAt(e.slot).key, key)) return i;
  }
}

PendingRequest* PendingStore::Find(std::string_view key, uint64_t hash) {
  const size_t pos = FindIndex(key, hash);
  if (pos == SIZE_MAX) return nullptr;
  PendingRequest& r = SlotAt(index_[pos].slot);
  // The join changes what it finds (a duplicate it ignores costs a
  // re-written request, never a missed change).
  Touch(r, /*created=*/false);
  return &r;
}

void PendingStore::StartTracking() {
  tracking_ = true;
  // Epochs wrap after 2^31 cuts: three centuries of 5 s checkpoints.
  epoch_ = (epoch_ + 1) & ~kCreatedInEpoch;
  changed_.clear();
  released_.clear();
  released_count_ = 0;
}

void PendingStore::GrowIndex() {
  std::vector<IndexEntry> old;
  old.swap(index_);
  const size_t capacity = std::max(kMinIndex, old.size() * 2);
  index_.assign(capacity, IndexEntry{0, kEmpty});
  index_mask_ = capacity - 1;
  for (const IndexEntry& e : old) {
    if (e.slot == kEmpty) continue;
    size_t i = e.hash & index_mask_;
    while (index_[i].slot != kEmpty) i = (i + 1) & index_mask_;
    index_[i] = e;
  }
}

PendingRequest* PendingStore::Create(std::string_view key, uint64_t hash) {
  if ((size_ + 1) * 2 > index_.size()) GrowIndex();
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(num_slots_);
    if (num_slots_ % kSlotsPerChunk == 0) {
      chunks_.push_back(std::make_unique<PendingRequest[]>(kSlotsPerChunk));
    }
    ++num_slots_;
    hashes_.push_back(0);
    generations_.push_back(0);
    live_.push_back(false);
  }
  PendingRequest& r = SlotAt(slot);
  // Clear but keep capacity: the slot's buffers serve the next request.
  r.key.assign(key);
  r.query_id.clear();
  r.docs.clear();
  r.doc_ends.clear();
  r.judged_docs.clear();
  r.records.clear();
  r.origins.clear();
  r.results_origin = EventOrigin();
  r.group = 0;
  r.shard = 0;
  r.unit_hash = 0;
  r.covariate = std::numeric_limits<double>::quiet_NaN();
  r.ClearFields();
  r.interleaving = -1;
  r.teams.clear();
  r.has_results = false;
  r.served_ms = 0;
  r.deadline_ms = INT64_MIN;
  r.slot = slot;
  Touch(r, /*created=*/true);
  hashes_[slot] = hash;
  live_[slot] = true;
  ++size_;
  size_t i = hash & index_mask_;
  while (index_[i].slot != kEmpty) i = (i + 1) & index_mask_;
  index_[i] = IndexEntry{hash, slot};
  return &r;
}

void PendingStore::Schedule(PendingRequest* r, int64_t deadline_ms) {
  if (r->deadline_ms == deadline_ms) return;
  r->deadline_ms = deadline_ms;
  heap_.push(HeapEntry{deadline_ms, r->slot, ++generations_[r->slot]});
}

PendingRequest* PendingStore::PeekDue(int64_t limit_ms) {
  while (!heap_.empty()) {
    const HeapEntry& top = heap_.top();
    // No entry, stale or not, is due before the earliest deadline: answer
    // without looking further. Stale entries are dropped once they reach
    // the top and are due.
    if (top.deadline_ms > limit_ms) return nullptr;
    if (generations_[top.slot] == top.generation) return &SlotAt(top.slot);
    heap_.pop();
  }
  return nullptr;
}

// Backward-shift deletion keeps probe sequences intact without tombstones.
void PendingStore::EraseIndex(size_t pos) {
  size_t hole = pos;
  for (size_t j = (hole + 1) & index_mask_;; j = (j + 1) & index_mask_) {
    if (index_[j].slot == kEmpty) break;
    const size_t home = index_[j].hash & index_mask_;
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool in_range =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!in_range) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = IndexEntry{0, kEmpty};
}

void PendingStore::Release(PendingRequest* r) {
  const uint32_t slot = r->slot;
  if (!live_[slot]) return;
  const size_t pos = FindIndex(r->key, hashes_[slot]);
  if (pos != SIZE_MAX) EraseIndex(pos);
  live_[slot] = false;
  ++generations_[slot];
  if (tracking_ && r->change_epoch != (epoch_ | kCreatedInEpoch)) {
    // An earlier record may hold it: the next one deletes it.
    ByteWriter(&released_).String(r->key);
    ++released_count_;
  }
  r->deadline_ms = INT64_MIN;
  free_.push_back(slot);
  --size_;
}

PendingStore& ShardedPendingStore::Shard(int32_t shard) {
  const size_t i = static_cast<size_t>(std::max(shard, 0));
  if (i >= shards_.size()) shards_.resize(i + 1);
  if (!shards_[i]) shards_[i] = std::make_unique<PendingStore>();
  return *shards_[i];
}

PendingStore* ShardedPendingStore::Find(int32_t shard) {
  if (shard < 0 || static_cast<size_t>(shard) >= shards_.size()) {
    return nullptr;
  }
  return shards_[static_cast<size_t>(shard)].get();
}

PendingRequest* ShardedPendingStore::PeekEarliest() {
  PendingRequest* earliest = nullptr;
  for (std::unique_ptr<PendingStore>& s : shards_) {
    if (!s) continue;
    PendingRequest* r = s->PeekEarliest();
    if (r != nullptr &&
        (earliest == nullptr || r->deadline_ms < earliest->deadline_ms)) {
      earliest = r;
    }
  }
  return earliest;
}

void ShardedPendingStore::Drop(int32_t shard) {
  if (PendingStore* s = Find(shard)) {
    shards_[static_cast<size_t>(shard)].reset();
    (void)s;
  }
}

size_t ShardedPendingStore::size() const {
  size_t n = 0;
  for (const std::unique_ptr<PendingStore>& s : shards_) {
    if (s) n += s->size();
  }
  return n;
}

namespace {

constexpr uint8_t kRecordWithdraws = 1;
constexpr uint8_t kRecordReplayed = 2;
constexpr uint8_t kRecordClickExcluded = 4;
// An impression (schema.impression_kind). A version without it reads the
// record as a grade-0 judgment: only a checkpoint of UBI data without hit
// ids has any.
constexpr uint8_t kRecordImpression = 8;

// A restored judgment's judge in this configuration: -1 without judges,
// -2 when it is to be dropped.
int8_t ReadJudge(ByteReader* in, int format, const JudgeMap& judges) {
  const uint64_t written = format >= 4 ? in->Varint() : 0;
  if (written > judges.to.size()) {
    in->Fail("a judge the record does not name");
    return -2;
  }
  if (!judges.judges_configured) return -1;
  const int32_t to = written == 0 ? judges.unnamed : judges.to[written - 1];
  return static_cast<int8_t>(to < 0 ? -2 : to);
}

}  // namespace

void EncodePendingRequest(const PendingRequest& r, const GroupCodec& groups,
                          ByteWriter* out, int format) {
  out->String(r.key);
  out->String(r.query_id);
  out->String(r.docs);
  out->Varint(r.doc_ends.size());
  for (uint32_t end : r.doc_ends) out->Varint(end);
  out->String(r.judged_docs);
  out->Varint(r.records.size());
  for (const JudgmentRecord& j : r.records) {
    out->Varint(j.begin);
    out->Varint(j.end);
    out->I64(j.time_ms);
    out->I64(j.grade);
    out->U8((j.withdraws ? kRecordWithdraws : 0) |
            (j.replayed ? kRecordReplayed : 0) |
            (j.click_excluded ? kRecordClickExcluded : 0) |
            (j.impression ? kRecordImpression : 0));
    out->Varint(static_cast<uint32_t>(j.claimed_position));
    // 0: no judge; else its place in the record's list, plus one.
    if (format >= 4) out->Varint(static_cast<uint64_t>(j.judge + 1));
  }
  out->Bool(r.has_results);
  if (r.has_results) groups.Write(r.group, out);
  out->Fixed64(r.unit_hash);
  out->I64(r.interleaving);
  out->String(std::string_view(reinterpret_cast<const char*>(r.teams.data()),
                               r.teams.size()));
  out->I64(r.served_ms);
  out->I64(r.deadline_ms);
  if (format >= 2) out->Double(r.covariate);
  if (format >= 3) {
    const FieldValues& fields = r.fields();
    size_t n = fields.size();
    while (n > 0 && std::isnan(fields[n - 1])) --n;
    out->Varint(n);
    for (size_t i = 0; i < n; ++i) out->Double(fields[i]);
  }
}

namespace {

// Fails `in` unless judged_docs (or docs) [begin, end) is an id a live event
// could carry: within max_id_length, valid UTF-8.
void CheckId(ByteReader* in, std::string_view id,
             const CheckpointLimits& limits, std::string_view what) {
  if (!in->ok()) return;
  if (id.size() > limits.max_id_length) {
    in->Fail(std::string(what) + " of " + std::to_string(id.size()) +
             " bytes, over events.max_id_length " +
             std::to_string(limits.max_id_length));
  } else if (!IsValidUtf8(id)) {
    in->Fail(std::string(what) + " that is not valid UTF-8");
  }
}

// The served list: its ids, concatenated, and where each ends.
std::vector<uint32_t> ReadDocs(ByteReader* in, std::string_view docs,
                               const CheckpointLimits& limits) {
  const uint64_t n = in->Count(1);
  if (n > limits.max_results) {
    in->Fail("a list of " + std::to_string(n) +
             " docs, over events.max_results " +
             std::to_string(limits.max_results));
  }
  std::vector<uint32_t> doc_ends(in->ok() ? n : 0);
  uint32_t previous = 0;
  for (uint32_t& end : doc_ends) {
    const uint64_t v = in->Varint();
    if (v < previous || v > docs.size()) in->Fail("a doc past the list");
    end = static_cast<uint32_t>(v);
    CheckId(in, docs.substr(previous, end - previous), limits, "a doc id");
    if (!in->ok()) break;
    previous = end;
  }
  if (in->ok() && previous != docs.size()) in->Fail("doc ids past the list");
  return doc_ends;
}

std::vector<JudgmentRecord> ReadRecords(ByteReader* in,
                                        std::string_view judged_docs,
                                        int format, const JudgeMap& judges,
                                        const CheckpointLimits& limits) {
  // begin, end, time, grade, flags, rank: at least 20 bytes each.
  const uint64_t n = in->Count(20);
  if (n > limits.max_judgments_per_request) {
    in->Fail(std::to_string(n) +
             " judgments in a request, over join.max_judgments_per_request " +
             std::to_string(limits.max_judgments_per_request));
  }
  std::vector<JudgmentRecord> records(in->ok() ? n : 0);
  for (JudgmentRecord& j : records) {
    const uint64_t begin = in->Varint();
    const uint64_t end = in->Varint();
    j.time_ms = in->I64();
    const int64_t grade = in->I64();
    const uint8_t flags = in->U8();
    j.withdraws = (flags & kRecordWithdraws) != 0;
    j.replayed = (flags & kRecordReplayed) != 0;
    j.click_excluded = (flags & kRecordClickExcluded) != 0;
    j.impression = (flags & kRecordImpression) != 0;
    const uint64_t rank = in->Varint();
    if (begin > end || end > judged_docs.size()) {
      in->Fail("a judged doc past the record");
    }
    if (grade < INT32_MIN || grade > INT32_MAX)
      in->Fail("a grade out of range");
    if (rank > limits.max_results || rank > INT32_MAX) {
      in->Fail("a claimed rank past events.max_results");
    }
    if (!in->ok()) break;
    j.begin = static_cast<uint32_t>(begin);
    j.end = static_cast<uint32_t>(end);
    j.grade = static_cast<metrics::Grade>(grade);
    j.claimed_position = static_cast<int32_t>(rank);
    CheckId(in, judged_docs.substr(j.begin, j.end - j.begin), limits,
            "a judged doc id");
    limits.CheckTime(in, j.time_ms, "a judgment's event time");
    j.judge = ReadJudge(in, format, judges);
  }
  if (!in->ok()) records.clear();
  return records;
}

}  // namespace

PendingRequest* DecodePendingRequest(ByteReader* in, const GroupCodec& groups,
                                     int32_t shard, PendingStore* store,
                                     int format,
                                     std::span<const int32_t> field_map,
                                     const JudgeMap& judges,
                                     const CheckpointLimits& limits) {
  const std::string_view key = in->Text(limits.max_id_length, "a request id");
  const std::string_view query_id =
      in->Text(limits.max_id_length, "a query id");
  const std::string_view docs = in->String();
  std::vector<uint32_t> doc_ends = ReadDocs(in, docs, limits);
  const std::string_view judged_docs = in->String();
  std::vector<JudgmentRecord> records =
      ReadRecords(in, judged_docs, format, judges, limits);
  // Judgments of a judge not configured here leave, as a new one would be
  // rejected (JudgmentRecord::judge -2 marks them).
  std::erase_if(records, [](const JudgmentRecord& j) { return j.judge < -1; });
  const bool has_results = in->Bool();
  const uint32_t group = has_results && in->ok() ? groups.Read(in) : 0;
  const uint64_t unit_hash = in->Fixed64();
  const int64_t interleaving = in->I64();
  const std::string_view teams = in->String();
  const int64_t served_ms = in->I64();
  const int64_t deadline_ms = in->I64();
  if (has_results) limits.CheckTime(in, served_ms, "a request's served time");
  if (in->ok() &&
      deadline_ms > SatAdd(limits.max_time_ms, limits.max_deadline_after_ms)) {
    in->Fail("a deadline " + FormatRfc3339Millis(deadline_ms) +
             " past the latest event time plus the join's window");
  }
  if (interleaving < -1 || interleaving > INT32_MAX) {
    in->Fail("an interleaving experiment out of range");
  }
  const double covariate =
      format >= 2 ? in->Double() : std::numeric_limits<double>::quiet_NaN();
  FieldValues fields = kNoFieldValues;
  if (format >= 3) {
    const uint64_t n = in->Varint();
    if (n > fields.size() || (!field_map.empty() && n > field_map.size())) {
      in->Fail("more field values than fields");
    }
    for (size_t i = 0; i < n && in->ok(); ++i) {
      const double v = in->Double();
      const int32_t to =
          field_map.empty() ? static_cast<int32_t>(i) : field_map[i];
      if (to >= 0 && static_cast<size_t>(to) < fields.size()) fields[to] = v;
    }
  }
  if (in->ok() && teams.size() != doc_ends.size() && !teams.empty()) {
    in->Fail("teams not parallel to the docs");
  }
  if (!in->ok()) return nullptr;
  const uint64_t hash = HashBytes(key);
  if (PendingRequest* old = store->Find(key, hash)) store->Release(old);
  PendingRequest* r = store->Create(key, hash);
  r->query_id.assign(query_id);
  r->docs.assign(docs);
  r->doc_ends = std::move(doc_ends);
  r->judged_docs.assign(judged_docs);
  r->records = std::move(records);
  r->has_results = has_results;
  r->group = group;
  r->shard = shard;
  r->unit_hash = unit_hash;
  r->covariate = covariate;
  r->SetFields(fields);
  r->interleaving = static_cast<int32_t>(interleaving);
  r->teams.assign(teams.begin(), teams.end());
  r->served_ms = served_ms;
  r->results_origin.source = -1;  // Not retained (see the field).
  store->Schedule(r, deadline_ms);
  return r;
}

}  // namespace rankwatch::stream
