// Monte Carlo checks of the A/B statistics with a randomization unit (issue
// 11, item 6), on user-level traffic (daemon/sim/user_traffic.h:
// heterogeneous users with 1 to 50 requests each and a per-user quality
// effect, assigned to variants by a hash of the user id), analysed the way
// the daemon does with schema.unit set: per-arm sums over B = 64 buckets of
// the hashed user id (metrics/clustered.h), then Welch and the mSPRT
// (metrics/ab_stats.h); and the sample-ratio checks (metrics/srm.h).
//
//  (a) A/A: the false-positive rate at level 0.05 with the unit, and the
//      inflated one of the same data analysed per request;
//  (b) SRM: false alarms of the sequential test under a true 50/50 split,
//      and detection of a 51/49 split;
//  (c) power: the users needed to call a +0.01 difference, fixed-horizon
//      and sequential.
//
// The figures quoted in docs/statistics.md are printed (and recorded as
// gtest properties) by
//
//   ab_unit_simulation_test
//
// and, with RANKWATCH_SIM_SCALE times as many experiments for tighter
// figures,
//
//   RANKWATCH_SIM_SCALE=5 ab_unit_simulation_test
//
// Deterministic: a fixed seed per scenario, printed with its figures, and
// the project's generator (base/random.h). Assertions with a Monte Carlo
// tolerance allow two or three standard errors of the rate; the seeds are
// fixed, so they pass or fail the same way on every run.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/string_index.h"
#include "daemon/sim/user_traffic.h"
#include "gtest/gtest.h"
#include "metrics/ab_stats.h"
#include "metrics/clustered.h"
#include "metrics/running_stats.h"
#include "metrics/srm.h"

namespace rankwatch {
namespace {

using metrics::ArmSummary;

constexpr uint32_t kBuckets = 64;  // statistics.unit_buckets' default.
constexpr double kLevel = 0.95;
constexpr double kAlpha = 1 - kLevel;

// Multiplies the number of simulated experiments (RANKWATCH_SIM_SCALE); 1
// when unset or not a positive integer. As in metrics/ab_simulation_test.cc.
int ExperimentScale() {
  const char* env = std::getenv("RANKWATCH_SIM_SCALE");
  if (env == nullptr) return 1;
  const int scale = std::atoi(env);
  return scale >= 1 ? scale : 1;
}

// Monte Carlo standard error of a rate near `p` over n experiments.
double StandardError(double p, int64_t n) {
  return std::sqrt(p * (1 - p) / static_cast<double>(n));
}

void Record(const std::string& name, double value) {
  testing::Test::RecordProperty(name, std::to_string(value));
}

// The nearest-rank q-quantile of `values` (sorted in place).
int64_t Quantile(std::vector<int64_t>* values, double q) {
  std::sort(values->begin(), values->end());
  const auto rank = static_cast<size_t>(std::ceil(q * values->size()));
  return (*values)[std::max<size_t>(rank, 1) - 1];
}

sim::UserTraffic MakeTraffic(sim::UserTrafficConfig config) {
  StatusOr<sim::UserTraffic> traffic =
      sim::UserTraffic::Create(std::move(config));
  EXPECT_TRUE(traffic.ok()) << traffic.status().message();
  return std::move(traffic).value();
}

// The config of one simulated experiment: its own seed and assignment salt.
sim::UserTrafficConfig ExperimentConfig(uint64_t seed, double effect) {
  uint64_t state = seed;
  return {.seed = seed,
          .assignment_salt = SplitMix64(&state),
          .treatment_effect = effect};
}

uint32_t BucketOf(std::string_view user_id) {
  return metrics::UnitBucket(HashBytes(user_id), kBuckets);
}

// What the daemon keeps for one arm with schema.unit set (bucket sums), and
// without it (a RunningStats over requests).
struct Arm {
  std::array<double, kBuckets> sums{};
  std::array<int64_t, kBuckets> counts{};
  metrics::RunningStats requests;

