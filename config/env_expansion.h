// `${NAME}` substitution in configuration values: `${NAME}` is replaced by
// the environment variable NAME, `${NAME:-default}` falls back to `default`
// when NAME is unset or empty, and `$$` is a literal `$`. Any other `$` is
// an error, so that a shell-style `$NAME` is not kept silently as text. The
// substituted value is not expanded again.
//
// Stateless and thread-safe (SystemEnv() reads the process environment,
// which must not be modified concurrently).
#ifndef RANKWATCH_CONFIG_ENV_EXPANSION_H_
#define RANKWATCH_CONFIG_ENV_EXPANSION_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch::config {

// Looks up an environment variable: its value, or nullopt when unset.
// Injectable so that tests do not depend on the process environment; an
// empty EnvLookup means that no variable is set.
using EnvLookup =
    std::function<std::optional<std::string>(const std::string& name)>;

// The process environment, via std::getenv.
std::optional<std::string> SystemEnv(const std::string& name);

// `text` with ${NAME}, ${NAME:-default} and $$ expanded. NAME must match
// [a-zA-Z_][a-zA-Z0-9_]*. On error, an InvalidArgument whose message names
// what is wrong, without a position (the caller knows where `text` came
// from).
[[nodiscard]] StatusOr<std::string> ExpandEnv(std::string_view text,
                                              const EnvLookup& env);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_ENV_EXPANSION_H_
