// DecisionBoard: one decision per experiment and treatment (issue 27), from
// the experiment's primary series and guardrails, by a rule in the spirit
// of Spotify's ("Risk-aware product decisions in A/B tests with multiple
// metrics", Schultzberg, Ankargren and Franberg, 2024):
//
//   invalid       the experiment fails its sample-ratio check, or a series
//                 it reads has statistics that are not finite: no figure of
//                 it can be trusted until that is fixed;
//   no_ship       a primary series is significantly worse, or a guardrail is
//                 worse than its margin (inferior);
//   ship          a primary series is significantly better and every
//                 guardrail is non-inferior (worse by less than its margin);
//   keep_running  anything else (too few lists, nothing significant yet,
//                 a guardrail still undecided).
//
// Before the experiment's minimum sample (experiments[].min_lists per arm
// and min_duration of event time since its first list: MinimumSample) only
// a guardrail beyond its margin may call it (no_ship); anything else is
// keep_running, with a reason saying what is missing and when, at the
// current rate, it will be met.
//
// Every test reads an always-valid interval, so a decision may be read at
// every look. A primary series is significant when its interval excludes
// 0; with k primary series at level 1 - alpha / k (Bonferroni: one of k
// chances to ship). With one primary series (the default) that is the
// comparison's own running interval, the one every view shows. A guardrail
// is non-inferior when its interval (level 1 - alpha, no correction: every
// guardrail must pass, an intersection-union test) lies on the better side
// of -margin, inferior when it lies entirely beyond it. A relative margin
// is a fraction of the baseline's mean at the look. docs/statistics.md
// ("Decisions") gives the rule's error rates.
//
// Ownership: reads the configured experiments (which must outlive it) and,
// at each Update(), the monitor's comparisons. Thread-safety: none; the
// pipeline's owner serializes access, as for ExperimentMonitor.
#ifndef RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_H_
#define RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/experiments/experiments.h"
#include "metrics/ab_stats.h"

namespace rankwatch::stream {

enum class DecisionValue {
  kKeepRunning = 0,
  kShip = 1,
  kNoShip = 2,
  kInvalid = 3,
};
inline constexpr int kNumDecisionValues = 4;
// "keep_running", "ship", "no_ship", "invalid": the names replay's JSON,
// the API and the `decision` label use.
std::string_view DecisionValueName(DecisionValue v);

// What one series says, for the rule.
enum class InputState {
  kNoData = 0,    // Too few lists for an interval yet.
  kBetter,        // Primary: the interval excludes 0 on the better side.
  kWorse,         // Primary: it excludes 0 on the worse side.
  kInconclusive,  // Primary: it contains 0.
  kNonInferior,   // Guardrail: it lies on the better side of -margin.
  kInferior,      // Guardrail: it lies entirely beyond -margin.
  kUndecided,     // Guardrail: it contains -margin.
  // Its statistics are not finite (a mean or variance that overflowed):
  // the decision is invalid rather than waiting for an interval.
  kInvalid,
};
inline constexpr int kNumInputStates = 8;
std::string_view InputStateName(InputState s);
// What an input says to the decision: +1 supports shipping (better,
// non-inferior), -1 blocks it (worse, inferior), 0 neither yet
// (rankwatch_ab_decision_input, the demo's table).
int InputSign(InputState s);

// The rule alone, from the states of the primary series and guardrails;
// before the minimum sample (`minimum_met` false) only a guardrail beyond
// its margin calls it.
[[nodiscard]] DecisionValue Decide(bool sample_ratio_mismatch,
                                   std::span<const InputState> primaries,
                                   std::span<const InputState> guardrails,
                                   bool minimum_met = true);

// An experiment's minimum sample at a look: lists (units with schema.unit)
// per arm against min_lists, event time since its first list against
// min_duration, and when, at the current rate, both will be met.
struct MinimumSample {
  int64_t baseline_lists = 0;
  int64_t treatment_lists = 0;
  int64_t min_lists = 0;
  int64_t elapsed_ms = 0;  // Since the first list; 0 before any.
  int64_t min_duration_ms = 0;
  int64_t first_list_ms = 0;  // Event time of the first list (if any).
  bool units = false;         // Counted in units (schema.unit).
  // Event time when both are met at the rate so far; -1 when unknown (no
  // list yet, or no event time between the first list and the look).
  int64_t met_at_ms = -1;
  bool met() const {
    return baseline_lists >= min_lists && treatment_lists >= min_lists &&
           elapsed_ms >= min_duration_ms;
  }
};
// From the counts, the first list's event time (ExperimentMonitor::
// kNoEventTime: none yet) and the look's event time.
[[nodiscard]] MinimumSample MinimumSampleAt(int64_t baseline_lists,
                                            int64_t treatment_lists,
                                            int64_t first_list_ms,
                                            int64_t now_ms,
                                            const config::ExperimentConfig& e);
// "minimum sample not reached: ..." (what is missing, and when it is met).
[[nodiscard]] std::string MinimumSentence(const MinimumSample& m);

// A primary series' state from its interval of treatment - baseline.
[[nodiscard]] InputState PrimaryState(const metrics::ConfidenceInterval& ci,
                                      bool has_interval, bool higher_is_better);
// A guardrail's state from its interval and its absolute margin (>= 0).
[[nodiscard]] InputState GuardrailState(const metrics::ConfidenceInterval& ci,
                                        bool has_interval,
                                        bool higher_is_better, double margin);

// One series' part in a decision, as the rule read it.
struct DecisionInput {
  bool guardrail = false;
  config::SeriesRef ref;
  std::string series;  // "ndcg@10", as config::FormatSeriesRef.
  // How the reasons name it: SeriesSpec::label (the user's spelling, else
  // trec_eval's name), as every human output's table does.
  std::string label;
  size_t comparison = 0;  // Into ExperimentMonitor::comparisons().
  bool higher_is_better = true;
  int64_t baseline_count = 0;
  int64_t treatment_count = 0;
  double baseline_mean = 0;
  double difference = 0;           // Treatment - baseline, this look.
  double relative_difference = 0;  // difference / baseline mean (NaN: none).
  // The always-valid interval the rule read, and its level: the
  // comparison's own (statistics.level), or for k > 1 primary series the
  // decision's Bonferroni-corrected one (level 1 - alpha / k).
  bool has_interval = false;
  metrics::ConfidenceInterval interval;
  double level = 0;
  // Guardrails: the margin, absolute (>= 0), as configured or (relative)
  // computed from the baseline's mean at this look; and the configured
  // fraction when relative (else 0).
  double margin = 0;
  double relative_margin = 0;
  bool relative = false;
  InputState state = InputState::kNoData;
  // The series' running always-valid test saw its estimate leave its
  // interval `effect_changes` times, the latest at event time
  // `effect_changed_ms` (-1: never); its interval counts from that look
  // (metrics::SequentialTest).
  int64_t effect_changes = 0;
  int64_t effect_changed_ms = -1;
  // kInvalid: the arms' figures as read (for the reason).
  double baseline_variance = 0;
  double treatment_mean = 0;
  double treatment_variance = 0;
};

struct Decision {
  size_t experiment = 0;  // Into the configured experiments.
  std::string name;
  std::string baseline;
  std::string treatment;
  DecisionValue value = DecisionValue::kKeepRunning;
  // Sentences a person can act on, most important first.
  std::vector<std::string> reasons;
  std::vector<DecisionInput> inputs;  // Primary series, then guardrails.
  MinimumSample minimum;
  // The look that first gave the current value (0 when it has held since
  // the first look) and its event time ("now" of its windows).
  int64_t since_look = 0;
  int64_t since_event_ms = 0;
};

class DecisionBoard {
 public:
  // `experiments` must outlive the board; `fields` (schema.fields) give
  // the direction of a guardrail on a field.
  DecisionBoard(const std::vector<config::ExperimentConfig>* experiments,
                const config::StatisticsConfig& statistics,
                std::vector<config::ResultFieldConfig> fields = {});
  DecisionBoard(const DecisionBoard&) = delete;
  DecisionBoard& operator=(const DecisionBoard&) = delete;