  void Add(uint32_t bucket, double value) {
    sums[bucket] += value;
    ++counts[bucket];
    requests.Add(value);
  }
  ArmSummary Clustered() const {
    return metrics::SummarizeBuckets(sums, counts);
  }
  ArmSummary Independent() const { return metrics::Summarize(requests); }
};

// ---------------------------------------------------------------------------
// (a) A/A.

constexpr uint64_t kAaSeed = 20241101;
constexpr int kAaExperiments = 2000;
constexpr int kAaUsers = 5000;      // About 20,000 requests.
constexpr int kAaLookEvery = 1000;  // Requests between sequential looks.

TEST(AbUnitSimulationTest, AaFalsePositiveRate) {
  const int experiments = kAaExperiments * ExperimentScale();
  int unit_rejections = 0;
  int request_rejections = 0;
  int unit_sequential = 0;
  int request_sequential = 0;
  double design_effect_sum = 0;
  int64_t requests_total = 0;
  for (int e = 0; e < experiments; ++e) {
    const uint64_t seed = kAaSeed + e;
    SCOPED_TRACE("seed " + std::to_string(seed));
    sim::UserTraffic traffic = MakeTraffic(ExperimentConfig(seed, 0));
    const std::vector<sim::UserRequest> requests = traffic.Generate(kAaUsers);
    requests_total += std::ssize(requests);
    std::vector<uint32_t> bucket(kAaUsers);
    for (int u = 0; u < kAaUsers; ++u) {
      bucket[u] = BucketOf("user-" + std::to_string(u));
    }
    std::array<Arm, 2> arms;
    metrics::SequentialTest unit_test;
    metrics::SequentialTest request_test;
    for (size_t i = 0; i < requests.size(); ++i) {
      const sim::UserRequest& r = requests[i];
      arms[r.variant].Add(bucket[r.user_index], r.value);
      if ((i + 1) % kAaLookEvery == 0 || i + 1 == requests.size()) {
        (void)unit_test.Update(arms[0].Clustered(), arms[1].Clustered());
        (void)request_test.Update(arms[0].Independent(), arms[1].Independent());
      }
    }
    const ArmSummary a = arms[0].Clustered();
    const ArmSummary b = arms[1].Clustered();
    const metrics::WelchComparison unit = metrics::CompareWelch(a, b, kLevel);
    const metrics::WelchComparison request = metrics::CompareWelch(
        arms[0].Independent(), arms[1].Independent(), kLevel);
    ASSERT_TRUE(unit.ok());
    ASSERT_TRUE(request.ok());
    unit_rejections += unit.p_value < kAlpha;
    request_rejections += request.p_value < kAlpha;
    unit_sequential += unit_test.rejected();
    request_sequential += request_test.rejected();
    design_effect_sum +=
        (a.variance / a.count) /
        (arms[0].Independent().variance / arms[0].Independent().count);
  }
  const double unit_rate = static_cast<double>(unit_rejections) / experiments;
  const double request_rate =
      static_cast<double>(request_rejections) / experiments;
  const double unit_seq = static_cast<double>(unit_sequential) / experiments;
  const double request_seq =
      static_cast<double>(request_sequential) / experiments;
  const double design_effect = design_effect_sum / experiments;
  std::printf(
      "[aa] seed %" PRIu64
      "+e, %d experiments of %d users (%.0f requests "
      "on average), %u buckets, alpha %.2f:\n"
      "  Welch with the unit (buckets):     %.4f (MC s.e. %.4f)\n"
      "  Welch per request (independent):   %.4f\n"
      "  mSPRT with the unit, ever:         %.4f (looks every %d requests)\n"
      "  mSPRT per request, ever:           %.4f\n"
      "  mean design effect (arm A):        %.2f\n",
      kAaSeed, experiments, kAaUsers,
      static_cast<double>(requests_total) / experiments, kBuckets, kAlpha,
      unit_rate, StandardError(kAlpha, experiments), request_rate, unit_seq,
      kAaLookEvery, request_seq, design_effect);
  Record("aa_experiments", experiments);
  Record("aa_unit_welch_false_positive_rate", unit_rate);
  Record("aa_request_welch_false_positive_rate", request_rate);
  Record("aa_unit_sequential_false_positive_rate", unit_seq);
  Record("aa_request_sequential_false_positive_rate", request_seq);
  Record("aa_design_effect", design_effect);
  SCOPED_TRACE("seed " + std::to_string(kAaSeed) + "+e");
  EXPECT_GE(unit_rate, 0.035);
  EXPECT_LE(unit_rate, 0.065);
  // Per request, the variance is understated by the design effect, so the
  // test rejects far more often than its level.
  EXPECT_GT(request_rate, 0.10);
  EXPECT_LE(unit_seq, kAlpha + 2 * StandardError(kAlpha, experiments));
}

// ---------------------------------------------------------------------------
// (b) SRM. Only the counts matter, so each batch of users is one binomial
// draw of the treatment's share, by inversion of its exact CDF.

// Draws from Binomial(n, p) by binary search of a uniform in the CDF,
// tabulated once from the log-pmf (std::lgamma).
class BinomialSampler {
 public:
  BinomialSampler(int64_t n, double p) : cdf_(n + 1) {
    double total = 0;
    for (int64_t k = 0; k <= n; ++k) {
      const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) -
                             std::lgamma(n - k + 1.0) + k * std::log(p) +
                             (n - k) * std::log1p(-p);
      total += std::exp(log_pmf);
      cdf_[k] = total;
    }
    for (double& c : cdf_) c /= total;
  }

