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
  for (InterleavingState& state : states_) {
    for (const InterleavingState& old : previous.states_) {
      const config::InterleavingConfig& a = *state.config;
      const config::InterleavingConfig& b = *old.config;
      if (a.name != b.name || a.variant != b.variant || a.teams != b.teams) {
        continue;
      }
      state.all = old.all;
      state.ring = old.ring.Remapped(bucket_ms_, span_ms_, kSame);
      if (same_statistics) {
        state.sequential = old.sequential;
        state.verdict = old.verdict;
        state.state = old.state;
      }
      break;
    }
  }
}

void InterleavingMonitor::Add(int32_t experiment, int64_t time_ms,
                              metrics::InterleavingOutcome outcome) {
  if (experiment < 0 || static_cast<size_t>(experiment) >= states_.size()) {
    return;
  }
  InterleavingState& s = states_[static_cast<size_t>(experiment)];
  s.all.Add(outcome);
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
