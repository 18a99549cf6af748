// What the configuration tests share: loading a text that must load, and
// the defaults' effective configuration. For tests only.
#ifndef RANKWATCH_CONFIG_CONFIG_TEST_UTIL_H_
#define RANKWATCH_CONFIG_CONFIG_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "config/config.h"
#include "config/config_loader.h"
#include "config/effective_config.h"
#include "config/env_test_util.h"

namespace rankwatch::config {

// Expects `yaml` to load with only the variables of `env` set, and returns
// the result (a default Config after a failure naming the error and text).
inline Config MustParse(std::string_view yaml,
                        std::map<std::string, std::string> env = {}) {
  StatusOr<Config> c =
      ParseConfig(yaml, "config.yaml", FakeEnv(std::move(env)));
  EXPECT_TRUE(c.ok()) << c.status().message() << "\n" << yaml;
  return c.ok() ? *c : Config{};
}

// The effective configuration of the defaults.
inline std::string Defaults() { return FormatEffectiveConfig(Config{}); }

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_CONFIG_TEST_UTIL_H_
