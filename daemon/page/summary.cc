#include "daemon/page/summary.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "daemon/exporter/families.h"
#include "daemon/stream/experiments/query_movers.h"
#include "daemon/stream/pipeline/judge_report.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"

namespace rankwatch::page {

namespace {

constexpr char kWindowAll[] = "all";  // As the `window` label of /metrics.

// Totals of one series for one label set: "all" and each window, and the
// history buckets.
struct SeriesTotals {
  stream::WindowTotals all;
  std::vector<stream::WindowTotals> windows;
  std::vector<stream::WindowTotals> history;
};

// The figures of one variant (over all its segment groups) or one group.
struct LabelTotals {
  std::string variant;
  const std::vector<std::string>* segment_values = nullptr;  // Null: all.
  int64_t requests = 0;
  int64_t without_relevant = 0;
  std::vector<SeriesTotals> series;
};

void Add(const stream::WindowTotals& from, stream::WindowTotals* to) {
  to->count += from.count;
  to->sum += from.sum;
  to->sum_of_squares += from.sum_of_squares;
}

// How many ring buckets make one history point, and how many points.
struct HistoryShape {
  int64_t buckets_per_point = 1;
  int64_t points = 0;
};

HistoryShape MakeHistoryShape(const stream::PipelineSnapshot& p) {
  int64_t longest = p.bucket_ms;
  for (int64_t w : p.windows_ms) longest = std::max(longest, w);
  const int64_t buckets = std::max<int64_t>(1, longest / p.bucket_ms);
  HistoryShape shape;
  shape.buckets_per_point = (buckets + kMaxHistoryPoints - 1) /
                            static_cast<int64_t>(kMaxHistoryPoints);
  shape.points =
      (buckets + shape.buckets_per_point - 1) / shape.buckets_per_point;
  return shape;
}

// Folds group `g` into `totals`, its windows ending at `now_ms`.
void AddGroup(const stream::PipelineSnapshot& p, size_t g, int64_t now_ms,
              const HistoryShape& shape, LabelTotals* totals) {
  const stream::GroupStats& group = p.groups[g];
  totals->requests += group.requests;
  totals->without_relevant += group.without_relevant;
  const std::vector<int64_t>& windows = p.windows_ms;
  std::vector<stream::WindowTotals> buckets(
      static_cast<size_t>(shape.points * shape.buckets_per_point));
  for (size_t s = 0; s < p.series.size(); ++s) {
    SeriesTotals& t = totals->series[s];
    const metrics::RunningStats& all = group.all[s];
    Add({all.count(), all.sum(), all.sum_of_squares()}, &t.all);
    // A group with no value yet has an empty ring (see PipelineCollector).
    if (all.count() == 0 || now_ms == INT64_MIN) continue;
    for (size_t w = 0; w < windows.size(); ++w) {
      Add(group.windows.Sum(s, now_ms, windows[w]), &t.windows[w]);
    }
    group.windows.BucketTotals(s, now_ms, buckets);
    for (size_t b = 0; b < buckets.size(); ++b) {
      Add(buckets[b],
          &t.history[b / static_cast<size_t>(shape.buckets_per_point)]);
    }
  }
}

LabelTotals EmptyTotals(const stream::PipelineSnapshot& p,
                        const HistoryShape& shape, std::string variant,
                        const std::vector<std::string>* segment_values) {
  LabelTotals t;
  t.variant = std::move(variant);
  t.segment_values = segment_values;
  t.series.resize(p.series.size());
  for (SeriesTotals& s : t.series) {
    s.windows.resize(p.windows_ms.size());
    s.history.resize(static_cast<size_t>(shape.points));
  }
  return t;
}

void WriteCountMean(const stream::WindowTotals& t, JsonWriter* out) {
  out->BeginObject();
  out->Key("count");
  out->Int(t.count);
  out->Key("mean");
  out->Double(t.mean());
  out->EndObject();
}

void WriteLabelTotals(const LabelTotals& t,
                      const std::vector<std::string>& segment_labels,
                      JsonWriter* out) {
  out->BeginObject();
  out->Key("variant");
  out->String(t.variant);
  out->Key("segments");
  out->BeginObject();
  if (t.segment_values != nullptr) {
    for (size_t i = 0;
         i < segment_labels.size() && i < t.segment_values->size(); ++i) {
      out->Key(segment_labels[i]);
      out->String((*t.segment_values)[i]);
    }
  }
  out->EndObject();
  out->Key("requests");
  out->Int(t.requests);
  out->Key("without_relevant");
  out->Int(t.without_relevant);
  out->Key("series");
  out->BeginArray();
  for (const SeriesTotals& s : t.series) {
    out->BeginObject();
    out->Key("windows");
    out->BeginArray();
    WriteCountMean(s.all, out);
    for (const stream::WindowTotals& w : s.windows) WriteCountMean(w, out);
    out->EndArray();
    out->Key("history_count");
    out->BeginArray();
    for (const stream::WindowTotals& h : s.history) out->Int(h.count);
    out->EndArray();
    out->Key("history_mean");
    out->BeginArray();
    for (const stream::WindowTotals& h : s.history) out->Double(h.mean());
    out->EndArray();
    out->EndObject();
  }
  out->EndArray();
  out->EndObject();
}

void WriteConfig(const stream::PipelineSnapshot& p,
                 const std::vector<std::string>& window_labels,
                 const HistoryShape& shape, JsonWriter* out) {
  out->Key("join_mode");
  out->String(config::JoinModeName(p.config.join.mode));
  out->Key("windows");
  out->BeginArray();
  out->BeginObject();
  out->Key("name");
  out->String(kWindowAll);
  out->Key("ms");
  out->Null();
  out->EndObject();
  for (size_t w = 0; w < window_labels.size(); ++w) {
    out->BeginObject();
    out->Key("name");
    out->String(window_labels[w]);
    out->Key("ms");
    out->Int(p.windows_ms[w]);
    out->EndObject();
  }
  out->EndArray();
  out->Key("segments");
  out->BeginArray();
  for (const std::string& s : p.config.aggregation.segments) {
    out->String(s);
  }
  out->EndArray();
  out->Key("series");
  out->BeginArray();
  for (const stream::SeriesSpec& s : p.series) {
    out->BeginObject();
    out->Key("name");
    out->String(s.trec_name);
    out->Key("measure");
    out->String(s.name);
    out->Key("k");
    out->String(s.k_label);
    out->Key("quality");
    out->Bool(s.quality);
    out->EndObject();
  }
  out->EndArray();
  // The history's time axis: points of point_ms each, the last one ending
  // with the bucket that holds window_now_ms.
  const int64_t now_ms = p.window_now_ms;
  out->Key("history");
  out->BeginObject();
  out->Key("point_ms");
  out->Int(shape.buckets_per_point * p.bucket_ms);
  out->Key("points");
  out->Int(shape.points);
  out->Key("end_ms");
  if (now_ms == INT64_MIN) {
    out->Null();
  } else {
    const int64_t b = p.bucket_ms;
    // Floor division: event times before 1970 are valid.
    const int64_t bucket =
        now_ms / b - ((now_ms % b != 0 && now_ms < 0) ? 1 : 0);
    out->Int((bucket + 1) * b);
  }
  out->EndObject();
}

void WriteMeans(const stream::PipelineSnapshot& p, const HistoryShape& shape,
                JsonWriter* out) {
  const std::vector<std::string>& segment_labels =
      p.config.aggregation.segments;
  const int64_t now_ms = p.window_now_ms;
  std::vector<LabelTotals> variants;
  std::vector<LabelTotals> groups;
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const stream::GroupStats& group = p.groups[g];
    auto it = std::find_if(
        variants.begin(), variants.end(),
        [&](const LabelTotals& v) { return v.variant == group.variant; });
    if (it == variants.end()) {
      variants.push_back(EmptyTotals(p, shape, group.variant, nullptr));
      it = variants.end() - 1;
    }
    AddGroup(p, g, now_ms, shape, &*it);
    groups.push_back(
        EmptyTotals(p, shape, group.variant, &group.segment_values));
    AddGroup(p, g, now_ms, shape, &groups.back());
  }
  out->Key("variants");
  out->BeginArray();
  for (const LabelTotals& v : variants) {
    WriteLabelTotals(v, segment_labels, out);
  }
  out->EndArray();
  out->Key("groups");
  out->BeginArray();
  if (!segment_labels.empty()) {
    for (const LabelTotals& g : groups) {
      WriteLabelTotals(g, segment_labels, out);
    }
  }
  out->EndArray();
}

void WriteArm(const metrics::ArmSummary& arm, JsonWriter* out) {
  out->BeginObject();
  out->Key("count");
  out->Int(arm.count);
  out->Key("mean");
  out->Double(arm.count > 0 ? arm.mean : NAN);
  out->EndObject();
}

void WriteInterval(double lower, double upper, JsonWriter* out) {
  out->BeginArray();
  out->Double(lower);
  out->Double(upper);
  out->EndArray();
}

// A window-"all" comparison's running always-valid figures; null for the
// other windows.
void WriteSequential(const stream::Comparison& c, JsonWriter* out) {
  if (!c.has_sequential) {
    out->Null();
    return;
  }
  const metrics::ConfidenceInterval ci = c.sequential.interval();
  out->BeginObject();
  out->Key("p_value");
  out->Double(c.sequential.p_value());
  out->Key("interval");
  WriteInterval(ci.lower, ci.upper, out);
  out->Key("looks");
  out->Int(c.sequential.looks());
  out->Key("contradicted");
  out->Bool(c.sequential.contradicted());
  // An effect that changed: the interval counts from the look of the
  // latest change (docs/statistics.md, "Effects that change").
  out->Key("effect_changes");
  out->Int(c.sequential.changes());
  out->Key("effect_changed_ms");
  out->Int(c.effect_changed_ms);
  out->EndObject();
}

void WriteComparison(const stream::Comparison& c,
                     const stream::PipelineSnapshot& p,
                     const std::vector<std::string>& window_labels,
                     JsonWriter* out) {
  const stream::SeriesSpec& series = p.series[c.series];
  out->BeginObject();
  out->Key("treatment");
  out->String(c.treatment);
  out->Key("series");
  out->String(series.trec_name);
  // How the page names it (issue 43): the decisions' reasons use it too.
  out->Key("label");
  out->String(series.label);
  out->Key("measure");
  out->String(series.name);
  out->Key("k");
  out->String(series.k_label);
  out->Key("window");
  out->String(c.window < 0 ? std::string(kWindowAll)
                           : window_labels[static_cast<size_t>(c.window)]);
  out->Key("quality");
  out->Bool(c.quality);
  out->Key("primary");
  out->Bool(c.primary);
  out->Key("baseline_arm");
  WriteArm(c.baseline_arm, out);
  out->Key("treatment_arm");
  WriteArm(c.treatment_arm, out);
  const metrics::WelchComparison& w = c.welch;
  const bool has_difference =
      c.baseline_arm.count > 0 && c.treatment_arm.count > 0;
  out->Key("difference");
  out->Double(has_difference ? w.difference : NAN);
  out->Key("relative_difference");
  out->Double(w.has_relative_difference ? w.relative_difference : NAN);
  out->Key("welch");
  out->BeginObject();
  out->Key("status");
  out->String(metrics::ComparisonStatusName(w.status));
  out->Key("standard_error");
  out->Double(w.standard_error);
  out->Key("p_value");
  out->Double(w.p_value);
  out->Key("interval");
  WriteInterval(w.interval.lower, w.interval.upper, out);
  out->EndObject();
  out->Key("sequential");
  WriteSequential(c, out);
  out->Key("p_value_bh");
  out->Double(c.has_sequential ? c.p_value_bh : NAN);
  if (c.has_adjusted) {
    out->Key("adjusted");  // The same object as replay's.
    stream::WriteAdjustedJson(c.adjusted, out);
  }
  if (c.primary && c.window < 0 && p.movers_capacity > 0) {
    // The snapshot holds the movers of every such comparison.
    const std::vector<metrics::QueryMover>* movers =
        p.FindMovers(c.experiment_index, c.treatment, c.series);
    out->Key("query_movers");
    stream::WriteQueryMoversJson(
        movers != nullptr ? std::span<const metrics::QueryMover>(*movers)
                          : std::span<const metrics::QueryMover>(),
        stream::MoverInterval::kOmit, out);
  }
  out->Key("verdict");
  out->Int(c.verdict);
  out->Key("state");
  out->String(stream::VerdictStateName(c.state));
  // The latest changes of `state` (bounded by the monitor), for the page's
  // markers; placed on the history's axis by their event time.
  out->Key("verdict_changes");
  out->BeginArray();
  for (const stream::VerdictChange& change : c.changes) {
    out->BeginObject();
    out->Key("event_ms");
    out->TimeOrNull(change.event_ms);
    out->Key("look");
    out->Int(change.look);
    out->Key("from");
    out->String(stream::VerdictStateName(change.from));
    out->Key("to");
    out->String(stream::VerdictStateName(change.to));
    out->EndObject();
  }
  out->EndArray();
  out->EndObject();
}

void WriteSrm(const stream::SrmState& srm, JsonWriter* out) {
  out->BeginObject();
  out->Key("variants");
  out->BeginArray();
  for (const std::string& v : srm.variants) out->String(v);
  out->EndArray();
  out->Key("expected_shares");
  out->BeginArray();
  for (double s : srm.shares) out->Double(s);
  out->EndArray();
  out->Key("counts");
  out->BeginArray();
  for (int64_t c : srm.counts) out->Int(c);
  out->EndArray();
  out->Key("chi_square_p_value");
  out->Double(srm.chi_square.p_value);
  out->Key("sequential_p_value");
  out->Double(srm.sequential.p_value());
  out->Key("detected");
  out->Bool(srm.detected);
  out->Key("capped");
  out->Bool(srm.capped);
  out->Key("unit_conflicts");
  out->Int(srm.unit_conflicts);
  out->EndObject();
}

void WriteExperiments(const stream::PipelineSnapshot& p,
                      const std::vector<std::string>& window_labels,
                      JsonWriter* out) {
  const std::vector<config::ExperimentConfig>& experiments =
      p.config.experiments;
  out->Key("experiments");
  out->BeginArray();
  for (size_t e = 0; e < experiments.size(); ++e) {
    out->BeginObject();
    out->Key("name");
    out->String(experiments[e].name);
    out->Key("baseline");
    out->String(experiments[e].baseline);
    out->Key("treatments");
    out->BeginArray();
    for (const std::string& t : experiments[e].treatments) out->String(t);
    out->EndArray();
    out->Key("level");
    out->Double(p.level);
    out->Key("units");
    out->Bool(p.units);
    out->Key("looks");
    out->Int(p.looks);
    out->Key("srm");
    if (e < p.srm.size()) {
      WriteSrm(p.srm[e], out);
    } else {
      out->Null();
    }
    // The decision per treatment (docs/statistics.md, "Decisions").
    out->Key("decisions");
    out->BeginArray();
    for (const stream::Decision& d : p.decisions) {
      if (d.experiment == e) stream::WriteDecisionJson(d, out);
    }
    out->EndArray();
    out->Key("comparisons");
    out->BeginArray();
    for (const stream::Comparison& c : p.comparisons) {
      if (c.experiment_index != e) continue;
      WriteComparison(c, p, window_labels, out);
    }
    out->EndArray();
    out->EndObject();
  }
  out->EndArray();
}

void WriteInterleavingCounts(std::string_view window,
                             const metrics::InterleavingCounts& c,
                             JsonWriter* out) {
  out->BeginObject();
  out->Key("window");
  out->String(window);
  out->Key("impressions");
  out->Int(c.impressions);
  out->Key("wins");
  out->BeginArray();
  out->Int(c.wins[0]);
  out->Int(c.wins[1]);
  out->EndArray();
  out->Key("ties");
  out->Int(c.ties);
  out->Key("no_click");
  out->Int(c.no_click);
  out->Key("preference");
  out->Double(metrics::Preference(c));
  out->Key("sign_test_p_value");
  out->Double(metrics::SignTestPValue(c.wins[0], c.wins[1]));
  out->EndObject();
}

// Every pair of teams (the first is the two-team view above), per-team
// clicks, the Copeland ranking and the winner: the page's pairwise matrix.
void WriteMultileaving(const stream::InterleavingState& s,
                       const std::vector<std::string>& window_labels,
                       JsonWriter* out) {
  out->Key("clicks");
  out->BeginArray();
  for (int64_t c : s.counts.clicks) out->Int(c);
  out->EndArray();
  out->Key("pairs");
  out->BeginArray();
  for (size_t p = 0; p < s.analysis.pairs.size(); ++p) {
    const metrics::PairAnalysis& a = s.analysis.pairs[p];
    out->BeginObject();
    out->Key("teams");
    out->BeginArray();
    out->Int(static_cast<int64_t>(a.first));
    out->Int(static_cast<int64_t>(a.second));
    out->EndArray();
    out->Key("windows");
    out->BeginArray();
    WriteInterleavingCounts(kWindowAll, s.counts.pairs[p], out);
    for (size_t w = 0; w < s.window_counts.size() && w < window_labels.size();
         ++w) {
      WriteInterleavingCounts(window_labels[w], s.window_counts[w].pairs[p],
                              out);
    }
    out->EndArray();
    out->Key("interval");
    WriteInterval(a.interval.lower, a.interval.upper, out);
    out->Key("sequential_p_value");
    out->Double(a.sequential_p_value);
    out->Key("adjusted_p_value");
    out->Double(a.adjusted_p_value);
    out->Key("verdict");
    out->Int(a.verdict);
    out->Key("state");
    out->String(stream::VerdictStateName(s.pair_states[p]));
    out->EndObject();
  }
  out->EndArray();
  out->Key("copeland");
  out->BeginArray();
  for (int c : s.analysis.copeland) out->Int(c);
  out->EndArray();
  out->Key("ranking");  // Team indexes, best first.
  out->BeginArray();
  for (size_t t : s.analysis.ranking) out->Int(static_cast<int64_t>(t));
  out->EndArray();
  out->Key("winner");  // A team index, or -1.
  out->Int(s.analysis.winner);
}

void WriteInterleaving(const stream::PipelineSnapshot& p,
                       const std::vector<std::string>& window_labels,
                       JsonWriter* out) {
  out->Key("interleaving");
  out->BeginArray();
  // One state per configured experiment, in order. Each is named from the
  // snapshot's own copy of the configuration rather than through
  // InterleavingState::config, which points into the pipeline's (freed by
  // a reload while this renders outside the lock).
  const std::vector<config::InterleavingConfig>& configs =
      p.config.interleaving;
  for (size_t i = 0; i < p.interleaving.size() && i < configs.size(); ++i) {
    const stream::InterleavingState& s = p.interleaving[i];
    out->BeginObject();
    out->Key("name");
    out->String(configs[i].name);
    out->Key("variant");
    out->String(configs[i].variant);
    out->Key("teams");
    out->BeginArray();
    for (const std::string& team : configs[i].teams) out->String(team);
    out->EndArray();
    out->Key("windows");
    out->BeginArray();
    WriteInterleavingCounts(kWindowAll, s.all, out);
    for (size_t w = 0; w < s.windows.size() && w < window_labels.size(); ++w) {
      WriteInterleavingCounts(window_labels[w], s.windows[w], out);
    }
    out->EndArray();
    out->Key("sequential_p_value");
    out->Double(s.sequential.p_value());
    out->Key("looks");
    out->Int(s.sequential.looks());
    out->Key("verdict");
    out->Int(s.verdict);
    out->Key("state");
    out->String(stream::VerdictStateName(s.state));
    WriteMultileaving(s, window_labels, out);
    out->EndObject();
  }
  out->EndArray();
}

void WriteTopics(const stream::PipelineSnapshot& p,
                 const kafka::IngestState* kafka, JsonWriter* out) {
  const stream::PipelineCounters& counters = p.counters;
  out->Key("topics");
  out->BeginArray();
  for (stream::Topic topic : stream::kAllTopics) {
    const size_t t = static_cast<size_t>(topic);
    out->BeginObject();
    out->Key("topic");
    out->String(stream::TopicName(topic));
    out->Key("kafka_topic");
    if (kafka != nullptr && t < kafka->topics.size()) {
      out->String(kafka->topics[t]);
    } else {
      out->Null();
    }
    out->Key("consumed");
    out->Int(counters.consumed[t]);
    out->Key("rejected");
    out->Int(counters.rejected_total(topic));
    out->Key("rejects");
    out->BeginObject();
    for (int r = 0; r < stream::kNumRejectReasons; ++r) {
      const int64_t n = counters.rejected[t][static_cast<size_t>(r)];
      if (n == 0) continue;  // Only the reasons that occurred.
      out->Key(stream::RejectReasonName(static_cast<stream::RejectReason>(r)));
      out->Int(n);
    }
    out->EndObject();
    out->Key("last_event_ms");
    out->TimeOrNull(counters.last_event_ms[t]);
    out->EndObject();
  }
  out->EndArray();
}

// When the first lists are due while none is scored (issue 43: with the
// default join.window of 30m the page stayed empty for half an hour
// without a word): a request is scored once the watermark, which trails
// the newest event time by join.allowed_lateness, passes its time plus
// join.window (impression) or join.qrels_delay (qrels). So the newest
// event time must reach the first request's plus both: first_figures_due_ms
// (null before any results event and once a list is scored), with the two
// settings that make it.
void WriteFirstFigures(const stream::PipelineSnapshot& p, JsonWriter* out) {
  const config::JoinConfig& join = p.config.join;
  const int64_t wait_ms = join.mode == config::JoinMode::kImpression
                              ? join.window.count()
                              : join.qrels_delay.count();
  const int64_t first = p.counters.first_results_ms;
  out->Key("first_figures_due_ms");
  if (first == INT64_MIN || p.counters.scored > 0) {
    out->Null();
  } else {
    out->Int(SatAdd(SatAdd(first, wait_ms), join.allowed_lateness.count()));
  }
  out->Key("join_wait_ms");
  out->Int(wait_ms);
  out->Key("allowed_lateness_ms");
  out->Int(join.allowed_lateness.count());
}

void WritePipeline(const stream::PipelineSnapshot& p,
                   const kafka::IngestState* kafka, JsonWriter* out) {
  const stream::PipelineCounters& counters = p.counters;
  const stream::JoinCounters& join = p.join_counters;
  out->Key("pipeline");
  out->BeginObject();
  WriteTopics(p, kafka, out);
  const std::pair<const char*, int64_t> figures[] = {
      {"finalized", join.finalized},
      {"scored", counters.scored},
      {"without_relevant", counters.without_relevant},
      {"results_without_query_id", counters.without_query_id},
      {"late_results", join.late_results},
      {"late_judgments", join.late_judgments},
      {"duplicate_results", join.duplicate_results},
      {"evicted", join.evicted},
      {"orphaned_judgments", join.orphaned_judgments},
      {"judgments_after_finalization", join.judgments_after_finalization},
      {"over_limit_judgments", join.over_limit_judgments},
      {"position_mismatches", join.position_mismatches},
      {"ranked_by_impressions", join.ranked_by_impressions},
      {"unranked_requests", join.unranked_requests},
      {"ignored_impressions", join.ignored_impressions},
      {"unjudged", join.unjudged},
      {"table_full", join.table_full},
      {"dropped_on_rebalance", join.dropped_on_rebalance},
      {"replayed", join.replayed},
      {"pending_requests", p.pending_requests},
      {"table_entries", p.table_entries},
  };
  for (const auto& [name, value] : figures) {
    out->Key(name);
    out->Int(value);
  }
  out->Key("watermark_ms");
  out->TimeOrNull(p.watermark_ms);
  out->Key("window_now_ms");
  out->TimeOrNull(p.window_now_ms);
  WriteFirstFigures(p, out);
  // Label values folded into "other": the variant, then each segment.
  out->Key("label_overflow");
  out->BeginArray();
  for (int64_t n : p.overflowed) out->Int(n);
  out->EndArray();
  out->EndObject();
}

void WriteKafka(const kafka::IngestState* kafka, int64_t now_mono_ms,
                JsonWriter* out) {
  out->Key("kafka");
  if (kafka == nullptr) {
    out->Null();
    return;
  }
  out->BeginObject();
  // The predicate of /readyz and rankwatch_consumer_ready.
  const kafka::ReadyReason reason = kafka->ready_reason(now_mono_ms);
  out->Key("ready");
  out->Bool(reason == kafka::ReadyReason::kReady);
  out->Key("reason");
  out->String(kafka::ReadyReasonName(reason));
  out->Key("message");
  out->String(kafka->ReadinessMessage(now_mono_ms));
  out->Key("assigned");
  out->Bool(kafka->assigned);
  out->Key("consuming");
  out->Bool(kafka->consuming);
  int64_t total_lag = 0;
  out->Key("partitions");
  out->BeginArray();
  for (const kafka::PartitionStatus& p : kafka->partitions) {
    out->BeginObject();
    out->Key("topic");
    out->String(p.topic);
    out->Key("partition");
    out->Int(p.partition);
    // -1: not known yet (no statistics or commit so far).
    out->Key("lag");
    out->Int(p.lag);
    out->Key("committed_offset");
    out->Int(p.committed_offset);
    out->Key("high_watermark");
    out->Int(p.high_watermark);
    out->EndObject();
    if (p.lag > 0) total_lag += p.lag;
  }
  out->EndArray();
  out->Key("total_lag");
  out->Int(total_lag);
  out->Key("rebalances");
  out->Int(kafka->rebalances);
  out->Key("commits_ok");
  out->Int(kafka->commits_ok);
  out->Key("commits_failed");
  out->Int(kafka->commits_failed);
  out->Key("dead_letters_produced");
  out->Int(kafka->dead_letters_produced);
  out->EndObject();
}

}  // namespace

