#include "daemon/stream/judges/judge_monitor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/numeric.h"

namespace rankwatch::stream {

namespace {

// The share of the served top-k docs (k, or the whole list when shorter)
// that have a grade; NaN for an empty list, which has no top k.
double LabelledShare(std::span<const metrics::Grade> ranked, int32_t k) {
  const size_t n = std::min(ranked.size(), static_cast<size_t>(k));
  if (n == 0) return kNaN;
  size_t labelled = 0;
  for (size_t r = 0; r < n; ++r) labelled += ranked[r] >= 0 ? 1 : 0;
  return static_cast<double>(labelled) / static_cast<double>(n);
}

int32_t JudgeIndex(const std::vector<std::string>& names,
                   const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int32_t>(it - names.begin());
}

// Whether a main series depends on the judges' grades.
bool JudgedSeries(const SeriesSpec& s) {
  return s.field < 0 && !metrics::IsClickMeasure(s.measure);
}

SeriesSpec CutSeries(std::string_view name, int32_t cutoff_index,
                     int32_t cutoff, std::string state_key) {
  SeriesSpec s;
  s.measure = metrics::Measure::kJudged;
  s.cutoff_index = cutoff_index;
  s.cutoff = cutoff;
  s.k_label = std::to_string(cutoff);
  s.trec_name = std::string(name) + "_" + s.k_label;
  s.label = s.trec_name;
  s.state_key = std::move(state_key);
  s.name = std::string(name);
  s.higher_is_better = name != "unjudged";
  return s;
}

// The main aggregation without its segments: the monitor groups by
// variant alone.
config::AggregationConfig ByVariant(const config::AggregationConfig& c) {
  config::AggregationConfig out = c;
  out.segments.clear();
  out.segment_values.clear();
  return out;
}

}  // namespace

std::vector<SeriesSpec> BuildJudgeSeries(const config::Config& config,
                                         const std::vector<SeriesSpec>& main,
                                         std::vector<JudgeSeries>* layout) {
  std::vector<SeriesSpec> out;
  layout->clear();
  const std::vector<std::string>& names = config.judges.names;
  const std::vector<int32_t>& cutoffs = config.metrics.cutoffs;
  for (size_t j = 0; j < names.size(); ++j) {
    const int32_t judge = static_cast<int32_t>(j);
    for (size_t m = 0; m < main.size(); ++m) {
      if (!JudgedSeries(main[m])) continue;
      SeriesSpec s = main[m];
      s.state_key = "judge=" + names[j] + "|" + main[m].state_key;
      out.push_back(std::move(s));
      layout->push_back(
          {JudgeSeriesRole::kMeasure, judge, static_cast<int32_t>(m)});
    }
    for (size_t c = 0; c < cutoffs.size(); ++c) {
      out.push_back(
          CutSeries("coverage", static_cast<int32_t>(c), cutoffs[c],
                    "coverage=" + names[j] + "|" + std::to_string(cutoffs[c])));
      layout->push_back({JudgeSeriesRole::kCoverage, judge, -1});
    }
  }
  for (size_t c = 0; c < cutoffs.size(); ++c) {
    out.push_back(CutSeries("unjudged", static_cast<int32_t>(c), cutoffs[c],
                            "unjudged|" + std::to_string(cutoffs[c])));
    layout->push_back({JudgeSeriesRole::kUnjudged, -1, -1});
  }
  const config::JudgesPpiConfig& ppi = config.judges.ppi;
  if (ppi.trusted.empty()) return out;
  constexpr std::pair<JudgeSeriesRole, std::string_view> kRoles[] = {
      {JudgeSeriesRole::kPpiTruth, "truth"},
      {JudgeSeriesRole::kPpiCheap, "cheap"},
      {JudgeSeriesRole::kPpiOther, "other"},
      {JudgeSeriesRole::kPpiCross, "cross"}};
  for (size_t m = 0; m < main.size(); ++m) {
    if (!JudgedSeries(main[m])) continue;
    for (const auto& [role, role_name] : kRoles) {
      SeriesSpec s = main[m];
      s.state_key = "ppi=" + ppi.trusted + "/" + ppi.cheap + "|" +
                    std::string(role_name) + "|" + main[m].state_key;
      out.push_back(std::move(s));
      layout->push_back({role, -1, static_cast<int32_t>(m)});
    }
  }
  return out;
}

std::optional<metrics::PpiMoments> PpiMomentsOf(
    std::span<const JudgeSeries> layout, std::span<const WindowTotals> stats,
    int32_t measure) {
  metrics::PpiMoments m;
  int found = 0;
  for (size_t i = 0; i < layout.size() && i < stats.size(); ++i) {
    if (layout[i].measure != measure) continue;
    const WindowTotals& t = stats[i];
    switch (layout[i].role) {
      case JudgeSeriesRole::kMeasure:
      case JudgeSeriesRole::kCoverage:
      case JudgeSeriesRole::kUnjudged:
        continue;
      case JudgeSeriesRole::kPpiTruth:
        m.n = t.count;
        m.sum_y = t.sum;
        m.sum_yy = t.sum_of_squares;
        break;
      case JudgeSeriesRole::kPpiCheap:
        m.sum_f = t.sum;
        m.sum_ff = t.sum_of_squares;
        break;
      case JudgeSeriesRole::kPpiOther:
        m.others = t.count;
        m.sum_u = t.sum;
        m.sum_uu = t.sum_of_squares;
        break;
      case JudgeSeriesRole::kPpiCross:
        m.sum_yf = t.sum;
        break;
    }
    ++found;
  }
  if (found != 4) return std::nullopt;
  return m;
}

JudgeMonitor::JudgeMonitor(const config::Config& config,
                           const std::vector<SeriesSpec>& main,
                           const metrics::Evaluator& evaluator)
    : judges_(config.judges.names),
      ppi_trusted_(JudgeIndex(judges_, config.judges.ppi.trusted)),
      ppi_cheap_(JudgeIndex(judges_, config.judges.ppi.cheap)),
      zero_relevant_(config.metrics.definitions.zero_relevant),
      evaluator_(evaluator),
      aggregator_(ByVariant(config.aggregation),
                  BuildJudgeSeries(config, main, &layout_)),
      main_(main),
      scores_(judges_.size()),
      values_(layout_.size(), 0.0) {}

void JudgeMonitor::Add(const FinalizedRequest& request,
                       std::string_view variant) {
  const size_t num_judges = std::min(request.judges.size(), judges_.size());
  // Each judge's scores once; a judge that found no relevant doc in a list
  // leaves it out of its measures under zero_relevant: skip, as the main
  // series do with R = 0.
  for (size_t j = 0; j < num_judges; ++j) {
    evaluator_.Evaluate(request.judges[j].ranked, request.judges[j].judged,
                        &scores_[j]);
  }
  const auto value = [&](int32_t judge, int32_t measure) {
    if (judge < 0 || static_cast<size_t>(judge) >= num_judges) return kNaN;
    // A list the judge labelled nothing of is not in its figures (as a
    // topic missing from a qrels file is not in trec_eval's): it has not
    // judged the list, rather than judged every doc non-relevant.
    if (request.judges[static_cast<size_t>(judge)].judged.empty()) return kNaN;
    const metrics::ListScores& scores = scores_[static_cast<size_t>(judge)];
    if (scores.num_rel == 0 &&
        zero_relevant_ == metrics::ZeroRelevantPolicy::kSkip) {
      return kNaN;
    }
    const SeriesSpec& s = main_[static_cast<size_t>(measure)];
    return metrics::MeasureValue(scores, s.measure, s.cutoff_index);
  };
  const bool labelled =
      ppi_trusted_ >= 0 && static_cast<size_t>(ppi_trusted_) < num_judges &&
      !request.judges[static_cast<size_t>(ppi_trusted_)].judged.empty();
  const std::vector<SeriesSpec>& series = aggregator_.series();
  // A measure's four PPI series follow each other, truth first
  // (BuildJudgeSeries): its two judges' values are computed there once.
  double y = kNaN;
  double f = kNaN;
  bool item = false;
  for (size_t i = 0; i < layout_.size(); ++i) {
    const JudgeSeries& l = layout_[i];
    double& v = values_[i];
    switch (l.role) {
      case JudgeSeriesRole::kMeasure:
        v = value(l.judge, l.measure);
        break;
      case JudgeSeriesRole::kCoverage:
        v = static_cast<size_t>(l.judge) < num_judges
                ? LabelledShare(
                      request.judges[static_cast<size_t>(l.judge)].ranked,
                      series[i].cutoff)
                : kNaN;
        break;
      case JudgeSeriesRole::kUnjudged:
        v = 1 - LabelledShare(request.ranked, series[i].cutoff);
        break;
      case JudgeSeriesRole::kPpiTruth:
        y = labelled ? value(ppi_trusted_, l.measure) : kNaN;
        f = value(ppi_cheap_, l.measure);
        item = !std::isnan(y) && !std::isnan(f);
        v = item ? y : kNaN;
        break;
      case JudgeSeriesRole::kPpiCheap:
        v = item ? f : kNaN;
        break;
      case JudgeSeriesRole::kPpiOther:
        v = item ? kNaN : f;
        break;
      case JudgeSeriesRole::kPpiCross:
        v = item ? y * f : kNaN;
        break;
    }
  }
  const uint32_t group = aggregator_.ResolveGroup(variant, {});
  aggregator_.Add(group, request.closed_ms, values_, false, request.shard);
}

void JudgeMonitor::EncodeShard(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kMagic);
  aggregator_.EncodeShard(shard, out);
}

