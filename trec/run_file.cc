#include "trec/run_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "trec/decompress.h"
#include "trec/parallel.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

namespace {

// How far past a boundary a worker reads first when it searches the cut
// there (doubled until the cut is found): most groups of a run are tens of
// kilobytes, and the bytes read past a range's end are read twice.
constexpr uint64_t kCutReadAhead = 16u << 10;

// Scanned bytes are handed back to the kernel in steps of this size, which
// bounds the scan's resident set.
constexpr size_t kReleaseStep = 16u << 20;

struct ChunkBlock {
  std::string_view qid;
  RunBlock block;  // first_line relative to the chunk.
};

struct ChunkResult {
  std::vector<ChunkBlock> blocks;
  uint64_t lines = 0;
  uint64_t long_line = 0;  // First line over kMaxLineBytes; 0 if none.
};

const char* FindEol(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
  return nl == nullptr ? end : static_cast<const char*>(nl);
}

void ScanChunk(const MappedFile& file, size_t begin, size_t end,
               ChunkResult* out) {
  const char* data = file.data().data();
  const char* p = data + begin;
  const char* const chunk_end = data + end;
  size_t released = begin;
  uint64_t line = 0;
  while (p < chunk_end) {
    const char* eol = FindEol(p, chunk_end);
    ++line;
    if (static_cast<size_t>(eol - p) > kMaxLineBytes && out->long_line == 0) {
      out->long_line = line;
    }
    const char* t = p;
    while (t < eol && IsSpace(*t)) ++t;
    if (t < eol && *t != '#') {
      const char* q = t;
      while (q < eol && !IsSpace(*q)) ++q;
      std::string_view qid(t, static_cast<size_t>(q - t));
      const uint64_t offset = static_cast<uint64_t>(p - data);
      const uint64_t eol_offset = static_cast<uint64_t>(eol - data);
      if (!out->blocks.empty() && out->blocks.back().qid == qid) {
        out->blocks.back().block.end = eol_offset;
      } else {
        out->blocks.push_back({qid, RunBlock{offset, eol_offset, line}});
      }
    }
    p = eol + 1;
    const size_t pos = static_cast<size_t>(std::min(p, chunk_end) - data);
    if (pos - released >= kReleaseStep) {
      file.ReleaseRange(released, pos);
      released = pos;
    }
  }
  out->lines = line;
}

// Start of the line that ends just before text[line_end] (its '\n', or the
// end of the text).
size_t LineStart(std::string_view text, size_t line_end) {
  const void* nl =
      line_end == 0 ? nullptr : ::memrchr(text.data(), '\n', line_end);
  return nl == nullptr ? 0 : static_cast<const char*>(nl) - text.data() + 1;
}

// The qid of the line at `begin`: its first field, or "" for a blank or
// comment line.
std::string_view LineQid(std::string_view text, size_t begin) {
  size_t i = begin;
  while (i < text.size() && text[i] != '\n' && IsSpace(text[i])) ++i;
  size_t j = i;
  while (j < text.size() && !IsSpace(text[j])) ++j;
  const std::string_view qid = text.substr(i, j - i);
  return qid.empty() || qid.front() == '#' ? std::string_view() : qid;
}

// Where to cut `text` (read from the file, more to come) so that the part
// before the cut holds whole lines and whole groups: the start of the last
// group of complete lines, which may go on in the bytes not read yet. 0 when
// the complete lines are all one group (or there are none).
size_t GroupBoundary(std::string_view text) {
  const void* nl = ::memrchr(text.data(), '\n', text.size());
  if (nl == nullptr) return 0;
  const size_t complete = static_cast<const char*>(nl) - text.data() + 1;
  std::string_view last_qid;
  size_t cut = complete;
  for (size_t line_end = complete - 1; line_end > 0;) {
    const size_t begin = LineStart(text, line_end);
    const std::string_view qid = LineQid(text, begin);
    if (!qid.empty()) {
      if (last_qid.empty()) {
        last_qid = qid;
      } else if (qid != last_qid) {
        return cut;
      }
      cut = begin;
    }
    if (begin == 0) break;
    line_end = begin - 1;
  }
  // Only comments: any cut will do. Otherwise one group: read on.
  return last_qid.empty() ? complete : 0;
}

// Bytes after the last '\n' of `text` (all of it when there is none).
size_t TailLineBytes(std::string_view text) {
  const size_t nl = text.rfind('\n');
  return nl == std::string_view::npos ? text.size() : text.size() - nl - 1;
}

Status LongLineError(const std::string& path) {
  return Status::InvalidArgument(ShownPath(path) + ": a line is longer than " +
                                 std::to_string(kMaxLineBytes) + " bytes");
}

// pread()s until `n` bytes from `offset` are in `buf` or the file ends
// there; *got says how many. False on a read error (errno tells which).
bool ReadAt(int fd, char* buf, size_t n, uint64_t offset, size_t* got) {
  *got = 0;
  while (*got < n) {
    const ssize_t r =
        ::pread(fd, buf + *got, n - *got, static_cast<off_t>(offset + *got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) break;
    *got += static_cast<size_t>(r);
  }
  return true;
}

Status ReadError(const std::string& path) {
  return Status::IoError("cannot read '" + ShownPath(path) +
                         "': " + std::strerror(errno));
}

}  // namespace

GroupCutScan FindGroupCut(std::string_view text, size_t from, bool at_eof,
                          size_t* cut, size_t* last_data) {
  const char* const data = text.data();
  const void* nl = std::memchr(data + from, '\n', text.size() - from);
  if (nl == nullptr) {
    if (!at_eof) {
      return text.size() - from > kMaxLineBytes ? GroupCutScan::kLongLine
                                                : GroupCutScan::kNeedMore;
    }
    *cut = text.size();
    *last_data = std::string_view::npos;
    return GroupCutScan::kFound;
  }
  std::string_view qid;  // Of the last data line.
  size_t last = 0;
  for (size_t p = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
       p < text.size();) {
    const void* eol = std::memchr(data + p, '\n', text.size() - p);
    if (eol == nullptr && !at_eof) {
      return text.size() - p > kMaxLineBytes ? GroupCutScan::kLongLine
                                             : GroupCutScan::kNeedMore;
    }
    const std::string_view line_qid = LineQid(text, p);
    if (!line_qid.empty()) {
      if (!qid.empty() && line_qid != qid) {
        *cut = p;
        *last_data = last;
        return GroupCutScan::kFound;
      }
      qid = line_qid;
      last = p;
    }
    if (eol == nullptr) break;
    p = static_cast<size_t>(static_cast<const char*>(eol) - data) + 1;
  }
  if (!at_eof) return GroupCutScan::kNeedMore;
  *cut = text.size();
  *last_data = std::string_view::npos;
  return GroupCutScan::kFound;
}

// A worker's bytes of the file: [base, base + size) in `buffer`; `eof` when
// a read found the end of the file at base + size.
struct RunChunkReader::Window {
  std::vector<char>* buffer;
  uint64_t base = 0;
  size_t size = 0;
  bool eof = false;

