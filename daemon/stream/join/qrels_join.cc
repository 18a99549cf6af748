#include "daemon/stream/join/qrels_join.h"

#include <algorithm>
#include <bit>

#include "base/saturating.h"

namespace rankwatch::stream {

namespace {

// Recent-id memory is bounded like the pending state, and capped so that a
// huge max_pending_requests does not preallocate gigabytes.
constexpr size_t kMaxRecentIds = size_t{1} << 22;

template <typename Label>
bool DocLess(const Label& a, std::string_view b) {
  return std::string_view(a.doc_id) < b;
}

// (doc, judge) order: a doc's labels sit together, its judges in order.
template <typename Label>
bool LabelLess(const Label& a, const std::pair<std::string_view, int8_t>& b) {
  const int c = std::string_view(a.doc_id).compare(b.first);
  return c < 0 || (c == 0 && a.judge < b.second);
}

}  // namespace

RecentIds::RecentIds(size_t capacity)
    : ring_(std::max<size_t>(1, capacity)),
      set_(std::bit_ceil(std::max<size_t>(16, capacity * 2)), 0),
      mask_(set_.size() - 1) {}

bool RecentIds::Contains(uint64_t h) const {
  for (size_t i = h & mask_; set_[i] != 0; i = (i + 1) & mask_) {
    if (set_[i] == h) return true;
  }
  return false;
}

void RecentIds::Erase(uint64_t h) {
  size_t hole = h & mask_;
  while (set_[hole] != h) {
    if (set_[hole] == 0) return;
    hole = (hole + 1) & mask_;
  }
  for (size_t j = (hole + 1) & mask_; set_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = set_[j] & mask_;
    const bool in_range =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!in_range) {
      set_[hole] = set_[j];
      hole = j;
    }
  }
  set_[hole] = 0;
}

bool RecentIds::Insert(uint64_t hash) {
  const uint64_t h = hash == 0 ? 1 : hash;
  if (Contains(h)) return false;
  if (count_ == ring_.size()) {
    Erase(ring_[head_]);
  } else {
    ++count_;
  }
  ring_[head_] = h;
  head_ = (head_ + 1) % ring_.size();
  size_t i = h & mask_;
  while (set_[i] != 0) i = (i + 1) & mask_;
  set_[i] = h;
  return true;
}

QrelsJoin::QrelsJoin(const config::JoinConfig& config, const Clock* clock,
                     JoinListener* listener)
    : WatermarkedJoin(config, clock),
      config_(config),
      delay_ms_(config.qrels_delay.count()),
      listener_(listener),
      recent_(std::min<size_t>(static_cast<size_t>(std::max<int64_t>(
                                   1, config.max_pending_requests)),
                               kMaxRecentIds)) {}

Status QrelsJoin::Preload(const trec::Qrels& qrels) {
  for (const trec::QueryQrels& q : qrels.queries()) {
    const auto docnos = qrels.docnos(q);
    const auto grades = qrels.grades(q);
    for (size_t i = 0; i < docnos.size(); ++i) {
      // With judges, the file's labels are judges.default's (the loader
      // requires one).
      if (!Update(q.qid, docnos[i], static_cast<int8_t>(default_judge_),
                  grades[i], INT64_MIN)) {
        return Status::ResourceExhausted(
            "qrels file '" + qrels.name() + "' has more than " +
            std::to_string(config_.max_table_entries) +
            " judgments (join.max_table_entries)");
      }
    }
  }
  return Status::Ok();
}

QrelsJoin::QueryTable* QrelsJoin::FindTable(std::string_view query_id) {
  const uint32_t* i = table_index_.Find(query_id);
  return i == nullptr ? nullptr : &tables_[*i];
}

QrelsJoin::QueryTable* QrelsJoin::FindOrCreateTable(std::string_view qid) {
  if (QueryTable* t = FindTable(qid)) return t;
  tables_.push_back(QueryTable{std::string(qid), {}});
  (void)table_index_.Insert(tables_.back().query_id,
                            static_cast<uint32_t>(tables_.size() - 1));
  return &tables_.back();
}

bool QrelsJoin::Update(std::string_view query_id, std::string_view doc_id,
                       int8_t judge, std::optional<metrics::Grade> grade,
                       int64_t time_ms) {
  // A withdrawal of an unknown label is kept too: an older label read
  // after it must not come back.
  QueryTable* t = FindOrCreateTable(query_id);
  // What the doc brought to the judges' agreement leaves, and comes back
  // as it is after the update (a no-op without two judges).
  TallyDoc(*t, doc_id, -1);
  struct Retally {
    QrelsJoin* join;
    QueryTable* table;
    std::string_view doc;
    ~Retally() { join->TallyDoc(*table, doc, 1); }
  } retally{this, t, doc_id};
  auto it = std::lower_bound(t->docs.begin(), t->docs.end(),
                             std::make_pair(doc_id, judge), LabelLess<Label>);
  const bool found =
      it != t->docs.end() && it->doc_id == doc_id && it->judge == judge;
  if (found) {
    Label& l = *it;
    // Latest time wins; on ties a withdrawal, then the higher grade.
    const bool newer =
        time_ms > l.time_ms ||
        (time_ms == l.time_ms &&
         (!grade ? !l.withdrawn : !l.withdrawn && *grade > l.grade));
    if (!newer) return true;
    if (l.withdrawn != !grade) {
      const int64_t d = grade ? 1 : -1;
      entries_ += d;
      tombstones_ -= d;
      t->live += d;
    }
    l.time_ms = time_ms;
    l.withdrawn = !grade;
    l.grade = grade.value_or(0);
    return true;
  }
  if (entries_ + tombstones_ >= config_.max_table_entries) return false;
  t->docs.insert(it, Label{std::string(doc_id), time_ms, grade.value_or(0),
                           !grade, judge});
  ++(grade ? entries_ : tombstones_);
  if (grade) ++t->live;
  return true;
}