  // Decides again after a look of `monitor` (its comparisons of window
  // "all"); `series` are its aggregator's series.
  void Update(const ExperimentMonitor& monitor,
              const std::vector<SeriesSpec>& series, int64_t now_ms);

  // After a configuration reload: keeps `previous`'s "since" of every
  // decision whose experiment, treatment and value are unchanged. The
  // Bonferroni-corrected sequential tests start again (their next look
  // reads the cumulative sums, as after a restart).
  void AdoptState(const DecisionBoard& previous);

  // Experiment-major, then treatment; empty before the first Update().
  const std::vector<Decision>& decisions() const { return decisions_; }

 private:
  struct Corrected {
    size_t experiment = 0;
    std::string treatment;
    std::string series;
    metrics::SequentialTest test;
    int64_t changed_ms = -1;  // Event time of its latest effect change.
  };
  Corrected* CorrectedTest(size_t experiment, const std::string& treatment,
                           const std::string& series, size_t primaries);
  void Decide(const ExperimentMonitor& monitor,
              const std::vector<SeriesSpec>& series, int64_t now_ms,
              Decision* d);
  MinimumSample MinimumOf(const ExperimentMonitor& monitor, const SrmState* srm,
                          int64_t now_ms, const Decision& d) const;
  // One input's figures from its comparison (null: not computed).
  void Fill(const config::SeriesRef& ref, const Comparison* c,
            const std::vector<Comparison>& comparisons,
            const std::vector<SeriesSpec>& series, DecisionInput* in) const;

  const std::vector<config::ExperimentConfig>* experiments_;
  config::StatisticsConfig statistics_;
  std::vector<config::ResultFieldConfig> fields_;  // schema.fields.
  std::vector<Decision> decisions_;
  std::vector<Corrected> corrected_;
};

// The sentences of a decision (Decision::reasons), from its value, inputs,
// minimum sample (`minimum`: null when met or not read) and, when invalid,
// the experiment's sample-ratio state.
[[nodiscard]] std::vector<std::string> DecisionReasons(
    DecisionValue value, std::span<const DecisionInput> inputs,
    const SrmState* srm, const MinimumSample* minimum = nullptr);

// The decision as one JSON object, the same in /api/v1/summary
// (experiments[].decisions[]) and replay's JSON
// (experiments.<name>.treatments.<variant>.decision): treatment, value,
// reasons, since_look, since_event_ms, minimum (baseline_lists,
// treatment_lists, min_lists, elapsed_ms, min_duration_ms, met, met_at_ms),
// effect_changes (one object per input whose effect changed: series,
// changes, event_ms) and inputs (role, series, state, counts, difference,
// relative_difference, ci_lower, ci_upper, level, effect_changes,
// effect_changed_ms, and for guardrails margin and relative_margin).
void WriteDecisionJson(const Decision& d, JsonWriter* out);
// Its "minimum" key and object.
void WriteMinimumJson(const MinimumSample& m, JsonWriter* out);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_EXPERIMENTS_DECISIONS_H_
