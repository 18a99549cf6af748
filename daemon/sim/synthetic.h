// SyntheticTraffic: deterministic, realistic search traffic for demos, load
// tests, benchmarks and replay files: results events of A/B ranker variants
// and the click and purchase judgments users give them, as JSON in
// rankwatch's default schema (daemon/stream/decode/events.h). Independent of
// Kafka (SyntheticProducer sends it to a cluster).
//
// The model:
//  * A fixed query set (num_queries), drawn from catalog_seed: each query
//    has a pool of docs_per_query candidate docs with a true grade 0..3,
//    mostly 0. Query popularity follows a Zipf law.
//  * Each request picks a query and a variant (by weight). The variant's
//    ranker scores every candidate as its true grade plus Gaussian noise of
//    the variant's sigma and serves the top results_per_request: a lower
//    sigma ranks better and so has a higher nDCG.
//  * Users click by a position-based model: rank r is examined with
//    probability examination[r] (scaled so that the mean number of
//    judgments per request is judgments_per_request) and an examined doc of
//    grade g is clicked with probability click_probability[g]. A click is a
//    judgment of relevance 1 after a log-normal delay; a click on a doc of
//    grade g may also become a purchase (purchase_probability[g]), a second
//    judgment of relevance 2 after a longer delay. Delays are capped at
//    max_delay_ms, which must stay below the daemon's join window.
//  * Users (num_users > 0): each request comes from a user drawn by a Zipf
//    law of activity (user_zipf_exponent), carries "user_id", and the user's
//    variant is fixed by a hash of the user (by weight): the experiment is
//    randomized by user, as production experiments are. Each user clicks
//    more or less than the average (a log-normal factor on the examination
//    probabilities, user_click_sd), so one user's lists are correlated.
//  * Regression injection: from regress_after_ms of event time after the
//    first request on, regress_variant's sigma is multiplied by
//    regress_factor.
//  * Interleaving (interleave = a challenger variant's name): a share
//    interleave_share of the requests is ranked by both the first variant's
//    ranker and the challenger's, merged by team-draft interleaving
//    (metrics::TeamDraftInterleave, coin flips seeded from the traffic's
//    stream) and served as variant "<first>-vs-<challenger>", each result
//    carrying its team (the contributing variant's name). Users click the
//    merged list by the same position-based model. Which requests are
//    interleaved is drawn per request, users or not.
//  * Multileaving (multileave = 2 to 8 variant names, the incumbent
//    first): as interleaving, with every listed variant ranking and the
//    lists merged by team-draft multileaving (metrics::TeamDraftMultileave,
//    Schuth et al. CIKM 2014), served as variant "<v1>-vs-<v2>-vs-...".
//    The share of requests is interleave_share.
//  * Judgment events carry "kind": "click" or "purchase".
//  * A pre-exposure covariate (covariate = a field name, dotted for nested
//    objects, as schema.covariate reads it): every results event carries
//    x = log(f) + covariate_noise_sd * e, with f the request's click factor
//    (its user's; without users, one drawn per request, log-normal with
//    sigma user_click_sd, mean 1) and e standard normal: a CUPAC-style
//    prediction of how much the user clicks, independent of the variant.
//    Its correlation with log(f) is user_click_sd / sqrt(user_click_sd^2 +
//    covariate_noise_sd^2) by construction; with a list's click metric it
//    is lower (clicks are random given f) and measured, not set
//    (synthetic_test.cc).
//
// Everything is drawn from rankwatch's own PRNG (xoshiro256**), never from
// std:: distributions, so the same configuration yields the same events on
// every platform and standard library.
#ifndef RANKWATCH_DAEMON_SIM_SYNTHETIC_H_
#define RANKWATCH_DAEMON_SIM_SYNTHETIC_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/random.h"
#include "base/status.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"

namespace rankwatch::sim {

// One ranker variant of the experiment.
struct VariantSpec {
  std::string name;
  double noise_sigma = 1.0;  // Score noise; lower ranks better.
  double weight = 1.0;       // Share of the traffic, relative to the others.
};

struct SyntheticConfig {
  uint64_t seed = 1;          // Traffic: assignments, rankings, clicks.
  uint64_t catalog_seed = 1;  // The query set and its true grades.
  int32_t num_queries = 200;
  int32_t docs_per_query = 40;
  int32_t results_per_request = 10;
  double query_zipf_exponent = 0.8;  // Query popularity; 0 is uniform.

  std::vector<VariantSpec> variants = {{"A", 1.0, 1.0}, {"B", 0.85, 1.0}};

  // `segments: {segment_label: value}` on results events, the value drawn
  // by segment_weights; no segments when segment_values is empty.
  std::string segment_label = "locale";
  std::vector<std::string> segment_values = {"en-US", "de-DE", "fr-FR"};
  std::vector<double> segment_weights = {0.6, 0.25, 0.15};

