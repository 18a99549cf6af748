// ExperimentCollector: the pipeline's live A/B comparisons
// (stream::ExperimentMonitor) as gauges, rendered at scrape time from a
// stream::PipelineSnapshot.
//
// Labels of every per-comparison gauge: experiment, variant (the
// treatment), baseline, measure (e.g. "ndcg"), k ("10" or "all") and
// window ("all" or a configured window such as "5m"):
//   rankwatch_ab_baseline_requests, rankwatch_ab_treatment_requests
//   rankwatch_ab_baseline_mean, rankwatch_ab_treatment_mean (NaN if empty)
//   rankwatch_ab_difference            treatment - baseline (NaN if an arm
//                                      is empty)
//   rankwatch_ab_relative_difference   difference / baseline mean
//   rankwatch_ab_standard_error        Welch's (+Inf below two values)
//   rankwatch_ab_ci_lower, _ci_upper   Welch interval at statistics.level
//                                      (-Inf/+Inf without inference)
//   rankwatch_ab_p_value               Welch two-sided p-value (1 without)
// and for window="all" only, the always-valid mSPRT:
//   rankwatch_ab_sequential_p_value, rankwatch_ab_sequential_ci_lower,
//   rankwatch_ab_sequential_ci_upper   running minimum and intersection
//   rankwatch_ab_sequential_look_*     the latest look alone
//   rankwatch_ab_sequential_looks, rankwatch_ab_sequential_contradicted
// and, for quality measures (not judged), rankwatch_ab_p_value_bh,
// rankwatch_ab_verdict (+1/-1/0) and rankwatch_ab_verdict_state{state}.
// Per experiment: rankwatch_ab_units_total{variant},
// rankwatch_ab_expected_share{variant}, rankwatch_ab_srm_statistic,
// _srm_p_value, _srm_sequential_p_value, _srm_detected (and with a unit
// _srm_units_capped, rankwatch_ab_unit_conflicts_total);
// rankwatch_ab_primary_info{experiment, measure, k}. With schema.unit:
// rankwatch_ab_unit_info{unit} and the per-bucket counters
// rankwatch_ab_bucket_lists_total{variant, bucket} and
// rankwatch_ab_bucket_sum_total{variant, measure, k, bucket} of the
// primary series.
// With schema.covariate (regression adjustment), for window="all" rows:
//   rankwatch_ab_adjusted_difference, _relative_difference,
//   _standard_error, _ci_lower, _ci_upper, _p_value (Welch on the
//   adjusted arms), _sequential_p_value, _sequential_ci_lower,
//   _sequential_ci_upper, _sequential_look_* (the latest look alone),
//   _sequential_looks (their own mSPRT), _theta,
//   _variance_ratio, _baseline_pairs, _treatment_pairs and
//   rankwatch_ab_adjusted_status{status}; rankwatch_ab_covariate_info
//   {covariate} and rankwatch_covariate_events_total{reason}. For the rules
//   across replicas, per {variant, measure, k} of the primary series, the
//   pairs' power sums rankwatch_ab_covariate_pairs, _sum_y, _sum_x,
//   _sum_yy, _sum_xx, _sum_xy and, with schema.unit, per {bucket} too,
//   rankwatch_ab_covariate_bucket_pairs, _bucket_sum_y, _bucket_sum_x:
//   gauges of the state (what the rules sum) and the same as *_total
//   counters of what this process added.
// Plus rankwatch_experiment_info{experiment, baseline, variant} 1 per
// configured treatment (what PromQL joins on across replicas) and
// rankwatch_ab_confidence_level.
//
// The values are per replica: each sees only its partitions' lists. The
// recording rules in deploy/prometheus/rules.yml compute the same
// comparisons across replicas from the summed counters.
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_EXPERIMENT_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_EXPERIMENT_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class ExperimentCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_EXPERIMENT_COLLECTOR_H_
