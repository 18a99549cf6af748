#include "daemon/stream/join/impression_join.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "base/saturating.h"
#include "base/string_index.h"

namespace rankwatch::stream {

namespace {

// Records of one request above which Combine() sorts them by doc.
constexpr size_t kSortAbove = 16;
// Finalized requests remembered (FinalizedMemory): 1 MiB of slots, about a
// minute of finalizations at 1,000 requests/s.
constexpr int64_t kFinalizedMemorySlots = 1 << 16;
// Docs of a list above which ServedRank() indexes them: a short list's scan
// costs less than hashing every doc (bench/stream_bench serves 10 to 20).
constexpr size_t kIndexDocsAbove = 32;

// The doc list of a results event and of a pending request, compared as
// sequences of ids: which of two results events for one request served
// at the same millisecond is the request does not depend on arrival order.
bool DocsLess(std::span<const std::string_view> docs, const PendingRequest& r) {
  const size_t n = std::min(docs.size(), r.num_docs());
  for (size_t i = 0; i < n; ++i) {
    const int c = docs[i].compare(r.doc(i));
    if (c != 0) return c < 0;
  }
  return docs.size() < r.num_docs();
}
// The other way round: the request's doc list before `docs`.
bool DocsLess(const PendingRequest& r, std::span<const std::string_view> docs) {
  const size_t n = std::min(docs.size(), r.num_docs());
  for (size_t i = 0; i < n; ++i) {
    const int c = r.doc(i).compare(docs[i]);
    if (c != 0) return c < 0;
  }
  return r.num_docs() < docs.size();
}

}  // namespace

ImpressionJoin::ImpressionJoin(const config::JoinConfig& config,
                               const Clock* clock, JoinListener* listener,
                               metrics::Grade click_threshold,
                               int32_t position_base)
    : WatermarkedJoin(config, clock),
      config_(config),
      window_ms_(config.window.count()),
      early_ms_(config.early_tolerance.count()),
      listener_(listener),
      click_threshold_(click_threshold),
      position_base_(position_base),
      finalized_(kFinalizedMemorySlots) {}

bool ImpressionJoin::OnResults(const ResultsEvent& e, uint32_t group,
                               EventOrigin origin) {
  watermark_.Observe(origin.source, e.timestamp_ms);
  const bool retained = AcceptResults(e, group, origin);
  ProcessDueIn(origin.partition(), FinalizeCause::kWindowClosed);
  return retained;
}

bool ImpressionJoin::AcceptResults(const ResultsEvent& e, uint32_t group,
                                   EventOrigin origin) {
  const int64_t closes = SatAdd(e.timestamp_ms, window_ms_);
  const uint64_t hash = HashBytes(e.request_id);
  const int32_t shard = origin.partition();
  PendingStore& store = store_.Shard(shard);
  PendingRequest* r = store.Find(e.request_id, hash);
  if (origin.replayed && closes < watermark_.restored(origin.source)) {
    // Its window closed before the previous owner's last commit: that owner
    // finalized it, with the judgments held for it here.
    ++counters_.replayed;
    if (r != nullptr && !r->has_results) DiscardReplayed(r);
    return false;
  }
  if (closes < watermark_.value(shard)) {
    // Its window has closed already: its judgments may have been dropped as
    // unclaimed, so scoring it now would count clicks as missing.
    ++counters_.late_results;
    return false;
  }
  if (r != nullptr && r->has_results) {
    ++counters_.duplicate_results;
    const bool earlier = e.timestamp_ms < r->served_ms ||
                         (e.timestamp_ms == r->served_ms &&
                          (DocsLess(e.doc_ids, *r) ||
                           (!DocsLess(*r, e.doc_ids) && e.teams < r->teams)));
    if (!earlier) return false;
    // Replaced: no longer needed (unless restored: not retained).
    if (r->results_origin.source >= 0) listener_->OnReleased(r->results_origin);
  } else if (r == nullptr) {
    MakeRoom();
    r = store.Create(e.request_id, hash);
    r->shard = shard;
  }
  SetResults(r, e, group, origin);
  return true;
}

void ImpressionJoin::SetResults(PendingRequest* r, const ResultsEvent& e,
                                uint32_t group, EventOrigin origin) {
  r->has_results = true;
  r->group = group;
  r->unit_hash = e.unit_hash;
  r->covariate = e.covariate;
  r->SetFields(e.fields);
  r->query_id.assign(e.query_id);  // For the query movers.
  r->interleaving = e.interleaving;
  r->teams.assign(e.teams.begin(), e.teams.end());
  r->served_ms = e.timestamp_ms;
  r->results_origin = origin;
  r->docs.clear();
  r->doc_ends.clear();
  for (std::string_view doc : e.doc_ids) {
    r->docs.append(doc);
    r->doc_ends.push_back(static_cast<uint32_t>(r->docs.size()));
  }
  store_.Shard(r->shard).Schedule(r, SatAdd(e.timestamp_ms, window_ms_));
}

bool ImpressionJoin::OnJudgments(const JudgmentEvent& e, EventOrigin origin) {
  watermark_.Observe(origin.source, e.timestamp_ms);
  const bool retained = AcceptJudgments(e, origin);
  ProcessDueIn(origin.partition(), FinalizeCause::kWindowClosed);
  return retained;
}

bool ImpressionJoin::AcceptJudgments(const JudgmentEvent& e,
                                     EventOrigin origin) {
  const uint64_t hash = HashBytes(e.request_id);
  const int32_t shard = origin.partition();
  PendingStore& store = store_.Shard(shard);
  PendingRequest* r = store.Find(e.request_id, hash);
  // The last moment a results event claiming it can be stamped.
  const int64_t claimable_until = SatAdd(e.timestamp_ms, early_ms_);
  if (r == nullptr) {
    if (origin.replayed && SatAdd(claimable_until, window_ms_) <
                               watermark_.restored(origin.source)) {
      // Any request it can belong to closed before the previous owner's
      // last commit, which reflected it.
      ++counters_.replayed;
      ++counters_.replayed_judgments;
      return false;
    }
    if (claimable_until < watermark_.value(shard)) {
      // No results event on time can claim it any more, and none pending
      // does (its request was finalized, or never served).
      counters_.late_judgments += static_cast<int64_t>(e.judgments.size());
      return false;
    }
    if (const std::optional<int64_t> served = finalized_.Find(hash);
        served.has_value() && e.timestamp_ms >= SatSub(*served, early_ms_) &&
        e.timestamp_ms <= SatAdd(*served, window_ms_)) {
      // Its request would have claimed it, but was scored already.
      counters_.judgments_after_finalization +=
          static_cast<int64_t>(e.judgments.size());
      return false;
    }
    MakeRoom();
    r = store.Create(e.request_id, hash);
    r->shard = shard;
  }
  if (!r->has_results) {
    store.Schedule(r, std::max(r->deadline_ms, claimable_until));
  }
  AddRecords(r, e, origin);
  return true;
}

void ImpressionJoin::AddRecords(PendingRequest* r, const JudgmentEvent& e,
                                EventOrigin origin) {
  const size_t limit = static_cast<size_t>(
      std::max<int64_t>(0, config_.max_judgments_per_request));
  for (const Judgment& j : e.judgments) {
    if (r->records.size() >= limit) {
      ++counters_.over_limit_judgments;
      continue;
    }
    const uint32_t begin = static_cast<uint32_t>(r->judged_docs.size());
    r->judged_docs.append(j.doc_id);
    r->records.push_back(JudgmentRecord{
        begin, static_cast<uint32_t>(r->judged_docs.size()), e.timestamp_ms,
        j.grade.value_or(0), !j.grade.has_value(), origin.replayed,
        j.click_excluded, static_cast<int8_t>(j.judge), j.claimed_position,
        j.impression});
  }
  r->origins.push_back(origin);
}

void ImpressionJoin::MakeRoom() {
  if (static_cast<int64_t>(store_.size()) < config_.max_pending_requests) {
    return;
  }
  if (PendingRequest* oldest = store_.PeekEarliest()) {
    Finalize(oldest, FinalizeCause::kEvicted);
  }
}

void ImpressionJoin::ProcessDueIn(int32_t shard, FinalizeCause cause) {
  PendingStore* store = store_.Find(shard);
  if (store == nullptr) return;
  // A window [.., deadline] closes once its shard's watermark is past it.
  const int64_t limit = SatSub(watermark_.closing(shard), 1);
  while (PendingRequest* r = store->PeekDue(limit)) Finalize(r, cause);
}

void ImpressionJoin::Finalize(PendingRequest* r, FinalizeCause cause) {
  if (cause == FinalizeCause::kEvicted) ++counters_.evicted;
  // A query record without hits is ranked by its impressions; with none
  // in its window there is no list to score.
  const bool by_impressions = r->has_results && r->num_docs() == 0;
  if (by_impressions && RankByImpressions(r) == 0) {
    ++counters_.unranked_requests;
  }
  if (!r->has_results || r->num_docs() == 0) {
    for (const JudgmentRecord& rec : r->records) CountUnclaimed(rec);
  } else {
    if (by_impressions) ++counters_.ranked_by_impressions;
    const uint64_t hash = HashBytes(r->key);
    finalized_.Prefetch(hash);
    Combine(*r, by_impressions);
    ++counters_.finalized;
    if (r->results_origin.maybe_counted) ++counters_.reprocessed;
    FinalizedRequest f;
    f.request_id = r->key;
    f.group = r->group;
    f.unit_hash = r->unit_hash;
    f.covariate = r->covariate;
    f.fields = r->fields();
    f.served_ms = r->served_ms;
    f.closed_ms = SatAdd(r->served_ms, window_ms_);
    f.cause = cause;
    f.ranked = ranked_;
    f.judged = judged_;
    f.judges = judge_grades_;
    f.clicks = clicks_differ_ ? std::span<const metrics::Grade>(clicks_)
                              : std::span<const metrics::Grade>(ranked_);
    f.first_click_delay_ms =
        first_click_ms_ == INT64_MAX
            ? -1
            : std::max<int64_t>(0, first_click_ms_ - r->served_ms);
    f.interleaving = r->interleaving;
    f.teams = r->teams;
    f.shard = r->shard;
    f.query_id = r->query_id;
    listener_->OnFinalized(f);
    finalized_.Remember(hash, r->served_ms);
  }
  Release(r);
}

void ImpressionJoin::CountUnclaimed(const JudgmentRecord& rec) {
  if (rec.replayed) {
    ++counters_.replayed;
    ++counters_.replayed_judgments;
  } else {
    ++counters_.orphaned_judgments;
  }
}

int32_t ImpressionJoin::ServedRank(const PendingRequest& r,
                                   std::string_view doc) {
  if (r.num_docs() <= kIndexDocsAbove) return r.FindDoc(doc);
  if (!doc_index_built_) {
    doc_index_built_ = true;
    doc_index_.Clear(r.num_docs());
    // The first place of a doc served twice, as FindDoc's scan finds it.
    for (size_t i = 0; i < r.num_docs(); ++i) {
      (void)doc_index_.Insert(r.doc(i), static_cast<uint32_t>(i));
    }
  }
  const uint32_t* rank = doc_index_.Find(doc);
  return rank == nullptr ? -1 : static_cast<int32_t>(*rank);
}

bool ImpressionJoin::InWindow(const PendingRequest& r,
                              const JudgmentRecord& rec) const {
  return rec.time_ms >= SatSub(r.served_ms, early_ms_) &&
         rec.time_ms <= SatAdd(r.served_ms, window_ms_);
}

int32_t ImpressionJoin::PositionBase(const PendingRequest& r) const {
  if (position_base_ != config::kPositionBaseAuto) return position_base_;
  // Position 0 (claimed_position 1) exists only where counting starts at 0.
  for (const JudgmentRecord& rec : r.records) {
    if (rec.claimed_position == 1 && InWindow(r, rec)) return 0;
  }
  return 1;
}

size_t ImpressionJoin::RankByImpressions(PendingRequest* r) {
  // In position order (none last), then time, then doc: a function of the
  // events, so the daemon and replay build the same list.
  in_window_.clear();
  for (uint32_t i = 0; i < r->records.size(); ++i) {
    if (r->records[i].impression && InWindow(*r, r->records[i])) {
      in_window_.push_back(i);
    }
  }
  const auto key = [&](uint32_t i) {
    const JudgmentRecord& rec = r->records[i];
    const uint32_t position = rec.claimed_position > 0
                                  ? static_cast<uint32_t>(rec.claimed_position)
                                  : UINT32_MAX;
    return std::tuple(position, rec.time_ms, r->judged_doc(rec));
  };
  std::sort(in_window_.begin(), in_window_.end(),
            [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  // A doc shown twice keeps its first place.
  doc_index_.Clear(in_window_.size());
  r->docs.clear();
  r->doc_ends.clear();
  for (uint32_t i : in_window_) {
    const std::string_view doc = r->judged_doc(r->records[i]);
    if (doc_index_.Insert(doc, static_cast<uint32_t>(r->num_docs())) !=
        nullptr) {
      continue;
    }
    r->docs.append(doc);
    r->doc_ends.push_back(static_cast<uint32_t>(r->docs.size()));
  }
  return r->num_docs();
}

void ImpressionJoin::Combine(const PendingRequest& r, bool by_impressions) {
  doc_index_built_ = false;  // Its keys are views into the last request.
  in_window_.clear();
  const int32_t base = PositionBase(r);
  for (uint32_t i = 0; i < r.records.size(); ++i) {
    const JudgmentRecord& rec = r.records[i];
    if (!InWindow(r, rec)) {
      CountUnclaimed(rec);
    } else if (rec.impression) {
      // Shown, not judged: it ranked the list, or the hits did.
      if (!by_impressions) ++counters_.ignored_impressions;
    } else {
      in_window_.push_back(i);
      // The rank the event claims against where the doc was served (a
      // client logging positions off by one, or from another list): only
      // a check, the judgment counts for its doc wherever it was.
      if (rec.claimed_position > 0 &&
          ServedRank(r, r.judged_doc(rec)) + 1 != rec.claimed_position - base) {
        ++counters_.position_mismatches;
      }
    }
  }
  // Group the records by doc. A request has a few judgments: moving each
  // doc's records to the front beats sorting by string (2% of the event
  // rate in bench/stream_bench); many of them are sorted instead.
  auto doc_of = [&](uint32_t i) { return r.judged_doc(r.records[i]); };
  if (in_window_.size() > kSortAbove) {
    std::sort(in_window_.begin(), in_window_.end(),
              [&](uint32_t a, uint32_t b) { return doc_of(a) < doc_of(b); });
  }
  ranked_.assign(r.num_docs(), metrics::kUnjudged);
  judged_.clear();
  for (JudgeGrades& g : judge_grades_) {
    g.ranked.assign(r.num_docs(), metrics::kUnjudged);
    g.judged.clear();
  }
  // Excluded kinds in the window make the click grades differ from the
  // relevance grades; otherwise the clicks are the ranked grades. Judges
  // by precedence do too: a click counts whichever judge ranks first.
  const bool precedence = !judge_grades_.empty() &&
                          judge_combine_ == config::JudgeCombine::kPrecedence;
  clicks_differ_ =
      precedence ||
      std::any_of(in_window_.begin(), in_window_.end(),
                  [&](uint32_t i) { return r.records[i].click_excluded; });
  if (clicks_differ_) clicks_.assign(r.num_docs(), metrics::kUnjudged);
  first_click_ms_ = INT64_MAX;
  for (size_t begin = 0; begin < in_window_.size();) {
    const std::string_view doc = doc_of(in_window_[begin]);
    size_t end = begin + 1;
    if (in_window_.size() > kSortAbove) {
      while (end < in_window_.size() && doc_of(in_window_[end]) == doc) ++end;
    } else {
      end = std::partition(in_window_.begin() + begin + 1, in_window_.end(),
                           [&](uint32_t i) { return doc_of(i) == doc; }) -
            in_window_.begin();
    }
    DocGrade all;
    int32_t served = -1;  // Looked up only when something needs it.
    if (judge_grades_.empty()) {
      all = CombineDoc(r, begin, end, false, kAnyJudge);
      if (all.judged || clicks_differ_) served = ServedRank(r, doc);
    } else {
      served = ServedRank(r, doc);
      all = CombineJudges(r, begin, end, served, precedence);
    }
    const int32_t rank = all.judged ? served : -1;
    if (all.judged) {
      judged_.push_back(all.grade);
      if (rank >= 0) ranked_[rank] = all.grade;
    }
    const DocGrade click =
        clicks_differ_ ? CombineDoc(r, begin, end, true, kAnyJudge) : all;
    if (clicks_differ_ && click.judged) {
      const int32_t click_rank = served;
      if (click_rank >= 0) {
        clicks_[click_rank] = click.grade;
        first_click_ms_ = std::min(first_click_ms_, click.first_click_ms);
      }
    } else if (!clicks_differ_ && rank >= 0) {
      first_click_ms_ = std::min(first_click_ms_, click.first_click_ms);
    }
    begin = end;
  }
}

ImpressionJoin::DocGrade ImpressionJoin::CombineJudges(const PendingRequest& r,
                                                       size_t begin, size_t end,
                                                       int32_t served,
                                                       bool precedence) {
  DocGrade all;
  if (!precedence) all = CombineDoc(r, begin, end, false, kAnyJudge);
  for (size_t j = 0; j < judge_grades_.size(); ++j) {
    const DocGrade own = CombineDoc(r, begin, end, false, static_cast<int>(j));
    if (!own.judged) continue;
    judge_grades_[j].judged.push_back(own.grade);
    if (served >= 0) judge_grades_[j].ranked[served] = own.grade;
    if (precedence && !all.judged) all = own;
  }
  return all;
}

ImpressionJoin::DocGrade ImpressionJoin::CombineDoc(const PendingRequest& r,
                                                    size_t begin, size_t end,
                                                    bool clicks_only,
                                                    int judge) const {
  // Which of a doc's records wins below does not depend on their order.
  // A withdrawal removes every judgment stamped at or before it (of the
  // same judge, when one is asked for).
  const auto skip = [&](const JudgmentRecord& rec) {
    return (clicks_only && rec.click_excluded) ||
           (judge != kAnyJudge && rec.judge != judge);
  };
  int64_t withdrawn_until = INT64_MIN;
  for (size_t k = begin; k < end; ++k) {
    const JudgmentRecord& rec = r.records[in_window_[k]];
    if (skip(rec)) continue;
    if (rec.withdraws) withdrawn_until = std::max(withdrawn_until, rec.time_ms);
  }
  const bool take_max = config_.combine == config::CombineRule::kMax;
  DocGrade out;
  int64_t grade_time = INT64_MIN;
  for (size_t k = begin; k < end; ++k) {
    const JudgmentRecord& rec = r.records[in_window_[k]];
    if (skip(rec)) continue;
    if (rec.withdraws || rec.time_ms <= withdrawn_until) continue;
    // kLast: the latest event time wins, the higher grade on ties.
    const bool better =
        !out.judged ||
        (take_max ? rec.grade > out.grade
                  : rec.time_ms > grade_time ||
                        (rec.time_ms == grade_time && rec.grade > out.grade));
    if (better) {
      out.grade = rec.grade;
      grade_time = rec.time_ms;
      out.judged = true;
    }
    if (!rec.click_excluded && rec.grade >= click_threshold_) {
      out.first_click_ms = std::min(out.first_click_ms, rec.time_ms);
    }
  }
  // A doc whose combined grade is no click (a later label below the
  // threshold, with combine: last) has no click time either.
  if (!out.judged || out.grade < click_threshold_) {
    out.first_click_ms = INT64_MAX;
  }
  return out;
}

void ImpressionJoin::DiscardReplayed(PendingRequest* r) {
  counters_.replayed += static_cast<int64_t>(r->records.size());
  counters_.replayed_judgments += static_cast<int64_t>(r->records.size());
  Release(r);
}

void ImpressionJoin::Release(PendingRequest* r) {
  // A request restored from a checkpoint retains no results event.
  if (r->has_results && r->results_origin.source >= 0) {
    listener_->OnReleased(r->results_origin);
  }
  for (const EventOrigin& o : r->origins) listener_->OnReleased(o);
  store_.Release(r);
}

void ImpressionJoin::FinishAll() {
  while (PendingRequest* r = store_.PeekEarliest()) {
    Finalize(r, FinalizeCause::kEndOfInput);
  }
}

void ImpressionJoin::DropPartitions(std::span<const int32_t> partitions) {
  auto revoked = [&](const EventOrigin& o) {
    return std::find(partitions.begin(), partitions.end(), o.source) !=
           partitions.end();
  };
  std::vector<PendingRequest*> dropped;
  store_.ForEach([&](PendingRequest& r) {
    if ((r.has_results && revoked(r.results_origin)) ||
        std::any_of(r.origins.begin(), r.origins.end(), revoked)) {
      dropped.push_back(&r);
    }
  });
  for (PendingRequest* r : dropped) store_.Release(r);
  for (int32_t source : partitions) watermark_.RemoveSource(source);
  counters_.dropped_on_rebalance += static_cast<int64_t>(dropped.size());
}

}  // namespace rankwatch::stream
