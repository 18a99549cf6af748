// `rankwatch compare` as a process of the real binary on a small generated
// case: three runs (two of them with run id bm25) over six queries, the
// third without q6. The expected figures were computed independently by
// /tmp/venv-stats/bin/python (SciPy 1.10.1, statsmodels 0.15.0): AP and
// P@5 per query from the qrels and run lines below with exact rationals
// (fractions.Fraction; AP = sum of precision at each relevant rank / R),
// then scipy.stats.ttest_rel(run, baseline), the exact randomization p (all
// 2^n sign vectors enumerated over the rational differences, counting
// |sum(s d)| >= |sum(d)|), multipletests(p, method='holm' | 'fdr_bh')[1]
// over the four pairs (rm3 map, rm3 P_5, other.txt map, other.txt P_5), and
// scipy.stats.kendalltau / spearmanr.
#include <simdjson.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

using testing::CommandResult;
using testing::RunCommand;

const char kQrels[] =
    "q1 0 d2 1\n"
    "q1 0 d5 0\n"
    "q1 0 d6 0\n"
    "q1 0 d7 1\n"
    "q1 0 d8 0\n"
    "q1 0 d9 0\n"
    "q2 0 d1 0\n"
    "q2 0 d2 0\n"
    "q2 0 d4 1\n"
    "q2 0 d5 0\n"
    "q2 0 d8 1\n"
    "q2 0 d9 0\n"
    "q3 0 d2 0\n"
    "q3 0 d3 0\n"
    "q3 0 d6 1\n"
    "q3 0 d7 0\n"
    "q3 0 d8 0\n"
    "q3 0 d9 0\n"
    "q4 0 d2 0\n"
    "q4 0 d3 1\n"
    "q4 0 d4 1\n"
    "q4 0 d5 0\n"
    "q4 0 d6 0\n"
    "q4 0 d7 0\n"
    "q5 0 d3 0\n"
    "q5 0 d4 0\n"
    "q5 0 d5 1\n"
    "q5 0 d6 0\n"
    "q5 0 d7 1\n"
    "q5 0 d8 1\n"
    "q6 0 d1 0\n"
    "q6 0 d2 0\n"
    "q6 0 d3 1\n"
    "q6 0 d4 0\n"
    "q6 0 d6 0\n"
    "q6 0 d9 0\n";

const char kRunBm25[] =
    "q1 Q0 d4 1 10 bm25\n"
    "q1 Q0 d3 2 9 bm25\n"
    "q1 Q0 d9 3 8 bm25\n"
    "q1 Q0 d6 4 7 bm25\n"
    "q1 Q0 d7 5 6 bm25\n"
    "q2 Q0 d5 1 10 bm25\n"
    "q2 Q0 d3 2 9 bm25\n"
    "q2 Q0 d6 3 8 bm25\n"
    "q2 Q0 d4 4 7 bm25\n"
    "q2 Q0 d8 5 6 bm25\n"
    "q3 Q0 d6 1 10 bm25\n"
    "q3 Q0 d4 2 9 bm25\n"
    "q3 Q0 d9 3 8 bm25\n"
    "q3 Q0 d7 4 7 bm25\n"
    "q3 Q0 d3 5 6 bm25\n"
    "q4 Q0 d9 1 10 bm25\n"
    "q4 Q0 d3 2 9 bm25\n"
    "q4 Q0 d6 3 8 bm25\n"
    "q4 Q0 d5 4 7 bm25\n"
    "q4 Q0 d2 5 6 bm25\n"
    "q5 Q0 d8 1 10 bm25\n"
    "q5 Q0 d4 2 9 bm25\n"
    "q5 Q0 d7 3 8 bm25\n"
    "q5 Q0 d5 4 7 bm25\n"
    "q5 Q0 d1 5 6 bm25\n"
    "q6 Q0 d1 1 10 bm25\n"
    "q6 Q0 d6 2 9 bm25\n"
    "q6 Q0 d5 3 8 bm25\n"
    "q6 Q0 d8 4 7 bm25\n"
    "q6 Q0 d7 5 6 bm25\n";

