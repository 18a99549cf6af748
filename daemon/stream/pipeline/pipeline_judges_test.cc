// The pipeline with labels from several judges (issue 29): judgment events
// name their judge, the measures read each doc's grade by judges.combine,
// and a judgment from an unlisted judge is rejected without moving
// anything.
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

class PipelineJudgesTest : public ::testing::Test {
 protected:
  PipelineJudgesTest() {
    config_.join.window = std::chrono::seconds(10);
    config_.metrics.cutoffs = {1, 2};
    config_.metrics.measures = {metrics::Measure::kPrecision};
    config_.judges.names = {"human", "umbrela"};
    config_.judges.default_judge = "umbrela";
  }
  Pipeline& pipeline() {
    if (!pipeline_) {
      auto p = Pipeline::Create(config_, &clock_);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      pipeline_ = std::move(p).value();
    }
    return *pipeline_;
  }
  bool Feed(Topic topic, const std::string& json) {
    return pipeline().OnPayload(topic, json, EventOrigin{0, offset_++});
  }
  // The mean of P@k over every list, or -1 without one.
  double MeanOf(const std::string& trec_name) {
    const Aggregator& agg = pipeline().aggregator();
    for (size_t s = 0; s < agg.series().size(); ++s) {
      if (agg.series()[s].trec_name != trec_name) continue;
      const metrics::RunningStats& st = agg.group(0).all[s];
      return st.count() == 0 ? -1 : st.mean();
    }
    return -1;
  }
  // r1 serves [a, b]; umbrela (by default, no judge field) grades a 1 and
  // b 1; the assessor grades a 0.
  void FeedTheStory() {
    const int64_t t = kNow - 600'000;
    EXPECT_TRUE(Feed(Topic::kResults,
                     "{\"request_id\": \"r1\", \"timestamp\": " +
                         std::to_string(t) + ", \"results\": [\"a\", \"b\"]}"));
    EXPECT_TRUE(Feed(
        Topic::kJudgments,
        "{\"request_id\": \"r1\", \"timestamp\": " + std::to_string(t + 100) +
            ", \"judgments\": [{\"doc_id\": \"a\", \"relevance\": "
            "1}, {\"doc_id\": \"b\", \"relevance\": 1}]}"));
    EXPECT_TRUE(Feed(Topic::kJudgments,
                     "{\"request_id\": \"r1\", \"judge\": \"human\", "
                     "\"timestamp\": " +
                         std::to_string(t + 200) +
                         ", \"doc_id\": \"a\", \"relevance\": 0}"));
  }

  config::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<Pipeline> pipeline_;
  int64_t offset_ = 0;
};

TEST_F(PipelineJudgesTest, TheAssessorsLabelComesFirst) {
  FeedTheStory();
  pipeline().FinishAll();
  // Grades [0 (human over umbrela), 1]: P@1 = 0, P@2 = 1/2.
  EXPECT_DOUBLE_EQ(MeanOf("P_1"), 0.0);
  EXPECT_DOUBLE_EQ(MeanOf("P_2"), 0.5);
}

TEST_F(PipelineJudgesTest, PooledLabelsCombineByTheJoinsRule) {
  config_.judges.combine = config::JudgeCombine::kPooled;
  FeedTheStory();
  pipeline().FinishAll();
  // join.combine max: a is max(1, 0) = 1: P@1 = 1, P@2 = 1.
  EXPECT_DOUBLE_EQ(MeanOf("P_1"), 1.0);
  EXPECT_DOUBLE_EQ(MeanOf("P_2"), 1.0);
}

TEST_F(PipelineJudgesTest, AnUnlistedJudgeIsRejectedAndMovesNothing) {
  FeedTheStory();
  const int64_t watermark = pipeline().watermark_ms();
  // Far later, which would move event time if it counted.
  EXPECT_FALSE(Feed(Topic::kJudgments,
                    "{\"request_id\": \"r1\", \"judge\": \"gpt-5\", "
                    "\"timestamp\": " +
                        std::to_string(kNow) +
                        ", \"doc_id\": \"b\", \"relevance\": 0}"));
  EXPECT_EQ(pipeline()
                .counters()
                .rejected[1][static_cast<size_t>(RejectReason::kUnknownJudge)],
            1);
  EXPECT_EQ(pipeline().watermark_ms(), watermark);
  pipeline().FinishAll();
  EXPECT_DOUBLE_EQ(MeanOf("P_2"), 0.5);  // b keeps umbrela's 1.
}

