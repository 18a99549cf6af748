#include "metrics/ab_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

namespace rankwatch::metrics {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

// ---------------------------------------------------------------------------
// log Gamma and log Beta. std::lgamma writes the global `signgam` in glibc,
// a data race when several threads compute statistics, so these use
// std::tgamma for small arguments and Stirling's series for large ones.

// Above this, Stirling's series through z^-9 is exact to double precision,
// and below it Gamma(z) and Gamma(2z) stay far from overflow.
constexpr double kStirlingMin = 64;

// log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) for z >= kStirlingMin.
double StirlingCorrection(double z) {
  const double r = 1 / z;
  const double r2 = r * r;
  return r *
         (1.0 / 12 -
          r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 / 1188))));
}

double LogGamma(double z) {
  if (z < kStirlingMin) return std::log(std::tgamma(z));
  return (z - 0.5) * std::log(z) - z + 0.5 * std::log(2 * std::numbers::pi) +
         StirlingCorrection(z);
}

// log Gamma(a) - log Gamma(a + b) for a, b > 0. For large a the two terms
// are huge and nearly equal; Stirling's series lets them cancel exactly.
double LogGammaRatio(double a, double b) {
  if (a < kStirlingMin) return LogGamma(a) - LogGamma(a + b);
  return -(a - 0.5) * std::log1p(b / a) - b * std::log(a + b) + b +
         StirlingCorrection(a) - StirlingCorrection(a + b);
}

double LogBeta(double a, double b) {
  if (a < b) std::swap(a, b);
  return LogGamma(b) + LogGammaRatio(a, b);
}

// ---------------------------------------------------------------------------
// Incomplete beta.

// Continued fraction for I_x(a, b) * a / (x^a (1 - x)^b / B(a, b)), by the
// modified Lentz method (Numerical Recipes, 3rd ed., betacf). Converges fast
// for x < (a + 1) / (a + b + 2); it needs O(sqrt(max(a, b))) terms near that
// point, hence the generous bound.
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;  // Keeps Lentz's divisions finite.
  constexpr int kMaxIterations = 1'000'000;
  const double qab = a + b;
  const double qap = a + 1;
  const double qam = a - 1;
  double c = 1;
  double d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    // Odd step.
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) <= kEpsilon) break;
  }
  return h;
}

// x^a y^b / B(a, b), with y = 1 - x given separately so that neither loses
// digits when the other is close to 1.
double BetaPrefactor(double a, double b, double x, double y) {
  const double log_x = x < 0.5 ? std::log(x) : std::log1p(-y);
  const double log_y = y < 0.5 ? std::log(y) : std::log1p(-x);
  return std::exp(a * log_x + b * log_y - LogBeta(a, b));
}

// I_x(a, b) with y = 1 - x.
double IncompleteBeta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  if (x < (a + 1) / (a + b + 2)) {
    return BetaPrefactor(a, b, x, y) * BetaContinuedFraction(a, b, x) / a;
  }
  // I_x(a, b) = 1 - I_y(b, a), whose fraction converges fast here.
  return 1 - BetaPrefactor(b, a, y, x) * BetaContinuedFraction(b, a, y) / b;
}

// ---------------------------------------------------------------------------
// Student t.

// From this many degrees of freedom on, the t tail comes from Hill's
// expansion: the continued fraction loses digits to cancellation (its
// relative error grows like 1e-16 * df / t^2), while the expansion's error,
// measured against mpmath, falls roughly like df^-5. At 1e4 both are below
// 1e-12 relative (ab_stats_test.cc checks either side).
constexpr double kLargeDf = 1e4;

// P(|T| >= |t|) for large df by Hill's asymptotic normalizing
// transformation of t into a normal deviate (G. W. Hill, "Algorithm 395:
// Student's t-distribution", Communications of the ACM 13(10), 617-619,
// 1970).
double StudentTTwoSidedLargeDf(double t, double df) {
  const double s = t * t / df;
  if (std::isinf(s)) return 0;
  const double a = df - 0.5;
  const double b = 48 * a * a;
  double y = a * std::log1p(s);
  y = (((((-0.4 * y - 3.3) * y - 24) * y - 85.5) / (0.8 * y * y + 100 + b) + y +
        3) /
           b +
       1) *
      std::sqrt(y);
  return std::erfc(y / std::numbers::sqrt2);
}

