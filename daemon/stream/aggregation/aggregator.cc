#include "daemon/stream/aggregation/aggregator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/duration.h"
#include "base/saturating.h"

namespace rankwatch::stream {

std::vector<SeriesSpec> BuildSeries(
    const std::vector<metrics::Measure>& measures,
    const std::vector<int32_t>& cutoffs,
    const std::vector<config::ResultFieldConfig>& fields) {
  std::vector<int32_t> sorted = cutoffs;
  std::sort(sorted.begin(), sorted.end());
  std::vector<SeriesSpec> series;
  const auto add = [&series](metrics::Measure m, int index, int32_t k,
                             std::string trec, std::string k_label) {
    SeriesSpec s{m, index, k, trec, std::move(k_label), trec};
    s.name = std::string(metrics::MeasureName(m));
    s.label = s.trec_name;
    s.higher_is_better = metrics::HigherIsBetter(m);
    s.quality = metrics::IsQualityMeasure(m);
    series.push_back(std::move(s));
  };
  for (metrics::Measure m : measures) {
    if (metrics::HasCutoffVariant(m)) {
      for (size_t i = 0; i < sorted.size(); ++i) {
        add(m, static_cast<int>(i), sorted[i], metrics::TrecName(m, sorted[i]),
            std::to_string(sorted[i]));
      }
    }
    if (metrics::HasUncutVariant(m)) {
      add(m, -1, 0, metrics::TrecName(m, std::nullopt), "all");
    }
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const config::ResultFieldConfig& f = fields[i];
    // The key holds the path and direction: another path means other
    // values, another direction other verdicts.
    SeriesSpec s{metrics::Measure::kNdcg,
                 -1,
                 0,
                 f.name,
                 "all",
                 "field:" + f.name + "|path=" + f.path +
                     (f.higher_is_better ? "|higher" : "|lower")};
    s.name = f.name;
    s.label = f.name;
    s.field = static_cast<int32_t>(i);
    s.higher_is_better = f.higher_is_better;
    s.mixture_sd = f.mixture_sd;
    series.push_back(std::move(s));
  }
  return series;
}

config::SeriesRef RefOf(const SeriesSpec& s) {
  config::SeriesRef ref;
  if (s.field >= 0) {
    ref.field = s.name;
  } else {
    ref.measure = s.measure;
    ref.cutoff = s.cutoff;
  }
  return ref;
}

Aggregator::Dimension::Dimension(std::vector<std::string> allowed,
                                 int32_t max_values)
    : allow_list_(!allowed.empty()), max_values_(max_values) {
  for (std::string& v : allowed) {
    values_.push_back(std::move(v));
    (void)index_.Insert(values_.back(),
                        static_cast<uint32_t>(values_.size() - 1));
  }
}

uint32_t Aggregator::Dimension::Resolve(std::string_view value,
                                        bool* overflow) {
  *overflow = false;
  if (const uint32_t* i = index_.Find(value)) return *i;
  const bool full =
      allow_list_ || static_cast<int64_t>(values_.size()) >= max_values_;
  if (!full && value != kOther) {
    values_.emplace_back(value);
    const uint32_t i = static_cast<uint32_t>(values_.size() - 1);
    (void)index_.Insert(values_.back(), i);
    return i;
  }
  if (value != kOther) *overflow = true;
  if (other_ == UINT32_MAX) {
    // "other" lives beside the allowed values and does not count against
    // the limit, so the limit is the number of distinct real values.
    values_.emplace_back(kOther);
    other_ = static_cast<uint32_t>(values_.size() - 1);
    (void)index_.Insert(values_.back(), other_);
  }
  return other_;
}

void Aggregator::Dimension::Reserve(std::string_view value) {
  if (allow_list_ || value == kOther || index_.Find(value) != nullptr) return;
  values_.emplace_back(value);
  (void)index_.Insert(values_.back(),
                      static_cast<uint32_t>(values_.size() - 1));
}

void Aggregator::ReserveVariants(std::span<const std::string> variants) {
  for (const std::string& v : variants) dimensions_[0].Reserve(v);
}

Aggregator::Aggregator(const config::AggregationConfig& config,
                       std::vector<SeriesSpec> series)
    : series_(std::move(series)),
      bucket_ms_(std::max<int64_t>(1, config.bucket.count())) {
  span_ms_ = bucket_ms_;
  for (Duration w : config.windows) {
    windows_ms_.push_back(w.count());
    span_ms_ = std::max<int64_t>(span_ms_, w.count());
  }
  dimensions_.emplace_back(config.variants, config.max_variants);
  segment_labels_ = config.segments;
  for (const std::string& label : config.segments) {
    auto it = config.segment_values.find(label);
    dimensions_.emplace_back(it == config.segment_values.end()
                                 ? std::vector<std::string>()
                                 : it->second,
                             config.max_segment_values);
  }
  overflowed_.assign(dimensions_.size(), 0);
}

uint32_t Aggregator::ResolveGroup(
    std::string_view variant,
    std::span<const std::string_view> segment_values) {
  key_scratch_.clear();
  auto append = [&](size_t dim, std::string_view value) {
    bool overflow = false;
    const uint32_t i = dimensions_[dim].Resolve(value, &overflow);
    if (overflow) ++overflowed_[dim];
    char bytes[sizeof(i)];
    std::memcpy(bytes, &i, sizeof(i));
    key_scratch_.append(bytes, sizeof(i));
    return i;
  };
  append(0, variant);
  for (size_t d = 1; d < dimensions_.size(); ++d) {
    const std::string_view v =
        d - 1 < segment_values.size() && !segment_values[d - 1].empty()
            ? segment_values[d - 1]
            : kUnknown;
    append(d, v);
  }
  if (const uint32_t* g = group_index_.Find(key_scratch_)) return *g;

  // A new group: decode its label values from the packed key.
  const uint32_t id = static_cast<uint32_t>(groups_.size());
  group_keys_.push_back(key_scratch_);
  (void)group_index_.Insert(group_keys_.back(), id);
  std::vector<std::string> values;
  for (size_t d = 0; d < dimensions_.size(); ++d) {
    uint32_t i;
    std::memcpy(&i, key_scratch_.data() + d * sizeof(i), sizeof(i));
    values.push_back(dimensions_[d].value(i));
  }
  groups_.push_back(GroupStats{
      values[0], std::vector<std::string>(values.begin() + 1, values.end()), 0,
      0, std::vector<metrics::RunningStats>(series_.size()),
      std::vector<Histogram>(series_.size(), Histogram{}),
      WindowRing(bucket_ms_, span_ms_, series_.size()), FirstClickHistogram{}});
  flow_.push_back(GroupFlow{0, std::vector<GroupFlow::Sums>(series_.size()),
                            std::vector<Histogram>(series_.size(), Histogram{}),
                            FirstClickHistogram{}});
  return id;
}

void FirstClickHistogram::Add(int64_t delay_ms) {
  const double seconds = static_cast<double>(delay_ms) / 1000.0;
  // Prometheus buckets are upper-inclusive (le): lower_bound finds the
  // first bound >= the value.
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(kFirstClickBounds.begin(),
                                           kFirstClickBounds.end(), seconds) -
                          kFirstClickBounds.begin());
  ++counts[bucket];
  ++count;
  sum_seconds += seconds;
}

