#include "daemon/sim/user_traffic.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <utility>

#include "base/json_writer.h"
#include "base/string_index.h"
#include "base/strings.h"
#include "metrics/ab_stats.h"

namespace rankwatch::sim {

namespace {

// Seed of the shuffle stream, mixed with the user's seed so that the users
// drawn do not depend on whether they are interleaved.
constexpr uint64_t kShuffleStream = 0x7368'7566'666c'6521;  // "shuffle!"

// The acceptance probability of the truncated request-count distribution
// must not be tiny, or drawing a user would loop for long.
constexpr double kMinAcceptance = 1e-3;

// Bisection steps for the latent shift: the bracket [-2, 2] halves each
// step, far below double precision after 80.
constexpr int kShiftBisectionSteps = 80;

// Ranks of the event writer's lists and unretrieved relevant docs
// enumerated.
constexpr int kRanks = 10;
constexpr int kMaxUnretrieved = 10;

// E[clamp(X, 0, 1)] for X ~ N(m, s^2): integrating P(X > t) over [0, 1],
// s * (G(m / s) - G((m - 1) / s)) with G(x) = x Phi(x) + phi(x), the
// antiderivative of Phi.
double ClampedNormalMean(double m, double s) {
  if (s == 0) return std::clamp(m, 0.0, 1.0);
  auto g = [](double x) {
    const double density =
        std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    return x * metrics::NormalCdf(x) + density;
  };
  return s * (g(m / s) - g((m - 1) / s));
}

// 1 / log2(r + 1) for rank r = 1..kRanks (index r - 1).
double Discount(int rank) { return 1.0 / std::log2(rank + 1.0); }

std::vector<NdcgPattern> EnumeratePatterns() {
  std::vector<double> ideal(kRanks + 1, 0.0);  // IDCG@10 of R relevant docs.
  for (int r = 1; r <= kRanks; ++r) ideal[r] = ideal[r - 1] + Discount(r);
  std::vector<NdcgPattern> all;
  for (uint32_t ranks = 0; ranks < (1u << kRanks); ++ranks) {
    double dcg = 0;
    for (int r = 1; r <= kRanks; ++r) {
      if ((ranks >> (r - 1)) & 1u) dcg += Discount(r);
    }
    const int retrieved = std::popcount(ranks);
    for (int unretrieved = 0; unretrieved <= kMaxUnretrieved; ++unretrieved) {
      // No relevant doc at all: the measure is undefined (R = 0), left to
      // zero_relevant; 0 comes from one unretrieved relevant doc instead.
      if (retrieved + unretrieved == 0) continue;
      const double ndcg =
          dcg / ideal[std::min(retrieved + unretrieved, kRanks)];
      all.push_back({ranks, unretrieved, ndcg});
    }
  }
  // Fewest docs first among equal values: shorter judgment lists.
  std::stable_sort(all.begin(), all.end(),
                   [](const NdcgPattern& a, const NdcgPattern& b) {
                     return a.ndcg < b.ndcg;
                   });
  std::vector<NdcgPattern> distinct;
  for (const NdcgPattern& p : all) {
    if (!distinct.empty() && p.ndcg - distinct.back().ndcg < 1e-12) {
      const NdcgPattern& kept = distinct.back();
      if (std::popcount(p.relevant_ranks) + p.unretrieved <
          std::popcount(kept.relevant_ranks) + kept.unretrieved) {
        distinct.back() = p;
      }
      continue;
    }
    distinct.push_back(p);
  }
  return distinct;
}

}  // namespace

StatusOr<UserTraffic> UserTraffic::Create(UserTrafficConfig config) {
  RW_RETURN_IF_ERROR(Validate(config));
  UserTraffic traffic(std::move(config));
  const UserTrafficConfig& c = traffic.config_;
  double total = 0;
  for (double w : c.weights) total += w;
  double cumulative = 0;
  for (double w : c.weights) {
    traffic.shares_.push_back(w / total);
    cumulative += w / total;
    traffic.cumulative_shares_.push_back(cumulative);
  }
  traffic.cumulative_shares_.back() = 1.0;
  // The latent shift giving ExpectedValue(treatment) = ExpectedValue(0) +
  // treatment_effect: the clamped mean increases strictly with the shift
  // (its derivative is P(0 < X < 1) > 0), so bisection finds it.
  const double target = traffic.LatentMean(0) + c.treatment_effect;
  double lo = -2;
  double hi = 2;
  for (int i = 0; i < kShiftBisectionSteps; ++i) {
    const double mid = 0.5 * (lo + hi);
    (traffic.LatentMean(mid) < target ? lo : hi) = mid;
  }
  const double shift = c.treatment_effect == 0 ? 0 : 0.5 * (lo + hi);
  traffic.shifts_.assign(c.variants.size(), shift);
  traffic.shifts_[0] = 0;
  return traffic;
}

UserTraffic::UserTraffic(UserTrafficConfig config)
    : config_(std::move(config)),
      rng_(config_.seed),
      shuffle_rng_(config_.seed ^ kShuffleStream) {}

Status UserTraffic::Validate(const UserTrafficConfig& c) {
  auto invalid = [](const std::string& m) {
    return Status::InvalidArgument("user traffic: " + m);
  };
  if (c.min_requests < 1 || c.max_requests < c.min_requests) {
    return invalid("requests must satisfy 1 <= min_requests <= max_requests");
  }
  if (!std::isfinite(c.requests_log_mean) ||
      !(c.requests_log_sigma >= 0 && std::isfinite(c.requests_log_sigma))) {
    return invalid("requests_log_mean must be finite, requests_log_sigma >= 0");
  }
  // P(min_requests - 1 < exp(X) <= max_requests).
  const double upper = std::log(static_cast<double>(c.max_requests));
  const double lower =
      c.min_requests == 1 ? -INFINITY : std::log(c.min_requests - 1.0);
  const double acceptance =
      c.requests_log_sigma == 0
          ? (c.requests_log_mean > lower && c.requests_log_mean <= upper)
          : metrics::NormalCdf((upper - c.requests_log_mean) /
                               c.requests_log_sigma) -
                metrics::NormalCdf((lower - c.requests_log_mean) /
                                   c.requests_log_sigma);
  if (!(acceptance >= kMinAcceptance)) {
    return invalid(
        "requests_log_mean and requests_log_sigma put (almost) no "
        "mass in [min_requests, max_requests]");
  }
  if (!std::isfinite(c.mean_quality) ||
      !(c.user_stddev >= 0 && std::isfinite(c.user_stddev)) ||
      !(c.request_stddev >= 0 && std::isfinite(c.request_stddev))) {
    return invalid("mean_quality must be finite and the stddevs >= 0");
  }
  if (!(c.zero_probability >= 0 && c.zero_probability < 1)) {
    return invalid("zero_probability must be in [0, 1)");
  }
  if (c.variants.empty() || c.variants.size() != c.weights.size()) {
    return invalid("variants and weights must be non-empty, of equal size");
  }
  for (size_t i = 0; i < c.variants.size(); ++i) {
    if (c.variants[i].empty()) return invalid("a variant has an empty name");
    if (std::find(c.variants.begin(), c.variants.begin() + i, c.variants[i]) !=
        c.variants.begin() + i) {
      return invalid("variant '" + c.variants[i] + "' is listed twice");
    }
    if (!(c.weights[i] > 0 && std::isfinite(c.weights[i]))) {
      return invalid("variant '" + c.variants[i] + "' needs a weight > 0");
    }
  }
  // The treated mean must stay strictly inside the reachable range
  // (0, 1 - zero_probability) of the model's expected value.
  const double s = std::hypot(c.user_stddev, c.request_stddev);
  if (s == 0 && c.treatment_effect != 0) {
    return invalid("a treatment_effect needs user_stddev or request_stddev");
  }
  const double treated =
      (1 - c.zero_probability) * ClampedNormalMean(c.mean_quality, s) +
      c.treatment_effect;
  if (!std::isfinite(c.treatment_effect) || !(treated > 0) ||
      !(treated < 1 - c.zero_probability)) {
    return invalid("treatment_effect leaves no room in [0, 1]");
  }
  return Status::Ok();
}

double UserTraffic::LatentMean(double shift) const {
  return (1 - config_.zero_probability) *
         ClampedNormalMean(
             config_.mean_quality + shift,
             std::hypot(config_.user_stddev, config_.request_stddev));
}

double UserTraffic::ExpectedValue(int32_t variant) const {
  return LatentMean(shifts_[variant]);
}

int32_t UserTraffic::DrawRequestCount() {
  const double lower = config_.min_requests - 1.0;
  const double upper = config_.max_requests;
  while (true) {
    const double x = std::exp(config_.requests_log_mean +
                              config_.requests_log_sigma * rng_.Gaussian());
    if (x > lower && x <= upper) return static_cast<int32_t>(std::ceil(x));
  }
}

int32_t UserTraffic::AssignVariant(std::string_view user_id) const {
  uint64_t state = HashBytes(user_id) ^ config_.assignment_salt;
  const double u = static_cast<double>(SplitMix64(&state) >> 11) * 0x1p-53;
  const auto it =
      std::upper_bound(cumulative_shares_.begin(), cumulative_shares_.end(), u);
  return static_cast<int32_t>(std::min<ptrdiff_t>(
      it - cumulative_shares_.begin(), std::ssize(cumulative_shares_) - 1));
}

void UserTraffic::NextUser(SimUser* user) {
  user->index = users_++;
  user->id = config_.user_prefix;
  AppendDecimal(&user->id, user->index);
  user->variant = AssignVariant(user->id);
  const int32_t n = DrawRequestCount();
  const double mean = config_.mean_quality + shifts_[user->variant] +
                      config_.user_stddev * rng_.Gaussian();
  user->values.resize(n);
  for (double& v : user->values) {
    // Both draws every time, so that a user's stream does not depend on
    // which requests came out 0.
    const bool zero = rng_.Uniform() < config_.zero_probability;
    const double latent = mean + config_.request_stddev * rng_.Gaussian();
    v = zero ? 0.0 : std::clamp(latent, 0.0, 1.0);
  }
}

std::vector<UserRequest> UserTraffic::Generate(int64_t num_users) {
  std::vector<UserRequest> requests;
  SimUser user;
  for (int64_t i = 0; i < num_users; ++i) {
    NextUser(&user);
    for (double v : user.values) {
      requests.push_back({user.id, user.index, user.variant, v});
    }
  }
  // Fisher-Yates.
  for (size_t i = requests.size(); i > 1; --i) {
    std::swap(requests[i - 1], requests[shuffle_rng_.Below(i)]);
  }
  return requests;
}

const std::vector<NdcgPattern>& AchievableNdcgPatterns() {
  static const std::vector<NdcgPattern>* const patterns =
      new std::vector<NdcgPattern>(EnumeratePatterns());
  return *patterns;
}

NdcgPattern QuantizeNdcgAt10(double value) {
  const std::vector<NdcgPattern>& patterns = AchievableNdcgPatterns();
  const double v = std::isnan(value) ? 0.0 : std::clamp(value, 0.0, 1.0);
  const auto it = std::lower_bound(
      patterns.begin(), patterns.end(), v,
      [](const NdcgPattern& p, double x) { return p.ndcg < x; });
  if (it == patterns.end()) return patterns.back();
  if (it == patterns.begin()) return *it;
  const auto below = std::prev(it);
  return v - below->ndcg <= it->ndcg - v ? *below : *it;
}

void AppendEvents(std::span<const UserRequest> requests,
                  std::span<const std::string> variant_names,
                  const EventOptions& options, std::string* results_jsonl,
                  std::string* judgments_jsonl) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const UserRequest& request = requests[i];
    const NdcgPattern pattern = QuantizeNdcgAt10(request.value);
    std::string request_id = "r";
    AppendDecimal(&request_id, static_cast<int64_t>(i));
    const int64_t served_ms =
        options.start_ms + static_cast<int64_t>(i) * options.spacing_ms;

