#include "daemon/exporter/http_collector.h"

#include <string>
#include <utility>

#include "daemon/exporter/families.h"

namespace rankwatch::exporter {

namespace {

void Counter(std::vector<prometheus::MetricFamily>* out, std::string name,
             std::string help, uint64_t value) {
  prometheus::MetricFamily family = MakeFamily(std::move(name), std::move(help),
                                               prometheus::MetricType::Counter);
  AddCounter(&family, {}, static_cast<double>(value));
  out->push_back(std::move(family));
}

}  // namespace

void HttpCollector::Collect(std::vector<prometheus::MetricFamily>* out) const {
  const http::HttpStats stats = server_->stats();
  Counter(out, "rankwatch_http_tls_handshake_errors_total",
          "TLS handshakes of the HTTP endpoint that failed (protocol errors, "
          "plain HTTP to the HTTPS port, timeouts)",
          stats.tls_handshake_errors);
  Counter(out, "rankwatch_http_unauthorized_requests_total",
          "Requests to the HTTP endpoint answered 401 (http.basic_auth: "
          "missing or wrong credentials)",
          stats.unauthorized_requests);

  prometheus::MetricFamily overloads = MakeFamily(
      "rankwatch_http_overload_rejections_total",
      "Requests answered 503 or connections reset by the HTTP endpoint for "
      "load, by reason (response_budget, queue_full, client_queue_full, "
      "tls_handshake_rate)",
      prometheus::MetricType::Counter);
  for (int i = 0; i < http::kNumOverloads; ++i) {
    AddCounter(
        &overloads,
        {{"reason",
          std::string(http::OverloadName(static_cast<http::Overload>(i)))}},
        static_cast<double>(stats.overloads[i]));
  }
  out->push_back(std::move(overloads));

  prometheus::MetricFamily forbidden = MakeFamily(
      "rankwatch_http_forbidden_requests_total",
      "Requests answered 403 by the HTTP endpoint, by reason (host: a Host "
      "not in http.allowed_hosts; cross_site: a POST from a web page)",
      prometheus::MetricType::Counter);
  for (int i = 0; i < http::kNumForbidden; ++i) {
    AddCounter(
        &forbidden,
        {{"reason",
          std::string(http::ForbiddenName(static_cast<http::Forbidden>(i)))}},
        static_cast<double>(stats.forbidden[i]));
  }
  out->push_back(std::move(forbidden));

  Counter(out, "rankwatch_http_shared_responses_total",
          "Requests answered from a rendering of the same path already in "
          "flight (concurrent scrapes share one)",
          stats.shared_responses);
  prometheus::MetricFamily held =
      MakeFamily("rankwatch_http_response_bytes_held",
                 "Bytes of responses not yet taken by their clients (capped by "
                 "http.response_budget_bytes)",
                 prometheus::MetricType::Gauge);
  AddGauge(&held, {}, static_cast<double>(stats.response_bytes_held));
  out->push_back(std::move(held));

  if (server_->tls()) {
    prometheus::MetricFamily reloads = MakeFamily(
        "rankwatch_http_tls_reloads_total",
        "Re-reads of the TLS certificate and key (on reload or when the files "
        "change), by result; on failure the previous certificate stays",
        prometheus::MetricType::Counter);
    AddCounter(&reloads, {{"result", "success"}},
               static_cast<double>(stats.tls_reloads));
    AddCounter(&reloads, {{"result", "failure"}},
               static_cast<double>(stats.tls_reload_errors));
    out->push_back(std::move(reloads));
    prometheus::MetricFamily expiry = MakeFamily(
        "rankwatch_http_tls_certificate_expiry_timestamp_seconds",
        "When the serving TLS certificate expires (its notAfter), Unix "
        "seconds",
        prometheus::MetricType::Gauge);
    AddGauge(&expiry, {}, static_cast<double>(stats.tls_certificate_not_after));
    out->push_back(std::move(expiry));
  }
}

}  // namespace rankwatch::exporter
