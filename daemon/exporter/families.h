// Helpers that build prometheus::MetricFamily values directly, for
// collectors that read plain state at scrape time (no prometheus::Registry,
// no atomics on the hot path). Each family must get a unique name and a
// one-line HELP text (no newline or backslash: prometheus-cpp writes HELP
// unescaped).
//
// Free functions on values the caller owns; no shared state.
#ifndef RANKWATCH_DAEMON_EXPORTER_FAMILIES_H_
#define RANKWATCH_DAEMON_EXPORTER_FAMILIES_H_

#include <prometheus/metric_family.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "daemon/stream/aggregation/aggregator.h"
#include "daemon/stream/decode/events.h"

namespace rankwatch::exporter {

using Labels = std::vector<prometheus::ClientMetric::Label>;

prometheus::MetricFamily MakeFamily(std::string name, std::string help,
                                    prometheus::MetricType type);

// Appends one sample to a counter / gauge family.
void AddCounter(prometheus::MetricFamily* family, Labels labels, double value);
// One counter per stream::CovariateOutcome, labelled `labels` plus
// `reason` (its name): what an optional number of results events held
// (rankwatch_covariate_events_total, rankwatch_field_events_total).
void AddOutcomeCounters(
    prometheus::MetricFamily* family, const Labels& labels,
    const std::array<int64_t, stream::kNumCovariateOutcomes>& counts);
void AddGauge(prometheus::MetricFamily* family, Labels labels, double value);

// Appends one histogram. `counts` holds non-cumulative counts per bucket:
// one per upper bound in `bounds` (ascending), then the count above the
// last bound; they become Prometheus' cumulative buckets, +Inf the total.
void AddHistogram(prometheus::MetricFamily* family, Labels labels,
                  std::span<const double> bounds,
                  std::span<const int64_t> counts, double sum);

// The `window` label of each window in `windows_ms` ("5m", "1h30m"),
// written as the configuration writes durations; one definition for every
// output (replay's and the summary's JSON too).
using stream::WindowLabels;

// `text` as a label value: Prometheus requires UTF-8, so a byte that does
// not start a valid UTF-8 sequence becomes U+FFFD; beyond `max_bytes` the
// text is cut at a character boundary and ends with U+2026 ("...").
std::string LabelText(std::string_view text, size_t max_bytes);

// The `k` label of a series at `cutoff`: the cutoff, or "all" for an uncut
// series (cutoff 0), as stream::SeriesSpec::k_label.
std::string CutoffLabel(int32_t cutoff);
// The `measure` label of a configured series: the measure's name ("ndcg"),
// or a field's name (schema.fields), as stream::SeriesSpec::name.
std::string MeasureLabel(const config::SeriesRef& ref);

// The `window` label of a figure since the state began.
inline constexpr char kWindowAll[] = "all";

// The state's running mean and totals per window of one series family
// (`<name>_mean`, `<name>_window_lists`, `_window_sum_values`,
// `_window_sum_squares`): gauges, since a partition's state moves between
// replicas; summed over the replicas the totals are the fleet's, exactly,
// at every scrape. Shared by the main measures' families and the judges'.
struct MeanFamilies {
  prometheus::MetricFamily mean;
  prometheus::MetricFamily window_count;
  prometheus::MetricFamily window_sum;
  prometheus::MetricFamily window_squares;
};
// `what` completes the HELP texts ("Running mean of <what> ...").
MeanFamilies MakeMeanFamilies(const std::string& name, const std::string& what);
// Appends the `_mean` and `_window_*` samples of series `s` of `group`,
// labelled `labels` plus `window`: "all" (since the state began), then one
// per window of `windows` (ending at `now_ms`; `window_labels` parallel).
// A window holding no list has mean NaN rather than no sample.
void AddMeans(MeanFamilies* f, const Labels& labels,
              const stream::GroupStats& group, size_t s, int64_t now_ms,
              std::span<const int64_t> windows,
              std::span<const std::string> window_labels);
// Moves the four families to the end of `out`.
void PushMeans(MeanFamilies* f, std::vector<prometheus::MetricFamily>* out);

// Seconds since the Unix epoch of a time in milliseconds; 0 for INT64_MIN
// ("never"), the usual Prometheus value of an unset timestamp.
double TimestampSeconds(int64_t ms);

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_FAMILIES_H_
