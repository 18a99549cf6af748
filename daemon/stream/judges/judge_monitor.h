// JudgeMonitor: what each judge (judges.names) says of the served lists,
// live (issue 29). Per judge, every configured measure computed from that
// judge's grades alone, as if it were the only judge; per judge and
// cutoff, its coverage (the share of the served top-k docs it labelled);
// per cutoff, the share of the served top-k docs no judge labelled (what
// makes arms incomparable: unjudged docs count as non-relevant); and, with
// judges.ppi, the sums from which prediction-powered means follow
// (metrics::PpiMean over PpiMoments).
//
// A judge's measures count the lists it labelled a doc of (judged, not
// only served: in qrels mode a query's labels of unserved docs count), as
// trec_eval evaluates the topics of its qrels file only; its coverage
// counts every list.
//
// Its figures are the series of an Aggregator of its own, grouped by
// variant alone (segments would multiply them by the judges), so they have
// all that the main series have: running stats merged over the shards,
// sliding windows, histograms, this process's flow, checkpoints that name
// each series by what its values mean (a judge's name is part of that, so
// a restore under reordered or removed judges maps or drops by name), and
// reloads that keep what still means the same.
//
// A PPI item is a finalized list. It is labelled when the trusted judge
// graded a doc of it (FinalizedRequest::judges[trusted].judged is not
// empty) and both judges' values are defined; its truth y is the measure
// under the trusted judge's grades, its prediction f under the cheap
// judge's. Every other list with a defined cheap value is an unlabelled
// item. The estimate is unbiased only when the lists the trusted judge
// labels are a uniform random sample of all (docs/metrics-reference.md).
//
// Owned and driven by the pipeline's thread; not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_MONITOR_H_
#define RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_MONITOR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/join/join.h"
#include "metrics/measures.h"
#include "metrics/ppi.h"

namespace rankwatch::stream {

// What a series of the judge monitor holds, per finalized list.
enum class JudgeSeriesRole {
  kMeasure,   // A measure under one judge's grades.
  kCoverage,  // Share of the served top-k docs one judge labelled.
  kUnjudged,  // Share of the served top-k docs no judge labelled.
  // PPI of one measure: the trusted judge's value of a labelled list, the
  // cheap judge's of the same list, the cheap judge's of an unlabelled
  // list, and the product of the first two (their cross moment).
  kPpiTruth,
  kPpiCheap,
  kPpiOther,
  kPpiCross,
};

// One series' place in the layout.
struct JudgeSeries {
  JudgeSeriesRole role = JudgeSeriesRole::kMeasure;
  // Into judges.names; -1 for kUnjudged and the PPI roles.
  int32_t judge = -1;
  // kMeasure and the PPI roles: the main series (Aggregator::series() of
  // the pipeline) it computes; kCoverage and kUnjudged: -1.
  int32_t measure = -1;
  bool operator==(const JudgeSeries&) const = default;
};

// The series of a configuration: per judge, its measures (every main
// series but fields and click measures, which do not depend on judges) in
// the main series' order, then its coverage per cutoff; then the unjudged
// share per cutoff; then, with judges.ppi, the four PPI series of every
// such measure. `layout` receives each series' place (parallel).
std::vector<SeriesSpec> BuildJudgeSeries(const config::Config& config,
                                         const std::vector<SeriesSpec>& main,
                                         std::vector<JudgeSeries>* layout);

// The PPI sums of one main series from a group's figures: `stats[i]` is
// the count, sum and sum of squares of layout series i (over the whole run
// or a window). nullopt when the layout has no PPI for `measure`.
std::optional<metrics::PpiMoments> PpiMomentsOf(
    std::span<const JudgeSeries> layout, std::span<const WindowTotals> stats,
    int32_t measure);

class JudgeMonitor {
 public:
  // For a configuration with judges (judges.names not empty). `main` is
  // the pipeline's series, `evaluator` its evaluator (copied).
  JudgeMonitor(const config::Config& config,
               const std::vector<SeriesSpec>& main,
               const metrics::Evaluator& evaluator);
  JudgeMonitor(const JudgeMonitor&) = delete;
  JudgeMonitor& operator=(const JudgeMonitor&) = delete;

  // Folds in one finalized list of `variant` (the main aggregator's
  // resolved variant label).
  void Add(const FinalizedRequest& request, std::string_view variant);

  // A shard's state, for a checkpoint (the aggregator's record behind a
  // magic number of its own, so that Pipeline::DecodeShard tells it from
  // the agreement section).
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits = {});
  // DecodeShard in two steps (see Aggregator::StageShard): StageShard
  // changes nothing here, CommitShard creates the groups and installs it.
  [[nodiscard]] Status StageShard(int32_t shard, ByteReader* in,
                                  const CheckpointLimits& limits,
                                  Aggregator::StagedShard* staged) const;
  void CommitShard(Aggregator::StagedShard staged) {
    aggregator_.CommitShard(std::move(staged));
  }
  void DropShard(int32_t shard) { aggregator_.DropShard(shard); }
  // The magic number that starts EncodeShard's record.
  static constexpr uint32_t kMagic = 0x4a4d4e31;  // "JMN1"

  // A configuration reload (judges unchanged: a change of judges.* needs
  // a restart): series that still mean the same keep their state.
  void Reconfigure(const config::Config& next,
                   const std::vector<SeriesSpec>& main,
                   const metrics::Evaluator& evaluator);

  const Aggregator& aggregator() const { return aggregator_; }
  const std::vector<JudgeSeries>& layout() const { return layout_; }

 private:
  std::vector<std::string> judges_;
  int32_t ppi_trusted_ = -1;
  int32_t ppi_cheap_ = -1;
  metrics::ZeroRelevantPolicy zero_relevant_;
  metrics::Evaluator evaluator_;
  // Before aggregator_: its series are built with the layout.
  std::vector<JudgeSeries> layout_;
  Aggregator aggregator_;
  std::vector<SeriesSpec> main_;  // The main series the layout indexes.
  // Scratch: one score set per judge, the values of one list.
  std::vector<metrics::ListScores> scores_;
  std::vector<double> values_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_MONITOR_H_
