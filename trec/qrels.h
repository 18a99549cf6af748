// Qrels: an immutable, in-memory TREC qrels file ("qid iter docno grade" per
// line), indexed for fast (qid, docno) -> grade lookups.
//
// Owns the file's bytes; every string_view it hands out points into them and
// lives as long as the Qrels. Immutable after Load/Parse, so concurrent
// readers need no locking.
#ifndef RANKWATCH_TREC_QRELS_H_
#define RANKWATCH_TREC_QRELS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/string_index.h"
#include "metrics/measures.h"
#include "trec/mapped_file.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

class LineSplitter;

// trec_eval's relevance code of a retrieved doc: its qrels grade when >= 0,
// else one of these. The engine reads every negative code as unjudged;
// trec_eval's infAP, bpref, unj, relstring and num_nonrel_judged_ret tell
// the two apart.
inline constexpr metrics::Grade kNotInPool = metrics::kUnjudged;  // -1
inline constexpr metrics::Grade kUnjudgedInPool = -2;  // Negative grade.

// One query's judgments. Positions index Qrels' internal arrays.
struct QueryQrels {
  std::string_view qid;
  uint32_t begin = 0;  // Judgments [begin, end) in Qrels::grades().
  uint32_t end = 0;
  uint32_t slot_begin = 0;  // This query's open-addressing table.
  uint32_t slot_mask = 0;
  int64_t num_positive = 0;  // Entries with grade > 0 (ignores -l).
};

class Qrels {
 public:
  // Reads and indexes `path` ("-" for stdin). Errors name the file and line:
  // too few or too many fields, a grade that is not an integer, a docno
  // judged twice for one query, a line longer than kMaxLineBytes
  // (text_scan.h). Echoed text is escaped (Printable, base/strings.h).
  // Parses and indexes on up to `threads` threads (parallel.h); the result
  // and the error reported do not depend on the number.
  static StatusOr<Qrels> Load(const std::string& path, int threads = 1);
  // The same for text already in memory; `name` is used in messages.
  static StatusOr<Qrels> Parse(std::string text, std::string name,
                               int threads = 1);

  // Queries in qid strcmp order.
  std::span<const QueryQrels> queries() const { return queries_; }
  const QueryQrels* FindQuery(std::string_view qid) const;

  // The code of `docno` for `q`: its grade, kUnjudgedInPool when the grade
  // is negative, kNotInPool when it has none.
  // `hash` must be HashBytes(docno).
  // Inline: evaluation calls it for every run line.
  metrics::Grade Lookup(const QueryQrels& q, std::string_view docno,
                        uint64_t hash) const {
    const uint32_t tag = static_cast<uint32_t>(hash >> 32);
    size_t i = hash & q.slot_mask;
    for (;;) {
      const Slot& s = slots_[q.slot_begin + i];
      if (s.entry == 0) return kNotInPool;
      if (s.tag == tag && BytesEqual(docnos_[s.entry - 1], docno)) {
        const metrics::Grade g = grades_[s.entry - 1];
        return g < 0 ? kUnjudgedInPool : g;
      }
      i = (i + 1) & q.slot_mask;
    }
  }

  // All grades of `q`, in file order (what R and the ideal DCG need).
  std::span<const metrics::Grade> grades(const QueryQrels& q) const {
    return std::span<const metrics::Grade>(grades_).subspan(q.begin,
                                                            q.end - q.begin);
  }
  std::span<const std::string_view> docnos(const QueryQrels& q) const {
    return std::span<const std::string_view>(docnos_).subspan(q.begin,
                                                              q.end - q.begin);
  }

  const std::string& name() const { return name_; }

 private:
  struct Slot {
    uint32_t tag = 0;    // High 32 bits of the docno's hash.
    uint32_t entry = 0;  // 1 + index into docnos_/grades_; 0 = empty.
  };
  // Consecutive judgment lines of one qid, in file order.
  struct Group {
    std::string_view qid;
    size_t begin = 0;  // Byte range of the group's lines in the text.
    size_t end = 0;
    uint64_t first_line = 0;  // 1-based line number of `begin`.
    uint32_t count = 0;       // Judgments in the group.
    uint32_t dest = 0;        // Index of its first judgment in docnos_.
    uint32_t query = 0;       // Index of its query in queries_.
    uint32_t positive = 0;    // Judgments with a grade above 0.
  };

  // The earliest docno judged twice for one query, in file order, and the
  // judgment it repeats: what BuildTables reports.
  struct Duplicate {
    const std::string_view* again = nullptr;
    const std::string_view* first = nullptr;
    const QueryQrels* query = nullptr;
  };

  Qrels() = default;
  Status Build(std::string_view text, int threads);
  struct ScannedPart {
    std::vector<Group> groups;
    uint64_t lines = 0;
    uint64_t too_long = 0;
  };
  static ScannedPart ScanPart(std::string_view text, size_t begin, size_t end);
  Status ScanGroups(std::string_view text, int threads,
                    std::vector<Group>* out) const;
  Status ParseGroup(std::string_view text, LineSplitter* splitter,
                    Group* group);
  Status BuildQueries(std::string_view text, int threads,
                      std::vector<Group>* groups);
  Status BuildTables(std::string_view text, int threads);
  // Indexes the judgments of queries_[qi] into their table, noting into
  // `dup` a duplicate earlier in the file than the one it holds.
  void IndexQuery(uint32_t qi, Duplicate* dup);

  std::string name_;
  std::unique_ptr<MappedFile> file_;   // Backing bytes when loaded from disk.
  std::unique_ptr<std::string> text_;  // Backing bytes when parsed.
  std::vector<QueryQrels> queries_;
  std::vector<std::string_view> docnos_;
  std::vector<metrics::Grade> grades_;
  std::vector<Slot> slots_;
  StringIndex query_index_;  // qid -> index in queries_.
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_QRELS_H_
