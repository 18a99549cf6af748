#include "python/convert.h"

#include <nanobind/ndarray.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/strings.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"

namespace rankwatch::python {

namespace {

[[noreturn]] void RaiseAs(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

// The UTF-8 bytes of `s`, a str (borrowed from it: valid while it lives).
// `what` names the value in the TypeError of anything else.
std::string_view Utf8(PyObject* s, const char* what) {
  if (!PyUnicode_Check(s)) {
    RaiseAs(PyExc_TypeError,
            std::string(what) + " must be str, not " + Py_TYPE(s)->tp_name);
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(s, &size);
  if (data == nullptr) throw nb::python_error();
  return {data, static_cast<size_t>(size)};
}

// A column's items as a sequence with fast access (PySequence_Fast).
nb::object FastSequence(nb::handle column, const char* what) {
  PyObject* fast = PySequence_Fast(column.ptr(), what);
  if (fast == nullptr) throw nb::python_error();
  return nb::steal(fast);
}

// Item `i` of a FastSequence as text: str as it is, anything else through
// str() (integer qids of a DataFrame), kept alive in `holder`.
std::string_view ItemText(PyObject* item, nb::object* holder,
                          const char* what) {
  if (PyUnicode_Check(item)) return Utf8(item, what);
  *holder = nb::steal(PyObject_Str(item));
  if (!holder->is_valid()) throw nb::python_error();
  return Utf8(holder->ptr(), what);
}

// Whether `id` must be escaped to be a field of a TREC line: it holds
// whitespace or '%' (the escape), or starts with '#' (a comment line).
bool NeedsEscape(std::string_view id) {
  if (!id.empty() && id.front() == '#') return true;
  for (const char c : id) {
    if (c == '%' || trec::IsSpace(c)) return true;
  }
  return false;
}

// `id` with every byte NeedsEscape objects to as %XX. Ids of a dict or a
// DataFrame may hold spaces (pytrec_eval's README queries "sweet pastry");
// qrels and run ids are escaped alike, so they still match.
void AppendEscaped(std::string_view id, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c == '%' || trec::IsSpace(id[i]) || (i == 0 && c == '#')) {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(id[i]);
    }
  }
}

// `id`, escaped when it must be (into `scratch`).
std::string_view Escaped(std::string_view id, bool escape,
                         std::string* scratch) {
  if (!escape || !NeedsEscape(id)) return id;
  scratch->clear();
  AppendEscaped(id, scratch);
  return *scratch;
}

void CheckNotEmpty(std::string_view id, const char* what) {
  if (id.empty()) RaiseAs(PyExc_ValueError, std::string("empty ") + what);
}

void AppendQrelsLine(std::string_view qid, std::string_view docno,
                     long long grade, std::string* text) {
  CheckNotEmpty(qid, "query id in the qrels");
  CheckNotEmpty(docno, "doc id in the qrels");
  AppendEscaped(qid, text);
  text->append(" 0 ");
  AppendEscaped(docno, text);
  text->push_back(' ');
  text->append(std::to_string(grade));
  text->push_back('\n');
}

long long GradeOf(PyObject* value, std::string_view qid,
                  std::string_view docno) {
  if (!PyLong_Check(value)) {
    RaiseAs(PyExc_TypeError, "qrels: the grade of doc '" + Printable(docno) +
                                 "' for query '" + Printable(qid) +
                                 "' must be int, not " +
                                 Py_TYPE(value)->tp_name);
  }
  const long long grade = PyLong_AsLongLong(value);
  if (grade == -1 && PyErr_Occurred()) throw nb::python_error();
  return grade;
}

// A score as a double: int, float, or anything with __float__ (numpy's).
double ScoreOf(PyObject* value, std::string_view qid, std::string_view docno) {
  double score;
  if (PyFloat_Check(value)) {
    score = PyFloat_AS_DOUBLE(value);
  } else {
    score = PyFloat_AsDouble(value);
    if (score == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      RaiseAs(PyExc_TypeError, "run: the score of doc '" + Printable(docno) +
                                   "' for query '" + Printable(qid) +
                                   "' must be a number, not " +
                                   Py_TYPE(value)->tp_name);
    }
  }
  return score;
}

[[noreturn]] void RaiseNotFinite(std::string_view qid, std::string_view docno,
                                 double score) {
  RaiseAs(PyExc_ValueError, "run: the score of doc '" + Printable(docno) +
                                "' for query '" + Printable(qid) +
                                "' is not a finite number (" +
                                std::to_string(score) + ")");
}

// `value` as a dict: itself, or dict(value) for another mapping.
nb::object AsDict(PyObject* value, const char* what) {
  if (PyDict_Check(value)) return nb::borrow(value);
  PyObject* d = PyDict_New();
  if (d == nullptr) throw nb::python_error();
  nb::object owned = nb::steal(d);
  if (PyDict_Merge(d, value, 1) != 0) {
    PyErr_Clear();
    RaiseAs(PyExc_TypeError, std::string(what) +
                                 " must map doc ids to values, not " +
                                 Py_TYPE(value)->tp_name);
  }
  return owned;
}

}  // namespace

nb::str QidObject(std::string_view qid, bool escaped) {
  if (!escaped || qid.find('%') == std::string_view::npos) {
    return nb::str(qid.data(), qid.size());
  }
  std::string plain;
  for (size_t i = 0; i < qid.size(); ++i) {
    unsigned byte = 0;
    if (qid[i] == '%' && i + 2 < qid.size() &&
        std::from_chars(qid.data() + i + 1, qid.data() + i + 3, byte, 16).ptr ==
            qid.data() + i + 3) {
      plain.push_back(static_cast<char>(byte));
      i += 2;
    } else {
      plain.push_back(qid[i]);
    }
  }
  return nb::str(plain.data(), plain.size());
}

void Raise(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      RaiseAs(PyExc_FileNotFoundError, status.message());
    case StatusCode::kIoError:
      RaiseAs(PyExc_OSError, status.message());
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kAlreadyExists:
    case StatusCode::kResourceExhausted:
      RaiseAs(PyExc_ValueError, status.message());
    case StatusCode::kOk:
    case StatusCode::kUnavailable:
    case StatusCode::kInternal:
      break;
  }
  RaiseAs(PyExc_RuntimeError, status.message());
}

