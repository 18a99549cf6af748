#include "daemon/kafka/error_reporter.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <string>

namespace rankwatch::kafka {

std::string_view ErrorName(RdKafka::ErrorCode err) {
  return rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err));
}

bool IsConnectionError(RdKafka::ErrorCode err) {
  switch (err) {
    case RdKafka::ERR__TRANSPORT:
    case RdKafka::ERR__RESOLVE:
    case RdKafka::ERR__SSL:
    case RdKafka::ERR__AUTHENTICATION:
      return true;
    default:
      return false;
  }
}

std::string ConnectionErrorCause(std::string_view text) {
  // librdkafka appends how long the attempt took and which state it
  // reached; a closing parenthesis ends the text.
  if (const size_t after = text.rfind(" (after ");
      after != std::string_view::npos && text.ends_with(')')) {
    text = text.substr(0, after);
  }
  // The broker's name: "host:port/id: " or "proto://host:port/id: ",
  // without spaces.
  if (const size_t colon = text.find(": "); colon != std::string_view::npos) {
    const std::string_view name = text.substr(0, colon);
    if (name.find('/') != std::string_view::npos &&
        name.find(' ') == std::string_view::npos) {
      text = text.substr(colon + 2);
    }
  }
  constexpr std::string_view kConnect = "Connect to ";
  constexpr std::string_view kFailed = " failed: ";
  if (text.starts_with(kConnect)) {
    if (const size_t failed = text.find(kFailed);
        failed != std::string_view::npos) {
      text = text.substr(failed + kFailed.size());
    }
  }
  return WithoutProtocolGuess(text);
}

std::string WithoutProtocolGuess(std::string_view text) {
  constexpr std::string_view kGuess =
      ": might be caused by incorrect security.protocol configuration "
      "(connecting to a SSL listener?) or broker version is < 0.10 (see "
      "api.version.request)";
  const size_t at = text.find(kGuess);
  if (at == std::string_view::npos) return std::string(text);
  return std::string(text.substr(0, at)) +
         " (the broker closed the connection before answering: it may be "
         "stopping or starting, or its listener is SSL or SASL while "
         "security.protocol is not)" +
         std::string(text.substr(at + kGuess.size()));
}

void ErrorReporter::Report(RdKafka::ErrorCode err, std::string_view context,
                           std::string_view detail) {
  ++status_->errors[std::string(ErrorName(err))];
  if (!log_limit_.Allow()) return;
  if (detail.empty()) {
    spdlog::warn("kafka: {}: {}", context, RdKafka::err2str(err));
  } else {
    spdlog::warn("kafka: {}: {}: {}", context, RdKafka::err2str(err),
                 WithoutProtocolGuess(detail));
  }
}

void ErrorReporter::Log(std::string_view context, std::string_view detail) {
  if (log_limit_.Allow()) spdlog::warn("kafka: {}: {}", context, detail);
}

}  // namespace rankwatch::kafka
