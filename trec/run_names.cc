#include "trec/run_names.h"

#include <algorithm>
#include <array>

namespace rankwatch::trec {

std::vector<std::string> RunNames(std::span<const std::string> preferred,
                                  std::span<const std::string> paths) {
  // Three candidate names per run, most telling first: the run id, the
  // file's name, its path. A run takes the first that no other run
  // shares: two runs tagged STANDARD (trec_eval's test files) are told
  // apart by their files (issue 43), not by their positions.
  const auto base_name = [](const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  };
  std::vector<std::array<std::string, 3>> candidates;
  for (size_t i = 0; i < paths.size(); ++i) {
    const bool has_id = i < preferred.size() && !preferred[i].empty();
    candidates.push_back({has_id ? preferred[i] : base_name(paths[i]),
                          base_name(paths[i]), paths[i]});
  }
  const auto shared = [&](size_t level, const std::string& name) {
    return std::count_if(candidates.begin(), candidates.end(),
                         [&](const std::array<std::string, 3>& c) {
                           return c[level] == name;
                         }) > 1;
  };
  std::vector<std::string> names;
  for (size_t i = 0; i < candidates.size(); ++i) {
    size_t level = 0;
    while (level < 2 && shared(level, candidates[i][level])) ++level;
    names.push_back(candidates[i][level]);
  }
  // The same file given twice: the position tells them apart.
  std::vector<std::string> unique = names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::count(names.begin(), names.end(), names[i]) > 1) {
      unique[i] += "#" + std::to_string(i);
    }
  }
  return unique;
}

std::optional<size_t> FindBaseline(std::string_view spec,
                                   std::span<const std::string> paths,
                                   std::span<const std::string> names) {
  for (auto list : {paths, names}) {
    const auto it = std::find(list.begin(), list.end(), spec);
    if (it != list.end()) return static_cast<size_t>(it - list.begin());
  }
  size_t index = 0;
  if (spec.empty() || spec.size() > 9) return std::nullopt;
  for (char ch : spec) {
    if (ch < '0' || ch > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(ch - '0');
  }
  if (index >= paths.size()) return std::nullopt;
  return index;
}

}  // namespace rankwatch::trec
