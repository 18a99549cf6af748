// The HTTP handlers of the status page: "/" serves the page (page.html,
// compiled in by embed_page.cmake, self-contained: no external scripts,
// fonts or styles; its inline script and style allowed by hash, csp.h),
// "/api/v1/summary" the JSON it polls (summary.h).
//
// Ownership: the summary handler keeps the SummarySource and the clock it
// is given; what they refer to must outlive the server's handlers (the
// daemon stops its server first). Thread-safety: the summary handler holds
// no lock while it renders: its source copies the state under the lock
// that guards it (the daemon's mutex, as /metrics does) and returns; the
// page handler shares only immutable bytes.
#ifndef RANKWATCH_DAEMON_PAGE_HANDLERS_H_
#define RANKWATCH_DAEMON_PAGE_HANDLERS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "base/clock.h"
#include "daemon/http/http_server.h"
#include "daemon/kafka/ingest_state.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::page {

// The bytes of daemon/page/page.html (generated page_html.cc).
extern const std::string_view kPageHtml;

inline constexpr char kPagePath[] = "/";
inline constexpr char kSummaryPath[] = "/api/v1/summary";

// What one summary renders: the pipeline and the Kafka consumer's status
// at one moment, copied. The pipeline's read model is `shared` when set
// (the daemon's, shared with other readers of the same state version:
// SnapshotCache), else `pipeline`.
struct SummaryState {
  stream::PipelineSnapshot pipeline;
  std::shared_ptr<const stream::PipelineSnapshot> shared;
  std::optional<kafka::IngestState> kafka;  // None: no consumer (tests).

  const stream::PipelineSnapshot& snapshot() const {
    return shared != nullptr ? *shared : pipeline;
  }
};

// Fills a SummaryState, holding the lock that guards what it copies while
// it copies, and only then (the daemon's completes the snapshot's figures
// after releasing it). The daemon's takes a look of the pipeline
// first when it has news (Pipeline::RefreshLook), so that the A/B tables
// and the means count the same lists.
using SummarySource = std::function<void(SummaryState*)>;

// "/": the page, as text/html, under the Content-Security-Policy of csp.h
// (computed here, once); a 500 naming the failure if that cannot be made.
http::Handler PageHandler();

// "/api/v1/summary": the summary of what `source` copied, rendered after
// it returns, stamped with `clock`'s wall and monotonic time.
http::Handler SummaryHandler(SummarySource source, const Clock* clock);

// Registers both on `server`.
void RegisterHandlers(http::HttpServer* server, SummarySource source,
                      const Clock* clock);

}  // namespace rankwatch::page

#endif  // RANKWATCH_DAEMON_PAGE_HANDLERS_H_
