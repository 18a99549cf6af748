#include "daemon/exporter/pipeline_collector.h"

#include <array>
#include <chrono>
#include <utility>

#include "daemon/exporter/families.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// What a measure is, for HELP texts (the measure's row in
// metrics::kMeasureTable).
std::string Describe(metrics::Measure m) {
  return std::string(metrics::GetMeasureInfo(m).help);
}

// The families of one measure: what this process scored (counters: they
// never go backwards), and the state's totals and means (gauges: a
// partition's state moves between replicas; summed over the replicas they
// are the fleet's, exactly, at every scrape).
struct MeasureFamilies {
  MetricFamily histogram;
  MetricFamily squares;
  MeanFamilies means;
};

// schema.fields: the values are not in [0, 1], so no histogram: the count
// and sum as counters beside the squares.
struct FieldFamilies {
  MetricFamily count;
  MetricFamily sum;
  MetricFamily squares;
  MeanFamilies means;
};

MeasureFamilies MakeMeasureFamilies(metrics::Measure m) {
  const std::string name = "rankwatch_" + std::string(metrics::MeasureName(m));
  const std::string what = Describe(m);
  return {MakeFamily(name,
                     "Per-list " + what +
                         ", one observation per list this process scored",
                     MetricType::Histogram),
          MakeFamily(name + "_squares_total",
                     "Sum of squared per-list values of " + what +
                         " this process scored; variance = (squares - "
                         "sum^2/count) / (count - 1)",
                     MetricType::Counter),
          MakeMeanFamilies(name, what)};
}

FieldFamilies MakeFieldFamilies() {
  const std::string what =
      "a field of results events (schema.fields; label field)";
  return {MakeFamily("rankwatch_field_count_total",
                     "Lists this process scored with a value of " + what,
                     MetricType::Counter),
          // A gauge: a field's values may be negative (refunds), and a
          // counter that goes down reads as a reset to rate().
          MakeFamily("rankwatch_field_scored_sum_values",
                     "Sum of the values of " + what +
                         " this process scored (a gauge: values may be "
                         "negative)",
                     MetricType::Gauge),
          MakeFamily(
              "rankwatch_field_squares_total",
              "Sum of the squared values of " + what + " this process scored",
              MetricType::Counter),
          MakeMeanFamilies("rankwatch_field", what)};
}

MetricFamily Counter(std::string name, std::string help, double value) {
  MetricFamily f =
      MakeFamily(std::move(name), std::move(help), MetricType::Counter);
  AddCounter(&f, {}, value);
  return f;
}

MetricFamily Gauge(std::string name, std::string help, double value) {
  MetricFamily f =
      MakeFamily(std::move(name), std::move(help), MetricType::Gauge);
  AddGauge(&f, {}, value);
  return f;
}

// One rendering of a snapshot.
class SeriesRenderer {
 public:
  explicit SeriesRenderer(const stream::PipelineSnapshot& snapshot)
      : s_(snapshot), window_labels_(WindowLabels(snapshot.windows_ms)) {}

  void CollectMeasures(std::vector<MetricFamily>* out) const;
  void CollectEvents(std::vector<MetricFamily>* out) const;
  void CollectJoin(std::vector<MetricFamily>* out) const;
  // The join's state now: pending requests, table entries, watermark.
  void CollectJoinState(std::vector<MetricFamily>* out) const;
  void CollectAggregation(std::vector<MetricFamily>* out) const;

 private:
  void CollectFirstClick(std::vector<MetricFamily>* out) const;
  void CollectFields(std::vector<MetricFamily>* out) const;
  // variant, k (a field's series: field), then one label per configured
  // segment.
  Labels SeriesLabels(const stream::GroupStats& group,
                      const stream::SeriesSpec& series) const;

  const stream::PipelineSnapshot& s_;
  const std::vector<std::string> window_labels_;  // Parallel to windows_ms.
};

Labels SeriesRenderer::SeriesLabels(const stream::GroupStats& group,
                                    const stream::SeriesSpec& series) const {
  const std::vector<std::string>& segments = s_.config.aggregation.segments;
  Labels labels;
  labels.reserve(3 + segments.size());
  labels.push_back({"variant", group.variant});
  // A field's series is named by its label; a measure's family by the
  // measure, its series by k.
  if (series.field >= 0) {
    labels.push_back({"field", series.name});
  } else {
    labels.push_back({"k", series.k_label});
  }
  for (size_t i = 0; i < segments.size() && i < group.segment_values.size();
       ++i) {
    labels.push_back({segments[i], group.segment_values[i]});
  }
  return labels;
}

