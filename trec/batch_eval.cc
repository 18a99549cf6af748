#include "trec/batch_eval.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "base/json_writer.h"
#include "base/strings.h"
#include "trec/mapped_eval.h"
#include "trec/run_file.h"
#include "trec/streaming_eval.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {

namespace {

using metrics::Measure;

enum class Params { kNone, kCutoffs, kOptionalCutoffs };

struct MeasureInfo {
  std::string_view name;
  TrecMeasure measure;
  Params params;
  std::vector<int32_t> default_cutoffs;
};

const std::vector<MeasureInfo>& MeasureTable() {
  static const std::vector<int32_t> kLong = {5,   10,  15,  20,  30,
                                             100, 200, 500, 1000};
  static const std::vector<MeasureInfo>* table = new std::vector<MeasureInfo>{
      {"num_q", TrecMeasure::kNumQ, Params::kNone, {}},
      {"num_ret", TrecMeasure::kNumRet, Params::kNone, {}},
      {"num_rel", TrecMeasure::kNumRel, Params::kNone, {}},
      {"num_rel_ret", TrecMeasure::kNumRelRet, Params::kNone, {}},
      {"map", TrecMeasure::kMap, Params::kNone, {}},
      {"Rprec", TrecMeasure::kRprec, Params::kNone, {}},
      {"recip_rank", TrecMeasure::kRecipRank, Params::kOptionalCutoffs, {}},
      {"P", TrecMeasure::kP, Params::kCutoffs, kLong},
      {"recall", TrecMeasure::kRecall, Params::kCutoffs, kLong},
      {"ndcg", TrecMeasure::kNdcg, Params::kNone, {}},
      {"ndcg_cut", TrecMeasure::kNdcgCut, Params::kCutoffs, kLong},
      {"map_cut", TrecMeasure::kMapCut, Params::kCutoffs, kLong},
      {"success", TrecMeasure::kSuccess, Params::kCutoffs, {1, 5, 10}},
      {"judged", TrecMeasure::kJudged, Params::kCutoffs, {5, 10, 20}},
  };
  return *table;
}

std::string SupportedMeasures() {
  std::string s;
  for (const MeasureInfo& m : MeasureTable()) {
    if (!s.empty()) s += ", ";
    s += m.name;
  }
  return s;
}

StatusOr<std::vector<int32_t>> ParseCutoffs(const std::string& spec,
                                            std::string_view params) {
  std::vector<int32_t> cutoffs;
  size_t start = 0;
  while (true) {
    const size_t comma = params.find(',', start);
    std::string_view tok = params.substr(
        start, comma == std::string_view::npos ? comma : comma - start);
    int32_t k;
    if (!ParseInteger(tok, &k) || k < 1) {
      return Status::InvalidArgument("measure '" + Printable(spec) +
                                     "': cutoff '" + Printable(tok) +
                                     "' is not a positive integer");
    }
    cutoffs.push_back(k);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(cutoffs.begin(), cutoffs.end());
  if (std::adjacent_find(cutoffs.begin(), cutoffs.end()) != cutoffs.end()) {
    return Status::InvalidArgument("measure '" + Printable(spec) +
                                   "': duplicate cutoffs");
  }
  return cutoffs;
}

void MergeCutoffs(std::vector<int32_t>* into, const std::vector<int32_t>& add) {
  into->insert(into->end(), add.begin(), add.end());
  std::sort(into->begin(), into->end());
  into->erase(std::unique(into->begin(), into->end()), into->end());
}

// One printed row: a measure at a cutoff (or uncut), or a count.
struct Row {
  enum class Kind { kNumQ, kNumRet, kNumRel, kNumRelRet, kValue };
  std::string name;
  Kind kind;
  Measure measure = Measure::kPrecision;
  int cutoff_index = -1;
};

std::vector<Row> BuildRows(const MeasureSelection& sel,
                           const std::vector<int32_t>& cutoffs) {
  std::vector<Row> rows;
  auto index_of = [&](int32_t k) {
    return static_cast<int>(
        std::lower_bound(cutoffs.begin(), cutoffs.end(), k) - cutoffs.begin());
  };
  auto add_cut = [&](const MeasureSelection::Item& item, Measure m) {
    for (int32_t k : item.cutoffs) {
      rows.push_back(
          {metrics::TrecName(m, k), Row::Kind::kValue, m, index_of(k)});
    }
  };
  for (const MeasureSelection::Item& item : sel.items()) {
    switch (item.measure) {
      case TrecMeasure::kNumQ:
        rows.push_back({"num_q", Row::Kind::kNumQ});
        break;
      case TrecMeasure::kNumRet:
        rows.push_back({"num_ret", Row::Kind::kNumRet});
        break;
      case TrecMeasure::kNumRel:
        rows.push_back({"num_rel", Row::Kind::kNumRel});
        break;
      case TrecMeasure::kNumRelRet:
        rows.push_back({"num_rel_ret", Row::Kind::kNumRelRet});
        break;
      case TrecMeasure::kMap:
        rows.push_back(
            {"map", Row::Kind::kValue, Measure::kAveragePrecision, -1});
        break;
      case TrecMeasure::kRprec:
        rows.push_back({"Rprec", Row::Kind::kValue, Measure::kRPrecision, -1});
        break;
      case TrecMeasure::kRecipRank:
        if (item.uncut) {
          rows.push_back(
              {"recip_rank", Row::Kind::kValue, Measure::kReciprocalRank, -1});
        }
        add_cut(item, Measure::kReciprocalRank);
        break;
      case TrecMeasure::kP:
        add_cut(item, Measure::kPrecision);
        break;
      case TrecMeasure::kRecall:
        add_cut(item, Measure::kRecall);
        break;
      case TrecMeasure::kNdcg:
        rows.push_back({"ndcg", Row::Kind::kValue, Measure::kNdcg, -1});
        break;
      case TrecMeasure::kNdcgCut:
        add_cut(item, Measure::kNdcg);
        break;
      case TrecMeasure::kMapCut:
        add_cut(item, Measure::kAveragePrecision);
        break;
      case TrecMeasure::kSuccess:
        add_cut(item, Measure::kSuccess);
        break;
      case TrecMeasure::kJudged:
        add_cut(item, Measure::kJudged);
        break;
    }
  }
  return rows;
}

bool IsInteger(Row::Kind k) { return k != Row::Kind::kValue; }

double RowValue(const Row& row, const metrics::ListScores& s) {
  switch (row.kind) {
    case Row::Kind::kNumQ:
      return 1;
    case Row::Kind::kNumRet:
      return static_cast<double>(s.num_ret);
    case Row::Kind::kNumRel:
      return static_cast<double>(s.num_rel);
    case Row::Kind::kNumRelRet:
      return static_cast<double>(s.num_rel_ret);
    case Row::Kind::kValue:
      return metrics::MeasureValue(s, row.measure, row.cutoff_index);
  }
  return 0;
}

// The `all` value of each row: sums for counts, means for the rest, summed
// in qid order as trec_eval does.
std::vector<double> Summary(const EvalReport& report,
                            const std::vector<Row>& rows) {
  const auto& queries = report.queries();
  std::vector<double> all(rows.size(), 0.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (const QueryResult& q : queries) all[r] += RowValue(rows[r], q.scores);
    if (rows[r].kind == Row::Kind::kNumRel && report.options().complete) {
      all[r] = static_cast<double>(report.complete_num_rel());
    } else if (!IsInteger(rows[r].kind) && !queries.empty()) {
      all[r] /= static_cast<double>(queries.size());
    }
  }
  return all;
}

void AppendTextRow(std::string* out, const std::string& name,
                   std::string_view qid, double value, bool integer) {
  out->append(name);
  if (name.size() < 22) out->append(22 - name.size(), ' ');
  out->push_back('\t');
  out->append(qid);
  out->push_back('\t');
  char buf[64];
  const int n = integer ? std::snprintf(buf, sizeof(buf), "%lld",
                                        static_cast<long long>(value))
                        : std::snprintf(buf, sizeof(buf), "%6.4f", value);
  out->append(buf, static_cast<size_t>(n));
  out->push_back('\n');
}

void AppendJsonNumber(std::string* out, double value, bool integer) {
  char buf[64];
  const int n = integer ? std::snprintf(buf, sizeof(buf), "%lld",
                                        static_cast<long long>(value))
                        : std::snprintf(buf, sizeof(buf), "%.17g", value);
  out->append(buf, static_cast<size_t>(n));
}

void AppendJsonObject(std::string* out, const std::vector<Row>& rows,
                      const std::vector<double>& values, bool summary) {
  out->push_back('{');
  bool first = true;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].kind == Row::Kind::kNumQ && !summary) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, rows[r].name);
    out->push_back(':');
    AppendJsonNumber(out, values[r], IsInteger(rows[r].kind));
  }
  out->push_back('}');
}

}  // namespace

