#include "trec/batch_eval.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include "base/string_index.h"
#include "trec/mapped_file.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

namespace {

using metrics::Measure;

enum class Params { kNone, kCutoffs, kOptionalCutoffs };

struct MeasureInfo {
  std::string_view name;
  TrecMeasure measure;
  Params params;
  std::vector<int32_t> default_cutoffs;
};

const std::vector<MeasureInfo>& MeasureTable() {
  static const std::vector<int32_t> kLong = {5,   10,  15,  20,  30,
                                             100, 200, 500, 1000};
  static const std::vector<MeasureInfo>* table = new std::vector<MeasureInfo>{
      {"num_q", TrecMeasure::kNumQ, Params::kNone, {}},
      {"num_ret", TrecMeasure::kNumRet, Params::kNone, {}},
      {"num_rel", TrecMeasure::kNumRel, Params::kNone, {}},
      {"num_rel_ret", TrecMeasure::kNumRelRet, Params::kNone, {}},
      {"map", TrecMeasure::kMap, Params::kNone, {}},
      {"Rprec", TrecMeasure::kRprec, Params::kNone, {}},
      {"recip_rank", TrecMeasure::kRecipRank, Params::kOptionalCutoffs, {}},
      {"P", TrecMeasure::kP, Params::kCutoffs, kLong},
      {"recall", TrecMeasure::kRecall, Params::kCutoffs, kLong},
      {"ndcg", TrecMeasure::kNdcg, Params::kNone, {}},
      {"ndcg_cut", TrecMeasure::kNdcgCut, Params::kCutoffs, kLong},
      {"map_cut", TrecMeasure::kMapCut, Params::kCutoffs, kLong},
      {"success", TrecMeasure::kSuccess, Params::kCutoffs, {1, 5, 10}},
      {"judged", TrecMeasure::kJudged, Params::kCutoffs, {5, 10, 20}},
  };
  return *table;
}

std::string SupportedMeasures() {
  std::string s;
  for (const MeasureInfo& m : MeasureTable()) {
    if (!s.empty()) s += ", ";
    s += m.name;
  }
  return s;
}

StatusOr<std::vector<int32_t>> ParseCutoffs(const std::string& spec,
                                            std::string_view params) {
  std::vector<int32_t> cutoffs;
  size_t start = 0;
  while (true) {
    const size_t comma = params.find(',', start);
    std::string_view tok = params.substr(
        start, comma == std::string_view::npos ? comma : comma - start);
    int32_t k;
    if (!ParseInteger(tok, &k) || k < 1) {
      return Status::InvalidArgument("measure '" + spec + "': cutoff '" +
                                     std::string(tok) +
                                     "' is not a positive integer");
    }
    cutoffs.push_back(k);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(cutoffs.begin(), cutoffs.end());
  if (std::adjacent_find(cutoffs.begin(), cutoffs.end()) != cutoffs.end()) {
    return Status::InvalidArgument("measure '" + spec + "': duplicate cutoffs");
  }
  return cutoffs;
}

void MergeCutoffs(std::vector<int32_t>* into, const std::vector<int32_t>& add) {
  into->insert(into->end(), add.begin(), add.end());
  std::sort(into->begin(), into->end());
  into->erase(std::unique(into->begin(), into->end()), into->end());
}

// One printed row: a measure at a cutoff (or uncut), or a count.
struct Row {
  enum class Kind { kNumQ, kNumRet, kNumRel, kNumRelRet, kValue };
  std::string name;
  Kind kind;
  Measure measure = Measure::kPrecision;
  int cutoff_index = -1;
};

std::vector<Row> BuildRows(const MeasureSelection& sel,
                           const std::vector<int32_t>& cutoffs) {
  std::vector<Row> rows;
  auto index_of = [&](int32_t k) {
    return static_cast<int>(
        std::lower_bound(cutoffs.begin(), cutoffs.end(), k) - cutoffs.begin());
  };
  auto add_cut = [&](const MeasureSelection::Item& item, Measure m) {
    for (int32_t k : item.cutoffs) {
      rows.push_back(
          {metrics::TrecName(m, k), Row::Kind::kValue, m, index_of(k)});
    }
  };
  for (const MeasureSelection::Item& item : sel.items()) {
    switch (item.measure) {
      case TrecMeasure::kNumQ:
        rows.push_back({"num_q", Row::Kind::kNumQ});
        break;
      case TrecMeasure::kNumRet:
        rows.push_back({"num_ret", Row::Kind::kNumRet});
        break;
      case TrecMeasure::kNumRel:
        rows.push_back({"num_rel", Row::Kind::kNumRel});
        break;
      case TrecMeasure::kNumRelRet:
        rows.push_back({"num_rel_ret", Row::Kind::kNumRelRet});
        break;
      case TrecMeasure::kMap:
        rows.push_back(
            {"map", Row::Kind::kValue, Measure::kAveragePrecision, -1});
        break;
      case TrecMeasure::kRprec:
        rows.push_back({"Rprec", Row::Kind::kValue, Measure::kRPrecision, -1});
        break;
      case TrecMeasure::kRecipRank:
        if (item.uncut) {
          rows.push_back(
              {"recip_rank", Row::Kind::kValue, Measure::kReciprocalRank, -1});
        }
        add_cut(item, Measure::kReciprocalRank);
        break;
      case TrecMeasure::kP:
        add_cut(item, Measure::kPrecision);
        break;
      case TrecMeasure::kRecall:
        add_cut(item, Measure::kRecall);
        break;
      case TrecMeasure::kNdcg:
        rows.push_back({"ndcg", Row::Kind::kValue, Measure::kNdcg, -1});
        break;
      case TrecMeasure::kNdcgCut:
        add_cut(item, Measure::kNdcg);
        break;
      case TrecMeasure::kMapCut:
        add_cut(item, Measure::kAveragePrecision);
        break;
      case TrecMeasure::kSuccess:
        add_cut(item, Measure::kSuccess);
        break;
      case TrecMeasure::kJudged:
        add_cut(item, Measure::kJudged);
        break;
    }
  }
  return rows;
}

bool IsInteger(Row::Kind k) { return k != Row::Kind::kValue; }

double RowValue(const Row& row, const metrics::ListScores& s) {
  switch (row.kind) {
    case Row::Kind::kNumQ:
      return 1;
    case Row::Kind::kNumRet:
      return static_cast<double>(s.num_ret);
    case Row::Kind::kNumRel:
      return static_cast<double>(s.num_rel);
    case Row::Kind::kNumRelRet:
      return static_cast<double>(s.num_rel_ret);
    case Row::Kind::kValue:
      return metrics::MeasureValue(s, row.measure, row.cutoff_index);
  }
  return 0;
}

// The `all` value of each row: sums for counts, means for the rest, summed
// in qid order as trec_eval does.
std::vector<double> Summary(const EvalReport& report,
                            const std::vector<Row>& rows) {
  const auto& queries = report.queries();
  std::vector<double> all(rows.size(), 0.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (const QueryResult& q : queries) all[r] += RowValue(rows[r], q.scores);
    if (rows[r].kind == Row::Kind::kNumRel && report.options().complete) {
      all[r] = static_cast<double>(report.complete_num_rel());
    } else if (!IsInteger(rows[r].kind) && !queries.empty()) {
      all[r] /= static_cast<double>(queries.size());
    }
  }
  return all;
}

void AppendTextRow(std::string* out, const std::string& name,
                   std::string_view qid, double value, bool integer) {
  out->append(name);
  if (name.size() < 22) out->append(22 - name.size(), ' ');
  out->push_back('\t');
  out->append(qid);
  out->push_back('\t');
  char buf[64];
  const int n = integer ? std::snprintf(buf, sizeof(buf), "%lld",
                                        static_cast<long long>(value))
                        : std::snprintf(buf, sizeof(buf), "%6.4f", value);
  out->append(buf, static_cast<size_t>(n));
  out->push_back('\n');
}

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void AppendJsonNumber(std::string* out, double value, bool integer) {
  char buf[64];
  const int n = integer ? std::snprintf(buf, sizeof(buf), "%lld",
                                        static_cast<long long>(value))
                        : std::snprintf(buf, sizeof(buf), "%.17g", value);
  out->append(buf, static_cast<size_t>(n));
}

void AppendJsonObject(std::string* out, const std::vector<Row>& rows,
                      const std::vector<double>& values, bool summary) {
  out->push_back('{');
  bool first = true;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].kind == Row::Kind::kNumQ && !summary) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, rows[r].name);
    out->push_back(':');
    AppendJsonNumber(out, values[r], IsInteger(rows[r].kind));
  }
  out->push_back('}');
}