std::string QrelsTextFromDict(nb::handle qrels) {
  const nb::object outer = AsDict(qrels.ptr(), "qrels");
  std::string text;
  Py_ssize_t pos = 0;
  PyObject* key;
  PyObject* value;
  while (PyDict_Next(outer.ptr(), &pos, &key, &value)) {
    const std::string_view qid = Utf8(key, "a query id");
    const nb::object inner = AsDict(value, "the qrels of a query");
    Py_ssize_t inner_pos = 0;
    PyObject* doc;
    PyObject* grade;
    while (PyDict_Next(inner.ptr(), &inner_pos, &doc, &grade)) {
      const std::string_view docno = Utf8(doc, "a doc id");
      AppendQrelsLine(qid, docno, GradeOf(grade, qid, docno), &text);
    }
  }
  return text;
}

std::string QrelsTextFromColumns(nb::handle qids, nb::handle docnos,
                                 nb::handle grades) {
  const nb::object q = FastSequence(qids, "qrels: query_id must be a sequence");
  const nb::object d = FastSequence(docnos, "qrels: doc_id must be a sequence");
  const nb::object g =
      FastSequence(grades, "qrels: relevance must be a sequence");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(q.ptr());
  if (PySequence_Fast_GET_SIZE(d.ptr()) != n ||
      PySequence_Fast_GET_SIZE(g.ptr()) != n) {
    RaiseAs(PyExc_ValueError, "qrels: columns of different lengths");
  }
  std::string text;
  nb::object qid_holder, doc_holder;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const std::string_view qid = ItemText(PySequence_Fast_GET_ITEM(q.ptr(), i),
                                          &qid_holder, "a query id");
    const std::string_view docno =
        ItemText(PySequence_Fast_GET_ITEM(d.ptr(), i), &doc_holder, "a doc id");
    PyObject* grade = PySequence_Fast_GET_ITEM(g.ptr(), i);
    nb::object integral;
    if (!PyLong_Check(grade) && PyIndex_Check(grade)) {  // numpy integers
      integral = nb::steal(PyNumber_Index(grade));
      if (!integral.is_valid()) throw nb::python_error();
      grade = integral.ptr();
    }
    AppendQrelsLine(qid, docno, GradeOf(grade, qid, docno), &text);
  }
  return text;
}

