#include "daemon/sim/user_traffic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/decode/event_decoder.h"
#include "daemon/stream/decode/events.h"
#include "gtest/gtest.h"
#include "metrics/measures.h"

namespace rankwatch::sim {
namespace {

// Reference figures of the default configuration, computed with SciPy 1.10
// (scipy.stats.norm, scipy.integrate.quad, scipy.optimize.brentq) by
//
//   from scipy import stats, integrate, optimize; import math
//   mu, s = 0.7, 1.1; Z = stats.norm.cdf((math.log(50) - mu) / s)
//   P(n = k) = (stats.norm.cdf((math.log(k) - mu) / s)
//               - stats.norm.cdf((math.log(k - 1) - mu) / s)) / Z
//   clamp(m, sd) = integrate.quad(lambda x: x * stats.norm.pdf(x, m, sd),
//                                 0, 1)[0] + stats.norm.sf(1, m, sd)
//   E = 0.85 * clamp(0.45, math.hypot(0.15, 0.2))
//   shift = optimize.brentq(lambda d: 0.85 * clamp(0.45 + d, sd) - E - 0.01,
//                           -0.5, 0.5, xtol=1e-15)
constexpr double kOneRequestShare = 0.26272950522421207;  // P(n = 1)
constexpr double kMeanRequests = 4.070888179255631;
constexpr double kBaselineMean = 0.3844950723109823;
constexpr double kShiftFor001 = 0.012368900677149635;
// 0.15 + 0.85 * stats.norm.cdf(0, 0.45, math.hypot(0.15, 0.2)).
constexpr double kZeroShare = 0.18054077124598691;

UserTraffic MakeUserTraffic(UserTrafficConfig config) {
  StatusOr<UserTraffic> traffic = UserTraffic::Create(std::move(config));
  EXPECT_TRUE(traffic.ok()) << traffic.status().message();
  return std::move(traffic).value();
}

TEST(UserTrafficTest, RejectsInvalidConfigurations) {
  auto rejected = [](UserTrafficConfig c) {
    return !UserTraffic::Create(std::move(c)).ok();
  };
  UserTrafficConfig c;
  c.min_requests = 0;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.max_requests = 0;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.requests_log_mean = 20;  // exp(20) is never <= 50.
  EXPECT_TRUE(rejected(c));
  c = {};
  c.zero_probability = 1;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.weights = {1, 0};
  EXPECT_TRUE(rejected(c));
  c = {};
  c.variants = {"A", "A"};
  EXPECT_TRUE(rejected(c));
  c = {};
  c.weights = {1};
  EXPECT_TRUE(rejected(c));
  c = {};
  c.treatment_effect = 0.7;  // Baseline 0.384 + 0.7 > 1 - 0.15.
  EXPECT_TRUE(rejected(c));
  c = {};
  c.user_stddev = -1;
  EXPECT_TRUE(rejected(c));
  EXPECT_FALSE(rejected(UserTrafficConfig{}));
}

TEST(UserTrafficTest, RequestCountsAreHeterogeneousWithinBounds) {
  UserTraffic traffic = MakeUserTraffic({.seed = 11});
  constexpr int kUsers = 50000;
  SimUser user;
  int64_t total = 0;
  int ones = 0;
  size_t largest = 0;
  for (int i = 0; i < kUsers; ++i) {
    traffic.NextUser(&user);
    ASSERT_GE(user.values.size(), 1u);
    ASSERT_LE(user.values.size(), 50u);
    EXPECT_EQ(user.index, i);
    EXPECT_EQ(user.id, "user-" + std::to_string(i));
    total += std::ssize(user.values);
    ones += user.values.size() == 1;
    largest = std::max(largest, user.values.size());
  }
  // Binomial and mean-of-counts tolerances: 4 standard errors. The count's
  // standard deviation is sqrt(E n^2 - mean^2) = sqrt(38.807 - 16.572)
  // = 4.72 (SciPy, as above), so the mean's s.e. is 4.72 / sqrt(50000).
  const double one_share = static_cast<double>(ones) / kUsers;
  EXPECT_NEAR(
      one_share, kOneRequestShare,
      4 * std::sqrt(kOneRequestShare * (1 - kOneRequestShare) / kUsers));
  EXPECT_NEAR(static_cast<double>(total) / kUsers, kMeanRequests,
              4 * 4.72 / std::sqrt(kUsers));
  // Heavy users exist: P(n >= 30) = 0.0059, so about 300 of them.
  EXPECT_GE(largest, 30u);
}

TEST(UserTrafficTest, SplitProportionsFollowTheWeights) {
  for (const double treatment_share : {0.5, 0.49}) {
    UserTraffic traffic = MakeUserTraffic(
        {.seed = 3, .weights = {1 - treatment_share, treatment_share}});
    constexpr int kUsers = 100000;
    SimUser user;
    int treated = 0;
    for (int i = 0; i < kUsers; ++i) {
      traffic.NextUser(&user);
      treated += user.variant == 1;
      // The assignment is a function of the id alone.
      EXPECT_EQ(traffic.AssignVariant(user.id), user.variant);
    }
    // 4 standard errors of a binomial share: 0.0063 at 100000 users.
    EXPECT_NEAR(static_cast<double>(treated) / kUsers, treatment_share,
                4 * std::sqrt(0.25 / kUsers))
        << treatment_share;
  }
}

TEST(UserTrafficTest, SaltReassignsIndependently) {
  UserTraffic a = MakeUserTraffic({.assignment_salt = 1});
  UserTraffic b = MakeUserTraffic({.assignment_salt = 2});
  constexpr int kUsers = 20000;
  int same = 0;
  for (int i = 0; i < kUsers; ++i) {
    const std::string id = "user-" + std::to_string(i);
    same += a.AssignVariant(id) == b.AssignVariant(id);
  }
  // Independent 50/50 assignments agree half the time (4 s.e. = 0.014).
  EXPECT_NEAR(static_cast<double>(same) / kUsers, 0.5,
              4 * std::sqrt(0.25 / kUsers));
}

TEST(UserTrafficTest, DeterministicPerSeed) {
  UserTraffic a = MakeUserTraffic({.seed = 42});
  UserTraffic b = MakeUserTraffic({.seed = 42});
  UserTraffic c = MakeUserTraffic({.seed = 43});
  const std::vector<UserRequest> ra = a.Generate(500);
  const std::vector<UserRequest> rb = b.Generate(500);
  const std::vector<UserRequest> rc = c.Generate(500);
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].user_id, rb[i].user_id);
    EXPECT_EQ(ra[i].variant, rb[i].variant);
    EXPECT_EQ(ra[i].value, rb[i].value);
  }
  bool differs = ra.size() != rc.size();
  for (size_t i = 0; !differs && i < ra.size(); ++i) {
    differs = ra[i].value != rc[i].value;
  }
  EXPECT_TRUE(differs);
}