  std::string_view text() const { return {buffer->data(), size}; }
};

std::unique_ptr<RunChunkReader> RunChunkReader::Open(const std::string& path,
                                                     size_t chunk_bytes) {
  // A NUL would make open() read another file; MappedFile reports it.
  if (path == "-" || path.find('\0') != std::string::npos) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return nullptr;
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  // A compressed run is streamed through its decoder; plain files are read
  // as they are.
  char head[kMagicBytes];
  size_t n = 0;
  if (!ReadAt(fd, head, sizeof(head), 0, &n)) n = 0;
  const Compression c = DetectCompression(std::string_view(head, n));
  return std::unique_ptr<RunChunkReader>(
      new RunChunkReader(fd, path, std::max<size_t>(chunk_bytes, 1),
                         static_cast<uint64_t>(st.st_size), c));
}

RunChunkReader::RunChunkReader(int fd, std::string path, size_t chunk_bytes,
                               uint64_t file_size, Compression compression)
    : fd_(fd),
      path_(std::move(path)),
      chunk_bytes_(chunk_bytes),
      ranges_(file_size == 0 ? 0 : 1 + (file_size - 1) / chunk_bytes) {
  if (compression != Compression::kNone) {
    decompressor_ = std::make_unique<DecompressingReader>(
        fd_, compression, path_, DecompressedSizeLimit());
  }
}

RunChunkReader::~RunChunkReader() { ::close(fd_); }

Status RunChunkReader::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void RunChunkReader::Fail(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.ok()) status_ = std::move(status);
}

