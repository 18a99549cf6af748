#include "daemon/stream/interleaving/interleaving_monitor.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <utility>

namespace rankwatch::stream {

namespace {

// The most series of an experiment's ring: 3 per pair, then no_click.
constexpr size_t kMaxSeries =
    3 * metrics::NumPairs(config::kMaxInterleavingTeams) + 1;
static_assert(config::kMaxInterleavingTeams == metrics::kMaxMultileavingTeams);

VerdictState StateOf(const metrics::SequentialPreferenceTest& test,
                     int verdict) {
  if (test.looks() == 0) return VerdictState::kNoData;
  if (verdict > 0) return VerdictState::kBetter;
  if (verdict < 0) return VerdictState::kWorse;
  return VerdictState::kInconclusive;
}

// Series i of a ring of `n` series comes from series i (a reload or a
// restore that keeps the layout).
std::vector<int> Identity(size_t n) {
  std::vector<int> from(n);
  std::iota(from.begin(), from.end(), 0);
  return from;
}

}  // namespace

InterleavingState::InterleavingState(const config::InterleavingConfig* c,
                                     size_t num_windows, double prior_sd,
                                     WindowRing window_ring)
    : config(c),
      windows(num_windows),
      sequential(prior_sd),
      ring(std::move(window_ring)),
      counts(c->teams.size()),
      flow_counts(c->teams.size()),
      window_counts(num_windows, metrics::MultileavingCounts(c->teams.size())),
      pair_tests(metrics::NumPairs(c->teams.size()),
                 metrics::SequentialPreferenceTest(prior_sd)),
      pair_states(metrics::NumPairs(c->teams.size()), VerdictState::kNoData) {}

InterleavingMonitor::InterleavingMonitor(
    const std::vector<config::InterleavingConfig>* experiments,
    const config::AggregationConfig& aggregation,
    const config::StatisticsConfig& statistics)
    : alpha_(1 - statistics.level),
      prior_sd_(statistics.interleaving_prior_sd),
      prior_shape_(metrics::BetaPriorShape(statistics.interleaving_prior_sd)) {
  const int64_t bucket_ms = std::max<int64_t>(1, aggregation.bucket.count());
  int64_t span_ms = bucket_ms;
  for (const Duration& w : aggregation.windows) {
    windows_ms_.push_back(w.count());
    span_ms = std::max<int64_t>(span_ms, w.count());
  }
  bucket_ms_ = bucket_ms;
  span_ms_ = span_ms;
  states_.reserve(experiments->size());
  for (const config::InterleavingConfig& e : *experiments) {
    states_.emplace_back(&e, windows_ms_.size(), prior_sd_,
                         WindowRing(bucket_ms, span_ms, NumSeries(e)));
  }
}

void InterleavingMonitor::AdoptState(const InterleavingMonitor& previous,
                                     bool same_statistics) {
  shards_.clear();
  shards_.resize(previous.shards_.size());
  for (size_t e = 0; e < states_.size(); ++e) {
    InterleavingState& state = states_[e];
    const std::vector<int> same = Identity(NumSeries(*state.config));
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
        (*shards_[i])[e].counts = from.counts;
        (*shards_[i])[e].ring = from.ring.Remapped(bucket_ms_, span_ms_, same);
      }
      state.flow = old.flow;
      state.flow_counts = old.flow_counts;
      if (same_statistics) {
        state.sequential = old.sequential;
        state.verdict = old.verdict;
        state.state = old.state;
        state.pair_tests = old.pair_tests;
        state.pair_states = old.pair_states;
        state.analysis = old.analysis;
      }
      break;
    }
  }
  RebuildMerged();
}

void InterleavingMonitor::AddImpression(int32_t experiment, int64_t time_ms,
                                        std::span<const uint8_t> teams,
                                        std::span<const metrics::Grade> clicks,
                                        metrics::Grade threshold,
                                        int32_t shard) {
  if (experiment < 0 || static_cast<size_t>(experiment) >= states_.size()) {
    return;
  }
  const size_t e = static_cast<size_t>(experiment);
  std::array<int64_t, config::kMaxInterleavingTeams> credit{};
  const std::span<int64_t> own(credit.data(), states_[e].config->teams.size());
  metrics::CreditTeams(teams, clicks, threshold, own);
  Record(e, time_ms, own, shard);
}