StatusOr<MeasureSelection> MeasureSelection::Parse(
    std::span<const std::string> specs) {
  static const std::vector<std::string> kDefault = {
      "num_q", "num_ret", "num_rel",    "num_rel_ret",
      "map",   "Rprec",   "recip_rank", "P"};
  if (specs.empty()) specs = kDefault;
  const auto& table = MeasureTable();
  std::vector<std::optional<Item>> chosen(table.size());
  for (const std::string& spec : specs) {
    const size_t dot = spec.find('.');
    const std::string_view name = std::string_view(spec).substr(0, dot);
    const bool has_params = dot != std::string::npos;
    const std::string_view params =
        has_params ? std::string_view(spec).substr(dot + 1) : "";
    auto it =
        std::find_if(table.begin(), table.end(),
                     [&](const MeasureInfo& m) { return m.name == name; });
    if (it == table.end()) {
      return Status::InvalidArgument("unknown measure '" + Printable(name) +
                                     "' (supported: " + SupportedMeasures() +
                                     ")");
    }
    const size_t index = static_cast<size_t>(it - table.begin());
    if (!chosen[index]) chosen[index] = Item{it->measure, false, {}};
    Item& item = *chosen[index];
    if (has_params && it->params == Params::kNone) {
      return Status::InvalidArgument("measure '" + Printable(name) +
                                     "' takes no parameters (got '" +
                                     Printable(spec) + "')");
    }
    if (!has_params) {
      if (it->params == Params::kOptionalCutoffs) {
        item.uncut = true;
      } else {
        MergeCutoffs(&item.cutoffs, it->default_cutoffs);
      }
      continue;
    }
    StatusOr<std::vector<int32_t>> cutoffs = ParseCutoffs(spec, params);
    if (!cutoffs.ok()) return cutoffs.status();
    MergeCutoffs(&item.cutoffs, *cutoffs);
  }
  MeasureSelection sel;
  for (auto& item : chosen) {
    if (item) sel.items_.push_back(std::move(*item));
  }
  return sel;
}

