// gen_trec_case: writes a large, deterministic TREC evaluation case
// (qrels.txt and run.txt) for benchmarking `rankwatch eval` against
// trec_eval.
//
//   gen_trec_case OUT_DIR [--queries N] [--docs N] [--judged-retrieved N]
//                 [--judged-unretrieved N] [--seed N]
//
// Defaults: 10,000 queries x 1,000 retrieved docs (10M run lines, ~340 MB)
// and 50 judgments per query, 35 on retrieved docs (biased to the top ranks)
// and 15 on docs that are not retrieved, with grades 0/1/2/3 at about
// 55/25/12/8 %.
//
// The output depends only on the options: randomness comes from a fixed-seed
// splitmix64 stream with integer-only arithmetic, never from the standard
// library's distributions, and scores are printed from integer micro-units.
// Run lines look like `4821 0 D0734221190 17 8.912345 r`: qids are integers
// 1..N (so strcmp order differs from file order), docnos are 'D' + 10 digits,
// unique within a query, and scores strictly decrease down each list, so no
// tie-breaking is involved.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/random.h"

namespace {

constexpr uint64_t kDocnoSpace = 10'000'000'000;  // 'D' + 10 digits.
constexpr size_t kFlushBytes = 1 << 20;

struct Options {
  std::string out_dir;
  int64_t queries = 10'000;
  int64_t docs = 1'000;
  int64_t judged_retrieved = 35;
  int64_t judged_unretrieved = 15;
  uint64_t seed = 20240611;
};

// The case's random stream: splitmix64 from the seed (base/random.h),
// reduced to [0, n) by multiply-shift (Lemire; the bias is negligible for
// the n used here). Both steps are part of the case's definition: the
// checksums in bench/README.md depend on them. Value type; not thread-safe.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() { return rankwatch::SplitMix64(&state_); }

  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }

 private:
  uint64_t state_;
};

// Grades 0/1/2/3 with probabilities 55/25/12/8 %.
int DrawGrade(Rng* rng) {
  const uint64_t p = rng->Below(100);
  if (p < 55) return 0;
  if (p < 80) return 1;
  if (p < 92) return 2;
  return 3;
}

// A 0-based rank in [0, docs) biased to the top: docs * u^3 for uniform u,
// so about a fifth of the draws land in the top 1 % of the list.
int64_t DrawTopBiasedRank(Rng* rng, int64_t docs) {
  const double u = static_cast<double>(rng->Next() >> 11) * 0x1.0p-53;
  const int64_t r = static_cast<int64_t>(u * u * u * static_cast<double>(docs));
  return r < docs ? r : docs - 1;
}

// Buffered writer to a FILE*, with allocation-free number formatting. Owns
// the FILE: Close() closes it. Not thread-safe.
class Writer {
 public:
  explicit Writer(std::FILE* f) : file_(f) { buf_.reserve(kFlushBytes * 2); }

  void Str(std::string_view s) { buf_.append(s); }
  void Char(char c) { buf_.push_back(c); }
  void Int(uint64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
    buf_.append(tmp, r.ptr);
  }
  // Zero-padded to `width` digits.
  void Padded(uint64_t v, int width) {
    char tmp[24];
    for (int i = width - 1; i >= 0; --i, v /= 10)
      tmp[i] = static_cast<char>('0' + v % 10);
    buf_.append(tmp, static_cast<size_t>(width));
  }
  void Docno(uint64_t id) {
    Char('D');
    Padded(id, 10);
  }
  // `micros` / 10^6 with 6 decimals.
  void Score(uint64_t micros) {
    Int(micros / 1'000'000);
    Char('.');
    Padded(micros % 1'000'000, 6);
  }
  void EndLine() {
    Char('\n');
    if (buf_.size() >= kFlushBytes) Flush();
  }
  // Returns false if any write so far has failed.
  bool Flush() {
    ok_ = std::fwrite(buf_.data(), 1, buf_.size(), file_) == buf_.size() && ok_;
    buf_.clear();
    return ok_;
  }
  bool Close() {
    const bool flushed = Flush();
    return std::fclose(file_) == 0 && flushed;
  }

 private:
  std::FILE* file_;
  std::string buf_;
  bool ok_ = true;
};

// One query: `docs` distinct retrieved docnos in rank order, then judgments.
struct QueryCase {
  std::vector<uint64_t> ranked;
  std::vector<uint64_t> judged_docs;
  std::vector<int> judged_grades;
};