void InterleavingMonitor::Add(int32_t experiment, int64_t time_ms,
                              metrics::InterleavingOutcome outcome,
                              int32_t shard) {
  if (experiment < 0 || static_cast<size_t>(experiment) >= states_.size()) {
    return;
  }
  std::array<int64_t, config::kMaxInterleavingTeams> credit{};
  switch (outcome) {
    case metrics::InterleavingOutcome::kFirstWins:
      credit[0] = 1;
      break;
    case metrics::InterleavingOutcome::kSecondWins:
      credit[1] = 1;
      break;
    case metrics::InterleavingOutcome::kTie:
      credit[0] = credit[1] = 1;
      break;
    case metrics::InterleavingOutcome::kNoClick:
      break;
  }
  const size_t e = static_cast<size_t>(experiment);
  Record(
      e, time_ms,
      std::span<const int64_t>(credit.data(), states_[e].config->teams.size()),
      shard);
}

void InterleavingMonitor::Record(size_t experiment, int64_t time_ms,
                                 std::span<const int64_t> credit,
                                 int32_t shard) {
  const size_t index = static_cast<size_t>(std::max(shard, 0));
  if (index >= shards_.size()) shards_.resize(index + 1);
  if (!shards_[index]) shards_[index] = std::make_unique<Shard>(NewShard());
  ShardCounts& own = (*shards_[index])[experiment];
  InterleavingState& s = states_[experiment];
  s.counts.Add(credit);
  s.flow_counts.Add(credit);
  own.counts.Add(credit);
  s.all = s.counts.pairs[0];
  s.flow = s.flow_counts.pairs[0];
  // The ring's values: the outcome of every pair, or no_click.
  const size_t n = credit.size();
  const size_t num_series = NumSeries(*s.config);
  std::array<double, kMaxSeries> values{};
  const bool clicked = std::any_of(credit.begin(), credit.end(),
                                   [](int64_t c) { return c > 0; });
  if (!clicked) {
    values[num_series - 1] = 1;
  } else {
    for (size_t x = 0; x + 1 < n; ++x) {
      for (size_t y = x + 1; y < n; ++y) {
        const size_t base = kPairSeries * metrics::PairIndex(x, y, n);
        values[base + (credit[x] == credit[y]  ? kTie
                       : credit[x] > credit[y] ? kFirstWin
                                               : kSecondWin)] = 1;
      }
    }
  }
  const std::span<const double> row(values.data(), num_series);
  s.ring.Add(time_ms, row);
  own.ring.Add(time_ms, row);
}

InterleavingMonitor::Shard InterleavingMonitor::NewShard() const {
  Shard shard;
  shard.reserve(states_.size());
  for (const InterleavingState& s : states_) {
    shard.push_back(
        ShardCounts{metrics::MultileavingCounts(s.config->teams.size()),
                    WindowRing(bucket_ms_, span_ms_, NumSeries(*s.config))});
  }
  return shard;
}

void InterleavingMonitor::RebuildMerged() {
  for (InterleavingState& s : states_) {
    s.counts = metrics::MultileavingCounts(s.config->teams.size());
    s.ring = WindowRing(bucket_ms_, span_ms_, NumSeries(*s.config));
  }
  for (const std::unique_ptr<Shard>& shard : shards_) {
    if (!shard) continue;
    for (size_t e = 0; e < states_.size(); ++e) {
      states_[e].counts.Merge((*shard)[e].counts);
      states_[e].ring.MergeFrom((*shard)[e].ring);
    }
  }
  for (InterleavingState& s : states_) s.all = s.counts.pairs[0];
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
    std::fill(s.pair_tests.begin(), s.pair_tests.end(),
              metrics::SequentialPreferenceTest(prior_sd_));
    std::fill(s.pair_states.begin(), s.pair_states.end(),
              VerdictState::kNoData);
    s.analysis = metrics::MultileavingAnalysis{};
  }
}

