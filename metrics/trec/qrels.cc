#include "metrics/trec/qrels.h"

#include <algorithm>
#include <bit>

#include "metrics/trec/text_scan.h"

namespace rankwatch::trec {

namespace {

struct RawJudgment {
  std::string_view qid;
  std::string_view docno;
  metrics::Grade grade;
  uint64_t line;
};

std::string At(const std::string& name, uint64_t line) {
  return name + ":" + std::to_string(line) + ": ";
}

}  // namespace

StatusOr<Qrels> Qrels::Load(const std::string& path) {
  StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  Qrels q;
  q.name_ = path == "-" ? "<stdin>" : path;
  q.file_ = std::make_unique<MappedFile>(std::move(file).value());
  RW_RETURN_IF_ERROR(q.Build(q.file_->data()));
  return q;
}

StatusOr<Qrels> Qrels::Parse(std::string text, std::string name) {
  Qrels q;
  q.name_ = std::move(name);
  q.text_ = std::make_unique<std::string>(std::move(text));
  RW_RETURN_IF_ERROR(q.Build(*q.text_));
  return q;
}

Status Qrels::Build(std::string_view text) {
  std::vector<RawJudgment> raw;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    std::string_view tok[5];
    const int n = Tokenize(line, tok, 5);
    if (n == 0 || tok[0].front() == '#') continue;  // Blank or comment.
    if (n != 4) {
      return Status::InvalidArgument(
          At(name_, line_no) +
          "expected 4 fields (qid iter docno grade), found " +
          std::to_string(n));
    }
    metrics::Grade grade;
    if (!ParseInteger(tok[3], &grade)) {
      return Status::InvalidArgument(At(name_, line_no) + "grade '" +
                                     std::string(tok[3]) +
                                     "' is not an integer");
    }
    raw.push_back({tok[0], tok[2], grade, line_no});
  }

  std::stable_sort(
      raw.begin(), raw.end(),
      [](const RawJudgment& a, const RawJudgment& b) { return a.qid < b.qid; });
  docnos_.reserve(raw.size());
  grades_.reserve(raw.size());
  for (const RawJudgment& r : raw) {
    if (queries_.empty() || queries_.back().qid != r.qid) {
      queries_.push_back(QueryQrels{});
      queries_.back().qid = r.qid;
      queries_.back().begin = static_cast<uint32_t>(docnos_.size());
    }
    docnos_.push_back(r.docno);
    grades_.push_back(r.grade);
    queries_.back().end = static_cast<uint32_t>(docnos_.size());
    if (r.grade > 0) ++queries_.back().num_positive;
  }

  // Per-query hash tables in one arena; the earliest duplicate line wins so
  // the message is the same whatever the query order.
  uint64_t dup_line = 0;
  std::string dup_message;
  query_index_.Clear(queries_.size());
  for (uint32_t qi = 0; qi < queries_.size(); ++qi) {
    QueryQrels& q = queries_[qi];
    (void)query_index_.Insert(q.qid, qi);
    const size_t n = q.end - q.begin;
    const size_t capacity = std::bit_ceil(std::max<size_t>(2, n * 2));
    q.slot_begin = static_cast<uint32_t>(slots_.size());
    q.slot_mask = static_cast<uint32_t>(capacity - 1);
    slots_.resize(slots_.size() + capacity);
    for (uint32_t e = q.begin; e < q.end; ++e) {
      const uint64_t h = HashBytes(docnos_[e]);
      size_t i = h & q.slot_mask;
      bool duplicate = false;
      while (slots_[q.slot_begin + i].entry != 0) {
        const Slot& s = slots_[q.slot_begin + i];
        if (s.hash == h && docnos_[s.entry - 1] == docnos_[e]) {
          duplicate = true;
          const uint64_t line = raw[e].line;
          if (dup_line == 0 || line < dup_line) {
            dup_line = line;
            dup_message = At(name_, line) + "duplicate docno '" +
                          std::string(docnos_[e]) + "' for query " +
                          std::string(q.qid) + " (first judged on line " +
                          std::to_string(raw[s.entry - 1].line) + ")";
          }
          break;
        }
        i = (i + 1) & q.slot_mask;
      }
      if (!duplicate) slots_[q.slot_begin + i] = Slot{h, e + 1};
    }
  }
  if (dup_line != 0) return Status::InvalidArgument(dup_message);
  return Status::Ok();
}

const QueryQrels* Qrels::FindQuery(std::string_view qid) const {
  const uint32_t* i = query_index_.Find(qid);
  return i == nullptr ? nullptr : &queries_[*i];
}

metrics::Grade Qrels::Lookup(const QueryQrels& q, std::string_view docno,
                             uint64_t hash) const {
  size_t i = hash & q.slot_mask;
  for (;;) {
    const Slot& s = slots_[q.slot_begin + i];
    if (s.entry == 0) return metrics::kUnjudged;
    if (s.hash == hash && docnos_[s.entry - 1] == docno) {
      const metrics::Grade g = grades_[s.entry - 1];
      return g < 0 ? metrics::kUnjudged : g;
    }
    i = (i + 1) & q.slot_mask;
  }
}

}  // namespace rankwatch::trec
