// The daemon's log lines: spdlog's default logger formatted as
// `logging.format` asks (config.h, LogFormat), optionally with structured
// fields, and the one line that names the running configuration at start.
//
//   text: 2026-11-22T21:03:47.123Z [info] rankwatch started version=0.9.0
//   json: {"time":"2026-11-22T21:03:47.123Z","level":"info",
//          "message":"rankwatch started","version":"0.9.0"}
//
// Times are RFC 3339 in UTC with milliseconds (log shippers and people in
// other time zones read them without guessing). JSON lines are one object
// per line, every string escaped by base/json_writer.h.
//
// Fields reach the formatter through a thread-local span that LogFields()
// sets around its call of the logger: spdlog 1.10 has no structured
// fields, and a synchronous logger (the only kind rankwatch makes) formats
// on the calling thread. Lines logged with plain spdlog calls have none.
//
// Thread-safety: SetupLogging() replaces the formatters of every
// registered logger; call it while no other thread logs (at start, or
// under the reload's lock). LogFields() and LogStartup() may be called
// from any thread.
#ifndef RANKWATCH_DAEMON_CLI_LOGGING_H_
#define RANKWATCH_DAEMON_CLI_LOGGING_H_

#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"

namespace rankwatch::cli {

// One structured field of a log line: a string, an integer or a boolean
// (JSON: a string, a number, true/false; text: key=value).
struct LogField {
  LogField(std::string_view k, std::string_view v)
      : key(k), value(std::string(v)) {}
  LogField(std::string_view k, const char* v) : key(k), value(std::string(v)) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
  template <typename T>
  requires std::integral<T> &&
      (!std::same_as<T, bool>)LogField(std::string_view k, T v)
      : key(k), value(static_cast<int64_t>(v)) {}

  std::string key;
  std::variant<std::string, int64_t, bool> value;
};

// Sets the default logger's level (logging.level) and the line format
// (logging.format) of every registered logger.
void SetupLogging(const config::LoggingConfig& logging);

// The formatter SetupLogging() installs, for loggers made later.
std::unique_ptr<spdlog::formatter> MakeLogFormatter(config::LogFormat format);

// Logs `message` at `level` on the default logger with `fields`.
void LogFields(spdlog::level::level_enum level, std::string_view message,
               std::initializer_list<LogField> fields);

// The start-up line, at info: "rankwatch started" with fields version
// (RANKWATCH_VERSION), brokers, group, results_topic, judgments_topic,
// join_mode, http_address ("http[s]://host:`http_port`"), tls and
// basic_auth (on/off) and kafka_properties ("name=value,...", secret
// values masked as check-config prints them). Never a password.
void LogStartup(const config::Config& config, int http_port);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_LOGGING_H_