void SeriesRenderer::CollectMeasures(std::vector<MetricFamily>* out) const {
  const std::vector<stream::SeriesSpec>& series = s_.series;
  // Each measure's families, in the order the series first name them.
  std::array<int, metrics::kAllMeasures.size()> family_of;
  family_of.fill(-1);
  std::vector<MeasureFamilies> families;
  for (const stream::SeriesSpec& spec : series) {
    if (spec.field >= 0) continue;  // CollectFields.
    int& f = family_of[static_cast<size_t>(spec.measure)];
    if (f < 0) {
      f = static_cast<int>(families.size());
      families.push_back(MakeMeasureFamilies(spec.measure));
    }
  }
  for (size_t g = 0; g < s_.groups.size(); ++g) {
    const stream::GroupStats& group = s_.groups[g];
    const stream::GroupFlow& flow = s_.flows[g];
    for (size_t s = 0; s < series.size(); ++s) {
      if (series[s].field >= 0) continue;
      MeasureFamilies& f =
          families[family_of[static_cast<size_t>(series[s].measure)]];
      Labels labels = SeriesLabels(group, series[s]);
      AddHistogram(&f.histogram, labels, stream::kHistogramBounds,
                   flow.histograms[s], flow.all[s].sum);
      AddCounter(&f.squares, labels, flow.all[s].sum_of_squares);
      AddMeans(&f.means, labels, group, s, s_.window_now_ms, s_.windows_ms,
               window_labels_);
    }
  }
  for (MeasureFamilies& f : families) {
    out->push_back(std::move(f.histogram));
    out->push_back(std::move(f.squares));
    PushMeans(&f.means, out);
  }
  CollectFields(out);
  CollectFirstClick(out);
}

// schema.fields: per field and label group, as the measures' families but
// labelled `field` (not k), and what the events held per field.
void SeriesRenderer::CollectFields(std::vector<MetricFamily>* out) const {
  const std::vector<config::ResultFieldConfig>& fields =
      s_.config.schema.fields;
  if (fields.empty()) return;
  const std::vector<stream::SeriesSpec>& series = s_.series;
  FieldFamilies f = MakeFieldFamilies();
  for (size_t g = 0; g < s_.groups.size(); ++g) {
    const stream::GroupStats& group = s_.groups[g];
    const stream::GroupFlow& flow = s_.flows[g];
    for (size_t s = 0; s < series.size(); ++s) {
      if (series[s].field < 0) continue;
      const Labels labels = SeriesLabels(group, series[s]);
      AddCounter(&f.count, labels, static_cast<double>(flow.all[s].count));
      AddGauge(&f.sum, labels, flow.all[s].sum);
      AddCounter(&f.squares, labels, flow.all[s].sum_of_squares);
      AddMeans(&f.means, labels, group, s, s_.window_now_ms, s_.windows_ms,
               window_labels_);
    }
  }
  out->push_back(std::move(f.count));
  out->push_back(std::move(f.sum));
  out->push_back(std::move(f.squares));
  PushMeans(&f.means, out);
  MetricFamily events = MakeFamily(
      "rankwatch_field_events_total",
      "Results events consumed (not rejected) per field of schema.fields and "
      "what the field held: present (a finite number), absent, null, "
      "wrong_type, not_finite, out_of_range (outside the field's min and "
      "max); only present values count",
      MetricType::Counter);
  const stream::PipelineCounters& c = s_.counters;
  for (size_t i = 0; i < fields.size(); ++i) {
    AddOutcomeCounters(&events, {{"field", fields[i].name}}, c.fields[i]);
  }
  out->push_back(std::move(events));
  // What the recording rules need to judge a field's guardrail over all
  // replicas: its direction and its own tau (deploy/prometheus/rules.yml).
  MetricFamily info = MakeFamily(
      "rankwatch_field_info",
      "1 per field of schema.fields, with the way it improves (better: "
      "higher or lower)",
      MetricType::Gauge);
  MetricFamily tau = MakeFamily(
      "rankwatch_field_mixture_sd",
      "The field's mixture_sd: tau of its always-valid tests, in its units",
      MetricType::Gauge);
  for (const config::ResultFieldConfig& field : fields) {
    AddGauge(&info,
             {{"field", field.name},
              {"better", field.higher_is_better ? "higher" : "lower"}},
             1);
    AddGauge(&tau, {{"field", field.name}}, field.mixture_sd);
  }
  out->push_back(std::move(info));
  out->push_back(std::move(tau));
}