std::vector<int32_t> MeasureSelection::AllCutoffs() const {
  std::vector<int32_t> all;
  for (const Item& item : items_) MergeCutoffs(&all, item.cutoffs);
  return all;
}

StatusOr<EvalReport> EvaluateFiles(const std::string& qrels_path,
                                   const std::string& run_path,
                                   const EvalOptions& options) {
  EvalReport report;
  report.options_ = options;
  report.cutoffs_ = options.measures.AllCutoffs();
  StatusOr<metrics::Evaluator> evaluator =
      metrics::Evaluator::Create(report.cutoffs_, options.definitions);
  if (!evaluator.ok()) return evaluator.status();
  if (options.max_docs_per_query < 1) {
    return Status::InvalidArgument("-M must be a positive number of docs");
  }

  StatusOr<Qrels> qrels = Qrels::Load(qrels_path);
  if (!qrels.ok()) return qrels.status();
  report.qrels_ = std::make_unique<Qrels>(std::move(qrels).value());
  const Qrels& q = *report.qrels_;
  for (const QueryQrels& qq : q.queries()) {
    report.complete_num_rel_ += qq.num_positive;
  }
  const int threads =
      options.threads > 0
          ? options.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // A regular file is streamed; other input, and any input with an error,
  // takes the mapped path.
  bool streamed = false;
  if (std::unique_ptr<RunChunkReader> reader =
          RunChunkReader::Open(run_path, options.run_chunk_bytes)) {
    streamed = EvaluateStreaming(reader.get(), q, *evaluator, options, threads,
                                 &report.queries_);
  }
  if (!streamed) {
    RW_RETURN_IF_ERROR(EvaluateMapped(qrels_path, run_path, q, *evaluator,
                                      options, threads, &report.queries_));
  } else if (report.queries_.empty()) {
    return NoCommonQuery(qrels_path, run_path, options.complete);
  }

  if (options.definitions.zero_relevant == metrics::ZeroRelevantPolicy::kSkip) {
    std::erase_if(report.queries_,
                  [](const QueryResult& r) { return r.scores.num_rel == 0; });
  }
  return report;
}

