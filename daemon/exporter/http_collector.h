// HttpCollector: what the daemon's own HTTP endpoint refused, read at scrape
// time from http::HttpServer::stats():
//   rankwatch_http_tls_handshake_errors_total  failed TLS handshakes
//                                              (protocol errors, plain HTTP
//                                              to the HTTPS port, timeouts)
//   rankwatch_http_unauthorized_requests_total requests answered 401
//   rankwatch_http_overload_rejections_total{reason}  503s and resets for
//                                              load (issue 24)
//   rankwatch_http_forbidden_requests_total{reason}   403s: Host, cross-site
//   rankwatch_http_shared_responses_total      requests served by a
//                                              rendering in flight
//   rankwatch_http_response_bytes_held         what the budget caps
//   rankwatch_http_tls_reloads_total{result}   certificate re-reads (TLS)
//   rankwatch_http_tls_certificate_expiry_timestamp_seconds  (TLS)
// so that a scraper with a wrong password, a client speaking plain HTTP to
// the HTTPS port, a flood or an expiring certificate shows up on a
// dashboard rather than only in logs.
//
// Ownership: reads a server that must outlive it. Thread-safety: the
// server's counters are atomic; Collect() may run on any thread (not
// guarded(): outside the daemon's lock).
#ifndef RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/http/http_server.h"

namespace rankwatch::exporter {

class HttpCollector : public Collector {
 public:
  explicit HttpCollector(const http::HttpServer* server) : server_(server) {}
  bool guarded() const override { return false; }
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  const http::HttpServer* server_;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_
