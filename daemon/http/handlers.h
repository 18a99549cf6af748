// The handler of the daemon's liveness probe (Kubernetes-style).
//
// Stateless; thread-safe.
#ifndef RANKWATCH_DAEMON_HTTP_HANDLERS_H_
#define RANKWATCH_DAEMON_HTTP_HANDLERS_H_

#include "daemon/http/http_server.h"

namespace rankwatch::http {

// /healthz: 200 "ok" whenever the process answers at all.
Handler HealthHandler();

// /readyz is exporter::ReadinessHandler: it answers from the Kafka status,
// with the reason, the same predicate as rankwatch_consumer_ready.

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HANDLERS_H_
