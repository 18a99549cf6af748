// The module rankwatch._rankwatch: the engine's entry points for the
// package python/rankwatch, which gives them pytrec_eval's and
// ir_measures' shapes. Qrels are parsed once and shared by every
// evaluation (immutable); options are parsed once per evaluator; every
// evaluation releases the GIL while it scores (EvaluateMemory,
// EvaluateFiles, CompareRuns), so other Python threads run meanwhile.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/measures.h"
#include "python/convert.h"
#include "trec/batch_eval.h"
#include "trec/compare.h"
#include "trec/measure_selection.h"
#include "trec/memory_eval.h"
#include "trec/qrels.h"

namespace rankwatch::python {

namespace {

// The parsed options of an evaluation: what `rankwatch eval` reads from its
// flags, and the scorer configuration made from them.
struct Options {
  trec::EvalOptions eval;
  std::shared_ptr<const trec::ScorerConfig> config;
  // The columns' names as pytrec_eval keys them (PytrecNames).
  std::vector<std::string> pytrec_names;
};

// pytrec_eval's key of each column: its printed name for the families with
// a row per cutoff (P_5), else the family's name (set_F for set_F.0.5).
std::vector<std::string> PytrecNames(const trec::MeasureSelection& selection) {
  const std::vector<std::string_view> families = trec::MeasureFamilyNames();
  std::vector<std::string> names;
  for (const trec::MeasureSelection::Item& item : selection.items()) {
    std::vector<trec::ReportColumn> columns;
    trec::AppendColumns(item, &columns);
    for (const trec::ReportColumn& c : columns) {
      names.push_back(
          trec::HasCutoffRows(item.measure)
              ? c.name
              : std::string(families[static_cast<size_t>(item.measure)]));
    }
  }
  return names;
}

template <typename T>
T ParseNamed(std::optional<T> parsed, const char* key, const std::string& value,
             const char* expected) {
  if (!parsed) {
    Raise(Status::InvalidArgument(std::string(key) + " '" + value +
                                  "': expected " + expected));
  }
  return *parsed;
}

Options MakeOptions(const std::vector<std::string>& measures,
                    int relevance_level, bool judged_only, bool complete,
                    const std::string& gain,
                    const std::string& recall_denominator,
                    const std::string& ap_denominator,
                    const std::string& zero_relevant, int64_t max_docs,
                    int64_t num_docs_in_collection, int threads) {
  Options o;
  // No measure is no column (pytrec_eval's empty set), not eval's default.
  if (!measures.empty()) {
    StatusOr<trec::MeasureSelection> selection =
        trec::MeasureSelection::Parse(measures, trec::SpecJoin::kJoinCutoffs);
    if (!selection.ok()) Raise(selection.status());
    o.eval.measures = *selection;
  }
  o.pytrec_names = PytrecNames(o.eval.measures);
  o.eval.per_query = true;
  o.eval.judged_only = judged_only;
  o.eval.complete = complete;
  o.eval.num_docs_in_collection = num_docs_in_collection;
  if (max_docs > 0) o.eval.max_docs_per_query = max_docs;
  o.eval.threads = threads;
  if (relevance_level < 0) {
    Raise(Status::InvalidArgument("relevance_level " +
                                  std::to_string(relevance_level) +
                                  ": must be 0 or more"));
  }
  metrics::Definitions& d = o.eval.definitions;
  d.relevance_threshold = relevance_level;
  d.gain = ParseNamed(metrics::ParseGain(gain), "gain", gain,
                      "linear or exponential");
  d.recall_denominator = ParseNamed(
      metrics::ParseRecallDenominator(recall_denominator), "recall_denominator",
      recall_denominator, "relevant or min_k_relevant");
  d.ap_denominator = ParseNamed(
      metrics::ParseApDenominator(ap_denominator), "ap_denominator",
      ap_denominator, "relevant, min_k_relevant or retrieved_relevant");
  d.zero_relevant =
      ParseNamed(metrics::ParseZeroRelevantPolicy(zero_relevant),
                 "zero_relevant", zero_relevant, "score_zero or skip");
  StatusOr<trec::ScorerConfig> config = trec::MakeScorerConfig(o.eval);
  if (!config.ok()) Raise(config.status());
  o.config =
      std::make_shared<const trec::ScorerConfig>(std::move(config).value());
  return o;
}

std::vector<std::string> ColumnNames(const Options& o) {
  std::vector<std::string> names;
  for (const trec::ReportColumn& c : o.config->table.columns()) {
    names.push_back(c.name);
  }
  return names;
}

// Qrels as the module holds them: parsed once, shared by every evaluation
// and what its results point into; `escaped` when built from Python
// objects, whose ids are %XX-escaped (convert.h).
struct LoadedQrels {
  std::shared_ptr<trec::Qrels> qrels;
  bool escaped = false;
};

LoadedQrels ParseQrels(std::string text, std::string name, bool escaped) {
  StatusOr<trec::Qrels> q = [&] {
    nb::gil_scoped_release release;
    return trec::Qrels::Parse(std::move(text), std::move(name));
  }();
  if (!q.ok()) Raise(q.status());
  return {std::make_shared<trec::Qrels>(std::move(q).value()), escaped};
}

LoadedQrels LoadQrels(const std::string& path) {
  StatusOr<trec::Qrels> q = [&] {
    nb::gil_scoped_release release;
    return trec::Qrels::Load(path);
  }();
  if (!q.ok()) Raise(q.status());
  return {std::make_shared<trec::Qrels>(std::move(q).value()), false};
}

int64_t PositiveJudgments(const trec::Qrels& qrels) {
  int64_t n = 0;
  for (const trec::QueryQrels& q : qrels.queries()) n += q.num_positive;
  return n;
}

// Scores `run` (filled with the GIL held) with the GIL released.
Evaluation EvaluateRun(const LoadedQrels& loaded, const Options& o,
                       const trec::MemoryRun& run) {
  const std::shared_ptr<trec::Qrels>& qrels = loaded.qrels;
  Evaluation e;
  e.owner = qrels;
  e.escaped_ids = loaded.escaped;
  e.columns = o.config->table.columns();
  e.pytrec_names = o.pytrec_names;
  Status status;
  {
    nb::gil_scoped_release release;
    status = trec::EvaluateMemory(*qrels, run, *o.config, o.eval.complete,
                                  o.eval.threads, &e.queries);
    if (status.ok()) {
      trec::ApplyZeroRelevant(*qrels, o.eval.definitions, &e.queries);
      e.summary = trec::SummaryValues(
          e.columns, e.queries,
          o.eval.complete ? std::optional<int64_t>(PositiveJudgments(*qrels))
                          : std::nullopt);
    }
  }
  if (!status.ok()) Raise(status);
  return e;
}

Evaluation EvaluateDict(const LoadedQrels& qrels, const Options& o,
                        nb::handle run) {
  trec::MemoryRun memory;
  RunFromDict(run, qrels.escaped, &memory);
  return EvaluateRun(qrels, o, memory);
}

Evaluation EvaluateColumns(const LoadedQrels& qrels, const Options& o,
                           nb::handle qids, nb::handle docnos,
                           nb::handle scores) {
  trec::MemoryRun memory;
  RunFromColumns(qids, docnos, scores, qrels.escaped, &memory);
  return EvaluateRun(qrels, o, memory);
}

Evaluation EvaluateFiles(const std::string& qrels_path,
                         const std::string& run_path, const Options& o) {
  StatusOr<trec::EvalReport> report = [&] {
    nb::gil_scoped_release release;
    return trec::EvaluateFiles(qrels_path, run_path, o.eval);
  }();
  if (!report.ok()) Raise(report.status());
  auto owned = std::make_shared<trec::EvalReport>(std::move(report).value());
  Evaluation e;
  e.columns = owned->columns();
  e.queries = owned->queries();
  e.summary = trec::SummaryValues(*owned);
  e.run_id = std::string(owned->run_id());
  e.pytrec_names = o.pytrec_names;
  e.owner = std::move(owned);
  return e;
}

// The summary of one measure's per-query values, as eval's `all` row forms
// it (pytrec_eval's compute_aggregated_measure).
double Summarize(const std::string& measure,
                 const std::vector<double>& values) {
  StatusOr<trec::MeasureSelection> s =
      trec::MeasureSelection::Parse(std::vector<std::string>{measure});
  if (!s.ok()) Raise(s.status());
  std::vector<trec::ReportColumn> columns;
  for (const auto& item : s->items()) trec::AppendColumns(item, &columns);
  for (const trec::ReportColumn& c : columns) {
    if (c.name == measure || columns.size() == 1) {
      return trec::Summarize(c.summary_kind, values);
    }
  }
  Raise(Status::InvalidArgument("measure '" + measure +
                                "': names several columns; give one (P_10)"));
}

// `rankwatch compare` over evaluations of the same options: its JSON
// document (WriteCompareJson).
std::string Compare(nb::list evaluations, const std::vector<std::string>& names,
                    size_t baseline, const std::string& correction,
                    double alpha, int64_t permutations, int64_t bootstrap,
                    double confidence, uint64_t seed, int64_t per_query,
                    int threads) {
  std::vector<const Evaluation*> runs;
  for (nb::handle e : evaluations)
    runs.push_back(&nb::cast<const Evaluation&>(e));
  if (runs.size() != names.size()) {
    Raise(Status::InvalidArgument("compare: one name per run"));
  }
  trec::CompareOptions options;
  std::optional<trec::Correction> parsed = trec::ParseCorrection(correction);
  if (!parsed) {
    Raise(Status::InvalidArgument("correction '" + correction +
                                  "': expected holm, bh or none"));
  }
  options.correction = *parsed;
  options.alpha = alpha;
  options.permutations = permutations;
  options.bootstrap = bootstrap;
  options.confidence = confidence;
  options.seed = seed;
  options.per_query = per_query;
  options.threads = threads;
  std::vector<std::string> measures;
  std::vector<trec::RunScores> scores(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    const Evaluation& e = *runs[r];
    scores[r].name = names[r];
    for (const trec::QueryResult& q : e.queries)
      scores[r].qids.emplace_back(q.qid);
    for (size_t c = 0; c < e.columns.size(); ++c) {
      if (!trec::IsComparedColumn(e.columns[c])) continue;
      if (r == 0) measures.push_back(e.columns[c].name);
      std::vector<double>& column = scores[r].scores.emplace_back();
      for (const trec::QueryResult& q : e.queries)
        column.push_back(q.values[c]);
    }
  }
  std::string out;
  Status status;
  {
    nb::gil_scoped_release release;
    StatusOr<trec::Comparison> c =
        trec::CompareRuns(measures, scores, baseline, options);
    if (c.ok()) {
      trec::WriteCompareJson(*c, &out);
    } else {
      status = c.status();
    }
  }
  if (!status.ok()) Raise(status);
  return out;
}

nb::set FamilyNames() {
  nb::set out;
  for (std::string_view n : trec::MeasureFamilyNames()) {
    out.add(nb::str(n.data(), n.size()));
  }
  return out;
}

nb::dict Nicknames() {
  nb::dict out;
  for (std::string_view n : trec::MeasureNicknames()) {
    nb::set families;
    for (std::string_view f : *trec::NicknameFamilies(n)) {
      families.add(nb::str(f.data(), f.size()));
    }
    out[nb::str(n.data(), n.size())] = families;
  }
  return out;
}

}  // namespace

}  // namespace rankwatch::python