const char kRunRm3[] =
    "q1 Q0 d6 1 10 rm3\n"
    "q1 Q0 d3 2 9 rm3\n"
    "q1 Q0 d8 3 8 rm3\n"
    "q1 Q0 d2 4 7 rm3\n"
    "q1 Q0 d9 5 6 rm3\n"
    "q2 Q0 d9 1 10 rm3\n"
    "q2 Q0 d2 2 9 rm3\n"
    "q2 Q0 d8 3 8 rm3\n"
    "q2 Q0 d7 4 7 rm3\n"
    "q2 Q0 d1 5 6 rm3\n"
    "q3 Q0 d7 1 10 rm3\n"
    "q3 Q0 d1 2 9 rm3\n"
    "q3 Q0 d4 3 8 rm3\n"
    "q3 Q0 d3 4 7 rm3\n"
    "q3 Q0 d8 5 6 rm3\n"
    "q4 Q0 d9 1 10 rm3\n"
    "q4 Q0 d1 2 9 rm3\n"
    "q4 Q0 d2 3 8 rm3\n"
    "q4 Q0 d3 4 7 rm3\n"
    "q4 Q0 d8 5 6 rm3\n"
    "q5 Q0 d7 1 10 rm3\n"
    "q5 Q0 d5 2 9 rm3\n"
    "q5 Q0 d3 3 8 rm3\n"
    "q5 Q0 d8 4 7 rm3\n"
    "q5 Q0 d6 5 6 rm3\n"
    "q6 Q0 d2 1 10 rm3\n"
    "q6 Q0 d8 2 9 rm3\n"
    "q6 Q0 d5 3 8 rm3\n"
    "q6 Q0 d3 4 7 rm3\n"
    "q6 Q0 d1 5 6 rm3\n";

const char kRunBm25b[] =
    "q1 Q0 d1 1 10 bm25\n"
    "q1 Q0 d6 2 9 bm25\n"
    "q1 Q0 d3 3 8 bm25\n"
    "q1 Q0 d2 4 7 bm25\n"
    "q1 Q0 d4 5 6 bm25\n"
    "q2 Q0 d9 1 10 bm25\n"
    "q2 Q0 d8 2 9 bm25\n"
    "q2 Q0 d2 3 8 bm25\n"
    "q2 Q0 d6 4 7 bm25\n"
    "q2 Q0 d7 5 6 bm25\n"
    "q3 Q0 d5 1 10 bm25\n"
    "q3 Q0 d1 2 9 bm25\n"
    "q3 Q0 d4 3 8 bm25\n"
    "q3 Q0 d9 4 7 bm25\n"
    "q3 Q0 d2 5 6 bm25\n"
    "q4 Q0 d3 1 10 bm25\n"
    "q4 Q0 d5 2 9 bm25\n"
    "q4 Q0 d4 3 8 bm25\n"
    "q4 Q0 d6 4 7 bm25\n"
    "q4 Q0 d2 5 6 bm25\n"
    "q5 Q0 d5 1 10 bm25\n"
    "q5 Q0 d7 2 9 bm25\n"
    "q5 Q0 d9 3 8 bm25\n"
    "q5 Q0 d2 4 7 bm25\n"
    "q5 Q0 d3 5 6 bm25\n";

class CompareCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    qrels_ = dir_.Write("qrels.txt", kQrels);
    runs_ = {dir_.Write("bm25.txt", kRunBm25), dir_.Write("rm3.txt", kRunRm3),
             dir_.Write("other.txt", kRunBm25b)};
  }

  CommandResult Compare(std::vector<std::string> args) const {
    args.insert(args.begin(), {RankwatchBinary(), "compare"});
    return RunCommand(args, std::chrono::seconds(120));
  }

  CommandResult CompareAll(std::vector<std::string> flags) const {
    flags.push_back(qrels_);
    flags.insert(flags.end(), runs_.begin(), runs_.end());
    return Compare(flags);
  }

  testing::TempDir dir_;
  std::string qrels_;
  std::vector<std::string> runs_;
};

