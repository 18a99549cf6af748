// The sections the server reads: kafka (with its librdkafka properties),
// http (listen address, TLS, basic auth) and logging. See config_parser.h.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "config/config_parser.h"
#include "config/text.h"
#include "config/yaml_reader.h"
#include "metrics/measure_names.h"

namespace rankwatch::config::internal {

namespace {

// librdkafka properties that have their own key here; setting both would
// leave it unclear which one wins.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4>
    kManagedProperties = {{
        {"bootstrap.servers", "kafka.bootstrap_servers"},
        {"metadata.broker.list", "kafka.bootstrap_servers"},
        {"group.id", "kafka.group_id"},
        {"group.instance.id", "kafka.group_instance_id"},
    }};

constexpr std::array<LogFormat, 2> kLogFormats = {LogFormat::kText,
                                                  LogFormat::kJson};
constexpr std::array<std::string_view, 6> kLogLevels = {
    "trace", "debug", "info", "warn", "error", "off"};

}  // namespace

Status Parser::ReadKafka(const Field& f, KafkaConfig* c) {
  return yaml_.ReadMap(
      f,
      {
          {"bootstrap_servers", yaml_.NameInto(&c->bootstrap_servers)},
          {"group_id", yaml_.NameInto(&c->group_id)},
          {"results_topic", yaml_.NameInto(&c->results_topic)},
          {"judgments_topic", yaml_.NameInto(&c->judgments_topic)},
          {"commit_interval", yaml_.DurationInto(true, &c->commit_interval)},
          {"not_ready_after", yaml_.DurationInto(true, &c->not_ready_after)},
          {"durable_state", yaml_.BoolInto(&c->durable_state)},
          {"changelog_topic", yaml_.StringInto(&c->changelog_topic)},
          {"group_instance_id",
           [&](const Field& v) {
             return ReadGroupInstanceId(v, &c->group_instance_id);
           }},
          {"checkpoint_interval",
           yaml_.DurationInto(true, &c->checkpoint_interval)},
          {"properties",
           [&](const Field& v) { return ReadProperties(v, &c->properties); }},
      });
}

// Kafka's own rule for group.instance.id (like a topic name's): 1 to 249
// of [a-zA-Z0-9._-]; empty: none. Checked here, not by the broker at the
// first join.
Status Parser::ReadGroupInstanceId(const Field& f, std::string* out) {
  StatusOr<std::string> text = yaml_.Text(f, "a string");
  if (!text.ok()) return text.status();
  if (text->size() > 249) {
    return yaml_.Error(f, "is longer than Kafka's 249 characters");
  }
  for (char c : *text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-') {
      return yaml_.Error(f, "'" + Printable(*text) +
                                "' has a character Kafka does not take in a "
                                "group.instance.id (a-z, A-Z, 0-9, '.', '_' "
                                "and '-' only)");
    }
  }
  *out = std::move(*text);
  return Status::Ok();
}

Status Parser::ReadProperties(const Field& f,
                              std::map<std::string, std::string>* out) {
  out->clear();
  return yaml_.ForEachPair(f, [&](const Field& key, const Field& value) {
    const std::string& name = key.node.Scalar();
    if (name.empty()) return yaml_.Error(key, "empty property name");
    for (const auto& [managed, instead] : kManagedProperties) {
      if (name == managed) {
        return yaml_.Error(key, "set " + std::string(instead) + " instead");
      }
    }
    // Booleans and numbers are kept as written: librdkafka takes text.
    StatusOr<std::string> text = yaml_.Text(value, "a scalar value");
    if (!text.ok()) return text.status();
    if (name == "partition.assignment.strategy") assignment_strategy_ = value;
    (*out)[name] = std::move(*text);
    return Status::Ok();
  });
}

Status Parser::ReadHttp(const Field& f, HttpConfig* c) {
  std::optional<Field> tls;
  std::optional<Field> auth;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f,
      {
          {"listen", [&](const Field& v) { return ReadListen(v, &c->listen); }},
          {"enable_reload", yaml_.BoolInto(&c->enable_reload)},
          {"allowed_hosts",
           [&](const Field& v) {
             return yaml_.ReadNameList(v, "host", &c->allowed_hosts);
           }},
          {"response_budget_bytes",
           yaml_.IntInto(int64_t{1} << 20, &c->response_budget_bytes)},
          {"tls", [&](const Field& v) { return ReadTls(v, &c->tls, &tls); }},
          {"basic_auth",
           [&](const Field& v) {
             return ReadBasicAuth(v, &c->basic_auth, &auth);
           }},
      }));
  // Half a TLS setup would silently serve plain HTTP.
  if (tls && c->tls.cert_file.empty() != c->tls.key_file.empty()) {
    return yaml_.Error(*tls, "needs both cert_file and key_file");
  }
  if (auth &&
      c->basic_auth.username.empty() != c->basic_auth.password.empty()) {
    return yaml_.Error(*auth, "needs both username and password");
  }
  if (auth && c->basic_auth.username.find(':') != std::string::npos) {
    return yaml_.Error(*auth, "a user name cannot hold ':'");
  }
  if (auth && c->basic_auth.users.count(c->basic_auth.username) != 0) {
    return yaml_.Error(*auth, "user '" + Printable(c->basic_auth.username) +
                                  "' is both username and in users");
  }
  if (tls && !c->tls.enabled() &&
      (!c->tls.client_ca.empty() || !c->tls.cipher_suites.empty())) {
    return yaml_.Error(*tls, "client_ca and cipher_suites need cert_file");
  }
  return Status::Ok();
}

