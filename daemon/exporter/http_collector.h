// HttpCollector: what the daemon's own HTTP endpoint refused, read at scrape
// time from http::HttpServer::stats():
//   rankwatch_http_tls_handshake_errors_total  failed TLS handshakes
//                                              (protocol errors, plain HTTP
//                                              to the HTTPS port, timeouts)
//   rankwatch_http_unauthorized_requests_total requests answered 401
// so that a scraper with a wrong password or a client speaking plain HTTP
// to the HTTPS port shows up on a dashboard rather than only in its own
// logs.
//
// Ownership: reads a server that must outlive it. Thread-safety: the
// server's counters are atomic; Collect() may run on any thread.
#ifndef RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_

#include <vector>

#include "daemon/exporter/probe.h"
#include "daemon/http/http_server.h"

namespace rankwatch::exporter {

class HttpCollector : public Collector {
 public:
  explicit HttpCollector(const http::HttpServer* server) : server_(server) {}
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;

 private:
  const http::HttpServer* server_;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_HTTP_COLLECTOR_H_
