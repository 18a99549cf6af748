#include "daemon/exporter/metrics_handler.h"

#include <prometheus/text_serializer.h>

#include <utility>

namespace rankwatch::exporter {

std::string SerializeText(
    const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

http::Handler MetricsHandler(Gatherer gather) {
  return [gather = std::move(gather)](const http::HttpRequest&) {
    http::HttpResponse response;
    response.content_type = std::string(kTextContentType);
    response.body = SerializeText(gather());
    return response;
  };
}

}  // namespace rankwatch::exporter
