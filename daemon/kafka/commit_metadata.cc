#include "daemon/kafka/commit_metadata.h"

#include <algorithm>
#include <charconv>

namespace rankwatch::kafka {

std::string EncodeCommitMetadata(const CommitMetadata& metadata) {
  std::string s;
  if (metadata.watermark_ms != INT64_MIN) {
    s += "wm=" + std::to_string(metadata.watermark_ms);
  }
  if (metadata.end >= 0) {
    if (!s.empty()) s += ';';
    s += "end=" + std::to_string(metadata.end);
  }
  if (metadata.final) {
    if (!s.empty()) s += ';';
    s += "final=1";
  }
  if (metadata.changelog_partition >= 0 && metadata.changelog_offset >= 0) {
    if (!s.empty()) s += ';';
    s += "clp=" + std::to_string(metadata.changelog_partition) +
         ";clo=" + std::to_string(metadata.changelog_offset);
  }
  return s;
}

// Splits with std::find rather than string_view::find: with link-time
// optimization GCC 12 misreads the latter's memchr bound (-Wstringop-overread).
void DecodeCommitMetadata(std::string_view s, CommitMetadata* metadata) {
  while (!s.empty()) {
    const auto semi_it = std::find(s.begin(), s.end(), ';');
    const size_t semi = semi_it == s.end()
                            ? std::string_view::npos
                            : static_cast<size_t>(semi_it - s.begin());
    const std::string_view item = s.substr(0, semi);
    const auto eq_it = std::find(item.begin(), item.end(), '=');
    if (eq_it != item.end()) {
      const size_t eq = static_cast<size_t>(eq_it - item.begin());
      const std::string_view key = item.substr(0, eq);
      const std::string_view value = item.substr(eq + 1);
      int64_t v;
      auto [p, ec] =
          std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec == std::errc() && p == value.data() + value.size()) {
        if (key == "wm") metadata->watermark_ms = v;
        if (key == "end") metadata->end = v;
        if (key == "final") metadata->final = v == 1;
        if (key == "clp") metadata->changelog_partition = v;
        if (key == "clo") metadata->changelog_offset = v;
      }
    }
    if (semi == std::string_view::npos) break;
    s.remove_prefix(semi + 1);
  }
}

}  // namespace rankwatch::kafka
