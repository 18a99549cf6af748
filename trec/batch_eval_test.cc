#include "trec/batch_eval.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_seed.h"
#include "trec/text_scan.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

class EvaluateFilesTest : public ::testing::Test {
 protected:
  // Two queries. q1: ranked a(rel 1), b(0), c(unjudged), R = 2 (d not
  // retrieved). q2: ranked x (rel 2), R = 1. q3 only in qrels, q9 only in
  // the run.
  void SetUp() override {
    qrels_ = dir_.Write("qrels.txt",
                        "q1 0 a 1\nq1 0 b 0\nq1 0 d 1\nq2 0 x 2\nq3 0 y 1\n");
    run_ = dir_.Write("run.txt",
                      "q1 Q0 c 3 1.0 r\nq1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\n"
                      "q2 Q0 x 1 5 r\nq9 Q0 z 1 1 r\n");
  }

  std::string Text(EvalOptions options) {
    StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string out;
    if (r.ok()) WriteTrecText(*r, &out);
    return out;
  }

  testing::TempDir dir_;
  std::string qrels_;
  std::string run_;
};

TEST_F(EvaluateFilesTest, TrecTextPerQueryAndSummary) {
  EvalOptions o;
  o.measures = Select({"P.2", "map", "num_q", "num_rel"});
  o.per_query = true;
  // q1: P_2 = 1/2, map = (1/1) / 2 = 0.5. q2: P_2 = 1/2, map = 1.
  // Without -c, q3 (qrels only) is skipped and q9 (run only) ignored.
  EXPECT_EQ(Text(o),
            "num_rel               \tq1\t2\n"
            "map                   \tq1\t0.5000\n"
            "P_2                   \tq1\t0.5000\n"
            "num_rel               \tq2\t1\n"
            "map                   \tq2\t1.0000\n"
            "P_2                   \tq2\t0.5000\n"
            "num_q                 \tall\t2\n"
            "num_rel               \tall\t3\n"
            "map                   \tall\t0.7500\n"
            "P_2                   \tall\t0.5000\n");
}

TEST_F(EvaluateFilesTest, CompleteCountsMissingQueriesAsZero) {
  EvalOptions o;
  o.measures = Select({"map", "num_q"});
  o.complete = true;
  // -c: q3 counts with 0, so map = (0.5 + 1 + 0) / 3.
  EXPECT_EQ(Text(o),
            "num_q                 \tall\t3\n"
            "map                   \tall\t0.5000\n");
}

TEST_F(EvaluateFilesTest, MaxDocsPerQuery) {
  EvalOptions o;
  o.measures = Select({"num_ret", "recip_rank"});
  o.max_docs_per_query = 1;
  // Top-1 only: q1 keeps a (relevant), q2 keeps x.
  EXPECT_EQ(Text(o),
            "num_ret               \tall\t2\n"
            "recip_rank            \tall\t1.0000\n");
}

TEST_F(EvaluateFilesTest, SkipZeroRelevantQueries) {
  dir_.Write("qrels.txt", "q1 0 a 1\nq2 0 x 0\n");
  EvalOptions o;
  o.measures = Select({"num_q", "map"});
  o.definitions.zero_relevant = metrics::ZeroRelevantPolicy::kSkip;
  EXPECT_EQ(Text(o),
            "num_q                 \tall\t1\n"
            "map                   \tall\t1.0000\n");
}

TEST_F(EvaluateFilesTest, JsonHasFullPrecision) {
  EvalOptions o;
  o.measures = Select({"num_q", "P.3"});
  o.per_query = true;
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
  ASSERT_TRUE(r.ok());
  std::string out;
  WriteJson(*r, &out);
  // q1: 1 hit in 3 -> 1/3; q2: 1/3; in the shortest form that reads back
  // as the double 1/3 (16 threes: 0.3333333333333333 != 1.0 / 3 with 15).
  EXPECT_NE(out.find("\"queries\":{\"q1\":{\"P_3\":0.3333333333333333}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\"all\":{\"num_q\":2,\"P_3\":0.3333333333333333}"),
            std::string::npos)
      << out;
  EXPECT_EQ(std::stod("0.3333333333333333"), 1.0 / 3);
  EXPECT_NE(std::stod("0.333333333333333"), 1.0 / 3);
  EXPECT_NE(out.find("\"gain\":\"linear\""), std::string::npos);
}

TEST_F(EvaluateFilesTest, NoCommonQueryIsAnError) {
  dir_.Write("run.txt", "q8 Q0 a 1 1 r\n");
  EvalOptions o;
  o.measures = Select({"map"});
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no query appears in both"),
            std::string::npos);
}

TEST_F(EvaluateFilesTest, DuplicateDocnoInRunIsAnError) {
  dir_.Write("run.txt", "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n");
  EvalOptions o;
  o.measures = Select({"map"});
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            run_ +
                ":3: duplicate docno 'a' for query q1 (first listed on "
                "line 1)");
}

