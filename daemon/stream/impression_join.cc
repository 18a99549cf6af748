#include "daemon/stream/impression_join.h"

#include <algorithm>

#include "metrics/string_index.h"

namespace rankwatch::stream {

ImpressionJoin::ImpressionJoin(const config::JoinConfig& config,
                               const Clock* clock, JoinListener* listener)
    : config_(config),
      window_ms_(config.window.count()),
      watermark_(config.allowed_lateness.count(), config.idle_timeout.count(),
                 clock),
      listener_(listener) {}

bool ImpressionJoin::OnResults(const ResultsEvent& e, uint32_t group,
                               EventOrigin origin) {
  watermark_.Observe(origin.partition, e.timestamp_ms);
  bool retained = false;
  if (e.timestamp_ms + window_ms_ <= watermark_.value()) {
    // Its window has closed already: its judgments were dropped as late, so
    // scoring it now would count clicks as missing.
    ++(origin.replayed ? counters_.replayed : counters_.late_results);
  } else {
    const uint64_t hash = HashBytes(e.request_id);
    PendingRequest* r = store_.Find(e.request_id, hash);
    if (r != nullptr && r->has_results) {
      ++counters_.duplicate_results;
    } else {
      if (r == nullptr) {
        MakeRoom();
        r = store_.Create(e.request_id, hash);
      }
      r->has_results = true;
      r->group = group;
      r->served_ms = e.timestamp_ms;
      for (std::string_view doc : e.doc_ids) {
        r->docs.append(doc);
        r->doc_ends.push_back(static_cast<uint32_t>(r->docs.size()));
      }
      for (JudgedDoc& j : r->judged)
        j.result_index = r->FindDoc(r->judged_doc(j));
      r->origins.push_back(origin);
      store_.Schedule(r, e.timestamp_ms + window_ms_);
      retained = true;
    }
  }
  ProcessDue(FinalizeCause::kWindowClosed);
  return retained;
}

bool ImpressionJoin::OnJudgments(const JudgmentEvent& e, EventOrigin origin) {
  watermark_.Observe(origin.partition, e.timestamp_ms);
  const int64_t n = static_cast<int64_t>(e.judgments.size());
  const uint64_t hash = HashBytes(e.request_id);
  PendingRequest* r = store_.Find(e.request_id, hash);
  bool late = false;
  if (r != nullptr) {
    late = r->has_results && e.timestamp_ms > r->served_ms + window_ms_;
  } else if (e.timestamp_ms <= watermark_.value()) {
    // Older than the watermark and nothing pending: its request was
    // finalized already (or its window closed without results).
    late = true;
  } else {
    MakeRoom();
    r = store_.Create(e.request_id, hash);
    store_.Schedule(r, e.timestamp_ms + window_ms_);
  }
  if (late && origin.replayed) {
    ++counters_.replayed;
  } else if (late) {
    counters_.late_judgments += n;
  } else {
    ApplyJudgments(r, e);
    r->origins.push_back(origin);
  }
  ProcessDue(FinalizeCause::kWindowClosed);
  return !late;
}

void ImpressionJoin::ApplyJudgments(PendingRequest* r, const JudgmentEvent& e) {
  r->judgments_received += static_cast<int64_t>(e.judgments.size());
  for (const Judgment& j : e.judgments) {
    auto it = std::find_if(
        r->judged.begin(), r->judged.end(),
        [&](const JudgedDoc& d) { return r->judged_doc(d) == j.doc_id; });
    if (!j.grade) {  // "relevance": null withdraws a judgment.
      if (it != r->judged.end()) r->judged.erase(it);
      continue;
    }
    if (it != r->judged.end()) {
      it->grade = config_.combine == config::CombineRule::kMax
                      ? std::max(it->grade, *j.grade)
                      : *j.grade;
      continue;
    }
    const uint32_t begin = static_cast<uint32_t>(r->judged_docs.size());
    r->judged_docs.append(j.doc_id);
    r->judged.push_back(
        JudgedDoc{begin, static_cast<uint32_t>(r->judged_docs.size()), *j.grade,
                  r->has_results ? r->FindDoc(j.doc_id) : -1});
  }
}

void ImpressionJoin::MakeRoom() {
  if (static_cast<int64_t>(store_.size()) < config_.max_pending_requests) {
    return;
  }
  if (PendingRequest* oldest = store_.PeekEarliest()) {
    Finalize(oldest, FinalizeCause::kEvicted);
  }
}

void ImpressionJoin::ProcessDue(FinalizeCause cause) {
  while (PendingRequest* r = store_.PeekDue(watermark_.value())) {
    Finalize(r, cause);
  }
}

void ImpressionJoin::Finalize(PendingRequest* r, FinalizeCause cause) {
  if (cause == FinalizeCause::kEvicted) ++counters_.evicted;
  if (!r->has_results) {
    counters_.orphaned_judgments += r->judgments_received;
  } else {
    ranked_.assign(r->num_docs(), metrics::kUnjudged);
    judged_.clear();
    for (const JudgedDoc& j : r->judged) {
      judged_.push_back(j.grade);
      if (j.result_index >= 0) ranked_[j.result_index] = j.grade;
    }
    ++counters_.finalized;
    FinalizedRequest f;
    f.request_id = r->key;
    f.group = r->group;
    f.served_ms = r->served_ms;
    f.closed_ms = r->served_ms + window_ms_;
    f.cause = cause;
    f.ranked = ranked_;
    f.judged = judged_;
    listener_->OnFinalized(f);
  }
  for (const EventOrigin& o : r->origins) listener_->OnReleased(o);
  store_.Release(r);
}

void ImpressionJoin::AdvanceWallClock() {
  if (watermark_.AdvanceWallClock()) ProcessDue(FinalizeCause::kIdle);
}

void ImpressionJoin::FinishAll() {
  while (PendingRequest* r = store_.PeekEarliest()) {
    Finalize(r, FinalizeCause::kEndOfInput);
  }
}

void ImpressionJoin::DropPartitions(std::span<const int32_t> partitions) {
  std::vector<PendingRequest*> dropped;
  store_.ForEach([&](PendingRequest& r) {
    for (const EventOrigin& o : r.origins) {
      if (std::find(partitions.begin(), partitions.end(), o.partition) !=
          partitions.end()) {
        dropped.push_back(&r);
        return;
      }
    }
  });
  for (PendingRequest* r : dropped) store_.Release(r);
  for (int32_t source : partitions) watermark_.RemoveSource(source);
  counters_.dropped_on_rebalance += static_cast<int64_t>(dropped.size());
}

}  // namespace rankwatch::stream
