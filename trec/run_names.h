// The names `rankwatch compare` gives its runs and how a user names one
// (--baseline): by run id, else by file, told apart where they collide.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_TREC_RUN_NAMES_H_
#define RANKWATCH_TREC_RUN_NAMES_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::trec {

// Names runs by `preferred` (a run id), else the file name of `paths`; a
// run whose name another run shares takes its file name, then its path,
// the first that is its own; "#i" (i its 0-based position) tells apart
// the same file given twice.
std::vector<std::string> RunNames(std::span<const std::string> preferred,
                                  std::span<const std::string> paths);

// The run that `spec` names: a path given on the command line, a run name,
// or a 0-based position, tried in that order. nullopt if none matches.
std::optional<size_t> FindBaseline(std::string_view spec,
                                   std::span<const std::string> paths,
                                   std::span<const std::string> names);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_RUN_NAMES_H_