// CSV cells of the row starting with `prefix` ("run,measure,").
std::vector<std::string> Row(const std::string& csv,
                             const std::string& prefix) {
  const size_t at = csv.find("\n" + prefix);
  if (at == std::string::npos) return {};
  const size_t end = csv.find('\n', at + 1);
  const std::string line = csv.substr(at + 1, end - at - 1);
  std::vector<std::string> cells;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string::npos;
       start = comma + 1) {
    cells.push_back(line.substr(start, comma - start));
  }
  cells.push_back(line.substr(start));
  return cells;
}

double Num(const std::string& cell) { return std::stod(cell); }

// Without -c: the five queries every run has (q1..q5).
TEST_F(CompareCommandTest, CsvMatchesIndependentFigures) {
  const CommandResult r =
      CompareAll({"-m", "map", "-m", "P.5", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "run,measure,baseline,queries,mean,baseline_mean,difference,"
            "t_statistic,t_p,randomization_p,permutations,exact,"
            "bootstrap_lower,bootstrap_upper,resamples,confidence,wins,ties,"
            "losses,randomization_p_holm,randomization_p_bh,t_p_holm,t_p_bh,"
            "significant,kendall_tau_b,kendall_p,spearman_rho,spearman_p");
  const std::vector<std::string> base = Row(r.out, "bm25.txt,map,");
  ASSERT_EQ(base.size(), 28u) << r.out;
  EXPECT_EQ(base[3], "5");
  EXPECT_NEAR(Num(base[4]), 0.4961111111111111, 1e-15);
  EXPECT_EQ(base[6], "");

  const std::vector<std::string> rm3 = Row(r.out, "rm3,map,");
  ASSERT_EQ(rm3.size(), 28u) << r.out;
  EXPECT_EQ(rm3[2], "bm25.txt");
  EXPECT_NEAR(Num(rm3[4]), 0.26666666666666666, 1e-15);
  EXPECT_NEAR(Num(rm3[6]), -0.22944444444444445, 1e-15);
  EXPECT_NEAR(Num(rm3[7]), -1.154137936640899, 1e-12);
  EXPECT_NEAR(Num(rm3[8]), 0.3127056116592043, 1e-12);
  EXPECT_EQ(Num(rm3[9]), 0.3125);  // Exact: 20 / 2^5.
  EXPECT_EQ(rm3[10], "32");
  EXPECT_EQ(rm3[11], "true");
  EXPECT_LT(Num(rm3[12]), -0.22944444444444445);
  EXPECT_GT(Num(rm3[13]), -0.22944444444444445);
  EXPECT_EQ(rm3[14], "10000");
  EXPECT_EQ(rm3[16] + "/" + rm3[17] + "/" + rm3[18], "2/0/3");
  EXPECT_NEAR(Num(rm3[19]), 1.0, 1e-15);    // Holm.
  EXPECT_NEAR(Num(rm3[20]), 0.625, 1e-15);  // BH.
  EXPECT_NEAR(Num(rm3[21]), 0.9381168349776129, 1e-12);
  EXPECT_NEAR(Num(rm3[22]), 0.49853462173341195, 1e-12);
  EXPECT_EQ(rm3[23], "false");
  EXPECT_NEAR(Num(rm3[24]), 0.10540925533894596, 1e-12);
  EXPECT_NEAR(Num(rm3[25]), 0.8005421074231263, 1e-12);
  EXPECT_NEAR(Num(rm3[26]), -0.05129891760425771, 1e-12);
  EXPECT_NEAR(Num(rm3[27]), 0.934712848108234, 1e-12);

  const std::vector<std::string> other = Row(r.out, "other.txt,P_5,");
  ASSERT_EQ(other.size(), 28u) << r.out;
  EXPECT_NEAR(Num(other[4]), 0.24, 1e-15);
  EXPECT_NEAR(Num(other[6]), -0.08, 1e-15);
  EXPECT_NEAR(Num(other[8]), 0.373900966300059, 1e-12);
  EXPECT_EQ(Num(other[9]), 0.625);
  EXPECT_EQ(other[16] + "/" + other[17] + "/" + other[18], "1/1/3");
  EXPECT_NEAR(Num(other[24]), 0.40089186286863654, 1e-12);
  EXPECT_NEAR(Num(other[26]), 0.4124789556921527, 1e-12);
}

// With -c: all six qrels queries, other.txt scoring 0 on q6.
TEST_F(CompareCommandTest, CompleteJsonMatchesIndependentFigures) {
  const CommandResult r =
      CompareAll({"-c", "-m", "map", "-m", "P.5", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(r.out).get(root), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(root["queries"].get_int64().value(), 6);
  EXPECT_EQ(std::string(root["baseline"].get_string().value()), "bm25.txt");
  simdjson::dom::array comparisons = root["comparisons"].get_array();
  ASSERT_EQ(comparisons.size(), 4u);
  const double t_p[] = {0.446143155491723, 0.6108811833962556,
                        0.648867641169221, 0.36321746764912255};
  const double rand_p[] = {0.59375, 1.0, 0.625, 0.625};
  const double rand_bh[] = {0.8333333333333334, 1.0, 0.8333333333333334,
                            0.8333333333333334};
  const double diff[] = {-0.14953703703703702, -0.03333333333333333,
                         -0.10092592592592592, -0.06666666666666667};
  const double kendall[] = {-0.13801311186847084, 0.4811252243246882,
                            0.13801311186847084, 0.5833333333333334};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    simdjson::dom::element c = comparisons.at(i);
    EXPECT_NEAR(c["difference"].get_double().value(), diff[i], 1e-15);
    EXPECT_NEAR(c["t_p"].get_double().value(), t_p[i], 1e-12);
    EXPECT_EQ(c["randomization_p"].get_double().value(), rand_p[i]);
    EXPECT_NEAR(c["randomization_p_holm"].get_double().value(), 1.0, 1e-15);
    EXPECT_NEAR(c["randomization_p_bh"].get_double().value(), rand_bh[i],
                1e-15);
    EXPECT_NEAR(c["t_p_bh"].get_double().value(), 0.648867641169221, 1e-12);
    EXPECT_NEAR(c["kendall_tau_b"]["coefficient"].get_double().value(),
                kendall[i], 1e-12);
  }
  EXPECT_EQ(std::string(comparisons.at(2)["run"].get_string().value()),
            "other.txt");
  EXPECT_EQ(comparisons.at(2)["wins"].get_int64().value(), 2);
  EXPECT_EQ(comparisons.at(2)["ties"].get_int64().value(), 1);
  EXPECT_EQ(comparisons.at(2)["losses"].get_int64().value(), 3);
  // Run means: map (0.4134259259259259, 0.2638888888888889, 0.3125), P_5
  // (0.26666666666666666, 0.23333333333333334, 0.2):
  // kendalltau = (0.33333333333333337, p 1.0), spearmanr's rho 0.5. The
  // p-values are exact permutation ones (3 runs, issue 43): the six
  // orderings of three have rho 1, 0.5, 0.5, -0.5, -0.5, -1, all as far
  // from 0 as 0.5, so p = 1 (spearmanr's t approximation: 0.667); tau
  // 1/3 likewise (+-1/3 or +-1 for every ordering): p = 1.
  simdjson::dom::element agreement = root["measure_agreement"].at(0);
  EXPECT_NEAR(agreement["kendall_tau_b"]["coefficient"].get_double().value(),
              1.0 / 3, 1e-12);
  EXPECT_NEAR(agreement["kendall_tau_b"]["p_value"].get_double().value(), 1.0,
              1e-12);
  EXPECT_NEAR(agreement["spearman_rho"]["coefficient"].get_double().value(),
              0.5, 1e-12);
  EXPECT_NEAR(agreement["spearman_rho"]["p_value"].get_double().value(), 1.0,
              1e-12);
}

TEST_F(CompareCommandTest, BaselineByNameAndTwoRunsLeaveOrderingsUndefined) {
  const CommandResult r =
      Compare({"-m", "map", "-m", "P.5", "--format", "json", "--baseline",
               "rm3", qrels_, runs_[0], runs_[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(r.out).get(root), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(std::string(root["baseline"].get_string().value()), "rm3");
  // Two runs with distinct names: no suffix.
  simdjson::dom::element c = root["comparisons"].at(0);
  EXPECT_EQ(std::string(c["run"].get_string().value()), "bm25");
  // Both runs have all six queries: the -c figure, sign flipped.
  EXPECT_EQ(root["queries"].get_int64().value(), 6);
  EXPECT_NEAR(c["difference"].get_double().value(), 0.14953703703703702, 1e-15);
  EXPECT_TRUE(root["measure_agreement"].at(0)["kendall_tau_b"].is_null());
}

TEST_F(CompareCommandTest, TextAndLatexName) {
  CommandResult r = CompareAll({"-m", "map", "--baseline", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("baseline: rm3; 5 queries evaluated in every run"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rm3 (baseline)"), std::string::npos) << r.out;
  r = CompareAll({"-m", "P.5", "--format", "latex"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Run & P\\_5 \\\\\n\\midrule\nbm25.txt & 0.3200 \\\\\n"),
            std::string::npos)
      << r.out;
}

TEST_F(CompareCommandTest, ErrorsAreOneLine) {
  const auto one_line = [](const CommandResult& r) {
    return !r.err.empty() && r.err.find('\n') == r.err.size() - 1;
  };
  CommandResult r = Compare({qrels_, runs_[0]});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch compare: compare needs at least two run files (got "
            "1)\n");
  // The run names come from the files' run ids (two are bm25, told apart
  // by position): listed, as the user may never have seen them.
  r = CompareAll({"--baseline", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch compare: unknown --baseline 'nope': give a run file, a "
            "run name or a 0-based index (runs: 0 bm25.txt, 1 rm3, 2 "
            "other.txt)\n");
  r = CompareAll({"--correction", "bonferroni"});
  EXPECT_EQ(r.exit_code, 2);
  r = CompareAll({"--alpha", "1.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r)) << r.err;
  const std::string missing = dir_.path() + "/missing.txt";
  r = Compare({qrels_, runs_[0], missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(one_line(r)) << r.err;
  EXPECT_NE(r.err.find("missing.txt"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

// ir_measures' AP and P@5 and rankwatch's precision@5 are trec_eval's map
// and P.5: the same table, with trec_eval's names in it.
TEST_F(CompareCommandTest, MeasuresInEverySpelling) {
  const CommandResult trec =
      CompareAll({"-m", "map", "-m", "P.5", "--format", "csv"});
  ASSERT_EQ(trec.exit_code, 0) << trec.err;
  for (const auto& spelled :
       {std::vector<std::string>{"-m", "AP", "-m", "P@5"},
        std::vector<std::string>{"-m", "average_precision", "-m",
                                 "precision@5"},
        std::vector<std::string>{"-m", "map", "-m", "P_5"}}) {
    std::vector<std::string> flags = spelled;
    flags.insert(flags.end(), {"--format", "csv"});
    const CommandResult r = CompareAll(flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, trec.out) << spelled[1];
  }
  // The mean AP of rm3, worked in CsvMatchesIndependentFigures.
  const std::vector<std::string> rm3 = Row(trec.out, "rm3,map,");
  ASSERT_EQ(rm3.size(), 28u);
  EXPECT_NEAR(Num(rm3[4]), 0.26666666666666666, 1e-15);
  const CommandResult typo = CompareAll({"-m", "nDCG@1O"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err,
            "rankwatch compare: unknown measure 'nDCG@1O' (did you mean "
            "'nDCG@10'?)\n");
}

TEST_F(CompareCommandTest, HintsAtSwappedQrelsAndRun) {
  // The qrels given second, as a run: the first "qrels" has run lines.
  CommandResult r = Compare({runs_[0], qrels_, runs_[1]});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(runs_[0] +
                       ":1: expected 4 fields (qid iter docno grade), found "
                       "6 (are QRELS and RUN swapped? usage: rankwatch "
                       "compare QRELS RUN RUN...)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.rfind("rankwatch compare: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  // Only runs: no qrels anywhere, no hint.
  r = Compare({runs_[0], runs_[1], runs_[2]});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("swapped"), std::string::npos) << r.err;
}

// Comparing judges (issue 29): two qrels of the same two queries and three
// runs (trec/judge_compare_test.cc works the same figures by hand: 7 pairs
// both graded, kappa 4/11; P@2 under human A 0.75, B 0.25, C 0.5, under llm
// A 0.75, B 0.25, C 1; one swap, A and C; tau 1/3, tau_AP 0). Each judge's
// means are also those of `rankwatch eval` (the trec_eval drop-in) run
// separately with that qrels.
constexpr char kHumanQrels[] =
    "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 1\n"
    "q2 0 d1 1\nq2 0 d2 0\nq2 0 d3 2\nq2 0 d4 0\n";
constexpr char kLlmQrels[] =
    "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 0\nq1 0 d4 2\nq1 0 d5 1\n"
    "q2 0 d1 1\nq2 0 d2 1\nq2 0 d3 2\nq2 0 d5 -1\n";

TEST_F(CompareCommandTest, JudgesLabelAgreementAndRankings) {
  const std::string human = dir_.Write("human.txt", kHumanQrels);
  const std::string llm = dir_.Write("llm.txt", kLlmQrels);
  const std::vector<std::string> runs = {
      dir_.Write("A.txt",
                 "q1 Q0 d1 1 3 A\nq1 Q0 d4 2 2 A\n"
                 "q2 Q0 d3 1 3 A\nq2 Q0 d4 2 2 A\n"),
      dir_.Write("B.txt",
                 "q1 Q0 d2 1 3 B\nq1 Q0 d3 2 2 B\n"
                 "q2 Q0 d2 1 3 B\nq2 Q0 d4 2 2 B\n"),
      dir_.Write("C.txt",
                 "q1 Q0 d4 1 3 C\nq1 Q0 d5 2 2 C\n"
                 "q2 Q0 d1 1 3 C\nq2 Q0 d2 2 2 C\n")};
  CommandResult r = Compare({"--qrels", human, "--qrels", llm, "-m", "P.2",
                             "--format", "json", runs[0], runs[1], runs[2]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"agreement\": [{\"judges\": [\"human.txt\", "
                       "\"llm.txt\"], \"pairs\": 7, \"only_first\": 1, "
                       "\"only_second\": 1, \"kappa\": 0.363636363636363"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"kendall_tau\": 0.33333333333333"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"tau_ap\": 0, \"swaps\": [[\"A\", \"C\"]]"),
            std::string::npos)
      << r.out;
  // The means each judge gives, and `rankwatch eval` with its qrels alone.
  const std::pair<std::string, std::string> judges[] = {{human, "human.txt"},
                                                        {llm, "llm.txt"}};
  const double expected[2][3] = {{0.75, 0.25, 0.5}, {0.75, 0.25, 1}};
  for (int j = 0; j < 2; ++j) {
    for (int run = 0; run < 3; ++run) {
      const std::string name(1, static_cast<char>('A' + run));
      const CommandResult eval = RunCommand(
          {RankwatchBinary(), "eval", "-m", "P.2", judges[j].first, runs[run]},
          std::chrono::seconds(60));
      ASSERT_EQ(eval.exit_code, 0) << eval.err;
      // trec_eval's line: "P_2 (padded)<TAB>all<TAB>0.7500".
      const size_t at = eval.out.find("\tall\t");
      ASSERT_EQ(eval.out.rfind("P_2 ", 0), 0u) << eval.out;
      ASSERT_NE(at, std::string::npos) << eval.out;
      EXPECT_NEAR(std::stod(eval.out.substr(at + 5)), expected[j][run], 1e-12)
          << judges[j].second << " " << name;
    }
  }
  EXPECT_NE(r.out.find("\"human.txt\": {\"A\": {\"P_2\": 0.75}, \"B\": "
                       "{\"P_2\": 0.25}, \"C\": {\"P_2\": 0.5}}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"llm.txt\": {\"A\": {\"P_2\": 0.75}, \"B\": "
                       "{\"P_2\": 0.25}, \"C\": {\"P_2\": 1}}"),
            std::string::npos)
      << r.out;

  // Text: the swap in words. Labels only, without runs: no rankings.
  r = Compare({"--qrels", human, "--qrels", llm, "-m", "P.2", runs[0], runs[1],
               runs[2]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("P_2: human.txt ranks A (0.7500) above C (0.5000); "
                       "llm.txt the other way (0.7500 < 1.0000)"),
            std::string::npos)
      << r.out;
  r = Compare({"--qrels", human, "--qrels", llm});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No runs given"), std::string::npos) << r.out;

  // One --qrels is a usage error; so are formats that only runs have.
  r = Compare({"--qrels", human, runs[0], runs[1]});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch compare: --qrels compares judges: give it twice or more "
            "(one qrels file is the QRELS argument)\n");
  r = Compare({"--ppi", human, runs[0], runs[1]});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch compare: --ppi needs two judges: --qrels TRUSTED "
            "--qrels CHEAP\n");
  // Both judges evaluated the same two queries: no query for PPI to carry
  // the cheap labels to, so no estimate (null), but the row is there.
  r = Compare({"--qrels", human, "--qrels", llm, "--ppi", "-m", "P.2",
               "--format", "json", runs[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"means\": [{\"run\": \"A\", \"measure\": "
                       "\"P_2\", \"labelled\": 2, \"others\": 0, "
                       "\"estimate\": null}]"),
            std::string::npos)
      << r.out;
  r = Compare({"--qrels", human, "--qrels", llm, "--format", "csv", runs[0]});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rankwatch compare: comparing judges prints text or json, not "
            "csv\n");
}

// --per-query: runs A and C of the judges' test under the human qrels. P@2
// per query (threshold 1): A q1 1 (d1, d4 relevant), q2 1/2 (d3); C q1 1/2
// (d4), q2 1/2 (d1). C against A: q1 -0.5, q2 0: one loss, no gain.
TEST_F(CompareCommandTest, PerQueryNamesTheQueriesThatMoved) {
  const std::string human = dir_.Write("human.txt", kHumanQrels);
  const std::string a = dir_.Write("A.txt",
                                   "q1 Q0 d1 1 3 A\nq1 Q0 d4 2 2 A\n"
                                   "q2 Q0 d3 1 3 A\nq2 Q0 d4 2 2 A\n");
  const std::string c = dir_.Write("C.txt",
                                   "q1 Q0 d4 1 3 C\nq1 Q0 d5 2 2 C\n"
                                   "q2 Q0 d1 1 3 C\nq2 Q0 d2 2 2 C\n");
  const CommandResult r =
      Compare({"-m", "P.2", "--per-query", "3", "--permutations", "10",
               "--bootstrap", "10", "--format", "json", human, a, c});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"gains\": [], \"losses\": [{\"query\": \"q1\", "
                       "\"baseline\": 1, \"run\": 0.5, \"difference\": "
                       "-0.5}]"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Compare({"--per-query", "0", human, a, c}).exit_code, 2);
}

// Query ids with escape sequences (an OSC retitling the window, a bell, a
// colour) reach the terminal escaped in the per-query lines, never raw
// (issue 43); the same runs as above, q1 renamed.
TEST_F(CompareCommandTest, PerQueryLinesEscapeControlCharacters) {
  const std::string q1 = "q\x1b]0;PWNED\x07\x1b[31mRED";
  std::string qrels = kHumanQrels;
  for (size_t at = 0; (at = qrels.find("q1 ", at)) != std::string::npos;) {
    qrels.replace(at, 2, q1);
    at += q1.size();
  }
  const std::string human = dir_.Write("human.txt", qrels);
  const std::string a =
      dir_.Write("A.txt", q1 + " Q0 d1 1 3 A\n" + q1 +
                              " Q0 d4 2 2 A\n"
                              "q2 Q0 d3 1 3 A\nq2 Q0 d4 2 2 A\n");
  const std::string c =
      dir_.Write("C.txt", q1 + " Q0 d4 1 3 C\n" + q1 +
                              " Q0 d5 2 2 C\n"
                              "q2 Q0 d1 1 3 C\nq2 Q0 d2 2 2 C\n");
  const CommandResult r =
      Compare({"-m", "P.2", "--per-query", "3", "--permutations", "10",
               "--bootstrap", "10", human, a, c});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("q\\x1b]0;PWNED\\x07\\x1b[31mRED"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rankwatch::cli