// Puts `entries` in trec_eval's ranking order (a run is usually in it
// already) and scores the first `max_docs` against the judgments of `q`.
void ScoreEntries(const Qrels& qrels, const QueryQrels& q, int64_t max_docs,
                  std::vector<RunEntry>* entries,
                  std::vector<metrics::Grade>* ranked,
                  metrics::Evaluator* evaluator, metrics::ListScores* out) {
  if (!std::is_sorted(entries->begin(), entries->end(), RanksBefore)) {
    std::sort(entries->begin(), entries->end(), RanksBefore);
  }
  const size_t n = static_cast<size_t>(
      std::min<int64_t>(static_cast<int64_t>(entries->size()), max_docs));
  ranked->resize(n);
  for (size_t i = 0; i < n; ++i) (*ranked)[i] = (*entries)[i].grade;
  evaluator->Evaluate(*ranked, qrels.grades(q), out);
}

// ---- The mapped path: any input, exact error messages. ----

// Work for one query of the evaluation: its qrels (null for a run-only
// query, which is parsed for errors but not scored) and its run lines (null
// for a qrels query missing from the run under -c).
struct WorkItem {
  const QueryQrels* qrels;
  const RunQuery* run;
  QueryResult* result;  // Null when not scored.
  uint64_t order;       // File offset, for sequential access.
};

