// Conformance of `rankwatch eval` with NIST trec_eval, on the reference corpus
// in ../shared/conformance (read at run time, never copied): the 4-decimal
// text byte for byte, the full-precision (%.17g) figures to 1e-9, trec_eval's
// error cases, and rankwatch's own input errors. Runs the real binary.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::ConformanceDir;
using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;

const std::string kDir = ConformanceDir();

// The measure set of the reference files ("FOCUS" in the corpus README).
const std::vector<std::string> kFocus = {"-m", "P.1,3,5,10,20,100",
                                         "-m", "recall.1,3,5,10,20,100",
                                         "-m", "map",
                                         "-m", "map_cut.1,3,5,10,20,100",
                                         "-m", "ndcg",
                                         "-m", "ndcg_cut.1,3,5,10,20,100",
                                         "-m", "recip_rank",
                                         "-m", "Rprec",
                                         "-m", "success.1,3,5,10,20,100",
                                         "-m", "num_q",
                                         "-m", "num_ret",
                                         "-m", "num_rel",
                                         "-m", "num_rel_ret"};

std::vector<std::string> Concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

CommandResult Eval(const std::vector<std::string>& args) {
  return RunCommand(Concat({RankwatchBinary(), "eval"}, args));
}

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// One reference output: the flags trec_eval was run with (the corpus README
// lists them) and the file it printed.
struct Reference {
  std::string name;
  std::string dir;
  std::vector<std::string> flags;
  std::string expected;  // Without the .txt / .full.txt suffix.
  bool has_full = true;  // A .full.txt (%.17g) twin exists.
};

std::vector<Reference> References() {
  std::vector<Reference> refs = {
      {"main_c", "main", Concat({"-q", "-c"}, kFocus), "te10.c.focused"},
      {"main_c_l2", "main", Concat({"-q", "-c", "-l", "2"}, kFocus),
       "te10.c.l2.focused"},
      // Without -c trec_eval 10.0 exits with status 4 when a qrels query is
      // missing from the run (a regression of its evaluation-loop rewrite,
      // see the corpus README); rankwatch keeps 9.0.8's behaviour, which
      // skips such queries, so 9.0.8's output is the reference here.
      {"main_no_c", "main", Concat({"-q"}, kFocus), "te908.focused"},
      {"ties", "ties", Concat({"-q"}, kFocus), "te10.focused"},
      // trec_eval 10.0's whole all_trec set and its default (official) set.
      {"main_c_all_trec",
       "main",
       {"-q", "-c", "-m", "all_trec"},
       "te10.c.all_trec"},
      {"main_c_l2_all_trec",
       "main",
       {"-q", "-c", "-l", "2", "-m", "all_trec"},
       "te10.c.l2.all_trec"},
      {"main_c_official", "main", {"-q", "-c"}, "te10.c.official", false},
      {"main_c_official_summary",
       "main",
       {"-c"},
       "te10.c.official.summary",
       false},
      {"ties_all_trec", "ties", {"-q", "-m", "all_trec"}, "te10.all_trec"},
      {"ties_official", "ties", {"-q"}, "te10.official", false},
  };
  for (const auto& entry : fs::directory_iterator(kDir + "/handmade")) {
    const std::string dir = "handmade/" + entry.path().filename().string();
    refs.push_back({entry.path().filename().string(), dir,
                    Concat({"-q"}, SplitWords(ReadFile(kDir + "/" + dir +
                                                       "/measures.txt"))),
                    "te10"});
  }
  return refs;
}

std::vector<std::string> FileArgs(const Reference& r,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args = Concat(r.flags, extra);
  args.push_back(kDir + "/" + r.dir + "/qrels.txt");
  args.push_back(kDir + "/" + r.dir + "/run.txt");
  return args;
}

TEST(ConformanceTest, CorpusIsPresent) {
  ASSERT_TRUE(fs::exists(kDir + "/README.md"))
      << "reference corpus not found at " << kDir;
  EXPECT_GE(References().size(), 4u + 16u);
}

TEST(ConformanceTest, TextIsByteIdenticalToTrecEval) {
  for (const Reference& r : References()) {
    SCOPED_TRACE(r.name);
    const CommandResult res = Eval(FileArgs(r));
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const std::string expected =
        ReadFile(kDir + "/" + r.dir + "/" + r.expected + ".txt");
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(res.out, expected);
  }
}