// Exported where judgments are clicks (Pipeline::tracks_clicks).
void SeriesRenderer::CollectFirstClick(std::vector<MetricFamily>* out) const {
  if (!s_.tracks_clicks) return;
  MetricFamily f = MakeFamily(
      "rankwatch_time_to_first_click_seconds",
      "Event time from a results event to its first click on a served doc "
      "(requests with a click)",
      MetricType::Histogram);
  const std::vector<std::string>& segments = s_.config.aggregation.segments;
  for (size_t g = 0; g < s_.groups.size(); ++g) {
    const stream::GroupStats& group = s_.groups[g];
    Labels labels = {{"variant", group.variant}};
    for (size_t i = 0; i < segments.size() && i < group.segment_values.size();
         ++i) {
      labels.push_back({segments[i], group.segment_values[i]});
    }
    const stream::FirstClickHistogram& first = s_.flows[g].first_click;
    AddHistogram(&f, std::move(labels), stream::kFirstClickBounds, first.counts,
                 first.sum_seconds);
  }
  out->push_back(std::move(f));
}

void SeriesRenderer::CollectEvents(std::vector<MetricFamily>* out) const {
  const stream::PipelineCounters& c = s_.counters;
  MetricFamily consumed = MakeFamily(
      "rankwatch_events_consumed_total",
      "Events read per topic (results, judgments), rejected ones included",
      MetricType::Counter);
  MetricFamily rejected = MakeFamily(
      "rankwatch_events_rejected_total",
      "Events rejected per topic and reason; a rejected event affects "
      "nothing else",
      MetricType::Counter);
  MetricFamily ignored = MakeFamily(
      "rankwatch_events_ignored_total",
      "Valid events of no interest per topic (an action schema.actions "
      "maps to no grade): counted, never joined",
      MetricType::Counter);
  MetricFamily last_event = MakeFamily(
      "rankwatch_last_event_timestamp_seconds",
      "Newest event time seen per topic, in Unix seconds (0 before any "
      "event)",
      MetricType::Gauge);
  for (stream::Topic topic : stream::kAllTopics) {
    const size_t t = static_cast<size_t>(topic);
    const std::string name(stream::TopicName(topic));
    AddCounter(&consumed, {{"topic", name}},
               static_cast<double>(c.consumed[t]));
    for (int r = 0; r < stream::kNumRejectReasons; ++r) {
      AddCounter(&rejected,
                 {{"topic", name},
                  {"reason", std::string(stream::RejectReasonName(
                                 static_cast<stream::RejectReason>(r)))}},
                 static_cast<double>(c.rejected[t][static_cast<size_t>(r)]));
    }
    AddCounter(&ignored, {{"topic", name}}, static_cast<double>(c.ignored[t]));
    AddGauge(&last_event, {{"topic", name}},
             TimestampSeconds(c.last_event_ms[t]));
  }
  out->push_back(std::move(consumed));
  out->push_back(std::move(rejected));
  out->push_back(std::move(ignored));
  out->push_back(std::move(last_event));
}

