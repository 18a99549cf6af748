#include "daemon/stream/aggregator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rankwatch::stream {

namespace {

// Floor division, also for event times before 1970.
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::vector<SeriesSpec> BuildSeries(
    const std::vector<metrics::Measure>& measures,
    const std::vector<int32_t>& cutoffs) {
  std::vector<int32_t> sorted = cutoffs;
  std::sort(sorted.begin(), sorted.end());
  std::vector<SeriesSpec> series;
  for (metrics::Measure m : measures) {
    if (metrics::HasCutoffVariant(m)) {
      for (size_t i = 0; i < sorted.size(); ++i) {
        series.push_back({m, static_cast<int>(i), sorted[i],
                          metrics::TrecName(m, sorted[i]),
                          std::to_string(sorted[i])});
      }
    }
    if (metrics::HasUncutVariant(m)) {
      series.push_back(
          {m, -1, 0, metrics::TrecName(m, std::nullopt), std::string("all")});
    }
  }
  return series;
}

double WindowTotals::mean() const {
  return count > 0 ? sum / static_cast<double>(count)
                   : std::numeric_limits<double>::quiet_NaN();
}

double WindowTotals::variance() const {
  if (count < 2) return 0.0;
  const double n = static_cast<double>(count);
  return std::max(0.0, (sum_of_squares - sum * sum / n) / (n - 1));
}

WindowRing::WindowRing(int64_t bucket_ms, int64_t span_ms, size_t num_series)
    : bucket_ms_(std::max<int64_t>(1, bucket_ms)),
      num_slots_(static_cast<size_t>(span_ms / bucket_ms_) + 1),
      num_series_(num_series),
      slot_bucket_(num_slots_, -1),
      slot_counts_(num_slots_ * num_series, 0),
      slot_sums_(num_slots_ * num_series * 2, 0.0) {}

size_t WindowRing::Slot(int64_t bucket) const {
  const int64_t n = static_cast<int64_t>(num_slots_);
  return static_cast<size_t>(((bucket % n) + n) % n);
}

void WindowRing::Add(int64_t time_ms, std::span<const double> values) {
  const int64_t bucket = FloorDiv(time_ms, bucket_ms_);
  if (bucket > newest_bucket_) newest_bucket_ = bucket;
  if (bucket <= newest_bucket_ - static_cast<int64_t>(num_slots_)) return;
  const size_t slot = Slot(bucket);
  double* sums = &slot_sums_[slot * num_series_ * 2];
  int64_t* counts = &slot_counts_[slot * num_series_];
  if (slot_bucket_[slot] != bucket) {
    slot_bucket_[slot] = bucket;
    std::fill(counts, counts + num_series_, 0);
    std::fill(sums, sums + num_series_ * 2, 0.0);
  }
  for (size_t s = 0; s < values.size() && s < num_series_; ++s) {
    if (!metrics::IsDefinedValue(values[s])) continue;
    ++counts[s];
    sums[2 * s] += values[s];
    sums[2 * s + 1] += values[s] * values[s];
  }
}

WindowTotals WindowRing::Sum(size_t series, int64_t now_ms,
                             int64_t window_ms) const {
  WindowTotals t;
  if (newest_bucket_ == INT64_MIN) return t;  // Nothing added yet.
  const int64_t last = FloorDiv(now_ms, bucket_ms_);
  const int64_t buckets =
      std::min<int64_t>(std::max<int64_t>(1, window_ms / bucket_ms_),
                        static_cast<int64_t>(num_slots_));
  // Slots older than the ring's span may still hold stale buckets.
  const int64_t oldest_kept =
      newest_bucket_ - static_cast<int64_t>(num_slots_) + 1;
  for (int64_t b = std::max(last - buckets + 1, oldest_kept); b <= last; ++b) {
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    t.count += slot_counts_[slot * num_series_ + series];
    t.sum += slot_sums_[(slot * num_series_ + series) * 2];
    t.sum_of_squares += slot_sums_[(slot * num_series_ + series) * 2 + 1];
  }
  return t;
}

void WindowRing::BucketTotals(size_t series, int64_t now_ms,
                              std::span<WindowTotals> out) const {
  std::fill(out.begin(), out.end(), WindowTotals{});
  if (newest_bucket_ == INT64_MIN || series >= num_series_) return;
  const int64_t last = FloorDiv(now_ms, bucket_ms_);
  // As in Sum(): slots older than the ring's span may hold stale buckets.
  const int64_t oldest_kept =
      newest_bucket_ - static_cast<int64_t>(num_slots_) + 1;
  const int64_t first = last - static_cast<int64_t>(out.size()) + 1;
  for (int64_t b = std::max(first, oldest_kept); b <= last; ++b) {
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    WindowTotals& t = out[static_cast<size_t>(b - first)];
    t.count = slot_counts_[slot * num_series_ + series];
    t.sum = slot_sums_[(slot * num_series_ + series) * 2];
    t.sum_of_squares = slot_sums_[(slot * num_series_ + series) * 2 + 1];
  }
}

WindowRing WindowRing::Remapped(int64_t bucket_ms, int64_t span_ms,
                                std::span<const int> from) const {
  WindowRing ring(bucket_ms, span_ms, from.size());
  if (ring.bucket_ms_ != bucket_ms_ || newest_bucket_ == INT64_MIN) {
    return ring;
  }
  ring.newest_bucket_ = newest_bucket_;
  const int64_t kept =
      static_cast<int64_t>(std::min(num_slots_, ring.num_slots_));
  for (int64_t b = newest_bucket_ - kept + 1; b <= newest_bucket_; ++b) {
    const size_t slot = Slot(b);
    if (slot_bucket_[slot] != b) continue;
    const size_t to = ring.Slot(b);
    ring.slot_bucket_[to] = b;
    for (size_t s = 0; s < from.size(); ++s) {
      if (from[s] < 0) continue;
      const size_t old = slot * num_series_ + static_cast<size_t>(from[s]);
      const size_t now = to * ring.num_series_ + s;
      ring.slot_counts_[now] = slot_counts_[old];
      ring.slot_sums_[2 * now] = slot_sums_[2 * old];
      ring.slot_sums_[2 * now + 1] = slot_sums_[2 * old + 1];
    }
  }
  return ring;
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

Aggregator::Aggregator(const config::AggregationConfig& config,
                       std::vector<SeriesSpec> series)
    : series_(std::move(series)),
      bucket_ms_(std::max<int64_t>(1, config.bucket.count())) {
  span_ms_ = bucket_ms_;
  for (config::Duration w : config.windows) {
    windows_ms_.push_back(w.count());
    span_ms_ = std::max<int64_t>(span_ms_, w.count());
  }
  dimensions_.emplace_back(config.variants, config.max_variants);
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

void Aggregator::Add(uint32_t group, int64_t time_ms,
                     std::span<const double> values, bool without_relevant) {
  GroupStats& g = groups_[group];
  ++g.requests;
  if (without_relevant) ++g.without_relevant;
  if (values.empty()) return;
  for (size_t s = 0; s < values.size() && s < series_.size(); ++s) {
    const double v = values[s];
    if (!metrics::IsDefinedValue(v)) continue;  // first_click_rank: no click.
    g.all[s].Add(v);
    const size_t bucket = static_cast<size_t>(
        std::lower_bound(kHistogramBounds.begin(), kHistogramBounds.end(), v) -
        kHistogramBounds.begin());
    ++g.histograms[s][bucket];
  }
  g.windows.Add(time_ms, values);
  newest_time_ms_ = std::max(newest_time_ms_, time_ms);
}

void Aggregator::Reconfigure(const config::AggregationConfig& config,
                             std::vector<SeriesSpec> series,
                             std::span<const int> from) {
  series_ = std::move(series);
  bucket_ms_ = std::max<int64_t>(1, config.bucket.count());
  span_ms_ = bucket_ms_;
  windows_ms_.clear();
  for (config::Duration w : config.windows) {
    windows_ms_.push_back(w.count());
    span_ms_ = std::max<int64_t>(span_ms_, w.count());
  }
  dimensions_[0].set_max_values(config.max_variants);
  for (size_t d = 1; d < dimensions_.size(); ++d) {
    dimensions_[d].set_max_values(config.max_segment_values);
  }
  for (GroupStats& g : groups_) {
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
  }
}

}  // namespace rankwatch::stream
