// The HTTP handlers of the status page: "/" serves the page (page.html,
// compiled in by embed_page.cmake, self-contained: no external scripts,
// fonts or styles; its inline script and style allowed by hash, csp.h),
// "/api/v1/summary" the JSON it polls (summary.h).
//
// Ownership: the handlers keep the pointers they are given, which must
// outlive the server's handlers (the daemon stops its server first).
// Thread-safety: the summary handler takes `mu` (the daemon's mutex, which
// guards the pipeline and the Kafka status) while it builds the JSON, as
// /metrics does; the page handler shares only immutable bytes.
#ifndef RANKWATCH_DAEMON_PAGE_HANDLERS_H_
#define RANKWATCH_DAEMON_PAGE_HANDLERS_H_

#include <mutex>
#include <string_view>

#include "base/clock.h"
#include "daemon/http/http_server.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline.h"

namespace rankwatch::page {

// The bytes of daemon/page/page.html (generated page_html.cc).
extern const std::string_view kPageHtml;

inline constexpr char kPagePath[] = "/";
inline constexpr char kSummaryPath[] = "/api/v1/summary";

// "/": the page, as text/html, under the Content-Security-Policy of csp.h
// (computed here, once); a 500 naming the failure if that cannot be made.
http::Handler PageHandler();

// "/api/v1/summary": the summary of `pipeline` and `kafka` (may be null),
// built under `mu`, stamped with `clock`'s wall and monotonic time. Takes
// a look of the pipeline first when it has news (Pipeline::RefreshLook), so
// that the A/B tables and the means count the same lists.
http::Handler SummaryHandler(std::mutex* mu, stream::Pipeline* pipeline,
                             const kafka::IngestState* kafka,
                             const Clock* clock);

// Registers both on `server`.
void RegisterHandlers(http::HttpServer* server, std::mutex* mu,
                      stream::Pipeline* pipeline,
                      const kafka::IngestState* kafka, const Clock* clock);

}  // namespace rankwatch::page

#endif  // RANKWATCH_DAEMON_PAGE_HANDLERS_H_
