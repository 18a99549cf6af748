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
#include "daemon/stream/events.h"

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
// written as the configuration writes durations.
std::vector<std::string> WindowLabels(std::span<const int64_t> windows_ms);

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

// Seconds since the Unix epoch of a time in milliseconds; 0 for INT64_MIN
// ("never"), the usual Prometheus value of an unset timestamp.
double TimestampSeconds(int64_t ms);

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_FAMILIES_H_