bool QrelsJoin::OnJudgments(const JudgmentEvent& e, EventOrigin origin) {
  watermark_.Observe(origin.source, e.timestamp_ms);
  for (const Judgment& j : e.judgments) {
    if (!Update(e.query_id, j.doc_id, static_cast<int8_t>(j.judge), j.grade,
                e.timestamp_ms)) {
      ++counters_.table_full;
    }
  }
  ProcessDue(FinalizeCause::kWindowClosed);
  // The table is rebuilt from the judgments topic on every start, so these
  // events never hold back a commit.
  return false;
}

bool QrelsJoin::OnResults(const ResultsEvent& e, uint32_t group,
                          EventOrigin origin) {
  watermark_.Observe(origin.source, e.timestamp_ms);
  bool retained = false;
  if (!e.request_id.empty() && !recent_.Insert(HashBytes(e.request_id))) {
    ++counters_.duplicate_results;
  } else if (delay_ms_ <= 0 || SatAdd(e.timestamp_ms, delay_ms_) <
                                   watermark_.value(origin.partition())) {
    Score(e.request_id, e.query_id, group, e.unit_hash, e.covariate, e.fields,
          e.timestamp_ms, e.doc_ids, FinalizeCause::kWindowClosed,
          origin.partition());
  } else {
    // Keyed by request_id when there is one; otherwise by a key that no
    // JSON string produces (a NUL byte then a counter).
    std::string_view key = e.request_id;
    if (key.empty()) {
      key_scratch_.assign(1, '\0');
      key_scratch_ += std::to_string(next_synthetic_key_++);
      key = key_scratch_;
    }
    const uint64_t hash = HashBytes(key);
    if (static_cast<int64_t>(delayed_.size()) >= config_.max_pending_requests) {
      if (PendingRequest* oldest = delayed_.PeekEarliest()) {
        ++counters_.evicted;
        ScoreDelayed(oldest, FinalizeCause::kEvicted);
      }
    }
    PendingStore& store = delayed_.Shard(origin.partition());
    PendingRequest* r = store.Find(key, hash);
    if (r == nullptr) {
      r = store.Create(key, hash);
      r->shard = origin.partition();
    }
    r->has_results = true;
    r->query_id.assign(e.query_id);
    r->group = group;
    r->unit_hash = e.unit_hash;
    r->covariate = e.covariate;
    r->SetFields(e.fields);
    r->served_ms = e.timestamp_ms;
    for (std::string_view doc : e.doc_ids) {
      r->docs.append(doc);
      r->doc_ends.push_back(static_cast<uint32_t>(r->docs.size()));
    }
    r->origins.push_back(origin);
    store.Schedule(r, SatAdd(e.timestamp_ms, delay_ms_));
    retained = true;
  }
  ProcessDueIn(origin.partition(), FinalizeCause::kWindowClosed);
  return retained;
}

void QrelsJoin::Score(std::string_view request_id, std::string_view query_id,
                      uint32_t group, uint64_t unit_hash, double covariate,
                      const FieldValues& fields, int64_t served_ms,
                      std::span<const std::string_view> docs,
                      FinalizeCause cause, int32_t shard) {
  const QueryTable* t = FindTable(query_id);
  if (t == nullptr || t->live == 0) {
    ++counters_.unjudged;
    return;
  }
  ranked_.resize(docs.size());
  for (JudgeGrades& g : judge_grades_) {
    g.ranked.assign(docs.size(), metrics::kUnjudged);
    g.judged.clear();
  }
  const Label* const labels = t->docs.data();
  const Label* const labels_end = labels + t->docs.size();
  // The end of the run of labels of the doc at `from`.
  const auto run_end = [&](const Label* from) {
    const Label* to = from + 1;
    while (to != labels_end && to->doc_id == from->doc_id) ++to;
    return to;
  };
  for (size_t i = 0; i < docs.size(); ++i) {
    const Label* it =
        std::lower_bound(labels, labels_end, docs[i], DocLess<Label>);
    const std::optional<metrics::Grade> g =
        it != labels_end && it->doc_id == docs[i]
            ? DocGrade(it, run_end(it), static_cast<int32_t>(i))
            : std::nullopt;
    ranked_[i] = g.value_or(metrics::kUnjudged);
  }
  // Every judged doc of the query, served or not (and each judge's own).
  judged_.clear();
  for (const Label* run = labels; run != labels_end;) {
    const Label* end = run_end(run);
    if (const std::optional<metrics::Grade> g = DocGrade(run, end, -1)) {
      judged_.push_back(*g);
    }
    run = end;
  }
  ++counters_.finalized;
  FinalizedRequest f;
  f.request_id = request_id;
  f.group = group;
  f.unit_hash = unit_hash;
  f.covariate = covariate;
  f.fields = fields;
  f.served_ms = served_ms;
  f.closed_ms = SatAdd(served_ms, std::max<int64_t>(0, delay_ms_));
  f.cause = cause;
  f.ranked = ranked_;
  f.judged = judged_;
  f.judges = judge_grades_;
  f.shard = shard;
  f.query_id = query_id;
  listener_->OnFinalized(f);
}