TEST(UserTrafficTest, GenerateInterleavesTheUsersDraws) {
  constexpr int kUsers = 2000;
  UserTraffic traffic = MakeUserTraffic({.seed = 5});
  UserTraffic twin = MakeUserTraffic({.seed = 5});
  const std::vector<UserRequest> requests = traffic.Generate(kUsers);
  // The same users as NextUser draws: per user, the same multiset of values
  // and the same variant.
  std::vector<std::vector<double>> values(kUsers);
  std::vector<int32_t> variants(kUsers, -1);
  for (const UserRequest& r : requests) {
    ASSERT_GE(r.user_index, 0);
    ASSERT_LT(r.user_index, kUsers);
    EXPECT_EQ(r.user_id, "user-" + std::to_string(r.user_index));
    values[r.user_index].push_back(r.value);
    variants[r.user_index] = r.variant;
  }
  SimUser user;
  for (int i = 0; i < kUsers; ++i) {
    twin.NextUser(&user);
    std::vector<double> expected = user.values;
    std::sort(expected.begin(), expected.end());
    std::sort(values[i].begin(), values[i].end());
    EXPECT_EQ(values[i], expected) << i;
    EXPECT_EQ(variants[i], user.variant) << i;
  }
  // Shuffled: consecutive requests of one user are rare. With n_u requests
  // of user u among N, a uniform order has E[adjacent pairs] = sum n_u (n_u
  // - 1) / N = (E n^2 / E n - 1) = 38.81 / 4.07 - 1 = 8.5 on average
  // (SciPy figures above), against N - kUsers (about 6100) if grouped.
  int adjacent = 0;
  for (size_t i = 1; i < requests.size(); ++i) {
    adjacent += requests[i].user_index == requests[i - 1].user_index;
  }
  EXPECT_LT(adjacent, 40);
}

