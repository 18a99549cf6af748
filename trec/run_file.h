// Reading TREC run files ("qid iter docno rank score run_id" per line) fast
// enough for runs of tens of millions of lines.
//
// Two passes. RunIndex::Build scans the file once (in parallel chunks) and
// records, for every qid, the byte ranges ("blocks") of its lines; a run
// grouped by query has one block per qid, but any interleaving works.
// ParseRunQuery then parses one query's blocks into entries on demand, so
// queries can be scored in parallel and only one query per thread is ever
// materialized. Nothing is copied: entries point into the file's bytes.
//
// RunIndex is immutable after Build and safe to share between threads.
//
// RunChunkReader is the single-pass alternative for regular files, used by
// `rankwatch eval`: it streams the file in chunks of whole query groups, so
// each group can be parsed and scored straight from a small, reused buffer
// (no mapping of the whole file, no second pass).
#ifndef RANKWATCH_TREC_RUN_FILE_H_
#define RANKWATCH_TREC_RUN_FILE_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/string_index.h"
#include "metrics/measures.h"
#include "trec/decompress.h"
#include "trec/mapped_file.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

struct RunBlock {
  uint64_t begin = 0;       // Offset of the block's first line.
  uint64_t end = 0;         // One past the block's last byte.
  uint64_t first_line = 0;  // 1-based line number of `begin`.
};

struct RunQuery {
  std::string_view qid;
  std::vector<RunBlock> blocks;  // In file order.
};

class RunIndex {
 public:
  // Scans `file` with up to `threads` threads.
  static RunIndex Build(const MappedFile& file, int threads);

  // Queries in order of first appearance.
  std::span<const RunQuery> queries() const { return queries_; }
  const RunQuery* FindQuery(std::string_view qid) const;

  // The 1-based number of the first line longer than kMaxLineBytes
  // (text_scan.h), or 0 when there is none: such a file is an error.
  uint64_t long_line() const { return long_line_; }

 private:
  std::vector<RunQuery> queries_;
  uint64_t long_line_ = 0;
  StringIndex index_;  // qid -> position in queries_.
};

// One run line of a query.
struct RunEntry {
  double score;
  const char* docno;
  uint32_t docno_length;
  metrics::Grade grade;  // Filled in by the caller.
  uint64_t line;

  std::string_view doc() const { return {docno, docno_length}; }
};

// Parses the lines of `query` from `data` (the whole file) into `out`, in
// file order, reusing its storage. Errors name `file_name` and the line: fewer
// than 6 fields, a score that is not a finite number (echoed escaped).
Status ParseRunQuery(std::string_view data, const RunQuery& query,
                     const std::string& file_name, std::vector<RunEntry>* out);

// What ScanRunLine found on a line.
enum class RunLineKind {
  kData,     // At least 6 fields.
  kSkip,     // Blank, or a comment (first field starts with '#').
  kTooShort  // 1 to 5 fields: malformed.
};

// The fields of a run line that evaluation needs: views into the line.
struct RunLineFields {
  std::string_view qid;
  std::string_view docno;
  std::string_view score;
  std::string_view run_id;
  // Whether kScorePadBytes bytes are readable from score.data(): the score
  // can be read with ParsePaddedScore.
  bool score_padded = false;
};

namespace internal {

// ScanRunLine for a line that ends within the kScanWindowBytes bytes at
// `p` (all readable): its tokens come from the window's whitespace mask,
// without a branch per byte. Returns null, having done nothing, for a
// longer line.
inline const char* ScanShortRunLine(const char* p, RunLineKind* kind,
                                    RunLineFields* fields) {
  const WindowMasks m = ScanWindow(p);
  if (m.newline == 0) return nullptr;
  auto [starts, ends] = LineTokenMarks(m);
  const char* const next = p + std::countr_zero(m.newline) + 1;
  if (starts == 0 || p[std::countr_zero(starts)] == '#') {
    *kind = RunLineKind::kSkip;
    return next;
  }
  // Taken one by one, not counted first: std::popcount is a library call
  // on baseline x86-64.
  std::string_view tok[6];
  for (std::string_view& t : tok) {
    if (starts == 0) {
      *kind = RunLineKind::kTooShort;
      return next;
    }
    const int b = std::countr_zero(starts);
    const int e = std::countr_zero(ends);
    t = std::string_view(p + b, static_cast<size_t>(e - b));
    starts &= starts - 1;
    ends &= ends - 1;
  }
  *kind = RunLineKind::kData;
  *fields =
      RunLineFields{tok[0], tok[2], tok[4], tok[5],
                    tok[4].data() + kScorePadBytes <= p + kScanWindowBytes};
  return next;
}

}  // namespace internal

