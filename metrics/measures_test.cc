#include "metrics/measures.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

constexpr double kTol = 1e-12;
constexpr Grade U = kUnjudged;

// The worked example used throughout (hand calculation):
//   rank:   1  2  3  4  5
//   grade:  2  U  0  1  3        (U = not in the judgments)
//   judgments of the query: {2, 0, 1, 3} retrieved, plus a grade-1 doc not
//   retrieved and a -1 ("in pool, unjudged") doc.
//   R (grade >= 1) = 4; relevant ranks 1, 4, 5; ideal gains 3, 2, 1, 1.
const std::vector<Grade> kRanked = {2, U, 0, 1, 3};
const std::vector<Grade> kJudged = {2, 0, 1, 3, 1, -1};

Evaluator MakeEvaluator(std::vector<int32_t> cutoffs, Definitions d = {}) {
  StatusOr<Evaluator> e = Evaluator::Create(std::move(cutoffs), d);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

TEST(EvaluatorTest, TrecEvalDefinitionsOnWorkedExample) {
  Evaluator e = MakeEvaluator({10, 1, 3, 5});  // Sorted by Create.
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  ASSERT_EQ(e.cutoffs(), (std::vector<int32_t>{1, 3, 5, 10}));
  EXPECT_EQ(s.num_ret, 5);
  EXPECT_EQ(s.num_rel, 4);
  EXPECT_EQ(s.num_rel_ret, 3);
  EXPECT_EQ(s.num_judged_ret, 4);

  // P@k = hits in top k / k, even past the end of the list.
  EXPECT_NEAR(s.at[0].precision, 1.0, kTol);
  EXPECT_NEAR(s.at[1].precision, 1.0 / 3, kTol);
  EXPECT_NEAR(s.at[2].precision, 3.0 / 5, kTol);
  EXPECT_NEAR(s.at[3].precision, 3.0 / 10, kTol);
  // recall@k = hits / R.
  EXPECT_NEAR(s.at[1].recall, 1.0 / 4, kTol);
  EXPECT_NEAR(s.at[2].recall, 3.0 / 4, kTol);
  // AP = (1/1 + 2/4 + 3/5) / R; map_cut@3 = (1/1) / R.
  EXPECT_NEAR(s.average_precision, (1.0 + 2.0 / 4 + 3.0 / 5) / 4, kTol);
  EXPECT_NEAR(s.at[1].average_precision, 1.0 / 4, kTol);
  EXPECT_NEAR(s.at[2].average_precision, (1.0 + 2.0 / 4 + 3.0 / 5) / 4, kTol);
  // Rprec: hits in the top R = 4 (ranks 1 and 4) / R.
  EXPECT_NEAR(s.r_precision, 2.0 / 4, kTol);
  EXPECT_NEAR(s.reciprocal_rank, 1.0, kTol);
  EXPECT_NEAR(s.at[0].success, 1.0, kTol);
  // judged@k: ranks 1, 3, 4, 5 carry a judgment.
  EXPECT_NEAR(s.at[1].judged, 2.0 / 3, kTol);
  EXPECT_NEAR(s.at[2].judged, 4.0 / 5, kTol);
  EXPECT_NEAR(s.at[3].judged, 4.0 / 10, kTol);

  // Linear gain, log2(rank + 1) discount; the ideal list is 3, 2, 1, 1.
  const double dcg5 = 2 / std::log2(2) + 1 / std::log2(5) + 3 / std::log2(6);
  const double idcg5 =
      3 / std::log2(2) + 2 / std::log2(3) + 1 / std::log2(4) + 1 / std::log2(5);
  const double dcg3 = 2 / std::log2(2);
  const double idcg3 = 3 / std::log2(2) + 2 / std::log2(3) + 1 / std::log2(4);
  EXPECT_NEAR(s.at[2].dcg, dcg5, kTol);
  EXPECT_NEAR(s.at[2].ndcg, dcg5 / idcg5, kTol);
  EXPECT_NEAR(s.at[1].ndcg, dcg3 / idcg3, kTol);
  EXPECT_NEAR(s.ndcg, dcg5 / idcg5, kTol);  // All 4 ideal docs fit in 5.
  EXPECT_NEAR(s.at[3].ndcg, dcg5 / idcg5, kTol);
}

TEST(EvaluatorTest, ExponentialGain) {
  Definitions d;
  d.gain = Gain::kExponential;
  Evaluator e = MakeEvaluator({5}, d);
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  // Gains 2^g - 1: grade 3 -> 7, 2 -> 3, 1 -> 1.
  const double dcg = 3 / std::log2(2) + 1 / std::log2(5) + 7 / std::log2(6);
  const double idcg =
      7 / std::log2(2) + 3 / std::log2(3) + 1 / std::log2(4) + 1 / std::log2(5);
  EXPECT_NEAR(s.at[0].ndcg, dcg / idcg, kTol);
  EXPECT_NEAR(s.ndcg, dcg / idcg, kTol);
}

TEST(EvaluatorTest, MinCutoffRelevantDenominators) {
  Definitions d;
  d.recall_denominator = RecallDenominator::kMinCutoffRelevant;
  d.ap_denominator = ApDenominator::kMinCutoffRelevant;
  Evaluator e = MakeEvaluator({1, 3, 10}, d);
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_NEAR(s.at[0].recall, 1.0 / 1, kTol);  // min(1, 4) = 1.
  EXPECT_NEAR(s.at[1].recall, 1.0 / 3, kTol);  // min(3, 4) = 3.
  EXPECT_NEAR(s.at[2].recall, 3.0 / 4, kTol);  // min(10, 4) = 4.
  EXPECT_NEAR(s.at[1].average_precision, 1.0 / 3, kTol);
  EXPECT_NEAR(s.average_precision, (1.0 + 2.0 / 4 + 3.0 / 5) / 4, kTol);
}

TEST(EvaluatorTest, RetrievedRelevantApDenominator) {
  Definitions d;
  d.ap_denominator = ApDenominator::kRetrievedRelevant;
  Evaluator e = MakeEvaluator({3, 5}, d);
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_NEAR(s.at[0].average_precision, 1.0 / 1, kTol);  // One hit in top 3.
  EXPECT_NEAR(s.at[1].average_precision, (1.0 + 2.0 / 4 + 3.0 / 5) / 3, kTol);
  EXPECT_NEAR(s.average_precision, (1.0 + 2.0 / 4 + 3.0 / 5) / 3, kTol);
}

TEST(EvaluatorTest, ThresholdChangesRelevanceButNotGains) {
  Definitions d;
  d.relevance_threshold = 2;  // trec_eval -l 2.
  Evaluator e = MakeEvaluator({5}, d);
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_EQ(s.num_rel, 2);  // Grades 2 and 3.
  EXPECT_EQ(s.num_rel_ret, 2);
  EXPECT_NEAR(s.average_precision, (1.0 + 2.0 / 5) / 2, kTol);
  // -l has no effect on the gains (trec_eval): the grade-1 doc at rank 4 is
  // not relevant any more but still adds gain 1, and the ideal list is
  // unchanged.
  const double dcg = 2 / std::log2(2) + 1 / std::log2(5) + 3 / std::log2(6);
  const double idcg =
      3 / std::log2(2) + 2 / std::log2(3) + 1 / std::log2(4) + 1 / std::log2(5);
  EXPECT_NEAR(s.ndcg, dcg / idcg, kTol);
}

TEST(EvaluatorTest, NoRelevantDocScoresZero) {
  Evaluator e = MakeEvaluator({1, 5});
  ListScores s;
  const std::vector<Grade> ranked = {0, U, 0};
  const std::vector<Grade> judged = {0, 0, -1};
  e.Evaluate(ranked, judged, &s);
  EXPECT_EQ(s.num_rel, 0);
  for (const AtCutoff& a : s.at) {
    EXPECT_EQ(a.precision, 0);
    EXPECT_EQ(a.recall, 0);
    EXPECT_EQ(a.average_precision, 0);
    EXPECT_EQ(a.ndcg, 0);
    EXPECT_EQ(a.reciprocal_rank, 0);
  }
  EXPECT_EQ(s.average_precision, 0);
  EXPECT_EQ(s.r_precision, 0);
  EXPECT_EQ(s.ndcg, 0);
  EXPECT_NEAR(s.at[1].judged, 2.0 / 5, kTol);
}

TEST(EvaluatorTest, EmptyRankingKeepsR) {
  Evaluator e = MakeEvaluator({1});
  ListScores s;
  e.Evaluate({}, kJudged, &s);
  EXPECT_EQ(s.num_ret, 0);
  EXPECT_EQ(s.num_rel, 4);
  EXPECT_EQ(s.at[0].precision, 0);
  EXPECT_EQ(s.ndcg, 0);
}

TEST(EvaluatorTest, ReciprocalRankCutoffApplies) {
  Evaluator e = MakeEvaluator({2, 3});
  ListScores s;
  const std::vector<Grade> ranked = {0, U, 1};
  const std::vector<Grade> judged = {0, 1};
  e.Evaluate(ranked, judged, &s);
  EXPECT_NEAR(s.reciprocal_rank, 1.0 / 3, kTol);
  EXPECT_EQ(s.at[0].reciprocal_rank, 0.0);
  EXPECT_NEAR(s.at[1].reciprocal_rank, 1.0 / 3, kTol);
}

TEST(EvaluatorTest, RPrecisionWhenListShorterThanR) {
  Evaluator e = MakeEvaluator({});
  ListScores s;
  const std::vector<Grade> ranked = {1, 0};
  const std::vector<Grade> judged = {1, 0, 1, 1};
  e.Evaluate(ranked, judged, &s);
  EXPECT_NEAR(s.r_precision, 1.0 / 3, kTol);  // One hit in 2 docs, R = 3.
}

TEST(EvaluatorTest, RejectsBadCutoffsAndThreshold) {
  EXPECT_FALSE(Evaluator::Create({0}, {}).ok());
  EXPECT_FALSE(Evaluator::Create({5, 5}, {}).ok());
  Definitions d;
  d.relevance_threshold = -1;
  EXPECT_FALSE(Evaluator::Create({5}, d).ok());
}

TEST(EvaluatorTest, ReusesBuffersAcrossCalls) {
  Evaluator e = MakeEvaluator({1, 5});
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  const std::vector<Grade> ranked = {0};
  const std::vector<Grade> judged = {0, 1};
  e.Evaluate(ranked, judged, &s);  // A second list must not see the first.
  EXPECT_EQ(s.num_rel, 1);
  EXPECT_EQ(s.at[1].precision, 0);
  EXPECT_EQ(s.ndcg, 0);
}

TEST(MeasureNamesTest, TrecNames) {
  EXPECT_EQ(TrecName(Measure::kPrecision, 5), "P_5");
  EXPECT_EQ(TrecName(Measure::kRecall, 10), "recall_10");
  EXPECT_EQ(TrecName(Measure::kAveragePrecision, std::nullopt), "map");
  EXPECT_EQ(TrecName(Measure::kAveragePrecision, 10), "map_cut_10");
  EXPECT_EQ(TrecName(Measure::kNdcg, std::nullopt), "ndcg");
  EXPECT_EQ(TrecName(Measure::kNdcg, 10), "ndcg_cut_10");
  EXPECT_EQ(TrecName(Measure::kReciprocalRank, std::nullopt), "recip_rank");
  EXPECT_EQ(TrecName(Measure::kReciprocalRank, 10), "recip_rank_10");
  EXPECT_EQ(TrecName(Measure::kRPrecision, std::nullopt), "Rprec");
  EXPECT_EQ(TrecName(Measure::kSuccess, 5), "success_5");
  EXPECT_EQ(TrecName(Measure::kJudged, 10), "judged_10");
  EXPECT_EQ(TrecName(Measure::kCtr, 10), "ctr_10");
  EXPECT_EQ(TrecName(Measure::kClicks, 3), "clicks_3");
  EXPECT_EQ(TrecName(Measure::kAbandonment, std::nullopt), "abandonment");
  EXPECT_EQ(TrecName(Measure::kFirstClickRank, std::nullopt),
            "first_click_rank");
  EXPECT_EQ(TrecName(Measure::kRecipRankFirstClick, std::nullopt),
            "recip_rank_first_click");
  EXPECT_EQ(TrecName(Measure::kSpearman, std::nullopt), "spearman");
  EXPECT_EQ(TrecName(Measure::kKendallTau, std::nullopt), "kendall_tau");
}

TEST(MeasureNamesTest, ParseRoundTrips) {
  for (Measure m : kAllMeasures) {
    EXPECT_EQ(ParseMeasure(MeasureName(m)), m);
  }
  EXPECT_EQ(ParseGain("exponential"), Gain::kExponential);
  EXPECT_EQ(ParseApDenominator("retrieved_relevant"),
            ApDenominator::kRetrievedRelevant);
  EXPECT_EQ(ParseRecallDenominator("min_k_relevant"),
            RecallDenominator::kMinCutoffRelevant);
  EXPECT_EQ(ParseZeroRelevantPolicy("skip"), ZeroRelevantPolicy::kSkip);
  EXPECT_FALSE(ParseMeasure("P").has_value());
  EXPECT_EQ(ParseMeasure("ctr"), Measure::kCtr);
  EXPECT_EQ(ParseMeasure("clicks"), Measure::kClicks);
  EXPECT_EQ(ParseMeasure("abandonment"), Measure::kAbandonment);
  EXPECT_EQ(ParseMeasure("first_click_rank"), Measure::kFirstClickRank);
  EXPECT_EQ(ParseMeasure("recip_rank_first_click"),
            Measure::kRecipRankFirstClick);
  EXPECT_EQ(ParseMeasure("spearman"), Measure::kSpearman);
  EXPECT_EQ(ParseMeasure("kendall_tau"), Measure::kKendallTau);
  EXPECT_EQ(MeasureName(Measure::kSpearman), "spearman");
  EXPECT_EQ(MeasureName(Measure::kKendallTau), "kendall_tau");
}

// kMeasureTable is where a new measure is added; these are the mistakes a
// copied row brings in that the static_asserts in measures.h cannot see.
TEST(MeasureTableTest, RowsAreDistinctAndComplete) {
  std::set<std::string_view> names;
  std::set<std::string_view> printed;
  std::set<std::string_view> helps;
  for (const MeasureInfo& info : kMeasureTable) {
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(names.insert(info.name).second) << "rankwatch name twice";
    EXPECT_TRUE(printed.insert(info.trec_name).second) << "printed twice";
    EXPECT_TRUE(helps.insert(info.help).second) << "help text twice";
    EXPECT_FALSE(info.help.empty());
    // Every series has a name and a printed name: a cut series prints as
    // trec_cut_name_k.
    EXPECT_TRUE(HasCutoffVariant(info.measure) ||
                HasUncutVariant(info.measure));
    EXPECT_EQ(HasCutoffVariant(info.measure), !info.trec_cut_name.empty());
    // A trec_eval family exists only for a series the measure has.
    EXPECT_TRUE(HasCutoffVariant(info.measure) || info.trec_cut_family.empty());
    EXPECT_TRUE(HasUncutVariant(info.measure) || info.trec_family.empty());
    // A spelling names only series the measure has.
    for (const std::array<MeasureSpelling, 2>* spellings :
         {&info.trec_spellings, &info.ir_spellings}) {
      for (const MeasureSpelling& s : *spellings) {
        if (s.name.empty()) continue;
        EXPECT_TRUE(s.cut || s.uncut) << s.name;
        EXPECT_TRUE(!s.cut || HasCutoffVariant(info.measure)) << s.name;
        EXPECT_TRUE(!s.uncut || HasUncutVariant(info.measure)) << s.name;
      }
    }
  }
  // The hand count: 15 measures of 15 distinct names.
  EXPECT_EQ(names.size(), 15u);
}

// Every enumerator has exactly one row: counted by hand (kPrecision ...
// kKendallTau are 15), and each value 0..14 found once among the rows.
TEST(MeasureTableTest, EveryMeasureHasExactlyOneRow) {
  constexpr size_t kEnumerators = 15;  // By hand, from measures.h.
  EXPECT_EQ(static_cast<size_t>(Measure::kKendallTau) + 1, kEnumerators);
  ASSERT_EQ(kMeasureTable.size(), kEnumerators);
  for (size_t i = 0; i < kEnumerators; ++i) {
    const Measure m = static_cast<Measure>(i);
    int rows = 0;
    for (const MeasureInfo& info : kMeasureTable) rows += info.measure == m;
    EXPECT_EQ(rows, 1) << "enumerator " << i;
    EXPECT_EQ(&GetMeasureInfo(m), &kMeasureTable[i]);
  }
}

// The predicates, names and help texts the table yields, against what
// docs/metrics.md says of six measures, written out by hand: one of each
// kind (cut and uncut relevance, coverage, cut click, lower-is-better
// click, rank correlation).
TEST(MeasureTableTest, DerivedFactsOfSixMeasures) {
  struct Expected {
    Measure measure;
    std::string_view name;
    bool cut, uncut, higher_better, quality, click, every_list, correlation;
    // TrecName(m, 10) (an uncut-only measure prints its one name at any
    // k) and TrecName(m, nullopt), for a measure with an uncut series.
    std::string_view printed_at_10;
    std::optional<std::string_view> printed_uncut;
    std::string_view help_starts;
  };
  const Expected expected[] = {
      {Measure::kNdcg, "ndcg", true, true, true, true, false, true, false,
       "ndcg_cut_10", "ndcg", "nDCG at k"},
      {Measure::kPrecision, "precision", true, false, true, true, false, true,
       false, "P_10", std::nullopt, "precision at k"},
      {Measure::kJudged, "judged", true, false, true, false, false, true, false,
       "judged_10", std::nullopt, "fraction of the top k"},
      {Measure::kCtr, "ctr", true, false, true, true, true, true, false,
       "ctr_10", std::nullopt, "click-through at k"},
      {Measure::kFirstClickRank, "first_click_rank", false, true, false, true,
       true, false, false, "first_click_rank", "first_click_rank",
       "rank of the first clicked doc"},
      {Measure::kKendallTau, "kendall_tau", false, true, true, true, false,
       false, true, "kendall_tau", "kendall_tau", "Kendall's tau-b"},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(MeasureName(e.measure), e.name);
    EXPECT_EQ(ParseMeasure(e.name), e.measure);
    EXPECT_EQ(HasCutoffVariant(e.measure), e.cut);
    EXPECT_EQ(HasUncutVariant(e.measure), e.uncut);
    EXPECT_EQ(HigherIsBetter(e.measure), e.higher_better);
    EXPECT_EQ(IsQualityMeasure(e.measure), e.quality);
    EXPECT_EQ(IsClickMeasure(e.measure), e.click);
    EXPECT_EQ(DefinedForEveryList(e.measure), e.every_list);
    EXPECT_EQ(IsRankCorrelationMeasure(e.measure), e.correlation);
    EXPECT_EQ(TrecName(e.measure, 10), e.printed_at_10);
    if (e.printed_uncut) {
      EXPECT_EQ(TrecName(e.measure, std::nullopt), *e.printed_uncut);
    }
    EXPECT_TRUE(GetMeasureInfo(e.measure).help.starts_with(e.help_starts))
        << GetMeasureInfo(e.measure).help;
  }
}

TEST(MeasureNamesTest, ClickMeasuresAreOptIn) {
  // The defaults are the relevance measures; every measure is parseable.
  // Opt-in: the five click measures and the two rank correlations.
  EXPECT_EQ(kAllMeasures.size(), kDefaultMeasures.size() + 7);
  for (Measure m : kDefaultMeasures) {
    EXPECT_NE(m, Measure::kCtr);
    EXPECT_NE(m, Measure::kClicks);
    EXPECT_NE(m, Measure::kAbandonment);
    EXPECT_NE(m, Measure::kFirstClickRank);
    EXPECT_NE(m, Measure::kRecipRankFirstClick);
    EXPECT_FALSE(IsRankCorrelationMeasure(m)) << MeasureName(m);
  }
  // Cut or uncut: ctr and clicks at cutoffs only, the other three uncut.
  EXPECT_TRUE(HasCutoffVariant(Measure::kCtr));
  EXPECT_FALSE(HasUncutVariant(Measure::kCtr));
  EXPECT_TRUE(HasCutoffVariant(Measure::kClicks));
  EXPECT_FALSE(HasUncutVariant(Measure::kClicks));
  for (Measure m : {Measure::kAbandonment, Measure::kFirstClickRank,
                    Measure::kRecipRankFirstClick}) {
    EXPECT_FALSE(HasCutoffVariant(m)) << MeasureName(m);
    EXPECT_TRUE(HasUncutVariant(m)) << MeasureName(m);
  }
}

// Click lists (impression mode): the judgments of a request are its clicks,
// grade 1 = clicked (>= the threshold 1), 0 = shown and not clicked,
// U = no judgment. Hand calculation for
//   rank:  1  2  3  4  5
//   grade: U  1  0  1  U      clicks at ranks 2 and 4.
//   ctr@1 = 0, ctr@3 = ctr@5 = ctr@10 = 1;
//   clicks@1 = 0, clicks@3 = 1, clicks@5 = clicks@10 = 2;
//   abandonment = 0; first_click_rank = 2; recip_rank_first_click = 1/2.
TEST(ClickMeasuresTest, HandCalculatedOnClickedList) {
  Evaluator e = MakeEvaluator({1, 3, 5, 10});
  ListScores s;
  e.Evaluate(std::vector<Grade>{U, 1, 0, 1, U}, std::vector<Grade>{1, 0, 1},
             &s);
  const std::vector<double> ctr = {0, 1, 1, 1};
  const std::vector<double> clicks = {0, 1, 2, 2};
  for (int ci = 0; ci < 4; ++ci) {
    EXPECT_EQ(MeasureValue(s, Measure::kCtr, ci), ctr[ci]) << ci;
    EXPECT_EQ(MeasureValue(s, Measure::kClicks, ci), clicks[ci]) << ci;
  }
  EXPECT_EQ(MeasureValue(s, Measure::kAbandonment, -1), 0.0);
  EXPECT_EQ(MeasureValue(s, Measure::kFirstClickRank, -1), 2.0);
  EXPECT_NEAR(MeasureValue(s, Measure::kRecipRankFirstClick, -1), 0.5, kTol);
}

// No click: ctr 0 and clicks 0 at every k, abandonment 1, reciprocal 0, and
// first_click_rank undefined (NaN), which aggregators leave out of its mean.
TEST(ClickMeasuresTest, AbandonedList) {
  Evaluator e = MakeEvaluator({1, 3});
  ListScores s;
  e.Evaluate(std::vector<Grade>{U, 0, U}, std::vector<Grade>{0}, &s);
  for (int ci = 0; ci < 2; ++ci) {
    EXPECT_EQ(MeasureValue(s, Measure::kCtr, ci), 0.0);
    EXPECT_EQ(MeasureValue(s, Measure::kClicks, ci), 0.0);
  }
  EXPECT_EQ(MeasureValue(s, Measure::kAbandonment, -1), 1.0);
  EXPECT_TRUE(std::isnan(MeasureValue(s, Measure::kFirstClickRank, -1)));
  EXPECT_FALSE(IsDefinedValue(MeasureValue(s, Measure::kFirstClickRank, -1)));
  EXPECT_EQ(MeasureValue(s, Measure::kRecipRankFirstClick, -1), 0.0);
}

// The relevance threshold decides what is a click: with threshold 2 only
// grade 2 counts (e.g. a dwell-time click), here at rank 3 of {1, 0, 2}.
TEST(ClickMeasuresTest, ThresholdDefinesAClick) {
  Definitions d;
  d.relevance_threshold = 2;
  Evaluator e = MakeEvaluator({2, 3}, d);
  ListScores s;
  e.Evaluate(std::vector<Grade>{1, 0, 2}, std::vector<Grade>{1, 0, 2}, &s);
  EXPECT_EQ(MeasureValue(s, Measure::kCtr, 0), 0.0);  // ctr@2
  EXPECT_EQ(MeasureValue(s, Measure::kCtr, 1), 1.0);  // ctr@3
  EXPECT_EQ(MeasureValue(s, Measure::kClicks, 1), 1.0);
  EXPECT_EQ(MeasureValue(s, Measure::kAbandonment, -1), 0.0);
  EXPECT_EQ(MeasureValue(s, Measure::kFirstClickRank, -1), 3.0);
  EXPECT_NEAR(MeasureValue(s, Measure::kRecipRankFirstClick, -1), 1.0 / 3,
              kTol);
}

// Under binary click relevance recip_rank_first_click is reciprocal_rank
// (trec_eval recip_rank), ctr_k is success_k, clicks_k is P_k * k and
// abandonment is 1 - ctr over the whole list; first_click_rank is the
// reciprocal of recip_rank whenever there is a click. Checked on random click
// lists (fixed seed).
TEST(ClickMeasuresTest, AgreeWithRelevanceMeasuresOnRandomLists) {
  constexpr uint64_t kSeed = 20261122;
  Xoshiro256 rng(kSeed);
  Evaluator e = MakeEvaluator({1, 3, 10});
  ListScores s;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Grade> ranked;
    std::vector<Grade> judged;
    for (int64_t n = rng.Between(0, 12); n > 0; --n) {
      const Grade g = static_cast<Grade>(rng.Between(-1, 1));  // U, 0, 1.
      ranked.push_back(g);
      if (g >= 0) judged.push_back(g);
    }
    e.Evaluate(ranked, judged, &s);
    SCOPED_TRACE(testing::Message() << "seed " << kSeed << " trial " << trial);
    const double rr = MeasureValue(s, Measure::kReciprocalRank, -1);
    EXPECT_EQ(MeasureValue(s, Measure::kRecipRankFirstClick, -1), rr);
    const double first = MeasureValue(s, Measure::kFirstClickRank, -1);
    if (rr > 0) {
      EXPECT_NEAR(first, 1.0 / rr, 1e-9);
    } else {
      EXPECT_TRUE(std::isnan(first));
    }
    EXPECT_EQ(MeasureValue(s, Measure::kAbandonment, -1), rr > 0 ? 0.0 : 1.0);
    for (int ci = 0; ci < 3; ++ci) {
      EXPECT_EQ(MeasureValue(s, Measure::kCtr, ci),
                MeasureValue(s, Measure::kSuccess, ci));
      EXPECT_NEAR(MeasureValue(s, Measure::kClicks, ci),
                  MeasureValue(s, Measure::kPrecision, ci) * e.cutoffs()[ci],
                  1e-9);
    }
  }
}

