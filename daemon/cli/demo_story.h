// The story `rankwatch demo` tells on the terminal: every few seconds the
// daemon's /metrics page is read into a DemoSnapshot (ParseMetricsSnapshot,
// a small parser of the Prometheus text format for the few families the
// story needs), and DemoStory turns consecutive snapshots into one line per
// change ("B is now worse than A on ndcg@10: ...", "no events for 30 s",
// SRM detected or cleared, interleaving verdicts) and a periodic table
// (variants x headline measures with intervals, the experiments' verdicts
// and, with schema.covariate, their regression-adjusted differences,
// events/s).
//
// Why /metrics rather than the pipeline: the demo runs a server::Daemon,
// which keeps its pipeline private behind its mutex; the text it serves is
// the same the user, Prometheus and the alerts read, so the terminal never
// says something /metrics does not.
//
// Pure functions of their inputs: time comes in as `now_ms` (monotonic,
// milliseconds since the demo started; the table shows it as elapsed time),
// nothing is printed here. A DemoStory is used from one thread.
#ifndef RANKWATCH_DAEMON_CLI_DEMO_STORY_H_
#define RANKWATCH_DAEMON_CLI_DEMO_STORY_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rankwatch::cli {

// A headline series, e.g. {"ndcg", "10"}: a measure and its `k` label.
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

// The states of rankwatch_ab_verdict_state and
// rankwatch_interleaving_verdict_state.
enum class Verdict {
  kNoData,
  kInconclusive,
  kBetter,
  kWorse,
  kSampleRatioMismatch,
};
std::string_view VerdictName(Verdict v);

// One variant summed over its segments, since start.
struct VariantFigures {
  std::string variant;
  int64_t lists = 0;  // Lists scored (the first headline's _count).
  std::vector<Estimate> headlines;  // Parallel to the snapshot's headlines.
};

// A query among a comparison's top movers (rankwatch_query_mover_*, with
// statistics.export_query_movers > 0).
struct MoverFigures {
  std::string query;
  double difference = std::numeric_limits<double>::quiet_NaN();
  double contribution = std::numeric_limits<double>::quiet_NaN();
};

// The regression-adjusted figures of a comparison (schema.covariate:
// rankwatch_ab_adjusted_*), a test of their own beside the unadjusted one.
struct AdjustedFigures {
  // Running always-valid interval (intersection since start) and the
  // latest look's, around the same adjusted difference, as for AbFigures.
  Estimate difference;
  Estimate look;
  // Adjusted over unadjusted variance (about 1 - rho^2); NaN if undefined.
  double variance_ratio = std::numeric_limits<double>::quiet_NaN();
  // rankwatch_ab_adjusted_status: adjusted, no_covariate_variance (the
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
  // Set when the daemon exports adjusted figures (schema.covariate).
  bool has_adjusted = false;
  AdjustedFigures adjusted;
};

// A series the decision read (rankwatch_ab_decision_input and _ci_*).
struct DecisionInputFigures {
  bool guardrail = false;
  Headline series;
  int input = 0;  // +1 supports shipping, -1 blocks it, 0 neither yet.
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  double margin = std::numeric_limits<double>::quiet_NaN();  // Guardrails.
  bool relative = false;  // The margin is a fraction of the baseline mean.
};

// One experiment's decision for a treatment (rankwatch_ab_decision).
struct DecisionFigures {
  std::string experiment;
  std::string baseline;
  std::string treatment;
  std::string value;  // ship, no_ship, keep_running, invalid.
  std::vector<DecisionInputFigures> inputs;  // Primary series first.
};