void FirstClickHistogram::Merge(const FirstClickHistogram& other) {
  for (size_t b = 0; b < counts.size(); ++b) counts[b] += other.counts[b];
  count += other.count;
  sum_seconds += other.sum_seconds;
}

namespace {

void MergeGroup(const GroupStats& from, GroupStats* into) {
  into->requests += from.requests;
  into->without_relevant += from.without_relevant;
  for (size_t s = 0; s < into->all.size() && s < from.all.size(); ++s) {
    into->all[s].Merge(from.all[s]);
    for (size_t b = 0; b < into->histograms[s].size(); ++b) {
      into->histograms[s][b] += from.histograms[s][b];
    }
  }
  into->windows.MergeFrom(from.windows);
  into->first_click.Merge(from.first_click);
}

// Format of one shard's aggregates (inside a versioned checkpoint).
constexpr uint32_t kShardMagic = 0x41475231;  // "AGR1"

}  // namespace

GroupStats Aggregator::NewGroupStats(const GroupStats& labels) const {
  return GroupStats{labels.variant,
                    labels.segment_values,
                    0,
                    0,
                    std::vector<metrics::RunningStats>(series_.size()),
                    std::vector<Histogram>(series_.size(), Histogram{}),
                    WindowRing(bucket_ms_, span_ms_, series_.size()),
                    FirstClickHistogram{}};
}