  int64_t Draw(Xoshiro256* rng) const {
    const double u = rng->Uniform();
    return std::upper_bound(cdf_.begin(), cdf_.end() - 1, u) - cdf_.begin();
  }

 private:
  std::vector<double> cdf_;
};

constexpr uint64_t kSrmSeed = 20241102;

TEST(AbUnitSimulationTest, SrmUnderTheConfiguredSplit) {
  constexpr int kRuns = 10000;
  constexpr int64_t kUsers = 1'000'000;
  constexpr int64_t kBatch = 2000;  // Users between looks: 500 looks.
  const int runs = kRuns * ExperimentScale();
  const std::vector<double> shares = {0.5, 0.5};
  const BinomialSampler sampler(kBatch, 0.5);
  Xoshiro256 rng(kSrmSeed);
  int sequential_alarms = 0;
  int chi_square_ever = 0;  // Chi-square read at every look.
  int chi_square_final = 0;
  for (int run = 0; run < runs; ++run) {
    metrics::SequentialSrmTest test(shares);
    std::array<int64_t, 2> counts = {0, 0};
    bool ever = false;
    metrics::SrmChiSquare chi;
    for (int64_t seen = 0; seen < kUsers; seen += kBatch) {
      const int64_t treated = sampler.Draw(&rng);
      counts[0] += kBatch - treated;
      counts[1] += treated;
      ASSERT_EQ(test.Update(counts), metrics::SrmStatus::kOk);
      chi = metrics::TestSampleRatio(counts, shares);
      ever |= chi.p_value < metrics::kDefaultSrmLevel;
    }
    sequential_alarms += test.p_value() < metrics::kDefaultSrmLevel;
    chi_square_ever += ever;
    chi_square_final += chi.p_value < metrics::kDefaultSrmLevel;
  }
  const double rate = static_cast<double>(sequential_alarms) / runs;
  const double ever_rate = static_cast<double>(chi_square_ever) / runs;
  const double final_rate = static_cast<double>(chi_square_final) / runs;
  std::printf("[srm_null] seed %" PRIu64 ", %d runs of %" PRId64
              " users at 50/50, "
              "looks every %" PRId64
              " users, level %.3f:\n"
              "  sequential SRM ever raised:       %.4f\n"
              "  chi-square at every look, ever:   %.4f\n"
              "  chi-square at the end only:       %.4f\n",
              kSrmSeed, runs, kUsers, kBatch, metrics::kDefaultSrmLevel, rate,
              ever_rate, final_rate);
  Record("srm_null_runs", runs);
  Record("srm_null_sequential_rate", rate);
  Record("srm_null_chi_square_every_look_rate", ever_rate);
  Record("srm_null_chi_square_final_rate", final_rate);
  SCOPED_TRACE("seed " + std::to_string(kSrmSeed));
  EXPECT_LE(rate, 0.002);
}

TEST(AbUnitSimulationTest, SrmDetects51To49) {
  constexpr int kRuns = 200;
  constexpr int64_t kUsers = 200'000;
  constexpr int64_t kBatch = 1000;
  const int runs = kRuns * ExperimentScale();
  const std::vector<double> shares = {0.5, 0.5};
  const BinomialSampler sampler(kBatch, 0.49);  // Treatment's true share.
  Xoshiro256 rng(kSrmSeed + 1);
  std::vector<int64_t> users_to_flag;
  double max_chi_p = 0;
  double max_sequential_p = 0;
  for (int run = 0; run < runs; ++run) {
    metrics::SequentialSrmTest test(shares);
    std::array<int64_t, 2> counts = {0, 0};
    int64_t flagged_at = std::numeric_limits<int64_t>::max();
    for (int64_t seen = kBatch; seen <= kUsers; seen += kBatch) {
      const int64_t treated = sampler.Draw(&rng);
      counts[0] += kBatch - treated;
      counts[1] += treated;
      ASSERT_EQ(test.Update(counts), metrics::SrmStatus::kOk);
      if (test.p_value() < metrics::kDefaultSrmLevel) {
        flagged_at = std::min(flagged_at, seen);
      }
    }
    const metrics::SrmChiSquare chi = metrics::TestSampleRatio(counts, shares);
    ASSERT_EQ(chi.status, metrics::SrmStatus::kOk);
    max_chi_p = std::max(max_chi_p, chi.p_value);
    max_sequential_p = std::max(max_sequential_p, test.p_value());
    users_to_flag.push_back(flagged_at);
  }
  const int64_t median = Quantile(&users_to_flag, 0.5);
  const int64_t p90 = Quantile(&users_to_flag, 0.9);
  std::printf("[srm_51_49] seed %" PRIu64 ", %d runs of %" PRId64
              " users at "
              "51/49 against 50/50, looks every %" PRId64
              " users:\n"
              "  largest chi-square p at the end:  %.3g\n"
              "  largest sequential p at the end:  %.3g\n"
              "  users to flag (sequential): median %" PRId64
              ", 90th pct %" PRId64 ", max %" PRId64 "\n",
              kSrmSeed + 1, runs, kUsers, kBatch, max_chi_p, max_sequential_p,
              median, p90, users_to_flag.back());
  Record("srm_51_49_runs", runs);
  Record("srm_51_49_max_chi_square_p", max_chi_p);
  Record("srm_51_49_max_sequential_p", max_sequential_p);
  Record("srm_51_49_median_users_to_flag", static_cast<double>(median));
  Record("srm_51_49_p90_users_to_flag", static_cast<double>(p90));
  SCOPED_TRACE("seed " + std::to_string(kSrmSeed + 1));
  // Flagged in every run, by both tests.
  EXPECT_LT(max_chi_p, metrics::kDefaultSrmLevel);
  EXPECT_LT(max_sequential_p, metrics::kDefaultSrmLevel);
  EXPECT_LE(users_to_flag.back(), kUsers);
}

// ---------------------------------------------------------------------------
// (c) Power for a true +0.01 difference of the mean value.

constexpr uint64_t kPowerSeed = 20241104;
constexpr double kEffect = 0.01;
constexpr double kPower = 0.8;
constexpr int kPilotUsers = 200'000;
constexpr int kPowerExperiments = 1000;
constexpr int kSequentialExperiments = 400;
constexpr int64_t kSequentialLookEvery = 1000;  // Users between looks.

// Var(mean over U users) = sigma_u^2 / U with the per-unit variance
// sigma_u^2 = E[(Y_u - m n_u)^2] / E[n_u]^2 (Y_u the user's sum, n_u its
// requests, m the mean; the delta method, Deng et al. KDD 2018), estimated
// here from a large pilot sample of the baseline's users.
double PerUnitVariance() {
  sim::UserTraffic traffic = MakeTraffic(ExperimentConfig(kPowerSeed, 0));
  std::vector<double> sums(kPilotUsers);
  std::vector<double> counts(kPilotUsers);
  double total = 0;
  double n = 0;
  sim::SimUser user;
  for (int u = 0; u < kPilotUsers; ++u) {
    traffic.NextUser(&user);
    for (double v : user.values) sums[u] += v;
    counts[u] = static_cast<double>(user.values.size());
    total += sums[u];
    n += counts[u];
  }
  const double m = total / n;
  const double mean_count = n / kPilotUsers;
  double squares = 0;
  for (int u = 0; u < kPilotUsers; ++u) {
    squares += (sums[u] - m * counts[u]) * (sums[u] - m * counts[u]);
  }
  return squares / kPilotUsers / (mean_count * mean_count);
}

// Feeds one user into bucket sums.
void AddUser(const sim::SimUser& user, std::array<Arm, 2>* arms) {
  const uint32_t bucket = BucketOf(user.id);
  Arm& arm = (*arms)[user.variant];
  for (double v : user.values) {
    arm.sums[bucket] += v;
    ++arm.counts[bucket];
  }
}

// sigma_u^2 of the default model by quadrature (SciPy 1.10): with a the
// user effect, g(a) = E[v | a] and h(a) = Var(v | a) from
// integrate.quad over the clamped normal, E[(Y - m n)^2] = E[n] E[h(a)] +
// E[n^2] Var(g(a)) = 4.070888 * 0.0599263 + 38.807449 * 0.0146991, over
// E[n]^2: 0.0491421 (design effect sigma_u^2 E[n] / Var(v) = 2.68).
constexpr double kUnitVarianceByQuadrature = 0.049142051118703484;

TEST(AbUnitSimulationTest, PowerForAOnePointDifference) {
  // Fixed horizon, 50/50: Var(difference) = 2 sigma_u^2 / (U / 2), so
  // U = 4 sigma_u^2 (q_{1 - alpha/2} + z_{power})^2 / effect^2 users, with
  // q the normal quantile (the textbook formula) or, closer to the test
  // actually run, Student's t with 2 (B - 1) degrees of freedom (Welch's
  // df with B buckets per arm and equal variances).
  const double unit_variance = PerUnitVariance();
  const double z_power = metrics::NormalQuantile(kPower);
  const double z = metrics::NormalQuantile(1 - kAlpha / 2) + z_power;
  const double t =
      metrics::StudentTQuantile(1 - kAlpha / 2, 2.0 * (kBuckets - 1)) + z_power;
  const auto normal_users = static_cast<int64_t>(
      std::ceil(4 * unit_variance * z * z / (kEffect * kEffect)));
  const auto users = static_cast<int64_t>(
      std::ceil(4 * unit_variance * t * t / (kEffect * kEffect)));

  // Checked by simulation at that size.
  const int experiments = kPowerExperiments * ExperimentScale();
  int significant = 0;
  sim::SimUser user;
  for (int e = 0; e < experiments; ++e) {
    sim::UserTraffic traffic =
        MakeTraffic(ExperimentConfig(kPowerSeed + 1 + e, kEffect));
    std::array<Arm, 2> arms;
    for (int64_t u = 0; u < users; ++u) {
      traffic.NextUser(&user);
      AddUser(user, &arms);
    }
    const metrics::WelchComparison w =
        metrics::CompareWelch(arms[0].Clustered(), arms[1].Clustered(), kLevel);
    significant += w.ok() && w.p_value < kAlpha && w.difference > 0;
  }
  const double power = static_cast<double>(significant) / experiments;

  // Sequential: users arrive one after another (each with all its
  // requests), the mSPRT looks every kSequentialLookEvery users, until its
  // always-valid interval excludes 0 or 20 times the fixed-horizon size.
  const int sequential_experiments = kSequentialExperiments * ExperimentScale();
  const int64_t cap = 20 * users;
  std::vector<int64_t> users_to_call;
  int wrong_sign = 0;
  for (int e = 0; e < sequential_experiments; ++e) {
    sim::UserTraffic traffic =
        MakeTraffic(ExperimentConfig(kPowerSeed + 100'000 + e, kEffect));
    std::array<Arm, 2> arms;
    metrics::SequentialTest test;
    int64_t called_at = std::numeric_limits<int64_t>::max();
    for (int64_t u = 1; u <= cap; ++u) {
      traffic.NextUser(&user);
      AddUser(user, &arms);
      if (u % kSequentialLookEvery != 0) continue;
      (void)test.Update(arms[0].Clustered(), arms[1].Clustered());
      if (test.rejected()) {
        called_at = u;
        wrong_sign += test.interval().upper < 0;
        break;
      }
    }
    users_to_call.push_back(called_at);
  }
  const int64_t median = Quantile(&users_to_call, 0.5);
  const int64_t p80 = Quantile(&users_to_call, 0.8);
  std::printf("[power] seed %" PRIu64
              ", effect %+.3f, alpha %.2f, power %.2f:\n"
              "  per-unit variance sigma_u^2:    %.5f (pilot of %d users)\n"
              "  fixed horizon, analytic:        %" PRId64
              " users (normal quantile: %" PRId64
              ")\n"
              "  simulated power at that size:   %.4f (%d experiments, MC s.e. "
              "%.4f)\n"
              "  sequential (looks every %" PRId64
              " users, tau %.2f), %d "
              "experiments: median %" PRId64 " users, 80th pct %" PRId64
              " (%.2fx and %.2fx the fixed horizon), wrong sign %d\n",
              kPowerSeed, kEffect, kAlpha, kPower, unit_variance, kPilotUsers,
              users, normal_users, power, experiments,
              StandardError(kPower, experiments), kSequentialLookEvery,
              metrics::kDefaultMixingStddev, sequential_experiments, median,
              p80, static_cast<double>(median) / users,
              static_cast<double>(p80) / users, wrong_sign);
  Record("power_unit_variance", unit_variance);
  Record("power_fixed_horizon_users", static_cast<double>(users));
  Record("power_fixed_horizon_users_normal", static_cast<double>(normal_users));
  Record("power_fixed_horizon_simulated", power);
  Record("power_sequential_median_users", static_cast<double>(median));
  Record("power_sequential_p80_users", static_cast<double>(p80));
  SCOPED_TRACE("seed " + std::to_string(kPowerSeed));
  // The pilot's estimate agrees with the quadrature (its sampling error
  // is about 1%: the heavy users' squared deviations have a long tail).
  EXPECT_NEAR(unit_variance, kUnitVarianceByQuadrature,
              0.05 * kUnitVarianceByQuadrature);
  EXPECT_NEAR(power, kPower, 3 * StandardError(kPower, experiments));
  // The 80th percentile was reached before the cap, and always-valid
  // intervals called the wrong sign at most alpha of the time.
  EXPECT_LE(p80, cap);
  EXPECT_LE(wrong_sign, kAlpha * sequential_experiments +
                            2 * std::sqrt(kAlpha * sequential_experiments));
}

}  // namespace
}  // namespace rankwatch
