// PipelineCollector: the streaming core's state as metric families,
// rendered at scrape time from a stream::PipelineSnapshot.
//
// Per label group (variant and configured segments) and series (a measure
// at a cutoff, or k="all"):
//   rankwatch_<measure>                  histogram over [0, 1] in tenths,
//                                        from the aggregator's bucket counts
//   rankwatch_<measure>_squares_total    sum of squared per-list values
//   rankwatch_<measure>_mean             running mean per window ("all" and
//                                        each configured one, e.g. "5m")
// Per field of schema.fields (label `field` in place of k), the same as
// counters rankwatch_field_count_total, _squares_total, the gauge
// rankwatch_field_scored_sum_values (values may be negative) and
// gauges rankwatch_field_mean, _window_*; rankwatch_field_events_total
// {field, reason}, rankwatch_field_info{field, better} and
// rankwatch_field_mixture_sd{field} (for the rules). And the pipeline's
// counters: events consumed and rejected,
// join outcomes, pending state, watermark, label overflow. Every label set
// known up front (topics, reject reasons, segment labels) is exported from the
// start, at 0.
//
// A window holding no list has mean NaN rather than no sample: the series
// set stays stable across scrapes, and a NaN compares false in every alert
// rule (`mean < 0.3` does not fire on an idle window).
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_PIPELINE_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_PIPELINE_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class PipelineCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_PIPELINE_COLLECTOR_H_
