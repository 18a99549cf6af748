#include "trec/streaming_eval.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

#include "base/string_index.h"
#include "trec/parallel.h"
#include "trec/query_scorer.h"

namespace rankwatch::trec {

namespace {

// Whether the line [line, next) (`next` just past its '\n', or the end of
// the text) is longer than kMaxLineBytes: the mapped path then reports it.
bool TooLong(const char* line, const char* next) {
  const size_t bytes = static_cast<size_t>(next - line);
  return bytes > kMaxLineBytes &&
         (next[-1] != '\n' || bytes - 1 > kMaxLineBytes);
}

// One group of run lines: consecutive lines with one qid.
struct GroupRecord {
  int64_t query;    // Index in Qrels::queries(), or -1 for a run-only qid.
  std::string qid;  // Run-only qids only: the chunk's bytes do not last.
  uint64_t begin;   // Byte range of the group in the run file.
  uint64_t end;
};

// The scores of one qrels query and the number of groups of the run with
// its qid. The first group to arrive scores the query; when a qid has more
// than one group, the query is scored again from all of them.
struct QuerySlot {
  std::atomic<uint32_t> groups{0};
  QueryRow row;
};

// Per-thread state of the streaming path: cuts chunks of run lines into
// groups and hands each to a QueryScorer. Any malformed line or duplicate
// docno makes it return false. Not thread-safe; the slots it writes are
// shared, one writer per slot (the first group of its qid).
class GroupScorer {
 public:
  GroupScorer(const Qrels& qrels, const ScorerConfig& config,
              std::span<QuerySlot> slots)
      : qrels_(qrels), scorer_(qrels, config), slots_(slots) {}

  // Scores every group of `chunk` and appends a record of each to `groups`.
  bool ScoreChunk(const RunChunk& chunk, std::vector<GroupRecord>* groups) {
    const char* const data = chunk.text.data();
    const char* const end = data + chunk.text.size();
    std::string_view qid;
    const QueryQrels* query = nullptr;
    std::string_view last_run_id;
    size_t begin = 0;
    size_t last = 0;
    bool open = false;  // Whether the scorer holds a group (of `qid`).
    for (const char* p = data; p < end;) {
      const char* const line = p;
      RunLineKind kind;
      RunLineFields fields;
      p = ScanRunLine(p, end, &kind, &fields);
      if (TooLong(line, p)) return false;
      if (kind == RunLineKind::kSkip) continue;
      if (kind == RunLineKind::kTooShort) return false;
      if (!BytesEqual(fields.qid, qid)) {
        if (open) {
          FinishGroup(qid, query, chunk.offset + begin, chunk.offset + last,
                      groups);
        }
        open = true;
        qid = fields.qid;
        query = qrels_.FindQuery(qid);
        scorer_.BeginJoined(query);
        begin = static_cast<size_t>(line - data);
      }
      if (!scorer_.AddJoinedEntry(fields)) return false;
      last_run_id = fields.run_id;
      last = static_cast<size_t>(p - data);
    }
    NoteRunId(chunk.offset, last_run_id);
    if (open) {
      FinishGroup(qid, query, chunk.offset + begin, chunk.offset + last,
                  groups);
    }
    return true;
  }

  // Scores `q` (index `query`), which the run lacks, as trec_eval does -c.
  void ScoreMissing(int64_t query) {
    scorer_.ScoreMissing(qrels_.queries()[static_cast<size_t>(query)],
                         &slots_[static_cast<size_t>(query)].row);
  }

  // The run id of the last data line among the chunks seen, and the offset
  // of its chunk (trec_eval prints the file's last run id).
  bool has_run_id() const { return has_run_id_; }
  uint64_t run_id_offset() const { return run_id_offset_; }
  const std::string& run_id() const { return run_id_; }

  // Scores `text`, every line of one query (`query` indexes the qrels, or
  // is -1 for a run-only query, which is only checked).
  bool ScoreWhole(std::string_view text, int64_t query) {
    scorer_.Clear();
    const char* const end = text.data() + text.size();
    for (const char* p = text.data(); p < end;) {
      const char* const line = p;
      RunLineKind kind;
      RunLineFields fields;
      p = ScanRunLine(p, end, &kind, &fields);
      if (TooLong(line, p) || kind == RunLineKind::kTooShort) return false;
      if (kind == RunLineKind::kData && !scorer_.AddEntry(fields)) {
        return false;
      }
    }
    const QueryQrels* q = query < 0 ? nullptr : &qrels_.queries()[query];
    if (scorer_.JoinGrades(q)) return false;
    if (q != nullptr) scorer_.Score(*q, &slots_[query].row);
    return true;
  }

 private:
  void NoteRunId(uint64_t offset, std::string_view run_id) {
    if (run_id.empty() || (has_run_id_ && offset < run_id_offset_)) return;
    has_run_id_ = true;
    run_id_offset_ = offset;
    run_id_.assign(run_id);
  }

