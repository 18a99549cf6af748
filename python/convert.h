// Conversions between Python objects and the evaluation engine's types, for
// the module (module.cc): qrels and runs from dicts and columns, results
// into pytrec_eval's nested dicts and into arrays for DataFrames. No
// measure is computed here.
//
// Every function is called with the GIL held and raises its Python
// exception through nanobind (the module's boundary): TypeError for a
// value of the wrong type, ValueError for bad input, naming the query and
// doc. Raise() turns a Status from the engine into its exception.
#ifndef RANKWATCH_PYTHON_CONVERT_H_
#define RANKWATCH_PYTHON_CONVERT_H_

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "trec/batch_eval.h"
#include "trec/memory_eval.h"
#include "trec/qrels.h"

namespace rankwatch::python {

namespace nb = nanobind;

// Raises the exception for an error `status`: FileNotFoundError or OSError
// for a file that cannot be read, ValueError for bad input, RuntimeError
// otherwise; the message is the status's one line.
[[noreturn]] void Raise(const Status& status);

// TREC qrels text ("qid 0 docno grade" lines) for Qrels::Parse, from
// {qid: {docno: grade}} (mappings of mappings, grades int) or from three
// columns of equal length (any sequences; ids str or converted with str(),
// grades int). Ids with whitespace or '%', or starting with '#', are
// written %XX-escaped, as the run's ids are (RunFrom*), and QidObject
// gives them back; an empty id is a ValueError.
std::string QrelsTextFromDict(nb::handle qrels);
std::string QrelsTextFromColumns(nb::handle qids, nb::handle docnos,
                                 nb::handle grades);

// Fills `out` from {qid: {docno: score}} (scores int or float) or from
// three columns, ids escaped as the qrels' when `escape` (qrels from a
// dict or columns, not from a file). A score that is not a finite number
// is a ValueError.
void RunFromDict(nb::handle run, bool escape, trec::MemoryRun* out);
void RunFromColumns(nb::handle qids, nb::handle docnos, nb::handle scores,
                    bool escape, trec::MemoryRun* out);

// An evaluation's per-query results and summary, owning what their qids
// point into (the Qrels, or the report of a file evaluation).
struct Evaluation {
  std::shared_ptr<const void> owner;
  std::vector<trec::ReportColumn> columns;
  std::vector<trec::QueryResult> queries;
  std::vector<double> summary;  // One per column: the `all` row.
  // pytrec_eval's key of each column (set_F for set_F_0.5).
  std::vector<std::string> pytrec_names;
  std::string run_id;
  bool escaped_ids = false;  // The qids are %XX-escaped (dict, columns).
};

// A qid as a str: as it is, or %XX-unescaped when `escaped`.
nb::str QidObject(std::string_view qid, bool escaped);

// {qid: {measure: value}} with every column, the text columns (runid,
// relstring) as 0.0 as pytrec_eval gives them; measures by their printed
// names, or as pytrec_eval keys them.
nb::dict ResultsToDict(const Evaluation& e, bool pytrec_names);
// (columns, qids, values): the numeric columns' names, the qids, and a
// float64 array of one row per query and one column per name.
nb::tuple ResultsToTable(const Evaluation& e);
// {measure: summary value} of the numeric columns.
nb::dict SummaryToDict(const Evaluation& e);

// pytrec_eval's parse_qrel and parse_run results from parsed text:
// {qid: {docno: grade}} and {qid: {docno: score}}.
nb::dict QrelsToDict(const trec::Qrels& qrels, bool escaped);
nb::dict RunTextToDict(std::string_view text, const std::string& name);

}  // namespace rankwatch::python

#endif  // RANKWATCH_PYTHON_CONVERT_H_