metrics::MultileavingCounts InterleavingMonitor::MultiWindowCounts(
    const InterleavingState& s, int64_t now_ms, int64_t window_ms) {
  const size_t n = s.config->teams.size();
  metrics::MultileavingCounts c(n);
  // A ring never added to has no buckets to sum.
  if (s.counts.impressions == 0) return c;
  // Impressions are the lists counted: every list has a value in every
  // series.
  const size_t no_click_series = kPairSeries * metrics::NumPairs(n);
  const WindowTotals none = s.ring.Sum(no_click_series, now_ms, window_ms);
  c.impressions = none.count;
  c.no_click = static_cast<int64_t>(none.sum);
  for (size_t p = 0; p < c.pairs.size(); ++p) {
    metrics::InterleavingCounts& pair = c.pairs[p];
    const auto sum = [&](size_t series) {
      return static_cast<int64_t>(
          s.ring.Sum(kPairSeries * p + series, now_ms, window_ms).sum);
    };
    pair.impressions = c.impressions;
    pair.no_click = c.no_click;
    pair.wins[0] = sum(kFirstWin);
    pair.wins[1] = sum(kSecondWin);
    pair.ties = sum(kTie);
  }
  return c;
}

metrics::InterleavingCounts InterleavingMonitor::WindowCounts(
    const InterleavingState& s, int64_t now_ms, int64_t window_ms) {
  return MultiWindowCounts(s, now_ms, window_ms).pairs[0];
}

void InterleavingMonitor::Update(int64_t now_ms) {
  std::vector<double> p_values;
  for (InterleavingState& s : states_) {
    for (size_t w = 0; w < windows_ms_.size(); ++w) {
      s.window_counts[w] = MultiWindowCounts(s, now_ms, windows_ms_[w]);
      s.windows[w] = s.window_counts[w].pairs[0];
    }
    p_values.clear();
    for (size_t p = 0; p < s.pair_tests.size(); ++p) {
      s.pair_tests[p].Look(s.counts.pairs[p]);
      p_values.push_back(s.pair_tests[p].p_value());
    }
    // Benjamini-Hochberg across the pairs; with two teams the one pair's
    // verdict is its own p-value's.
    s.analysis = metrics::AnalyzeMultileaving(s.counts, p_values, alpha_);
    for (size_t p = 0; p < s.pair_tests.size(); ++p) {
      s.pair_states[p] = StateOf(s.pair_tests[p], s.analysis.pairs[p].verdict);
    }
    s.sequential = s.pair_tests[0];
    s.verdict = s.analysis.pairs[0].verdict;
    s.state = s.pair_states[0];
  }
}

namespace {
// "ILV1": two teams, no per-team clicks; "ILV2": any number of teams;
// "ILV3": a delta's, the windows' changed buckets only.
constexpr uint32_t kTwoTeamShardMagic = 0x494c5631;
constexpr uint32_t kInterleavingShardMagic = 0x494c5632;
constexpr uint32_t kChangesShardMagic = 0x494c5633;
}  // namespace

void InterleavingMonitor::EncodeShard(int32_t shard, ByteWriter* out) const {
  EncodeCounts(shard, /*changes=*/false, out);
}

void InterleavingMonitor::EncodeShardChanges(int32_t shard,
                                             ByteWriter* out) const {
  EncodeCounts(shard, /*changes=*/true, out);
}

void InterleavingMonitor::MarkShardRecorded(int32_t shard) {
  if (shard < 0 || static_cast<size_t>(shard) >= shards_.size() ||
      !shards_[static_cast<size_t>(shard)]) {
    return;
  }
  for (ShardCounts& c : *shards_[static_cast<size_t>(shard)]) {
    c.ring.MarkRecorded();
  }
}

void InterleavingMonitor::EncodeCounts(int32_t shard, bool changes,
                                       ByteWriter* out) const {
  out->Fixed32(changes ? kChangesShardMagic : kInterleavingShardMagic);
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
    out->Varint(c.teams.size());
    for (const std::string& team : c.teams) out->String(team);
    const metrics::MultileavingCounts& all = (*counts)[e].counts;
    out->I64(all.impressions);
    out->I64(all.no_click);
    for (int64_t clicks : all.clicks) out->I64(clicks);
    for (const metrics::InterleavingCounts& pair : all.pairs) {
      out->I64(pair.wins[0]);
      out->I64(pair.wins[1]);
      out->I64(pair.ties);
    }
    if (changes) {
      (*counts)[e].ring.EncodeChanges(out);
    } else {
      (*counts)[e].ring.Encode(out);
    }
  }
}

