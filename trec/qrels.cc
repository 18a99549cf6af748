#include "trec/qrels.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "base/string_index.h"
#include "trec/parallel.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

namespace {

std::string At(const std::string& name, uint64_t line) {
  return ShownPath(name) + ":" + std::to_string(line) + ": ";
}

// 1-based number of the line holding text[offset].
uint64_t LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<uint64_t>(
                 std::count(text.begin(), text.begin() + offset, '\n'));
}

// The line starting at `pos`, without its '\n'.
std::string_view LineAt(std::string_view text, size_t pos) {
  const size_t eol = text.find('\n', pos);
  return text.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
}

// The first whitespace-separated token of `line`, or "" if it is blank.
std::string_view FirstToken(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  size_t j = i;
  while (j < line.size() && !IsSpace(line[j])) ++j;
  return line.substr(i, j - i);
}

bool IsDataLine(std::string_view first_token) {
  return !first_token.empty() && first_token.front() != '#';
}

// The first 8 bytes of `qid` as a big-endian integer, zero-padded: integers
// compare as the bytes do (std::string_view's order), up to ties between a
// qid and a longer one that goes on with NUL bytes, which compare whole.
uint64_t QidPrefix(std::string_view qid) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) {
    prefix = prefix << 8 |
             (i < qid.size() ? static_cast<unsigned char>(qid[i]) : 0u);
  }
  return prefix;
}

// Resizes `v` to `n` values `fill`, first faulting its new pages in with one
// system call when it is large: one page fault per 4 KiB page costs several
// times more, notably on virtual machines (a 10 MB array fills in ~5 ms
// instead of ~25 ms). Best effort: older kernels lack MADV_POPULATE_WRITE.
template <typename T>
void ResizeResident(std::vector<T>* v, size_t n, const T& fill) {
  constexpr size_t kMinBytes = 1 << 20;
  v->reserve(n);
#ifdef MADV_POPULATE_WRITE
  if (n * sizeof(T) >= kMinBytes) {
    static const uintptr_t kPage =
        static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin =
        (reinterpret_cast<uintptr_t>(v->data()) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end =
        reinterpret_cast<uintptr_t>(v->data() + n) & ~(kPage - 1);
    if (end > begin) {
      (void)::madvise(reinterpret_cast<void*>(begin), end - begin,
                      MADV_HUGEPAGE);
      (void)::madvise(reinterpret_cast<void*>(begin), end - begin,
                      MADV_POPULATE_WRITE);
    }
  }
#endif
  v->assign(n, fill);
}

}  // namespace

StatusOr<Qrels> Qrels::Load(const std::string& path, int threads) {
  StatusOr<MappedFile> file = MappedFile::Open(path, LineBounds());
  if (!file.ok()) return file.status();
  Qrels q;
  q.name_ = path == "-" ? "<stdin>" : path;
  q.file_ = std::make_unique<MappedFile>(std::move(file).value());
  RW_RETURN_IF_ERROR(q.Build(q.file_->data(), threads));
  return q;
}

StatusOr<Qrels> Qrels::Parse(std::string text, std::string name, int threads) {
  Qrels q;
  q.name_ = std::move(name);
  q.text_ = std::make_unique<std::string>(std::move(text));
  RW_RETURN_IF_ERROR(q.Build(*q.text_, threads));
  return q;
}

// Two passes over the text, so that judgments are written once, straight to
// their place in qid order: ScanGroups finds the runs of lines of one qid,
// BuildQueries orders them and parses each into place.
Status Qrels::Build(std::string_view text, int threads) {
  std::vector<Group> groups;
  RW_RETURN_IF_ERROR(ScanGroups(text, threads, &groups));
  RW_RETURN_IF_ERROR(BuildQueries(text, threads, &groups));
  return BuildTables(text, threads);
}

// The groups of the whole lines in text[begin, end), numbered from 1 at
// `begin`, and the number of lines; `too_long` is the number of the first
// line longer than kMaxLineBytes, where the scan stopped (0 if none).
Qrels::ScannedPart Qrels::ScanPart(std::string_view text, size_t begin,
                                   size_t end) {
  ScannedPart part;
  LineSplitter splitter(text);
  for (size_t pos = begin; pos < end;) {
    ++part.lines;
    std::string_view qid;
    size_t line_end;  // Offset of the line's '\n', or the end of the text.
    int tokens = 0;
    const char* const next =
        splitter.Split(text.data() + pos, &qid, 1, &tokens);
    if (next != nullptr) {
      line_end = static_cast<size_t>(next - text.data()) - 1;
      if (tokens == 0) qid = {};
    } else {
      const std::string_view line = LineAt(text, pos);
      if (line.size() > kMaxLineBytes) {
        part.too_long = part.lines;
        return part;
      }
      qid = FirstToken(line);
      line_end = pos + line.size();
    }
    if (IsDataLine(qid)) {
      if (part.groups.empty() || !BytesEqual(part.groups.back().qid, qid)) {
        part.groups.push_back(Group{qid, pos, pos, part.lines});
      }
      part.groups.back().end = line_end;
      ++part.groups.back().count;
    }
    pos = line_end + 1;
  }
  return part;
}

