// UserTraffic: user-level A/B traffic for the simulations of the
// randomization unit (tests/ab_unit_simulation_test.cc): heterogeneous users
// who each send several requests whose quality values (an nDCG@10-like
// number in [0, 1]) are correlated through a per-user effect, assigned to
// variants by hashing the user id, as experimentation platforms do. Values
// of one user are not independent, which is why an analysis per request
// understates the variance (Deng, Knoblich and Lu, KDD 2018; Drutsa,
// Ufliand and Gusev, CIKM 2015).
//
// The model, per user u and request j:
//  * requests n_u = ceil(exp(N(requests_log_mean, requests_log_sigma^2))),
//    redrawn outside [min_requests, max_requests] (a truncated discretized
//    log-normal: many users with one to three requests, a few heavy ones);
//  * user effect a_u ~ N(0, user_stddev^2);
//  * value v_uj = 0 with probability zero_probability (nothing relevant
//    retrieved), else clamp(mean_quality + shift_variant + a_u + e_uj, 0, 1)
//    with e_uj ~ N(0, request_stddev^2);
//  * variant: a hash of (user id, assignment_salt) mapped to [0, 1) and cut
//    by the normalized weights, so a user keeps one variant.
// shift_variant is 0 for the baseline (variant 0) and, for the others, the
// latent shift that makes the expected value exactly treatment_effect higher
// than the baseline's (ExpectedValue has a closed form; see the .cc).
//
// Everything is drawn from rankwatch's own PRNG (base/random.h), so a seed
// gives the same traffic everywhere.
//
// Not thread-safe: one per thread. Movable and copyable.
#ifndef RANKWATCH_DAEMON_SIM_USER_TRAFFIC_H_
#define RANKWATCH_DAEMON_SIM_USER_TRAFFIC_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "base/status.h"

namespace rankwatch::sim {

struct UserTrafficConfig {
  uint64_t seed = 1;
  // User ids are user_prefix followed by the user's index (0, 1, ...).
  std::string user_prefix = "user-";

  // Requests per user (see the model above). The defaults give a median of
  // 3 requests, a mean of 4.07, 26% of users with one request and 0.6%
  // with 30 or more.
  int32_t min_requests = 1;
  int32_t max_requests = 50;
  double requests_log_mean = 0.7;
  double requests_log_sigma = 1.1;

  // Quality. With the defaults the baseline's expected value is about 0.38
  // and about 18% of the values are exactly 0.
  double mean_quality = 0.45;
  double user_stddev = 0.15;
  double request_stddev = 0.2;
  double zero_probability = 0.15;

  // Variants and their relative weights (the split); variant 0 is the
  // baseline.
  std::vector<std::string> variants = {"A", "B"};
  std::vector<double> weights = {1.0, 1.0};
  // Mixed into the assignment hash, like an experiment's salt: another salt
  // reassigns the users independently.
  uint64_t assignment_salt = 0;
  // True difference of expected values, every non-baseline variant minus
  // the baseline. |treatment_effect| must leave room in [0, 1].
  double treatment_effect = 0;
};

// One user and the values of all its requests, in the order sent.
struct SimUser {
  std::string id;
  int64_t index = 0;
  int32_t variant = 0;
  std::vector<double> values;
};

// One request of the interleaved stream.
struct UserRequest {
  std::string user_id;
  int64_t user_index = 0;  // SimUser::index, for cheap per-user lookups.
  int32_t variant = 0;
  double value = 0;
};

class UserTraffic {
 public:
  // Validates `config`; InvalidArgument names the offending field.
  static StatusOr<UserTraffic> Create(UserTrafficConfig config);

  // Draws the next user (index = users drawn so far) into `*user`.
  void NextUser(SimUser* user);

  // Draws `num_users` users and returns all their requests in a uniformly
  // shuffled order: every request at an independent uniform time, so that
  // each user's requests are spread over the experiment.
  std::vector<UserRequest> Generate(int64_t num_users);