GroupStats& Aggregator::ShardGroup(int32_t shard, uint32_t group) {
  const size_t index = static_cast<size_t>(std::max(shard, 0));
  if (index >= shards_.size()) shards_.resize(index + 1);
  if (!shards_[index]) shards_[index] = std::make_unique<Shard>();
  std::deque<GroupStats>& groups = shards_[index]->groups;
  while (groups.size() <= group) {
    groups.push_back(NewGroupStats(groups_[groups.size()]));
  }
  return groups[group];
}

void Aggregator::Add(uint32_t group, int64_t time_ms,
                     std::span<const double> values, bool without_relevant,
                     int32_t shard) {
  merged_stale_ = true;
  GroupFlow& flow = flow_[group];
  GroupStats& g = ShardGroup(shard, group);
  ++flow.requests;
  ++g.requests;
  if (without_relevant) ++g.without_relevant;
  if (values.empty()) return;
  // The process's counters and the shard's, in one pass: one bucket each.
  for (size_t s = 0; s < values.size() && s < series_.size(); ++s) {
    const double v = values[s];
    if (!metrics::IsDefinedValue(v)) continue;  // first_click_rank: no click.
    GroupFlow::Sums& sums = flow.all[s];
    ++sums.count;
    sums.sum += v;
    sums.sum_of_squares += v * v;
    g.all[s].Add(v);
    const size_t bucket = HistogramBucket(v);
    ++flow.histograms[s][bucket];
    ++g.histograms[s][bucket];
  }
  g.windows.Add(time_ms, values);
  newest_time_ms_ = std::max(newest_time_ms_, time_ms);
  Shard& s = *shards_[static_cast<size_t>(std::max(shard, 0))];
  s.newest_time_ms = std::max(s.newest_time_ms, time_ms);
}

void Aggregator::AddFirstClick(uint32_t group, int64_t delay_ms,
                               int32_t shard) {
  merged_stale_ = true;
  flow_[group].first_click.Add(delay_ms);
  ShardGroup(shard, group).first_click.Add(delay_ms);
}

bool Aggregator::HasShard(int32_t shard) const {
  return shard >= 0 && static_cast<size_t>(shard) < shards_.size() &&
         shards_[static_cast<size_t>(shard)] != nullptr;
}

void Aggregator::DropShard(int32_t shard) {
  if (!HasShard(shard)) return;
  shards_[static_cast<size_t>(shard)].reset();
  merged_stale_ = true;
}

void Aggregator::RebuildMerged() const {
  merged_stale_ = false;
  for (GroupStats& g : groups_) g = NewGroupStats(g);
  for (const std::unique_ptr<Shard>& shard : shards_) {
    if (!shard) continue;
    for (size_t g = 0; g < shard->groups.size(); ++g) {
      MergeGroup(shard->groups[g], &groups_[g]);
    }
  }
}

void Aggregator::EncodeShard(int32_t shard, ByteWriter* out) const {
  EncodeGroups(shard, /*changes=*/false, out);
}

void Aggregator::EncodeShardChanges(int32_t shard, ByteWriter* out) const {
  EncodeGroups(shard, /*changes=*/true, out);
}

void Aggregator::MarkShardRecorded(int32_t shard) {
  if (!HasShard(shard)) return;
  for (GroupStats& g : shards_[static_cast<size_t>(shard)]->groups) {
    g.windows.MarkRecorded();
  }
}