void QrelsJoin::SetJudges(const config::JudgesConfig& judges) {
  WatermarkedJoin::SetJudges(judges);
  judge_pairs_.assign(metrics::NumPairs(judges.names.size()),
                      metrics::JudgePairCounts{});
  doc_grades_.resize(judges.names.size());
}

void QrelsJoin::TallyDoc(const QueryTable& table, std::string_view doc_id,
                         int64_t sign) {
  if (judge_pairs_.empty()) return;
  std::fill(doc_grades_.begin(), doc_grades_.end(), metrics::kUnjudged);
  auto it = std::lower_bound(table.docs.begin(), table.docs.end(), doc_id,
                             DocLess<Label>);
  for (; it != table.docs.end() && it->doc_id == doc_id; ++it) {
    if (!it->withdrawn && it->judge >= 0 &&
        static_cast<size_t>(it->judge) < doc_grades_.size()) {
      doc_grades_[static_cast<size_t>(it->judge)] = it->grade;
    }
  }
  const size_t n = doc_grades_.size();
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      judge_pairs_[metrics::PairIndex(a, b, n)].Tally(doc_grades_[a],
                                                      doc_grades_[b], sign);
    }
  }
}

std::optional<metrics::Grade> QrelsJoin::DocGrade(const Label* begin,
                                                  const Label* end,
                                                  int32_t rank) {
  // Without judges a doc has one label (judge -1); with judges, one per
  // judge in judge order, so the first live one is the precedence's.
  const bool precedence = judge_combine_ == config::JudgeCombine::kPrecedence;
  const Label* chosen = nullptr;
  for (const Label* l = begin; l != end; ++l) {
    if (l->withdrawn) continue;
    if (l->judge >= 0 && static_cast<size_t>(l->judge) < judge_grades_.size()) {
      JudgeGrades& own = judge_grades_[static_cast<size_t>(l->judge)];
      if (rank >= 0) {
        own.ranked[static_cast<size_t>(rank)] = l->grade;
      } else {
        own.judged.push_back(l->grade);
      }
    }
    // Pooled, as a single table: the latest label, the higher grade on
    // ties.
    const bool better =
        chosen == nullptr ||
        (!precedence &&
         (l->time_ms > chosen->time_ms ||
          (l->time_ms == chosen->time_ms && l->grade > chosen->grade)));
    if (better) chosen = l;
  }
  if (chosen == nullptr) return std::nullopt;
  return chosen->grade;
}

void QrelsJoin::ScoreDelayed(PendingRequest* r, FinalizeCause cause) {
  docs_scratch_.clear();
  for (size_t i = 0; i < r->num_docs(); ++i) docs_scratch_.push_back(r->doc(i));
  const std::string_view request_id =
      !r->key.empty() && r->key[0] == '\0' ? std::string_view() : r->key;
  Score(request_id, r->query_id, r->group, r->unit_hash, r->covariate,
        r->fields(), r->served_ms, docs_scratch_, cause, r->shard);
  for (const EventOrigin& o : r->origins) listener_->OnReleased(o);
  delayed_.Release(r);
}

void QrelsJoin::ProcessDueIn(int32_t shard, FinalizeCause cause) {
  PendingStore* store = delayed_.Find(shard);
  if (store == nullptr) return;
  // A delay [.., served + delay] ends once its shard's watermark is past it.
  const int64_t limit = SatSub(watermark_.closing(shard), 1);
  while (PendingRequest* r = store->PeekDue(limit)) ScoreDelayed(r, cause);
}

void QrelsJoin::FinishAll() {
  while (PendingRequest* r = delayed_.PeekEarliest()) {
    ScoreDelayed(r, FinalizeCause::kEndOfInput);
  }
}

void QrelsJoin::DropPartitions(std::span<const int32_t> partitions) {
  std::vector<PendingRequest*> dropped;
  delayed_.ForEach([&](PendingRequest& r) {
    for (const EventOrigin& o : r.origins) {
      if (std::find(partitions.begin(), partitions.end(), o.source) !=
          partitions.end()) {
        dropped.push_back(&r);
        return;
      }
    }
  });
  for (PendingRequest* r : dropped) delayed_.Release(r);
  for (int32_t source : partitions) watermark_.RemoveSource(source);
  counters_.dropped_on_rebalance += static_cast<int64_t>(dropped.size());
}

}  // namespace rankwatch::stream