// Live agreement (issue 29): human and umbrela grade 8 served docs of three
// lists; figures from scikit-learn 1.x on the same pairs,
//   x = [2, 1, 0, 0, 3, 1, 2, 0] (human), y = [2, 1, 1, 0, 3, 2, 2, 0]:
//   cohen_kappa_score(x, y) = 0.6595744680851063,
//   cohen_kappa_score(x, y, weights="linear") = 0.7837837837837838,
//   krippendorff.alpha([x, y], level_of_measurement="ordinal")
//     = 0.8792726550079492.
// The figures survive a checkpoint.
TEST_F(PipelineJudgesTest, AgreementOfTheJudgesLive) {
  const int64_t t = kNow - 600'000;
  const auto list = [&](const std::string& id, int64_t at,
                        const std::string& docs) {
    EXPECT_TRUE(Feed(Topic::kResults,
                     "{\"request_id\": \"" + id + "\", \"timestamp\": " +
                         std::to_string(at) + ", \"results\": " + docs + "}"));
  };
  const auto grade = [&](const std::string& id, int64_t at,
                         const std::string& judge, const std::string& batch) {
    EXPECT_TRUE(Feed(Topic::kJudgments,
                     "{\"request_id\": \"" + id + "\", \"judge\": \"" + judge +
                         "\", \"timestamp\": " + std::to_string(at + 50) +
                         ", \"judgments\": " + batch + "}"));
  };
  const auto doc = [](const std::string& d, int g) {
    return "{\"doc_id\": \"" + d + "\", \"relevance\": " + std::to_string(g) +
           "}";
  };
  list("r1", t, "[\"a\", \"b\", \"c\"]");
  grade("r1", t, "human",
        "[" + doc("a", 2) + ", " + doc("b", 1) + ", " + doc("c", 0) + "]");
  grade("r1", t, "umbrela",
        "[" + doc("a", 2) + ", " + doc("b", 1) + ", " + doc("c", 1) + "]");
  list("r2", t + 1000, "[\"d\", \"e\", \"f\", \"x\"]");
  grade("r2", t + 1000, "human",
        "[" + doc("d", 0) + ", " + doc("e", 3) + ", " + doc("f", 1) + "]");
  grade("r2", t + 1000, "umbrela",
        "[" + doc("d", 0) + ", " + doc("e", 3) + ", " + doc("f", 2) + ", " +
            doc("x", 0) + "]");
  list("r3", t + 2000, "[\"g\", \"h\"]");
  grade("r3", t + 2000, "human", "[" + doc("g", 2) + ", " + doc("h", 0) + "]");
  grade("r3", t + 2000, "umbrela",
        "[" + doc("g", 2) + ", " + doc("h", 0) + "]");
  pipeline().FinishAll();

  const auto check = [](const PipelineSnapshot& s) {
    ASSERT_EQ(s.judges, (std::vector<std::string>{"human", "umbrela"}));
    ASSERT_EQ(s.agreement.size(), 1u);
    const trec::LabelAgreement& a = s.agreement[0];
    EXPECT_EQ(a.first, 0u);
    EXPECT_EQ(a.second, 1u);
    EXPECT_EQ(a.pairs, 8);
    EXPECT_EQ(a.only_first, 0);
    EXPECT_EQ(a.only_second, 1);  // x, graded by umbrela alone.
    ASSERT_TRUE(a.kappa && a.weighted_kappa && a.alpha);
    EXPECT_NEAR(a.kappa->estimate, 0.6595744680851063, 1e-14);
    EXPECT_NEAR(a.weighted_kappa->estimate, 0.7837837837837838, 1e-14);
    EXPECT_NEAR(a.alpha->estimate, 0.8792726550079492, 1e-14);
  };
  PipelineSnapshot live;
  TakeSnapshot(pipeline(), &live);
  check(live);

  std::string record;
  pipeline().EncodeShard(0, &record);
  auto restored = Pipeline::Create(config_, &clock_);
  ASSERT_TRUE(restored.ok());
  ASSERT_TRUE((*restored)->DecodeShard(0, record).ok());
  PipelineSnapshot after;
  TakeSnapshot(**restored, &after);
  check(after);
}

