#include "daemon/stream/replay.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

#include "base/bounded_read.h"
#include "base/json_writer.h"
#include "base/strings.h"
#include "daemon/stream/interleaving_report.h"
#include "metrics/running_stats.h"
#include "trec/mapped_file.h"

namespace rankwatch::stream {

namespace {

// What replay feeds: one event of either file, located by its line.
struct IndexedEvent {
  int64_t time_ms;
  uint64_t offset;  // Of its line in its file.
  uint32_t length;
  Topic topic;
  int64_t line_no;
};

// One input file. Index() decodes every line once to learn its event time
// (rejected lines go to the pipeline then, in file order); Feed() decodes
// an indexed line again and hands it over.
class Source {
 public:
  Source(Topic topic, trec::MappedFile file, const config::Config& config,
         const Clock* clock)
      : topic_(topic),
        file_(std::move(file)),
        decoder_(EventDecoder::ForConfig(config, clock)) {}

  uint64_t size() const { return file_.data().size(); }

  // Fails on a line longer than `bounds` allow.
  Status Index(Pipeline* pipeline, std::vector<IndexedEvent>* out,
               const ReadBounds& bounds,
               const std::function<void(uint64_t)>& progress) {
    const std::string_view data = file_.data();
    int64_t line_no = 0;
    for (size_t pos = 0; pos < data.size();) {
      size_t eol = data.find('\n', pos);
      if (eol == std::string_view::npos) eol = data.size();
      const std::string_view line = data.substr(pos, eol - pos);
      const uint64_t offset = pos;
      pos = eol + 1;
      ++line_no;
      if (line.size() > bounds.max_line_bytes) {
        return LineTooLong(file_.path(), static_cast<uint64_t>(line_no),
                           bounds);
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      ++events_;
      int64_t time_ms = 0;
      const DecodeStatus status = Decode(line, &time_ms);
      if (!status.ok()) {
        if (rejected_++ == 0) {
          first_rejected_line_ = line_no;
          other_kind_ = DecodesAsTheOtherKind(line);
        }
        pipeline->OnRejected(topic_, status, line, EventOrigin{0, line_no},
                             Location(line_no));
      } else if (status.ignored) {
        pipeline->OnIgnored(topic_);
      } else {
        out->push_back({time_ms, offset, static_cast<uint32_t>(line.size()),
                        topic_, line_no});
      }
      if ((line_no & 0x3FFF) == 0 && progress) progress(pos);
    }
    return Status::Ok();
  }

  void Feed(const IndexedEvent& e, Pipeline* pipeline) {
    const std::string_view line = file_.data().substr(e.offset, e.length);
    int64_t time_ms = 0;
    const DecodeStatus status = Decode(line, &time_ms);
    const EventOrigin origin{0, e.line_no};
    if (!status.ok()) {  // Decoding is deterministic: not expected.
      pipeline->OnRejected(topic_, status, line, origin, Location(e.line_no));
    } else if (topic_ == Topic::kResults) {
      (void)pipeline->OnResults(results_, origin);
    } else {
      (void)pipeline->OnJudgments(judgments_, origin);
    }
  }

  // Strict replay: a file given but holding no event, or only events that
  // were all rejected, is a mistake (a judgments file passed as --results,
  // the wrong dump), not a replay of nothing. Ok otherwise.
  Status CheckUsable() const {
    const std::string name = Printable(file_.path(), std::string_view::npos);
    if (events_ == 0) return Status::InvalidArgument(name + ": no events");
    if (rejected_ < events_) return Status::Ok();
    std::string message = name + ": all " + std::to_string(events_) + " " +
                          std::string(TopicName(topic_)) +
                          " events rejected (first at line " +
                          std::to_string(first_rejected_line_) + ")";
    if (other_kind_) {
      message += topic_ == Topic::kResults
                     ? "; they are judgment events: give them as --judgments"
                     : "; they are results events: give them as --results";
    }
    return Status::InvalidArgument(std::move(message));
  }

 private:
  // "FILE:LINE" for the log of a rejected event, in a reused buffer.
  std::string_view Location(int64_t line_no) {
    location_.assign(Printable(file_.path(), std::string_view::npos));
    location_ += ':';
    location_ += std::to_string(line_no);
    return location_;
  }

  // Whether a rejected line is a valid event of the other topic.
  bool DecodesAsTheOtherKind(std::string_view line) {
    if (topic_ == Topic::kResults) {
      JudgmentEvent judgments;
      return decoder_.DecodeJudgments(line, std::nullopt, &judgments).ok();
    }
    ResultsEvent results;
    return decoder_.DecodeResults(line, std::nullopt, &results).ok();
  }

  DecodeStatus Decode(std::string_view line, int64_t* time_ms) {
    if (topic_ == Topic::kResults) {
      DecodeStatus s = decoder_.DecodeResults(line, std::nullopt, &results_);
      *time_ms = results_.timestamp_ms;
      return s;
    }
    DecodeStatus s = decoder_.DecodeJudgments(line, std::nullopt, &judgments_);
    *time_ms = judgments_.timestamp_ms;
    return s;
  }

  Topic topic_;
  trec::MappedFile file_;
  EventDecoder decoder_;
  ResultsEvent results_;
  JudgmentEvent judgments_;
  int64_t events_ = 0;    // Lines that are not blank.
  int64_t rejected_ = 0;  // Of those, rejected when indexed.
  int64_t first_rejected_line_ = 0;
  bool other_kind_ = false;  // The first rejected line suits the other flag.
  std::string location_;
};

// A line over events.max_event_bytes is one rejected event (too_large), as
// the daemon rejects such a record, and the replay goes on. A line beyond
// this hard bound is not an event stream at all (`replay --results
// /dev/zero`): the replay stops there with an error, so that no input makes
// it grow its memory without end.
constexpr size_t kMaxReplayLineBytes = size_t{64} << 20;

// One bound for every line of a replayed file, regular or not. A pipe or
// device is read no further than that into a line; a mapped file's lines
// are checked as they are indexed, so the same file fails the same way
// however it is given.
ReadBounds EventLineBounds(const config::Config& config) {
  ReadBounds bounds;
  bounds.max_line_bytes = std::max(
      kMaxReplayLineBytes, static_cast<size_t>(config.events.max_event_bytes));
  bounds.line_bound_name =
      "replay's line limit; events.max_event_bytes rejects single events";
  return bounds;
}

StatusOr<std::unique_ptr<Source>> OpenSource(Topic topic,
                                             const std::string& path,
                                             const config::Config& config,
                                             const Clock* clock) {
  if (path.empty()) return std::unique_ptr<Source>();
  StatusOr<trec::MappedFile> file =
      trec::MappedFile::Open(path, EventLineBounds(config));
  if (!file.ok()) return file.status();
  return std::make_unique<Source>(topic, std::move(file).value(), config,
                                  clock);
}

// Event-time order, results first on ties, then file order: the order in
// which nothing is late, so replay is the reference the daemon's arrival
// orders are held to.
bool FeedsBefore(const IndexedEvent& a, const IndexedEvent& b) {
  if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
  return a.topic == Topic::kResults && b.topic == Topic::kJudgments;
}

// Per-series stats merged over the groups a predicate selects.
struct Merged {
  int64_t requests = 0;
  std::vector<metrics::RunningStats> series;
  FirstClickHistogram first_click;
};

Merged MergeGroups(const Aggregator& agg,
                   const std::function<bool(const GroupStats&)>& select) {
  Merged m;
  m.series.resize(agg.series().size());
  for (size_t g = 0; g < agg.num_groups(); ++g) {
    const GroupStats& group = agg.group(g);
    if (!select(group)) continue;
    m.requests += group.requests;
    for (size_t s = 0; s < m.series.size(); ++s)
      m.series[s].Merge(group.all[s]);
    for (size_t b = 0; b < m.first_click.counts.size(); ++b) {
      m.first_click.counts[b] += group.first_click.counts[b];
    }
    m.first_click.count += group.first_click.count;
    m.first_click.sum_seconds += group.first_click.sum_seconds;
  }
  return m;
}

// "time_to_first_click_seconds": {"count", "sum", "buckets": {LE: n}},
// buckets cumulative as Prometheus' (+Inf is the count).
void AppendFirstClick(std::string* out, const FirstClickHistogram& h) {
  out->append(",\"time_to_first_click_seconds\":{\"count\":");
  AppendJsonInt(out, h.count);
  out->append(",\"sum\":");
  AppendJsonDouble(out, h.sum_seconds);
  out->append(",\"buckets\":{");
  int64_t cumulative = 0;
  for (size_t b = 0; b < kFirstClickBounds.size(); ++b) {
    cumulative += h.counts[b];
    if (b > 0) out->push_back(',');
    char bound[32];
    std::snprintf(bound, sizeof(bound), "%g", kFirstClickBounds[b]);
    AppendJsonString(out, bound);
    out->push_back(':');
    AppendJsonInt(out, cumulative);
  }
  out->append("}}");
}

void AppendMeasures(std::string* out, const Aggregator& agg, const Merged& m) {
  out->append("\"requests\":");
  AppendJsonInt(out, m.requests);
  out->append(",\"measures\":{");
  for (size_t s = 0; s < m.series.size(); ++s) {
    if (s > 0) out->push_back(',');
    AppendJsonString(out, agg.series()[s].trec_name);
    out->append(":{\"count\":");
    AppendJsonInt(out, m.series[s].count());
    out->append(",\"mean\":");
    AppendJsonDouble(out, m.series[s].count() > 0 ? m.series[s].mean() : NAN);
    out->append(",\"stddev\":");
    AppendJsonDouble(out, m.series[s].count() > 0 ? m.series[s].stddev() : NAN);
    out->push_back('}');
  }
  out->push_back('}');
}

std::vector<std::string> Variants(const Aggregator& agg) {
  std::vector<std::string> variants;
  for (size_t g = 0; g < agg.num_groups(); ++g) {
    variants.push_back(agg.group(g).variant);
  }
  std::sort(variants.begin(), variants.end());
  variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
  return variants;
}

// The window-"all" comparisons of experiment `x`, in row order.
std::vector<const Comparison*> WholeRunRows(const ExperimentMonitor& m,
                                            size_t x) {
  std::vector<const Comparison*> rows;
  for (const Comparison& c : m.comparisons()) {
    if (c.experiment_index == x && c.has_sequential) rows.push_back(&c);
  }
  return rows;
}

void AppendComparison(std::string* out, const Comparison& c) {
  const bool both = c.baseline_arm.count > 0 && c.treatment_arm.count > 0;
  out->append("{\"difference\":");
  AppendJsonDouble(out, both ? c.welch.difference : NAN);
  out->append(",\"ci_lower\":");
  AppendJsonDouble(out, c.welch.interval.lower);
  out->append(",\"ci_upper\":");
  AppendJsonDouble(out, c.welch.interval.upper);
  out->append(",\"p_value\":");
  AppendJsonDouble(out, c.welch.p_value);
  out->append(",\"p_value_bh\":");
  AppendJsonDouble(out, c.quality ? c.p_value_bh : NAN);
  out->append(",\"sequential_ci_lower\":");
  AppendJsonDouble(out, c.sequential.interval().lower);
  out->append(",\"sequential_ci_upper\":");
  AppendJsonDouble(out, c.sequential.interval().upper);
  out->append(",\"sequential_p_value\":");
  AppendJsonDouble(out, c.sequential.p_value());
  out->append(",\"verdict\":");
  if (c.quality) {
    AppendJsonInt(out, c.verdict);
  } else {
    out->append("null");  // Coverage (judged), not quality: no verdict.
  }
  out->append(",\"state\":");
  AppendJsonString(out, c.quality ? VerdictStateName(c.state) : "coverage");
  out->append(",\"baseline_count\":");
  AppendJsonInt(out, c.baseline_arm.count);
  out->append(",\"treatment_count\":");
  AppendJsonInt(out, c.treatment_arm.count);
  if (c.has_adjusted) {  // schema.covariate (docs/statistics.md).
    JsonWriter w;
    WriteAdjustedJson(c.adjusted, &w);
    out->append(",\"adjusted\":").append(w.Take());
  }
  out->push_back('}');
}

// The queries that move a primary comparison most (docs/statistics.md,
// "Query movers"): the first kReplayMovers by |contribution|.
constexpr size_t kReplayMovers = 20;

void AppendQueryMovers(std::string* out,
                       const std::vector<metrics::QueryMover>& movers) {
  out->append(",\"query_movers\":[");
  for (size_t i = 0; i < movers.size() && i < kReplayMovers; ++i) {
    const metrics::QueryMover& m = movers[i];
    if (i > 0) out->push_back(',');
    out->append("{\"query\":");
    AppendJsonString(out, m.query);
    out->append(",\"baseline_count\":");
    AppendJsonInt(out, m.baseline_count);
    out->append(",\"treatment_count\":");
    AppendJsonInt(out, m.treatment_count);
    const std::pair<const char*, double> numbers[] = {
        {"baseline_mean", m.baseline_mean},
        {"treatment_mean", m.treatment_mean},
        {"difference", m.difference},
        {"share", m.share},
        {"contribution", m.contribution},
        {"ci_lower", m.tested ? m.welch.interval.lower : NAN},
        {"ci_upper", m.tested ? m.welch.interval.upper : NAN},
        {"p_value", m.p_value},
        {"p_value_bh", m.p_value_bh}};
    for (const auto& [key, value] : numbers) {
      out->append(",\"");
      out->append(key);
      out->append("\":");
      AppendJsonDouble(out, value);
    }
    out->append(",\"tested\":");
    out->append(m.tested ? "true" : "false");
    out->push_back('}');
  }
  out->push_back(']');
}

// `,"decision":{...}`, the treatment's decision (the same object as
// /api/v1/summary's), appended inside its `treatments.<variant>` object.
void AppendDecision(std::string* out, const DecisionBoard& board, size_t x,
                    const std::string& treatment) {
  for (const Decision& d : board.decisions()) {
    if (d.experiment != x || d.treatment != treatment) continue;
    JsonWriter w;
    WriteDecisionJson(d, &w);
    out->append(",\"decision\":");
    out->append(w.Take());
  }
}

void AppendExperimentsJson(std::string* out, const Pipeline& p) {
  const ExperimentMonitor& m = p.experiments();
  const std::vector<config::ExperimentConfig>& experiments =
      p.config().experiments;
  out->append(",\"experiments\":{");
  for (size_t x = 0; x < experiments.size(); ++x) {
    if (x > 0) out->push_back(',');
    const SrmState& srm = m.srm()[x];
    AppendJsonString(out, experiments[x].name);
    out->append(":{\"baseline\":");
    AppendJsonString(out, experiments[x].baseline);
    out->append(",\"srm\":{\"statistic\":");
    AppendJsonDouble(out, srm.chi_square.statistic);
    out->append(",\"p_value\":");
    AppendJsonDouble(out, srm.chi_square.p_value);
    out->append(",\"sequential_p_value\":");
    AppendJsonDouble(out, srm.sequential.p_value());
    out->append(",\"detected\":");
    out->append(srm.detected ? "true" : "false");
    out->append(",\"counts\":{");
    for (size_t i = 0; i < srm.variants.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendJsonString(out, srm.variants[i]);
      out->push_back(':');
      AppendJsonInt(out, srm.counts[i]);
    }
    out->append("}},\"treatments\":{");
    const std::vector<const Comparison*> rows = WholeRunRows(m, x);
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool first_of_treatment =
          i == 0 || rows[i]->treatment != rows[i - 1]->treatment;
      if (first_of_treatment) {
        if (i > 0) {
          AppendDecision(out, p.decisions(), x, rows[i - 1]->treatment);
          out->append("},");
        }
        AppendJsonString(out, rows[i]->treatment);
        out->append(":{");
      } else {
        out->push_back(',');
      }
      AppendJsonString(out, p.aggregator().series()[rows[i]->series].trec_name);
      out->push_back(':');
      AppendComparison(out, *rows[i]);
      if (rows[i]->primary && p.query_movers().capacity() > 0) {
        out->pop_back();  // The comparison's closing brace.
        AppendQueryMovers(out, p.query_movers().Movers(x, rows[i]->treatment,
                                                       rows[i]->series));
        out->push_back('}');
      }
    }
    if (!rows.empty()) {
      AppendDecision(out, p.decisions(), x, rows.back()->treatment);
      out->push_back('}');
    }
    out->append("}}");
  }
  out->push_back('}');
}

// "[-0.0123, +0.0456]" with signs, or "(no data)".
std::string FormatInterval(const metrics::ConfidenceInterval& ci) {
  if (!std::isfinite(ci.lower) || !std::isfinite(ci.upper)) {
    return "(no data)";
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "[%+.4f, %+.4f]", ci.lower, ci.upper);
  return buf;
}

// The five queries that move each primary comparison most.
void AppendMoversTable(std::string* out, const Pipeline& p, size_t x) {
  if (p.query_movers().capacity() == 0) return;
  char buf[320];
  for (const Comparison* c : WholeRunRows(p.experiments(), x)) {
    if (!c->primary || !c->quality) continue;
    const std::vector<metrics::QueryMover> movers =
        p.query_movers().Movers(x, c->treatment, c->series);
    if (movers.empty()) continue;
    std::snprintf(buf, sizeof(buf),
                  "  queries moving %s's %s most (contribution = traffic "
                  "share x difference):\n",
                  c->treatment.c_str(),
                  p.aggregator().series()[c->series].trec_name.c_str());
    *out += buf;
    for (size_t i = 0; i < movers.size() && i < 5; ++i) {
      const metrics::QueryMover& m = movers[i];
      char p_bh[24] = "untested";
      if (m.tested) std::snprintf(p_bh, sizeof(p_bh), "%.2g", m.p_value_bh);
      std::snprintf(buf, sizeof(buf),
                    "    %-24.24s %+9.4f  diff %+.4f  lists %lld/%lld  "
                    "p(BH) %s\n",
                    m.query.c_str(), m.contribution, m.difference,
                    static_cast<long long>(m.baseline_count),
                    static_cast<long long>(m.treatment_count), p_bh);
      *out += buf;
    }
  }
}

void AppendExperimentsTable(std::string* out, const Pipeline& p) {
  const ExperimentMonitor& m = p.experiments();
  const std::vector<config::ExperimentConfig>& experiments =
      p.config().experiments;
  char buf[320];
  for (size_t x = 0; x < experiments.size(); ++x) {
    const SrmState& srm = m.srm()[x];
    std::string counts;
    for (size_t i = 0; i < srm.variants.size(); ++i) {
      counts += (i > 0 ? " " : "") + srm.variants[i] + "=" +
                std::to_string(srm.counts[i]);
    }
    std::snprintf(buf, sizeof(buf),
                  "\nexperiment %s (baseline %s; %s: %s)\n"
                  "  sample ratio: chi-square p=%.4g, sequential p=%.4g%s\n",
                  experiments[x].name.c_str(), experiments[x].baseline.c_str(),
                  m.units() ? "units" : "lists", counts.c_str(),
                  srm.chi_square.p_value, srm.sequential.p_value(),
                  srm.detected ? "  MISMATCH: do not trust the verdicts" : "");
    *out += buf;
    // The decision first: what a person acts on (docs/statistics.md).
    for (const Decision& d : p.decisions().decisions()) {
      if (d.experiment != x) continue;
      *out += "  decision for " + d.treatment + ": " +
              std::string(DecisionValueName(d.value)) + "\n";
      for (const std::string& reason : d.reasons) {
        *out += "    - " + reason + "\n";
      }
    }
    std::snprintf(buf, sizeof(buf), "  %-8s %-17s %9s %-20s %8s %8s %-20s %s\n",
                  "variant", "measure", "diff", "CI (fixed)", "p", "p(BH)",
                  "CI (always valid)", "verdict");
    *out += buf;
    for (const Comparison* c : WholeRunRows(m, x)) {
      if (!c->quality) continue;  // judged is coverage, not quality.
      const std::string name = p.aggregator().series()[c->series].trec_name +
                               (c->primary ? "*" : "");
      std::snprintf(
          buf, sizeof(buf), "  %-8s %-17s %+9.4f %-20s %8.2g %8.2g %-20s %s\n",
          c->treatment.c_str(), name.c_str(), c->welch.difference,
          FormatInterval(c->welch.interval).c_str(), c->welch.p_value,
          c->p_value_bh, FormatInterval(c->sequential.interval()).c_str(),
          std::string(VerdictStateName(c->state)).c_str());
      *out += buf;
      if (!c->has_adjusted) continue;
      const AdjustedComparison& a = c->adjusted;
      char ratio[32];  // The status says why when not adjusted.
      std::snprintf(ratio, sizeof(ratio), "variance x%.2f", a.variance_ratio);
      std::snprintf(
          buf, sizeof(buf), "  %-8s %-17s %+9.4f %-20s %8.2g %8s %-20s %s\n",
          "", "  adjusted", a.welch.difference,
          FormatInterval(a.welch.interval).c_str(), a.welch.p_value, "",
          FormatInterval(a.sequential.interval()).c_str(),
          a.status == metrics::AdjustmentStatus::kAdjusted
              ? ratio
              : std::string(metrics::AdjustmentStatusName(a.status)).c_str());
      *out += buf;
    }
    AppendMoversTable(out, p, x);
  }
  if (!experiments.empty()) {
    *out += "  (* primary series; CI at statistics.level";
    *out += m.units() ? ", clustered by " + p.config().schema.unit : "";
    *out += m.adjusted() ? "; adjusted rows: regression-adjusted by " +
                               m.covariate() + ", variance vs unadjusted"
                         : "";
    *out += ")\n";
  }
}
}  // namespace

StatusOr<ReplayResult> RunReplay(const config::Config& base,
                                 const ReplayOptions& options,
                                 const Clock* clock) {
  config::Config config = base;
  if (!options.qrels_path.empty()) config.join.qrels_file = options.qrels_path;
  const std::string& dead_letter_path = options.dead_letter_path.empty()
                                            ? config.dead_letter.file
                                            : options.dead_letter_path;
  ReplayResult result;
  if (!dead_letter_path.empty()) {
    auto sink = FileDeadLetterSink::Open(dead_letter_path);
    if (!sink.ok()) return sink.status();
    result.dead_letters = std::move(sink).value();
  }
  auto pipeline =
      Pipeline::Create(config, clock, nullptr, result.dead_letters.get());
  if (!pipeline.ok()) return pipeline.status();
  result.pipeline = std::move(pipeline).value();

  auto results =
      OpenSource(Topic::kResults, options.results_path, config, clock);
  if (!results.ok()) return results.status();
  auto judgments =
      OpenSource(Topic::kJudgments, options.judgments_path, config, clock);
  if (!judgments.ok()) return judgments.status();
  Pipeline* fed = result.pipeline.get();
  Source* sources[] = {results->get(), judgments->get()};
  uint64_t total = 0;
  for (Source* s : sources) total += s != nullptr ? s->size() : 0;
  // Indexing reads every byte once and feeding once more: half each.
  uint64_t indexed = 0;
  std::vector<IndexedEvent> events;
  for (Source* s : sources) {
    if (s == nullptr) continue;
    RW_RETURN_IF_ERROR(
        s->Index(fed, &events, EventLineBounds(config), [&](uint64_t pos) {
          if (options.progress) options.progress((indexed + pos) / 2, total);
        }));
    indexed += s->size();
  }
  // Results come first in `events`, each file in its order: stable sorting
  // keeps both tie rules.
  if (!std::is_sorted(events.begin(), events.end(), FeedsBefore)) {
    std::stable_sort(events.begin(), events.end(), FeedsBefore);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const IndexedEvent& e = events[i];
    sources[e.topic == Topic::kResults ? 0 : 1]->Feed(e, fed);
    if (options.progress && (i & 0x3FFF) == 0) {
      options.progress(total / 2 + total / 2 * i / events.size(), total);
    }
  }
  if (options.progress) options.progress(total, total);
  result.pipeline->FinishAll();
  if (result.dead_letters != nullptr) {
    RW_RETURN_IF_ERROR(result.dead_letters->Close());
  }
  for (const Source* s : sources) {
    if (s != nullptr) RW_RETURN_IF_ERROR(s->CheckUsable());
  }
  return result;
}

std::string FormatReplayJson(const Pipeline& p) {
  const Aggregator& agg = p.aggregator();
  std::string out = "{\"variants\":{";
  bool first = true;
  for (const std::string& v : Variants(agg)) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(&out, v);
    out.push_back(':');
    out.push_back('{');
    const Merged merged =
        MergeGroups(agg, [&](const GroupStats& g) { return g.variant == v; });
    AppendMeasures(&out, agg, merged);
    if (p.tracks_clicks()) AppendFirstClick(&out, merged.first_click);
    out.push_back('}');
  }
  out.append("}");
  const std::vector<std::string>& labels = p.config().aggregation.segments;
  if (!labels.empty()) {
    out.append(",\"groups\":[");
    for (size_t g = 0; g < agg.num_groups(); ++g) {
      const GroupStats& group = agg.group(g);
      if (g > 0) out.push_back(',');
      out.append("{\"variant\":");
      AppendJsonString(&out, group.variant);
      out.append(",\"segments\":{");
      for (size_t l = 0; l < labels.size(); ++l) {
        if (l > 0) out.push_back(',');
        AppendJsonString(&out, labels[l]);
        out.push_back(':');
        AppendJsonString(&out, group.segment_values[l]);
      }
      out.append("},");
      AppendMeasures(&out, agg, MergeGroups(agg, [&](const GroupStats& x) {
        return &x == &group;
      }));
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (!p.config().experiments.empty()) AppendExperimentsJson(&out, p);
  if (!p.config().interleaving.empty()) {
    AppendInterleavingJson(&out, p.interleaving());
  }
  const PipelineCounters& c = p.counters();
  const JoinCounters& j = p.join_counters();
  out.append(",\"events\":{\"results\":");
  AppendJsonInt(&out, c.consumed[0]);
  out.append(",\"judgments\":");
  AppendJsonInt(&out, c.consumed[1]);
  out.append(",\"ignored\":");
  AppendJsonInt(&out, c.ignored[0] + c.ignored[1]);
  out.append(",\"rejected\":{");
  first = true;
  for (int r = 0; r < kNumRejectReasons; ++r) {
    const int64_t n = c.rejected[0][r] + c.rejected[1][r];
    if (n == 0) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(&out, RejectReasonName(static_cast<RejectReason>(r)));
    out.push_back(':');
    AppendJsonInt(&out, n);
  }
  out.append("}");
  if (!p.config().schema.covariate.empty()) {
    // Results events by what their covariate field held (never rejected
    // for it: see CovariateOutcome).
    out.append(",\"covariate\":{");
    for (int o = 0; o < kNumCovariateOutcomes; ++o) {
      if (o > 0) out.push_back(',');
      AppendJsonString(&out,
                       CovariateOutcomeName(static_cast<CovariateOutcome>(o)));
      out.push_back(':');
      AppendJsonInt(&out, c.covariate[static_cast<size_t>(o)]);
    }
    out.append("}");
  }
  const std::pair<const char*, int64_t> counts[] = {
      {"late", j.late_judgments},
      {"late_results", j.late_results},
      {"evicted", j.evicted},
      {"unjudged", j.unjudged},
      {"without_relevant", c.without_relevant},
      {"duplicate_results", j.duplicate_results},
      {"orphaned_judgments", j.orphaned_judgments},
      {"finalized", j.finalized},
      {"scored", c.scored},
      {"table_full", j.table_full},
      {"position_mismatches", j.position_mismatches},
  };
  for (const auto& [name, n] : counts) {
    out.append(",\"");
    out.append(name);
    out.append("\":");
    AppendJsonInt(&out, n);
  }
  out.append("}}\n");
  return out;
}

std::string FormatReplayTable(const Pipeline& p) {
  const Aggregator& agg = p.aggregator();
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%-12s %-16s %10s %10s %10s\n", "variant",
                "measure", "count", "mean", "stddev");
  out += buf;
  for (const std::string& v : Variants(agg)) {
    const Merged m =
        MergeGroups(agg, [&](const GroupStats& g) { return g.variant == v; });
    for (size_t s = 0; s < m.series.size(); ++s) {
      const metrics::RunningStats& st = m.series[s];
      std::snprintf(buf, sizeof(buf), "%-12s %-16s %10lld %10.4f %10.4f\n",
                    v.c_str(), agg.series()[s].trec_name.c_str(),
                    static_cast<long long>(st.count()), st.mean(), st.stddev());
      out += buf;
    }
  }
  const PipelineCounters& c = p.counters();
  const JoinCounters& j = p.join_counters();
  std::snprintf(buf, sizeof(buf),
                "\nevents: results=%lld judgments=%lld rejected=%lld late=%lld "
                "evicted=%lld unjudged=%lld without_relevant=%lld\n",
                static_cast<long long>(c.consumed[0]),
                static_cast<long long>(c.consumed[1]),
                static_cast<long long>(c.rejected_total(Topic::kResults) +
                                       c.rejected_total(Topic::kJudgments)),
                static_cast<long long>(j.late_judgments),
                static_cast<long long>(j.evicted),
                static_cast<long long>(j.unjudged),
                static_cast<long long>(c.without_relevant));
  out += buf;
  AppendExperimentsTable(&out, p);
  AppendInterleavingTable(&out, p.interleaving());
  return out;
}

StatusOr<std::unique_ptr<FileDeadLetterSink>> FileDeadLetterSink::Open(
    const std::string& path) {
  if (path.find('\0') != std::string::npos) {  // fopen would stop at it.
    return Status::IoError("cannot open dead-letter file '" +
                           Printable(path, std::string_view::npos) +
                           "': the name holds a NUL byte");
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return Status::IoError("cannot open dead-letter file '" +
                           Printable(path, std::string_view::npos) +
                           "': " + std::strerror(errno));
  }
  return std::unique_ptr<FileDeadLetterSink>(new FileDeadLetterSink(f, path));
}

FileDeadLetterSink::~FileDeadLetterSink() {
  if (file_ != nullptr) std::fclose(file_);
}

Status FileDeadLetterSink::Close() {
  if (file_ == nullptr) return Status::Ok();
  if (std::fflush(file_) != 0 && first_errno_ == 0) first_errno_ = errno;
  if (std::fclose(file_) != 0 && first_errno_ == 0) first_errno_ = errno;
  file_ = nullptr;
  if (first_errno_ == 0) return Status::Ok();
  return Status::IoError("cannot write the dead-letter file '" +
                         Printable(path_, std::string_view::npos) +
                         "': " + std::strerror(first_errno_) +
                         " (rejected events were lost)");
}

void FileDeadLetterSink::Write(Topic topic, RejectReason reason,
                               std::string_view detail,
                               std::string_view payload, EventOrigin origin) {
  line_.assign("{\"topic\":");
  AppendJsonString(&line_, TopicName(topic));
  line_.append(",\"reason\":");
  AppendJsonString(&line_, RejectReasonName(reason));
  line_.append(",\"detail\":");
  AppendJsonString(&line_, detail);
  line_.append(",\"partition\":");
  AppendJsonInt(&line_, origin.partition());
  line_.append(",\"offset\":");
  AppendJsonInt(&line_, origin.offset);
  line_.append(",\"payload\":");
  AppendJsonString(&line_, payload);
  line_.append("}\n");
  if (file_ != nullptr &&
      std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size() &&
      first_errno_ == 0) {
    first_errno_ = errno != 0 ? errno : EIO;
  }
}

}  // namespace rankwatch::stream