// Per-thread state, reused across queries so that scoring does not allocate.
class QueryScorer {
 public:
  QueryScorer(const Qrels& qrels, const MappedFile& run,
              const metrics::Evaluator& evaluator, const EvalOptions& options)
      : qrels_(qrels), run_(run), evaluator_(evaluator), options_(options) {}

  Status Score(const WorkItem& item) {
    entries_.clear();
    if (item.run != nullptr) {
      RW_RETURN_IF_ERROR(
          ParseRunQuery(run_.data(), *item.run, run_.path(), &entries_));
      RW_RETURN_IF_ERROR(LookUpGrades(item));
    }
    if (item.result == nullptr) return Status::Ok();
    item.result->qid = item.qrels->qid;
    ScoreEntries(qrels_, *item.qrels, options_.max_docs_per_query, &entries_,
                 &ranked_, &evaluator_, &item.result->scores);
    return Status::Ok();
  }

 private:
  // Fills each entry's grade and rejects a docno listed twice for a query.
  Status LookUpGrades(const WorkItem& item) {
    seen_.Clear(entries_.size());
    for (uint32_t i = 0; i < entries_.size(); ++i) {
      RunEntry& e = entries_[i];
      const uint64_t h = HashBytes(e.doc());
      if (const uint32_t* prev = seen_.Insert(e.doc(), h, i)) {
        return Status::InvalidArgument(
            run_.path() + ":" + std::to_string(e.line) + ": duplicate docno '" +
            std::string(e.doc()) + "' for query " + std::string(item.run->qid) +
            " (first listed on line " + std::to_string(entries_[*prev].line) +
            ")");
      }
      if (item.qrels != nullptr)
        e.grade = qrels_.Lookup(*item.qrels, e.doc(), h);
    }
    return Status::Ok();
  }

  const Qrels& qrels_;
  const MappedFile& run_;
  metrics::Evaluator evaluator_;
  const EvalOptions& options_;
  std::vector<RunEntry> entries_;
  std::vector<metrics::Grade> ranked_;
  StringIndex seen_;
};

// Scores `items` on `threads` threads. Returns the first error; when several
// threads fail, the caller re-runs sequentially for a deterministic message.
Status ScoreAll(const std::vector<WorkItem>& items, int threads,
                const Qrels& qrels, const MappedFile& run,
                const metrics::Evaluator& evaluator,
                const EvalOptions& options) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_error;
  auto work = [&] {
    QueryScorer scorer(qrels, run, evaluator, options);
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= items.size()) return;
      Status s = scorer.Score(items[i]);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = std::move(s);
        failed.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  return first_error;
}

