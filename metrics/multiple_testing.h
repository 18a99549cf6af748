// Multiple-comparison adjustment of p-values.
//
// Pure functions; thread-safe.
#ifndef RANKWATCH_METRICS_MULTIPLE_TESTING_H_
#define RANKWATCH_METRICS_MULTIPLE_TESTING_H_

#include <span>

namespace rankwatch::metrics {

// Benjamini-Hochberg adjusted p-values (Benjamini and Hochberg, JRSS B
// 57(1), 1995), as R's p.adjust(method = "BH") and statsmodels'
// multipletests(method = "fdr_bh"): with p sorted ascending p_(1) <= ... <=
// p_(m), adjusted_(i) = min(1, min_{j >= i} m p_(j) / j), written back in
// the input order. Rejecting every hypothesis whose adjusted p-value is at
// most q controls the false discovery rate of the family at q (for
// independent or positively dependent tests). `adjusted` must have the size
// of `p_values` (it may be the same span). NaN p-values are treated as 1
// and stay in the family (a comparison without data is still one of the m);
// so are p-values outside [0, 1]. If the sizes differ, `adjusted` is filled
// with NaN.
void BenjaminiHochberg(std::span<const double> p_values,
                       std::span<double> adjusted);

// Holm adjusted p-values (Holm, Scand. J. Statist. 6(2), 1979), as R's
// p.adjust(method = "holm") and statsmodels' multipletests(method = "holm"):
// with p sorted ascending, adjusted_(i) = min(1, max_{j <= i} (m - j + 1)
// p_(j)), written back in the input order. Rejecting every hypothesis whose
// adjusted p-value is at most alpha controls the family-wise error rate at
// alpha under any dependence. Same conventions as BenjaminiHochberg: NaN
// and out-of-range p-values count as 1 and stay in the family, `adjusted`
// may alias `p_values`, and differing sizes fill `adjusted` with NaN.
void Holm(std::span<const double> p_values, std::span<double> adjusted);

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_MULTIPLE_TESTING_H_
