#include "config/env_expansion.h"

#include <cstdlib>

#include "config/text.h"

namespace rankwatch::config {

std::optional<std::string> SystemEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

StatusOr<std::string> ExpandEnv(std::string_view text, const EnvLookup& env) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    // A lone '$' is refused rather than kept: `$NAME` (shell style) would
    // otherwise pass through silently as a literal.
    if (i + 1 >= text.size() || text[i + 1] != '{') {
      return Status::InvalidArgument(
          "'$' must start ${NAME} or ${NAME:-default} (write '$$' for a "
          "literal '$')");
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument(
          "unterminated '${' (write '$$' for a literal '$')");
    }
    const std::string_view inner = text.substr(i + 2, close - i - 2);
    const size_t separator = inner.find(":-");
    const std::string_view name = inner.substr(0, separator);
    if (!IsIdentifier(name)) {
      return Status::InvalidArgument("invalid environment variable name '" +
                                     Printable(name) + "'");
    }
    std::optional<std::string> value =
        env ? env(std::string(name)) : std::nullopt;
    if (separator != std::string_view::npos && (!value || value->empty())) {
      value = std::string(inner.substr(separator + 2));
    }
    if (!value) {
      return Status::InvalidArgument("environment variable " +
                                     std::string(name) + " is not set");
    }
    out.append(*value);
    i = close;
  }
  return out;
}

}  // namespace rankwatch::config