Status NoCommonQuery(const std::string& qrels_path, const std::string& run_path,
                     bool complete) {
  return Status::InvalidArgument(
      "no query appears in both '" + qrels_path + "' and '" + run_path + "'" +
      (complete ? "" : " (with -c, every qrels query counts)"));
}

// Maps the whole run, indexes it by qid, then parses and scores query by
// query in file order. Reports the error a sequential reading meets first.
Status EvaluateMapped(const std::string& qrels_path,
                      const std::string& run_path, const Qrels& q,
                      const metrics::Evaluator& evaluator,
                      const EvalOptions& options, int threads,
                      std::vector<QueryResult>* results) {
  StatusOr<MappedFile> run = MappedFile::Open(run_path);
  if (!run.ok()) return run.status();
  const RunIndex index = RunIndex::Build(*run, threads);

  // Queries to score, in qid order (the order of the output and of the sums).
  std::vector<std::pair<const QueryQrels*, const RunQuery*>> scored;
  for (const QueryQrels& qq : q.queries()) {
    const RunQuery* rq = index.FindQuery(qq.qid);
    if (rq != nullptr || options.complete) scored.emplace_back(&qq, rq);
  }
  if (scored.empty()) {
    return NoCommonQuery(qrels_path, run_path, options.complete);
  }
  results->clear();
  results->resize(scored.size());
  std::vector<WorkItem> items;
  items.reserve(index.queries().size() + scored.size());
  for (size_t i = 0; i < scored.size(); ++i) {
    const RunQuery* rq = scored[i].second;
    items.push_back({scored[i].first, rq, &(*results)[i],
                     rq == nullptr ? 0 : rq->blocks.front().begin});
  }
  for (const RunQuery& rq : index.queries()) {  // Run-only: checked, unscored.
    if (q.FindQuery(rq.qid) == nullptr) {
      items.push_back({nullptr, &rq, nullptr, rq.blocks.front().begin});
    }
  }
  std::sort(
      items.begin(), items.end(),
      [](const WorkItem& a, const WorkItem& b) { return a.order < b.order; });

  Status s = ScoreAll(items, threads, q, *run, evaluator, options);
  if (!s.ok() && threads > 1) {
    // Several threads may have failed; report the error a sequential scan
    // meets first, so the message does not depend on scheduling.
    s = ScoreAll(items, 1, q, *run, evaluator, options);
  }
  return s;
}

// ---- The streaming path: regular files, one pass, no error messages. ----

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
  metrics::ListScores scores;
};

// The docnos of one ranked list, to reject a docno listed twice: a table of
// their 64-bit hashes, small enough to stay in L1 for 1,000 docs. A hash
// met twice is confirmed by comparing docnos, since distinct docnos may
// (very rarely) share one. Not thread-safe.
class DocnoSet {
 public:
  // Empties the set and sizes it for `n` docnos.
  void Clear(size_t n) {
    const size_t capacity = std::bit_ceil(std::max<size_t>(16, 2 * n));
    if (slots_.size() < capacity) slots_.resize(capacity);
    std::fill_n(slots_.begin(), capacity, 0);
    mask_ = capacity - 1;
  }

  // False if `hash` was inserted before.
  bool Insert(uint64_t hash) {
    const uint64_t key = hash | 1;  // 0 marks an empty slot.
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == 0) {
        slots_[i] = key;
        return true;
      }
      if (slots_[i] == key) return false;
    }
  }

 private:
  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
};

// Per-thread state of the streaming path: parses groups of run lines,
// joins them with the qrels and scores them, reusing its buffers so that
// nothing is allocated per line. Any malformed line or duplicate docno makes
// it return false: the caller then takes the mapped path, which words the
// error exactly.
class GroupScorer {
 public:
  GroupScorer(const Qrels& qrels, const metrics::Evaluator& evaluator,
              int64_t max_docs, std::span<QuerySlot> slots)
      : qrels_(qrels),
        evaluator_(evaluator),
        max_docs_(max_docs),
        slots_(slots) {}