TEST(MeasureTraitsTest, DirectionAndQuality) {
  // Every measure is higher-is-better but abandonment and first_click_rank
  // (fewer abandoned requests, a first click nearer the top); judged rates
  // judgment coverage, not ranking quality, so it is the one measure left
  // out of verdicts, multiple-testing families and regression alerts.
  for (Measure m : kAllMeasures) {
    EXPECT_EQ(HigherIsBetter(m),
              m != Measure::kAbandonment && m != Measure::kFirstClickRank)
        << MeasureName(m);
    EXPECT_EQ(DefinedForEveryList(m), m != Measure::kFirstClickRank &&
                                          m != Measure::kSpearman &&
                                          m != Measure::kKendallTau)
        << MeasureName(m);
    EXPECT_EQ(IsQualityMeasure(m), m != Measure::kJudged) << MeasureName(m);
  }
  EXPECT_TRUE(IsQualityMeasure(Measure::kNdcg));
  EXPECT_TRUE(IsQualityMeasure(Measure::kPrecision));
  EXPECT_FALSE(IsQualityMeasure(Measure::kJudged));
}

// Rank correlation of a list's order with its grades: x = -rank and
// y = grade over the judged retrieved docs (grade >= 0). Expected values:
// SciPy 1.10.1 (/tmp/venv-stats), for the x and y written beside each case,
//   float(scipy.stats.spearmanr(x, y).statistic)
//   float(scipy.stats.kendalltau(x, y).statistic)   # variant='b'
// (script /tmp/rc/ref.py of the session that wrote them). Nothing runs
// Python at test time.
ListScores CorrelationScores(const std::vector<Grade>& ranked) {
  Evaluator e = MakeEvaluator({1, 3});
  e.set_rank_correlations(true);
  std::vector<Grade> judged;
  for (Grade g : ranked) {
    if (g >= 0) judged.push_back(g);
  }
  ListScores s;
  e.Evaluate(ranked, judged, &s);
  return s;
}

