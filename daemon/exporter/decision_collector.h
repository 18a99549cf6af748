// DecisionCollector: the experiments' decisions (stream::DecisionBoard,
// docs/statistics.md "Decisions") as gauges, rendered at scrape time from a
// stream::PipelineSnapshot.
//
// Per experiment and treatment (labels experiment, variant, baseline):
//   rankwatch_ab_decision{decision}   a state set: 1 for the current
//                                     decision (ship, no_ship,
//                                     keep_running, invalid), 0 for the
//                                     three others
//   rankwatch_ab_decision_since_look  the look that first gave it
// Per experiment, treatment and series the rule reads (labels also role =
// "primary" | "guardrail", measure, k):
//   rankwatch_ab_decision_input       +1 supports shipping (better,
//                                     non-inferior), -1 blocks it (worse,
//                                     inferior), 0 neither yet
//   rankwatch_ab_decision_ci_lower,   the always-valid interval the rule
//   rankwatch_ab_decision_ci_upper    read (Bonferroni-corrected for k > 1
//                                     primary series)
// Per guardrail (labels as above, without role):
//   rankwatch_ab_guardrail_margin{kind="absolute"|"relative"}
//                                     the configured margin: in the
//                                     series' units, or a fraction of the
//                                     baseline's mean; what the alert
//                                     RankwatchTreatmentSignificantlyWorse
//                                     reads to judge guardrails over every
//                                     replica's sums
// Cardinality per experiment: treatments x (4 + 1 + 3 x (primary series +
// guardrails) + guardrails).
//
// Values are per replica, from the partitions it holds, as every
// rankwatch_ab_* gauge; the alert judges the sums of all replicas.
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_DECISION_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_DECISION_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class DecisionCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_DECISION_COLLECTOR_H_
