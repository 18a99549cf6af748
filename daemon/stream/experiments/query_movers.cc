#include "daemon/stream/experiments/query_movers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <utility>

#include "base/string_index.h"
#include "daemon/stream/experiments/experiments.h"

namespace rankwatch::stream {

namespace {

constexpr uint32_t kMagic = 0x514d5631;  // "QMV1"

// A tracked query of one arm, summed over shards.
struct MergedQuery {
  std::string query;
  int64_t count = 0;
  int64_t error = 0;
  std::vector<metrics::RunningStats> series;
};

int32_t IndexOf(const std::vector<std::string>& arms,
                std::string_view variant) {
  const auto at = std::find(arms.begin(), arms.end(), variant);
  return at == arms.end() ? kNoArm : static_cast<int32_t>(at - arms.begin());
}

}  // namespace

QueryMovers::QueryMovers(
    const std::vector<config::ExperimentConfig>* experiments,
    const Aggregator* aggregator, int32_t capacity, double level)
    : experiments_(experiments),
      aggregator_(aggregator),
      capacity_(std::max(capacity, 0)) {
  options_.level = level;
  const std::vector<SeriesSpec>& series = aggregator_->series();
  for (size_t s = 0; s < series.size(); ++s) {
    const config::SeriesRef ref = RefOf(series[s]);
    for (const config::ExperimentConfig& e : *experiments_) {
      if (std::find(e.primary.begin(), e.primary.end(), ref) !=
              e.primary.end() &&
          std::find(tracked_.begin(), tracked_.end(), s) == tracked_.end()) {
        tracked_.push_back(s);
      }
    }
  }
  values_.resize(tracked_.size());
  for (const config::ExperimentConfig& e : *experiments_) {
    std::vector<std::string> variants = {e.baseline};
    variants.insert(variants.end(), e.treatments.begin(), e.treatments.end());
    for (const std::string& v : variants) {
      if (std::find(arms_.begin(), arms_.end(), v) == arms_.end()) {
        arms_.push_back(v);
      }
    }
  }
}

int32_t QueryMovers::ArmIndex(std::string_view variant) const {
  return IndexOf(arms_, variant);
}

int32_t QueryMovers::ArmOf(uint32_t group) {
  if (group >= group_arm_.size()) group_arm_.resize(group + 1, kUnknownArm);
  int32_t& arm = group_arm_[group];
  if (arm == kUnknownArm) arm = ArmIndex(aggregator_->variant(group));
  return arm;
}

QueryMovers::Shard& QueryMovers::ShardAt(int32_t shard) {
  const size_t index = static_cast<size_t>(std::max(shard, 0));
  if (index >= shards_.size()) shards_.resize(index + 1);
  if (!shards_[index]) {
    auto s = std::make_unique<Shard>();
    const int32_t series = static_cast<int32_t>(tracked_.size());
    for (size_t a = 0; a < arms_.size(); ++a) {
      s->summaries.push_back(
          std::make_unique<metrics::QuerySummary>(capacity_, series));
    }
    s->lists.assign(arms_.size(), 0);
    shards_[index] = std::move(s);
  }
  return *shards_[index];
}

void QueryMovers::Add(uint32_t group, std::string_view query,
                      std::span<const double> values, int32_t shard) {
  if (capacity_ == 0) return;
  const int32_t arm = ArmOf(group);
  if (arm < 0) return;
  Shard& s = ShardAt(shard);
  ++s.lists[static_cast<size_t>(arm)];
  if (query.empty()) return;
  for (size_t i = 0; i < tracked_.size(); ++i) {
    values_[i] = tracked_[i] < values.size() ? values[tracked_[i]] : NAN;
  }
  s.summaries[static_cast<size_t>(arm)]->Add(query, HashBytes(query), values_);
}

void QueryMovers::EncodeShard(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kMagic);
  const std::vector<SeriesSpec>& series = aggregator_->series();
  out->Varint(tracked_.size());
  for (size_t s : tracked_) out->String(series[s].state_key);
  const Shard* s = shard >= 0 && static_cast<size_t>(shard) < shards_.size()
                       ? shards_[static_cast<size_t>(shard)].get()
                       : nullptr;
  out->Varint(s == nullptr ? 0 : arms_.size());
  if (s == nullptr) return;
  for (size_t a = 0; a < arms_.size(); ++a) {
    out->String(arms_[a]);
    out->Varint(static_cast<uint64_t>(s->lists[a]));
    const metrics::QuerySummary& summary = *s->summaries[a];
    out->Varint(static_cast<uint64_t>(summary.total()));
    out->Varint(summary.entries().size());
    for (const metrics::QuerySummary::Entry& e : summary.entries()) {
      out->String(e.query);
      out->Varint(static_cast<uint64_t>(e.count));
      out->Varint(static_cast<uint64_t>(e.error));
      for (const metrics::RunningStats& r : e.series) {
        out->Varint(static_cast<uint64_t>(r.count()));
        out->Double(r.mean());
        out->Double(r.m2());
        out->Double(r.sum());
        out->Double(r.sum_of_squares());
      }
    }
  }
}