namespace nb = nanobind;
namespace rw = rankwatch::python;

NB_MODULE(_rankwatch, m) {
  m.doc() =
      "rankwatch's evaluation engine (trec_eval 10.0 measures); use the "
      "package rankwatch, which wraps it.";
  m.attr("supported_measures") = rw::FamilyNames();
  m.attr("supported_nicknames") = rw::Nicknames();

  nb::class_<rw::Options>(m, "Options")
      .def_prop_ro("columns", &rw::ColumnNames);
  m.def("make_options", &rw::MakeOptions, nb::arg("measures"),
        nb::arg("relevance_level") = 1, nb::arg("judged_only") = false,
        nb::arg("complete") = false, nb::arg("gain") = "linear",
        nb::arg("recall_denominator") = "relevant",
        nb::arg("ap_denominator") = "relevant",
        nb::arg("zero_relevant") = "score_zero", nb::arg("max_docs") = 0,
        nb::arg("num_docs_in_collection") = 0, nb::arg("threads") = 0);

  nb::class_<rw::LoadedQrels>(m, "Qrels")
      .def_static("from_dict",
                  [](nb::handle d) {
                    return rw::ParseQrels(rw::QrelsTextFromDict(d), "qrels",
                                          true);
                  })
      .def_static("from_columns",
                  [](nb::handle q, nb::handle d, nb::handle g) {
                    return rw::ParseQrels(rw::QrelsTextFromColumns(q, d, g),
                                          "qrels", true);
                  })
      .def_static("from_file", &rw::LoadQrels)
      .def_static("from_text",
                  [](std::string text, std::string name) {
                    return rw::ParseQrels(std::move(text), std::move(name),
                                          false);
                  })
      .def("to_dict",
           [](const rw::LoadedQrels& q) {
             return rw::QrelsToDict(*q.qrels, q.escaped);
           })
      .def_prop_ro("num_queries", [](const rw::LoadedQrels& q) {
        return q.qrels->queries().size();
      });

  nb::class_<rw::Evaluation>(m, "Evaluation")
      .def("to_dict", &rw::ResultsToDict, nb::arg("pytrec_names") = false)
      .def("table", &rw::ResultsToTable)
      .def("summary", &rw::SummaryToDict)
      .def_ro("run_id", &rw::Evaluation::run_id);

  m.def("evaluate_dict", &rw::EvaluateDict);
  m.def("evaluate_columns", &rw::EvaluateColumns);
  m.def("evaluate_files", &rw::EvaluateFiles);
  m.def("summarize", &rw::Summarize);
  m.def("parse_run_text", [](const std::string& text, const std::string& name) {
    return rw::RunTextToDict(text, name);
  });
  m.def("compare", &rw::Compare);
}
