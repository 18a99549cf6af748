#include "daemon/http/handlers.h"

#include <utility>

namespace rankwatch::http {

Handler HealthHandler() {
  return [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); };
}

Handler ReadinessHandler(ReadinessProbe probe) {
  return [probe = std::move(probe)](const HttpRequest& request) {
    Readiness readiness = probe();
    // Probes need the code alone; the reason is for a known client.
    if (!request.authenticated) {
      readiness.message = readiness.ready ? "ready" : "not ready";
    }
    return HttpResponse::Text(readiness.ready ? 200 : 503,
                              readiness.message + "\n");
  };
}

}  // namespace rankwatch::http