// log K for the tail bound P(T > t) <= K t^-df, which follows from
// (1 + s^2 / df) >= s^2 / df under the density's integral and is tight, to a
// relative 1 - O(df^2 / t^2), for t^2 >> df^2.
double LogTailConstant(double df) {
  return -LogGammaRatio(df / 2, 0.5) - 0.5 * std::log(std::numbers::pi) +
         (df - 2) / 2 * std::log(df);
}

// K |t|^-df. As a product it keeps full precision; as exp(log K - df log|t|)
// the exponent's rounding would cost about |exponent| * 1e-16 relative, so
// that form is only for when K or the power is out of range.
double PowerLawTail(double t, double df) {
  const double log_k = LogTailConstant(df);
  const double power = std::pow(std::fabs(t), -df);
  if (std::fabs(log_k) < 700 && power >= std::numeric_limits<double>::min()) {
    return std::exp(log_k) * power;
  }
  return std::exp(log_k - df * std::log(std::fabs(t)));
}

// P(T <= -|t|) for T ~ t(df), df finite and positive.
double StudentTLowerTail(double t, double df) {
  if (df >= kLargeDf) return 0.5 * StudentTTwoSidedLargeDf(t, df);
  // So far out that t^2 would lose digits (or overflow) on its way into the
  // beta function, the power law is exact to double precision.
  if (t * t / df > 1e20) return PowerLawTail(t, df);
  // x = df / (df + t^2) and y = t^2 / (df + t^2), without overflow in t^2.
  double x;
  double y;
  if (t * t <= df) {
    const double s = t * t / df;
    x = 1 / (1 + s);
    y = s / (1 + s);
  } else {
    const double r = df / t / t;
    x = r / (1 + r);
    y = 1 / (1 + r);
  }
  return 0.5 * IncompleteBeta(df / 2, 0.5, x, y);
}

double StudentTPdf(double t, double df) {
  const double log_norm =
      -LogGammaRatio(df / 2, 0.5) - 0.5 * std::log(df * std::numbers::pi);
  return std::exp(log_norm - (df + 1) / 2 * std::log1p(t * t / df));
}

