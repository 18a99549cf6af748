// Loading rankwatch's YAML configuration into the typed Config tree
// (config.h); effective_config.h prints it back as YAML.
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
// `default` when NAME is unset or empty; `$$` is a literal `$`
// (env_expansion.h).
//
// This file wires the sections of config.h; the pieces it is built from
// have their own files: yaml_reader.h (typed readers and error positions),
// env_expansion.h, duration.h, rfc3339.h, effective_config.h (the writer)
// and text.h.
//
// docs/configuration.md documents every key; config/example.yaml lists them.
// The functions are stateless and thread-safe (SystemEnv() reads the process
// environment, which must not be modified concurrently).
#ifndef RANKWATCH_CONFIG_CONFIG_LOADER_H_
#define RANKWATCH_CONFIG_CONFIG_LOADER_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "config/config.h"
// The pieces below are part of this header's interface too (EnvLookup and
// SystemEnv in the signatures; durations and the effective configuration
// for the callers that load a configuration and print it back).
#include "base/duration.h"
#include "config/effective_config.h"
#include "config/env_expansion.h"

namespace rankwatch::config {

// Reads and parses the YAML file at `path`. Errors name `path` as given. An
// unreadable file is an IoError; anything wrong inside it is an
// InvalidArgument.
[[nodiscard]] StatusOr<Config> LoadConfigFile(const std::string& path,
                                              EnvLookup env = SystemEnv);

// Parses a YAML document. `file_name` only prefixes error messages.
[[nodiscard]] StatusOr<Config> ParseConfig(std::string_view yaml,
                                           const std::string& file_name,
                                           EnvLookup env = SystemEnv);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_CONFIG_LOADER_H_
