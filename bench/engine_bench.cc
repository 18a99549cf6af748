// Google Benchmark for the per-query work of `rankwatch eval`, on one query
// shaped like gen_trec_case's: a 1,000-doc ranked list with 50 judgments
// (35 on retrieved docs, biased to the top, and 15 on docs not retrieved;
// grades 0/1/2/3 at about 55/25/12/8 %), scored at cutoffs {1, 5, 10}.
//
//   BM_Evaluate:             metrics::Evaluator::Evaluate on grades alone.
//   BM_LookupEvaluate:       plus the docno -> grade join through
//                            trec::Qrels::Lookup (hash + probe per doc).
//   BM_EvaluateFiles/T:      trec::EvaluateFiles on 200 such queries in
//                            files (a 6.2 MB run), on T threads: reading,
//                            parsing, the join and scoring, as `rankwatch
//                            eval` runs them, less printing.
//
// items/s counts ranked lists; the `values` counter counts the numbers the
// engine computes per list (kValuesPerList), as a rate.
#include <stdlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/string_index.h"
#include "benchmark/benchmark.h"
#include "metrics/measures.h"
#include "trec/batch_eval.h"
#include "trec/qrels.h"

namespace {

using rankwatch::metrics::Grade;

constexpr int kDocs = 1000;
constexpr int kJudgedRetrieved = 35;
constexpr int kJudgedUnretrieved = 15;
constexpr std::array<int32_t, 3> kCutoffs = {1, 5, 10};
// ListScores holds 9 list-level numbers and 8 per cutoff (AtCutoff).
constexpr double kValuesPerList =
    9 +
    kCutoffs.size() * (sizeof(rankwatch::metrics::AtCutoff) / sizeof(double));

// The project's seeded generator: the same stream on every platform.
using Rng = rankwatch::Xoshiro256;

Grade DrawGrade(Rng* rng) {
  const uint64_t p = rng->Below(100);
  return p < 55 ? 0 : p < 80 ? 1 : p < 92 ? 2 : 3;
}

// One query: ranked docnos and grades, and its qrels as text.
struct Case {
  std::vector<std::string> docnos;  // Rank order.
  std::vector<Grade> ranked;        // Grade per rank, kUnjudged if none.
  std::vector<Grade> judgments;     // All 50 grades.
  std::string qrels_text;
  std::string run_text;
};

std::string Docno(uint64_t id) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "D%010llu",
                static_cast<unsigned long long>(id));
  return buf;
}

void AddJudgment(Case* c, const std::string& docno, Grade g) {
  c->judgments.push_back(g);
  c->qrels_text += "1 0 " + docno + " " + std::to_string(g) + "\n";
}

Case MakeCase() {
  Rng rng(20240611);
  Case c;
  for (int i = 0; i < kDocs; ++i) {
    // Distinct by construction: the rank is part of the docno.
    c.docnos.push_back(Docno(rng.Below(4'000'000) * kDocs * 2 + i));
    char line[64];
    std::snprintf(line, sizeof(line), "1 0 %s %d %.6f r\n",
                  c.docnos.back().c_str(), i + 1, 9.0 - 0.002 * i);
    c.run_text += line;
  }
  c.ranked.assign(kDocs, rankwatch::metrics::kUnjudged);
  for (int n = 0; n < kJudgedRetrieved;) {
    const double u = rng.Uniform();
    const int r = static_cast<int>(u * u * u * kDocs);
    if (c.ranked[r] != rankwatch::metrics::kUnjudged) continue;
    c.ranked[r] = DrawGrade(&rng);
    AddJudgment(&c, c.docnos[r], c.ranked[r]);
    ++n;
  }
  for (int n = 0; n < kJudgedUnretrieved; ++n) {
    AddJudgment(&c, Docno(rng.Below(4'000'000) * kDocs * 2 + kDocs + n),
                DrawGrade(&rng));
  }
  return c;
}

rankwatch::metrics::Evaluator MakeEvaluator() {
  return *rankwatch::metrics::Evaluator::Create(
      std::vector<int32_t>(kCutoffs.begin(), kCutoffs.end()), {});
}

void SetRates(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations());
  state.counters["values"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kValuesPerList,
      benchmark::Counter::kIsRate);
}

