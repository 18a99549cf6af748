#include "daemon/stream/interleaving_monitor.h"

#include <algorithm>
#include <array>

namespace rankwatch::stream {

namespace {

VerdictState StateOf(const InterleavingState& s) {
  if (s.sequential.looks() == 0) return VerdictState::kNoData;
  if (s.verdict > 0) return VerdictState::kBetter;
  if (s.verdict < 0) return VerdictState::kWorse;
  return VerdictState::kInconclusive;
}

}  // namespace

InterleavingMonitor::InterleavingMonitor(
    const std::vector<config::InterleavingConfig>* experiments,
    const config::AggregationConfig& aggregation,
    const config::StatisticsConfig& statistics)
    : alpha_(1 - statistics.level),
      prior_sd_(statistics.interleaving_prior_sd),
      prior_shape_(metrics::BetaPriorShape(statistics.interleaving_prior_sd)) {
  const int64_t bucket_ms = std::max<int64_t>(1, aggregation.bucket.count());
  int64_t span_ms = bucket_ms;
  for (const config::Duration& w : aggregation.windows) {
    windows_ms_.push_back(w.count());
    span_ms = std::max<int64_t>(span_ms, w.count());
  }
  bucket_ms_ = bucket_ms;
  span_ms_ = span_ms;
  states_.reserve(experiments->size());
  for (const config::InterleavingConfig& e : *experiments) {
    states_.push_back(InterleavingState{
        &e,
        {},
        {},
        std::vector<metrics::InterleavingCounts>(windows_ms_.size()),
        metrics::SequentialPreferenceTest(statistics.interleaving_prior_sd),
        0,
        VerdictState::kNoData,
        WindowRing(bucket_ms, span_ms, kNumSeries)});
  }
}

void InterleavingMonitor::AdoptState(const InterleavingMonitor& previous,
                                     bool same_statistics) {
  static constexpr std::array<int, kNumSeries> kSame = {0, 1, 2, 3};
  shards_.clear();
  shards_.resize(previous.shards_.size());
  for (size_t e = 0; e < states_.size(); ++e) {
    InterleavingState& state = states_[e];
    for (size_t o = 0; o < previous.states_.size(); ++o) {
      const InterleavingState& old = previous.states_[o];
      const config::InterleavingConfig& a = *state.config;
      const config::InterleavingConfig& b = *old.config;
      if (a.name != b.name || a.variant != b.variant || a.teams != b.teams) {
        continue;
      }
      for (size_t i = 0; i < previous.shards_.size(); ++i) {
        if (!previous.shards_[i]) continue;
        if (!shards_[i]) shards_[i] = std::make_unique<Shard>(NewShard());
        const ShardCounts& from = (*previous.shards_[i])[o];
        (*shards_[i])[e].all = from.all;
        (*shards_[i])[e].ring = from.ring.Remapped(bucket_ms_, span_ms_, kSame);
      }
      state.flow = old.flow;
      if (same_statistics) {
        state.sequential = old.sequential;
        state.verdict = old.verdict;
        state.state = old.state;
      }
      break;
    }
  }
  RebuildMerged();
}

void InterleavingMonitor::Add(int32_t experiment, int64_t time_ms,
                              metrics::InterleavingOutcome outcome,
                              int32_t shard) {
  if (experiment < 0 || static_cast<size_t>(experiment) >= states_.size()) {
    return;
  }
  const size_t index = static_cast<size_t>(std::max(shard, 0));
  if (index >= shards_.size()) shards_.resize(index + 1);
  if (!shards_[index]) shards_[index] = std::make_unique<Shard>(NewShard());
  ShardCounts& own = (*shards_[index])[static_cast<size_t>(experiment)];
  InterleavingState& s = states_[static_cast<size_t>(experiment)];
  s.all.Add(outcome);
  s.flow.Add(outcome);
  own.all.Add(outcome);
  std::array<double, kNumSeries> values{};
  switch (outcome) {
    case metrics::InterleavingOutcome::kFirstWins:
      values[kFirstWin] = 1;
      break;
    case metrics::InterleavingOutcome::kSecondWins:
      values[kSecondWin] = 1;
      break;
    case metrics::InterleavingOutcome::kTie:
      values[kTie] = 1;
      break;
    case metrics::InterleavingOutcome::kNoClick:
      values[kNoClick] = 1;
      break;
  }
  s.ring.Add(time_ms, values);
  own.ring.Add(time_ms, values);
}

InterleavingMonitor::Shard InterleavingMonitor::NewShard() const {
  Shard shard;
  shard.reserve(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) {
    shard.push_back(
        ShardCounts{{}, WindowRing(bucket_ms_, span_ms_, kNumSeries)});
  }
  return shard;
}

void InterleavingMonitor::RebuildMerged() {
  for (InterleavingState& s : states_) {
    s.all = metrics::InterleavingCounts{};
    s.ring = WindowRing(bucket_ms_, span_ms_, kNumSeries);
  }
  for (const std::unique_ptr<Shard>& shard : shards_) {
    if (!shard) continue;
    for (size_t e = 0; e < states_.size(); ++e) {
      states_[e].all.Merge((*shard)[e].all);
      states_[e].ring.MergeFrom((*shard)[e].ring);
    }
  }
}

namespace {
constexpr uint32_t kInterleavingShardMagic = 0x494c5631;  // "ILV1"
}  // namespace

void InterleavingMonitor::EncodeShard(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kInterleavingShardMagic);
  const Shard* counts =
      shard >= 0 && static_cast<size_t>(shard) < shards_.size()
          ? shards_[static_cast<size_t>(shard)].get()
          : nullptr;
  out->Varint(counts == nullptr ? 0 : states_.size());
  if (counts == nullptr) return;
  for (size_t e = 0; e < states_.size(); ++e) {
    const config::InterleavingConfig& c = *states_[e].config;
    out->String(c.name);
    out->String(c.variant);
    out->String(c.teams[0]);
    out->String(c.teams[1]);
    const metrics::InterleavingCounts& all = (*counts)[e].all;
    out->I64(all.impressions);
    out->I64(all.wins[0]);
    out->I64(all.wins[1]);
    out->I64(all.ties);
    out->I64(all.no_click);
    (*counts)[e].ring.Encode(out);
  }
}