bool RunChunkReader::Next(std::vector<char>* buffer, RunChunk* chunk) {
  if (decompressor_ != nullptr) return NextDecompressed(buffer, chunk);
  uint64_t range;
  bool start_known;
  uint64_t start;
  while (ClaimRange(&range, &start_known, &start)) {
    Window w{buffer};
    if (!ReadRangeChunk(range, start_known, start, &w, chunk)) return false;
    if (!chunk->text.empty()) return true;
  }
  return false;
}

bool RunChunkReader::ClaimRange(uint64_t* range, bool* start_known,
                                uint64_t* start) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok()) return false;
  uint64_t k = next_range_;
  // A range between two boundaries with the same cut holds no chunk.
  while (k + 1 < ranges_ && known_.Covers(Boundary(k)) &&
         known_.Covers(Boundary(k + 1))) {
    ++k;
  }
  if (k >= ranges_) {
    next_range_ = k;
    return false;
  }
  next_range_ = k + 1;
  *range = k;
  *start_known = k == 0 || known_.Covers(Boundary(k));
  *start = k == 0 ? 0 : known_.cut;
  return true;
}

// Reads range `range` into `w` and points `chunk` at its chunk (empty when
// the range holds none).
bool RunChunkReader::ReadRangeChunk(uint64_t range, bool start_known,
                                    uint64_t start, Window* w,
                                    RunChunk* chunk) {
  const bool last = range + 1 == ranges_;
  const uint64_t end_boundary = Boundary(range + 1);
  // The window starts at the chunk, or at the byte before the boundary
  // whose cut is searched.
  w->base = start_known ? start : Boundary(range) - 1;
  if (!last) w->base = std::min(w->base, end_boundary - 1);
  if (!start_known && !FindCut(Boundary(range), w, &start)) return false;
  uint64_t end;
  if (last) {
    if (!ReadToEnd(w)) return false;
    end = w->base + w->size;
  } else {
    bool end_known;
    {
      std::lock_guard<std::mutex> lock(mu_);
      end_known = known_.Covers(end_boundary);
      end = known_.cut;
    }
    if (!end_known && !FindCut(end_boundary, w, &end)) return false;
    if (!ReadTo(end, w)) return false;
  }
  start = std::max(start, w->base);
  end = std::max(end, start);
  if (end > w->base + w->size) end = w->base + w->size;  // The file shrank.
  chunk->text = std::string_view(w->buffer->data() + (start - w->base),
                                 static_cast<size_t>(end - start));
  chunk->offset = start;
  return true;
}