void InterleavingMonitor::DecodeExperiment(ByteReader* in, Format format,
                                           const CheckpointLimits& limits,
                                           Shard* restored) const {
  const bool two_team_format = format == Format::kTwoTeams;
  const std::string_view name = in->String();
  const std::string_view variant = in->String();
  std::array<std::string_view, config::kMaxInterleavingTeams> teams;
  const uint64_t n = two_team_format ? 2 : in->Varint();
  if (n < 2 || n > teams.size()) {
    in->Fail("an interleaving experiment of " + std::to_string(n) + " teams");
    return;
  }
  for (uint64_t t = 0; t < n; ++t) teams[t] = in->String();
  metrics::MultileavingCounts all(n);
  all.impressions = in->I64();
  if (two_team_format) {
    // impressions, wins of each team, ties, no_click; no per-team clicks.
    metrics::InterleavingCounts& pair = all.pairs[0];
    pair.wins[0] = in->I64();
    pair.wins[1] = in->I64();
    pair.ties = in->I64();
    all.no_click = in->I64();
  } else {
    all.no_click = in->I64();
    for (int64_t& clicks : all.clicks) clicks = in->I64();
    for (metrics::InterleavingCounts& pair : all.pairs) {
      pair.wins[0] = in->I64();
      pair.wins[1] = in->I64();
      pair.ties = in->I64();
    }
  }
  for (metrics::InterleavingCounts& pair : all.pairs) {
    pair.impressions = all.impressions;
    pair.no_click = all.no_click;
  }
  const std::vector<int> same = Identity(3 * all.pairs.size() + 1);
  WindowChanges changes;
  if (format == Format::kTeamsChanges) {
    changes = WindowRing::DecodeChanges(in, bucket_ms_, span_ms_, same, limits);
  } else {
    changes = {true,
               WindowRing::Decode(in, bucket_ms_, span_ms_, same, limits)};
  }
  const WindowRing& ring = changes.buckets;
  CheckCount(in, all.impressions, "an interleaving impression count");
  CheckCount(in, all.no_click, "an interleaving no-click count");
  for (int64_t clicks : all.clicks) {
    CheckCount(in, clicks, "an interleaving click count");
  }
  for (const metrics::InterleavingCounts& pair : all.pairs) {
    CheckCount(in, pair.wins[0], "an interleaving win count");
    CheckCount(in, pair.wins[1], "an interleaving win count");
    CheckCount(in, pair.ties, "an interleaving tie count");
  }
  // Consistent() adds them up: only once each is bounded.
  if (in->ok() && !all.Consistent()) {
    in->Fail("interleaving outcomes that do not add up");
  }
  // Each series counts outcomes of 0 or 1, read back as integers.
  if (!ring.ValuesWithin(0, 1)) {
    in->Fail("interleaving window sums that are not counts");
  }
  if (!in->ok()) return;
  for (size_t e = 0; e < states_.size(); ++e) {
    const config::InterleavingConfig& c = *states_[e].config;
    if (c.name != name || c.variant != variant || c.teams.size() != n ||
        !std::equal(c.teams.begin(), c.teams.end(), teams.begin())) {
      continue;
    }
    (*restored)[e].counts = std::move(all);
    (*restored)[e].ring.Apply(std::move(changes));
    return;
  }
}

Status InterleavingMonitor::DecodeShard(int32_t shard, ByteReader* in,
                                        const CheckpointLimits& limits) {
  if (shard < 0) return Status::InvalidArgument("negative shard");
  const uint32_t magic = in->Fixed32();
  Format format = Format::kTeams;
  if (magic == kTwoTeamShardMagic) {
    format = Format::kTwoTeams;
  } else if (magic == kChangesShardMagic) {
    format = Format::kTeamsChanges;
  } else if (magic != kInterleavingShardMagic) {
    in->Fail("not an interleaving record");
  }
  // Changes apply onto what the records before restored.
  const bool onto = format == Format::kTeamsChanges &&
                    static_cast<size_t>(shard) < shards_.size() &&
                    shards_[static_cast<size_t>(shard)] != nullptr;
  auto restored = std::make_unique<Shard>(
      onto ? *shards_[static_cast<size_t>(shard)] : NewShard());
  const uint64_t n = in->Count(4);
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    DecodeExperiment(in, format, limits, restored.get());
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

}  // namespace rankwatch::stream
