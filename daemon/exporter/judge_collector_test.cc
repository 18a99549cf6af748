#include "daemon/exporter/judge_collector.h"

#include <string>
#include <vector>

#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"
#include "tests/testing/prometheus_text.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;

// human and umbrela graded 8 items alike, x and y below; human and clicks
// one item, so their statistics are undefined. Figures: scikit-learn 1.x
// cohen_kappa_score(x, y) = 0.6595744680851063 (linear weights:
// 0.7837837837837838), krippendorff.alpha(ordinal) = 0.8792726550079492.
stream::PipelineSnapshot Judged() {
  const std::vector<int> x = {2, 1, 0, 0, 3, 1, 2, 0};
  const std::vector<int> y = {2, 1, 1, 0, 3, 2, 2, 0};
  metrics::GradePairs hu;
  for (size_t i = 0; i < x.size(); ++i) hu.Add(x[i], y[i]);
  metrics::GradePairs hc;
  hc.Add(2, 1);
  stream::PipelineSnapshot s;
  s.judges = {"human", "umbrela", "clicks"};
  s.agreement.push_back(trec::AgreementOf(hu, 0, 1));
  s.agreement.back().first = 0;
  s.agreement.back().second = 1;
  s.agreement.push_back(trec::AgreementOf(hc, 7, 0));
  s.agreement.back().first = 0;
  s.agreement.back().second = 2;
  return s;
}

Scrape Collect(const stream::PipelineSnapshot& snapshot) {
  std::vector<prometheus::MetricFamily> families;
  JudgeCollector().Collect(snapshot, &families);
  return Scrape::Parse(SerializeText(families));
}

TEST(JudgeCollectorTest, ExportsEachPairsAgreement) {
  const Scrape s = Collect(Judged());
  const std::map<std::string, std::string> hu = {{"first", "human"},
                                                 {"second", "umbrela"}};
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", hu), 8);
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "umbrela"}, {"judge", "umbrela"}}),
      1);
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "umbrela"}, {"judge", "human"}}),
      0);
  std::map<std::string, std::string> kappa = hu;
  kappa["statistic"] = "kappa";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", kappa), 0.6595744680851063,
              1e-12);
  EXPECT_LT(s.Sum("rankwatch_judge_agreement_lower", kappa),
            0.6595744680851063);
  EXPECT_LE(s.Sum("rankwatch_judge_agreement_upper", kappa), 1.0);
  std::map<std::string, std::string> weighted = hu;
  weighted["statistic"] = "weighted_kappa";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", weighted), 0.7837837837837838,
              1e-12);
  std::map<std::string, std::string> alpha = hu;
  alpha["statistic"] = "alpha";
  EXPECT_NEAR(s.Sum("rankwatch_judge_agreement", alpha), 0.8792726550079492,
              1e-12);
  // human and clicks: one item, nothing defined but the counts.
  const std::map<std::string, std::string> hc = {{"first", "human"},
                                                 {"second", "clicks"}};
  EXPECT_EQ(s.Sum("rankwatch_judge_agreement_pairs", hc), 1);
  EXPECT_FALSE(s.Has("rankwatch_judge_agreement", hc));
  EXPECT_EQ(
      s.Sum("rankwatch_judge_agreement_only",
            {{"first", "human"}, {"second", "clicks"}, {"judge", "human"}}),
      7);
}

TEST(JudgeCollectorTest, NothingWithoutJudges) {
  EXPECT_TRUE(Collect(stream::PipelineSnapshot()).samples().empty());
}

}  // namespace
}  // namespace rankwatch::exporter
