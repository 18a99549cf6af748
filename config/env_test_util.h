// FakeEnv: an environment for tests of ${ENV} expansion, holding only the
// given variables. For tests only.
#ifndef RANKWATCH_CONFIG_ENV_TEST_UTIL_H_
#define RANKWATCH_CONFIG_ENV_TEST_UTIL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "config/env_expansion.h"

namespace rankwatch::config {

inline EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](
             const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_ENV_TEST_UTIL_H_