Status QueryMovers::DecodeShard(int32_t shard, ByteReader* in,
                                const CheckpointLimits& limits) {
  if (shard < 0) return Status::InvalidArgument("negative shard");
  if (in->Fixed32() != kMagic) in->Fail("not a query movers record");
  const std::vector<SeriesSpec>& series = aggregator_->series();
  const uint64_t num_series = in->Count(1);
  std::vector<int> to(num_series, -1);  // Record series -> series here.
  for (uint64_t i = 0; i < num_series && in->ok(); ++i) {
    const std::string_view key = in->String();
    for (size_t t = 0; t < tracked_.size(); ++t) {
      if (series[tracked_[t]].state_key == key) to[i] = static_cast<int>(t);
    }
  }
  DropShard(shard);
  Shard& s = ShardAt(shard);
  const uint64_t num_arms = in->Count(3);
  std::vector<metrics::RunningStats> stats(tracked_.size());
  for (uint64_t a = 0; a < num_arms && in->ok(); ++a) {
    const int32_t arm = ArmIndex(in->String());
    const int64_t lists = static_cast<int64_t>(in->Varint());
    const int64_t total = static_cast<int64_t>(in->Varint());
    CheckCount(in, lists, "a list count");
    CheckCount(in, total, "a query count");
    const uint64_t entries = in->Count(3 + num_series * 33);
    if (arm >= 0) {
      s.lists[static_cast<size_t>(arm)] = lists;
      s.summaries[static_cast<size_t>(arm)]->set_total(total);
    }
    for (uint64_t e = 0; e < entries && in->ok(); ++e) {
      // A query id becomes a label of /metrics: bounded as a live one.
      const std::string_view query =
          in->Text(limits.max_id_length, "a query id");
      const int64_t count = static_cast<int64_t>(in->Varint());
      const int64_t error = static_cast<int64_t>(in->Varint());
      CheckCount(in, count, "a query count");
      CheckCount(in, error, "a query count");
      std::fill(stats.begin(), stats.end(), metrics::RunningStats());
      for (uint64_t i = 0; i < num_series; ++i) {
        const int64_t n = static_cast<int64_t>(in->Varint());
        const double mean = in->Double(), m2 = in->Double();
        const double sum = in->Double(), squares = in->Double();
        CheckCount(in, n, "a series count");
        if (to[i] >= 0) {
          stats[static_cast<size_t>(to[i])] =
              metrics::RunningStats::FromState(n, mean, m2, sum, squares);
        }
      }
      // Entries are written in no order: a smaller capacity keeps some.
      if (arm >= 0 && in->ok()) {
        (void)s.summaries[static_cast<size_t>(arm)]->Restore(
            query, HashBytes(query), count, error, stats);
      }
    }
  }
  if (!in->ok()) {
    DropShard(shard);
    return Status::InvalidArgument("query movers of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  return Status::Ok();
}

void QueryMovers::DropShard(int32_t shard) {
  if (shard >= 0 && static_cast<size_t>(shard) < shards_.size()) {
    shards_[static_cast<size_t>(shard)].reset();
  }
}

namespace {

// An arm's summaries (one per shard holding it) merged: a query's counts,
// error bounds and statistics summed; the `capacity` largest counts kept.
std::unique_ptr<metrics::QuerySummary> MergeArm(
    std::span<const metrics::QuerySummary* const> summaries, int32_t capacity,
    size_t num_series) {
  std::map<uint64_t, MergedQuery> merged;
  int64_t total = 0;
  for (const metrics::QuerySummary* summary : summaries) {
    total += summary->total();
    for (const auto& e : summary->entries()) {
      MergedQuery& m = merged[e.hash];
      if (m.series.empty()) {
        m.query = e.query;
        m.series.resize(num_series);
      }
      m.count += e.count;
      m.error += e.error;
      for (size_t s = 0; s < num_series; ++s) m.series[s].Merge(e.series[s]);
    }
  }
  std::vector<std::pair<uint64_t, const MergedQuery*>> order;
  for (const auto& [hash, m] : merged) order.emplace_back(hash, &m);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->count != b.second->count
               ? a.second->count > b.second->count
               : a.second->query < b.second->query;
  });
  auto out = std::make_unique<metrics::QuerySummary>(
      std::max(capacity, 1), static_cast<int32_t>(num_series));
  for (const auto& [hash, m] : order) {
    if (!out->Restore(m->query, hash, m->count, m->error, m->series)) break;
  }
  out->set_total(total);
  return out;
}

// The movers of series `local` (an index into the tracked series) between
// two arms' merged summaries.
std::vector<metrics::QueryMover> MoversBetween(
    const metrics::QuerySummary& baseline, int64_t baseline_lists,
    const metrics::QuerySummary& treated, int64_t treatment_lists, size_t local,
    const metrics::MoverOptions& options) {
  std::vector<metrics::MoverInput> in;
  for (const auto& e : baseline.entries()) {
    const metrics::QuerySummary::Entry* other = treated.Find(e.hash);
    in.push_back(
        {e.query, e.series[local],
         other == nullptr ? metrics::RunningStats() : other->series[local]});
  }
  for (const auto& e : treated.entries()) {
    if (baseline.Find(e.hash) != nullptr) continue;
    in.push_back({e.query, metrics::RunningStats(), e.series[local]});
  }
  return metrics::RankMovers(in, baseline_lists, treatment_lists, options);
}

}  // namespace