TEST_F(EvaluateFilesTest, MalformedRunOnlyQueryIsStillAnError) {
  dir_.Write("run.txt", "q1 Q0 a 1 3 r\nq9 Q0 z 1 r\n");
  EvalOptions o;
  o.measures = Select({"map"});
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(":2: expected 6 fields"),
            std::string::npos)
      << r.status().message();
}

// Evaluates `run` read from standard input, which takes the mapped path
// (a pipe cannot be streamed), for comparison with the streaming path.
std::string TextFromStdin(const std::string& qrels, const std::string& run,
                          const EvalOptions& options) {
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(run.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  StatusOr<EvalReport> r = EvaluateFiles(qrels, "-", options);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::string out;
  if (r.ok()) WriteTrecText(*r, &out);
  return out;
}

// The streaming path, at any chunk size, scores as the mapped path does:
// queries interleaved or split in groups, comments, ties, unsorted lines, a
// missing final newline.
TEST_F(EvaluateFilesTest, StreamingMatchesMappedPath) {
  std::string qrels;
  std::string run;
  uint64_t state = 7;
  auto next = [&state](uint64_t n) { return SplitMix64(&state) % n; };
  for (int q = 0; q < 12; ++q) {
    for (int d = 0; d < 30; ++d) {
      if (next(3) == 0) {
        qrels += std::to_string(q) + " 0 d" + std::to_string(d) + " " +
                 std::to_string(static_cast<int>(next(4)) - 1) + "\n";
      }
    }
  }
  int doc[12] = {};
  for (int line = 0; line < 200; ++line) {
    // Mostly runs of one qid; now and then a qid seen before comes back.
    const int q = next(5) == 0 ? static_cast<int>(next(12)) : line / 17;
    if (doc[q] >= 30) continue;
    run += std::to_string(q) + " Q0 d" + std::to_string(doc[q]++) + " 0 " +
           std::to_string(next(6)) + ".5 r\n";
    if (next(20) == 0) run += "# comment\n\n";
  }
  run.pop_back();  // No final newline.
  dir_.Write("qrels.txt", qrels);
  dir_.Write("run.txt", run);
  EvalOptions o;
  o.measures = Select({"num_q", "num_ret", "num_rel_ret", "map", "P.5",
                       "ndcg_cut.10", "recip_rank", "Rprec"});
  o.per_query = true;
  o.complete = true;
  const std::string expected = TextFromStdin(qrels_, run_, o);
  ASSERT_NE(expected.find("num_q                 \tall\t12"), std::string::npos)
      << expected;
  for (size_t chunk : {1, 16, 100, 1000, 1 << 20}) {
    o.run_chunk_bytes = chunk;
    EXPECT_EQ(Text(o), expected) << "chunk " << chunk;
  }
  o.max_docs_per_query = 3;
  o.run_chunk_bytes = 64;
  EXPECT_EQ(Text(o), TextFromStdin(qrels_, run_, o));
}

// The -q rows formatted on several threads are the bytes of one thread's:
// random qrels and runs of 1 to 700 queries (the rows go parallel from 256
// queries on), with a text column (relstring) and an undefined one among
// the measures. Each report is formatted on 1 thread and on 2, 3 and 8.
TEST_F(EvaluateFilesTest, QueryRowsAreTheSameOnAnyThreadCount) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedNote(seed));
  Xoshiro256 rng(seed);
  for (int round = 0; round < 6; ++round) {
    const int queries = round == 0 ? 1 : static_cast<int>(rng.Between(2, 700));
    std::string qrels;
    std::string run;
    for (int q = 0; q < queries; ++q) {
      // Distinct qids, not in strcmp order.
      const std::string qid =
          "q" + std::to_string(rng.Below(1000)) + "_" + std::to_string(q);
      const int docs = static_cast<int>(rng.Between(1, 12));
      for (int d = 0; d < docs; ++d) {
        const std::string doc = "d" + std::to_string(d);
        if (rng.Below(2) == 0) {
          qrels +=
              qid + " 0 " + doc + " " + std::to_string(rng.Below(3)) + "\n";
        }
        run += qid + " Q0 " + doc + " 0 " + std::to_string(rng.Below(1000)) +
               ".25 r\n";
      }
    }
    qrels += "qz 0 dz 1\n";  // Never empty.
    dir_.Write("qrels.txt", qrels);
    dir_.Write("run.txt", run);
    EvalOptions o;
    o.measures = Select({"num_ret", "map", "P.5", "ndcg_cut.10", "relstring",
                         "recip_rank", "spearman"});
    o.per_query = true;
    o.complete = rng.Below(2) == 0;
    StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::string serial;
    WriteTrecText(*r, &serial, 1);
    // One num_ret row per evaluated query, and one for `all`.
    size_t num_ret_rows = 0;
    for (size_t at = 0; (at = serial.find("num_ret ", at)) != std::string::npos;
         ++at) {
      ++num_ret_rows;
    }
    EXPECT_EQ(num_ret_rows, r->queries().size() + 1) << "round " << round;
    for (int threads : {2, 3, 8}) {
      std::string parallel;
      WriteTrecText(*r, &parallel, threads);
      ASSERT_EQ(parallel, serial)
          << "round " << round << ", " << threads << " threads";
    }
  }
}