// (measure, qid) -> value, from trec_eval's text output.
std::map<std::pair<std::string, std::string>, double> ParseTrecOutput(
    const std::string& text) {
  std::map<std::pair<std::string, std::string>, double> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string measure, qid, value;
    fields >> measure >> qid >> value;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    // all_trec also prints text rows (runid, relstring): not figures.
    if (value.empty() || *end != '\0') continue;
    rows[{measure, qid}] = v;
  }
  return rows;
}

// The same shape from `rankwatch eval --json -q`.
std::map<std::pair<std::string, std::string>, double> ParseJsonOutput(
    const std::string& text) {
  std::map<std::pair<std::string, std::string>, double> rows;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(padded).get(doc), simdjson::SUCCESS) << text;
  auto add = [&](std::string_view qid, simdjson::dom::object values) {
    for (auto [key, value] : values) {
      // runid and relstring are text, not figures; null is undefined.
      if (value.is_string() || value.is_null()) continue;
      double v = 0;
      if (value.is_int64()) {
        v = static_cast<double>(int64_t(value));
      } else {
        v = double(value);
      }
      rows[{std::string(key), std::string(qid)}] = v;
    }
  };
  simdjson::dom::object queries;
  if (doc["queries"].get(queries) == simdjson::SUCCESS) {
    for (auto [qid, values] : queries) add(qid, values);
  }
  add("all", doc["all"]);
  return rows;
}

// Compares every full-precision figure, except the rows `skip` rejects.
template <typename Skip>
void ExpectFullPrecision(const Reference& r, const std::string& expected_file,
                         Skip skip) {
  SCOPED_TRACE(r.name + " vs " + expected_file);
  const CommandResult res = Eval(FileArgs(r, {"--json"}));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto ours = ParseJsonOutput(res.out);
  const auto reference =
      ParseTrecOutput(ReadFile(kDir + "/" + r.dir + "/" + expected_file));
  ASSERT_FALSE(reference.empty());
  size_t compared = 0;
  for (const auto& [key, value] : reference) {
    if (skip(key.first, key.second)) continue;
    auto it = ours.find(key);
    ASSERT_NE(it, ours.end()) << key.first << " " << key.second;
    EXPECT_NEAR(it->second, value, 1e-9) << key.first << " " << key.second;
    ++compared;
  }
  size_t ours_compared = 0;
  for (const auto& [key, value] : ours) {
    if (!skip(key.first, key.second)) ++ours_compared;
  }
  EXPECT_EQ(compared, ours_compared) << "rows that trec_eval does not print";
}

TEST(ConformanceTest, FullPrecisionFiguresWithin1e9) {
  auto none = [](const std::string&, const std::string&) { return false; };
  for (const Reference& r : References()) {
    if (r.has_full) ExpectFullPrecision(r, r.expected + ".full.txt", none);
  }
}

// Every trec_eval 10.0 output of the corpus (te10.*) is one of the
// references above, so each is reproduced byte for byte (and, with a
// .full.txt twin, to 1e-9).
TEST(ConformanceTest, EveryTrecEval10FileIsAReference) {
  std::vector<std::string> covered;
  for (const Reference& r : References()) {
    covered.push_back(r.dir + "/" + r.expected + ".txt");
    if (r.has_full) covered.push_back(r.dir + "/" + r.expected + ".full.txt");
  }
  int files = 0;
  for (const std::string dir : {"main", "ties"}) {
    for (const auto& entry : fs::directory_iterator(kDir + "/" + dir)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("te10.", 0) != 0) continue;
      ++files;
      EXPECT_NE(std::find(covered.begin(), covered.end(), dir + "/" + name),
                covered.end())
          << dir << "/" << name << " is not checked";
    }
  }
  EXPECT_EQ(files, 15);  // 10 in main/, 5 in ties/ (handmade/ above too).
}

// 9.0.8 parses scores as C floats: in ties/t04 the scores differ only beyond
// float32 precision, so 9.0.8 sees a tie where 10.0 (doubles, like rankwatch)
// does not. Every other query agrees with 9.0.8 too.
TEST(ConformanceTest, Ties908AgreesExceptFloat32Collapse) {
  Reference r = References()[3];
  ASSERT_EQ(r.name, "ties");
  ExpectFullPrecision(r, "te908.focused.full.txt",
                      [](const std::string&, const std::string& qid) {
                        return qid == "t04" || qid == "all";
                      });
}

