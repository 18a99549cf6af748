// JudgeCollector: what each judge (judges.names, issue 29) says of the
// served lists and how far the judges agree, rendered at scrape time from a
// stream::PipelineSnapshot (its judge_* fields, ppi, coverage, agreement).
//
// Per variant (judges' series have no segments), window ("all" since the
// state began, then each aggregation window) and judge:
//   rankwatch_judge_<m>_mean{k, judge}   measure m under that judge's
//                                        grades alone; with the state's
//                                        _window_lists, _window_sum_values,
//                                        _window_sum_squares gauges, as the
//                                        main rankwatch_<m>_* families
//   rankwatch_judge_<m>_lists_total,     what this process folded in
//   _sum_total, _squares_total{k, judge} (GroupFlow: never go backwards)
//   rankwatch_judge_coverage_mean{k, judge} (+ _window_*): the share of the
//                                        served top-k docs the judge labelled
//   rankwatch_judge_unjudged_mean{k} (+ _window_*): the share no judge
//                                        labelled
// With judges.ppi, per variant, main series (labels measure, k) and window:
//   rankwatch_judge_ppi_estimate, _lower, _upper, _lambda, _classical,
//   _classical_lower, _classical_upper, _naive   (no sample while the
//                                        estimate is undefined)
//   rankwatch_judge_ppi_lists{labelled}  the items: labelled ("true") and
//                                        the others ("false")
//   rankwatch_judge_ppi_info{trusted, cheap} 1
// Per experiment and treatment: rankwatch_judge_coverage_flagged{k} 0/1.
//
// With two judges or more, per pair (labels first, second: in judges.names
// order) and window ("all" since start; in impression mode also each
// aggregation window, over its whole buckets):
//   rankwatch_judge_agreement_pairs          items both judges graded:
//                                            (request, doc) of served docs
//                                            of finalized lists in
//                                            impression mode, (query, doc)
//                                            of the judgments table in
//                                            qrels mode
//   rankwatch_judge_agreement_only{judge}    items that judge graded and
//                                            the pair's other did not
//   rankwatch_judge_agreement{statistic}     kappa (Cohen's), weighted_kappa
//                                            (linear weights), alpha
//                                            (Krippendorff's, ordinal)
//   rankwatch_judge_agreement_lower,         their 95% intervals
//   rankwatch_judge_agreement_upper
// A statistic that is undefined (fewer than two items, or every grade the
// same) has no sample; an interval that is undefined neither.
//
// Values are per replica: of the input partitions it holds (impression
// mode), or of the whole table (qrels mode agreement: every replica reads
// all the judgments). The PPI series the snapshot keeps internally (the
// sums behind an estimate) are never exported as series of their own.
// Nothing is exported without judges.
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter {

class JudgeCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_
