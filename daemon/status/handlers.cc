#include "daemon/status/handlers.h"

#include <string>
#include <utility>

#include "daemon/status/summary.h"

namespace rankwatch::status {

namespace {

// The page runs only its own inline script and style and talks only to its
// own origin: a browser refuses anything else, should the page ever be
// tricked into loading it.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

http::Handler PageHandler() {
  return [](const http::HttpRequest&) {
    http::HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(kPageHtml);
    r.headers = {{"Content-Security-Policy", kContentSecurityPolicy},
                 {"X-Content-Type-Options", "nosniff"}};
    return r;
  };
}

http::Handler SummaryHandler(std::mutex* mu, const stream::Pipeline* pipeline,
                             const kafka::KafkaStatus* kafka,
                             const Clock* clock) {
  return [mu, pipeline, kafka, clock](const http::HttpRequest&) {
    http::HttpResponse r;
    r.content_type = "application/json";
    {
      std::lock_guard<std::mutex> lock(*mu);
      r.body = BuildSummaryJson(*pipeline, kafka,
                                {clock->NowMillis(), clock->MonotonicMillis()});
    }
    // Always the latest state: never served from a cache.
    r.headers = {{"Cache-Control", "no-store"},
                 {"X-Content-Type-Options", "nosniff"}};
    return r;
  };
}

void RegisterHandlers(http::HttpServer* server, std::mutex* mu,
                      const stream::Pipeline* pipeline,
                      const kafka::KafkaStatus* kafka, const Clock* clock) {
  server->Handle(kPagePath, PageHandler());
  server->Handle(kSummaryPath, SummaryHandler(mu, pipeline, kafka, clock));
}

}  // namespace rankwatch::status
