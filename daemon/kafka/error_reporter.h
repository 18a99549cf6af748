// ErrorReporter: how the Kafka layer surfaces a librdkafka error it does
// not act on otherwise: counted in IngestState::errors under librdkafka's
// error name (rankwatch_kafka_errors_total{error}) and logged, at most
// kLogsPerSecond lines a second so that a broker outage cannot flood the
// log.
//
// Writes the status: the caller holds the mutex that guards it (see
// KafkaIngest). Not thread-safe otherwise. The status and the clock must
// outlive the reporter.
#ifndef RANKWATCH_DAEMON_KAFKA_ERROR_REPORTER_H_
#define RANKWATCH_DAEMON_KAFKA_ERROR_REPORTER_H_

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/rate_limiter.h"
#include "daemon/kafka/ingest_state.h"

namespace rankwatch::kafka {

class ErrorReporter {
 public:
  static constexpr int32_t kLogsPerSecond = 10;

  ErrorReporter(IngestState* status, const Clock* clock)
      : status_(status), log_limit_(kLogsPerSecond, clock) {}

  // Counts `err` and logs "<context>: <librdkafka's description>[: detail]".
  void Report(RdKafka::ErrorCode err, std::string_view context,
              std::string_view detail = {});
  // Logs without counting, for errors counted elsewhere (commits, dead
  // letters), under the same rate limit.
  void Log(std::string_view context, std::string_view detail);

  // Lines dropped by the rate limit.
  int64_t suppressed() const { return log_limit_.suppressed(); }

 private:
  IngestState* status_;
  RateLimiter log_limit_;
};

// librdkafka's name of `err`, e.g. "_TRANSPORT" or "UNKNOWN_TOPIC_OR_PART".
std::string_view ErrorName(RdKafka::ErrorCode err);

// Whether `err` is an error librdkafka reports about one broker connection
// (connect, resolve, TLS, SASL): the cause of a later ERR__ALL_BROKERS_DOWN.
bool IsConnectionError(RdKafka::ErrorCode err);

// The cause in librdkafka's text of a connection error, without the broker
// name in front and the "(after 0ms in state CONNECT, ...)" behind:
// "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection
// refused (after 0ms in state CONNECT)" gives "Connection refused";
// "h:9092/bootstrap: Failed to resolve 'h:9092': Name or service not known
// (after 2ms in state CONNECT)" gives "Failed to resolve 'h:9092': Name or
// service not known". Text of another shape is returned as it is.
std::string ConnectionErrorCause(std::string_view text);

// `text` with librdkafka's guess after a connection closed during its
// first request ("Disconnected while requesting ApiVersion: might be
// caused by incorrect security.protocol configuration (connecting to a SSL
// listener?) or broker version is < 0.10 (see api.version.request)")
// replaced by both causes a plaintext broker also shows it for: a broker
// stopping or starting, which is the common one (issue 43), or an SSL or
// SASL listener. Other text is returned as it is.
std::string WithoutProtocolGuess(std::string_view text);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_ERROR_REPORTER_H_