std::unique_ptr<metrics::QuerySummary> QueryMovers::Merged(
    size_t arm, int64_t* lists) const {
  std::vector<const metrics::QuerySummary*> summaries;
  *lists = 0;
  for (const auto& shard : shards_) {
    if (!shard) continue;
    *lists += shard->lists[arm];
    summaries.push_back(shard->summaries[arm].get());
  }
  return MergeArm(summaries, capacity_, tracked_.size());
}

std::vector<metrics::QueryMover> QueryMovers::Movers(
    size_t experiment, std::string_view treatment, size_t series,
    const metrics::MoverOptions& options) const {
  if (experiment >= experiments_->size()) return {};
  const int32_t b = ArmIndex((*experiments_)[experiment].baseline);
  const int32_t t = ArmIndex(treatment);
  const auto at = std::find(tracked_.begin(), tracked_.end(), series);
  if (b < 0 || t < 0 || at == tracked_.end()) return {};
  int64_t baseline_lists = 0, treatment_lists = 0;
  const auto baseline = Merged(static_cast<size_t>(b), &baseline_lists);
  const auto treated = Merged(static_cast<size_t>(t), &treatment_lists);
  return MoversBetween(*baseline, baseline_lists, *treated, treatment_lists,
                       static_cast<size_t>(at - tracked_.begin()), options);
}

