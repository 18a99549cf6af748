// Paired comparison of several TREC runs on the same queries: the engine
// behind `rankwatch compare` (docs/compare.md defines every figure).
//
// CompareRuns() is the pure layer: given each run's per-query scores under
// each measure, it aligns the queries across runs, and for every run but the
// baseline and every measure computes the paired difference, the paired t
// test, Fisher's randomization test, a paired bootstrap interval and
// win/tie/loss counts (metrics/paired_tests.h), then adjusts the
// randomization and t-test p-values over the whole table by Holm and by
// Benjamini-Hochberg (metrics/multiple_testing.h); and it measures with
// Kendall's tau-b and Spearman's rho (metrics/rank_correlation.h) how alike
// two measures order the systems and how alike each run and the baseline
// score the queries. CompareFiles() evaluates the run files with `eval`'s
// engine (batch_eval.h), several at once, and calls CompareRuns().
// Write*() print a Comparison as an aligned text table, CSV, JSON or a
// LaTeX booktabs tabular.
//
// Pure functions over values (CompareFiles reads files); thread-safe. A
// Comparison owns all its data.
#ifndef RANKWATCH_TREC_COMPARE_H_
#define RANKWATCH_TREC_COMPARE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/paired_tests.h"
#include "metrics/rank_correlation.h"
#include "trec/batch_eval.h"
#include "trec/run_names.h"

namespace rankwatch::trec {

// Which adjusted p-value of the randomization test marks a difference as
// significant.
enum class Correction {
  kHolm,               // Family-wise error rate (Holm 1979).
  kBenjaminiHochberg,  // False discovery rate (Benjamini and Hochberg 1995).
  kNone,               // The raw randomization p-value.
};

// "holm", "bh", "none".
std::string_view CorrectionName(Correction correction);
std::optional<Correction> ParseCorrection(std::string_view name);

struct CompareOptions {
  Correction correction = Correction::kHolm;
  // Significance level of the mark: adjusted p < alpha.
  double alpha = 0.05;
  // Random sign assignments of the randomization test (exact enumeration
  // when 2^n is at most this) and bootstrap resamples.
  int64_t permutations = 10000;
  int64_t bootstrap = 10000;
  // Level of the bootstrap interval.
  double confidence = 0.95;
  // One seed for every (run, measure) pair: all pairs see the same sign
  // assignments and resamples, so a pair's figures do not depend on which
  // other runs are compared or on the threads' scheduling.
  uint64_t seed = 0x5eed;
  // Threads over the (run, measure) pairs; 0: one per hardware thread.
  int threads = 0;
  // Per pair, keep the `per_query` queries that gain most and the as many
  // that lose most (0: none), for "which queries moved".
  int64_t per_query = 0;
};

// One query's scores under a run and the baseline.
struct QueryDifference {
  std::string qid;
  double baseline = 0;
  double run = 0;
  double difference = 0;  // run - baseline.
};

// One run's evaluation: the pure layer's input.
struct RunScores {
  std::string name;
  // The evaluated queries, ascending in strcmp order, unique.
  std::vector<std::string> qids;
  // scores[m][q]: measure m on query qids[q]; NaN where the measure is
  // undefined for the query (a pair leaves such queries out, below).
  std::vector<std::vector<double>> scores;
};

// One non-baseline run under one measure, against the baseline, on the
// common queries where the measure is defined (not NaN) for both runs.
struct PairComparison {
  size_t run = 0;
  size_t measure = 0;
  metrics::PairedTTestResult t_test;
  metrics::RandomizationResult randomization;
  metrics::BootstrapResult bootstrap;
  metrics::WinTieLoss win_tie_loss;
  // The randomization test's and the t test's p-values adjusted over every
  // pair of the table (NaN p-values count as 1, metrics/multiple_testing.h).
  double randomization_holm = 0;
  double randomization_bh = 0;
  double t_holm = 0;
  double t_bh = 0;
  // The randomization p-value chosen by CompareOptions::correction is below
  // alpha.
  bool significant = false;
  // Agreement of this run's per-query scores with the baseline's; nullopt
  // where undefined (a constant score vector, fewer than two queries).
  std::optional<metrics::RankCorrelation> query_kendall;
  std::optional<metrics::RankCorrelation> query_spearman;
  // With CompareOptions::per_query: the queries where the run beats the
  // baseline most (largest difference first) and loses most (most negative
  // first); ties in query order; queries with no difference in neither.
  std::vector<QueryDifference> gains;
  std::vector<QueryDifference> losses;
};

// How alike two measures order the runs: the correlation of the runs' mean
// scores under `first` and under `second`. nullopt below three runs (two
// points always correlate perfectly) and where undefined (a measure that
// gives every run the same mean).
struct MeasureAgreement {
  size_t first = 0;
  size_t second = 0;
  std::optional<metrics::RankCorrelation> kendall;
  std::optional<metrics::RankCorrelation> spearman;
};

struct Comparison {
  CompareOptions options;
  std::vector<std::string> runs;
  std::vector<std::string> measures;
  size_t baseline = 0;
  // The queries compared: those evaluated in every run, strcmp order.
  std::vector<std::string> qids;
  // Per run: its evaluated queries left out because some other run lacks
  // them.
  std::vector<int64_t> excluded;
  // means[r][m]: run r's mean of measure m over `qids` (where defined).
  std::vector<std::vector<double>> means;
  // Every non-baseline run (in run order) x every measure (in measure
  // order).
  std::vector<PairComparison> pairs;
  // Every pair of measures first < second, in lexicographic order.
  std::vector<MeasureAgreement> agreements;

