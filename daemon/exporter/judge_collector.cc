#include "daemon/exporter/judge_collector.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "daemon/exporter/families.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

// Judge names are configured, but a label value has a bound all the same.
constexpr size_t kMaxJudgeLabel = 256;

// The families of one name: a judge's measure (with this process's flow
// as counters), or the coverage or unjudged shares (means only).
struct SeriesFamilies {
  std::string name;
  bool counters = false;
  MetricFamily lists;
  MetricFamily sum;
  MetricFamily squares;
  MeanFamilies means;
};

SeriesFamilies MakeSeriesFamilies(const std::string& name,
                                  const std::string& what, bool counters) {
  SeriesFamilies f;
  f.name = name;
  f.counters = counters;
  if (counters) {
    f.lists = MakeFamily(name + "_lists_total",
                         "Lists this process scored with a value of " + what,
                         MetricType::Counter);
    f.sum = MakeFamily(name + "_sum_total",
                       "Sum of the values of " + what + " this process scored",
                       MetricType::Counter);
    f.squares = MakeFamily(
        name + "_squares_total",
        "Sum of the squared values of " + what + " this process scored",
        MetricType::Counter);
  }
  f.means = MakeMeanFamilies(name, what);
  return f;
}

// The family name of a judge series and what its values are, for HELP.
std::pair<std::string, std::string> NameOf(const stream::JudgeSeries& l,
                                           const stream::SeriesSpec& spec) {
  switch (l.role) {
    case stream::JudgeSeriesRole::kMeasure:
      return {"rankwatch_judge_" + spec.name,
              std::string(metrics::GetMeasureInfo(spec.measure).help) +
                  " under one judge's grades alone (label judge)"};
    case stream::JudgeSeriesRole::kCoverage:
      return {"rankwatch_judge_coverage",
              "the share of the served top-k docs the judge labelled (label "
              "judge)"};
    case stream::JudgeSeriesRole::kUnjudged:
      return {"rankwatch_judge_unjudged",
              "the share of the served top-k docs no judge labelled"};
    case stream::JudgeSeriesRole::kPpiTruth:
    case stream::JudgeSeriesRole::kPpiCheap:
    case stream::JudgeSeriesRole::kPpiOther:
    case stream::JudgeSeriesRole::kPpiCross:
      return {};  // The PPI sums: not exported as series.
  }
  return {};
}

// One rendering of a snapshot.
class JudgeRenderer {
 public:
  explicit JudgeRenderer(const stream::PipelineSnapshot& snapshot)
      : s_(snapshot), window_labels_(WindowLabels(snapshot.windows_ms)) {}

  void CollectSeries(std::vector<MetricFamily>* out) const;
  void CollectPpi(std::vector<MetricFamily>* out) const;
  void CollectCoverageChecks(std::vector<MetricFamily>* out) const;
  void CollectAgreement(std::vector<MetricFamily>* out) const;

 private:
  std::string JudgeLabel(size_t judge) const {
    return judge < s_.judges.size()
               ? LabelText(s_.judges[judge], kMaxJudgeLabel)
               : std::string();
  }
  // A PpiFigure's window: -1 for the whole run.
  std::string WindowLabel(int window) const {
    return window < 0 ? std::string(kWindowAll)
                      : window_labels_[static_cast<size_t>(window)];
  }

  const stream::PipelineSnapshot& s_;
  const std::vector<std::string> window_labels_;  // Parallel to windows_ms.
};