  // Scores every group of `chunk` and appends a record of each to `groups`.
  bool ScoreChunk(const RunChunk& chunk, std::vector<GroupRecord>* groups) {
    const char* const data = chunk.text.data();
    const char* const end = data + chunk.text.size();
    std::string_view qid;
    size_t begin = 0;
    size_t last = 0;
    entries_.clear();
    for (const char* p = data; p < end;) {
      const char* const line = p;
      RunLineKind kind;
      RunLineFields fields;
      p = ScanRunLine(p, end, &kind, &fields);
      if (kind == RunLineKind::kSkip) continue;
      if (kind == RunLineKind::kTooShort) return false;
      if (fields.qid != qid) {
        if (!entries_.empty() && !FinishGroup(qid, chunk.offset + begin,
                                              chunk.offset + last, groups)) {
          return false;
        }
        entries_.clear();
        qid = fields.qid;
        begin = static_cast<size_t>(line - data);
      }
      if (!AddEntry(fields)) return false;
      last = static_cast<size_t>(p - data);
    }
    return entries_.empty() ||
           FinishGroup(qid, chunk.offset + begin, chunk.offset + last, groups);
  }

  // Scores `text`, every line of one query (`query` indexes the qrels, or
  // is -1 for a run-only query, which is only checked).
  bool ScoreWhole(std::string_view text, int64_t query) {
    entries_.clear();
    const char* const end = text.data() + text.size();
    for (const char* p = text.data(); p < end;) {
      RunLineKind kind;
      RunLineFields fields;
      p = ScanRunLine(p, end, &kind, &fields);
      if (kind == RunLineKind::kTooShort) return false;
      if (kind == RunLineKind::kData && !AddEntry(fields)) return false;
    }
    const QueryQrels* q = query < 0 ? nullptr : &qrels_.queries()[query];
    if (!LookUpGrades(q)) return false;
    if (q != nullptr) Score(*q, &slots_[query].scores);
    return true;
  }

 private:
  bool AddEntry(const RunLineFields& f) {
    double score;
    if (!ParseScore(f.score, &score)) return false;
    entries_.push_back(RunEntry{score, f.docno.data(),
                                static_cast<uint32_t>(f.docno.size()),
                                metrics::kUnjudged, 0});
    return true;
  }

  bool FinishGroup(std::string_view qid, uint64_t begin, uint64_t end,
                   std::vector<GroupRecord>* groups) {
    const QueryQrels* q = qrels_.FindQuery(qid);
    const int64_t index = q == nullptr ? -1 : q - qrels_.queries().data();
    groups->push_back(GroupRecord{
        index, q == nullptr ? std::string(qid) : std::string(), begin, end});
    if (!LookUpGrades(q)) return false;
    if (q != nullptr &&
        slots_[index].groups.fetch_add(1, std::memory_order_relaxed) == 0) {
      Score(*q, &slots_[index].scores);
    }
    return true;
  }

  // Fills each entry's grade from `q` (null: run-only) and rejects a docno
  // listed twice.
  bool LookUpGrades(const QueryQrels* q) {
    seen_.Clear(entries_.size());
    for (size_t i = 0; i < entries_.size(); ++i) {
      RunEntry& e = entries_[i];
      const uint64_t h = HashBytes(e.doc());
      if (!seen_.Insert(h) && ListedBefore(i)) return false;
      if (q != nullptr) e.grade = qrels_.Lookup(*q, e.doc(), h);
    }
    return true;
  }

  // Whether the docno of entries_[i] is that of an earlier entry.
  bool ListedBefore(size_t i) const {
    for (size_t j = 0; j < i; ++j) {
      if (entries_[j].doc() == entries_[i].doc()) return true;
    }
    return false;
  }

  void Score(const QueryQrels& q, metrics::ListScores* out) {
    ScoreEntries(qrels_, q, max_docs_, &entries_, &ranked_, &evaluator_, out);
  }

  const Qrels& qrels_;
  metrics::Evaluator evaluator_;
  const int64_t max_docs_;
  const std::span<QuerySlot> slots_;
  std::vector<RunEntry> entries_;
  std::vector<metrics::Grade> ranked_;
  DocnoSet seen_;
};