  // The pair of `run` (not the baseline) and `measure`.
  const PairComparison& Pair(size_t run, size_t measure) const;
};

// The mean of the values that are not NaN (NaN if none): a run's mean of a
// measure over its queries, as trec_eval's "all" row.
double MeanOfDefined(std::span<const double> values);

// Errors (InvalidArgument): fewer than two runs, a baseline out of range,
// no measure, a score table whose shape does not match `measures` and
// `qids`, options out of range, or no query evaluated in every run.
StatusOr<Comparison> CompareRuns(std::span<const std::string> measures,
                                 std::span<const RunScores> runs,
                                 size_t baseline,
                                 const CompareOptions& options);

// Whether `column` is compared: a per-query numeric value whose summary is
// a mean or a sum (not num_q, runid, relstring, nor gm_map and gm_bpref,
// whose per-query values are logarithms).
bool IsComparedColumn(const ReportColumn& column);

// Every run file evaluated against the qrels by EvaluateFiles (batch_eval.h),
// as CompareRuns takes them.
struct EvaluatedRuns {
  // The compared columns of the reports: those with a per-query numeric
  // value whose summary is a mean or a sum (not num_q, runid, relstring,
  // nor gm_map and gm_bpref, whose per-query values are logarithms).
  std::vector<std::string> measures;
  // Named as RunNames() names them.
  std::vector<RunScores> runs;
};

// Evaluates `run_paths` with `options`, up to `parallel_runs` files at once
// (each EvaluateFiles on options.threads threads). An error names the run
// file; the first failing file in argument order is the one reported.
StatusOr<EvaluatedRuns> EvaluateRunFiles(const std::string& qrels_path,
                                         std::span<const std::string> run_paths,
                                         const EvalOptions& options,
                                         int parallel_runs);

// The main table (runs x measures: the mean, and for other runs the
// difference and a `*` when significant), a legend, the detail table and
// the correlation tables, aligned in columns.
void WriteCompareText(const Comparison& comparison, std::string* out);
// One header line, then one row per (run, measure), the baseline's rows
// included with the comparison fields empty; %.17g numbers.
void WriteCompareCsv(const Comparison& comparison, std::string* out);
// One JSON object with every figure at full precision (the shortest form
// that reads back as the same double), NaN as null; one line, a space
// after each ':' and ',' (JsonWriter, JsonSpacing::kSpaced).
void WriteCompareJson(const Comparison& comparison, std::string* out);
// A booktabs tabular of the main table, significance as a superscript.
void WriteCompareLatex(const Comparison& comparison, std::string* out);

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_COMPARE_H_