// all_trec output contains every trec_eval measure; the rows of the ones
// rankwatch implements must match, in order, at trec_eval's default cutoffs.
std::string FilterRows(const std::string& text,
                       const std::vector<std::string>& prefixes) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const std::string measure = line.substr(0, line.find_first_of(" \t"));
    for (const std::string& p : prefixes) {
      const bool cut = p.back() == '_';
      if (cut ? measure.rfind(p, 0) == 0 &&
                    measure.find_first_not_of("0123456789", p.size()) ==
                        std::string::npos
              : measure == p) {
        out += line + "\n";
        break;
      }
    }
  }
  return out;
}

TEST(ConformanceTest, AllTrecRowsOfSupportedMeasures) {
  const std::vector<std::string> measures = {
      "-m", "num_q",  "-m", "num_ret", "-m", "num_rel",    "-m", "num_rel_ret",
      "-m", "map",    "-m", "Rprec",   "-m", "recip_rank", "-m", "P",
      "-m", "recall", "-m", "ndcg",    "-m", "ndcg_cut",   "-m", "map_cut",
      "-m", "success"};
  const std::vector<std::string> names = {
      "num_q",     "num_ret",    "num_rel", "num_rel_ret", "map",
      "Rprec",     "recip_rank", "P_",      "recall_",     "ndcg",
      "ndcg_cut_", "map_cut_",   "success_"};
  struct Case {
    std::vector<std::string> flags;
    std::string file;
  };
  for (const Case& c : {Case{{"-q", "-c"}, "te10.c.all_trec.txt"},
                        Case{{"-q"}, "te908.all_trec.txt"}}) {
    SCOPED_TRACE(c.file);
    Reference r{"all_trec", "main", Concat(c.flags, measures), ""};
    const CommandResult res = Eval(FileArgs(r));
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const std::string expected =
        FilterRows(ReadFile(kDir + "/main/" + c.file), names);
    ASSERT_GT(expected.size(), 10000u);
    EXPECT_EQ(res.out, expected);
  }
}

// judged_k has no trec_eval counterpart, but trec_eval's unj_k (the fraction
// of the top k that is unjudged, also over k) does: judged docs and unjudged
// docs fill the top min(num_ret, k), so judged_k = min(num_ret, k)/k - unj_k.
TEST(ConformanceTest, JudgedComplementsTrecEvalUnjudged) {
  Reference r{"judged",
              "main",
              {"-q", "-c", "-m", "judged.5,10,20", "-m", "num_ret"},
              ""};
  const CommandResult res = Eval(FileArgs(r, {"--json"}));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto ours = ParseJsonOutput(res.out);
  const auto ref =
      ParseTrecOutput(ReadFile(kDir + "/main/te10.c.all_trec.txt"));
  int compared = 0;
  for (const auto& [key, unj] : ref) {
    const auto& [measure, qid] = key;
    if (measure.rfind("unj_", 0) != 0 || qid == "all") continue;
    const int k = std::stoi(measure.substr(4));
    const double num_ret = ours.at({"num_ret", qid});
    const double expected = std::min(num_ret, double(k)) / k - unj;
    // unj is printed with 4 decimals: +-0.00005.
    EXPECT_NEAR(ours.at({"judged_" + std::to_string(k), qid}), expected,
                0.5e-4 + 1e-12)
        << measure << " " << qid;
    ++compared;
  }
  EXPECT_EQ(compared, 114 * 3);
}

// trec_eval's error cases, with and without -c (the corpus's errors/ dir).
struct ErrorCase {
  std::string name;
  bool complete;
  int exit_code;
  std::string expected_stdout_file;  // Empty: expect `expected_stdout`.
  std::string expected_stdout;
  std::string stderr_contains;
};

