#include "daemon/http/handlers.h"

namespace rankwatch::http {

Handler HealthHandler() {
  return [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); };
}

}  // namespace rankwatch::http
