#include "daemon/page/handlers.h"

#include <string>
#include <utility>

#include "base/status.h"
#include "daemon/page/csp.h"
#include "daemon/page/summary.h"

namespace rankwatch::page {

http::Handler PageHandler() {
  // The page runs only its own inline script and style, by their hashes,
  // and talks only to its own origin (csp.h). Computed once, here: every
  // response carries the same bytes. Should the hashing fail, the page is
  // not served at all rather than served under a weaker policy.
  StatusOr<std::string> policy = PageContentSecurityPolicy(kPageHtml);
  return [policy = std::move(policy)](const http::HttpRequest&) {
    http::HttpResponse r;
    if (!policy.ok()) {
      r.status = 500;
      r.content_type = "text/plain; charset=utf-8";
      r.body = policy.status().message() + "\n";
      r.headers = {{"X-Content-Type-Options", "nosniff"}};
      return r;
    }
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(kPageHtml);
    r.headers = {{"Content-Security-Policy", *policy},
                 {"X-Content-Type-Options", "nosniff"}};
    return r;
  };
}

http::Handler SummaryHandler(SummarySource source, const Clock* clock) {
  return [source = std::move(source), clock](const http::HttpRequest&) {
    // The copy is taken under the daemon's lock; the figures computed from
    // it and the rendering, the larger part, run without it, so a slow
    // reader of the page does not hold up the consumer.
    SummaryState state;
    source(&state);
    http::HttpResponse r;
    r.content_type = "application/json";
    r.body = BuildSummaryJson(state.snapshot(),
                              state.kafka ? &*state.kafka : nullptr,
                              {clock->NowMillis(), clock->MonotonicMillis()});
    // Always the latest state: never served from a cache.
    r.headers = {{"Cache-Control", "no-store"},
                 {"X-Content-Type-Options", "nosniff"}};
    return r;
  };
}

void RegisterHandlers(http::HttpServer* server, SummarySource source,
                      const Clock* clock) {
  server->Handle(kPagePath, PageHandler());
  server->Handle(kSummaryPath, SummaryHandler(std::move(source), clock));
}

}  // namespace rankwatch::page