void ExpectCorrelations(const std::vector<Grade>& ranked, double spearman,
                        double kendall_tau) {
  const ListScores s = CorrelationScores(ranked);
  EXPECT_NEAR(MeasureValue(s, Measure::kSpearman, -1), spearman, kTol);
  EXPECT_NEAR(MeasureValue(s, Measure::kKendallTau, -1), kendall_tau, kTol);
}

void ExpectUndefined(const std::vector<Grade>& ranked) {
  const ListScores s = CorrelationScores(ranked);
  EXPECT_FALSE(IsDefinedValue(MeasureValue(s, Measure::kSpearman, -1)));
  EXPECT_FALSE(IsDefinedValue(MeasureValue(s, Measure::kKendallTau, -1)));
}

TEST(RankCorrelationMeasuresTest, UnjudgedDocsAreLeftOut) {
  // The worked example {2, U, 0, 1, 3}: x = [-1, -3, -4, -5],
  // y = [2, 0, 1, 3]; spearmanr -0.39999999999999997,
  // kendalltau -0.3333333333333334.
  ExpectCorrelations(kRanked, -0.39999999999999997, -0.3333333333333334);
  // A negative grade other than kUnjudged is unjudged too.
  ExpectCorrelations({2, -3, 0, 1, 3}, -0.39999999999999997,
                     -0.3333333333333334);
}