    std::string& out = *results_jsonl;
    out.append("{\"request_id\":");
    AppendJsonString(&out, request_id);
    out.append(",\"query_id\":");
    AppendJsonString(&out, options.query_id);
    out.push_back(',');
    AppendJsonString(&out, options.unit_field);
    out.push_back(':');
    AppendJsonString(&out, request.user_id);
    out.append(",\"variant\":");
    AppendJsonString(&out, variant_names[request.variant]);
    out.append(",\"timestamp\":");
    AppendDecimal(&out, served_ms);
    // Docs d1..d10 at ranks 1..10; unretrieved relevant docs are u1, u2...
    out.append(",\"results\":[");
    for (int r = 1; r <= kRanks; ++r) {
      if (r > 1) out.push_back(',');
      out.append("\"d");
      AppendDecimal(&out, r);
      out.push_back('"');
    }
    out.append("]}\n");

    auto judge = [&](std::string_view prefix, int number) {
      std::string& j = *judgments_jsonl;
      j.append("{\"request_id\":");
      AppendJsonString(&j, request_id);
      j.append(",\"query_id\":");
      AppendJsonString(&j, options.query_id);
      j.append(",\"doc_id\":\"");
      j.append(prefix);
      AppendDecimal(&j, number);
      j.append("\",\"relevance\":1,\"timestamp\":");
      AppendDecimal(&j, served_ms + options.judgment_delay_ms);
      j.append("}\n");
    };
    for (int r = 1; r <= kRanks; ++r) {
      if ((pattern.relevant_ranks >> (r - 1)) & 1u) judge("d", r);
    }
    for (int u = 1; u <= pattern.unretrieved; ++u) judge("u", u);
  }
}

}  // namespace rankwatch::sim
