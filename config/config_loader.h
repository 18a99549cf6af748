// Loading rankwatch's YAML configuration into the typed Config tree
// (config.h), and printing the effective configuration back as YAML.
//
// Every key has a default (an empty file is a valid configuration); a key
// that is present overrides its default; an unknown key is an error. The
// first error found stops the load and is returned as an InvalidArgument
// Status whose message names the file, the 1-based line and column of the
// offending node, and its key path:
//
//   config.yaml:12:5: join.window: expected a duration like 30s, 5m, 1h
//   config.yaml:3:3: join.windw: unknown key (did you mean 'window'?)
//
// `${NAME}` in any scalar value is replaced by the environment variable NAME
// before the value is interpreted; `${NAME:-default}` falls back to
// `default` when NAME is unset or empty; `$$` is a literal `$`.
//
// docs/configuration.md documents every key; config/example.yaml lists them.
// The functions are stateless and thread-safe (SystemEnv() reads the process
// environment, which must not be modified concurrently).
#ifndef RANKWATCH_CONFIG_CONFIG_LOADER_H_
#define RANKWATCH_CONFIG_CONFIG_LOADER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::config {

// Looks up an environment variable: its value, or nullopt when unset.
// Injectable so that tests do not depend on the process environment; an
// empty EnvLookup means that no variable is set.
using EnvLookup =
    std::function<std::optional<std::string>(const std::string& name)>;

// The process environment, via std::getenv.
std::optional<std::string> SystemEnv(const std::string& name);

// Reads and parses the YAML file at `path`. Errors name `path` as given. An
// unreadable file is an IoError; anything wrong inside it is an
// InvalidArgument.
[[nodiscard]] StatusOr<Config> LoadConfigFile(const std::string& path,
                                              EnvLookup env = SystemEnv);

// Parses a YAML document. `file_name` only prefixes error messages.
[[nodiscard]] StatusOr<Config> ParseConfig(std::string_view yaml,
                                           const std::string& file_name,
                                           EnvLookup env = SystemEnv);

// The effective configuration as YAML, every key present, in the order of
// config.h. Secret Kafka properties (IsSecretProperty) print as
// kMaskedSecret; `$` in string values is written `$$`. The result loads with
// ParseConfig() into an equal Config, masked values aside.
std::string FormatEffectiveConfig(const Config& config);

// What FormatEffectiveConfig() prints instead of a secret.
inline constexpr std::string_view kMaskedSecret = "****";

// Whether a librdkafka property holds a secret: its name contains
// "password", "secret", "token" or "key" (any case), or it is
// "sasl.jaas.config".
bool IsSecretProperty(std::string_view name);

// Durations as written in the configuration: one or more `<integer><unit>`
// with units ms, s, m, h, d in decreasing order, e.g. 250ms, 30s, 5m, 1h30m,
// 2d. A bare number is not a duration. Returns nullopt when malformed or
// longer than kMaxDuration.
std::optional<Duration> ParseDuration(std::string_view text);

// The inverse of ParseDuration: the shortest compound form (90000 ms is
// "1m30s", 0 is "0s").
std::string FormatDuration(Duration d);

// The longest duration accepted, so that event times plus durations never
// overflow.
inline constexpr Duration kMaxDuration = std::chrono::hours(24 * 3650);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_CONFIG_LOADER_H_