TEST(RankCorrelationMeasuresTest, TiedGrades) {
  // {3, 1, U, 1, 0, U, 2, 0, 1}: x = [-1, -2, -4, -5, -7, -8, -9],
  // y = [3, 1, 1, 0, 2, 0, 1]; spearmanr 0.4490887131390719,
  // kendalltau 0.3704792868174742.
  ExpectCorrelations({3, 1, U, 1, 0, U, 2, 0, 1}, 0.4490887131390719,
                     0.3704792868174742);
  // The ideal order with tied grades {3, 2, 2, 1, 0} is below 1: tau-b and
  // rho count the tie against the order's strict ranking. x = [-1, ..., -5],
  // y = [3, 2, 2, 1, 0]; spearmanr 0.9746794344808964,
  // kendalltau 0.9486832980505137 (= sqrt(9/10) by hand: P = 10, one pair
  // tied in y, C = 9, D = 0).
  ExpectCorrelations({3, 2, 2, 1, 0}, 0.9746794344808964, 0.9486832980505137);
}

TEST(RankCorrelationMeasuresTest, ExactlyTwoJudgedDocs) {
  // {U, 0, U, 2}: x = [-2, -4], y = [0, 2]; spearmanr -0.9999999999999999,
  // kendalltau -1.0.
  ExpectCorrelations({U, 0, U, 2}, -1.0, -1.0);
  // {1, 0}: x = [-1, -2], y = [1, 0]; spearmanr 0.9999999999999999,
  // kendalltau 1.0.
  ExpectCorrelations({1, 0}, 1.0, 1.0);
}