TEST(UserTrafficTest, ExpectedValuesMatchAnIndependentComputation) {
  UserTraffic traffic = MakeUserTraffic({.treatment_effect = 0.01});
  EXPECT_NEAR(traffic.ExpectedValue(0), kBaselineMean, 1e-12);
  EXPECT_NEAR(traffic.ExpectedValue(1), kBaselineMean + 0.01, 1e-12);
  EXPECT_EQ(traffic.shifts()[0], 0);
  EXPECT_NEAR(traffic.shifts()[1], kShiftFor001, 1e-10);
  // Heavy clamping at 1: mean 0.9, stddevs 0.3 and 0.3, no zeros. SciPy:
  // integrate.quad(lambda x: x * stats.norm.pdf(x, 0.9, s), 0, 1)[0]
  // + stats.norm.sf(1, 0.9, s) with s = math.hypot(0.3, 0.3).
  UserTraffic clamped = MakeUserTraffic({.mean_quality = 0.9,
                                         .user_stddev = 0.3,
                                         .request_stddev = 0.3,
                                         .zero_probability = 0});
  EXPECT_NEAR(clamped.ExpectedValue(0), 0.7786500506154872, 1e-12);
}

// The sample recomputes the means: per request and per variant, against the
// closed form, and the share of zeros against its own closed form.
TEST(UserTrafficTest, SampleMeansAgreeWithTheModel) {
  UserTraffic traffic = MakeUserTraffic({.seed = 8, .treatment_effect = 0.01});
  const std::vector<UserRequest> requests = traffic.Generate(100000);
  double sum[2] = {0, 0};
  double squares[2] = {0, 0};
  int64_t count[2] = {0, 0};
  int64_t zeros = 0;
  for (const UserRequest& r : requests) {
    ASSERT_GE(r.value, 0);
    ASSERT_LE(r.value, 1);
    sum[r.variant] += r.value;
    squares[r.variant] += r.value * r.value;
    ++count[r.variant];
    zeros += r.value == 0;
  }
  const double n = static_cast<double>(requests.size());
  EXPECT_NEAR(zeros / n, kZeroShare,
              4 * std::sqrt(kZeroShare * (1 - kZeroShare) / n));
  // The values of one user are correlated, so the standard error of a mean
  // is bounded by the cluster-robust one, taken loosely here as the
  // per-request one times sqrt(E n^2 / E n) = sqrt(9.53) (the design effect
  // if every user's values were identical).
  for (int v = 0; v < 2; ++v) {
    const double mean = sum[v] / count[v];
    const double variance = squares[v] / count[v] - mean * mean;
    const double se = std::sqrt(variance / count[v] * 9.53);
    EXPECT_NEAR(mean, traffic.ExpectedValue(v), 4 * se) << v;
  }
}

// nDCG@10 of a pattern, by hand: S = {1}: 1; S = {2}: 1 / log2(3) =
// 0.630930; S = {10} with 9 unretrieved: (1 / log2(11)) / IDCG@10, IDCG@10
// = sum_{i=1}^{10} 1 / log2(i + 1) = 4.543559, so 0.0636208.
TEST(UserTrafficTest, AchievableNdcgValues) {
  const std::vector<NdcgPattern>& patterns = AchievableNdcgPatterns();
  // Distinct values counted by an independent enumeration (Python, the
  // same formula over 1024 subsets x 0..10 unretrieved, rounded to 1e-12).
  EXPECT_EQ(patterns.size(), 6123u);
  EXPECT_EQ(patterns.front().ndcg, 0);
  EXPECT_NEAR(patterns[1].ndcg, 0.0636208, 1e-7);
  EXPECT_EQ(patterns.back().ndcg, 1);
  double widest = 0;
  for (size_t i = 2; i < patterns.size(); ++i) {
    widest = std::max(widest, patterns[i].ndcg - patterns[i - 1].ndcg);
  }
  EXPECT_LT(widest, 0.0043);
  EXPECT_NEAR(QuantizeNdcgAt10(0.630930).ndcg, 1 / std::log2(3.0), 1e-3);
  EXPECT_EQ(QuantizeNdcgAt10(1.5).ndcg, 1);
  EXPECT_EQ(QuantizeNdcgAt10(-1).ndcg, 0);
  EXPECT_EQ(QuantizeNdcgAt10(0.03).ndcg, 0);
  EXPECT_NEAR(QuantizeNdcgAt10(0.04).ndcg, 0.0636208, 1e-7);
}