// Cut(boundary) (boundary > 0, its byte before in `w`), reading on as far
// as needed; records it for the other workers.
bool RunChunkReader::FindCut(uint64_t boundary, Window* w, uint64_t* cut) {
  uint64_t ahead = kCutReadAhead;
  for (;;) {
    if (!ReadTo(boundary + ahead, w)) return false;
    size_t at;
    size_t last_data;
    switch (FindGroupCut(w->text(), static_cast<size_t>(boundary - 1 - w->base),
                         w->eof, &at, &last_data)) {
      case GroupCutScan::kFound: {
        *cut = w->base + at;
        std::lock_guard<std::mutex> lock(mu_);
        if (*cut >= known_.cut) {
          known_ = KnownCut{boundary,
                            last_data == std::string_view::npos
                                ? UINT64_MAX
                                : w->base + last_data,
                            *cut};
        }
        return true;
      }
      case GroupCutScan::kNeedMore:
        ahead *= 2;
        break;
      case GroupCutScan::kLongLine:
        Fail(LongLineError(path_));
        return false;
    }
  }
}

// Extends `w` to cover bytes up to `upto`, or to the end of the file.
bool RunChunkReader::ReadTo(uint64_t upto, Window* w) {
  if (upto <= w->base) return true;
  const size_t want = static_cast<size_t>(upto - w->base);
  if (w->buffer->size() < want) w->buffer->resize(want);
  if (w->size >= want || w->eof) return true;
  size_t got = 0;
  if (!ReadAt(fd_, w->buffer->data() + w->size, want - w->size,
              w->base + w->size, &got)) {
    Fail(ReadError(path_));
    return false;
  }
  w->eof = w->size + got < want;  // A read found the end of the file.
  w->size += got;
  return true;
}

// Extends `w` to the end of the file (the last range: the file may have
// grown since Open), refusing a last line longer than kMaxLineBytes.
bool RunChunkReader::ReadToEnd(Window* w) {
  uint64_t upto = w->base + chunk_bytes_ + 1;
  for (;;) {
    if (!ReadTo(upto, w)) return false;
    if (TailLineBytes(w->text()) > kMaxLineBytes) {
      Fail(LongLineError(path_));
      return false;
    }
    if (w->eof) return true;
    upto = w->base + 2 * w->size + 1;
  }
}

// Decompresses into (*buffer)[*size, buffer->size()) until it is full or
// the stream ends.
bool RunChunkReader::Fill(std::vector<char>* buffer, size_t* size) {
  while (*size < buffer->size() && !eof_) {
    size_t got = 0;
    status_ = decompressor_->Read(buffer->data() + *size,
                                  buffer->size() - *size, &got);
    if (!status_.ok()) return false;
    if (got == 0) eof_ = true;
    *size += got;
  }
  return true;
}

// A compressed stream: one chunk after the other, under the lock.
bool RunChunkReader::NextDecompressed(std::vector<char>* buffer,
                                      RunChunk* chunk) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok() || (eof_ && carry_.empty())) return false;
  size_t size = carry_.size();
  if (buffer->size() < std::max(chunk_bytes_, 2 * size)) {
    buffer->resize(std::max(chunk_bytes_, 2 * size));
  }
  if (size > 0) std::memcpy(buffer->data(), carry_.data(), size);
  size_t cut;
  for (;;) {
    if (!Fill(buffer, &size)) return false;
    const std::string_view text(buffer->data(), size);
    if (const size_t tail = TailLineBytes(text); tail > kMaxLineBytes) {
      // The last line is still growing; EvaluateStreaming's caller falls
      // back to the mapped path, which names the line.
      status_ = LongLineError(path_);
      return false;
    }
    cut = eof_ ? size : GroupBoundary(text);
    if (cut > 0 || eof_) break;
    buffer->resize(buffer->size() * 2);  // One group fills the buffer.
  }
  chunk->text = std::string_view(buffer->data(), cut);
  chunk->offset = carry_offset_;
  carry_.assign(buffer->data() + cut, buffer->data() + size);
  carry_offset_ += cut;
  return cut > 0;
}