// "do not ship B: ndcg@10 worse [-0.081, -0.003]; guardrail precision@10
// beyond its margin -0.05 [-0.12, -0.06]": the decision and the series
// behind it, from the gauges (the daemon's full sentences are on the page
// and in /api/v1/summary).
std::string FormatDecision(const DecisionFigures& d);

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
  double level = 0.95;          // rankwatch_ab_confidence_level.
  std::string covariate;        // rankwatch_ab_covariate_info; "" without one.
  int64_t events_consumed = 0;  // Over all topics.
  std::vector<VariantFigures> variants;  // Sorted by name.
  std::vector<AbFigures> ab;
  std::vector<SrmFigures> srm;
  std::vector<DecisionFigures> decisions;
  std::vector<InterleavingFigures> interleaving;
  // Multileaving (more than two teams): per experiment its teams best
  // first (rankwatch_interleaving_rank) and its winner ("" until one).
  std::map<std::string, std::vector<std::string>> multileaving_ranking;
  std::map<std::string, std::string> multileaving_winner;
};

// Reads the figures of `headlines` from a /metrics page (text format
// 0.0.4). A variant's interval is the normal-approximation interval of its
// mean at the page's confidence level, from _sum, _count and
// _squares_total summed over segments, lists taken as independent (a
// description of the variant, not the A/B test: that one is the daemon's).
// A malformed line is an error naming its line number.
StatusOr<DemoSnapshot> ParseMetricsSnapshot(
    std::string_view text, const std::vector<Headline>& headlines);

// "-0.21 [-0.25, -0.17]": decimals enough for the interval's width (two at
// least, four at most); `sign` forces a leading + on positive numbers.
std::string FormatEstimate(const Estimate& e, bool sign);

// A/B difference with its always-valid interval: FormatEstimate of the
// running interval when it holds the estimate; else, so that no estimate is
// printed beside an interval that excludes it, the latest look's interval
// and the running one, labelled: "-0.048 [-0.069, -0.027] at this look;
// since start [-0.027, -0.007]".
std::string FormatAbDifference(const AbFigures& ab);

// The same for a running interval and the latest look's around one
// estimate (`running.value`); FormatAbDifference(ab) is
// FormatSequential(ab.difference, ab.look).
std::string FormatSequential(const Estimate& running, const Estimate& look);

// The regression-adjusted cell of the A/B table: the adjusted difference
// with its own always-valid interval, labelled as FormatSequential labels
// it, and the variance ratio: "-0.041 [-0.060, -0.022], variance x0.64".
// Without adjustment (status no_covariate_variance) it says so instead of
// a ratio; "invalid input" alone for invalid_input.
std::string FormatAdjusted(const AdjustedFigures& a);

// The key of one A/B comparison (experiment, treatment, headline) in the
// story's maps.
std::string AbKey(std::string_view experiment, std::string_view treatment,
                  std::string_view measure, std::string_view k);

class DemoStory {
 public:
  // No events for this long is a line of its own.
  static constexpr int64_t kStallMs = 30'000;

  // The lines for what changed since the previous snapshot. The first
  // snapshot sets the scene silently (except verdicts already decided).
  std::vector<std::string> Observe(const DemoSnapshot& s, int64_t now_ms);

  // The periodic table; events/s since the previous table (or the first
  // observation).
  std::string Table(const DemoSnapshot& s, int64_t now_ms);

 private:
  void ObserveAb(const DemoSnapshot& s, std::vector<std::string>* lines);
  void ObserveSrm(const DemoSnapshot& s, std::vector<std::string>* lines);
  void ObserveDecisions(const DemoSnapshot& s, std::vector<std::string>* lines);
  void ObserveInterleaving(const DemoSnapshot& s,
                           std::vector<std::string>* lines);
  void ObserveEvents(const DemoSnapshot& s, int64_t now_ms,
                     std::vector<std::string>* lines);

  bool started_ = false;
  // Events: the count and when it last grew; whether a stall was told.
  int64_t events_ = 0;
  int64_t events_changed_ms_ = 0;
  bool stalled_ = false;
  int64_t table_ms_ = 0;
  int64_t table_events_ = 0;
  // Last verdict per A/B key (experiment/treatment/headline), SRM flag per
  // experiment, interleaving verdict per experiment.
  std::map<std::string, Verdict> ab_;
  std::map<std::string, bool> srm_;
  // Last decision per experiment/treatment.
  std::map<std::string, std::string> decisions_;
  std::map<std::string, Verdict> interleaving_;
};

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_STORY_H_