// Scans parts of the text, cut after a '\n', in parallel, then joins them:
// line numbers count on from the parts before, and a group cut by the end
// of a part continues in the next.
Status Qrels::ScanGroups(std::string_view text, int threads,
                         std::vector<Group>* out) const {
  // Smaller parts cost more in threads than they save.
  constexpr size_t kMinPartBytes = 64 << 10;
  const size_t parts =
      std::clamp<size_t>(text.size() / kMinPartBytes, 1,
                         static_cast<size_t>(std::max(1, threads)));
  const std::vector<size_t> cuts =
      ChunkBoundaries(text, static_cast<int>(parts));
  std::vector<ScannedPart> scanned(parts);
  (void)RunParallel(parts, threads, [&](size_t k, size_t) {
    scanned[k] = ScanPart(text, cuts[k], cuts[k + 1]);
    return true;
  });
  uint64_t lines_before = 0;
  for (ScannedPart& part : scanned) {
    if (part.too_long != 0) {
      return LineTooLong(name_, lines_before + part.too_long, LineBounds());
    }
    for (Group& g : part.groups) {
      g.first_line += lines_before;
      if (!out->empty() && out->back().qid == g.qid) {
        out->back().end = g.end;
        out->back().count += g.count;
      } else {
        out->push_back(g);
      }
    }
    lines_before += part.lines;
  }
  return Status::Ok();
}

// Sorting the groups by qid, then by file order, orders the judgments
// exactly as a stable sort of the lines would: by qid, then in file order.
// Each group's key holds its qid's first 8 bytes, so that most comparisons
// are one integer compare instead of a memcmp call.
Status Qrels::BuildQueries(std::string_view text, int threads,
                           std::vector<Group>* groups) {
  struct Key {
    uint64_t prefix;  // The qid's first 8 bytes, big-endian, zero-padded.
    uint32_t group;
  };
  std::vector<Key> order(groups->size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    order[i] = Key{QidPrefix((*groups)[i].qid), i};
  }
  std::sort(order.begin(), order.end(), [&](const Key& a, const Key& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const std::string_view qa = (*groups)[a.group].qid;
    const std::string_view qb = (*groups)[b.group].qid;
    if (qa != qb) return qa < qb;
    return a.group < b.group;
  });
  uint32_t total = 0;
  for (const Key& k : order) {
    Group& g = (*groups)[k.group];
    if (queries_.empty() || queries_.back().qid != g.qid) {
      queries_.push_back(QueryQrels{});
      queries_.back().qid = g.qid;
      queries_.back().begin = total;
    }
    g.dest = total;
    g.query = static_cast<uint32_t>(queries_.size() - 1);
    total += g.count;
    queries_.back().end = total;
  }
  ResizeResident(&docnos_, total, std::string_view());
  ResizeResident(&grades_, total, metrics::Grade{0});
  // Groups write disjoint judgments, so they parse in parallel; tasks are
  // runs of groups in file order, and RunParallelUntilError returns the
  // lowest task's error: the first malformed line of the file, as a
  // sequential loop reports it.
  const size_t tasks = TaskCount(groups->size(), threads);
  RW_RETURN_IF_ERROR(
      RunParallelUntilError(tasks, threads, [&](size_t task, size_t) {
        const auto [begin, end] = TaskRange(groups->size(), tasks, task);
        LineSplitter splitter(text);
        for (size_t g = begin; g < end; ++g) {
          RW_RETURN_IF_ERROR(ParseGroup(text, &splitter, &(*groups)[g]));
        }
        return Status::Ok();
      }));
  for (const Group& g : *groups) queries_[g.query].num_positive += g.positive;
  return Status::Ok();
}