TEST(ConformanceTest, ErrorCases) {
  // q0 has only -1 judgments and sorts first: trec_eval fails (rc 4) through
  // an allocation quirk, not a rule; everywhere else it scores such a query
  // as R = 0. rankwatch does so here too. By hand: q0 scores 0; q1 ranks its
  // one relevant doc first (map 1, P_5 1/5); means over 2 queries.
  const std::string kNegativeFirst =
      "map                   \tq0\t0.0000\n"
      "P_5                   \tq0\t0.0000\n"
      "map                   \tq1\t1.0000\n"
      "P_5                   \tq1\t0.2000\n"
      "num_q                 \tall\t2\n"
      "map                   \tall\t0.5000\n"
      "P_5                   \tall\t0.1000\n";
  const std::vector<ErrorCase> cases = {
      {"dup_docno_in_qrels", false, 1, "", "",
       "qrels.txt:2: duplicate docno 'a' for query q1 (first judged on line "
       "1)"},
      {"dup_docno_in_qrels", true, 1, "", "", "qrels.txt:2: duplicate docno"},
      {"dup_docno_in_run", false, 1, "", "",
       "run.txt:3: duplicate docno 'a' for query q1 (first listed on line 1)"},
      {"dup_docno_in_run", true, 1, "", "", "run.txt:3: duplicate docno"},
      {"negative_only_query_not_first", false, 0, "te10.stdout.txt", "", ""},
      {"negative_only_query_not_first", true, 0, "te10.c.stdout.txt", "", ""},
      {"negative_only_query_sorted_first", false, 0, "", kNegativeFirst, ""},
      {"negative_only_query_sorted_first", true, 0, "", kNegativeFirst, ""},
      // No qid in both files: 9.0.8 fails with "No queries with both results
      // and relevance info"; so does rankwatch, with the file names.
      {"no_common_query", false, 1, "", "", "no query appears in both"},
      {"no_common_query", true, 0, "te10.c.stdout.txt", "", ""},
      // As for main/: without -c, 9.0.8's behaviour (skip the missing query).
      {"query_missing_from_run", false, 0, "te908.stdout.txt", "", ""},
      {"query_missing_from_run", true, 0, "te10.c.stdout.txt", "", ""},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name + (c.complete ? " -c" : ""));
    const std::string dir = kDir + "/errors/" + c.name;
    std::vector<std::string> args = {"-q",  "-m", "P.5",  "-m",
                                     "map", "-m", "num_q"};
    if (c.complete) args.push_back("-c");
    args.push_back(dir + "/qrels.txt");
    args.push_back(dir + "/run.txt");
    const CommandResult res = Eval(args);
    EXPECT_EQ(res.exit_code, c.exit_code) << res.err;
    const std::string expected =
        c.expected_stdout_file.empty()
            ? c.expected_stdout
            : ReadFile(dir + "/" + c.expected_stdout_file);
    EXPECT_EQ(res.out, expected);
    if (c.stderr_contains.empty()) {
      EXPECT_EQ(res.err, "");
    } else {
      EXPECT_NE(res.err.find(c.stderr_contains), std::string::npos) << res.err;
      EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1)
          << "one line: " << res.err;
      EXPECT_EQ(res.err.rfind("rankwatch eval: ", 0), 0u) << res.err;
    }
  }
}

// Malformed input that trec_eval accepts or reports without a location:
// rankwatch names the file and line and exits 1, never crashes.
TEST(ConformanceTest, MalformedInputNamesFileAndLine) {
  testing::TempDir dir;
  const std::string good_qrels = dir.Write("qrels.txt", "q1 0 a 1\nq1 0 b 0\n");
  const std::string good_run = dir.Write("run.txt", "q1 Q0 a 1 2.0 r\n");
  struct Case {
    std::string qrels, run, message;
  };
  const std::vector<Case> cases = {
      {dir.Write("q_short.txt", "q1 0 a 1\nq1 0 b\n"), good_run,
       "q_short.txt:2: expected 4 fields (qid iter docno grade), found 3"},
      {dir.Write("q_grade.txt", "q1 0 a yes\n"), good_run,
       "q_grade.txt:1: grade 'yes' is not an integer"},
      {good_qrels, dir.Write("r_short.txt", "q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0\n"),
       "r_short.txt:2: expected 6 fields (qid iter docno rank score run_id), "
       "found 5"},
      {good_qrels,
       dir.Write("r_score.txt", "q1 Q0 a 1 2.0 r\n\nq1 Q0 b 2 x r\n"),
       "r_score.txt:3: score 'x' is not a finite number"},
      {good_qrels, dir.path() + "/missing.txt", "missing.txt"},
      {dir.path(), good_run, "is a directory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const CommandResult res = Eval({"-m", "map", c.qrels, c.run});
    EXPECT_EQ(res.exit_code, 1);
    EXPECT_EQ(res.out, "");
    EXPECT_NE(res.err.find(c.message), std::string::npos) << res.err;
    EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1) << res.err;
  }
}

