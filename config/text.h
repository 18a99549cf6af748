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

// Edit distance and the closest known key ("did you mean"): base's, for
// every layer (metrics/measure_names.h suggests measure names with them).
using ::rankwatch::ClosestKey;
using ::rankwatch::EditDistance;

// Whether `name` matches [a-zA-Z_][a-zA-Z0-9_]*: environment variable
// names and Prometheus label names alike.
bool IsIdentifier(std::string_view name);

// The shortest decimal text that reads back as the same double.
std::string FormatNumber(double v);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_TEXT_H_