Status Qrels::ParseGroup(std::string_view text, LineSplitter* splitter,
                         Group* group) {
  const Group& g = *group;
  uint64_t line_no = g.first_line;
  uint32_t e = g.dest;
  for (size_t pos = g.begin; pos < g.end; ++line_no) {
    std::string_view tok[5];
    int n = 0;
    // A short line is split from one ScanWindow; a longer one, or one with
    // more than 4 fields (whose count the message gives), a byte at a time.
    const char* const next = splitter->Split(text.data() + pos, tok, 4, &n);
    if (next != nullptr && n <= 4) {
      pos = static_cast<size_t>(next - text.data());
    } else {
      const std::string_view line = LineAt(text, pos);
      pos += line.size() + 1;
      n = Tokenize(line, tok, 5);
    }
    if (n == 0 || tok[0].front() == '#') continue;  // Blank or comment.
    if (n != 4) {
      return Status::InvalidArgument(
          At(name_, line_no) +
          "expected 4 fields (qid iter docno grade), found " +
          std::to_string(n));
    }
    metrics::Grade grade;
    if (!ParseInteger(tok[3], &grade)) {
      int64_t wide;
      const bool out_of_range = ParseInteger(tok[3], &wide);
      return Status::InvalidArgument(
          At(name_, line_no) + "grade '" + Printable(tok[3]) +
          (out_of_range ? "' is out of range (-2147483648 to 2147483647)"
                        : "' is not an integer"));
    }
    docnos_[e] = tok[2];
    grades_[e] = grade;
    if (grade > 0) ++group->positive;
    ++e;
  }
  return Status::Ok();
}

// Per-query open-addressing tables in one arena. On duplicates, the earliest
// duplicate line is reported, so the message does not depend on the order in
// which queries are indexed, nor on the number of threads indexing them.
Status Qrels::BuildTables(std::string_view text, int threads) {
  size_t total = 0;
  for (const QueryQrels& q : queries_) {
    total += std::bit_ceil(std::max<size_t>(2, (q.end - q.begin) * 2));
  }
  ResizeResident(&slots_, total, Slot{});
  query_index_.Clear(queries_.size());
  uint32_t slot_begin = 0;
  for (uint32_t qi = 0; qi < queries_.size(); ++qi) {
    QueryQrels& q = queries_[qi];
    (void)query_index_.Insert(q.qid, qi);
    const size_t capacity =
        std::bit_ceil(std::max<size_t>(2, (q.end - q.begin) * 2));
    q.slot_begin = slot_begin;
    q.slot_mask = static_cast<uint32_t>(capacity - 1);
    slot_begin += static_cast<uint32_t>(capacity);
  }
  // Queries own disjoint slots: indexed in parallel, each task noting its
  // earliest duplicate, the earliest of which is reported.
  const size_t tasks = TaskCount(queries_.size(), threads);
  std::vector<Duplicate> dups(tasks);
  (void)RunParallel(tasks, threads, [&](size_t task, size_t) {
    const auto [begin, end] = TaskRange(queries_.size(), tasks, task);
    for (size_t qi = begin; qi < end; ++qi) {
      IndexQuery(static_cast<uint32_t>(qi), &dups[task]);
    }
    return true;
  });
  const Duplicate* dup = nullptr;
  for (const Duplicate& d : dups) {
    if (d.again != nullptr &&
        (dup == nullptr || d.again->data() < dup->again->data())) {
      dup = &d;
    }
  }
  if (dup == nullptr) return Status::Ok();
  const auto offset = [&](const std::string_view* d) {
    return static_cast<size_t>(d->data() - text.data());
  };
  return Status::InvalidArgument(
      At(name_, LineOf(text, offset(dup->again))) + "duplicate docno '" +
      Printable(*dup->again) + "' for query " + Printable(dup->query->qid) +
      " (first judged on line " +
      std::to_string(LineOf(text, offset(dup->first))) + ")");
}

void Qrels::IndexQuery(uint32_t qi, Duplicate* dup) {
  const QueryQrels& q = queries_[qi];
  for (uint32_t e = q.begin; e < q.end; ++e) {
    const uint64_t h = HashBytes(docnos_[e]);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t i = h & q.slot_mask;
    while (slots_[q.slot_begin + i].entry != 0) {
      const Slot& s = slots_[q.slot_begin + i];
      if (s.tag == tag && docnos_[s.entry - 1] == docnos_[e]) break;
      i = (i + 1) & q.slot_mask;
    }
    Slot& s = slots_[q.slot_begin + i];
    if (s.entry == 0) {
      s = Slot{tag, e + 1};
    } else if (dup->again == nullptr ||
               docnos_[e].data() < dup->again->data()) {
      *dup = Duplicate{&docnos_[e], &docnos_[s.entry - 1], &q};
    }
  }
}

const QueryQrels* Qrels::FindQuery(std::string_view qid) const {
  const uint32_t* i = query_index_.Find(qid);
  return i == nullptr ? nullptr : &queries_[*i];
}

}  // namespace rankwatch::trec