void RunFromDict(nb::handle run, bool escape, trec::MemoryRun* out) {
  const nb::object outer = AsDict(run.ptr(), "the run");
  Py_ssize_t pos = 0;
  PyObject* key;
  PyObject* value;
  while (PyDict_Next(outer.ptr(), &pos, &key, &value)) {
    const std::string_view qid = Utf8(key, "a query id");
    std::string qid_scratch, doc_scratch;
    const size_t query = out->Query(Escaped(qid, escape, &qid_scratch));
    const nb::object inner = AsDict(value, "the run of a query");
    out->Reserve(query, static_cast<size_t>(PyDict_Size(inner.ptr())));
    Py_ssize_t inner_pos = 0;
    PyObject* doc;
    PyObject* score_object;
    while (PyDict_Next(inner.ptr(), &inner_pos, &doc, &score_object)) {
      const std::string_view docno = Utf8(doc, "a doc id");
      const double score = ScoreOf(score_object, qid, docno);
      if (!out->Add(query, Escaped(docno, escape, &doc_scratch), score)) {
        RaiseNotFinite(qid, docno, score);
      }
    }
  }
}

void RunFromColumns(nb::handle qids, nb::handle docnos, nb::handle scores,
                    bool escape, trec::MemoryRun* out) {
  const nb::object q = FastSequence(qids, "run: query_id must be a sequence");
  const nb::object d = FastSequence(docnos, "run: doc_id must be a sequence");
  const nb::object s = FastSequence(scores, "run: score must be a sequence");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(q.ptr());
  if (PySequence_Fast_GET_SIZE(d.ptr()) != n ||
      PySequence_Fast_GET_SIZE(s.ptr()) != n) {
    RaiseAs(PyExc_ValueError, "run: columns of different lengths");
  }
  nb::object qid_holder, doc_holder;
  std::string qid_scratch, doc_scratch;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const std::string_view qid = ItemText(PySequence_Fast_GET_ITEM(q.ptr(), i),
                                          &qid_holder, "a query id");
    const std::string_view docno =
        ItemText(PySequence_Fast_GET_ITEM(d.ptr(), i), &doc_holder, "a doc id");
    const double score =
        ScoreOf(PySequence_Fast_GET_ITEM(s.ptr(), i), qid, docno);
    const size_t query = out->Query(Escaped(qid, escape, &qid_scratch));
    if (!out->Add(query, Escaped(docno, escape, &doc_scratch), score)) {
      RaiseNotFinite(qid, docno, score);
    }
  }
}

nb::dict ResultsToDict(const Evaluation& e, bool pytrec_names) {
  std::vector<nb::object> names;
  for (size_t c = 0; c < e.columns.size(); ++c) {
    names.push_back(nb::str(pytrec_names ? e.pytrec_names[c].c_str()
                                         : e.columns[c].name.c_str()));
  }
  nb::dict out;
  for (const trec::QueryResult& q : e.queries) {
    PyObject* row = PyDict_New();
    if (row == nullptr) throw nb::python_error();
    nb::object owned = nb::steal(row);
    for (size_t c = 0; c < e.columns.size(); ++c) {
      const bool text = e.columns[c].format == trec::ValueFormat::kText;
      PyObject* v = PyFloat_FromDouble(text ? 0.0 : q.values[c]);
      if (v == nullptr || PyDict_SetItem(row, names[c].ptr(), v) != 0) {
        Py_XDECREF(v);
        throw nb::python_error();
      }
      Py_DECREF(v);
    }
    out[QidObject(q.qid, e.escaped_ids)] = owned;
  }
  return out;
}

