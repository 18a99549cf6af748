// The effective configuration printed back as YAML (`rankwatch
// check-config`): every key present, in the order of config.h, so that
// operators see the defaults they did not write. Written with yaml-cpp's
// emitter, which quotes and escapes. Stateless and thread-safe.
#ifndef RANKWATCH_CONFIG_EFFECTIVE_CONFIG_H_
#define RANKWATCH_CONFIG_EFFECTIVE_CONFIG_H_

#include <string>
#include <string_view>

#include "config/config.h"

namespace rankwatch::config {

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

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_EFFECTIVE_CONFIG_H_