void Aggregator::EncodeGroups(int32_t shard, bool changes,
                              ByteWriter* out) const {
  out->Fixed32(kShardMagic);
  out->Varint(series_.size());
  for (const SeriesSpec& s : series_) out->String(s.state_key);
  out->Varint(dimensions_.size() - 1);
  for (const std::string& label : segment_labels_) out->String(label);
  const Shard* state =
      HasShard(shard) ? shards_[static_cast<size_t>(shard)].get() : nullptr;
  out->I64(state == nullptr ? INT64_MIN : state->newest_time_ms);
  size_t touched = 0;
  if (state != nullptr) {
    for (const GroupStats& g : state->groups) touched += g.requests > 0 ? 1 : 0;
  }
  out->Varint(touched);
  if (state == nullptr) return;
  for (const GroupStats& g : state->groups) {
    if (g.requests == 0) continue;
    out->String(g.variant);
    for (const std::string& v : g.segment_values) out->String(v);
    out->I64(g.requests);
    out->I64(g.without_relevant);
    for (size_t s = 0; s < series_.size(); ++s) {
      const metrics::RunningStats& r = g.all[s];
      out->I64(r.count());
      out->Double(r.mean());
      out->Double(r.m2());
      out->Double(r.sum());
      out->Double(r.sum_of_squares());
      for (int64_t c : g.histograms[s]) out->Varint(static_cast<uint64_t>(c));
    }
    for (int64_t c : g.first_click.counts)
      out->Varint(static_cast<uint64_t>(c));
    out->I64(g.first_click.count);
    out->Double(g.first_click.sum_seconds);
    if (changes) {
      g.windows.EncodeChanges(out);
    } else {
      g.windows.Encode(out);
    }
  }
}

Status Aggregator::DecodeShard(int32_t shard, ByteReader* in,
                               const CheckpointLimits& limits) {
  StagedShard staged;
  Status status = StageShard(shard, in, limits, &staged);
  if (!status.ok()) {
    DropShard(shard);
    return status;
  }
  CommitShard(std::move(staged));
  return Status::Ok();
}

uint64_t Aggregator::Dimension::capacity() const {
  if (allow_list_) return values_.size() + 1;
  // Reserved values may go past the limit (Reserve).
  return std::max<uint64_t>(static_cast<uint64_t>(std::max(max_values_, 0)),
                            values_.size()) +
         1;
}

uint64_t Aggregator::MaxGroups() const {
  uint64_t n = 1;
  for (const Dimension& d : dimensions_) {
    if (__builtin_mul_overflow(n, d.capacity(), &n)) return UINT64_MAX;
  }
  return n;
}

Status Aggregator::StageShard(int32_t shard, ByteReader* in,
                              const CheckpointLimits& limits,
                              StagedShard* staged) const {
  return Stage(shard, in, limits, /*changes=*/false, staged);
}

Status Aggregator::StageShardChanges(int32_t shard, ByteReader* in,
                                     const CheckpointLimits& limits,
                                     StagedShard* staged) const {
  return Stage(shard, in, limits, /*changes=*/true, staged);
}