namespace {

std::vector<size_t> NumericColumns(const Evaluation& e) {
  std::vector<size_t> numeric;
  for (size_t c = 0; c < e.columns.size(); ++c) {
    if (e.columns[c].format != trec::ValueFormat::kText) numeric.push_back(c);
  }
  return numeric;
}

}  // namespace

nb::tuple ResultsToTable(const Evaluation& e) {
  const std::vector<size_t> numeric = NumericColumns(e);
  nb::list names;
  for (size_t c : numeric) names.append(nb::str(e.columns[c].name.c_str()));
  nb::list qids;
  for (const trec::QueryResult& q : e.queries) {
    qids.append(QidObject(q.qid, e.escaped_ids));
  }
  const size_t rows = e.queries.size();
  auto* data = new double[std::max<size_t>(1, rows * numeric.size())];
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < numeric.size(); ++j) {
      data[r * numeric.size() + j] = e.queries[r].values[numeric[j]];
    }
  }
  nb::capsule owner(data,
                    [](void* p) noexcept { delete[] static_cast<double*>(p); });
  nb::ndarray<nb::numpy, double, nb::ndim<2>> values(
      data, {rows, numeric.size()}, owner);
  return nb::make_tuple(names, qids, values);
}

nb::dict SummaryToDict(const Evaluation& e) {
  nb::dict out;
  for (size_t c : NumericColumns(e)) {
    out[nb::str(e.columns[c].name.c_str())] = e.summary[c];
  }
  return out;
}

nb::dict QrelsToDict(const trec::Qrels& qrels, bool escaped) {
  nb::dict out;
  for (const trec::QueryQrels& q : qrels.queries()) {
    nb::dict docs;
    const auto docnos = qrels.docnos(q);
    const auto grades = qrels.grades(q);
    for (size_t i = 0; i < docnos.size(); ++i) {
      docs[QidObject(docnos[i], escaped)] = grades[i];
    }
    out[QidObject(q.qid, escaped)] = docs;
  }
  return out;
}

nb::dict RunTextToDict(std::string_view text, const std::string& name) {
  nb::dict out;
  const char* p = text.data();
  const char* end = p + text.size();
  for (uint64_t line = 1; p < end; ++line) {
    trec::RunLineKind kind;
    trec::RunLineFields f;
    p = trec::ScanRunLine(p, end, &kind, &f);
    if (kind == trec::RunLineKind::kSkip) continue;
    const std::string where = name + ":" + std::to_string(line) + ": ";
    double score = 0;
    if (kind == trec::RunLineKind::kTooShort) {
      RaiseAs(PyExc_ValueError, where + "fewer than 6 fields");
    }
    if (!trec::ParseScore(f.score, &score)) {
      RaiseAs(PyExc_ValueError, where + "score '" + Printable(f.score) +
                                    "' is not a finite number");
    }
    const nb::str qid(f.qid.data(), f.qid.size());
    const nb::str docno(f.docno.data(), f.docno.size());
    if (!out.contains(qid)) out[qid] = nb::dict();
    nb::dict docs = nb::borrow<nb::dict>(out[qid]);
    if (docs.contains(docno)) {
      RaiseAs(PyExc_ValueError, where + "duplicate doc '" + Printable(f.docno) +
                                    "' for query '" + Printable(f.qid) + "'");
    }
    docs[docno] = score;
  }
  return out;
}

}  // namespace rankwatch::python
