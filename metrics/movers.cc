#include "metrics/movers.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/numeric.h"
#include "metrics/multiple_testing.h"

namespace rankwatch::metrics {

std::vector<QueryMover> RankMovers(std::span<const MoverInput> queries,
                                   int64_t baseline_lists,
                                   int64_t treatment_lists,
                                   const MoverOptions& options) {
  const double total = static_cast<double>(baseline_lists + treatment_lists);
  std::vector<QueryMover> movers;
  movers.reserve(queries.size());
  std::vector<double> p;
  for (const MoverInput& in : queries) {
    QueryMover m;
    m.query = std::string(in.query);
    m.baseline_count = in.baseline.count();
    m.treatment_count = in.treatment.count();
    m.baseline_mean = m.baseline_count > 0 ? in.baseline.mean() : kNaN;
    m.treatment_mean = m.treatment_count > 0 ? in.treatment.mean() : kNaN;
    const bool both = m.baseline_count > 0 && m.treatment_count > 0;
    m.difference = both ? m.treatment_mean - m.baseline_mean : kNaN;
    m.share =
        total > 0
            ? static_cast<double>(m.baseline_count + m.treatment_count) / total
            : 0;
    m.contribution = both ? m.share * m.difference : kNaN;
    m.tested = m.baseline_count >= options.min_lists &&
               m.treatment_count >= options.min_lists;
    m.p_value = m.p_value_bh = kNaN;
    if (m.tested) {
      m.welch = CompareWelch(Summarize(in.baseline), Summarize(in.treatment),
                             options.level);
      m.p_value = m.welch.p_value;
      p.push_back(m.p_value);
    }
    movers.push_back(std::move(m));
  }
  std::vector<double> adjusted(p.size());
  BenjaminiHochberg(p, adjusted);
  size_t next = 0;
  for (QueryMover& m : movers) {
    if (!m.tested) continue;
    m.p_value_bh = adjusted[next++];
    m.significant = m.p_value_bh <= 1 - options.level;
  }
  // Evidence first: a planted regression must not sit below an
  // unremarkable query of a larger raw contribution.
  std::stable_sort(
      movers.begin(), movers.end(),
      [](const QueryMover& a, const QueryMover& b) {
        if (a.significant != b.significant) return a.significant;
        const bool ca = !std::isnan(a.contribution);
        const bool cb = !std::isnan(b.contribution);
        if (ca != cb) return ca;
        if (ca && std::abs(a.contribution) != std::abs(b.contribution)) {
          return std::abs(a.contribution) > std::abs(b.contribution);
        }
        if (!ca) {
          const int64_t la = a.baseline_count + a.treatment_count;
          const int64_t lb = b.baseline_count + b.treatment_count;
          if (la != lb) return la > lb;
        }
        return a.query < b.query;
      });
  return movers;
}

}  // namespace rankwatch::metrics