void WriteTrecText(const EvalReport& report, std::string* out) {
  const std::vector<Row> rows =
      BuildRows(report.options().measures, report.cutoffs());
  if (report.options().per_query) {
    for (const QueryResult& q : report.queries()) {
      for (const Row& row : rows) {
        if (row.kind == Row::Kind::kNumQ) continue;  // Summary only.
        AppendTextRow(out, row.name, q.qid, RowValue(row, q.scores),
                      IsInteger(row.kind));
      }
    }
  }
  const std::vector<double> all = Summary(report, rows);
  for (size_t r = 0; r < rows.size(); ++r) {
    AppendTextRow(out, rows[r].name, "all", all[r], IsInteger(rows[r].kind));
  }
}

void WriteJson(const EvalReport& report, std::string* out) {
  const std::vector<Row> rows =
      BuildRows(report.options().measures, report.cutoffs());
  const metrics::Definitions& d = report.options().definitions;
  out->append("{\"definitions\":{\"relevance_threshold\":");
  out->append(std::to_string(d.relevance_threshold));
  out->append(",\"gain\":");
  AppendJsonString(out, metrics::GainName(d.gain));
  out->append(",\"recall_denominator\":");
  AppendJsonString(out, metrics::RecallDenominatorName(d.recall_denominator));
  out->append(",\"ap_denominator\":");
  AppendJsonString(out, metrics::ApDenominatorName(d.ap_denominator));
  out->append(",\"zero_relevant\":");
  AppendJsonString(out, metrics::ZeroRelevantPolicyName(d.zero_relevant));
  out->append(",\"complete\":");
  out->append(report.options().complete ? "true" : "false");
  out->append("}");
  std::vector<double> values(rows.size());
  if (report.options().per_query) {
    out->append(",\"queries\":{");
    bool first = true;
    for (const QueryResult& q : report.queries()) {
      if (!first) out->push_back(',');
      first = false;
      AppendJsonString(out, q.qid);
      out->push_back(':');
      for (size_t r = 0; r < rows.size(); ++r) {
        values[r] = RowValue(rows[r], q.scores);
      }
      AppendJsonObject(out, rows, values, /*summary=*/false);
    }
    out->push_back('}');
  }
  out->append(",\"all\":");
  AppendJsonObject(out, rows, Summary(report, rows), /*summary=*/true);
  out->append("}\n");
}

}  // namespace rankwatch::trec
