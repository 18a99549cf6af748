// libFuzzer target: the TREC readers (trec/qrels.h, trec/run_file.h).
//
// Qrels: parsed from memory. Properties: a judgment lookup finds every
// judged docno with its grade (kUnjudgedInPool for a negative one), each
// query's judgments are in the table exactly once, no line over kMaxLineBytes
// is accepted, and every error is one line.
//
// Runs: the same bytes read two ways must parse alike:
//  - whole: mapped, indexed (RunIndex::Build) and parsed query by query
//    (ParseRunQuery), as eval does for pipes and after a fallback;
//  - chunked: streamed by RunChunkReader in chunks of a size the input
//    picks (1 to 256 bytes, so cuts land everywhere), each line split by
//    ScanRunLine, as eval's streaming path does.
// The chunks must be whole lines and whole qid groups, concatenate to the
// file, and give the same (qid, docno, score) entries in the same order;
// a file one way rejects (short line, bad score, long line), the other way
// rejects too.
//
// Input that starts with gzip's or zstd's magic is compared on its
// decompressed text (or must fail, one line, when it does not decompress).
//
// Input: byte 0 picks the reader (even: qrels, odd: run) and byte 1 the
// chunk size; the rest is the file. The run is written to a memfd (a
// regular file in memory, as RunChunkReader requires).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/string_index.h"
#include "tests/fuzz/fuzz_check.h"
#include "trec/decompress.h"
#include "trec/mapped_file.h"
#include "trec/qrels.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {
namespace {

using Entry = std::tuple<std::string, std::string, double>;  // qid, doc, score

bool OneLine(std::string_view message) {
  for (char ch : message) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

void FuzzQrels(std::string_view text) {
  StatusOr<Qrels> parsed = Qrels::Parse(std::string(text), "fuzz.qrels");
  if (!parsed.ok()) {
    FUZZ_CHECK(OneLine(parsed.status().message()));
    return;
  }
  FUZZ_CHECK(LongLine(text, kMaxLineBytes) == 0);
  const Qrels& q = *parsed;
  size_t judgments = 0;
  for (const QueryQrels& query : q.queries()) {
    FUZZ_CHECK(q.FindQuery(query.qid) == &query);
    const auto docnos = q.docnos(query);
    const auto grades = q.grades(query);
    FUZZ_CHECK(docnos.size() == grades.size());
    int64_t positive = 0;
    for (size_t i = 0; i < docnos.size(); ++i) {
      const metrics::Grade expected =
          grades[i] < 0 ? trec::kUnjudgedInPool : grades[i];
      FUZZ_CHECK(q.Lookup(query, docnos[i], HashBytes(docnos[i])) == expected);
      if (grades[i] > 0) ++positive;
    }
    FUZZ_CHECK(positive == query.num_positive);
    judgments += docnos.size();
  }
  (void)judgments;
}

// Whole: every query of the index parsed from the mapped file. False on a
// parse error.
bool ReadWhole(const std::string& path, std::vector<Entry>* out) {
  StatusOr<MappedFile> file = MappedFile::Open(path, LineBounds());
  if (!file.ok()) {  // Damaged gzip or zstd input.
    FUZZ_CHECK(OneLine(file.status().message()));
    return false;
  }
  const RunIndex index = RunIndex::Build(*file, 1);
  if (index.long_line() != 0) return false;
  std::vector<RunEntry> entries;
  for (const RunQuery& query : index.queries()) {
    const Status s = ParseRunQuery(file->data(), query, "fuzz.run", &entries);
    if (!s.ok()) {
      FUZZ_CHECK(OneLine(s.message()));
      return false;
    }
    for (const RunEntry& e : entries) {
      out->emplace_back(std::string(query.qid), std::string(e.doc()), e.score);
    }
  }
  return true;
}

// Chunked: the streaming reader's chunks, split as the streaming path
// splits them; entries grouped by qid in order of first appearance, as
// RunIndex orders queries. False on a malformed line.
bool ReadChunked(const std::string& path, std::string_view text,
                 size_t chunk_bytes, std::vector<Entry>* out) {
  std::unique_ptr<RunChunkReader> reader =
      RunChunkReader::Open(path, chunk_bytes);
  FUZZ_CHECK(reader != nullptr);
  std::vector<char> buffer;
  RunChunk chunk;
  uint64_t offset = 0;
  std::string last_qid;  // Of the previous chunk's last data line.
  bool ok = true;
  std::map<std::string, size_t> seen;  // qid -> index in by_query.
  std::vector<std::vector<Entry>> by_query;
  while (reader->Next(&buffer, &chunk)) {
    // Chunks tile the file, cut after a '\n' (or at its end).
    FUZZ_CHECK(chunk.offset == offset);
    FUZZ_CHECK(text.substr(offset, chunk.text.size()) == chunk.text);
    offset += chunk.text.size();
    FUZZ_CHECK(offset == text.size() || chunk.text.back() == '\n');
    bool first_data = true;
    const char* const end = chunk.text.data() + chunk.text.size();
    for (const char* p = chunk.text.data(); p < end;) {
      const char* const line = p;
      RunLineKind kind;
      RunLineFields fields;
      p = ScanRunLine(p, end, &kind, &fields);
      const size_t bytes =
          static_cast<size_t>(p - line) - (p[-1] == '\n' ? 1 : 0);
      if (bytes > kMaxLineBytes) ok = false;
      if (kind == RunLineKind::kSkip) continue;
      if (kind == RunLineKind::kTooShort) {
        ok = false;
        continue;
      }
      // A group is never split between chunks (checked while every line
      // so far is well formed: a short line's qid is not tracked here).
      if (first_data && ok) FUZZ_CHECK(std::string(fields.qid) != last_qid);
      first_data = false;
      last_qid = std::string(fields.qid);
      double score;
      if (!ParseScore(fields.score, &score)) {
        ok = false;
        continue;
      }
      const auto [it, inserted] = seen.emplace(last_qid, by_query.size());
      if (inserted) by_query.emplace_back();
      by_query[it->second].emplace_back(last_qid, std::string(fields.docno),
                                        score);
    }
  }
  if (!reader->status().ok()) {
    FUZZ_CHECK(OneLine(reader->status().message()));
    return false;
  }
  FUZZ_CHECK(offset == text.size());
  for (const std::vector<Entry>& q : by_query) {
    out->insert(out->end(), q.begin(), q.end());
  }
  return ok;
}

void FuzzRun(std::string_view text, size_t chunk_bytes) {
  static const int fd = ::memfd_create("fuzz.run", 0);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::ftruncate(fd, 0) == 0);
  FUZZ_CHECK(::pwrite(fd, text.data(), text.size(), 0) ==
             static_cast<ssize_t>(text.size()));
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::vector<Entry> whole;
  std::vector<Entry> chunked;
  // Input that starts with gzip's or zstd's magic is read as its
  // decompressed text, which the chunks then tile; input that does not
  // decompress fails the whole reading with one line.
  std::string plain;
  std::string_view reference = text;
  const Compression c =
      DetectCompression(text.substr(0, std::min(text.size(), kMagicBytes)));
  if (c != Compression::kNone) {
    if (!DecompressAll(c, text, "fuzz.run", uint64_t{1} << 26, &plain).ok()) {
      FUZZ_CHECK(!ReadWhole(path, &whole));
      return;
    }
    reference = plain;
  }
  const bool whole_ok = ReadWhole(path, &whole);
  const bool chunked_ok = ReadChunked(path, reference, chunk_bytes, &chunked);
  FUZZ_CHECK(whole_ok == chunked_ok);
  if (whole_ok) FUZZ_CHECK(whole == chunked);
}

}  // namespace
}  // namespace rankwatch::trec

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 2),
                              size - 2);
  if ((data[0] & 1) == 0) {
    rankwatch::trec::FuzzQrels(text);
  } else {
    rankwatch::trec::FuzzRun(text, 1 + data[1]);
  }
  return 0;
}
