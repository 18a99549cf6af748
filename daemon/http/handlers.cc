#include "daemon/http/handlers.h"

#include <utility>

namespace rankwatch::http {

Handler HealthHandler() {
  return [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); };
}

Handler ReadinessHandler(std::function<bool()> ready) {
  return [ready = std::move(ready)](const HttpRequest&) {
    return ready() ? HttpResponse::Text(200, "ready\n")
                   : HttpResponse::Text(503, "not ready\n");
  };
}

}  // namespace rankwatch::http
