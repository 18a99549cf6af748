// Where a key of a YAML configuration file is, for the checks that run
// after loading (check-config, run): their errors point at the file's
// line and column as the loader's own do (config/config_loader.h).
//
// The typed Config keeps no positions, so the file is parsed again here,
// inside config/, which keeps yaml-cpp a private dependency.
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_CONFIG_KEY_POSITIONS_H_
#define RANKWATCH_CONFIG_KEY_POSITIONS_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rankwatch::config {

// A 1-based line and column.
struct ConfigPosition {
  int line = 0;
  int column = 0;
};

enum class NodePart {
  kKey,    // The key's position (a misspelt key).
  kValue,  // The value's (a file that does not exist).
};

// The position of the map entry at `path` in the YAML document `yaml`
// (each element one map key, so that "securty.protocol" under
// kafka.properties is {"kafka", "properties", "securty.protocol"}).
// nullopt when there is no such entry or the text is not YAML.
std::optional<ConfigPosition> FindConfigKey(std::string_view yaml,
                                            std::span<const std::string> path,
                                            NodePart part);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_KEY_POSITIONS_H_