TEST_F(EvaluateFilesTest, DuplicateAcrossGroupsIsAnError) {
  dir_.Write("run.txt", "q1 Q0 a 1 3 r\nq2 Q0 x 1 2 r\nq1 Q0 a 3 1 r\n");
  EvalOptions o;
  o.measures = Select({"map"});
  o.run_chunk_bytes = 1;
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            run_ +
                ":3: duplicate docno 'a' for query q1 (first listed on "
                "line 1)");
}

TEST_F(EvaluateFilesTest, MissingFileIsAnIoError) {
  EvalOptions o;
  o.measures = Select({"map"});
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, dir_.path() + "/nope", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("nope"), std::string::npos);
}

// `eval QRELS /dev/zero` (and /dev/zero as qrels) used to read the device
// until memory ran out (8.4 GB in 60 s): now the first line stops at the
// bound of a TREC line, 1 MiB.
TEST_F(EvaluateFilesTest, DevZeroStopsAtTheLineBound) {
  EvalOptions o;
  o.measures = Select({"map"});
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, "/dev/zero", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "/dev/zero:1: line longer than 1048576 bytes (the limit for a "
            "TREC line)");
  r = EvaluateFiles("/dev/zero", run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "/dev/zero:1: line longer than 1048576 bytes (the limit for a "
            "TREC line)");
}

// A regular file: the same bound, named with its line, on the streamed
// path (a line that grows past the chunk reader's bound, or a whole long
// line inside a chunk) and the mapped one alike.
TEST_F(EvaluateFilesTest, LongLineInARegularFileIsAnError) {
  const std::string long_doc(kMaxLineBytes, 'd');  // Line: 1 MiB + 13 bytes.
  for (size_t chunk : {size_t{64}, size_t{4} << 20}) {
    SCOPED_TRACE(chunk);
    EvalOptions o;
    o.measures = Select({"map"});
    o.run_chunk_bytes = chunk;
    dir_.Write("long.txt", "q1 Q0 a 1 3 r\nq1 Q0 " + long_doc + " 2 2 r\n");
    StatusOr<EvalReport> r =
        EvaluateFiles(qrels_, dir_.path() + "/long.txt", o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              dir_.path() +
                  "/long.txt:2: line longer than 1048576 bytes (the limit "
                  "for a TREC line)");
  }
  // A line of exactly the bound is fine: "q1 Q0 " + docno + " 2 2 r" with
  // a docno of kMaxLineBytes - 13 bytes.
  EvalOptions o;
  o.measures = Select({"num_ret"});
  dir_.Write("edge.txt",
             "q1 Q0 " + std::string(kMaxLineBytes - 13, 'd') + " 2 2 r\n");
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, dir_.path() + "/edge.txt", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  dir_.Write("qlong.txt", "q1 0 " + long_doc + " 1\n");
  r = EvaluateFiles(dir_.path() + "/qlong.txt", run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            dir_.path() +
                "/qlong.txt:1: line longer than 1048576 bytes (the limit for "
                "a TREC line)");
}

// Every error is one line: control characters that a file name or a token
// holds are escaped (base/strings.h Printable), NUL included.
TEST_F(EvaluateFilesTest, ErrorsEscapeControlCharacters) {
  EvalOptions o;
  o.measures = Select({"map"});
  dir_.Write("bad.txt", std::string("q1 Q0 a 1 x\x1b[2J\0y r\n", 20));
  StatusOr<EvalReport> r = EvaluateFiles(qrels_, dir_.path() + "/bad.txt", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            dir_.path() +
                "/bad.txt:1: score 'x\\x1b[2J\\x00y' is not a finite number");
  dir_.Write("badq.txt", "q1 0 a \x01\n");
  r = EvaluateFiles(dir_.path() + "/badq.txt", run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            dir_.path() + "/badq.txt:1: grade '\\x01' is not an integer");
  const std::string odd = dir_.path() + "/no\nsuch\x1b";
  r = EvaluateFiles(odd, run_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cannot open '" + dir_.path() +
                                      "/no\\nsuch\\x1b': No such file or "
                                      "directory");
  // A NUL in a name would make open() read another file: refused.
  r = EvaluateFiles(qrels_, run_ + std::string("\0x", 2), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cannot open '" + run_ + "\\x00x': the name holds a NUL byte");
}

}  // namespace
}  // namespace rankwatch::trec