  // Click model. examination[r] is for rank r + 1; ranks beyond it reuse the
  // last value.
  std::vector<double> examination = {1.0,  0.85, 0.7, 0.6,  0.5,
                                     0.42, 0.36, 0.3, 0.26, 0.22};
  std::array<double, 4> click_probability = {0.05, 0.3, 0.6, 0.9};
  std::array<double, 4> purchase_probability = {0.0, 0.0, 0.2, 0.35};
  // Target mean of judgments (clicks + purchases) per request: the
  // examination probabilities are scaled to reach it. 0 keeps them as is.
  double judgments_per_request = 3.0;

  // Delays after the results event, log-normal with these means, capped.
  int64_t click_delay_mean_ms = 3000;
  int64_t purchase_delay_mean_ms = 60000;  // After the click.
  int64_t max_delay_ms = 10 * 60 * 1000;

  // Users; none (every request independent, variant drawn per request)
  // when num_users is 0.
  int32_t num_users = 0;
  double user_zipf_exponent = 0.6;
  double user_click_sd = 0.5;  // Log-normal sigma of a user's click factor.
  // Regression injection; none when regress_variant is empty.
  std::string regress_variant;
  int64_t regress_after_ms = 0;  // Event time after the first request.
  double regress_factor = 3.0;   // Multiplies the variant's noise_sigma.
  // Interleaving; none when empty. Otherwise the name of the challenger
  // variant, which must not be the first (the incumbent).
  std::string interleave;
  double interleave_share = 0.5;  // Of all requests, in (0, 1].
  // Multileaving; none when empty (exclusive with `interleave`). The
  // variants merged, distinct, the incumbent first.
  std::vector<std::string> multileave;
  // Covariate; none when empty (see the model above).
  std::string covariate;
  double covariate_noise_sd = 0.0;
  // A served list's latency in ms (a field path, dotted for nested
  // objects, as schema.fields reads it); none when empty. Log-normal with
  // mean latency_mean_ms and log-sd latency_sd; a regressed request's is
  // multiplied by regress_latency_factor (a slower ranker).
  std::string latency;
  double latency_mean_ms = 80.0;
  double latency_sd = 0.3;
  double regress_latency_factor = 1.0;
};

// A judgment event and when it happens (event time, epoch ms).
struct TimedJudgment {
  int64_t time_ms = 0;
  std::string json;
  std::string request_id;  // The Kafka key.
};

// What the generator knows about a request and the events do not say.
struct RequestTruth {
  std::string request_id;
  int32_t query_index = 0;
  int32_t variant_index = 0;
  bool regressed = false;   // Served with the regressed sigma.
  int32_t user_index = -1;  // -1 without users.
  // The true grade of the served doc at each rank, rank 1 first.
  std::vector<metrics::Grade> ranked_grades;
  // The judgments emitted, as (rank index, relevance): 1 click, 2 purchase.
  std::vector<std::pair<int32_t, metrics::Grade>> judged;
  // Interleaved requests only (else false, -1 and empty): variant_index is
  // the first team's variant, challenger_index the challenger's (the
  // second team's); team_variants[t] is team t's variant index; teams[r]
  // is the team of rank r + 1 (0: the first team, 1: the challenger...);
  // rankings[t] is team t's own ranking (doc ids, best first), the input of
  // the interleaver, whose coin flips came from Xoshiro256(interleave_seed).
  bool interleaved = false;
  int32_t challenger_index = -1;
  std::vector<int32_t> team_variants;
  std::vector<uint8_t> teams;
  std::vector<std::vector<std::string>> rankings;
  uint64_t interleave_seed = 0;
  // The click factor the request's clicks were drawn with (1 without users
  // or a covariate), and the covariate emitted (NaN without one).
  double click_factor = 1.0;
  double covariate = 0.0;
  double latency_ms = 0.0;  // The latency emitted (NaN without one).
};

// A request's clicks as the input of metrics::Evaluator, the way the
// sensitivity measurements score an A/B arm: `ranked` per rank 1 where the
// rank was clicked (any judgment of a rank is a click; purchases come with
// one), else unjudged; `judged` a 1 per clicked rank. Buffers are reused.
void ClickGrades(const RequestTruth& truth, std::vector<metrics::Grade>* ranked,
                 std::vector<metrics::Grade>* judged);

// Not thread-safe: one per thread. Movable.
class SyntheticTraffic {
 public:
  // Validates `config`, builds the query set and calibrates the click
  // model. InvalidArgument names the offending field.
  static StatusOr<SyntheticTraffic> Create(SyntheticConfig config);

  // Generates the next request, served at `served_ms` (epoch ms; pass
  // non-decreasing times): its results event in `*results_json` and its
  // judgments, in no particular order, in `*judgments` (both replaced).
  // Every judgment's time_ms lies in [served_ms, served_ms + max_delay_ms]
  // (SyntheticProducer relies on it to keep events behind the clock).
  // `truth` (optional) receives what only the generator knows.
  void NextRequest(int64_t served_ms, std::string* results_json,
                   std::vector<TimedJudgment>* judgments,
                   RequestTruth* truth = nullptr);

