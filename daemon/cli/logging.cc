#include "daemon/cli/logging.h"

#include <spdlog/details/log_msg.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <utility>

#include "base/json_writer.h"
#include "config/effective_config.h"

namespace rankwatch::cli {

namespace {

// The fields of the line being logged on this thread (see the header).
thread_local std::span<const LogField> current_fields;

// "2026-11-22T21:03:47.123Z".
void AppendTime(std::chrono::system_clock::time_point t, std::string* out) {
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         t.time_since_epoch())
                         .count();
  // Floor division: times before 1970 keep a non-negative millisecond.
  const int64_t millis = ((ms % 1000) + 1000) % 1000;
  const time_t seconds = static_cast<time_t>((ms - millis) / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  const size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  out->append(buf, n);
  char frac[8];
  snprintf(frac, sizeof(frac), ".%03dZ", static_cast<int>(millis));
  out->append(frac);
}

// A text value bare when it reads unambiguously, else as a JSON string
// (logfmt's convention).
void AppendTextValue(const std::string& s, std::string* out) {
  const bool bare =
      !s.empty() && s.find_first_of(" \"=\\\t\r\n") == std::string::npos;
  if (bare) {
    out->append(s);
  } else {
    AppendJsonString(out, s);
  }
}

void AppendTextField(const LogField& f, std::string* out) {
  out->push_back(' ');
  out->append(f.key);
  out->push_back('=');
  if (const auto* s = std::get_if<std::string>(&f.value)) {
    AppendTextValue(*s, out);
  } else if (const auto* i = std::get_if<int64_t>(&f.value)) {
    out->append(std::to_string(*i));
  } else {
    out->append(std::get<bool>(f.value) ? "true" : "false");
  }
}

void WriteJsonField(std::string_view key, const LogField& f, JsonWriter* w) {
  w->Key(key);
  if (const auto* s = std::get_if<std::string>(&f.value)) {
    w->String(*s);
  } else if (const auto* i = std::get_if<int64_t>(&f.value)) {
    w->Int(*i);
  } else {
    w->Bool(std::get<bool>(f.value));
  }
}

// {"time": ..., "level": ..., "message": ..., fields...}.
std::string JsonLine(std::chrono::system_clock::time_point time,
                     std::string_view level, std::string_view message) {
  std::string when;
  AppendTime(time, &when);
  JsonWriter w;
  w.BeginObject();
  w.Key("time");
  w.String(when);
  w.Key("level");
  w.String(level);
  w.Key("message");
  w.String(message);
  for (const LogField& f : current_fields) {
    // The three fixed keys stay unique: a field named like one of them is
    // written with a "field." prefix.
    const bool reserved =
        f.key == "time" || f.key == "level" || f.key == "message";
    WriteJsonField(reserved ? "field." + f.key : f.key, f, &w);
  }
  w.EndObject();
  return w.Take();
}

// Formats whole lines as `format` asks; spdlog's custom formatter API.
class LineFormatter final : public spdlog::formatter {
 public:
  explicit LineFormatter(config::LogFormat format) : format_(format) {}

  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    std::string line;
    const std::string_view level = ToStringView(msg.level);
    const std::string_view message(msg.payload.data(), msg.payload.size());
    switch (format_) {
      case config::LogFormat::kText:
        AppendTime(msg.time, &line);
        line.append(" [").append(level).append("] ").append(message);
        for (const LogField& f : current_fields) AppendTextField(f, &line);
        break;
      case config::LogFormat::kJson:
        line = JsonLine(msg.time, level, message);
        break;
    }
    line.push_back('\n');
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(format_);
  }

 private:
  static std::string_view ToStringView(spdlog::level::level_enum level) {
    const spdlog::string_view_t name = spdlog::level::to_string_view(level);
    return std::string_view(name.data(), name.size());
  }

  config::LogFormat format_;
};

// "name=value,..." of kafka.properties, secret values masked.
std::string PropertiesText(const std::map<std::string, std::string>& props) {
  std::string text;
  for (const auto& [name, value] : props) {
    if (!text.empty()) text.push_back(',');
    text.append(name).push_back('=');
    if (config::IsSecretProperty(name)) {
      text.append(config::kMaskedSecret);
    } else {
      text.append(value);
    }
  }
  return text;
}

}  // namespace

std::unique_ptr<spdlog::formatter> MakeLogFormatter(config::LogFormat format) {
  return std::make_unique<LineFormatter>(format);
}

void SetupLogging(const config::LoggingConfig& logging) {
  spdlog::set_formatter(MakeLogFormatter(logging.format));
  spdlog::set_level(spdlog::level::from_str(logging.level));
}

void LogFields(spdlog::level::level_enum level, std::string_view message,
               std::initializer_list<LogField> fields) {
  const std::span<const LogField> saved = current_fields;
  current_fields = std::span<const LogField>(fields.begin(), fields.size());
  spdlog::default_logger_raw()->log(level, message);
  current_fields = saved;
}

void LogStartup(const config::Config& config, int http_port) {
  const std::string& listen = config.http.listen;
  const std::string host = listen.substr(0, listen.rfind(':'));
  const std::string address =
      std::string(config.http.tls.enabled() ? "https://" : "http://") + host +
      ":" + std::to_string(http_port);
  LogFields(spdlog::level::info, "rankwatch started",
            {
                {"version", RANKWATCH_VERSION},
                {"brokers", config.kafka.bootstrap_servers},
                {"group", config.kafka.group_id},
                {"results_topic", config.kafka.results_topic},
                {"judgments_topic", config.kafka.judgments_topic},
                {"join_mode", config::JoinModeName(config.join.mode)},
                {"http_address", address},
                {"tls", config.http.tls.enabled()},
                {"basic_auth", config.http.basic_auth.enabled()},
                {"kafka_properties", PropertiesText(config.kafka.properties)},
            });
}

}  // namespace rankwatch::cli
