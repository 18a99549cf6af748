// Handlers of the daemon's probe endpoints, for Kubernetes-style liveness
// and readiness checks.
//
// Stateless apart from the readiness callback; thread-safe when it is.
#ifndef RANKWATCH_DAEMON_HTTP_HANDLERS_H_
#define RANKWATCH_DAEMON_HTTP_HANDLERS_H_

#include <functional>

#include "daemon/http/http_server.h"

namespace rankwatch::http {

// /healthz: 200 "ok" whenever the process answers at all.
Handler HealthHandler();

// /readyz: 200 "ready" when `ready()` is true, else 503 "not ready". The
// daemon passes exporter::LockedReadiness, KafkaStatus::ready() (partitions
// assigned, consuming, polled recently): the same predicate as the gauge
// rankwatch_consumer_ready. `ready` runs on the server's worker threads
// and must synchronize itself.
Handler ReadinessHandler(std::function<bool()> ready);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HANDLERS_H_