Status JudgeMonitor::DecodeShard(int32_t shard, ByteReader* in,
                                 const CheckpointLimits& limits) {
  Aggregator::StagedShard staged;
  Status status = StageShard(shard, in, limits, &staged);
  if (!status.ok()) {
    aggregator_.DropShard(shard);
    return status;
  }
  CommitShard(std::move(staged));
  return Status::Ok();
}

Status JudgeMonitor::StageShard(int32_t shard, ByteReader* in,
                                const CheckpointLimits& limits,
                                Aggregator::StagedShard* staged) const {
  if (in->Fixed32() != kMagic) {
    return Status::InvalidArgument("not a judge monitor record");
  }
  Status status = aggregator_.StageShard(shard, in, limits, staged);
  if (!status.ok()) {
    return Status::InvalidArgument("judges of shard " + std::to_string(shard) +
                                   ": " + status.message());
  }
  return Status::Ok();
}

void JudgeMonitor::Reconfigure(const config::Config& next,
                               const std::vector<SeriesSpec>& main,
                               const metrics::Evaluator& evaluator) {
  std::vector<JudgeSeries> layout;
  std::vector<SeriesSpec> series = BuildJudgeSeries(next, main, &layout);
  const std::vector<SeriesSpec>& old = aggregator_.series();
  std::vector<int> from(series.size(), -1);
  for (size_t s = 0; s < series.size(); ++s) {
    for (size_t o = 0; o < old.size(); ++o) {
      if (old[o].state_key == series[s].state_key)
        from[s] = static_cast<int>(o);
    }
  }
  aggregator_.Reconfigure(ByVariant(next.aggregation), std::move(series), from);
  layout_ = std::move(layout);
  main_ = main;
  evaluator_ = evaluator;
  zero_relevant_ = next.metrics.definitions.zero_relevant;
  values_.assign(layout_.size(), 0.0);
}

}  // namespace rankwatch::stream