TEST(ConformanceTest, UsageErrorsExitTwo) {
  testing::TempDir dir;
  const std::string q = dir.Write("qrels.txt", "q1 0 a 1\n");
  const std::string r = dir.Write("run.txt", "q1 Q0 a 1 2.0 r\n");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"-m", "bogus", q, r},
           {"-m", "P.5,5", q, r},
           {"-m", "P.0", q, r},
           {"-m", "utility.1,2", q, r},
           {"-m", "ndcg.1=2,3", q, r},
           {"-m", "prefs", q, r},
           {"--gain", "cubic", q, r},
           {"-M", "0", q, r},
           {"-l", "-1", q, r},
           // trec_eval's flags rankwatch does not support: one line each.
           {"-Z", "zscores.txt", q, r},
           {"-D", "1", q, r},
           {"-R", "prefs", q, r},
           {"-T", "other", q, r},
           {q}}) {
    const CommandResult res = Eval(args);
    EXPECT_EQ(res.exit_code, 2) << args[0] << " " << res.err;
    EXPECT_FALSE(res.err.empty());
    if (args[0] == "-Z" || args[0] == "-D" || args[0] == "-R" ||
        args[0] == "-T") {
      // One line that names the flag.
      EXPECT_EQ(res.err.find('\n'), res.err.size() - 1) << res.err;
      EXPECT_NE(res.err.find(args[0] + " "), std::string::npos) << res.err;
    }
  }
}

// rankwatch's spearman and kendall_tau through `eval`, in trec_eval's
// ranking order, against SciPy 1.10.1 on the corpus: for each query, the
// judged retrieved docs (grade >= 0) in score-descending, docno-descending
// order, x = -rank, y = grade; scipy.stats.spearmanr(x, y).correlation and
// scipy.stats.kendalltau(x, y).correlation; queries with fewer than two
// such docs or one grade are undefined (80 of 114 are defined).
TEST(ConformanceTest, RankCorrelationMeasuresMatchSciPy) {
  const CommandResult res =
      Eval({"-q", "-c", "-m", "spearman", "-m", "kendall_tau", "--json",
            kDir + "/main/qrels.txt", kDir + "/main/run.txt"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto ours = ParseJsonOutput(res.out);
  const std::vector<std::tuple<std::string, double, double>> expected = {
      {"101", 0.5, 0.33333333333333337},
      {"138", 0.47432030637492073, 0.36946844010130786},
      {"152", 0.8764598212022147, 0.7675225788801975},
      // The means over the 80 defined queries.
      {"all", 0.4181425051603189, 0.3559328500142467}};
  for (const auto& [qid, rho, tau] : expected) {
    EXPECT_NEAR(ours.at({"spearman", qid}), rho, 1e-12) << qid;
    EXPECT_NEAR(ours.at({"kendall_tau", qid}), tau, 1e-12) << qid;
  }
  int defined = 0;
  for (const auto& [key, value] : ours) {
    if (key.first == "spearman" && key.second != "all") ++defined;
  }
  EXPECT_EQ(defined, 80);
}

// trec_eval's -n, -J, -N and -o on the reference corpus: values printed by
// trec_eval 10.0 (commit f4253652c8ef, plain `make`) with the command in
// each comment.
TEST(ConformanceTest, TrecEvalFlagsNJNO) {
  const std::string q = kDir + "/main/qrels.txt";
  const std::string r = kDir + "/main/run.txt";
  // trec_eval -c -n -m map qrels.txt run.txt: nothing (no summary).
  CommandResult res = Eval({"-c", "-n", "-m", "map", q, r});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, "");
  // trec_eval -c -J -m P.5 -m num_ret qrels.txt run.txt
  res = Eval({"-c", "-J", "-m", "P.5", "-m", "num_ret", q, r});
  EXPECT_EQ(res.out,
            "num_ret               \tall\t1461\n"
            "P_5                   \tall\t0.5088\n");
  // trec_eval -c -N 100 -o -m utility.0,0,0,1 qrels.txt run.txt
  res = Eval({"-c", "-N", "100", "-o", "-m", "utility.0,0,0,1", q, r});
  EXPECT_EQ(res.out, "utility_0,0,0,1       \tall\t41.6228\n");
}

TEST(ConformanceTest, ReadsRunFromStdin) {
  const std::string dir = kDir + "/handmade/pytrec_basic";
  const CommandResult res =
      RunCommand({RankwatchBinary(), "eval", "-q", "-m", "P.4", "-m", "map",
                  dir + "/qrels.txt", "-"},
                 std::chrono::seconds(30), ReadFile(dir + "/run.txt"));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out, FilterRows(ReadFile(dir + "/te10.txt"), {"map", "P_"}));
}

}  // namespace
}  // namespace rankwatch