void JudgeRenderer::CollectSeries(std::vector<MetricFamily>* out) const {
  const std::vector<stream::JudgeSeries>& layout = s_.judge_layout;
  const size_t n = std::min(layout.size(), s_.judge_series.size());
  // Each name's families, in the order the layout first names them.
  std::vector<SeriesFamilies> families;
  std::vector<int> family_of(n, -1);
  for (size_t i = 0; i < n; ++i) {
    auto [name, what] = NameOf(layout[i], s_.judge_series[i]);
    if (name.empty()) continue;
    int f = -1;
    for (size_t j = 0; j < families.size(); ++j) {
      if (families[j].name == name) f = static_cast<int>(j);
    }
    if (f < 0) {
      f = static_cast<int>(families.size());
      families.push_back(MakeSeriesFamilies(
          name, what, layout[i].role == stream::JudgeSeriesRole::kMeasure));
    }
    family_of[i] = f;
  }
  for (size_t g = 0; g < s_.judge_groups.size(); ++g) {
    const stream::GroupStats& group = s_.judge_groups[g];
    const stream::GroupFlow* flow =
        g < s_.judge_flows.size() ? &s_.judge_flows[g] : nullptr;
    for (size_t i = 0; i < n && i < group.all.size(); ++i) {
      if (family_of[i] < 0) continue;
      SeriesFamilies& f = families[static_cast<size_t>(family_of[i])];
      Labels labels = {{"variant", group.variant},
                       {"k", s_.judge_series[i].k_label}};
      if (layout[i].judge >= 0) {
        labels.push_back(
            {"judge", JudgeLabel(static_cast<size_t>(layout[i].judge))});
      }
      if (f.counters && flow != nullptr && i < flow->all.size()) {
        const stream::GroupFlow::Sums& sums = flow->all[i];
        AddCounter(&f.lists, labels, static_cast<double>(sums.count));
        AddCounter(&f.sum, labels, sums.sum);
        AddCounter(&f.squares, labels, sums.sum_of_squares);
      }
      AddMeans(&f.means, labels, group, i, s_.window_now_ms, s_.windows_ms,
               window_labels_);
    }
  }
  for (SeriesFamilies& f : families) {
    if (f.counters) {
      out->push_back(std::move(f.lists));
      out->push_back(std::move(f.sum));
      out->push_back(std::move(f.squares));
    }
    PushMeans(&f.means, out);
  }
}

void JudgeRenderer::CollectPpi(std::vector<MetricFamily>* out) const {
  const config::JudgesPpiConfig& ppi = s_.config.judges.ppi;
  if (ppi.trusted.empty()) return;
  enum {
    kEstimate = 0,
    kLower,
    kUpper,
    kLambda,
    kClassical,
    kClassicalLower,
    kClassicalUpper,
    kNaive,
    kLists,
    kNumFamilies
  };
  const std::string of =
      " of the measure's mean under the trusted judge (judges.ppi)";
  std::vector<MetricFamily> f;
  f.push_back(MakeFamily("rankwatch_judge_ppi_estimate",
                         "Prediction-powered estimate" + of +
                             ", from its labels and the cheap judge's",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_lower",
                         "Lower end of the prediction-powered interval" + of,
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_upper",
                         "Upper end of the prediction-powered interval" + of,
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_lambda",
                         "Weight of the cheap judge in the estimate (1: plain "
                         "PPI; judges.ppi.tune: PPI++'s, in [0, 1])",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_classical",
                         "Mean of the trusted judge's labelled lists alone, "
                         "the baseline the estimate should beat",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_classical_lower",
                         "Lower end of the classical mean's interval",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_classical_upper",
                         "Upper end of the classical mean's interval",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_ppi_naive",
                         "Mean of the cheap judge over every list, biased as "
                         "the judge is",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_judge_ppi_lists",
      "Lists behind the estimate: labelled by the trusted judge (labelled "
      "true) and the others with a cheap judge's value (labelled false)",
      MetricType::Gauge));
  for (const stream::PpiFigure& p : s_.ppi) {
    if (p.group >= s_.judge_groups.size() || p.series >= s_.series.size()) {
      continue;
    }
    const stream::SeriesSpec& spec = s_.series[p.series];
    const Labels labels = {{"variant", s_.judge_groups[p.group].variant},
                           {"measure", spec.name},
                           {"k", spec.k_label},
                           {"window", WindowLabel(p.window)}};
    Labels labelled = labels;
    labelled.push_back({"labelled", "true"});
    AddGauge(&f[kLists], labelled, static_cast<double>(p.moments.n));
    labelled.back().value = "false";
    AddGauge(&f[kLists], std::move(labelled),
             static_cast<double>(p.moments.others));
    if (!p.estimate) continue;
    const metrics::PpiMeanEstimate& e = *p.estimate;
    const double values[] = {e.estimate,        e.lower,     e.upper,
                             e.lambda,          e.classical, e.classical_lower,
                             e.classical_upper, e.naive};
    for (size_t v = 0; v < std::size(values); ++v) {
      AddGauge(&f[v], labels, values[v]);
    }
  }
  MetricFamily info = MakeFamily(
      "rankwatch_judge_ppi_info",
      "1, with the judges of the prediction-powered means (judges.ppi)",
      MetricType::Gauge);
  AddGauge(&info,
           {{"trusted", LabelText(ppi.trusted, kMaxJudgeLabel)},
            {"cheap", LabelText(ppi.cheap, kMaxJudgeLabel)}},
           1);
  for (MetricFamily& family : f) out->push_back(std::move(family));
  out->push_back(std::move(info));
}

