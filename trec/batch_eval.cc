#include "trec/batch_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "base/json_writer.h"
#include "base/strings.h"
#include "trec/mapped_eval.h"
#include "trec/parallel.h"
#include "trec/run_file.h"
#include "trec/streaming_eval.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

namespace {

int64_t NumRelevant(std::span<const metrics::Grade> grades,
                    metrics::Grade threshold) {
  return std::count_if(grades.begin(), grades.end(),
                       [&](metrics::Grade g) { return g >= threshold; });
}

void AppendTextRow(std::string* out, const std::string& name,
                   std::string_view qid) {
  out->append(name);
  if (name.size() < 22) out->append(22 - name.size(), ' ');
  out->push_back('\t');
  out->append(qid);
  out->push_back('\t');
}

// One row of trec_eval's text output, or nothing for a rankwatch measure
// undefined for the query.
void AppendValueRow(std::string* out, const ReportColumn& column,
                    std::string_view qid, double value) {
  if (std::isnan(value) && column.summary_kind == SummaryKind::kDefinedMean) {
    return;
  }
  AppendTextRow(out, column.name, qid);
  MeasureTable::AppendValue(column, value, out);
  out->push_back('\n');
}

// An integer column as an integer, a real one in the shortest form that
// reads back as the same double; null when not finite.
void WriteJsonNumber(double value, ValueFormat format, JsonWriter* w) {
  if (format == ValueFormat::kInteger && std::isfinite(value)) {
    w->Int(static_cast<int64_t>(value));
  } else {
    w->Double(value);
  }
}

}  // namespace

int ResolveThreads(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(
                           std::max(1u, std::thread::hardware_concurrency()));
}

StatusOr<ScorerConfig> MakeScorerConfig(const EvalOptions& options) {
  StatusOr<metrics::Evaluator> evaluator = metrics::Evaluator::Create(
      options.measures.EngineCutoffs(), options.definitions);
  if (!evaluator.ok()) return evaluator.status();
  for (const MeasureSelection::Item& item : options.measures.items()) {
    if (item.measure == TrecMeasure::kSpearman ||
        item.measure == TrecMeasure::kKendallTau) {
      evaluator->set_rank_correlations(true);
    }
  }
  if (options.max_docs_per_query < 1) {
    return Status::InvalidArgument("-M must be a positive number of docs");
  }
  return ScorerConfig{
      *evaluator,
      MeasureTable::Create(
          options.measures,
          {options.definitions.relevance_threshold,
           options.num_docs_in_collection, options.judged_only}),
      options.max_docs_per_query, options.judged_only};
}

StatusOr<EvalReport> EvaluateFiles(const std::string& qrels_path,
                                   const std::string& run_path,
                                   const EvalOptions& options) {
  EvalReport report;
  report.options_ = options;
  StatusOr<ScorerConfig> made = MakeScorerConfig(options);
  if (!made.ok()) return made.status();
  const ScorerConfig& config = *made;
  report.columns_ = config.table.columns();

  const int threads = ResolveThreads(options.threads);
  StatusOr<Qrels> qrels = Qrels::Load(qrels_path, threads);
  if (!qrels.ok()) return qrels.status();
  report.qrels_ = std::make_unique<Qrels>(std::move(qrels).value());
  const Qrels& q = *report.qrels_;
  for (const QueryQrels& qq : q.queries()) {
    report.complete_num_rel_ += qq.num_positive;
  }

  // A regular file is streamed; other input, and any input with an error,
  // takes the mapped path.
  bool streamed = false;
  if (std::unique_ptr<RunChunkReader> reader =
          RunChunkReader::Open(run_path, options.run_chunk_bytes)) {
    streamed = EvaluateStreaming(reader.get(), q, config, options.complete,
                                 threads, &report.queries_, &report.run_id_);
  }
  if (!streamed) {
    RW_RETURN_IF_ERROR(EvaluateMapped(qrels_path, run_path, q, config,
                                      options.complete, threads,
                                      &report.queries_, &report.run_id_));
  } else if (report.queries_.empty()) {
    return NoCommonQuery(qrels_path, run_path, options.complete);
  }

  ApplyZeroRelevant(q, options.definitions, &report.queries_);
  return report;
}

