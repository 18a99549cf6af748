#include "trec/measure_selection.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

std::string ParseError(std::string spec) {
  std::vector<std::string> specs = {spec};
  StatusOr<MeasureSelection> s = MeasureSelection::Parse(specs);
  return s.ok() ? std::string() : s.status().message();
}

std::vector<std::string> Names(const MeasureSelection& s) {
  std::vector<std::string> names;
  std::vector<ReportColumn> columns;
  for (const MeasureSelection::Item& item : s.items()) {
    AppendColumns(item, &columns);
  }
  for (const ReportColumn& c : columns) names.push_back(c.name);
  return names;
}

TEST(MeasureSelectionTest, KeepsTrecOrderAndTheFirstParametersWin) {
  // trec_eval: `-m P.10,5 -m P.20` prints P_5 and P_10 only (the first
  // parameters of a family are its parameters; later ones only mark it).
  MeasureSelection s = Select({"ndcg_cut.10", "P.10,5", "map", "P.20"});
  ASSERT_EQ(s.items().size(), 3u);
  EXPECT_EQ(s.items()[0].measure, TrecMeasure::kMap);
  EXPECT_EQ(s.items()[1].measure, TrecMeasure::kP);
  EXPECT_EQ(s.items()[1].cutoffs, (std::vector<int32_t>{5, 10}));
  EXPECT_EQ(s.items()[2].measure, TrecMeasure::kNdcgCut);
  EXPECT_EQ(s.EngineCutoffs(), (std::vector<int32_t>{5, 10}));
}

TEST(MeasureSelectionTest, JoinCutoffsJoinsEverySpecOfAFamilyAsPytrecEval) {
  // pytrec_eval's test_measure_params: ndcg_cut with ndcg_cut.1,4,
  // ndcg_cut_20,4 and ndcg_cut_15 is ndcg_cut at 1, 4, 15 and 20 (no
  // defaults); a bare P keeps its defaults; P.5 with P_10 joins them.
  const std::vector<std::string> specs = {
      "P",           "ndcg_cut",      "ndcg_cut.1,4",
      "ndcg_cut_15", "ndcg_cut_20,4", "recall.1000",
      "map_cut.5",   "map_cut.10",    "map_cut_10"};
  StatusOr<MeasureSelection> s =
      MeasureSelection::Parse(specs, SpecJoin::kJoinCutoffs);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Names(*s),
            (std::vector<std::string>{
                "P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200",
                "P_500", "P_1000", "recall_1000", "ndcg_cut_1", "ndcg_cut_4",
                "ndcg_cut_15", "ndcg_cut_20", "map_cut_5", "map_cut_10"}));
  // Under trec_eval's rule the first parameters win.
  EXPECT_EQ(Names(Select({"map_cut.5", "map_cut.10"})),
            (std::vector<std::string>{"map_cut_5"}));
}

TEST(MeasureSelectionTest, NamesTheFamiliesAndNicknames) {
  const std::vector<std::string_view> families = MeasureFamilyNames();
  ASSERT_EQ(families.size(), kTrecMeasureCount);
  EXPECT_EQ(families.front(), "runid");
  EXPECT_EQ(families.back(), "kendall_tau");
  EXPECT_EQ(MeasureNicknames(),
            (std::vector<std::string_view>{"official", "all_trec", "set"}));
  ASSERT_NE(NicknameFamilies("set"), nullptr);
  EXPECT_EQ(NicknameFamilies("set")->size(), 11u);  // trec_eval's measures.c
  EXPECT_EQ(NicknameFamilies("P"), nullptr);
}

TEST(MeasureSelectionTest, DefaultIsTheOfficialSet) {
  // trec_eval 10.0 with no -m: runid num_q num_ret num_rel num_rel_ret map
  // gm_map Rprec bpref recip_rank iprec_at_recall_0.00..1.00 P_5..P_1000.
  std::vector<std::string> names = Names(Select({}));
  ASSERT_EQ(names.size(), 30u);
  EXPECT_EQ(names.front(), "runid");
  EXPECT_EQ(names[6], "gm_map");
  EXPECT_EQ(names[10], "iprec_at_recall_0.00");
  EXPECT_EQ(names[20], "iprec_at_recall_1.00");
  EXPECT_EQ(names.back(), "P_1000");
  EXPECT_EQ(Names(Select({"official"})), names);
}

