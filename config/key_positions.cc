#include "config/key_positions.h"

#include <yaml-cpp/yaml.h>

#include <string>

namespace rankwatch::config {

std::optional<ConfigPosition> FindConfigKey(std::string_view yaml,
                                            std::span<const std::string> path,
                                            NodePart part) {
  if (path.empty()) return std::nullopt;
  // yaml-cpp reports syntax errors by throwing; the file has loaded once
  // already, so this is for a file changed in between.
  try {
    YAML::Node node = YAML::Load(std::string(yaml));
    for (size_t i = 0; i < path.size(); ++i) {
      if (!node.IsMap()) return std::nullopt;
      bool found = false;
      for (YAML::const_iterator it = node.begin(); it != node.end(); ++it) {
        if (!it->first.IsScalar() || it->first.Scalar() != path[i]) continue;
        if (i + 1 == path.size()) {
          // An empty value is marked at the next token (often on the next
          // line), so it points at its key, as the loader does.
          const bool key = part == NodePart::kKey || it->second.IsNull();
          const YAML::Mark mark = key ? it->first.Mark() : it->second.Mark();
          if (mark.is_null()) return std::nullopt;
          return ConfigPosition{mark.line + 1, mark.column + 1};
        }
        // reset() rebinds; operator= would overwrite the tree's node.
        const YAML::Node child = it->second;
        node.reset(child);
        found = true;
        break;
      }
      if (!found) return std::nullopt;
    }
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace rankwatch::config
