// DemoSnapshot: the figures the demo's terminal story (demo_story.h) tells,
// taken from the pipeline's read model. DemoSnapshotOf() reads a
// stream::PipelineSnapshot, the one the exporter renders /metrics from and
// /api/v1/summary and the status page are rendered from, so that the
// terminal never says something those views do not: each figure here is
// the snapshot field a gauge of /metrics carries (named next to it), with
// the same choices (window "all", the running always-valid interval and
// the latest look's, a state's current value).
//
// Plain values and a pure function; no lock, no I/O.
#ifndef RANKWATCH_DAEMON_CLI_DEMO_SNAPSHOT_H_
#define RANKWATCH_DAEMON_CLI_DEMO_SNAPSHOT_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::cli {

// A headline series, e.g. {"ndcg", "10"}: a measure (or a field of
// schema.fields) and its `k` label, as SeriesSpec::name and k_label.
// Label() spells it as the configuration does: "ndcg@10", and an uncut
// series (k "all": a field of results events, map) by its name alone.
struct Headline {
  std::string measure;
  std::string k;
  std::string Label() const { return k == "all" ? measure : measure + "@" + k; }
  bool operator==(const Headline&) const = default;
};

// An estimate and its interval; NaN when unknown, +-Inf bounds without
// inference.
struct Estimate {
  double value = std::numeric_limits<double>::quiet_NaN();
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
};

// The states of a comparison's and an interleaving experiment's verdict
// (stream::VerdictState, rankwatch_ab_verdict_state and
// rankwatch_interleaving_verdict_state).
enum class Verdict {
  kNoData,
  kInconclusive,
  kBetter,
  kWorse,
  kSampleRatioMismatch,
};

// One variant summed over its segments, since start: what this process
// scored (GroupFlow, the rankwatch_<measure>_count, _sum and
// _squares_total counters).
struct VariantFigures {
  std::string variant;
  int64_t lists = 0;  // Lists scored (the first headline's count).
  std::vector<Estimate> headlines;  // Parallel to the snapshot's headlines.
};

// A query among a comparison's top movers (the first
// statistics.export_query_movers of PipelineSnapshot::FindMovers, as
// rankwatch_query_mover_* exports them).
struct MoverFigures {
  std::string query;
  double difference = std::numeric_limits<double>::quiet_NaN();
  double contribution = std::numeric_limits<double>::quiet_NaN();
};

// The regression-adjusted figures of a comparison (schema.covariate:
// stream::AdjustedFigures, rankwatch_ab_adjusted_*), a test of their own
// beside the unadjusted one.
struct AdjustedFigures {
  // Running always-valid interval (intersection since start) and the
  // latest look's, around the same adjusted difference, as for AbFigures.
  Estimate difference;
  Estimate look;
  // Adjusted over unadjusted variance (about 1 - rho^2); NaN if undefined.
  double variance_ratio = std::numeric_limits<double>::quiet_NaN();
  // metrics::AdjustmentStatusName: adjusted, no_covariate_variance (the
  // figures are the pairs' unadjusted ones), invalid_input; "" if unknown.
  std::string status;
};

// One treatment against its baseline on one headline (window "all").
struct AbFigures {
  std::string experiment;
  std::string baseline;
  std::string treatment;
  Headline headline;
  // The running always-valid interval (the intersection since start, what
  // the verdict reads) around the latest difference; `look` is the latest
  // look's own always-valid interval around the same difference.
  Estimate difference;
  Estimate look;
  Verdict verdict = Verdict::kNoData;
  std::vector<MoverFigures> movers;  // By rank; empty unless exported.
  // Set when the comparison has adjusted figures (schema.covariate).
  bool has_adjusted = false;
  AdjustedFigures adjusted;
};

// A series the decision read (stream::DecisionInput;
// rankwatch_ab_decision_input and _ci_*).
struct DecisionInputFigures {
  bool guardrail = false;
  Headline series;
  int input = 0;  // +1 supports shipping, -1 blocks it, 0 neither yet.
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  // Guardrails: the configured margin, a fraction of the baseline mean
  // when `relative` (rankwatch_ab_guardrail_margin).
  double margin = std::numeric_limits<double>::quiet_NaN();
  bool relative = false;
  // Times its estimate left its running interval (an effect that changed)
  // and the event time of the latest; the interval counts from then.
  int64_t effect_changes = 0;
  int64_t effect_changed_ms = -1;
};

// One experiment's decision for a treatment (stream::Decision).
struct DecisionFigures {
  std::string experiment;
  std::string baseline;
  std::string treatment;
  std::string value;  // ship, no_ship, keep_running, invalid.
  std::vector<DecisionInputFigures> inputs;  // Primary series first.
  // The minimum sample (stream::MinimumSample): why a decision keeps
  // running before it is met. Lists are units with schema.unit.
  bool minimum_met = true;
  int64_t baseline_lists = 0;
  int64_t treatment_lists = 0;
  int64_t min_lists = 0;
  int64_t elapsed_ms = 0;  // Event time since the experiment's first list.
  int64_t min_duration_ms = 0;
};

struct SrmFigures {
  std::string experiment;
  bool detected = false;
  double p_value = 1;  // Sequential.
};

struct InterleavingFigures {
  std::string experiment;
  std::string incumbent;
  std::string challenger;
  double preference = std::numeric_limits<double>::quiet_NaN();
  double p_value = 1;  // Sequential.
  int64_t impressions = 0;
  Verdict verdict = Verdict::kNoData;
};

struct DemoSnapshot {
  std::vector<Headline> headlines;
  double level = 0.95;                   // statistics.level.
  std::string covariate;                 // schema.covariate; "" without one.
  int64_t events_consumed = 0;           // Over all topics.
  std::vector<VariantFigures> variants;  // Sorted by name.
  std::vector<AbFigures> ab;  // By experiment, treatment, then headline.
  std::vector<SrmFigures> srm;
  std::vector<DecisionFigures> decisions;
  std::vector<InterleavingFigures> interleaving;
  // Multileaving (more than two teams): per experiment its teams best
  // first (the Copeland ranking) and its winner ("" until one).
  std::map<std::string, std::vector<std::string>> multileaving_ranking;
  std::map<std::string, std::string> multileaving_winner;
  // FormatSetAside (replay_report.h): what was rejected, by reason, and
  // set aside (ignored, orphaned, duplicates...), as replay's table has it.
  std::string set_aside;
};

// The story's figures of `headlines` in `p`. A variant's interval is the
// normal-approximation interval of its mean at statistics.level, from the
// count, sum and sum of squares summed over its segments, lists taken as
// independent (a description of the variant, not the A/B test: that one
// is the comparison's). A/B figures are those of the window-"all"
// comparisons of a quality series among `headlines`.
DemoSnapshot DemoSnapshotOf(const stream::PipelineSnapshot& p,
                            const std::vector<Headline>& headlines);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_SNAPSHOT_H_
