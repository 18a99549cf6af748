// libFuzzer target: the YAML configuration loader (config/config_loader.h
// ParseConfig). Properties beyond "no crash" (yaml-cpp throws; nothing may
// escape ParseConfig):
//  - every error is one line: no control character in the message;
//  - a configuration that loads, printed (FormatEffectiveConfig), loads
//    again and prints the same text: the effective configuration is a
//    fixed point, so what check-config shows is what runs.
//
// Environment variables: FUZZ=x is set, everything else is unset, so that
// ${...} expansion is exercised the same way on every machine.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_loader.h"
#include "config/effective_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::optional<std::string> FuzzEnv(const std::string& name) {
  if (name == "FUZZ") return std::string("x");
  return std::nullopt;
}

bool OneLine(std::string_view message) {
  for (char ch : message) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rankwatch;
  using namespace rankwatch::config;
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  StatusOr<Config> config = ParseConfig(yaml, "fuzz.yaml", FuzzEnv);
  if (!config.ok()) {
    const std::string message = config.status().message();
    FUZZ_CHECK(!message.empty());
    FUZZ_CHECK(OneLine(message));
    return 0;
  }
  const std::string printed = FormatEffectiveConfig(*config);
  StatusOr<Config> again = ParseConfig(printed, "effective.yaml", FuzzEnv);
  if (!again.ok()) {
    std::fprintf(stderr, "effective configuration does not load: %s\n%s\n",
                 again.status().message().c_str(), printed.c_str());
  }
  FUZZ_CHECK(again.ok());
  const std::string reprinted = FormatEffectiveConfig(*again);
  if (reprinted != printed) {
    std::fprintf(stderr, "printed:\n%s\nreprinted:\n%s\n", printed.c_str(),
                 reprinted.c_str());
  }
  FUZZ_CHECK(reprinted == printed);
  return 0;
}