void DrawQuery(const Options& o, Rng* rng, std::unordered_set<uint64_t>* seen,
               QueryCase* q) {
  seen->clear();
  q->ranked.clear();
  q->judged_docs.clear();
  q->judged_grades.clear();
  while (static_cast<int64_t>(q->ranked.size()) < o.docs) {
    const uint64_t id = rng->Below(kDocnoSpace);
    if (seen->insert(id).second) q->ranked.push_back(id);
  }
  std::unordered_set<int64_t> judged_ranks;
  while (static_cast<int64_t>(judged_ranks.size()) < o.judged_retrieved) {
    const int64_t r = DrawTopBiasedRank(rng, o.docs);
    if (!judged_ranks.insert(r).second) continue;
    q->judged_docs.push_back(q->ranked[static_cast<size_t>(r)]);
    q->judged_grades.push_back(DrawGrade(rng));
  }
  for (int64_t i = 0; i < o.judged_unretrieved;) {
    const uint64_t id = rng->Below(kDocnoSpace);
    if (!seen->insert(id).second) continue;
    q->judged_docs.push_back(id);
    q->judged_grades.push_back(DrawGrade(rng));
    ++i;
  }
}

void WriteRun(const QueryCase& q, int64_t qid, Rng* rng, Writer* run) {
  // Start in [5, 9) and step down by at least one micro-unit and at most
  // 4 / docs in total, so scores stay positive and strictly decreasing and
  // print as d.dddddd (steps of 1..4000 micro-units for 1,000 docs).
  const uint64_t max_step = 4'000'000 / q.ranked.size();
  uint64_t score = 5'000'000 + rng->Below(4'000'000);
  for (size_t i = 0; i < q.ranked.size(); ++i) {
    run->Int(static_cast<uint64_t>(qid));
    run->Str(" 0 ");
    run->Docno(q.ranked[i]);
    run->Char(' ');
    run->Int(i + 1);
    run->Char(' ');
    run->Score(score);
    run->Str(" r");
    run->EndLine();
    score -= 1 + rng->Below(max_step);
  }
}

void WriteQrels(const QueryCase& q, int64_t qid, Writer* qrels) {
  for (size_t i = 0; i < q.judged_docs.size(); ++i) {
    qrels->Int(static_cast<uint64_t>(qid));
    qrels->Str(" 0 ");
    qrels->Docno(q.judged_docs[i]);
    qrels->Char(' ');
    qrels->Int(static_cast<uint64_t>(q.judged_grades[i]));
    qrels->EndLine();
  }
}

bool ParseCount(const char* s, int64_t* out) {
  const char* end = s + std::strlen(s);
  const auto r = std::from_chars(s, end, *out);
  return r.ec == std::errc() && r.ptr == end && *out >= 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: gen_trec_case OUT_DIR [--queries N] [--docs N] "
               "[--judged-retrieved N] [--judged-unretrieved N] "
               "[--seed N]\n");
  return 2;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (!a.starts_with("--")) {
      if (!o->out_dir.empty()) return false;
      o->out_dir = argv[i];
      continue;
    }
    if (i + 1 >= argc) return false;
    int64_t v;
    if (!ParseCount(argv[++i], &v)) return false;
    if (a == "--queries") {
      o->queries = v;
    } else if (a == "--docs") {
      o->docs = v;
    } else if (a == "--judged-retrieved") {
      o->judged_retrieved = v;
    } else if (a == "--judged-unretrieved") {
      o->judged_unretrieved = v;
    } else if (a == "--seed") {
      o->seed = static_cast<uint64_t>(v);
    } else {
      return false;
    }
  }
  return !o->out_dir.empty() && o->docs >= 1 && o->docs < 1'000'000 &&
         o->judged_retrieved <= o->docs;
}

std::FILE* OpenOut(const std::string& dir, const char* name) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::perror(path.c_str());
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return Usage();
  std::FILE* run_file = OpenOut(o.out_dir, "run.txt");
  std::FILE* qrels_file = OpenOut(o.out_dir, "qrels.txt");
  if (run_file == nullptr || qrels_file == nullptr) return 1;
  Writer run(run_file);
  Writer qrels(qrels_file);
  Rng rng(o.seed);
  std::unordered_set<uint64_t> seen;
  QueryCase q;
  for (int64_t qid = 1; qid <= o.queries; ++qid) {
    DrawQuery(o, &rng, &seen, &q);
    WriteRun(q, qid, &rng, &run);
    WriteQrels(q, qid, &qrels);
  }
  if (!run.Close() || !qrels.Close()) {
    std::fprintf(stderr, "gen_trec_case: write error in %s\n",
                 o.out_dir.c_str());
    return 1;
  }
  return 0;
}