void ApplyZeroRelevant(const Qrels& qrels,
                       const metrics::Definitions& definitions,
                       std::vector<QueryResult>* queries) {
  if (definitions.zero_relevant != metrics::ZeroRelevantPolicy::kSkip) return;
  std::erase_if(*queries, [&](const QueryResult& r) {
    const QueryQrels* qq = qrels.FindQuery(r.qid);
    return qq == nullptr ||
           NumRelevant(qrels.grades(*qq), definitions.relevance_threshold) == 0;
  });
}

double Summarize(SummaryKind kind, std::span<const double> values) {
  const auto num_q = static_cast<double>(values.size());
  double sum = 0.0;
  int64_t defined = 0;
  for (const double v : values) {
    if (std::isnan(v) && kind == SummaryKind::kDefinedMean) continue;
    sum += v;
    ++defined;
  }
  switch (kind) {
    case SummaryKind::kMean:
      return values.empty() ? sum : sum / num_q;
    case SummaryKind::kSum:
      return sum;
    case SummaryKind::kGeometricMean:
      return values.empty() ? sum : std::exp(sum / num_q);
    case SummaryKind::kNumQ:
      return num_q;
    case SummaryKind::kDefinedMean:
      return defined == 0 ? std::numeric_limits<double>::quiet_NaN()
                          : sum / static_cast<double>(defined);
    case SummaryKind::kRunid:
    case SummaryKind::kNone:
      return 0.0;
  }
  return 0.0;
}

std::vector<double> SummaryValues(std::span<const ReportColumn> columns,
                                  std::span<const QueryResult> queries,
                                  std::optional<int64_t> complete_num_rel) {
  std::vector<double> all(columns.size(), 0.0);
  std::vector<double> column(queries.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    for (size_t i = 0; i < queries.size(); ++i) {
      column[i] = queries[i].values[c];
    }
    all[c] = Summarize(columns[c].summary_kind, column);
    if (complete_num_rel && columns[c].summary_kind == SummaryKind::kSum &&
        columns[c].name == "num_rel") {
      all[c] = static_cast<double>(*complete_num_rel);
    }
  }
  return all;
}

std::vector<double> SummaryValues(const EvalReport& report) {
  return SummaryValues(report.columns(), report.queries(),
                       report.options().complete
                           ? std::optional<int64_t>(report.complete_num_rel())
                           : std::nullopt);
}

namespace {

// Appends the -q rows of `queries`.
void AppendQueryRows(std::span<const ReportColumn> columns,
                     std::span<const QueryResult> queries, std::string* out) {
  for (const QueryResult& q : queries) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!columns[c].per_query) continue;
      if (columns[c].format == ValueFormat::kText) {
        AppendTextRow(out, columns[c].name, q.qid);
        out->push_back('\'');
        out->append(q.text);
        out->append("'\n");
        continue;
      }
      AppendValueRow(out, columns[c], q.qid, q.values[c]);
    }
  }
}

