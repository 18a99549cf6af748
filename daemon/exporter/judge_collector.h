// JudgeCollector: how far the judges agree (judges.names, issue 29),
// rendered at scrape time from a stream::PipelineSnapshot. Per pair of
// judges (labels first, second: in judges.names order):
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
// mode), or of the whole table (qrels mode, every replica reads all the
// judgments). Nothing is exported without two judges or more.
//
// Stateless: Collect() reads only the snapshot it is given (see probe.h)
// and may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/stream/snapshot.h"

namespace rankwatch::exporter {

class JudgeCollector : public SnapshotCollector {
 public:
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_JUDGE_COLLECTOR_H_