// `judges` (judges.names) and `agreement`: each pair's, as replay and
// `rankwatch compare` write it (issue 29).
void WriteJudges(const stream::PipelineSnapshot& p, JsonWriter* out) {
  out->Key("judges");
  out->StringArray(p.judges);
  out->Key("agreement");
  out->BeginArray();
  for (const trec::LabelAgreement& a : p.agreement) {
    trec::WriteLabelAgreementJson(p.judges[a.first], p.judges[a.second], a,
                                  out);
  }
  out->EndArray();
  if (!p.config.judges.names.empty()) {
    // Each judge's figures, as replay writes them (one writer for both).
    out->Key(stream::kJudgeFiguresKey);
    stream::WriteJudgeFiguresJson(p, out);
  }
}

std::string BuildSummaryJson(const stream::PipelineSnapshot& pipeline,
                             const kafka::IngestState* kafka,
                             const SummaryTimes& times) {
  const std::vector<std::string> window_labels =
      exporter::WindowLabels(pipeline.windows_ms);
  const HistoryShape shape = MakeHistoryShape(pipeline);
  JsonWriter out;
  out.BeginObject();
  out.Key("schema_version");
  out.Int(kSummarySchemaVersion);
  out.Key("generated_ms");
  out.Int(times.wall_ms);
  out.Key("monotonic_ms");
  out.Int(times.mono_ms);
  WriteConfig(pipeline, window_labels, shape, &out);
  WriteMeans(pipeline, shape, &out);
  WriteExperiments(pipeline, window_labels, &out);
  WriteInterleaving(pipeline, window_labels, &out);
  WriteJudges(pipeline, &out);
  WritePipeline(pipeline, kafka, &out);
  WriteKafka(kafka, times.mono_ms, &out);
  out.EndObject();
  return out.Take();
}

}  // namespace rankwatch::page