// Reads `reader` on `threads` threads, each scoring the chunks it takes.
// Fills `groups` with a record of every group. False if any thread failed.
bool ScoreChunks(RunChunkReader* reader, int threads, const Qrels& qrels,
                 const metrics::Evaluator& evaluator, int64_t max_docs,
                 std::span<QuerySlot> slots, std::vector<GroupRecord>* groups) {
  std::atomic<bool> failed{false};
  std::vector<std::vector<GroupRecord>> found(static_cast<size_t>(threads));
  auto work = [&](size_t t) {
    GroupScorer scorer(qrels, evaluator, max_docs, slots);
    std::vector<char> buffer;
    RunChunk chunk;
    while (!failed.load(std::memory_order_relaxed) &&
           reader->Next(&buffer, &chunk)) {
      if (!scorer.ScoreChunk(chunk, &found[t])) failed.store(true);
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(work, t);
  work(0);
  for (std::thread& t : workers) t.join();
  if (failed.load() || !reader->status().ok()) return false;
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

// The streaming path. Returns false when the run is not well formed (or
// could not be read), leaving the error to the mapped path.
bool EvaluateStreaming(RunChunkReader* reader, const Qrels& q,
                       const metrics::Evaluator& evaluator,
                       const EvalOptions& options, int threads,
                       std::vector<QueryResult>* results) {
  std::vector<QuerySlot> slots(q.queries().size());
  std::vector<GroupRecord> groups;
  if (!ScoreChunks(reader, threads, q, evaluator, options.max_docs_per_query,
                   slots, &groups)) {
    return false;
  }
  GroupScorer scorer(q, evaluator, options.max_docs_per_query, slots);
  if (!RescoreSplitQueries(*reader, &groups, &scorer)) return false;
  // In qid order: the order of the output and of the sums.
  results->clear();
  for (size_t i = 0; i < slots.size(); ++i) {
    const QueryQrels& qq = q.queries()[i];
    if (slots[i].groups.load() == 0) {
      if (!options.complete) continue;
      (void)scorer.ScoreWhole("", static_cast<int64_t>(i));  // Not retrieved.
    }
    results->push_back(QueryResult{qq.qid, std::move(slots[i].scores)});
  }
  return true;
}

}  // namespace

StatusOr<MeasureSelection> MeasureSelection::Parse(
    std::span<const std::string> specs) {
  static const std::vector<std::string> kDefault = {
      "num_q", "num_ret", "num_rel",    "num_rel_ret",
      "map",   "Rprec",   "recip_rank", "P"};
  if (specs.empty()) specs = kDefault;
  const auto& table = MeasureTable();
  std::vector<std::optional<Item>> chosen(table.size());
  for (const std::string& spec : specs) {
    const size_t dot = spec.find('.');
    const std::string_view name = std::string_view(spec).substr(0, dot);
    const bool has_params = dot != std::string::npos;
    const std::string_view params =
        has_params ? std::string_view(spec).substr(dot + 1) : "";
    auto it =
        std::find_if(table.begin(), table.end(),
                     [&](const MeasureInfo& m) { return m.name == name; });
    if (it == table.end()) {
      return Status::InvalidArgument("unknown measure '" + std::string(name) +
                                     "' (supported: " + SupportedMeasures() +
                                     ")");
    }
    const size_t index = static_cast<size_t>(it - table.begin());
    if (!chosen[index]) chosen[index] = Item{it->measure, false, {}};
    Item& item = *chosen[index];
    if (has_params && it->params == Params::kNone) {
      return Status::InvalidArgument("measure '" + std::string(name) +
                                     "' takes no parameters (got '" + spec +
                                     "')");
    }
    if (!has_params) {
      if (it->params == Params::kOptionalCutoffs) {
        item.uncut = true;
      } else {
        MergeCutoffs(&item.cutoffs, it->default_cutoffs);
      }
      continue;
    }
    StatusOr<std::vector<int32_t>> cutoffs = ParseCutoffs(spec, params);
    if (!cutoffs.ok()) return cutoffs.status();
    MergeCutoffs(&item.cutoffs, *cutoffs);
  }
  MeasureSelection sel;
  for (auto& item : chosen) {
    if (item) sel.items_.push_back(std::move(*item));
  }
  return sel;
}

std::vector<int32_t> MeasureSelection::AllCutoffs() const {
  std::vector<int32_t> all;
  for (const Item& item : items_) MergeCutoffs(&all, item.cutoffs);
  return all;
}

StatusOr<EvalReport> EvaluateFiles(const std::string& qrels_path,
                                   const std::string& run_path,
                                   const EvalOptions& options) {
  EvalReport report;
  report.options_ = options;
  report.cutoffs_ = options.measures.AllCutoffs();
  StatusOr<metrics::Evaluator> evaluator =
      metrics::Evaluator::Create(report.cutoffs_, options.definitions);
  if (!evaluator.ok()) return evaluator.status();
  if (options.max_docs_per_query < 1) {
    return Status::InvalidArgument("-M must be a positive number of docs");
  }

  StatusOr<Qrels> qrels = Qrels::Load(qrels_path);
  if (!qrels.ok()) return qrels.status();
  report.qrels_ = std::make_unique<Qrels>(std::move(qrels).value());
  const Qrels& q = *report.qrels_;
  for (const QueryQrels& qq : q.queries()) {
    report.complete_num_rel_ += qq.num_positive;
  }
  const int threads =
      options.threads > 0
          ? options.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // A regular file is streamed; other input, and any input with an error,
  // takes the mapped path.
  bool streamed = false;
  if (std::unique_ptr<RunChunkReader> reader =
          RunChunkReader::Open(run_path, options.run_chunk_bytes)) {
    streamed = EvaluateStreaming(reader.get(), q, *evaluator, options, threads,
                                 &report.queries_);
  }
  if (!streamed) {
    RW_RETURN_IF_ERROR(EvaluateMapped(qrels_path, run_path, q, *evaluator,
                                      options, threads, &report.queries_));
  } else if (report.queries_.empty()) {
    return NoCommonQuery(qrels_path, run_path, options.complete);
  }

  if (options.definitions.zero_relevant == metrics::ZeroRelevantPolicy::kSkip) {
    std::erase_if(report.queries_,
                  [](const QueryResult& r) { return r.scores.num_rel == 0; });
  }
  return report;
}

void WriteTrecText(const EvalReport& report, std::string* out) {
  const std::vector<Row> rows =
      BuildRows(report.options().measures, report.cutoffs());
  if (report.options().per_query) {
    for (const QueryResult& q : report.queries()) {
      for (const Row& row : rows) {
        if (row.kind == Row::Kind::kNumQ) continue;  // Summary only.
        AppendTextRow(out, row.name, q.qid, RowValue(row, q.scores),
                      IsInteger(row.kind));
      }
    }
  }
  const std::vector<double> all = Summary(report, rows);
  for (size_t r = 0; r < rows.size(); ++r) {
    AppendTextRow(out, rows[r].name, "all", all[r], IsInteger(rows[r].kind));
  }
}

void WriteJson(const EvalReport& report, std::string* out) {
  const std::vector<Row> rows =
      BuildRows(report.options().measures, report.cutoffs());
  const metrics::Definitions& d = report.options().definitions;
  out->append("{\"definitions\":{\"relevance_threshold\":");
  out->append(std::to_string(d.relevance_threshold));
  out->append(",\"gain\":");
  AppendJsonString(out, metrics::GainName(d.gain));
  out->append(",\"recall_denominator\":");
  AppendJsonString(out, metrics::RecallDenominatorName(d.recall_denominator));
  out->append(",\"ap_denominator\":");
  AppendJsonString(out, metrics::ApDenominatorName(d.ap_denominator));
  out->append(",\"zero_relevant\":");
  AppendJsonString(out, metrics::ZeroRelevantPolicyName(d.zero_relevant));
  out->append(",\"complete\":");
  out->append(report.options().complete ? "true" : "false");
  out->append("}");
  std::vector<double> values(rows.size());
  if (report.options().per_query) {
    out->append(",\"queries\":{");
    bool first = true;
    for (const QueryResult& q : report.queries()) {
      if (!first) out->push_back(',');
      first = false;
      AppendJsonString(out, q.qid);
      out->push_back(':');
      for (size_t r = 0; r < rows.size(); ++r) {
        values[r] = RowValue(rows[r], q.scores);
      }
      AppendJsonObject(out, rows, values, /*summary=*/false);
    }
    out->push_back('}');
  }
  out->append(",\"all\":");
  AppendJsonObject(out, rows, Summary(report, rows), /*summary=*/true);
  out->append("}\n");
}

}  // namespace rankwatch::trec