// Cornish-Fisher expansion of the t quantile around the normal one, to
// 1/df^4 (Abramowitz and Stegun 26.7.5): the upper q quantile. Relative
// error about 1e-16 at df = 1000, 4e-9 at df = 40 for q = 0.025; poor when
// df is small and q tiny, where it only seeds the bracketed search.
double CornishFisherT(double q, double df) {
  const double z = -NormalQuantile(q);
  const double z2 = z * z;
  const double g1 = z * (z2 + 1) / 4;
  const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
  const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
  const double g4 =
      z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

// The t > 0 with P(T > t) = q, for 0 < q < 1/2 and finite df.
double StudentTUpperQuantile(double q, double df) {
  if (df == 1) return 1 / std::tan(std::numbers::pi * q);
  if (df == 2) return (1 - 2 * q) / std::sqrt(2 * q * (1 - q));
  // Bracket: P(T > 0) = 1/2 > q, and the tail bound K t^-df gives an upper
  // end.
  double lo = 0;
  double hi = std::min(std::exp((LogTailConstant(df) - std::log(q)) / df),
                       std::numeric_limits<double>::max());
  double t = CornishFisherT(q, df);
  if (!(t > lo && t < hi)) t = hi;
  // Newton's method on log P(T > t) - log q, kept inside the bracket.
  const double log_q = std::log(q);
  for (int i = 0; i < 200; ++i) {
    const double tail = StudentTLowerTail(t, df);
    if (tail == q) return t;
    if (tail > q) {
      lo = t;
    } else {
      hi = t;
    }
    double next = t + (std::log(tail) - log_q) * tail / StudentTPdf(t, df);
    if (next > lo && next < hi) {
      // Newton converges quadratically: after a step this small, what is
      // left is far below the 1e-13 noise of the tail itself.
      if (std::fabs(next - t) <= 1e-9 * next) return next;
    } else {
      // Bisect, geometrically while the bracket spans orders of magnitude.
      next = (lo > 0 && hi > 4 * lo) ? std::sqrt(lo) * std::sqrt(hi)
                                     : lo + (hi - lo) / 2;
    }
    if (hi - lo <= 4 * kEpsilon * hi) return next;
    t = next;
  }
  return t;
}

// ---------------------------------------------------------------------------
// Input checks shared by the comparisons.

bool ValidArm(const ArmSummary& arm) {
  return arm.count >= 0 && std::isfinite(arm.mean) &&
         std::isfinite(arm.variance) && arm.variance >= 0;
}

bool ValidLevel(double level) { return level > 0 && level < 1; }

// Fills the fields every comparison reports: the difference and, where it
// is defined, the relative difference. False if the difference of two
// finite means overflows.
bool SetDifference(const ArmSummary& baseline, const ArmSummary& treatment,
                   double* difference, double* relative_difference,
                   bool* has_relative_difference) {
  if (baseline.count == 0 || treatment.count == 0) return true;
  *difference = treatment.mean - baseline.mean;
  if (!std::isfinite(*difference)) {
    *difference = 0;
    return false;
  }
  if (baseline.mean == 0) return true;
  *relative_difference = *difference / baseline.mean;
  *has_relative_difference = std::isfinite(*relative_difference);
  if (!*has_relative_difference) *relative_difference = kNaN;
  return true;
}

// Variance of the difference of means, vb / nb + vt / nt; both counts >= 2.
double DifferenceVariance(const ArmSummary& baseline,
                          const ArmSummary& treatment) {
  return baseline.variance / static_cast<double>(baseline.count) +
         treatment.variance / static_cast<double>(treatment.count);
}

// Welch-Satterthwaite degrees of freedom, written with the arms' shares of
// the variance so that tiny or huge variances neither underflow nor
// overflow when squared.
double WelchDegreesOfFreedom(const ArmSummary& baseline,
                             const ArmSummary& treatment) {
  const double total = DifferenceVariance(baseline, treatment);
  const double share_b =
      baseline.variance / static_cast<double>(baseline.count) / total;
  const double share_t =
      treatment.variance / static_cast<double>(treatment.count) / total;
  return 1 / (share_b * share_b / static_cast<double>(baseline.count - 1) +
              share_t * share_t / static_cast<double>(treatment.count - 1));
}

}  // namespace

// ---------------------------------------------------------------------------
// Distribution functions.

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double NormalQuantile(double p) {
  // Wichura, "Algorithm AS 241: The Percentage Points of the Normal
  // Distribution", Applied Statistics 37(3), 477-484, 1988 (PPND16), with
  // coefficients as published; about 1e-16 relative accuracy.
  static constexpr double kA[8] = {
      3.3871328727963666080e0,  1.3314166789178437745e+2,
      1.9715909503065514427e+3, 1.3731693765509461125e+4,
      4.5921953931549871457e+4, 6.7265770927008700853e+4,
      3.3430575583588128105e+4, 2.5090809287301226727e+3};
  static constexpr double kB[8] = {1.0,
                                   4.2313330701600911252e+1,
                                   6.8718700749205790830e+2,
                                   5.3941960214247511077e+3,
                                   2.1213794301586595867e+4,
                                   3.9307895800092710610e+4,
                                   2.8729085735721942674e+4,
                                   5.2264952788528545610e+3};
  static constexpr double kC[8] = {
      1.42343711074968357734e0,  4.63033784615654529590e0,
      5.76949722146069140550e0,  3.64784832476320460504e0,
      1.27045825245236838258e0,  2.41780725177450611770e-1,
      2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double kD[8] = {1.0,
                                   2.05319162663775882187e0,
                                   1.67638483018380384940e0,
                                   6.89767334985100004550e-1,
                                   1.48103976427480074590e-1,
                                   1.51986665636164571966e-2,
                                   5.47593808499534494600e-4,
                                   1.05075007164441684324e-9};
  static constexpr double kE[8] = {
      6.65790464350110377720e0,  5.46378491116411436990e0,
      1.78482653991729133580e0,  2.96560571828504891230e-1,
      2.65321895265761230930e-2, 1.24266094738807843860e-3,
      2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double kF[8] = {1.0,
                                   5.99832206555887937690e-1,
                                   1.36929880922735805310e-1,
                                   1.48753612908506148525e-2,
                                   7.86869131145613259100e-4,
                                   1.84631831751005468180e-5,
                                   1.42151175831644588870e-7,
                                   2.04426310338993978564e-15};
  const auto ratio = [](const double(&num)[8], const double(&den)[8],
                        double r) {
    double n = num[7];
    double d = den[7];
    for (int i = 6; i >= 0; --i) {
      n = n * r + num[i];
      d = d * r + den[i];
    }
    return n / d;
  };

  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) return q * ratio(kA, kB, 0.180625 - q * q);
  const double r = std::sqrt(-std::log(q < 0 ? p : 1 - p));
  const double x = r <= 5 ? ratio(kC, kD, r - 1.6) : ratio(kE, kF, r - 5);
  return q < 0 ? -x : x;
}

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || std::isnan(x) || x < 0 || x > 1) return kNaN;
  if (std::isinf(a) || std::isinf(b)) return kNaN;
  return IncompleteBeta(a, b, x, 1 - x);
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return NormalCdf(t);
  const double lower = StudentTLowerTail(t, df);
  return t < 0 ? lower : 1 - lower;
}