TEST(RankCorrelationMeasuresTest, ReversedOrderIsMinusOne) {
  // {0, 1, 2, 3}: x = [-1, -2, -3, -4], y = [0, 1, 2, 3]; spearmanr -1.0,
  // kendalltau -1.0.
  ExpectCorrelations({0, 1, 2, 3}, -1.0, -1.0);
  ExpectCorrelations({3, 2, 1, 0}, 1.0, 1.0);  // By symmetry.
}

TEST(RankCorrelationMeasuresTest, UndefinedCases) {
  // {1, U, 1, 1}: x = [-1, -3, -4], y = [1, 1, 1]; SciPy: nan, nan
  // (ConstantInputWarning).
  ExpectUndefined({1, U, 1, 1});
  ExpectUndefined({U, 2});  // One judged doc; SciPy: nan, nan.
  ExpectUndefined({U, U});
  ExpectUndefined({});
  // Undefined for the list, so left out of means; never a made-up 0.
  EXPECT_FALSE(DefinedForEveryList(Measure::kSpearman));
  EXPECT_FALSE(DefinedForEveryList(Measure::kKendallTau));
}

// 1000-doc lists, as a batch run has them. The grades come from a formula
// that ref.py repeats:
//   lcg: s = 12345; for each rank: s = (s * 1103515245 + 12345) % 2**31;
//        grade = (s >> 16) % 6 - 1      (822 judged docs, grades -1..4)
//   sorted: grade = 4 - (4 i) // 1000 if (31 i) % 7 != 0 else -1, i = 0..999
// SciPy: lcg spearmanr -0.06058032008372072, kendalltau -0.04445735289783114;
//        sorted spearmanr 0.9682460999104301, kendalltau 0.8665305221731334.
TEST(RankCorrelationMeasuresTest, ThousandDocLists) {
  std::vector<Grade> lcg;
  uint64_t state = 12345;
  for (int i = 0; i < 1000; ++i) {
    state = (state * 1103515245 + 12345) % (uint64_t{1} << 31);
    lcg.push_back(static_cast<Grade>((state >> 16) % 6) - 1);
  }
  ExpectCorrelations(lcg, -0.06058032008372072, -0.04445735289783114);
  std::vector<Grade> sorted;
  for (int i = 0; i < 1000; ++i) {
    sorted.push_back((31 * i) % 7 != 0 ? 4 - (4 * i) / 1000 : U);
  }
  ExpectCorrelations(sorted, 0.9682460999104301, 0.8665305221731334);
}