Status RunChunkReader::ReadRange(uint64_t begin, uint64_t end,
                                 std::string* out) const {
  if (decompressor_ != nullptr) {
    // A compressed stream cannot be read back in place: the caller falls
    // back to the mapped path, which holds the whole decompressed text.
    return Status::Unavailable("'" + ShownPath(path_) +
                               "' is compressed: no random access");
  }
  out->resize(end - begin);
  size_t got = 0;
  if (!ReadAt(fd_, out->data(), out->size(), begin, &got)) {
    return ReadError(path_);
  }
  if (got < out->size()) {
    return Status::IoError("'" + ShownPath(path_) + "' shrank while read");
  }
  return Status::Ok();
}

RunIndex RunIndex::Build(const MappedFile& file, int threads) {
  const std::string_view data = file.data();
  // Small files are not worth a thread.
  const int chunks =
      data.size() < (4u << 20) ? 1 : std::max(1, std::min(threads, 64));
  const std::vector<size_t> bounds = ChunkBoundaries(data, chunks);
  std::vector<ChunkResult> results(static_cast<size_t>(chunks));
  RunParallel(results.size(), chunks, [&](size_t i, size_t) {
    ScanChunk(file, bounds[i], bounds[i + 1], &results[i]);
    return true;
  });

  RunIndex index;
  index.index_.Clear(1024);
  uint64_t line_base = 0;
  for (const ChunkResult& r : results) {
    if (r.long_line != 0 && index.long_line_ == 0) {
      index.long_line_ = line_base + r.long_line;
    }
    for (const ChunkBlock& cb : r.blocks) {
      RunBlock block = cb.block;
      block.first_line += line_base;
      const uint32_t next = static_cast<uint32_t>(index.queries_.size());
      const uint32_t* existing = index.index_.Insert(cb.qid, next);
      if (existing == nullptr) {
        index.queries_.push_back(RunQuery{cb.qid, {block}});
      } else {
        index.queries_[*existing].blocks.push_back(block);
      }
    }
    line_base += r.lines;
  }
  return index;
}

const RunQuery* RunIndex::FindQuery(std::string_view qid) const {
  const uint32_t* i = index_.Find(qid);
  return i == nullptr ? nullptr : &queries_[*i];
}

Status ParseRunQuery(std::string_view data, const RunQuery& query,
                     const std::string& file_name, std::vector<RunEntry>* out) {
  out->clear();
  for (const RunBlock& block : query.blocks) {
    const char* p = data.data() + block.begin;
    const char* const end = data.data() + block.end;
    uint64_t line = block.first_line;
    for (;; ++line) {
      const char* eol = FindEol(p, end);
      std::string_view tok[6];
      const int n =
          Tokenize(std::string_view(p, static_cast<size_t>(eol - p)), tok, 6);
      if (n > 0 && tok[0].front() != '#') {
        if (n < 6) {
          return Status::InvalidArgument(
              ShownPath(file_name) + ":" + std::to_string(line) +
              ": expected 6 fields (qid iter docno rank score run_id), "
              "found " +
              std::to_string(n));
        }
        double score;
        if (!ParseScore(tok[4], &score)) {
          return Status::InvalidArgument(
              ShownPath(file_name) + ":" + std::to_string(line) + ": score '" +
              Printable(tok[4]) + "' is not a finite number");
        }
        out->push_back(RunEntry{score, tok[2].data(),
                                static_cast<uint32_t>(tok[2].size()),
                                metrics::kUnjudged, line});
      }
      if (eol >= end) break;
      p = eol + 1;
    }
  }
  return Status::Ok();
}

std::string_view LastRunId(std::string_view data) {
  size_t end = data.size();
  while (end > 0) {
    // The line that ends at `end` (exclusive of its '\n').
    const size_t nl =
        end == 0 ? std::string_view::npos : data.rfind('\n', end - 1);
    const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    RunLineKind kind;
    RunLineFields fields;
    ScanRunLine(data.data() + begin, data.data() + end, &kind, &fields);
    if (kind == RunLineKind::kData) return fields.run_id;
    if (begin == 0) break;
    end = begin - 1;
  }
  return {};
}

}  // namespace rankwatch::trec