// Splits the line that starts at `p` and ends at the next '\n' (or `end`)
// into fields, as Tokenize does, and returns where the next line starts.
// Fills `fields` for kData lines only.
inline const char* ScanRunLine(const char* p, const char* end,
                               RunLineKind* kind, RunLineFields* fields) {
  if constexpr (kHasScanWindow) {
    if (static_cast<size_t>(end - p) >= kScanWindowBytes) {
      if (const char* next = internal::ScanShortRunLine(p, kind, fields)) {
        return next;
      }
    }
  }
  std::string_view tok[6];
  int n = 0;
  for (; n < 6; ++n) {
    while (p < end && *p != '\n' && IsSpace(*p)) ++p;
    if (p == end || *p == '\n') break;
    const char* start = p;
    p = FindSpace(p, end);
    tok[n] = std::string_view(start, static_cast<size_t>(p - start));
  }
  if (p < end && *p != '\n') {  // Fields after the 6th are ignored.
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    p = nl == nullptr ? end : static_cast<const char*>(nl);
  }
  if (n == 0 || tok[0].front() == '#') {
    *kind = RunLineKind::kSkip;
  } else if (n < 6) {
    *kind = RunLineKind::kTooShort;
  } else {
    *kind = RunLineKind::kData;
    *fields = RunLineFields{tok[0], tok[2], tok[4], tok[5], false};
  }
  return p < end ? p + 1 : end;
}

// The run id of the last well-formed line of `data` (a whole run file), ""
// if none: trec_eval prints it as `runid`.
std::string_view LastRunId(std::string_view data);

// What FindGroupCut found.
enum class GroupCutScan {
  kFound,     // *cut (and *last_data) are set.
  kNeedMore,  // The bytes end before the cut is known: read on.
  kLongLine   // A line goes on for more than kMaxLineBytes.
};

// Cut(B) (RunChunkReader) in `text`, bytes of a run file in which byte
// B - 1 (B > 0) is text[from]. L is the first line that starts at or after
// B (just past the first '\n' at or after text[from]); the cut is the start
// of the first data line (blank and comment lines are skipped) after L's
// first data line whose qid differs from the data line before it. With
// `at_eof` (text ends where the file does), the end of the file is the cut
// when no qid changes. *last_data is the start of the last data line before
// the cut, or npos when the cut is the end of the file: Cut(B') is the same
// cut for every B' from B up to *last_data (every B' >= B for npos).
GroupCutScan FindGroupCut(std::string_view text, size_t from, bool at_eof,
                          size_t* cut, size_t* last_data);

// A chunk of a run file: whole lines, and every group of consecutive lines
// with one qid that it holds is whole too.
struct RunChunk {
  std::string_view text;
  uint64_t offset = 0;  // File offset of text[0].
};

