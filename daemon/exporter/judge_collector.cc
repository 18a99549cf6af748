#include "daemon/exporter/judge_collector.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "daemon/exporter/families.h"

namespace rankwatch::exporter {

using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

enum Family { kPairs = 0, kOnly, kEstimate, kLower, kUpper, kNumFamilies };

std::vector<MetricFamily> MakeFamilies() {
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
  return f;
}

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

}  // namespace

void JudgeCollector::Collect(const stream::PipelineSnapshot& snapshot,
                             std::vector<MetricFamily>* out) const {
  if (snapshot.agreement.empty()) return;
  std::vector<MetricFamily> f = MakeFamilies();
  for (const trec::LabelAgreement& a : snapshot.agreement) {
    const std::string& first = snapshot.judges[a.first];
    const std::string& second = snapshot.judges[a.second];
    const Labels pair = {{"first", LabelText(first, 256)},
                         {"second", LabelText(second, 256)}};
    AddGauge(&f[kPairs], pair, static_cast<double>(a.pairs));
    Labels only = pair;
    only.push_back({"judge", LabelText(first, 256)});
    AddGauge(&f[kOnly], only, static_cast<double>(a.only_first));
    only.back().value = LabelText(second, 256);
    AddGauge(&f[kOnly], std::move(only), static_cast<double>(a.only_second));
    AddEstimate(&f, pair, "kappa", a.kappa);
    AddEstimate(&f, pair, "weighted_kappa", a.weighted_kappa);
    AddEstimate(&f, pair, "alpha", a.alpha);
  }
  for (MetricFamily& family : f) out->push_back(std::move(family));
}

}  // namespace rankwatch::exporter