void QueryMovers::CopyCounts(QueryMoversCounts* out) const {
  out->arms = arms_;
  out->tracked = tracked_;
  out->capacity = capacity_;
  out->options = options_;
  out->shards.clear();
  for (const auto& shard : shards_) {
    if (!shard) continue;
    QueryMoversCounts::Shard& copy = out->shards.emplace_back();
    copy.lists = shard->lists;
    for (const auto& summary : shard->summaries) {
      copy.summaries.push_back(*summary);
    }
  }
}

std::vector<metrics::QueryMover> QueryMoversCounts::Movers(
    std::string_view baseline, std::string_view treatment,
    size_t series) const {
  const int32_t b = IndexOf(arms, baseline);
  const int32_t t = IndexOf(arms, treatment);
  const auto at = std::find(tracked.begin(), tracked.end(), series);
  if (b < 0 || t < 0 || at == tracked.end()) return {};
  std::vector<const metrics::QuerySummary*> arm_summaries[2];
  int64_t lists[2] = {0, 0};
  for (const Shard& shard : shards) {
    for (int side = 0; side < 2; ++side) {
      const size_t arm = static_cast<size_t>(side == 0 ? b : t);
      if (arm >= shard.summaries.size()) continue;
      lists[side] += shard.lists[arm];
      arm_summaries[side].push_back(&shard.summaries[arm]);
    }
  }
  const auto merged_baseline =
      MergeArm(arm_summaries[0], capacity, tracked.size());
  const auto merged_treatment =
      MergeArm(arm_summaries[1], capacity, tracked.size());
  return MoversBetween(*merged_baseline, lists[0], *merged_treatment, lists[1],
                       static_cast<size_t>(at - tracked.begin()), options);
}

std::vector<int32_t> QueryMovers::HeldShards() const {
  std::vector<int32_t> held;
  for (size_t s = 0; s < shards_.size(); ++s) {
    if (shards_[s]) held.push_back(static_cast<int32_t>(s));
  }
  return held;
}

size_t QueryMovers::bytes() const {
  size_t b = sizeof(*this);
  for (const auto& shard : shards_) {
    if (!shard) continue;
    for (const auto& s : shard->summaries) b += s->bytes();
  }
  return b;
}

void WriteQueryMoversJson(std::span<const metrics::QueryMover> movers,
                          MoverInterval interval, JsonWriter* out) {
  out->BeginArray();
  for (size_t i = 0; i < movers.size() && i < kQueryMoversInJson; ++i) {
    const metrics::QueryMover& m = movers[i];
    out->BeginObject();
    out->Key("query");
    out->String(m.query);
    out->Key("baseline_count");
    out->Int(m.baseline_count);
    out->Key("treatment_count");
    out->Int(m.treatment_count);
    const std::pair<const char*, double> numbers[] = {
        {"baseline_mean", m.baseline_mean},
        {"treatment_mean", m.treatment_mean},
        {"difference", m.difference},
        {"share", m.share},
        {"contribution", m.contribution}};
    for (const auto& [key, value] : numbers) {
      out->Key(key);
      out->Double(value);
    }
    if (interval == MoverInterval::kInclude) {
      // An untested query has no interval: null, as its p-values.
      out->Key("ci_lower");
      out->Double(m.tested ? m.welch.interval.lower : NAN);
      out->Key("ci_upper");
      out->Double(m.tested ? m.welch.interval.upper : NAN);
    }
    out->Key("p_value");
    out->Double(m.p_value);
    out->Key("p_value_bh");
    out->Double(m.p_value_bh);
    out->Key("tested");
    out->Bool(m.tested);
    out->Key("significant");
    out->Bool(m.significant);
    out->EndObject();
  }
  out->EndArray();
}

}  // namespace rankwatch::stream
