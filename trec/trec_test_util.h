// What the trec tests share: a scorer configuration and parsing a
// selection that must parse (test-only; not part of the library).
#ifndef RANKWATCH_TREC_TREC_TEST_UTIL_H_
#define RANKWATCH_TREC_TREC_TEST_UTIL_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trec/measure_selection.h"
#include "trec/query_scorer.h"

namespace rankwatch::trec {

// Columns of TestConfig(): num_ret, num_rel_ret, map, recip_rank
// (trec_eval's order), at relevance level 1, every doc kept.
enum TestColumn { kNumRet, kNumRelRet, kMap, kRecipRank };

inline ScorerConfig TestConfig() {
  const std::vector<std::string> specs = {"num_ret", "num_rel_ret", "map",
                                          "recip_rank"};
  return ScorerConfig{*metrics::Evaluator::Create({1}, {}),
                      MeasureTable::Create(*MeasureSelection::Parse(specs), {}),
                      std::numeric_limits<int64_t>::max(), false};
}

// Expects `specs` to parse (a failure names the error) and returns them.
inline MeasureSelection Select(std::vector<std::string> specs) {
  StatusOr<MeasureSelection> s = MeasureSelection::Parse(specs);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : MeasureSelection();
}

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_TREC_TEST_UTIL_H_