  // The variant of a user id: depends only on the id, the salt and the
  // weights.
  int32_t AssignVariant(std::string_view user_id) const;

  // The expected value of a request of `variant` (closed form).
  double ExpectedValue(int32_t variant) const;

  const UserTrafficConfig& config() const { return config_; }
  // Normalized weights.
  const std::vector<double>& shares() const { return shares_; }
  // The latent shift of each variant (0 for the baseline).
  const std::vector<double>& shifts() const { return shifts_; }
  int64_t users() const { return users_; }

 private:
  explicit UserTraffic(UserTrafficConfig config);

  static Status Validate(const UserTrafficConfig& config);
  int32_t DrawRequestCount();
  double LatentMean(double shift) const;

  UserTrafficConfig config_;
  std::vector<double> shares_;
  std::vector<double> cumulative_shares_;
  std::vector<double> shifts_;
  Xoshiro256 rng_;          // Users: counts, effects, values.
  Xoshiro256 shuffle_rng_;  // Generate()'s interleaving.
  int64_t users_ = 0;
};

// ---------------------------------------------------------------------------
// Rankwatch events whose nDCG@10 is a chosen value.
//
// A request's value is quantized to the nearest nDCG@10 that a list of 10
// docs with binary judgments can have: relevant docs (grade 1) at a subset S
// of the ranks 1..10, plus `unretrieved` relevant judged docs that the list
// does not contain (they raise the ideal DCG). Then
//
//   nDCG@10 = sum_{r in S} 1 / log2(r + 1)
//             / sum_{i=1}^{min(|S| + unretrieved, 10)} 1 / log2(i + 1)
//
// (Jarvelin and Kekalainen 2002; trec_eval's ndcg_cut_10), the same with
// linear or exponential gain because every grade is 1 or 0. S empty with
// one unretrieved relevant doc gives 0. There are 6123 distinct values; the
// smallest above 0 is 1 / log2(11) / IDCG@10 = 0.0636, and above it no gap
// exceeds 0.0043, so a value in [0.0636, 1] moves by at most 0.0022.

struct NdcgPattern {
  uint32_t relevant_ranks = 0;  // Bit r - 1 set: the doc at rank r is relevant.
  int32_t unretrieved = 0;      // Relevant judged docs not in the list.
  double ndcg = 0;              // The nDCG@10 of the pattern.
};

// Every achievable pattern with unretrieved in 0..10, sorted by ndcg, one
// per distinct value (within 1e-12).
const std::vector<NdcgPattern>& AchievableNdcgPatterns();

// The achievable pattern nearest to `value` (clamped to [0, 1]).
NdcgPattern QuantizeNdcgAt10(double value);

struct EventOptions {
  int64_t start_ms = 1'700'000'000'000;  // Timestamp of the first request.
  int64_t spacing_ms = 10;               // Between consecutive requests.
  int64_t judgment_delay_ms = 1000;      // Judgments after their request.
  std::string unit_field = "user_id";    // Field of results events.
  std::string query_id = "q";            // Every request's query id.
};

// Writes `requests` (in their order) as rankwatch events in the default
// schema: one results line per request, {"request_id": "r<i>", "query_id",
// unit_field: user id, "variant": name, "timestamp", "results": 10 docs},
// and one judgments line per request, {"request_id", "timestamp",
// "judgments": [{"doc_id", "relevance"}...]} (impression mode). The nDCG@10
// rankwatch computes for request i is QuantizeNdcgAt10(value_i).ndcg.
// `variant_names` maps UserRequest::variant to names. Appends to the two
// strings, one JSON object per line.
void AppendEvents(std::span<const UserRequest> requests,
                  std::span<const std::string> variant_names,
                  const EventOptions& options, std::string* results_jsonl,
                  std::string* judgments_jsonl);

}  // namespace rankwatch::sim

#endif  // RANKWATCH_DAEMON_SIM_USER_TRAFFIC_H_