// AppendQueryRows on `threads` threads, each formatting a run of queries:
// the first straight into `out`, reserved for all the rows, the others into
// strings of their own, appended in order. A row cost about 2,000
// instructions with snprintf (callgrind): the 90,009 rows of 10,000 queries
// were a serial 0.18 G instructions at the end of an evaluation.
void AppendQueryRowsParallel(std::span<const ReportColumn> columns,
                             std::span<const QueryResult> queries, int threads,
                             std::string* out) {
  // Fewer queries are not worth a thread.
  constexpr size_t kMinQueriesPerTask = 128;
  const size_t tasks =
      std::min(ParallelWorkers(queries.size(), threads),
               std::max<size_t>(1, queries.size() / kMinQueriesPerTask));
  // A row is its 22-byte name, the qid, a value of about 6 bytes and 3
  // separators: reserving for all of them spares the copies of a growing
  // string (and the page faults of each new copy).
  constexpr size_t kRowBytesBesidesQid = 32;
  const size_t per_query =
      std::count_if(columns.begin(), columns.end(),
                    [](const ReportColumn& c) { return c.per_query; });
  size_t bytes = out->size();
  for (const QueryResult& q : queries) {
    bytes += per_query * (kRowBytesBesidesQid + q.qid.size());
  }
  out->reserve(bytes);
  std::vector<std::string> parts(tasks);
  (void)RunParallel(tasks, threads, [&](size_t task, size_t) {
    const auto [begin, end] = TaskRange(queries.size(), tasks, task);
    AppendQueryRows(columns, queries.subspan(begin, end - begin),
                    task == 0 ? out : &parts[task]);
    return true;
  });
  for (size_t task = 1; task < tasks; ++task) out->append(parts[task]);
}

}  // namespace

void WriteTrecText(const EvalReport& report, std::string* out, int threads) {
  const std::vector<ReportColumn>& columns = report.columns();
  if (report.options().per_query) {
    AppendQueryRowsParallel(
        columns, report.queries(),
        ResolveThreads(threads > 0 ? threads : report.options().threads), out);
  }
  if (!report.options().summary) return;
  const std::vector<double> all = SummaryValues(report);
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c].summary) continue;
    if (columns[c].summary_kind == SummaryKind::kRunid) {
      AppendTextRow(out, columns[c].name, "all");
      out->append(report.run_id());
      out->push_back('\n');
      continue;
    }
    AppendValueRow(out, columns[c], "all", all[c]);
  }
}

namespace {

// The values of one query (`text` its text column) or, with `text` null,
// of the summary: {column: value, ...}.
void WriteJsonRow(const EvalReport& report, std::span<const double> values,
                  const std::string* text, JsonWriter* w) {
  const std::vector<ReportColumn>& columns = report.columns();
  w->BeginObject();
  for (size_t c = 0; c < columns.size(); ++c) {
    const bool summary = text == nullptr;
    if (summary ? !columns[c].summary : !columns[c].per_query) continue;
    w->Key(columns[c].name);
    if (columns[c].summary_kind == SummaryKind::kRunid) {
      w->String(report.run_id());
    } else if (columns[c].format == ValueFormat::kText) {
      w->String(*text);
    } else {
      WriteJsonNumber(values[c], columns[c].format, w);
    }
  }
  w->EndObject();
}

void WriteJsonDefinitions(const EvalOptions& o, JsonWriter* w) {
  const metrics::Definitions& d = o.definitions;
  w->Key("definitions");
  w->BeginObject();
  w->Key("relevance_threshold");
  w->Int(d.relevance_threshold);
  w->Key("gain");
  w->String(metrics::GainName(d.gain));
  w->Key("recall_denominator");
  w->String(metrics::RecallDenominatorName(d.recall_denominator));
  w->Key("ap_denominator");
  w->String(metrics::ApDenominatorName(d.ap_denominator));
  w->Key("zero_relevant");
  w->String(metrics::ZeroRelevantPolicyName(d.zero_relevant));
  w->Key("complete");
  w->Bool(o.complete);
  w->Key("judged_only");
  w->Bool(o.judged_only);
  w->EndObject();
}

}  // namespace

void WriteJson(const EvalReport& report, std::string* out) {
  JsonWriter w;
  w.BeginObject();
  WriteJsonDefinitions(report.options(), &w);
  if (report.options().per_query) {
    w.Key("queries");
    w.BeginObject();
    for (const QueryResult& q : report.queries()) {
      w.Key(q.qid);
      WriteJsonRow(report, q.values, &q.text, &w);
    }
    w.EndObject();
  }
  if (report.options().summary) {
    w.Key("all");
    WriteJsonRow(report, SummaryValues(report), nullptr, &w);
  }
  w.EndObject();
  out->append(w.Take());
  out->push_back('\n');
}

}  // namespace rankwatch::trec
