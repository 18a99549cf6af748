// Helpers for exporter tests and benchmarks: pipelines fed with JSON events
// built in code, their snapshots, and exact-line lookups in the text
// exposition format.
#ifndef RANKWATCH_DAEMON_EXPORTER_EXPORTER_TEST_UTIL_H_
#define RANKWATCH_DAEMON_EXPORTER_EXPORTER_TEST_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::exporter::testing {

// A results event of `request_id` served at `t_ms`; `locale` "" leaves
// the segment out.
inline std::string ResultsJson(const std::string& request_id,
                               const std::string& variant, int64_t t_ms,
                               const std::vector<std::string>& docs,
                               const std::string& locale = "") {
  std::string json = R"({"request_id":")" + request_id + R"(","variant":")" +
                     variant + R"(","timestamp":)" + std::to_string(t_ms) +
                     R"(,"results":[)";
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i > 0) json += ",";
    json += "\"" + docs[i] + "\"";
  }
  json += "]";
  if (!locale.empty()) json += R"(,"segments":{"locale":")" + locale + "\"}";
  return json + "}";
}

inline std::string JudgmentJson(const std::string& request_id,
                                const std::string& doc, int grade,
                                int64_t t_ms) {
  return R"({"request_id":")" + request_id + R"(","doc_id":")" + doc +
         R"(","relevance":)" + std::to_string(grade) + R"(,"timestamp":)" +
         std::to_string(t_ms) + "}";
}

// Feeds one results and one judgment event of a distinct request into each
// of `variants` x `locales` label groups, then finishes the pipeline.
inline void FeedGroups(stream::Pipeline* pipeline, int variants, int locales) {
  int64_t offset = 0;
  for (int v = 0; v < variants; ++v) {
    for (int l = 0; l < locales; ++l) {
      const std::string id = "r-" + std::to_string(v) + "-" + std::to_string(l);
      const int64_t t = 1'700'000'000'000 + offset * 1000;
      pipeline->OnPayload(stream::Topic::kResults,
                          ResultsJson(id, "variant" + std::to_string(v), t,
                                      {"d1", "d2", "d3", "d4", "d5", "d6", "d7",
                                       "d8", "d9", "d10"},
                                      "locale" + std::to_string(l)),
                          {0, offset});
      pipeline->OnPayload(stream::Topic::kJudgments,
                          JudgmentJson(id, "d" + std::to_string(1 + l % 10),
                                       1 + v % 3, t + 500),
                          {0, offset});
      ++offset;
    }
  }
  pipeline->FinishAll();
}

// The read model of `pipeline` now, as the daemon's scrape takes it (but
// without a look: the figures are those of the pipeline's latest one).
inline stream::PipelineSnapshot Snapshot(const stream::Pipeline& pipeline) {
  stream::PipelineSnapshot snapshot;
  stream::TakeSnapshot(pipeline, &snapshot);
  return snapshot;
}

// The configuration of the scrape-size measurements: all measures at the
// default cutoffs {1, 3, 5, 10} (32 series per label group), one segment
// label, the default windows {5m, 1h}.
inline config::Config ScaleConfig() {
  config::Config c;
  c.aggregation.segments = {"locale"};
  c.aggregation.max_segment_values = 1000;
  c.aggregation.max_variants = 1000;
  return c;
}

inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    lines.push_back(text.substr(0, eol));
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return lines;
}

inline bool HasLine(std::string_view text, std::string_view line) {
  const std::vector<std::string_view> lines = Lines(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The lines that start with `prefix`, in order.
inline std::vector<std::string> LinesWithPrefix(std::string_view text,
                                                std::string_view prefix) {
  std::vector<std::string> out;
  for (std::string_view line : Lines(text)) {
    if (line.starts_with(prefix)) out.emplace_back(line);
  }
  return out;
}

// Sample lines (not comments) in the text.
inline size_t CountSamples(std::string_view text) {
  size_t n = 0;
  for (std::string_view line : Lines(text)) {
    if (!line.empty() && line[0] != '#') ++n;
  }
  return n;
}

}  // namespace rankwatch::exporter::testing

#endif  // RANKWATCH_DAEMON_EXPORTER_EXPORTER_TEST_UTIL_H_
