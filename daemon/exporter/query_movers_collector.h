// QueryMoversCollector: the query movers of the experiments' primary series
// (stream::QueryMovers, docs/statistics.md "Query movers") as gauges,
// window "all", rendered at scrape time from a stream::PipelineSnapshot
// (which computed them when it was taken).
//
// Always, per experiment, treatment and primary series (labels experiment,
// variant, baseline, measure, k):
//   rankwatch_query_movers_tested        tracked queries with enough lists
//                                        in both arms for a test
//   rankwatch_query_movers_significant{direction="worse"|"better"}
//                                        tested queries whose difference is
//                                        significant after Benjamini-Hochberg
//                                        across the tested queries at
//                                        1 - statistics.level, by its sign
// what the alert RankwatchQueriesMoved reads: one alert per comparison,
// whatever the number of queries (the queries are grouped, not one series
// each). With statistics.export_query_movers = N > 0, also the top N
// movers by |contribution| (rank "1".."N"; only queries with lists in both
// arms):
//   rankwatch_query_mover_info{..., rank, query} 1
//   rankwatch_query_mover_difference{..., rank}    treatment - baseline
//   rankwatch_query_mover_contribution{..., rank}  share x difference
//   rankwatch_query_mover_p_value_bh{..., rank}    NaN when not tested
// Cardinality: (treatments x primary series) x (2 + 4 N) series per
// experiment; the query label of a rank changes as the movers reorder, so
// each change starts a new info series (the query text is cut at
// kMaxQueryLabelBytes).
//
// The values are per replica: each tracks the queries of its partitions
// only (a replica's movers are those of its share of the traffic).
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_QUERY_MOVERS_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_QUERY_MOVERS_COLLECTOR_H_

#include <cstddef>
#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class QueryMoversCollector : public SnapshotCollector {
 public:
  static constexpr size_t kMaxQueryLabelBytes = 200;

  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_QUERY_MOVERS_COLLECTOR_H_