// Qrels mode: the agreement of the judgments table as it stands; a label
// replaced by a later one counts once, with its new grade.
TEST_F(PipelineJudgesTest, AgreementOfTheQrelsTable) {
  config_.join.mode = config::JoinMode::kQrels;
  const auto label = [&](const std::string& doc, int grade,
                         const std::string& judge, int64_t at) {
    EXPECT_FALSE(Feed(Topic::kJudgments,
                      "{\"query_id\": \"q1\", \"judge\": \"" + judge +
                          "\", \"timestamp\": " + std::to_string(at) +
                          ", \"doc_id\": \"" + doc +
                          "\", \"relevance\": " + std::to_string(grade) + "}"));
  };
  const int64_t t = kNow - 600'000;
  label("a", 1, "human", t);
  label("a", 1, "umbrela", t);
  label("b", 0, "human", t);
  label("b", 1, "umbrela", t);
  label("c", 2, "umbrela", t);
  label("a", 2, "human", t + 10);  // Replaces human's 1.
  PipelineSnapshot s;
  TakeSnapshot(pipeline(), &s);
  ASSERT_EQ(s.agreement.size(), 1u);
  EXPECT_EQ(s.agreement[0].pairs, 2);  // a (2, 1) and b (0, 1).
  EXPECT_EQ(s.agreement[0].only_first, 0);
  EXPECT_EQ(s.agreement[0].only_second, 1);  // c.
  // Both pairs disagree, and chance agreement is 0 (human's grades 2 and
  // 0 never meet umbrela's 1): kappa = (0 - 0) / (1 - 0) = 0.
  ASSERT_TRUE(s.agreement[0].kappa.has_value());
  EXPECT_NEAR(s.agreement[0].kappa->estimate, 0.0, 1e-15);
}

// The checkpoint's judge sections are optional and tagged: a record of
// two judges restores under one judge (the agreement section is read and
// dropped) and without judges (both sections dropped), and the figures
// that still apply come back.
TEST_F(PipelineJudgesTest, CheckpointSectionsRestoreUnderFewerJudges) {
  FeedTheStory();
  pipeline().FinishAll();
  std::string record;
  pipeline().EncodeShard(0, &record);
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{"umbrela"}, std::vector<std::string>{}}) {
    config::Config c = config_;
    c.judges.names = names;
    c.judges.default_judge = names.empty() ? "" : names[0];
    auto restored = Pipeline::Create(c, &clock_);
    ASSERT_TRUE(restored.ok());
    const Status status = (*restored)->DecodeShard(0, record);
    ASSERT_TRUE(status.ok()) << status.ToString();
    PipelineSnapshot s;
    TakeSnapshot(**restored, &s);
    EXPECT_EQ(s.groups[0].all[1].mean(), 0.5);  // P_2, as before.
    if (names.empty()) {
      EXPECT_TRUE(s.judge_groups.empty());
      continue;
    }
    // umbrela's own P@2: a 1 and b 1, so 1; its coverage@2 1.
    ASSERT_EQ(s.judge_groups.size(), 1u);
    EXPECT_EQ(s.judge_layout[1],
              (JudgeSeries{JudgeSeriesRole::kMeasure, 0, 1}));
    EXPECT_EQ(s.judge_groups[0].all[1].mean(), 1.0);
  }
}

// A reload that adds a cutoff keeps each judge's series that still mean
// the same; the new ones start empty.
TEST_F(PipelineJudgesTest, ReloadKeepsTheJudgesSeries) {
  FeedTheStory();
  pipeline().FinishAll();
  config::Config next = config_;
  next.metrics.cutoffs = {1, 2, 3};
  ASSERT_TRUE(pipeline().Reconfigure(next).ok());
  PipelineSnapshot s;
  TakeSnapshot(pipeline(), &s);
  // Per judge: P_1, P_2, P_3 then coverage at 1, 2, 3; human first.
  ASSERT_EQ(s.judge_layout[1], (JudgeSeries{JudgeSeriesRole::kMeasure, 0, 1}));
  // human graded a 0 alone: P@2 0 over its one list.
  EXPECT_EQ(s.judge_groups[0].all[1].count(), 1);
  EXPECT_EQ(s.judge_groups[0].all[1].mean(), 0.0);
  EXPECT_EQ(s.judge_groups[0].all[2].count(), 0);  // P_3: new.
}

}  // namespace
}  // namespace rankwatch::stream
