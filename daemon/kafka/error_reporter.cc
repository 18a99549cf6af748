#include "daemon/kafka/error_reporter.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <string>

namespace rankwatch::kafka {

std::string_view ErrorName(RdKafka::ErrorCode err) {
  return rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err));
}

void ErrorReporter::Report(RdKafka::ErrorCode err, std::string_view context,
                           std::string_view detail) {
  ++status_->errors[std::string(ErrorName(err))];
  if (!log_limit_.Allow()) return;
  if (detail.empty()) {
    spdlog::warn("kafka: {}: {}", context, RdKafka::err2str(err));
  } else {
    spdlog::warn("kafka: {}: {}: {}", context, RdKafka::err2str(err), detail);
  }
}

void ErrorReporter::Log(std::string_view context, std::string_view detail) {
  if (log_limit_.Allow()) spdlog::warn("kafka: {}: {}", context, detail);
}

}  // namespace rankwatch::kafka