TEST(MeasureSelectionTest, AllTrecHasTheThirtySevenFamilies) {
  MeasureSelection s = Select({"all_trec"});
  EXPECT_EQ(s.items().size(), 37u);
  // trec_eval -m all_trec prints 99 rows in its `all` block
  // (../shared/conformance/main/te10.c.all_trec.txt) and relstring, which
  // it prints per query only.
  EXPECT_EQ(Names(s).size(), 100u);
}

TEST(MeasureSelectionTest, ParametersParsedAsTrecEvalParsesThem) {
  // atol truncates float cutoffs: ndcg_cut.23.4 is ndcg_cut_23.
  EXPECT_EQ(Names(Select({"ndcg_cut.23.4"})),
            std::vector<std::string>{"ndcg_cut_23"});
  // Float cutoffs print with %3.2f, sorted.
  EXPECT_EQ(Names(Select({"iprec_at_recall.0.5,0.15"})),
            (std::vector<std::string>{"iprec_at_recall_0.15",
                                      "iprec_at_recall_0.50"}));
  // Parameter lists print as given.
  EXPECT_EQ(Names(Select({"ndcg.1=3,2=9,4=4.5", "utility.2,-1,0,0",
                          "11pt_avg.0.2,0.5,0.8", "relstring.5", "rbp.p=0.5"})),
            (std::vector<std::string>{"relstring_5", "utility_2,-1,0,0",
                                      "11pt_avg_0.2,0.5,0.8",
                                      "ndcg_1=3,2=9,4=4.5", "rbp_p=0.5"}));
  // Parameters of a family that takes none are ignored, as in trec_eval.
  EXPECT_EQ(Names(Select({"map.5"})), std::vector<std::string>{"map"});
  // recip_rank.k is rankwatch's recip_rank at k, beside the uncut one.
  MeasureSelection rr = Select({"recip_rank.10", "recip_rank"});
  EXPECT_EQ(Names(rr),
            (std::vector<std::string>{"recip_rank", "recip_rank_10"}));
}

TEST(MeasureSelectionTest, RejectsBadSpecsWithTheSpecNamed) {
  EXPECT_NE(ParseError("bogus").find("unknown measure 'bogus'"),
            std::string::npos);
  EXPECT_EQ(ParseError("P.5,5"), "measure 'P.5,5': duplicate cutoffs");
  EXPECT_EQ(ParseError("P.0"),
            "measure 'P.0': cutoffs must be positive integers");
  EXPECT_EQ(ParseError("P.x"),
            "measure 'P.x': cutoffs must be positive integers");
  EXPECT_EQ(ParseError("P."), "measure 'P.': empty parameter list after '.'");
  EXPECT_EQ(ParseError("utility.1,2,3"),
            "measure 'utility.1,2,3': utility takes exactly 4 coefficients");
  EXPECT_EQ(ParseError("ndcg.1=2,3"),
            "measure 'ndcg.1=2,3': parameters must be name=value pairs");
  // A bare number is most likely a cutoff (docs/metrics.md; issue 43).
  EXPECT_EQ(ParseError("ndcg.10"),
            "measure 'ndcg.10': parameters must be name=value pairs (gain "
            "values, as in ndcg.1=0,2=3; at a cutoff it is ndcg_cut.10)");
  EXPECT_NE(ParseError("prefs").find("preference"), std::string::npos);
}