  const SyntheticConfig& config() const { return config_; }
  // The variant value of interleaved requests, "<first>-vs-<challenger>";
  // empty without interleaving.
  const std::string& interleaved_variant() const {
    return interleaved_variant_;
  }
  int64_t requests() const { return requests_; }
  // The request id of the latest NextRequest(), the key of its events.
  const std::string& last_request_id() const { return request_id_; }
  int32_t num_queries() const { return static_cast<int32_t>(queries_.size()); }
  const std::string& query_id(int32_t query_index) const {
    return queries_[query_index].id;
  }
  // The true grades of every candidate of a query (0s included), i.e. the
  // `judgments` argument of metrics::Evaluator::Evaluate.
  std::span<const metrics::Grade> query_grades(int32_t query_index) const {
    return queries_[query_index].grades;
  }
  // The true grades as TREC qrels ("qid 0 docno grade" lines), for qrels
  // mode and for `rankwatch eval`.
  std::string TrecQrels() const;

  // The calibrated click model: the factor applied to `examination`, and
  // the expected judgments per request it gives (before any regression).
  double examination_scale() const { return examination_scale_; }
  double expected_judgments_per_request() const { return expected_judgments_; }

 private:
  struct Query {
    std::string id;
    std::vector<std::string> doc_ids;
    std::vector<metrics::Grade> grades;  // Parallel to doc_ids.
  };

  explicit SyntheticTraffic(SyntheticConfig config);

  static Status Validate(const SyntheticConfig& config);
  void BuildCatalog();
  Status Calibrate();
  double ExpectedJudgments(
      double scale,
      std::span<const std::vector<metrics::Grade>> rankings) const;

  int32_t PickQuery();
  int32_t PickVariant();
  int32_t PickSegment();
  double Sigma(int32_t variant, int64_t served_ms, bool* regressed) const;
  void Rank(const Query& query, double sigma, Xoshiro256* rng);
  // Ranks `query` by every team's variant and leaves their team-draft
  // interleaving (two teams) or multileaving in served_ and teams_. Records in
  // `truth` (optional) what RequestTruth says of interleaved requests.
  void RankInterleaved(const Query& query, int64_t served_ms, bool* regressed,
                       RequestTruth* truth);
  int64_t Delay(int64_t mean_ms);
  // The results event of served_: with the ranker's scores, or with each
  // result's team when `interleaved`.
  void AppendResultsJson(int64_t served_ms, const std::string& request_id,
                         const Query& query, const std::string& variant,
                         bool interleaved, int32_t segment, int32_t user,
                         std::string* out) const;
  // `"<covariate path>": x` (nested objects for a dotted path), after a
  // comma.
  void AppendCovariate(double x, std::string* out) const;
  // A served list's latency (NaN without config_.latency).
  double DrawLatency(bool regressed);
  // `"<path>": x` the same way, for any dotted path.
  static void AppendNumberAt(const std::string& path, double x,
                             std::string* out);
  void BuildUsers();
  // The variant of `user`: a hash of the user by the variant weights.
  int32_t VariantOfUser(int32_t user) const;
  void AppendJudgment(int64_t time_ms, const std::string& request_id,
                      const Query& query, int32_t doc, metrics::Grade relevance,
                      std::vector<TimedJudgment>* judgments) const;

  SyntheticConfig config_;
  int32_t regress_index_ = -1;
  int32_t challenger_index_ = -1;       // The second team's; -1 without.
  std::vector<int32_t> team_variants_;  // Per team; empty without.
  std::string interleaved_variant_;     // "<first>-vs-<challenger>...".
  bool multileaved_ = false;            // `multileave` is set.
  std::vector<Query> queries_;
  std::vector<double> query_cdf_;    // Cumulative popularity.
  std::vector<double> variant_cdf_;  // Cumulative weights.
  std::vector<double> segment_cdf_;
  std::vector<double> examination_;  // Scaled, one per served rank.
  std::vector<double> user_cdf_;     // Cumulative activity of users.
  std::vector<double> user_click_;   // Per user: examination factor.
  double examination_scale_ = 1.0;
  double expected_judgments_ = 0;

  Xoshiro256 rng_;
  // The covariate's draws (and, without users, the per-request click
  // factors): a stream of their own, so that the traffic's draws are the
  // same with or without a covariate.
  Xoshiro256 covariate_rng_;
  // The latencies' draws: a stream of their own, for the same reason.
  Xoshiro256 latency_rng_;
  int64_t requests_ = 0;
  int64_t first_served_ms_ = 0;
  std::string request_id_;  // The latest request's.
  // Scratch for Rank(): the top (score, doc index) pairs, best first, and
  // the served doc indices.
  std::vector<std::pair<double, int32_t>> scored_;
  std::vector<int32_t> served_;
  // Scratch for RankInterleaved(): each team's ranking, as doc indices and
  // as views of doc ids, the merged list and its teams.
  std::vector<std::vector<int32_t>> team_served_;
  std::vector<std::vector<std::string_view>> team_views_;
  metrics::InterleavedList merged_;
  std::vector<uint8_t> teams_;
};

}  // namespace rankwatch::sim

#endif  // RANKWATCH_DAEMON_SIM_SYNTHETIC_H_
