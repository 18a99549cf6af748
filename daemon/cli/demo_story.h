// The story `rankwatch demo` tells on the terminal: every few seconds the
// demo takes the daemon's read model (server::Daemon::Snapshot, a
// stream::PipelineSnapshot) and reads it into a DemoSnapshot
// (demo_snapshot.h), and DemoStory turns consecutive snapshots into one
// line per change ("B is now worse than A on ndcg@10: ...", "no events for
// 30 s", SRM detected or cleared, interleaving verdicts) and a periodic
// table (variants x headline measures with intervals, the experiments'
// verdicts and, with schema.covariate, their regression-adjusted
// differences, events/s).
//
// Why the snapshot: it is the one the exporter renders /metrics from and
// /api/v1/summary and the status page are rendered from, so the terminal
// never says something the user, Prometheus and the alerts do not read;
// and in process, with no HTTP client and no text parser between the
// figures and the lines.
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

#include "daemon/cli/demo_snapshot.h"

namespace rankwatch::cli {

// "worse", "sample ratio mismatch": a verdict as the story says it.
std::string_view VerdictName(Verdict v);

// "do not ship B: ndcg@10 worse [-0.081, -0.003]; guardrail precision@10
// beyond its margin -0.05 [-0.12, -0.06]": the decision and the series
// behind it, short enough for one line (the daemon's full sentences,
// Decision::reasons, are on the page and in /api/v1/summary).
std::string FormatDecision(const DecisionFigures& d);

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
  // Per experiment/treatment/series: the effect changes already told.
  std::map<std::string, int64_t> effect_changes_;
  std::map<std::string, Verdict> interleaving_;
};

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_STORY_H_
