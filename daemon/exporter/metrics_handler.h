// The /metrics endpoint: metric families serialized in the Prometheus text
// exposition format 0.0.4 with prometheus-cpp's TextSerializer (the HTTP
// server adds gzip when the scraper asks for it).
//
// Thread-safety: the handler runs on HTTP worker threads, concurrently
// with itself; `gather` is responsible for its own locking. The daemon's
// gatherer holds its mutex only while it copies (the pipeline's snapshot,
// Probe::CollectGuarded()), so rendering and serialization do not stall
// the consumer thread (probe.h).
#ifndef RANKWATCH_DAEMON_EXPORTER_METRICS_HANDLER_H_
#define RANKWATCH_DAEMON_EXPORTER_METRICS_HANDLER_H_

#include <prometheus/metric_family.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/http/http_server.h"

namespace rankwatch::exporter {

inline constexpr std::string_view kTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// The families in the text exposition format.
std::string SerializeText(
    const std::vector<prometheus::MetricFamily>& families);

// Returns the families to expose at scrape time: the daemon's takes the
// two steps of probe.h.
using Gatherer = std::function<std::vector<prometheus::MetricFamily>()>;

// Serves GET /metrics from `gather`.
http::Handler MetricsHandler(Gatherer gather);

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_METRICS_HANDLER_H_
