// The handlers of the daemon's probes (Kubernetes-style): liveness
// (/healthz) and readiness (/readyz). What "ready" means is not the HTTP
// layer's to know: the daemon passes a ReadinessProbe (the Kafka
// consumer's IngestState, read under the daemon's mutex); this file owns
// how the answer is served: the status code, and how much a stranger is
// told.
//
// Stateless; thread-safe when the probe is.
#ifndef RANKWATCH_DAEMON_HTTP_HANDLERS_H_
#define RANKWATCH_DAEMON_HTTP_HANDLERS_H_

#include <functional>
#include <string>

#include "daemon/http/http_server.h"

namespace rankwatch::http {

// /healthz: 200 "ok" whenever the process answers at all.
Handler HealthHandler();

// What a readiness probe answers: whether the process is ready, and one
// line saying so or why not ("not ready (<reason>): ...").
struct Readiness {
  bool ready = false;
  std::string message;
};
using ReadinessProbe = std::function<Readiness()>;

// /readyz: 200 when probe().ready, else 503; the body is probe().message
// and a line break. To a request that is not authenticated (basic auth on,
// no valid credentials: the path is exempt, see basic_auth.h) only "ready"
// or "not ready", since the reason may name topics, partitions and
// brokers. `probe` is called once per request, on a worker thread.
Handler ReadinessHandler(ReadinessProbe probe);

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_HANDLERS_H_
