#include "trec/trec_measures.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "tests/testing/test_seed.h"
#include "trec/trec_test_util.h"

namespace rankwatch::trec {
namespace {

// The hand-made query of the measure tests. Qrels: a 2, b 0, c 1, d -1 (in
// the pool, unjudged), e 0, f 3 and g 1 (not retrieved): levels 0:2 1:2
// 2:1 3:1, R = 4 at -l 1. Ranking a x b d c e (x not in the qrels), codes
// 2 -1 0 -2 1 0. Every expected value below is worked by hand in the
// comment beside it; trec_eval 10.0 prints the same to 4 decimals
// (`trec_eval -q -m ... qrels run` on these two files).
class MeasureTableTest : public ::testing::Test {
 protected:
  std::vector<double> Row(const std::vector<std::string>& specs,
                          MeasureTable::Options options = {}) {
    table_ = MeasureTable::Create(Select(specs), options);
    JudgedRankingBuilder builder;
    const JudgedRanking r =
        builder.Build(codes_, judgments_, options.relevance_level);
    std::vector<double> row(table_.columns().size());
    table_.Compute(metrics::ListScores(), r, row, &text_);
    return row;
  }

  const std::vector<metrics::Grade> judgments_ = {2, 0, 1, -1, 0, 3, 1};
  const std::vector<metrics::Grade> codes_ = {2, kNotInPool, 0, kUnjudgedInPool,
                                              1, 0};
  MeasureTable table_;
  std::string text_;
};

TEST_F(MeasureTableTest, JudgedRankingCounts) {
  JudgedRankingBuilder b;
  const JudgedRanking r = b.Build(codes_, judgments_, 1);
  EXPECT_EQ(r.num_ret(), 6);
  EXPECT_EQ(r.num_rel, 4);
  EXPECT_EQ(r.num_rel_ret, 2);
  EXPECT_EQ(r.num_nonpool, 1);
  EXPECT_EQ(r.num_unjudged_in_pool, 1);
  EXPECT_EQ(r.num_judged_nonrel, 2);  // b, e.
  std::vector<int64_t> counts;
  for (const LevelCount& l : r.levels) {
    EXPECT_EQ(l.level, static_cast<int64_t>(counts.size()));
    counts.push_back(l.count);
  }
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(b.Build(codes_, judgments_, 2).num_rel, 2);  // a, f.
}

// A grade far beyond trec_eval's range (it would allocate an array that
// large) lists only the grades that occur, and scores all the same.
TEST_F(MeasureTableTest, HugeGradesStaySparse) {
  JudgedRankingBuilder b;
  const std::vector<metrics::Grade> judgments = {2000000000, 0, 1, 1};
  const std::vector<metrics::Grade> codes = {2000000000, 0, kNotInPool};
  const JudgedRanking r = b.Build(codes, judgments, 1);
  ASSERT_EQ(r.levels.size(), 3u);
  EXPECT_EQ(r.levels[2].level, 2000000000);
  EXPECT_EQ(r.num_rel, 3);
  EXPECT_EQ(r.num_rel_ret, 1);
  MeasureTable t = MeasureTable::Create(Select({"ndcg.1=2", "bpref"}), {});
  std::vector<double> row(2);
  std::string text;
  t.Compute(metrics::ListScores(), r, row, &text);
  // bpref: the top doc is relevant with nothing above: 1 / R = 1/3.
  EXPECT_DOUBLE_EQ(row[0], 1.0 / 3);
  // nDCG: the run has the 2e9 doc at rank 1 (gain 2e9) and nothing else
  // relevant; the ideal has 2e9, then two grade-1 docs at gain 2.
  const double idcg = 2e9 + 2 / std::log2(3.0) + 2 / std::log2(4.0);
  EXPECT_DOUBLE_EQ(row[1], 2e9 / idcg);
}

TEST_F(MeasureTableTest, IncompleteJudgmentMeasures) {
  const std::vector<double> row = Row(
      {"bpref", "infAP", "num_nonrel_judged_ret", "relstring", "unj.1,3,5"});
  // Columns in trec_eval order: bpref relstring infAP nonrel_judged unj_*.
  // bpref: 2 judged nonrelevant (b, e); a: no nonrel above, 1; c: one
  // above, 1 - min(1,4)/min(2,4) = 1/2; (1 + 1/2) / R = 0.375.
  EXPECT_DOUBLE_EQ(row[0], 0.375);
  // infAP: a at rank 1 adds 1; c at j = 4 (0-based) adds 1/5 + 4/5 *
  // (1 + 1 + 1)/4 * (1 + eps)/(1 + 1 + 2 eps) = 1/5 + 3/5 * 1/2 = 1/2
  // (the pooled-unjudged d counts above, x outside the pool does not).
  EXPECT_DOUBLE_EQ(row[2], 1.5 / 4);
  EXPECT_EQ(row[3], 2);  // 6 retrieved - 1 nonpool - 1 unjudged - 2 rel.
  EXPECT_EQ(text_, "2-0.10");
  EXPECT_DOUBLE_EQ(row[4], 0.0);      // unj_1: a is judged.
  EXPECT_DOUBLE_EQ(row[5], 1.0 / 3);  // unj_3: x.
  EXPECT_DOUBLE_EQ(row[6], 2.0 / 5);  // unj_5: x, d.
}

TEST_F(MeasureTableTest, InterpolatedPrecisionAndRprecMult) {
  const std::vector<double> row =
      Row({"iprec_at_recall", "11pt_avg", "Rprec_mult"});
  // Precision at the relevant ranks: a at 1 (1/1), c at 5 (2/5). Recall
  // levels l map to lround(4 l) relevant docs: 0.0-0.3 -> 0 or 1 doc,
  // interpolated precision 1; 0.4-0.6 -> 2 docs, 0.4; 0.7-1.0 -> 3 or 4
  // docs, never reached: 0.
  const std::vector<double> iprec = {1, 1, 1, 1, 0.4, 0.4, 0.4, 0, 0, 0, 0};
  for (size_t i = 0; i < iprec.size(); ++i) {
    EXPECT_DOUBLE_EQ(row[i], iprec[i]) << i;
  }
  // Rprec_mult m: precision at (long)(4 m + 0.9) = 1 2 3 4 4 5 6 7 8 8;
  // ranks past the 6 retrieved divide the 2 hits by the cutoff.
  const std::vector<double> mult = {1,   0.5,     1.0 / 3, 0.25, 0.25,
                                    0.4, 1.0 / 3, 2.0 / 7, 0.25, 0.25};
  for (size_t i = 0; i < mult.size(); ++i) {
    EXPECT_DOUBLE_EQ(row[11 + i], mult[i]) << i;
  }
  EXPECT_DOUBLE_EQ(row[21], 5.2 / 11);  // 11pt_avg: (4 x 1 + 3 x 0.4)/11.
}

TEST_F(MeasureTableTest, SetMeasuresAndUtility) {
  const std::vector<double> row =
      Row({"set_P", "set_recall", "set_relative_P", "set_map", "set_F",
           "utility.0,0,0,1", "relative_P.1,2,10"},
          {.relevance_level = 1, .num_docs_in_collection = 100});
  // Columns: utility relative_P_1 _2 _10 set_P set_relative_P set_recall
  // set_map set_F.
  EXPECT_DOUBLE_EQ(row[0], 92);   // d = N + rel_ret - ret - R = 100+2-6-4.
  EXPECT_DOUBLE_EQ(row[1], 1.0);  // a in the top 1, over min(1, 4).
  EXPECT_DOUBLE_EQ(row[2], 0.5);  // 1 in the top 2, over 2.
  EXPECT_DOUBLE_EQ(row[3], 0.5);  // 2 in the top 10, over min(10, 4).
  EXPECT_DOUBLE_EQ(row[4], 2.0 / 6);
  EXPECT_DOUBLE_EQ(row[5], 2.0 / 4);  // 2 / min(6, 4).
  EXPECT_DOUBLE_EQ(row[6], 2.0 / 4);
  EXPECT_DOUBLE_EQ(row[7], 4.0 / 24);  // 2 x 2 / (6 x 4).
  EXPECT_DOUBLE_EQ(row[8], 2 * (1.0 / 6) / (1.0 / 3 + 0.5));  // F1: 0.4.
  EXPECT_DOUBLE_EQ(Row({"utility"})[0], -2);  // 2 - 4 nonrelevant retrieved.
}

TEST_F(MeasureTableTest, GainMapsAndTrecEvalsGainOrder) {
  // ndcg.1=3,2=9,4=4.5: gains 0->0 1->3 2->9 3->3 (unmapped: the level)
  // 4->4.5 (no doc). trec_eval's comparator truncates gain differences to
  // int, so its merge sort leaves level 1 (gain 3) before level 3 (gain
  // 3) and the ideal walk takes 9, then level 3's one doc, then level 1's
  // two: 9 3 3 3. IDCG = 9 + 3/log2 3 + 3/log2 4 + 3/log2 5; DCG = 9 (a) +
  // 3/log2 6 (c at rank 5).
  const double idcg =
      9 + 3 / std::log2(3.0) + 3 / std::log2(4.0) + 3 / std::log2(5.0);
  const double dcg = 9 + 3 / std::log2(6.0);
  EXPECT_DOUBLE_EQ(Row({"ndcg.1=3,2=9,4=4.5"})[0], dcg / idcg);  // 0.74247
  EXPECT_DOUBLE_EQ(Row({"dcg.1=3,2=9,4=4.5"})[0], dcg);
  EXPECT_DOUBLE_EQ(Row({"ideal_dcg.1=3,2=9,4=4.5"})[0], idcg);
  // rbp, p = 0.9: gains 0..3 scaled by the largest (3) into [0, 1]; a
  // (2/3) at rank 1, c (1/3) at rank 5: 0.1 (2/3 + 0.9^4/3).
  EXPECT_DOUBLE_EQ(Row({"rbp"})[0], 0.1 * (2.0 / 3 + std::pow(0.9, 4) / 3));
  EXPECT_DOUBLE_EQ(Row({"rbp.p=0.5"})[0],
                   0.5 * (2.0 / 3 + std::pow(0.5, 4) / 3));
  // rbp_resid: 0.9^6 left after the list, plus x (rank 2) and d (rank 4)
  // unjudged: 0.9^6 + 0.1 (0.9 + 0.9^3).
  EXPECT_DOUBLE_EQ(Row({"rbp_resid"})[0],
                   std::pow(0.9, 6) + 0.1 * (0.9 + std::pow(0.9, 3)));
}

TEST_F(MeasureTableTest, DuplicateGainPairsTakeTheFirstInGainOrder) {
  // ndcg.1=3,1=5: both pairs name level 1; level 1's two docs count on the
  // first (gain 3). Entries (level:gain) 1:3 1:5, then 0:0 2:2 3:3 for the
  // unmapped levels; trec_eval's truncated-difference merge sort gives
  // 0:0 2:2 1:3 3:3 1:5, so a level-1 doc gains 3 and the ideal walk, from
  // the top, skips 1:5 (no doc), takes 3:3 once, 1:3 twice, 2:2 once.
  const double idcg =
      3 + 3 / std::log2(3.0) + 3 / std::log2(4.0) + 2 / std::log2(5.0);
  const double dcg = 2 + 3 / std::log2(6.0);  // a (2) at 1, c (1) at 5.
  EXPECT_DOUBLE_EQ(Row({"ndcg.1=3,1=5"})[0], dcg / idcg);
}

TEST_F(MeasureTableTest, RelstringLengths) {
  Row({"relstring.3"});
  EXPECT_EQ(text_, "2-0");
  Row({"relstring.100"});  // Longer than the ranking: all of it.
  EXPECT_EQ(text_, "2-0.10");
  Row({"relstring.0"});
  EXPECT_EQ(text_, "");
  // Beyond long's range: trec_eval's (long) cast gives LONG_MIN on x86-64,
  // so `trec_eval -q -m relstring.1e30 qrels run` prints '' for this query.
  Row({"relstring.1e30"});
  EXPECT_EQ(text_, "");
}

TEST_F(MeasureTableTest, BinGAndGeometricMeanInput) {
  const std::vector<double> row = Row({"binG", "gm_map", "gm_bpref"});
  // Columns: gm_map gm_bpref binG. gm_* hold logs: AP = (1 + 2/5)/4.
  EXPECT_DOUBLE_EQ(row[0], std::log(0.35));
  EXPECT_DOUBLE_EQ(row[1], std::log(0.375));
  // binG: 1/log2(2 + nonrelevant above) per relevant doc, over R: a has
  // none above, c has x, b, d (3 - counted as rank 5 minus 2 relevant).
  EXPECT_DOUBLE_EQ(row[2], (1 + 1 / std::log2(5.0)) / 4);
}

TEST_F(MeasureTableTest, MissingQueryIsOneUnpooledDocThenReset) {
  table_ = MeasureTable::Create(
      Select({"num_ret", "num_rel", "utility", "relstring", "unj", "rbp_resid",
              "gm_map", "set_P", "iprec_at_recall.0"}),
      {});
  metrics::ListScores engine;
  engine.num_rel = 4;
  std::vector<double> row(table_.columns().size(), -7);
  table_.ComputeMissing(engine, judgments_, row, &text_);
  // Columns: num_ret num_rel gm_map iprec_0.00 relstring utility set_P
  // rbp_resid unj_5 unj_10 unj_20.
  EXPECT_EQ(row[0], 0);
  EXPECT_EQ(row[1], 4);
  EXPECT_DOUBLE_EQ(row[2], std::log(0.00001));  // AP 0, floored.
  EXPECT_EQ(row[3], 0);  // Not 0/0: trec_eval's stand-in doc.
  EXPECT_EQ(text_, "");
  for (size_t c = 5; c < row.size(); ++c) EXPECT_EQ(row[c], 0) << c;
}

std::string Fixed4(double value) {
  std::string out;
  MeasureTable::AppendFixed4(value, &out);
  return out;
}

// trec_eval prints real values with "%6.4f". Expected strings from Python
// 3's correctly rounded formatting ('%6.4f' % v; the exact decimal value of
// each double, from decimal.Decimal(v), in the comment where it decides).
TEST(AppendValueTest, RealsAreFormattedAsPrintfFormatsThem) {
  EXPECT_EQ(Fixed4(0.0), "0.0000");
  EXPECT_EQ(Fixed4(-0.0), "-0.0000");
  EXPECT_EQ(Fixed4(1.0), "1.0000");
  EXPECT_EQ(Fixed4(0.5), "0.5000");
  // 0.99995 is 0.99995000000000000550...: rounds up, into the units.
  EXPECT_EQ(Fixed4(0.99995), "1.0000");
  // 0.99994999 is 0.99994998999999995...: rounds down.
  EXPECT_EQ(Fixed4(0.99994999), "0.9999");
  // Exact ties round to the even digit: 0.03125, 0.15625, 0.09375.
  EXPECT_EQ(Fixed4(0.03125), "0.0312");
  EXPECT_EQ(Fixed4(0.15625), "0.1562");
  EXPECT_EQ(Fixed4(0.09375), "0.0938");
  // Not ties: 5e-5 is 0.0000500000000000000024, 7.5e-5 is
  // 0.0000749999999999999934, 2.5e-5 is 0.0000250000000000000012.
  EXPECT_EQ(Fixed4(5e-5), "0.0001");
  EXPECT_EQ(Fixed4(-5e-5), "-0.0001");
  EXPECT_EQ(Fixed4(7.5e-5), "0.0001");
  EXPECT_EQ(Fixed4(2.5e-5), "0.0000");
  EXPECT_EQ(Fixed4(1e-5), "0.0000");
  EXPECT_EQ(Fixed4(-1e-9), "-0.0000");  // A negative that rounds to zero.
  EXPECT_EQ(Fixed4(123456.78905), "123456.7891");
  EXPECT_EQ(Fixed4(1e20), "100000000000000000000.0000");
  // The width of 6 pads nothing shorter here ("0.0000" is 6 bytes), but a
  // non-finite value is padded on the left.
  EXPECT_EQ(Fixed4(std::nan("")), "   nan");
  EXPECT_EQ(Fixed4(-INFINITY), "  -inf");
  EXPECT_EQ(Fixed4(INFINITY), "   inf");
  // The largest double: 309 digits, whole.
  const std::string max = Fixed4(1.7976931348623157e308);
  EXPECT_EQ(max.size(), 314u);
  EXPECT_EQ(max.substr(0, 20), "17976931348623157081");
  EXPECT_EQ(max.substr(max.size() - 8), "368.0000");
}

// Integer columns print as "%ld" of the value truncated.
TEST(AppendValueTest, IntegersAreTruncated) {
  ReportColumn column;
  column.format = ValueFormat::kInteger;
  std::string out;
  MeasureTable::AppendValue(column, 1000.0, &out);
  MeasureTable::AppendValue(column, -3.9, &out);
  MeasureTable::AppendValue(column, 0.0, &out);
  EXPECT_EQ(out, "1000-30");
}

// Random doubles of every magnitude from 1e-12 to 1e12 and both signs, and
// values k / 2^n near the fifth decimal (ties and their neighbours): the
// bytes of glibc's snprintf("%6.4f"). Seed printed.
TEST(AppendValueTest, RealsMatchSnprintfOnRandomValues) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedNote(seed));
  Xoshiro256 rng(seed);
  ReportColumn column;
  column.format = ValueFormat::kReal;
  for (int i = 0; i < 200000; ++i) {
    double v;
    switch (i % 3) {
      case 0:
        v = rng.Uniform();
        break;
      case 1:
        v = std::ldexp(static_cast<double>(rng.Below(1u << 20)),
                       -static_cast<int>(rng.Between(5, 24)));
        v = std::nextafter(v, rng.Below(3) == 0 ? 0.0 : v * (rng.Below(2) + 1));
        break;
      default:
        v = std::pow(10.0, rng.Uniform() * 24 - 12) *
            (rng.Below(2) == 0 ? 1 : -1);
    }
    char want[400];
    std::snprintf(want, sizeof(want), "%6.4f", v);
    std::string got;
    MeasureTable::AppendValue(column, v, &got);
    ASSERT_EQ(got, want) << "value " << std::hexfloat << v;
  }
}

}  // namespace
}  // namespace rankwatch::trec
