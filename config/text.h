// Small text helpers shared by the configuration's reader, loader and
// writer: making a value fit for a one-line error message, listing names,
// suggesting the closest known key, and printing numbers that read back
// exactly. Stateless and thread-safe.
#ifndef RANKWATCH_CONFIG_TEXT_H_
#define RANKWATCH_CONFIG_TEXT_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/strings.h"

namespace rankwatch::config {

// `text` made fit for a one-line message: '\n' and '\t' written as such,
// other control characters as \xNN, anything beyond 60 bytes cut and
// marked "...". The one helper of base/strings.h, for every layer.
using ::rankwatch::Printable;

// The names of `items`, as given by `name(item)`, separated by ", ".
template <typename Range, typename NameFn>
std::string JoinNames(const Range& items, NameFn name) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += name(item);
  }
  return out;
}

// Edit distance counting a swap of neighbours as one edit (optimal string
// alignment): "jion" is one typo away from "join".
size_t EditDistance(std::string_view a, std::string_view b);

// The known key closest to `key`, when close enough to be a likely typo: at
// most max(1, key.size() / 3) edits away. The first of equally close keys.
std::optional<std::string_view> ClosestKey(
    std::string_view key, std::span<const std::string_view> known);

// Whether `name` matches [a-zA-Z_][a-zA-Z0-9_]*: environment variable
// names and Prometheus label names alike.
bool IsIdentifier(std::string_view name);

// The shortest decimal text that reads back as the same double.
std::string FormatNumber(double v);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_TEXT_H_
