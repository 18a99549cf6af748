#include "daemon/exporter/http_collector.h"

#include <utility>

#include "daemon/exporter/families.h"

namespace rankwatch::exporter {

void HttpCollector::Collect(std::vector<prometheus::MetricFamily>* out) const {
  const http::HttpStats stats = server_->stats();
  prometheus::MetricFamily handshakes = MakeFamily(
      "rankwatch_http_tls_handshake_errors_total",
      "TLS handshakes of the HTTP endpoint that failed (protocol errors, "
      "plain HTTP to the HTTPS port, timeouts)",
      prometheus::MetricType::Counter);
  AddCounter(&handshakes, {}, static_cast<double>(stats.tls_handshake_errors));
  out->push_back(std::move(handshakes));
  prometheus::MetricFamily unauthorized =
      MakeFamily("rankwatch_http_unauthorized_requests_total",
                 "Requests to the HTTP endpoint answered 401 (http.basic_auth: "
                 "missing or wrong credentials)",
                 prometheus::MetricType::Counter);
  AddCounter(&unauthorized, {},
             static_cast<double>(stats.unauthorized_requests));
  out->push_back(std::move(unauthorized));
}

}  // namespace rankwatch::exporter