double StudentTTwoSidedPValue(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return std::erfc(std::fabs(t) / std::numbers::sqrt2);
  return 2 * StudentTLowerTail(t, df);
}

double StudentTQuantile(double p, double df) {
  if (std::isnan(p) || p < 0 || p > 1 || !(df > 0)) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (std::isinf(df)) return NormalQuantile(p);
  // 1 - p is exact for p >= 1/2.
  return p < 0.5 ? -StudentTUpperQuantile(p, df)
                 : StudentTUpperQuantile(1 - p, df);
}

// ---------------------------------------------------------------------------
// Welch.

ArmSummary Summarize(const RunningStats& stats) {
  return {stats.count(), stats.mean(), stats.variance()};
}

std::string_view ComparisonStatusName(ComparisonStatus status) {
  switch (status) {
    case ComparisonStatus::kOk:
      return "ok";
    case ComparisonStatus::kInvalidInput:
      return "invalid_input";
    case ComparisonStatus::kTooFewSamples:
      return "too_few_samples";
    case ComparisonStatus::kZeroVariance:
      return "zero_variance";
    case ComparisonStatus::kCountDecreased:
      return "count_decreased";
  }
  return "unknown";
}

WelchComparison CompareWelch(const ArmSummary& baseline,
                             const ArmSummary& treatment, double level) {
  WelchComparison result;
  result.level = level;
  result.baseline_count = baseline.count;
  result.treatment_count = treatment.count;
  if (!ValidArm(baseline) || !ValidArm(treatment) || !ValidLevel(level)) {
    return result;  // kInvalidInput.
  }
  if (!SetDifference(baseline, treatment, &result.difference,
                     &result.relative_difference,
                     &result.has_relative_difference)) {
    return result;  // kInvalidInput.
  }
  if (baseline.count < 2 || treatment.count < 2) {
    result.status = ComparisonStatus::kTooFewSamples;
    return result;
  }
  const double variance = DifferenceVariance(baseline, treatment);
  result.standard_error = std::sqrt(variance);
  if (variance == 0) {
    result.status = ComparisonStatus::kZeroVariance;
    return result;
  }
  result.status = ComparisonStatus::kOk;
  result.degrees_of_freedom = WelchDegreesOfFreedom(baseline, treatment);
  result.t_statistic = result.difference / result.standard_error;
  result.p_value =
      StudentTTwoSidedPValue(result.t_statistic, result.degrees_of_freedom);
  const double critical =
      -StudentTQuantile((1 - level) / 2, result.degrees_of_freedom);
  result.interval = {result.difference - critical * result.standard_error,
                     result.difference + critical * result.standard_error};
  return result;
}