TEST(RankCorrelationMeasuresTest, OffUnlessAskedAndUncutOnly) {
  Evaluator e = MakeEvaluator({1, 3});
  EXPECT_FALSE(e.rank_correlations());
  ListScores s;
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_TRUE(std::isnan(s.spearman));
  EXPECT_TRUE(std::isnan(s.kendall_tau));
  e.set_rank_correlations(true);
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_NEAR(s.spearman, -0.39999999999999997, kTol);
  // A scorer reusing its ListScores: turned off, the values do not linger.
  e.set_rank_correlations(false);
  e.Evaluate(kRanked, kJudged, &s);
  EXPECT_TRUE(std::isnan(s.spearman));
  for (Measure m : {Measure::kSpearman, Measure::kKendallTau}) {
    EXPECT_TRUE(IsRankCorrelationMeasure(m));
    EXPECT_FALSE(HasCutoffVariant(m)) << MeasureName(m);
    EXPECT_TRUE(HasUncutVariant(m)) << MeasureName(m);
    EXPECT_TRUE(HigherIsBetter(m)) << MeasureName(m);
    EXPECT_TRUE(IsQualityMeasure(m)) << MeasureName(m);
    EXPECT_FALSE(IsClickMeasure(m)) << MeasureName(m);
  }
}