Status Aggregator::Stage(int32_t shard, ByteReader* in,
                         const CheckpointLimits& limits, bool changes,
                         StagedShard* staged) const {
  if (shard < 0) return Status::InvalidArgument("negative shard");
  if (in->Fixed32() != kShardMagic) in->Fail("not an aggregate record");
  // Current series i takes the encoded series from[i] of the same name.
  const uint64_t num_series = in->Count(1);
  if (num_series > kMaxEncodedSeries) in->Fail("too many series");
  std::vector<int> from(series_.size(), -1);
  for (uint64_t i = 0; i < num_series && in->ok(); ++i) {
    const std::string_view name = in->String();
    for (size_t s = 0; s < series_.size(); ++s) {
      if (series_[s].state_key == name) from[s] = static_cast<int>(i);
    }
  }
  const uint64_t num_segments = in->Count(1);
  bool same_labels = num_segments == segment_labels_.size();
  for (uint64_t i = 0; i < num_segments && in->ok(); ++i) {
    const std::string_view label = in->String();
    if (same_labels && label != segment_labels_[i]) same_labels = false;
  }
  staged->shard = shard;
  staged->newest_time_ms = in->I64();
  limits.CheckTime(in, staged->newest_time_ms, "the shard's newest event time");
  const uint64_t num_groups = in->Count(1);
  if (in->ok() && num_groups > MaxGroups()) {
    in->Fail(std::to_string(num_groups) + " groups, more than the " +
             std::to_string(MaxGroups()) +
             " aggregation.max_variants and max_segment_values allow");
  }
  for (uint64_t i = 0; i < num_groups && in->ok(); ++i) {
    StagedShard::Group g{
        {}, {}, GroupStats{{}, {}, 0, 0, {}, {}, WindowRing(1, 1, 0), {}}};
    StageGroup(in, limits, from, {num_series, num_segments}, changes, &g);
    if (!in->ok() || !same_labels) continue;  // Other labels: start afresh.
    staged->groups.push_back(std::move(g));
  }
  if (!in->ok()) {
    *staged = StagedShard();
    return Status::InvalidArgument("aggregates of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  return Status::Ok();
}

void Aggregator::StageGroup(ByteReader* in, const CheckpointLimits& limits,
                            std::span<const int> from, EncodedShape shape,
                            bool changes, StagedShard::Group* staged) const {
  const uint64_t num_series = shape.series;
  staged->variant = in->Text(limits.max_id_length, "a variant label");
  // Grown as read: a corrupt count ends with the bytes, not in a vector
  // sized by it.
  for (uint64_t i = 0; i < shape.segments && in->ok(); ++i) {
    staged->segment_values.emplace_back(
        in->Text(limits.max_id_length, "a segment label"));
  }
  GroupStats g = NewGroupStats(
      GroupStats{staged->variant, {}, 0, 0, {}, {}, WindowRing(1, 1, 0), {}});
  g.requests = in->I64();
  g.without_relevant = in->I64();
  for (uint64_t s = 0; s < num_series; ++s) {
    const int64_t count = in->I64();
    const double mean = in->Double();
    const double m2 = in->Double();
    const double sum = in->Double();
    const double squares = in->Double();
    Histogram h{};
    for (int64_t& c : h) c = static_cast<int64_t>(in->Varint());
    CheckCount(in, count, "a series count");
    for (int64_t c : h) CheckCount(in, c, "a histogram count");
    for (size_t cur = 0; cur < series_.size(); ++cur) {
      if (from[cur] != static_cast<int>(s)) continue;
      g.all[cur] =
          metrics::RunningStats::FromState(count, mean, m2, sum, squares);
      g.histograms[cur] = h;
    }
  }
  for (int64_t& c : g.first_click.counts) {
    c = static_cast<int64_t>(in->Varint());
  }
  g.first_click.count = in->I64();
  g.first_click.sum_seconds = in->Double();
  for (int64_t c : g.first_click.counts) {
    CheckCount(in, c, "a first-click count");
  }
  CheckCount(in, g.first_click.count, "a first-click count");
  CheckCount(in, g.requests, "a request count");
  CheckCount(in, g.without_relevant, "a request count");
  if (changes) {
    WindowChanges c =
        WindowRing::DecodeChanges(in, bucket_ms_, span_ms_, from, limits);
    staged->windows_whole = c.whole;
    g.windows = std::move(c.buckets);
  } else {
    g.windows = WindowRing::Decode(in, bucket_ms_, span_ms_, from, limits);
  }
  staged->stats = std::move(g);
}

void Aggregator::CommitShard(StagedShard staged) {
  const int32_t shard = staged.shard;
  if (shard < 0) return;
  auto restored = std::make_unique<Shard>();
  restored->newest_time_ms = staged.newest_time_ms;
  std::vector<std::string_view> segments;
  for (StagedShard::Group& sg : staged.groups) {
    segments.assign(sg.segment_values.begin(), sg.segment_values.end());
    const uint32_t id = ResolveGroup(sg.variant, segments);
    std::deque<GroupStats>& groups = restored->groups;
    while (groups.size() <= id) {
      groups.push_back(NewGroupStats(groups_[groups.size()]));
    }
    // Merged, not assigned: two encoded groups can resolve to one ("other"
    // under a lower bound).
    MergeGroup(sg.stats, &groups[id]);
  }
  shards_.resize(std::max(shards_.size(), static_cast<size_t>(shard) + 1));
  newest_time_ms_ = std::max(newest_time_ms_, restored->newest_time_ms);
  shards_[static_cast<size_t>(shard)] = std::move(restored);
  merged_stale_ = true;
}

Status Aggregator::CommitShardChanges(StagedShard staged) {
  const int32_t shard = staged.shard;
  if (shard < 0) return Status::Ok();
  std::vector<uint32_t> ids;
  ids.reserve(staged.groups.size());
  std::vector<std::string_view> segments;
  for (const StagedShard::Group& sg : staged.groups) {
    segments.assign(sg.segment_values.begin(), sg.segment_values.end());
    const uint32_t id = ResolveGroup(sg.variant, segments);
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      return Status::InvalidArgument(
          "two label groups of the delta fold into one here (variant '" +
          sg.variant + "'): its window buckets cannot be applied");
    }
    ids.push_back(id);
  }
  shards_.resize(std::max(shards_.size(), static_cast<size_t>(shard) + 1));
  std::unique_ptr<Shard>& state = shards_[static_cast<size_t>(shard)];
  if (!state) state = std::make_unique<Shard>();
  state->newest_time_ms = staged.newest_time_ms;
  newest_time_ms_ = std::max(newest_time_ms_, staged.newest_time_ms);
  for (size_t i = 0; i < ids.size(); ++i) {
    StagedShard::Group& sg = staged.groups[i];
    while (state->groups.size() <= ids[i]) {
      state->groups.push_back(NewGroupStats(groups_[state->groups.size()]));
    }
    GroupStats& g = state->groups[ids[i]];
    g.requests = sg.stats.requests;
    g.without_relevant = sg.stats.without_relevant;
    g.all = std::move(sg.stats.all);
    g.histograms = std::move(sg.stats.histograms);
    g.first_click = sg.stats.first_click;
    g.windows.Apply({sg.windows_whole, std::move(sg.stats.windows)});
  }
  merged_stale_ = true;
  return Status::Ok();
}

void Aggregator::Reconfigure(const config::AggregationConfig& config,
                             std::vector<SeriesSpec> series,
                             std::span<const int> from) {
  series_ = std::move(series);
  bucket_ms_ = std::max<int64_t>(1, config.bucket.count());
  span_ms_ = bucket_ms_;
  windows_ms_.clear();
  for (Duration w : config.windows) {
    windows_ms_.push_back(w.count());
    span_ms_ = std::max<int64_t>(span_ms_, w.count());
  }
  dimensions_[0].set_max_values(config.max_variants);
  for (size_t d = 1; d < dimensions_.size(); ++d) {
    dimensions_[d].set_max_values(config.max_segment_values);
  }
  auto remap = [&](GroupStats& g) {
    std::vector<metrics::RunningStats> all(series_.size());
    std::vector<Histogram> histograms(series_.size(), Histogram{});
    for (size_t s = 0; s < series_.size(); ++s) {
      if (from[s] < 0) continue;
      all[s] = g.all[static_cast<size_t>(from[s])];
      histograms[s] = g.histograms[static_cast<size_t>(from[s])];
    }
    g.all = std::move(all);
    g.histograms = std::move(histograms);
    g.windows = g.windows.Remapped(bucket_ms_, span_ms_, from);
  };
  for (GroupStats& g : groups_) remap(g);
  for (GroupFlow& f : flow_) {
    std::vector<GroupFlow::Sums> all(series_.size());
    std::vector<Histogram> histograms(series_.size(), Histogram{});
    for (size_t s = 0; s < series_.size(); ++s) {
      if (from[s] < 0) continue;
      all[s] = f.all[static_cast<size_t>(from[s])];
      histograms[s] = f.histograms[static_cast<size_t>(from[s])];
    }
    f.all = std::move(all);
    f.histograms = std::move(histograms);
  }
  for (std::unique_ptr<Shard>& shard : shards_) {
    if (!shard) continue;
    for (GroupStats& g : shard->groups) remap(g);
  }
}

std::vector<std::string> WindowLabels(std::span<const int64_t> windows_ms) {
  std::vector<std::string> labels;
  labels.reserve(windows_ms.size());
  for (int64_t ms : windows_ms) labels.push_back(FormatDuration(Duration(ms)));
  return labels;
}

WindowTotals TotalsOf(const GroupStats& g, size_t series, int window,
                      std::span<const int64_t> windows_ms, int64_t now_ms) {
  if (window < 0) {
    const metrics::RunningStats& r = g.all[series];
    return {r.count(), r.sum(), r.sum_of_squares()};
  }
  return g.windows.Sum(series, now_ms, windows_ms[static_cast<size_t>(window)]);
}

}  // namespace rankwatch::stream
