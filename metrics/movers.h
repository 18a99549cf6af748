// Movers: which queries carry a difference between two A/B arms (issue 26).
// Given each tracked query's statistics in the baseline and the treatment
// arm (metrics/query_summary.h), ranks the queries by their contribution to
// the overall difference and tests each.
//
// Definitions (docs/statistics.md, "Query movers"): with n_B(q), n_T(q) the
// query's scored lists in each arm, N_B, N_T the arms' lists, m_B(q), m_T(q)
// its means,
//   share(q)        = (n_B(q) + n_T(q)) / (N_B + N_T),
//   difference(q)   = m_T(q) - m_B(q),
//   contribution(q) = share(q) x difference(q),
// the part of the overall difference of means the query's own change makes
// at its traffic share (the overall difference also moves with the mix of
// queries, which the contributions leave out). Queries are ranked by
// |contribution|, largest first. Each query with at least `min_lists`
// lists in both arms gets Welch's test (metrics/ab_stats.h), and the tested
// queries' p-values are adjusted by Benjamini-Hochberg together; the others
// are listed untested (p-values NaN).
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_MOVERS_H_
#define RANKWATCH_METRICS_MOVERS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/ab_stats.h"
#include "metrics/running_stats.h"

namespace rankwatch::metrics {

struct MoverInput {
  std::string_view query;
  RunningStats baseline;   // The query's values in the baseline arm.
  RunningStats treatment;  // And in the treatment arm.
};

struct MoverOptions {
  int64_t min_lists = 10;  // In each arm, for a test.
  double level = kDefaultLevel;
};

struct QueryMover {
  std::string query;
  int64_t baseline_count = 0;
  int64_t treatment_count = 0;
  double baseline_mean = 0;   // NaN without lists.
  double treatment_mean = 0;  // NaN without lists.
  double difference = 0;      // NaN unless both arms have lists.
  double share = 0;
  double contribution = 0;  // NaN unless both arms have lists.
  bool tested = false;      // min_lists in both arms.
  WelchComparison welch;    // When tested.
  double p_value = 0;       // Welch's; NaN when not tested.
  double p_value_bh = 0;    // Benjamini-Hochberg over the tested; NaN else.
};

// `baseline_lists` and `treatment_lists`: the arms' scored lists (N_B,
// N_T), of every query. Queries with lists in both arms come first, by
// |contribution| then query text; then the others, by lists.
std::vector<QueryMover> RankMovers(std::span<const MoverInput> queries,
                                   int64_t baseline_lists,
                                   int64_t treatment_lists,
                                   const MoverOptions& options);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_MOVERS_H_