// rankwatch's and ir_measures' spellings, and trec_eval's printed row
// names, select the trec_eval rows they name (expected rows written from
// trec_eval's -m syntax: nDCG@10 is ndcg_cut.10, AP@10 map_cut.10, RR@10
// rankwatch's recip_rank.10, IPrec@0.5 iprec_at_recall.0.5).
TEST(MeasureSelectionTest, OtherSpellingsSelectTheSameRows) {
  EXPECT_EQ(Names(Select({"ndcg@10"})),
            std::vector<std::string>{"ndcg_cut_10"});
  EXPECT_EQ(Names(Select({"nDCG@10"})),
            std::vector<std::string>{"ndcg_cut_10"});
  EXPECT_EQ(Names(Select({"ndcg_cut_10"})),
            std::vector<std::string>{"ndcg_cut_10"});
  EXPECT_EQ(Names(Select({"nDCG"})), std::vector<std::string>{"ndcg"});
  EXPECT_EQ(Names(Select({"AP", "AP@10", "RR", "RR@10", "P@5", "R@10"})),
            (std::vector<std::string>{"map", "recip_rank", "recip_rank_10",
                                      "P_5", "recall_10", "map_cut_10"}));
  EXPECT_EQ(
      Names(Select({"Success@10", "Judged@10", "Rprec", "Bpref"})),
      (std::vector<std::string>{"Rprec", "bpref", "success_10", "judged_10"}));
  EXPECT_EQ(Names(Select({"IPrec@0.5", "iprec_at_recall_0.10"})),
            (std::vector<std::string>{"iprec_at_recall_0.10",
                                      "iprec_at_recall_0.50"}));
  // Each names one cutoff; they add up, and add to a bare family's
  // defaults (trec_eval's own repeated -m keeps the first list only).
  EXPECT_EQ(
      Names(Select({"nDCG@5", "ndcg@10", "ndcg_cut_20"})),
      (std::vector<std::string>{"ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20"}));
  EXPECT_EQ(Names(Select({"success", "success@3"})),
            (std::vector<std::string>{"success_1", "success_3", "success_5",
                                      "success_10"}));
  EXPECT_EQ(Names(Select({"P.5", "P@10", "P.20"})),
            (std::vector<std::string>{"P_5", "P_10"}));
}

TEST(MeasureSelectionTest, MissesSuggestOneName) {
  EXPECT_EQ(ParseError("nDCG@1O"),
            "unknown measure 'nDCG@1O' (did you mean 'nDCG@10'?)");
  EXPECT_EQ(ParseError("bpreff"),
            "unknown measure 'bpreff' (did you mean 'bpref'?)");
  EXPECT_EQ(ParseError("all_trek"),
            "unknown measure 'all_trek' (did you mean 'all_trec'?)");
  EXPECT_EQ(ParseError("ctr@5"),
            "measure 'ctr@5': a click measure of the daemon's impression "
            "mode, not a trec_eval measure: rankwatch eval does not compute "
            "it");
  EXPECT_EQ(ParseError("ERR@10"),
            "measure 'ERR@10': ir_measures' ERR has no exact equivalent in "
            "rankwatch (the ones that do are listed in docs/metrics.md)");
}

// A printed recall level is a number in [0, 1] with at most one point:
// "5", "." and "0.1.2" are not levels (AtofLike read them as 5, 0 and 0.1).
TEST(MeasureSelectionTest, PrintedRecallLevelsAreNumbersInZeroOne) {
  // "iprec_at_recall_." reads in trec_eval's own syntax first (a family
  // "iprec_at_recall_" with an empty parameter list): an error too.
  EXPECT_EQ(ParseError("iprec_at_recall_."),
            "measure 'iprec_at_recall_.': empty parameter list after '.'");
  EXPECT_EQ(ParseError("iprec_at_recall_5"),
            "measure 'iprec_at_recall_5': the recall level must be a number "
            "from 0 to 1");
  for (const char* bad : {"iprec_at_recall_0.1.2", "iprec_at_recall_1.5"}) {
    EXPECT_TRUE(ParseError(bad).starts_with("unknown measure '" +
                                            std::string(bad) + "'"))
        << bad << ": " << ParseError(bad);
  }
  EXPECT_EQ(Names(Select({"iprec_at_recall_1.00"})),
            (std::vector<std::string>{"iprec_at_recall_1.00"}));
}

}  // namespace
}  // namespace rankwatch::trec