// ---------------------------------------------------------------------------
// mSPRT.

double MsprtLogLikelihoodRatio(double difference, double variance,
                               double mixing_stddev) {
  if (!(variance > 0) || !(mixing_stddev > 0)) return kNaN;
  // With r = tau^2 / V: log Lambda = (d^2 / V) r / (2 (1 + r))
  //                                  - log(1 + r) / 2.
  const double r = mixing_stddev * mixing_stddev / variance;
  return 0.5 *
         (difference * difference / variance * (r / (1 + r)) - std::log1p(r));
}

double MsprtPValue(double difference, double variance, double mixing_stddev) {
  const double log_lambda =
      MsprtLogLikelihoodRatio(difference, variance, mixing_stddev);
  if (std::isnan(log_lambda)) return kNaN;
  return log_lambda <= 0 ? 1.0 : std::exp(-log_lambda);
}

double MsprtHalfWidth(double variance, double mixing_stddev, double level) {
  if (!(variance > 0) || !(mixing_stddev > 0) || !ValidLevel(level)) {
    return kNaN;
  }
  // Solving log Lambda = log(1 / alpha) for d^2, with r = tau^2 / V:
  //   d^2 = V (1 + 1 / r) (log(1 + r) + 2 log(1 / alpha)).
  const double r = mixing_stddev * mixing_stddev / variance;
  const double alpha = 1 - level;
  return std::sqrt(variance * (1 + 1 / r) *
                   (std::log1p(r) - 2 * std::log(alpha)));
}

SequentialLook CompareSequential(const ArmSummary& baseline,
                                 const ArmSummary& treatment,
                                 const SequentialOptions& options) {
  SequentialLook look;
  if (!ValidArm(baseline) || !ValidArm(treatment) ||
      !ValidLevel(options.level) || !(options.mixing_stddev > 0) ||
      !std::isfinite(options.mixing_stddev)) {
    return look;  // kInvalidInput.
  }
  double unused_relative = 0;
  bool unused_has_relative = false;
  if (!SetDifference(baseline, treatment, &look.difference, &unused_relative,
                     &unused_has_relative)) {
    return look;  // kInvalidInput.
  }
  if (baseline.count < 2 || treatment.count < 2) {
    look.status = ComparisonStatus::kTooFewSamples;
    return look;
  }
  look.variance = DifferenceVariance(baseline, treatment);
  const int64_t min_count = std::max<int64_t>(2, options.min_count);
  if (baseline.count < min_count || treatment.count < min_count) {
    look.status = ComparisonStatus::kTooFewSamples;
    return look;
  }
  if (look.variance == 0) {
    look.status = ComparisonStatus::kZeroVariance;
    return look;
  }
  look.status = ComparisonStatus::kOk;
  look.p_value =
      MsprtPValue(look.difference, look.variance, options.mixing_stddev);
  const double half_width =
      MsprtHalfWidth(look.variance, options.mixing_stddev, options.level);
  look.interval = {look.difference - half_width, look.difference + half_width};
  return look;
}

SequentialLook SequentialTest::Update(const ArmSummary& baseline,
                                      const ArmSummary& treatment) {
  if (baseline.count < last_baseline_count_ ||
      treatment.count < last_treatment_count_) {
    SequentialLook look;
    look.status = ComparisonStatus::kCountDecreased;
    return look;
  }
  const SequentialLook look = CompareSequential(baseline, treatment, options_);
  if (look.status == ComparisonStatus::kInvalidInput) return look;
  last_baseline_count_ = baseline.count;
  last_treatment_count_ = treatment.count;
  if (!look.ok()) return look;

  ++looks_;
  p_value_ = std::min(p_value_, look.p_value);
  const ConfidenceInterval both = {
      std::max(interval_.lower, look.interval.lower),
      std::min(interval_.upper, look.interval.upper)};
  if (contradicted_ || both.lower > both.upper) {
    contradicted_ = true;
    interval_ = look.interval;
  } else {
    interval_ = both;
  }
  return look;
}

void SequentialTest::Reset() { *this = SequentialTest(options_); }

}  // namespace rankwatch::metrics