// The engine's values are KendallTauB's and SpearmanRho's on the same
// x = -rank, y = grade, on random lists with many ties (fixed seed).
TEST(RankCorrelationMeasuresTest, AgreeWithPairedCorrelations) {
  constexpr uint64_t kSeed = 20260613;
  Xoshiro256 rng(kSeed);
  Evaluator e = MakeEvaluator({5});
  e.set_rank_correlations(true);
  ListScores s;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(testing::Message() << "seed " << kSeed << " trial " << trial);
    std::vector<Grade> ranked;
    std::vector<double> x;
    std::vector<double> y;
    for (int64_t n = rng.Between(0, 40); n > 0; --n) {
      const Grade g = static_cast<Grade>(rng.Between(-1, 3));
      ranked.push_back(g);
      if (g >= 0) {
        x.push_back(-static_cast<double>(ranked.size()));
        y.push_back(g);
      }
    }
    e.Evaluate(ranked, ranked, &s);
    const std::optional<RankCorrelation> rho = SpearmanRho(x, y);
    const std::optional<RankCorrelation> tau = KendallTauB(x, y);
    ASSERT_EQ(rho.has_value(), IsDefinedValue(s.spearman));
    ASSERT_EQ(tau.has_value(), IsDefinedValue(s.kendall_tau));
    if (rho) {
      EXPECT_EQ(s.spearman, rho->coefficient);
    }
    if (tau) {
      EXPECT_EQ(s.kendall_tau, tau->coefficient);
    }
  }
}

}  // namespace
}  // namespace rankwatch::metrics