// The events, decoded by rankwatch's own decoder and scored by its own
// evaluator, give each request the quantized value.
TEST(UserTrafficTest, EventsCarryTheQuantizedNdcg) {
  UserTraffic traffic = MakeUserTraffic({.seed = 9});
  const std::vector<UserRequest> requests = traffic.Generate(300);
  std::string results;
  std::string judgments;
  const EventOptions options;
  AppendEvents(requests, traffic.config().variants, options, &results,
               &judgments);

  config::SchemaConfig schema;
  schema.unit = "user_id";
  const FakeClock clock(options.start_ms);
  stream::EventDecoder decoder(schema, config::EventLimitsConfig{},
                               config::JoinMode::kImpression, {}, &clock);
  // Judgments by request id: doc id -> relevance.
  std::unordered_map<std::string, std::map<std::string, metrics::Grade>> judged;
  stream::JudgmentEvent judgment;
  std::string_view rest = judgments;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    ASSERT_NE(end, std::string_view::npos);
    ASSERT_TRUE(
        decoder.DecodeJudgments(rest.substr(0, end), {}, &judgment).ok())
        << rest.substr(0, end);
    for (const stream::Judgment& j : judgment.judgments) {
      judged[std::string(judgment.request_id)][std::string(j.doc_id)] =
          *j.grade;
    }
    rest.remove_prefix(end + 1);
  }

  StatusOr<metrics::Evaluator> evaluator =
      metrics::Evaluator::Create({10}, metrics::Definitions{});
  ASSERT_TRUE(evaluator.ok());
  stream::ResultsEvent event;
  metrics::ListScores scores;
  rest = results;
  for (size_t i = 0; i < requests.size(); ++i) {
    const size_t end = rest.find('\n');
    ASSERT_NE(end, std::string_view::npos);
    ASSERT_TRUE(decoder.DecodeResults(rest.substr(0, end), {}, &event).ok())
        << rest.substr(0, end);
    rest.remove_prefix(end + 1);
    EXPECT_EQ(event.request_id, "r" + std::to_string(i));
    EXPECT_EQ(event.unit, requests[i].user_id);
    EXPECT_EQ(event.variant, requests[i].variant == 0 ? "A" : "B");
    EXPECT_EQ(event.timestamp_ms,
              options.start_ms + static_cast<int64_t>(i) * options.spacing_ms);
    const auto& grades = judged[std::string(event.request_id)];
    std::vector<metrics::Grade> ranked;
    for (std::string_view doc : event.doc_ids) {
      const auto it = grades.find(std::string(doc));
      ranked.push_back(it == grades.end() ? metrics::kUnjudged : it->second);
    }
    std::vector<metrics::Grade> all;
    for (const auto& [doc, grade] : grades) all.push_back(grade);
    evaluator->Evaluate(ranked, all, &scores);
    const double ndcg = scores.at[0].ndcg;
    EXPECT_NEAR(ndcg, QuantizeNdcgAt10(requests[i].value).ndcg, 1e-12) << i;
    // The half-gap bound of AchievableNdcgValues above 0.0636.
    if (requests[i].value >= 0.0637) {
      EXPECT_NEAR(ndcg, requests[i].value, 0.00215) << i;
    }
  }
  EXPECT_TRUE(rest.empty());
}

}  // namespace
}  // namespace rankwatch::sim