  // Records the group of `qid` (its qrels `q`, or null) whose lines, all
  // joined (AddJoinedEntry), are the scorer's entries, and scores it if it
  // is its qid's first.
  void FinishGroup(std::string_view qid, const QueryQrels* q, uint64_t begin,
                   uint64_t end, std::vector<GroupRecord>* groups) {
    const int64_t index = q == nullptr ? -1 : q - qrels_.queries().data();
    groups->push_back(GroupRecord{
        index, q == nullptr ? std::string(qid) : std::string(), begin, end});
    if (q != nullptr &&
        slots_[index].groups.fetch_add(1, std::memory_order_relaxed) == 0) {
      scorer_.Score(*q, &slots_[index].row);
    }
  }

  const Qrels& qrels_;
  QueryScorer scorer_;
  const std::span<QuerySlot> slots_;
  bool has_run_id_ = false;
  uint64_t run_id_offset_ = 0;
  std::string run_id_;
};

// Reads `reader` on `threads` threads, each scoring the chunks it takes.
// Fills `groups` with a record of every group. False if any thread failed.
bool ScoreChunks(RunChunkReader* reader, int threads, const Qrels& qrels,
                 const ScorerConfig& config, std::span<QuerySlot> slots,
                 std::vector<GroupRecord>* groups, std::string* run_id) {
  // One task per thread, each reading chunks until the end of the file; a
  // failure stops the others at their next chunk.
  const size_t tasks = ParallelWorkers(static_cast<size_t>(threads), threads);
  std::atomic<bool> failed{false};
  std::vector<std::vector<GroupRecord>> found(tasks);
  std::vector<std::pair<uint64_t, std::string>> run_ids(tasks);
  RunParallel(tasks, threads, [&](size_t t, size_t) {
    GroupScorer scorer(qrels, config, slots);
    std::vector<char> buffer;
    RunChunk chunk;
    while (!failed.load(std::memory_order_relaxed) &&
           reader->Next(&buffer, &chunk)) {
      if (!scorer.ScoreChunk(chunk, &found[t])) failed.store(true);
    }
    if (scorer.has_run_id()) {
      run_ids[t] = {scorer.run_id_offset() + 1, scorer.run_id()};
    }
    return true;
  });
  if (failed.load() || !reader->status().ok()) return false;
  // The chunk at the highest offset holds the file's last data line.
  const auto last = std::max_element(
      run_ids.begin(), run_ids.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  if (last != run_ids.end()) *run_id = last->second;
  for (std::vector<GroupRecord>& f : found) {
    std::move(f.begin(), f.end(), std::back_inserter(*groups));
  }
  return true;
}

// Scores again, from all its lines, each qid found in more than one group
// (a run not grouped by query): the per-group scores were partial.
bool RescoreSplitQueries(const RunChunkReader& reader,
                         std::vector<GroupRecord>* groups,
                         GroupScorer* scorer) {
  std::sort(groups->begin(), groups->end(),
            [](const GroupRecord& a, const GroupRecord& b) {
              if (a.query != b.query) return a.query < b.query;
              if (a.qid != b.qid) return a.qid < b.qid;
              return a.begin < b.begin;
            });
  std::string text;
  std::string part;
  for (size_t i = 0; i < groups->size();) {
    size_t j = i + 1;
    const GroupRecord& g = (*groups)[i];
    while (j < groups->size() && (*groups)[j].query == g.query &&
           (*groups)[j].qid == g.qid) {
      ++j;
    }
    if (j - i > 1) {
      text.clear();
      for (size_t k = i; k < j; ++k) {
        if (!reader.ReadRange((*groups)[k].begin, (*groups)[k].end, &part)
                 .ok()) {
          return false;
        }
        text += part;
        text += '\n';  // The last line of the file may have none.
      }
      if (!scorer->ScoreWhole(text, g.query)) return false;
    }
    i = j;
  }
  return true;
}

}  // namespace

bool EvaluateStreaming(RunChunkReader* reader, const Qrels& qrels,
                       const ScorerConfig& config, bool complete, int threads,
                       std::vector<QueryResult>* results, std::string* run_id) {
  std::vector<QuerySlot> slots(qrels.queries().size());
  std::vector<GroupRecord> groups;
  if (!ScoreChunks(reader, threads, qrels, config, slots, &groups, run_id)) {
    return false;
  }
  GroupScorer scorer(qrels, config, slots);
  if (!RescoreSplitQueries(*reader, &groups, &scorer)) return false;
  // In qid order: the order of the output and of the sums.
  results->clear();
  for (size_t i = 0; i < slots.size(); ++i) {
    const QueryQrels& qq = qrels.queries()[i];
    if (slots[i].groups.load() == 0) {
      if (!complete) continue;
      scorer.ScoreMissing(static_cast<int64_t>(i));
    }
    results->push_back(QueryResult{qq.qid, std::move(slots[i].row.values),
                                   std::move(slots[i].row.text)});
  }
  return true;
}

}  // namespace rankwatch::trec
