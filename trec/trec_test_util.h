// A scorer configuration shared by the trec tests (test-only; not part of
// the library).
#ifndef RANKWATCH_TREC_TREC_TEST_UTIL_H_
#define RANKWATCH_TREC_TREC_TEST_UTIL_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

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

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_TREC_TEST_UTIL_H_