Status Parser::ReadTls(const Field& v, TlsConfig* c,
                       std::optional<Field>* seen) {
  *seen = v;
  if (v.node.IsNull()) return Status::Ok();
  std::optional<Field> version;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      v, {
             {"cert_file", yaml_.StringInto(&c->cert_file)},
             {"key_file", yaml_.StringInto(&c->key_file)},
             {"client_ca", yaml_.StringInto(&c->client_ca)},
             {"min_version",
              [&](const Field& f) {
                version = f;
                return yaml_.ReadString(f, &c->min_version);
              }},
             {"cipher_suites", yaml_.StringInto(&c->cipher_suites)},
         }));
  if (version && c->min_version != "1.2" && c->min_version != "1.3") {
    return yaml_.Error(*version, "expected \"1.2\" or \"1.3\", got '" +
                                     Printable(c->min_version) + "'");
  }
  return Status::Ok();
}

Status Parser::ReadBasicAuth(const Field& v, BasicAuthConfig* c,
                             std::optional<Field>* seen) {
  *seen = v;
  if (v.node.IsNull()) return Status::Ok();
  return yaml_.ReadMap(
      v, {
             {"username", yaml_.StringInto(&c->username)},
             {"password", yaml_.StringInto(&c->password)},
             {"users",
              [&](const Field& users) {
                return yaml_.ForEachPair(
                    users, [&](const Field& key, const Field& value) {
                      std::string name;
                      RW_RETURN_IF_ERROR(yaml_.ReadName(key, &name));
                      // RFC 7617: "user:pass" would split at the first ':'.
                      if (name.find(':') != std::string::npos) {
                        return yaml_.Error(key, "a user name cannot hold ':'");
                      }
                      std::string secret;
                      RW_RETURN_IF_ERROR(yaml_.ReadName(value, &secret));
                      c->users[name] = std::move(secret);
                      return Status::Ok();
                    });
              }},
         });
}

Status Parser::ReadListen(const Field& f, std::string* out) {
  StatusOr<std::string> text = yaml_.Text(f, "host:port");
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  const std::string expected =
      "expected host:port like 127.0.0.1:9464, "
      "0.0.0.0:9464 or [::1]:9464, got '" +
      Printable(s) + "'";
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return yaml_.Error(f, expected);
  const std::string_view host = std::string_view(s).substr(0, colon);
  const std::string_view port = std::string_view(s).substr(colon + 1);
  int value = -1;
  const auto [stop, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || port.size() > 5 || ec != std::errc() ||
      stop != port.data() + port.size() || value < 0 || value > 65535) {
    return yaml_.Error(
        f, "port '" + Printable(port) + "' is not a number from 0 to 65535");
  }
  if (host.front() == '[') {
    const bool v6 = host.size() > 2 && host.back() == ']' &&
                    std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
                      return std::isxdigit(static_cast<unsigned char>(c)) ||
                             c == ':' || c == '.';
                    });
    if (!v6) return yaml_.Error(f, expected);
  } else if (host.find(':') != std::string_view::npos) {
    return yaml_.Error(f, "an IPv6 host must be in brackets, like [::1]:9464");
  } else if (!std::all_of(host.begin(), host.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '-' || c == '_';
             })) {
    return yaml_.Error(f, expected);
  }
  *out = s;
  return Status::Ok();
}

Status Parser::ReadLogging(const Field& f, LoggingConfig* c) {
  return yaml_.ReadMap(
      f, {
             {"level",
              [&](const Field& v) {
                std::string_view level;
                RW_RETURN_IF_ERROR(yaml_.ReadChoice(
                    v, "log level", kLogLevels,
                    [](std::string_view n) { return n; }, &level));
                c->level = std::string(level);
                return Status::Ok();
              }},
             {"max_rejects_logged_per_second",
              yaml_.IntInto(0, &c->max_rejects_logged_per_second)},
             {"format",
              [&](const Field& v) {
                return yaml_.ReadChoice(v, "log format", kLogFormats,
                                        LogFormatName, &c->format);
              }},
         });
}

}  // namespace rankwatch::config::internal
