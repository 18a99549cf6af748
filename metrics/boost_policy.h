// The Boost.Math error and precision policy of rankwatch::metrics, shared by
// every .cc file of the library that calls Boost.Math (ab_stats.cc,
// interleaving.cc, srm.cc). Private to the library: no public header includes
// it, so Boost stays a PRIVATE dependency (see CMakeLists.txt).
//
// Boost's default policy throws on a domain error, a pole, an overflow, a
// rounding error and an evaluation error (a series that fails to
// converge); the data path has no exceptions, so every error is
// ignore_error here: Boost then returns NaN for a domain error, +-inf for
// an overflow and its best estimate for an evaluation error. ignore_error
// rather than errno_on_error because nothing reads errno. The callers also
// check their arguments before calling Boost, so the NaN and infinite
// results documented in the public headers do not rest on the policy.
//
// Boost also promotes double to long double internally by default. That
// costs about ten times the time (7.7 us against 0.7 us for one Welch
// comparison at -O2) for digits the tests do not need, so DoublePolicy
// turns it off; LongDoublePolicy keeps it, only for the t quantile's rare
// intermediate overflow (see StudentTQuantile in ab_stats.cc).
//
// Type aliases only; thread-safe.
#ifndef RANKWATCH_METRICS_BOOST_POLICY_H_
#define RANKWATCH_METRICS_BOOST_POLICY_H_

#include <boost/math/policies/policy.hpp>

namespace rankwatch::metrics::internal {

template <bool kPromote>
using NoThrowPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::denorm_error<boost::math::policies::ignore_error>,
    boost::math::policies::rounding_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<
        boost::math::policies::ignore_error>,
    boost::math::policies::indeterminate_result_error<
        boost::math::policies::ignore_error>,
    boost::math::policies::promote_double<kPromote>>;
using DoublePolicy = NoThrowPolicy<false>;
using LongDoublePolicy = NoThrowPolicy<true>;

}  // namespace rankwatch::metrics::internal

#endif  // RANKWATCH_METRICS_BOOST_POLICY_H_
