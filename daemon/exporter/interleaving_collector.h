// InterleavingCollector: the pipeline's live team-draft interleaving
// experiments (stream::InterleavingMonitor), read at scrape time.
//
// Per experiment (label `experiment`):
//   rankwatch_interleaving_info{variant, incumbent, challenger}  1
//   rankwatch_interleaving_impressions_total, _ties_total,
//   _no_click_total, rankwatch_interleaving_wins_total{team}   counters
//   rankwatch_interleaving_window_impressions{window}, _window_wins
//   {window, team}, _window_ties, _window_no_click              gauges
//   rankwatch_interleaving_preference{window}    NaN without a click
//   rankwatch_interleaving_p_value{window}       sign test (exact)
//   rankwatch_interleaving_sequential_p_value    running minimum
//   rankwatch_interleaving_sequential_look_p_value, _sequential_looks
//   rankwatch_interleaving_verdict, _verdict_state{state}
// With more than two teams (multileaving) those describe the first pair
// (the incumbent and the first challenger); every pair (labels `first`,
// `second`: its teams in configuration order) and team has
//   rankwatch_interleaving_team_info{team, position}  1 (0: incumbent)
//   rankwatch_interleaving_clicks_total{team}         credited clicks
//   rankwatch_interleaving_pair_wins_total{first, second, winner}
//       winner "first" or "second": impressions with more clicks credited
//       to that team of the pair than to the other        counters
//   rankwatch_interleaving_pair_ties_total{first, second}  counters
//   rankwatch_interleaving_pair_preference{first, second, window}
//       of the second team over the first
//   rankwatch_interleaving_pair_sequential_p_value{first, second}
//   rankwatch_interleaving_pair_adjusted_p_value{first, second}  BH
//   rankwatch_interleaving_pair_verdict{first, second}  +1 second better
//   rankwatch_interleaving_copeland_score{team}, _rank{team} (1: best),
//   _winner{team} (1 for the team that beats every other)
// (two-team experiments too: their one pair);
// and rankwatch_interleaving_prior_shape (the a of the Beta(a, a) prior),
// and without A/B experiments rankwatch_ab_confidence_level (the verdict's
// level, which the recording rules read).
// `window` is "all" or a configured window; "all" equals the counters.
//
// Values are per replica; deploy/prometheus/rules.yml computes the same
// from the summed counters of all replicas.
//
// Reads the pipeline without synchronization: Collect() runs with the
// daemon's mutex held (see probe.h). The pipeline must outlive it.
#ifndef RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_

#include <string>
#include <vector>

#include "daemon/exporter/families.h"
#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::exporter {

class InterleavingCollector : public Collector {
 public:
  explicit InterleavingCollector(const stream::Pipeline* pipeline);
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  void CollectTotals(std::vector<prometheus::MetricFamily>* out) const;
  void CollectWindows(std::vector<prometheus::MetricFamily>* out) const;
  void CollectTests(std::vector<prometheus::MetricFamily>* out) const;
  void CollectPairs(std::vector<prometheus::MetricFamily>* out) const;
  void CollectRanking(std::vector<prometheus::MetricFamily>* out) const;

  const stream::Pipeline* pipeline_;
  std::vector<std::string> window_labels_;  // Parallel to windows_ms().
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_
