// InterleavingCollector: the pipeline's live team-draft interleaving
// experiments (stream::InterleavingMonitor), rendered at scrape time from a
// stream::PipelineSnapshot.
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
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class InterleavingCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_INTERLEAVING_COLLECTOR_H_
