// For tests only: a small story of two judges whose figures are worked
// out by hand below, shared by the tests of every view that renders the
// judge figures (judge_report_test, replay_report_test, summary_test and
// the status page's Chromium test), so that each asserts the same
// hand-computed values.
//
// Configuration: P@2 only, cutoff 2, variants A and B, windows [5m],
// judges human (trusted) and llm (cheap), judges.ppi human/llm without
// tuning (lambda = 1), experiment "ranker" A vs B on P@2. Seven lists of
// two docs each, a second apart (all inside the 5m window); grades per
// doc (- = not labelled):
//   r1 A [a b]  human 1 0   llm 1 1
//   r2 A [c d]  human - -   llm 0 1
//   r3 A [e f]  human - -   llm 1 1
//   r7 A [m n]  human 0 0   llm 0 1
//   r4 B [g h]  human 1 1   llm 1 0
//   r5 B [i j]  human - -   llm - -
//   r6 B [k l]  human - -   llm 1 -
// A judge's P@2 counts the lists it labelled a doc of (an unlabelled doc
// of such a list counts as non-relevant); coverage and unjudged count
// every list:
//   A human P@2 (r1 .5, r7 0) = 0.25 over 2; llm (1, .5, 1, .5) = 0.75
//   over 4; human coverage (1, 0, 0, 1) = 0.5; llm coverage 1; unjudged 0.
//   B human P@2 (r4 1) = 1 over 1; llm (r4 .5, r6 .5) = 0.5 over 2; human
//   coverage (1, 0, 0) = 1/3; llm (1, 0, .5) = 0.5; unjudged (0, 1, .5) =
//   0.5 over 3.
//   Coverage check ranker B vs A at k 2: |0.5 - 0| > 0.05: flagged.
//   PPI of A's P@2: labelled (human judged it) r1 (y .5, f 1) and r7 (y 0,
//   f .5); others r2, r3 (f .5, 1). lambda 1: estimate = mean(f~) +
//   mean(y - f) = 0.75 + (-0.5) = 0.25; se^2 = var(f~)/N + var(y-f)/n =
//   0.0625/2 + 0/2 = 0.03125 (divisor N, n), se = 0.1767767; z(0.975) =
//   1.959964: [0.25 -+ 0.3464755] = [-0.0964755, 0.5964755]. Classical:
//   mean y 0.25, se = sqrt(0.125 / 2) = 0.25 (var divisor n - 1):
//   [-0.2399910, 0.7399910]. Naive: mean f over all four = 0.75.
//   PPI of B: one labelled list (r4), so no estimate (null); r5 has no
//   cheap value, r6 is its one other.
//   Agreement human/llm (both graded): a (1,1) b (0,1) g (1,1) h (1,0)
//   m (0,0) n (0,1): 6 pairs, observed 3/6, expected 3/6 x 4/6 + 3/6 x
//   2/6 = 1/2: kappa 0.
#ifndef RANKWATCH_DAEMON_STREAM_JUDGE_REPORT_TESTING_H_
#define RANKWATCH_DAEMON_STREAM_JUDGE_REPORT_TESTING_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::stream::judge_story {

// Experiment "ranker": treatment B against the baseline A, primary P@2.
// The judges' tests (this story, pipeline_judges_property_test.cc) compare
// their variants through it.
inline config::ExperimentConfig RankerExperiment() {
  config::ExperimentConfig e;
  e.name = "ranker";
  e.baseline = "A";
  e.treatments = {"B"};
  e.primary = {{metrics::Measure::kPrecision, 2}};
  return e;
}

inline config::Config JudgeStoryConfig() {
  config::Config c;
  c.join.window = std::chrono::seconds(10);
  c.metrics.measures = {metrics::Measure::kPrecision};
  c.metrics.cutoffs = {2};
  c.aggregation.variants = {"A", "B"};
  c.aggregation.windows = {std::chrono::minutes(5)};
  c.judges.names = {"human", "llm"};
  c.judges.ppi.trusted = "human";
  c.judges.ppi.cheap = "llm";
  c.judges.ppi.tune = false;
  c.experiments = {RankerExperiment()};
  return c;
}

// The story's events as JSON payloads (topic, payload), results first,
// lists a second apart from `start_ms`.
inline std::vector<std::pair<Topic, std::string>> JudgeStoryEvents(
    int64_t start_ms) {
  struct Doc {
    const char* id;
    int human;  // -1: not labelled.
    int llm;
  };
  struct List {
    const char* id;
    const char* variant;
    Doc docs[2];
  };
  const List lists[] = {
      {"r1", "A", {{"a", 1, 1}, {"b", 0, 1}}},
      {"r2", "A", {{"c", -1, 0}, {"d", -1, 1}}},
      {"r3", "A", {{"e", -1, 1}, {"f", -1, 1}}},
      {"r7", "A", {{"m", 0, 0}, {"n", 0, 1}}},
      {"r4", "B", {{"g", 1, 1}, {"h", 1, 0}}},
      {"r5", "B", {{"i", -1, -1}, {"j", -1, -1}}},
      {"r6", "B", {{"k", -1, 1}, {"l", -1, -1}}},
  };
  std::vector<std::pair<Topic, std::string>> out;
  int64_t t = start_ms;
  for (const List& l : lists) {
    const std::string id = l.id;
    out.emplace_back(Topic::kResults,
                     "{\"request_id\":\"" + id + "\",\"variant\":\"" +
                         l.variant + "\",\"timestamp\":" + std::to_string(t) +
                         ",\"results\":[\"" + l.docs[0].id + "\",\"" +
                         l.docs[1].id + "\"]}");
    for (const Doc& d : l.docs) {
      for (const auto& [judge, grade] :
           {std::pair<std::string, int>{"human", d.human}, {"llm", d.llm}}) {
        if (grade < 0) continue;
        out.emplace_back(Topic::kJudgments,
                         "{\"request_id\":\"" + id + "\",\"judge\":\"" + judge +
                             "\",\"timestamp\":" + std::to_string(t + 100) +
                             ",\"doc_id\":\"" + d.id +
                             "\",\"relevance\":" + std::to_string(grade) + "}");
      }
    }
    t += 1000;
  }
  return out;
}

// Feeds the story into `pipeline` (built from JudgeStoryConfig) and
// finalizes every list; false if an event was refused.
inline bool FeedJudgeStory(Pipeline* pipeline, int64_t start_ms) {
  int64_t offset = 0;
  bool ok = true;
  for (const auto& [topic, json] : JudgeStoryEvents(start_ms)) {
    ok = pipeline->OnPayload(topic, json, EventOrigin{0, offset++}) && ok;
  }
  pipeline->FinishAll();
  return ok;
}

}  // namespace rankwatch::stream::judge_story

#endif  // RANKWATCH_DAEMON_STREAM_JUDGE_REPORT_TESTING_H_