Status InterleavingMonitor::DecodeShard(int32_t shard, ByteReader* in) {
  if (shard < 0) return Status::InvalidArgument("negative shard");
  if (in->Fixed32() != kInterleavingShardMagic) {
    in->Fail("not an interleaving record");
  }
  static constexpr std::array<int, kNumSeries> kSame = {0, 1, 2, 3};
  auto restored = std::make_unique<Shard>(NewShard());
  const uint64_t n = in->Count(4);
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    const std::string_view name = in->String();
    const std::string_view variant = in->String();
    const std::string_view first = in->String();
    const std::string_view second = in->String();
    metrics::InterleavingCounts all;
    all.impressions = in->I64();
    all.wins[0] = in->I64();
    all.wins[1] = in->I64();
    all.ties = in->I64();
    all.no_click = in->I64();
    WindowRing ring = WindowRing::Decode(in, bucket_ms_, span_ms_, kSame);
    if (all.impressions !=
        all.wins[0] + all.wins[1] + all.ties + all.no_click) {
      in->Fail("interleaving outcomes that do not add up");
    }
    for (size_t e = 0; e < states_.size() && in->ok(); ++e) {
      const config::InterleavingConfig& c = *states_[e].config;
      if (c.name != name || c.variant != variant || c.teams[0] != first ||
          c.teams[1] != second) {
        continue;
      }
      (*restored)[e].all = all;
      (*restored)[e].ring = std::move(ring);
      break;
    }
  }
  if (static_cast<size_t>(shard) >= shards_.size()) {
    shards_.resize(static_cast<size_t>(shard) + 1);
  }
  if (!in->ok()) {
    shards_[static_cast<size_t>(shard)].reset();
    RebuildMerged();
    return Status::InvalidArgument("interleaving counts of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  shards_[static_cast<size_t>(shard)] = std::move(restored);
  RebuildMerged();
  return Status::Ok();
}

void InterleavingMonitor::DropShard(int32_t shard) {
  if (shard < 0 || static_cast<size_t>(shard) >= shards_.size() ||
      !shards_[static_cast<size_t>(shard)]) {
    return;
  }
  shards_[static_cast<size_t>(shard)].reset();
  RebuildMerged();
  // The counts went down: the sequential tests, which are the process's,
  // start afresh on what this replica now holds.
  for (InterleavingState& s : states_) {
    s.sequential = metrics::SequentialPreferenceTest(prior_sd_);
    s.verdict = 0;
    s.state = VerdictState::kNoData;
  }
}

metrics::InterleavingCounts InterleavingMonitor::WindowCounts(
    const InterleavingState& s, int64_t now_ms, int64_t window_ms) {
  metrics::InterleavingCounts c;
  // A ring never added to has no buckets to sum.
  if (s.all.impressions == 0) return c;
  // Impressions are the lists counted: every list has a value in every
  // series.
  const WindowTotals first = s.ring.Sum(kFirstWin, now_ms, window_ms);
  c.impressions = first.count;
  c.wins[0] = static_cast<int64_t>(first.sum);
  c.wins[1] =
      static_cast<int64_t>(s.ring.Sum(kSecondWin, now_ms, window_ms).sum);
  c.ties = static_cast<int64_t>(s.ring.Sum(kTie, now_ms, window_ms).sum);
  c.no_click =
      static_cast<int64_t>(s.ring.Sum(kNoClick, now_ms, window_ms).sum);
  return c;
}

void InterleavingMonitor::Update(int64_t now_ms) {
  for (InterleavingState& s : states_) {
    for (size_t w = 0; w < windows_ms_.size(); ++w) {
      s.windows[w] = WindowCounts(s, now_ms, windows_ms_[w]);
    }
    s.sequential.Look(s.all);
    s.verdict = metrics::PreferenceVerdict(s.sequential.p_value(),
                                           metrics::Preference(s.all), alpha_);
    s.state = StateOf(s);
  }
}

}  // namespace rankwatch::stream
