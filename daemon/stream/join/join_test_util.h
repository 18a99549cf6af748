// Helpers for join tests: events built from literals, and a listener that
// records what the join reports.
#ifndef RANKWATCH_DAEMON_STREAM_JOIN_JOIN_TEST_UTIL_H_
#define RANKWATCH_DAEMON_STREAM_JOIN_JOIN_TEST_UTIL_H_

#include <string>
#include <vector>

#include "daemon/stream/decode/events.h"
#include "daemon/stream/join/join.h"

namespace rankwatch::stream::testing {

// Owns the strings an event's views point to.
struct OwnedResults {
  std::vector<std::string> storage;
  ResultsEvent event;
};
struct OwnedJudgments {
  std::vector<std::string> storage;
  JudgmentEvent event;
};

inline OwnedResults Results(const std::string& request_id, int64_t t,
                            const std::vector<std::string>& docs,
                            const std::string& query_id = "") {
  OwnedResults r;
  r.storage = docs;
  r.storage.push_back(request_id);
  r.storage.push_back(query_id);
  r.event.timestamp_ms = t;
  for (size_t i = 0; i < docs.size(); ++i)
    r.event.doc_ids.push_back(r.storage[i]);
  r.event.request_id = r.storage[docs.size()];
  r.event.query_id = r.storage[docs.size() + 1];
  r.event.variant = "default";
  return r;
}

inline OwnedJudgments Judgments(
    const std::string& id, int64_t t,
    const std::vector<std::pair<std::string, std::optional<int32_t>>>& grades,
    bool is_query_id = false) {
  OwnedJudgments j;
  for (const auto& [doc, g] : grades) j.storage.push_back(doc);
  j.storage.push_back(id);
  j.event.timestamp_ms = t;
  for (size_t i = 0; i < grades.size(); ++i) {
    j.event.judgments.push_back({j.storage[i], grades[i].second, {}, false});
  }
  (is_query_id ? j.event.query_id : j.event.request_id) = j.storage.back();
  return j;
}

// The same event with every judgment by judge `judge` (its place in
// judges.names).
inline OwnedJudgments By(int32_t judge, OwnedJudgments j) {
  for (Judgment& one : j.event.judgments) one.judge = judge;
  return j;
}

// Labels as nothing: a request has no label group to write (group 0).
class NoGroups : public GroupCodec {
 public:
  void Write(uint32_t, ByteWriter*) const override {}
  uint32_t Read(ByteReader*) const override { return 0; }
};

struct Finalized {
  std::string request_id;
  uint32_t group;
  int64_t served_ms;
  int64_t closed_ms;
  FinalizeCause cause;
  std::vector<metrics::Grade> ranked;
  std::vector<metrics::Grade> judged;
  std::vector<metrics::Grade> clicks;
  int64_t first_click_delay_ms;
  std::vector<JudgeGrades> judges = {};
};

class RecordingListener : public JoinListener {
 public:
  void OnFinalized(const FinalizedRequest& r) override {
    finalized.push_back({std::string(r.request_id),
                         r.group,
                         r.served_ms,
                         r.closed_ms,
                         r.cause,
                         {r.ranked.begin(), r.ranked.end()},
                         {r.judged.begin(), r.judged.end()},
                         {r.clicks.begin(), r.clicks.end()},
                         r.first_click_delay_ms,
                         {r.judges.begin(), r.judges.end()}});
  }
  void OnReleased(EventOrigin o) override { released.push_back(o.offset); }

  std::vector<Finalized> finalized;
  std::vector<int64_t> released;
};

}  // namespace rankwatch::stream::testing

#endif  // RANKWATCH_DAEMON_STREAM_JOIN_JOIN_TEST_UTIL_H_