// Reads a regular run file in chunks (RunChunk) of about `chunk_bytes`, cut
// between two groups; a group larger than that makes its chunk larger, up
// to a line that goes on for more than kMaxLineBytes (text_scan.h) without
// ending in the bytes read, which stops the reading with an error (a file
// without line breaks would otherwise be read whole; a long line that ends
// is handed out, and the scorer refuses it). Workers call Next() concurrently,
// each with its own buffer, and read in parallel: the file is divided into
// ranges of `chunk_bytes` at boundaries B_k = k * chunk_bytes, and each call
// takes the next range under a short lock, then reads (pread) and cuts it
// without the lock. The chunk of range k runs from Cut(B_k) to Cut(B_k+1),
// Cut(0) = 0 and the last range's end is the end of the file, where Cut(B)
// (FindGroupCut) is the start of the first line with a new qid after the first
// data line that starts at or after B. Both workers that need a cut (the one
// whose chunk ends there, the one whose chunk starts there) compute it from the
// same bytes, so they agree without waiting for each other; a worker reads
// on past its range's end as far as the cut, and the other skips those
// lines. A range holding no cut yields no chunk. Chunks come in file order
// per worker, not across workers.
//
// ReadRange() reads back any part of the file, for the rare qid whose
// lines are not all in one group. A gzip or zstd file is streamed through
// its decoder (decompress.h), told by its first bytes, one chunk after
// another under the lock (a stream has no random access); ReadRange() then
// fails, and EvaluateFiles falls back to the mapped path, which decompresses
// the whole file.
//
// Thread-safe. Owns its file descriptor.
class RunChunkReader {
 public:
  // nullptr if `path` cannot be opened or is not a regular file (a pipe
  // cannot be read twice); callers then fall back to MappedFile.
  static std::unique_ptr<RunChunkReader> Open(const std::string& path,
                                              size_t chunk_bytes);
  ~RunChunkReader();
  RunChunkReader(const RunChunkReader&) = delete;
  RunChunkReader& operator=(const RunChunkReader&) = delete;

  // Reads the next chunk into `buffer`, which it grows as needed and which
  // the caller reuses, and points `chunk` into it. Returns false at the end
  // of the file or on a read error (see status()).
  bool Next(std::vector<char>* buffer, RunChunk* chunk);
  Status status() const;

  // Replaces `out` with bytes [begin, end) of the file.
  Status ReadRange(uint64_t begin, uint64_t end, std::string* out) const;

 private:
  // Cut(B) for boundaries in [from, to]: what one search found, kept so
  // that other workers skip the ranges a large group covers (without it,
  // every range inside a group of many megabytes would scan to its end).
  struct KnownCut {
    uint64_t from = 1;
    uint64_t to = 0;
    uint64_t cut = 0;
    bool Covers(uint64_t boundary) const {
      return from <= boundary && boundary <= to;
    }
  };
  struct Window;

  RunChunkReader(int fd, std::string path, size_t chunk_bytes,
                 uint64_t file_size, Compression compression);
  uint64_t Boundary(uint64_t range) const { return range * chunk_bytes_; }
  bool NextDecompressed(std::vector<char>* buffer, RunChunk* chunk);
  bool Fill(std::vector<char>* buffer, size_t* size);
  // Takes the next range that may hold a chunk; false when none is left or
  // a worker failed. Sets *start when the chunk's start is already known.
  bool ClaimRange(uint64_t* range, bool* start_known, uint64_t* start);
  bool ReadRangeChunk(uint64_t range, bool start_known, uint64_t start,
                      Window* w, RunChunk* chunk);
  bool FindCut(uint64_t boundary, Window* w, uint64_t* cut);
  bool ReadTo(uint64_t upto, Window* w);
  bool ReadToEnd(Window* w);
  void Fail(Status status);

  const int fd_;
  const std::string path_;
  const size_t chunk_bytes_;
  // Ranges of a plain file (its size at Open over chunk_bytes_, rounded
  // up); the last one runs to the end of the file, wherever that is then.
  const uint64_t ranges_;
  // Set when the file is gzip or zstd (decompress.h): chunks are then its
  // decompressed text, and ReadRange fails.
  std::unique_ptr<DecompressingReader> decompressor_;
  mutable std::mutex mu_;
  uint64_t next_range_ = 0;  // Plain files: the next range to claim.
  KnownCut known_;           // Plain files: the furthest cut found.
  std::vector<char> carry_;  // Decompressed: read, not handed out yet.
  uint64_t carry_offset_ = 0;
  bool eof_ = false;
  Status status_;
};

// trec_eval's ranking order: score descending, then docno descending by
// bytes (strcmp).
inline bool RanksBefore(const RunEntry& a, const RunEntry& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.doc() > b.doc();
}

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_RUN_FILE_H_
