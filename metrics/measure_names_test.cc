// The three spellings of measure names. Expected resolutions are written by
// hand from trec_eval 10.0's measure list (its -m families: P, recall,
// map, map_cut, ndcg, ndcg_cut, recip_rank, Rprec, success, bpref, ...) and
// ir_measures' documentation (https://ir-measur.es/en/latest/measures.html:
// nDCG@k is trec_eval's ndcg_cut.k, AP@k its map_cut.k, RR@k the
// reciprocal rank cut at k, R@k recall.k, Judged@k the judged share of the
// top k), not from the tables of measure_names.cc.
#include "metrics/measure_names.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::metrics {
namespace {

struct Want {
  std::string_view text;
  std::optional<Measure> measure;
  std::optional<int32_t> cutoff;
  std::string_view trec_spec;  // What `rankwatch eval -m` computes.
  MeasureDialect dialect;
};

void ExpectResolves(const Want& w) {
  SCOPED_TRACE(std::string(w.text));
  StatusOr<MeasureRef> ref = ParseMeasureName(w.text);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(ref->measure, w.measure);
  EXPECT_EQ(ref->cutoff, w.cutoff);
  EXPECT_EQ(ref->TrecSpec(), w.trec_spec);
  EXPECT_EQ(ref->dialect, w.dialect);
}

constexpr auto kTrec = MeasureDialect::kTrecEval;
constexpr auto kRw = MeasureDialect::kRankwatch;
constexpr auto kIr = MeasureDialect::kIrMeasures;

TEST(MeasureSpellingsTest, TrecEvalSpellings) {
  const std::vector<Want> cases = {
      {"ndcg_cut.10", Measure::kNdcg, 10, "ndcg_cut.10", kTrec},
      {"P.5", Measure::kPrecision, 5, "P.5", kTrec},
      {"recall.10", Measure::kRecall, 10, "recall.10", kTrec},
      {"map", Measure::kAveragePrecision, std::nullopt, "map", kTrec},
      {"map_cut.10", Measure::kAveragePrecision, 10, "map_cut.10", kTrec},
      {"recip_rank", Measure::kReciprocalRank, std::nullopt, "recip_rank",
       kTrec},
      {"success.10", Measure::kSuccess, 10, "success.10", kTrec},
      {"Rprec", Measure::kRPrecision, std::nullopt, "Rprec", kTrec},
      // "ndcg" is rankwatch's and trec_eval's name alike: the first table
      // that has it answers, with the same meaning.
      {"ndcg", Measure::kNdcg, std::nullopt, "ndcg", kRw},
      // The printed form, as eval, replay and the status page print it.
      {"ndcg_cut_10", Measure::kNdcg, 10, "ndcg_cut.10", kTrec},
      {"P_10", Measure::kPrecision, 10, "P.10", kTrec},
      {"map_cut_100", Measure::kAveragePrecision, 100, "map_cut.100", kTrec},
      {"recip_rank_10", Measure::kReciprocalRank, 10, "recip_rank.10", kTrec},
      {"success_1", Measure::kSuccess, 1, "success.1", kTrec},
      {"judged_10", Measure::kJudged, 10, "judged.10", kTrec},
      // Leading zeros read as atol reads them.
      {"P.010", Measure::kPrecision, 10, "P.10", kTrec},
      // Click measures: printed names, but no trec_eval family.
      {"ctr_5", Measure::kCtr, 5, "", kTrec},
      {"recip_rank_first_click", Measure::kRecipRankFirstClick, std::nullopt,
       "", kRw},
  };
  for (const Want& w : cases) ExpectResolves(w);
}

TEST(MeasureSpellingsTest, RankwatchSpellings) {
  const std::vector<Want> cases = {
      {"ndcg@10", Measure::kNdcg, 10, "ndcg_cut.10", kRw},
      {"ndcg@all", Measure::kNdcg, std::nullopt, "ndcg", kRw},
      {"precision@5", Measure::kPrecision, 5, "P.5", kRw},
      {"recall@10", Measure::kRecall, 10, "recall.10", kRw},
      {"reciprocal_rank", Measure::kReciprocalRank, std::nullopt, "recip_rank",
       kRw},
      {"reciprocal_rank@10", Measure::kReciprocalRank, 10, "recip_rank.10",
       kRw},
      {"average_precision", Measure::kAveragePrecision, std::nullopt, "map",
       kRw},
      {"average_precision@10", Measure::kAveragePrecision, 10, "map_cut.10",
       kRw},
      {"success@3", Measure::kSuccess, 3, "success.3", kRw},
      {"r_precision", Measure::kRPrecision, std::nullopt, "Rprec", kRw},
      {"judged@20", Measure::kJudged, 20, "judged.20", kRw},
      {"spearman", Measure::kSpearman, std::nullopt, "spearman", kRw},
      {"kendall_tau", Measure::kKendallTau, std::nullopt, "kendall_tau", kRw},
      {"ctr@1", Measure::kCtr, 1, "", kRw},
      {"clicks@10", Measure::kClicks, 10, "", kRw},
      {"abandonment", Measure::kAbandonment, std::nullopt, "", kRw},
      {"first_click_rank", Measure::kFirstClickRank, std::nullopt, "", kRw},
  };
  for (const Want& w : cases) ExpectResolves(w);
}

TEST(MeasureSpellingsTest, IrMeasuresSpellings) {
  const std::vector<Want> cases = {
      {"nDCG@10", Measure::kNdcg, 10, "ndcg_cut.10", kIr},
      {"nDCG", Measure::kNdcg, std::nullopt, "ndcg", kIr},
      {"NDCG@20", Measure::kNdcg, 20, "ndcg_cut.20", kIr},
      {"P@5", Measure::kPrecision, 5, "P.5", kIr},
      {"Precision@5", Measure::kPrecision, 5, "P.5", kIr},
      {"R@10", Measure::kRecall, 10, "recall.10", kIr},
      {"Recall@100", Measure::kRecall, 100, "recall.100", kIr},
      {"AP", Measure::kAveragePrecision, std::nullopt, "map", kIr},
      {"MAP", Measure::kAveragePrecision, std::nullopt, "map", kIr},
      // ir_measures' AP@k is trec_eval's map_cut.k (divided by R).
      {"AP@10", Measure::kAveragePrecision, 10, "map_cut.10", kIr},
      {"RR", Measure::kReciprocalRank, std::nullopt, "recip_rank", kIr},
      {"MRR", Measure::kReciprocalRank, std::nullopt, "recip_rank", kIr},
      // RR@10 is 0 when the first relevant doc is below rank 10: rankwatch's
      // recip_rank.10, not trec_eval's recip_rank (which ignores the 10).
      {"RR@10", Measure::kReciprocalRank, 10, "recip_rank.10", kIr},
      {"Success@10", Measure::kSuccess, 10, "success.10", kIr},
      {"Judged@10", Measure::kJudged, 10, "judged.10", kIr},
      {"Rprec", Measure::kRPrecision, std::nullopt, "Rprec", kTrec},
      {"RPrec", Measure::kRPrecision, std::nullopt, "Rprec", kIr},
      // trec_eval families the engine does not compute: eval only.
      {"Bpref", std::nullopt, std::nullopt, "bpref", kIr},
      {"BPref", std::nullopt, std::nullopt, "bpref", kIr},
      {"infAP", std::nullopt, std::nullopt, "infAP", kIr},
      {"IPrec@0.5", std::nullopt, std::nullopt, "iprec_at_recall.0.5", kIr},
      {"bpref", std::nullopt, std::nullopt, "bpref", kTrec},
      {"num_q", std::nullopt, std::nullopt, "num_q", kTrec},
      {"set_F", std::nullopt, std::nullopt, "set_F", kTrec},
      {"iprec_at_recall.0.5", std::nullopt, std::nullopt, "iprec_at_recall.0.5",
       kTrec},
      {"NumQ", std::nullopt, std::nullopt, "num_q", kIr},
      {"NumRet", std::nullopt, std::nullopt, "num_ret", kIr},
      {"NumRel", std::nullopt, std::nullopt, "num_rel", kIr},
      {"NumRelRet", std::nullopt, std::nullopt, "num_rel_ret", kIr},
      {"SetP", std::nullopt, std::nullopt, "set_P", kIr},
      {"SetRelP", std::nullopt, std::nullopt, "set_relative_P", kIr},
      {"SetR", std::nullopt, std::nullopt, "set_recall", kIr},
      {"SetF", std::nullopt, std::nullopt, "set_F", kIr},
      {"SetAP", std::nullopt, std::nullopt, "set_map", kIr},
  };
  for (const Want& w : cases) ExpectResolves(w);
}

// Every name the engine prints (MeasureName for Prometheus and YAML,
// TrecName for eval, replay and the page) reads back as its own series.
TEST(MeasureSpellingsTest, EveryPrintedNameReadsBack) {
  for (Measure m : kAllMeasures) {
    SCOPED_TRACE(std::string(MeasureName(m)));
    if (HasUncutVariant(m)) {
      for (const std::string& name :
           {std::string(MeasureName(m)), TrecName(m, std::nullopt)}) {
        StatusOr<MeasureRef> ref = ParseMeasureName(name);
        ASSERT_TRUE(ref.ok()) << name << ": " << ref.status().message();
        EXPECT_EQ(ref->measure, m);
        EXPECT_EQ(ref->cutoff, std::nullopt);
      }
    } else {
      EXPECT_FALSE(ParseMeasureName(MeasureName(m)).ok());
    }
    if (HasCutoffVariant(m)) {
      for (const std::string& name :
           {std::string(MeasureName(m)) + "@7", TrecName(m, 7)}) {
        StatusOr<MeasureRef> ref = ParseMeasureName(name);
        ASSERT_TRUE(ref.ok()) << name << ": " << ref.status().message();
        EXPECT_EQ(ref->measure, m);
        EXPECT_EQ(ref->cutoff, 7);
      }
    } else {
      EXPECT_FALSE(ParseMeasureName(std::string(MeasureName(m)) + "@7").ok());
    }
    StatusOr<Measure> family = ParseMeasureFamily(MeasureName(m));
    ASSERT_TRUE(family.ok());
    EXPECT_EQ(*family, m);
  }
}

std::string MessageOf(std::string_view text,
                      std::span<const std::string_view> more = {}) {
  StatusOr<MeasureRef> ref = ParseMeasureName(text, more);
  EXPECT_FALSE(ref.ok()) << text;
  return ref.ok() ? "" : ref.status().message();
}

TEST(MeasureSpellingsTest, MissesSuggestTheClosestSpelling) {
  EXPECT_EQ(MessageOf("nDCG@1O"),
            "unknown measure 'nDCG@1O' (did you mean 'nDCG@10'?)");
  EXPECT_EQ(MessageOf("ndcg@1O"),
            "unknown measure 'ndcg@1O' (did you mean 'ndcg@10'?)");
  EXPECT_EQ(MessageOf("ndcg_cutt.10"),
            "unknown measure 'ndcg_cutt.10' (did you mean 'ndcg_cut.10'?)");
  EXPECT_EQ(MessageOf("ndcg_cut_1O"),
            "unknown measure 'ndcg_cut_1O' (did you mean 'ndcg_cut_10'?)");
  EXPECT_EQ(MessageOf("precison@5"),
            "unknown measure 'precison@5' (did you mean 'precision@5'?)");
  EXPECT_EQ(MessageOf("p@5"), "unknown measure 'p@5' (did you mean 'P@5'?)");
  // A known name in another letter case: the measure's trec_eval name
  // (mrr is ir_measures' MRR, three edits away; issue 43).
  EXPECT_EQ(MessageOf("mrr"),
            "unknown measure 'mrr' (did you mean 'recip_rank'?)");
  EXPECT_EQ(MessageOf("Ndcg"), "unknown measure 'Ndcg' (did you mean 'ndcg'?)");
  EXPECT_EQ(MessageOf("reciprocal_rnk"),
            "unknown measure 'reciprocal_rnk' (did you mean "
            "'reciprocal_rank'?)");
  // The caller's own names (eval's sets and families) are candidates too.
  constexpr std::string_view kMore[] = {"official", "bpref"};
  EXPECT_EQ(MessageOf("offical", kMore),
            "unknown measure 'offical' (did you mean 'official'?)");
  EXPECT_EQ(MessageOf("xyzzy"),
            "unknown measure 'xyzzy' (trec_eval's, rankwatch's and "
            "ir_measures' names are listed in docs/metrics.md)");
}

TEST(MeasureSpellingsTest, RefusesWhatHasNoExactEquivalent) {
  EXPECT_EQ(MessageOf("ERR@10"),
            "measure 'ERR@10': ir_measures' ERR has no exact equivalent in "
            "rankwatch (the ones that do are listed in docs/metrics.md)");
  EXPECT_EQ(MessageOf("RBP"),
            "measure 'RBP': ir_measures' RBP has no exact equivalent in "
            "rankwatch (the ones that do are listed in docs/metrics.md)");
  EXPECT_EQ(MessageOf("alpha_nDCG@20"),
            "measure 'alpha_nDCG@20': ir_measures' alpha_nDCG has no exact "
            "equivalent in rankwatch (the ones that do are listed in "
            "docs/metrics.md)");
  EXPECT_EQ(MessageOf("P(rel=2)@5"),
            "measure 'P(rel=2)@5': ir_measures parameters in parentheses are "
            "not read: rankwatch sets its definitions with its own options "
            "(eval's -l, --gain, -J; metrics.* in a configuration)");
}

TEST(MeasureSpellingsTest, CutoffsWhereTheyBelong) {
  // ir_measures requires P's cutoff; trec_eval's bare P means its default
  // cutoffs, which a single series cannot be.
  EXPECT_EQ(MessageOf("P"), "measure 'P': needs a cutoff, as in P.10");
  EXPECT_EQ(MessageOf("precision"),
            "measure 'precision': needs a cutoff, as in precision@10");
  EXPECT_EQ(MessageOf("Success"),
            "measure 'Success': needs a cutoff, as in Success@10");
  EXPECT_EQ(MessageOf("Rprec@10"), "measure 'Rprec@10': Rprec takes no cutoff");
  // trec_eval's ndcg.P are gain values: nDCG at a cutoff is ndcg_cut.
  EXPECT_EQ(MessageOf("ndcg.10"),
            "measure 'ndcg.10': ndcg takes no cutoff (at a cutoff it is "
            "ndcg_cut.10)");
  EXPECT_EQ(MessageOf("map.10"),
            "measure 'map.10': map takes no cutoff (at a cutoff it is "
            "map_cut.10)");
  // At the user's own cutoff, not always 10 (issue 43).
  EXPECT_EQ(MessageOf("map@100"),
            "measure 'map@100': map takes no cutoff (at a cutoff it is "
            "map_cut.100)");
  EXPECT_EQ(MessageOf("ndcg@0"),
            "measure 'ndcg@0': the cutoff must be an integer >= 1");
  EXPECT_EQ(MessageOf("P.5,10"),
            "measure 'P.5,10': one cutoff per name here, as in P.10");
  EXPECT_EQ(MessageOf("IPrec@1.5"),
            "measure 'IPrec@1.5': the recall level must be a number from 0 "
            "to 1");
  EXPECT_EQ(MessageOf(""), "empty measure name");
}

TEST(MeasureSpellingsTest, FamiliesInEverySpelling) {
  const std::vector<std::pair<std::string_view, Measure>> cases = {
      {"ndcg", Measure::kNdcg},
      {"ndcg_cut", Measure::kNdcg},
      {"nDCG", Measure::kNdcg},
      {"precision", Measure::kPrecision},
      {"P", Measure::kPrecision},
      {"R", Measure::kRecall},
      {"AP", Measure::kAveragePrecision},
      {"map", Measure::kAveragePrecision},
      {"map_cut", Measure::kAveragePrecision},
      {"RR", Measure::kReciprocalRank},
      {"recip_rank", Measure::kReciprocalRank},
      {"Rprec", Measure::kRPrecision},
      {"Judged", Measure::kJudged},
  };
  for (const auto& [text, want] : cases) {
    StatusOr<Measure> m = ParseMeasureFamily(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status().message();
    EXPECT_EQ(*m, want) << text;
  }
  EXPECT_EQ(ParseMeasureFamily("ndcg@10").status().message(),
            "measure 'ndcg@10': name the measure without its cutoff "
            "('ndcg'): cutoffs are listed apart");
  EXPECT_EQ(ParseMeasureFamily("ndcg_cut.10").status().message(),
            "measure 'ndcg_cut.10': name the measure without its cutoff "
            "('ndcg_cut'): cutoffs are listed apart");
  EXPECT_EQ(ParseMeasureFamily("Bpref").status().message(),
            "measure 'Bpref': trec_eval's bpref is computed by `rankwatch "
            "eval` only, not by the daemon's engine");
  // trec_eval's own spelling says the same (it used to be unknown, with
  // ir_measures' 'Bpref' suggested).
  EXPECT_EQ(ParseMeasureFamily("bpref").status().message(),
            "measure 'bpref': trec_eval's bpref is computed by `rankwatch "
            "eval` only, not by the daemon's engine");
  EXPECT_EQ(ParseMeasureFamily("ndgc").status().message(),
            "unknown measure 'ndgc' (did you mean 'ndcg'?)");
}

}  // namespace
}  // namespace rankwatch::metrics