void SeriesRenderer::CollectJoin(std::vector<MetricFamily>* out) const {
  const stream::JoinCounters& j = s_.join_counters;
  const stream::PipelineCounters& c = s_.counters;
  const auto count = [](int64_t v) { return static_cast<double>(v); };
  out->push_back(Counter("rankwatch_requests_finalized_total",
                         "Served lists the join finalized and scored, those "
                         "without a relevant doc included",
                         count(j.finalized)));
  out->push_back(Counter("rankwatch_requests_scored_total",
                         "Served lists folded into the means (finalized "
                         "minus those left out by zero_relevant: skip)",
                         count(c.scored)));
  out->push_back(Counter("rankwatch_requests_without_relevant_total",
                         "Finalized lists whose query has no relevant judged "
                         "doc (R = 0)",
                         count(c.without_relevant)));
  out->push_back(Counter("rankwatch_results_without_query_id_total",
                         "Results events without a query id "
                         "(schema.query_id): in the means, not in the query "
                         "movers",
                         count(c.without_query_id)));
  out->push_back(Counter("rankwatch_late_judgments_total",
                         "Judgments that arrived behind the watermark (beyond "
                         "join.allowed_lateness) with no request left to "
                         "join, ignored",
                         count(j.late_judgments)));
  out->push_back(Counter("rankwatch_late_results_total",
                         "Results events that arrived after their join "
                         "window closed, ignored",
                         count(j.late_results)));
  out->push_back(Counter("rankwatch_duplicate_results_total",
                         "Further results events of an already served "
                         "request, ignored",
                         count(j.duplicate_results)));
  out->push_back(Counter("rankwatch_requests_evicted_total",
                         "Requests finalized early because "
                         "join.max_pending_requests was reached",
                         count(j.evicted)));
  out->push_back(Counter("rankwatch_orphaned_judgments_total",
                         "Judgments no results event claimed: stamped "
                         "outside [served - join.early_tolerance, served + "
                         "join.window] of their request, or its results "
                         "never came",
                         count(j.orphaned_judgments)));
  out->push_back(Counter("rankwatch_judgments_after_finalization_total",
                         "Judgments stamped inside their request's window "
                         "that arrived after the request was finalized "
                         "(closed by the wall clock of an idle stream, "
                         "evicted, or at the window's edge): scored without "
                         "them",
                         count(j.judgments_after_finalization)));
  out->push_back(Counter("rankwatch_requests_reprocessed_total",
                         "Requests finalized from a results event a previous "
                         "owner had already read and that owner crashed "
                         "before a final commit: it may have counted them "
                         "too",
                         count(j.reprocessed)));
  out->push_back(Counter("rankwatch_over_limit_judgments_total",
                         "Judgments dropped because their request already "
                         "held join.max_judgments_per_request",
                         count(j.over_limit_judgments)));
  out->push_back(Counter("rankwatch_position_mismatches_total",
                         "Judgments whose claimed rank (schema.position) "
                         "is not where their doc was served",
                         count(j.position_mismatches)));
  out->push_back(Counter("rankwatch_requests_ranked_by_impressions_total",
                         "Served lists built from their impression events "
                         "(schema.impression_kind): query records without "
                         "hits",
                         count(j.ranked_by_impressions)));
  out->push_back(Counter("rankwatch_requests_unranked_total",
                         "Query records without hits and without any "
                         "impression in their window: not scored",
                         count(j.unranked_requests)));
  out->push_back(Counter("rankwatch_impressions_ignored_total",
                         "Impression events of a request whose results "
                         "event listed its hits (the hits are the list)",
                         count(j.ignored_impressions)));
  out->push_back(Counter("rankwatch_requests_unjudged_total",
                         "qrels mode: served lists of queries without any "
                         "judgment",
                         count(j.unjudged)));
  out->push_back(Counter("rankwatch_rebalance_dropped_requests_total",
                         "Pending requests dropped with revoked partitions "
                         "(their new owner re-reads them)",
                         count(j.dropped_on_rebalance)));
  out->push_back(Counter("rankwatch_qrels_table_full_total",
                         "qrels mode: judgments refused because "
                         "join.max_table_entries was reached",
                         count(j.table_full)));
}

void SeriesRenderer::CollectJoinState(std::vector<MetricFamily>* out) const {
  const auto count = [](int64_t v) { return static_cast<double>(v); };
  out->push_back(Gauge("rankwatch_pending_requests",
                       "Requests waiting in the join for judgments or for "
                       "their window to close",
                       count(s_.pending_requests)));
  out->push_back(Gauge("rankwatch_qrels_table_entries",
                       "qrels mode: (query, doc) judgments held in the table",
                       count(s_.table_entries)));
  out->push_back(Gauge("rankwatch_watermark_timestamp_seconds",
                       "Event time up to which join windows are closed, in "
                       "Unix seconds (0 before any event)",
                       TimestampSeconds(s_.watermark_ms)));
}

void SeriesRenderer::CollectAggregation(std::vector<MetricFamily>* out) const {
  const std::vector<std::string>& segments = s_.config.aggregation.segments;
  MetricFamily overflow =
      MakeFamily("rankwatch_label_overflow_total",
                 "Label values folded into \"other\" by an allow-list or the "
                 "cardinality limit, per label",
                 MetricType::Counter);
  const std::vector<int64_t>& overflowed = s_.overflowed;
  for (size_t d = 0; d < overflowed.size(); ++d) {
    const std::string label = d == 0 ? "variant" : segments[d - 1];
    AddCounter(&overflow, {{"label", label}},
               static_cast<double>(overflowed[d]));
  }
  out->push_back(std::move(overflow));
  out->push_back(Gauge("rankwatch_aggregation_groups",
                       "Label groups (a variant and segment values) with "
                       "running means",
                       static_cast<double>(s_.groups.size())));
}

}  // namespace

void PipelineCollector::Collect(const stream::PipelineSnapshot& snapshot,
                                std::vector<MetricFamily>* out) const {
  const SeriesRenderer r(snapshot);
  r.CollectMeasures(out);
  r.CollectEvents(out);
  r.CollectJoin(out);
  r.CollectJoinState(out);
  r.CollectAggregation(out);
}

}  // namespace rankwatch::exporter