void BM_Evaluate(benchmark::State& state) {
  const Case c = MakeCase();
  rankwatch::metrics::Evaluator evaluator = MakeEvaluator();
  rankwatch::metrics::ListScores scores;
  for (auto _ : state) {
    evaluator.Evaluate(c.ranked, c.judgments, &scores);
    benchmark::DoNotOptimize(scores.at.data());
    benchmark::ClobberMemory();
  }
  SetRates(state);
}
BENCHMARK(BM_Evaluate);

void BM_LookupEvaluate(benchmark::State& state) {
  const Case c = MakeCase();
  const rankwatch::trec::Qrels qrels =
      rankwatch::trec::Qrels::Parse(c.qrels_text, "bench").value();
  const rankwatch::trec::QueryQrels& q = qrels.queries()[0];
  rankwatch::metrics::Evaluator evaluator = MakeEvaluator();
  rankwatch::metrics::ListScores scores;
  std::vector<Grade> ranked(kDocs);
  for (auto _ : state) {
    for (int i = 0; i < kDocs; ++i) {
      const std::string& d = c.docnos[i];
      ranked[i] = qrels.Lookup(q, d, rankwatch::HashBytes(d));
    }
    evaluator.Evaluate(ranked, qrels.grades(q), &scores);
    benchmark::DoNotOptimize(scores.at.data());
    benchmark::ClobberMemory();
  }
  if (ranked != c.ranked) state.SkipWithError("lookup disagrees with case");
  SetRates(state);
}
BENCHMARK(BM_LookupEvaluate);

// A case of kFileQueries copies of the query (qids 1..kFileQueries) in a
// temporary directory, removed on destruction.
class FileCase {
 public:
  static constexpr int kFileQueries = 200;

  explicit FileCase(const Case& c) {
    char tmpl[] = "/tmp/rankwatch-bench-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    std::string qrels;
    std::string run;
    for (int q = 1; q <= kFileQueries; ++q) {
      qrels += WithQid(c.qrels_text, q);
      run += WithQid(c.run_text, q);
    }
    qrels_ = Write("qrels.txt", qrels);
    run_ = Write("run.txt", run);
  }
  FileCase(const FileCase&) = delete;
  FileCase& operator=(const FileCase&) = delete;
  ~FileCase() {
    std::remove(qrels_.c_str());
    std::remove(run_.c_str());
    std::remove(dir_.c_str());
  }

  const std::string& qrels() const { return qrels_; }
  const std::string& run() const { return run_; }

 private:
  // `text` has qid "1" on every line.
  static std::string WithQid(const std::string& text, int qid) {
    std::string out;
    const std::string q = std::to_string(qid);
    for (size_t pos = 0; pos < text.size();) {
      const size_t eol = text.find('\n', pos);
      out += q;
      out.append(text, pos + 1, eol + 1 - (pos + 1));
      pos = eol + 1;
    }
    return out;
  }

  std::string Write(const char* name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return path;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  }

  std::string dir_;
  std::string qrels_;
  std::string run_;
};

// The whole of `rankwatch eval` but printing: loading the qrels, streaming
// the run and scoring each query, on state.range(0) threads. Items are
// queries (1,000 run lines each).
void BM_EvaluateFiles(benchmark::State& state) {
  const FileCase files(MakeCase());
  rankwatch::trec::EvalOptions options;
  const std::vector<std::string> specs = {
      "P.1,5,10", "recall.1,5,10", "map_cut.10", "ndcg_cut.10", "recip_rank"};
  options.measures = *rankwatch::trec::MeasureSelection::Parse(specs);
  options.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    rankwatch::StatusOr<rankwatch::trec::EvalReport> report =
        rankwatch::trec::EvaluateFiles(files.qrels(), files.run(), options);
    if (!report.ok()) {
      state.SkipWithError(report.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(report->queries().data());
  }
  state.SetItemsProcessed(state.iterations() * FileCase::kFileQueries);
  state.counters["values"] =
      benchmark::Counter(static_cast<double>(state.iterations()) *
                             FileCase::kFileQueries * kValuesPerList,
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EvaluateFiles)->Arg(1)->Arg(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