void JudgeRenderer::CollectCoverageChecks(
    std::vector<MetricFamily>* out) const {
  if (s_.coverage.empty()) return;
  MetricFamily f = MakeFamily(
      "rankwatch_judge_coverage_flagged",
      "1 when the arms' shares of unjudged top-k docs (since start) differ by "
      "more than judges.coverage_tolerance: unjudged docs count as "
      "non-relevant, so the comparison favours the better-judged arm",
      MetricType::Gauge);
  for (const stream::CoverageCheck& c : s_.coverage) {
    if (c.experiment >= s_.config.experiments.size()) continue;
    AddGauge(&f,
             {{"experiment", s_.config.experiments[c.experiment].name},
              {"treatment", c.treatment},
              {"k", CutoffLabel(c.cutoff)}},
             c.flagged ? 1 : 0);
  }
  out->push_back(std::move(f));
}

enum AgreementFamily { kPairs = 0, kOnly, kEstimate, kLower, kUpper };

void AddEstimate(std::vector<MetricFamily>* f, const Labels& pair,
                 const char* statistic,
                 const std::optional<metrics::AgreementEstimate>& e) {
  if (!e || !std::isfinite(e->estimate)) return;
  Labels labels = pair;
  labels.push_back({"statistic", statistic});
  AddGauge(&(*f)[kEstimate], labels, e->estimate);
  if (std::isfinite(e->lower) && std::isfinite(e->upper)) {
    AddGauge(&(*f)[kLower], labels, e->lower);
    AddGauge(&(*f)[kUpper], std::move(labels), e->upper);
  }
}

void JudgeRenderer::CollectAgreement(std::vector<MetricFamily>* out) const {
  if (s_.agreement.empty()) return;
  std::vector<MetricFamily> f;
  f.push_back(MakeFamily("rankwatch_judge_agreement_pairs",
                         "Items (request or query, doc) both judges graded",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_agreement_only",
                         "Items the judge graded and the pair's other did not",
                         MetricType::Gauge));
  f.push_back(MakeFamily(
      "rankwatch_judge_agreement",
      "Agreement of two judges on the items both graded: Cohen's kappa, "
      "weighted kappa (linear), Krippendorff's alpha (ordinal)",
      MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_agreement_lower",
                         "Lower end of the agreement's 95% interval",
                         MetricType::Gauge));
  f.push_back(MakeFamily("rankwatch_judge_agreement_upper",
                         "Upper end of the agreement's 95% interval",
                         MetricType::Gauge));
  MetricFamily refused = MakeFamily(
      "rankwatch_judge_agreement_refused_total",
      "Items the agreement did not count: their pair of grades would have "
      "been one distinct pair more than the 1024 kept per pair of judges",
      MetricType::Counter);
  AddCounter(&refused, {}, static_cast<double>(s_.agreement_refused));
  f.push_back(std::move(refused));
  const auto add = [&](const std::string& window,
                       const std::vector<trec::LabelAgreement>& pairs) {
    for (const trec::LabelAgreement& a : pairs) {
      const std::string first = JudgeLabel(a.first);
      const std::string second = JudgeLabel(a.second);
      const Labels pair = {
          {"first", first}, {"second", second}, {"window", window}};
      AddGauge(&f[kPairs], pair, static_cast<double>(a.pairs));
      Labels only = pair;
      only.push_back({"judge", first});
      AddGauge(&f[kOnly], only, static_cast<double>(a.only_first));
      only.back().value = second;
      AddGauge(&f[kOnly], std::move(only), static_cast<double>(a.only_second));
      AddEstimate(&f, pair, "kappa", a.kappa);
      AddEstimate(&f, pair, "weighted_kappa", a.weighted_kappa);
      AddEstimate(&f, pair, "alpha", a.alpha);
    }
  };
  add(kWindowAll, s_.agreement);
  for (size_t w = 0;
       w < s_.window_agreement.size() && w < window_labels_.size(); ++w) {
    add(window_labels_[w], s_.window_agreement[w]);
  }
  for (MetricFamily& family : f) out->push_back(std::move(family));
}

}  // namespace

void JudgeCollector::Collect(const stream::PipelineSnapshot& snapshot,
                             std::vector<MetricFamily>* out) const {
  const JudgeRenderer r(snapshot);
  r.CollectSeries(out);
  r.CollectPpi(out);
  r.CollectCoverageChecks(out);
  r.CollectAgreement(out);
}

}  // namespace rankwatch::exporter
