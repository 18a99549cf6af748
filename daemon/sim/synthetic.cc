#include "daemon/sim/synthetic.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <span>
#include <unordered_set>
#include <utility>

#include "base/json_writer.h"
#include "base/strings.h"
#include "metrics/multileaving.h"

namespace rankwatch::sim {

namespace {

// Seeds of the generator's independent streams, mixed with the user's seed
// so that, e.g., calibrating draws nothing from the traffic stream.
constexpr uint64_t kCatalogStream = 0x6361'7461'6c6f'6721;      // "catalog!"
constexpr uint64_t kCalibrationStream = 0x6361'6c69'6272'6174;  // "calibrat"
constexpr uint64_t kUserStream = 0x7573'6572'7321'2121;         // "users!!!"
constexpr uint64_t kCovariateStream = 0x636f'7661'7269'6174;    // "covariat"
constexpr uint64_t kLatencyStream = 0x6c61'7465'6e63'7921;      // "latency!"

// Requests simulated to calibrate the click model: enough for the expected
// judgments per request to be within about 1% of the long-run mean.
constexpr int kCalibrationRequests = 4000;

// Docs are drawn from a catalog this large; ids are unique within a query.
constexpr uint64_t kCatalogDocs = 1'000'000;

// True grades: a query's share of relevant docs is uniform in
// [kMinRelevantShare, kMaxRelevantShare]; a relevant doc has grade 1, 2 or
// 3 with these probabilities.
constexpr double kMinRelevantShare = 0.1;
constexpr double kMaxRelevantShare = 0.45;
constexpr std::array<double, 3> kRelevantGradeCdf = {0.5, 0.8, 1.0};

// Spread (sigma of the log) of the log-normal delays.
constexpr double kDelayLogSigma = 1.0;

// Index i with cdf[i-1] <= u * total < cdf[i].
int32_t PickIndex(const std::vector<double>& cdf, Xoshiro256* rng) {
  const double u = rng->Uniform() * cdf.back();
  const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
  return static_cast<int32_t>(
      std::min<ptrdiff_t>(it - cdf.begin(), std::ssize(cdf) - 1));
}

std::vector<double> Cumulative(const std::vector<double>& weights) {
  std::vector<double> cdf;
  cdf.reserve(weights.size());
  double sum = 0;
  for (double w : weights) cdf.push_back(sum += w);
  return cdf;
}

// Scores with 4 decimals: enough to order them, short on the wire.
void AppendScore(double value, std::string* out) {
  char buf[32];
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, 4);
  out->append(buf, end);
}

bool IsProbability(double p) { return p >= 0 && p <= 1; }

Status Invalid(const std::string& m) {
  return Status::InvalidArgument("synthetic traffic: " + m);
}

// The query set and the lists served.
Status ValidateShape(const SyntheticConfig& c) {
  if (c.num_queries < 1) return Invalid("num_queries must be >= 1");
  if (c.docs_per_query < 1) return Invalid("docs_per_query must be >= 1");
  if (c.results_per_request < 1 || c.results_per_request > c.docs_per_query) {
    return Invalid("results_per_request must be in 1..docs_per_query");
  }
  if (!(c.query_zipf_exponent >= 0)) {
    return Invalid("query_zipf_exponent must be >= 0");
  }
  return Status::Ok();
}

// The variants; fills `names` with theirs.
Status ValidateVariants(const SyntheticConfig& c,
                        std::unordered_set<std::string>* names) {
  if (c.variants.empty()) return Invalid("at least one variant is needed");
  for (const VariantSpec& v : c.variants) {
    if (v.name.empty()) return Invalid("a variant has an empty name");
    if (!names->insert(v.name).second) {
      return Invalid("variant '" + v.name + "' is listed twice");
    }
    if (!(v.noise_sigma >= 0) || !std::isfinite(v.noise_sigma)) {
      return Invalid("variant '" + v.name + "' needs a noise_sigma >= 0");
    }
    if (!(v.weight > 0) || !std::isfinite(v.weight)) {
      return Invalid("variant '" + v.name + "' needs a weight > 0");
    }
  }
  return Status::Ok();
}

Status ValidateSegments(const SyntheticConfig& c) {
  if (c.segment_values.size() != c.segment_weights.size()) {
    return Invalid("segment_values and segment_weights differ in length");
  }
  if (!c.segment_values.empty() && c.segment_label.empty()) {
    return Invalid("segment_label is empty");
  }
  for (double w : c.segment_weights) {
    if (!(w > 0) || !std::isfinite(w)) {
      return Invalid("segment weights must be > 0");
    }
  }
  return Status::Ok();
}

// How users examine, click and buy, and when those events arrive.
Status ValidateBehaviour(const SyntheticConfig& c) {
  if (c.examination.empty()) return Invalid("examination is empty");
  for (double p : c.examination) {
    if (!(p > 0 && p <= 1)) {
      return Invalid("examination probabilities must be in (0, 1]");
    }
  }
  for (size_t g = 0; g < c.click_probability.size(); ++g) {
    if (!IsProbability(c.click_probability[g]) ||
        !IsProbability(c.purchase_probability[g])) {
      return Invalid("click and purchase probabilities must be in [0, 1]");
    }
  }
  if (!(c.judgments_per_request >= 0)) {
    return Invalid("judgments_per_request must be >= 0");
  }
  if (c.click_delay_mean_ms < 1 || c.purchase_delay_mean_ms < 1 ||
      c.max_delay_ms < 1) {
    return Invalid("delays must be >= 1 ms");
  }
  if (c.num_users < 0) return Invalid("num_users must be >= 0");
  if (!(c.user_zipf_exponent >= 0) || !(c.user_click_sd >= 0) ||
      !std::isfinite(c.user_click_sd)) {
    return Invalid("user_zipf_exponent and user_click_sd must be >= 0");
  }
  if (!(c.covariate_noise_sd >= 0) || !std::isfinite(c.covariate_noise_sd)) {
    return Invalid("covariate_noise_sd must be >= 0");
  }
  const auto is_path = [](const std::string& p) {
    return p.empty() || (p.front() != '.' && p.back() != '.' &&
                         p.find("..") == std::string::npos &&
                         p.find('"') == std::string::npos);
  };
  if (!is_path(c.covariate)) {
    return Invalid("covariate '" + c.covariate + "' is not a field path");
  }
  if (!is_path(c.latency)) {
    return Invalid("latency '" + c.latency + "' is not a field path");
  }
  if (!(c.latency_mean_ms > 0) || !std::isfinite(c.latency_mean_ms) ||
      !(c.latency_sd >= 0) || !std::isfinite(c.latency_sd) ||
      !(c.regress_latency_factor > 0) ||
      !std::isfinite(c.regress_latency_factor)) {
    return Invalid(
        "latency_mean_ms and regress_latency_factor must be > 0, latency_sd "
        ">= 0");
  }
  return Status::Ok();
}

Status ValidateRegression(const SyntheticConfig& c,
                          const std::unordered_set<std::string>& names) {
  if (c.regress_variant.empty()) return Status::Ok();
  if (names.count(c.regress_variant) == 0) {
    return Invalid("regress_variant '" + c.regress_variant +
                   "' is not a variant");
  }
  if (c.regress_after_ms < 0) return Invalid("regress_after_ms is negative");
  if (!(c.regress_factor >= 0) || !std::isfinite(c.regress_factor)) {
    return Invalid("regress_factor must be >= 0");
  }
  return Status::Ok();
}

Status ValidateInterleaving(const SyntheticConfig& c,
                            const std::unordered_set<std::string>& names) {
  if (c.interleave.empty()) return Status::Ok();
  if (names.count(c.interleave) == 0) {
    return Invalid("interleave '" + c.interleave + "' is not a variant");
  }
  if (c.interleave == c.variants[0].name) {
    return Invalid("interleave '" + c.interleave +
                   "' is the first variant; name another one");
  }
  if (names.count(c.variants[0].name + "-vs-" + c.interleave) > 0) {
    return Invalid("a variant is named like the interleaved traffic");
  }
  if (!(c.interleave_share > 0 && c.interleave_share <= 1)) {
    return Invalid("interleave_share must be in (0, 1]");
  }
  return Status::Ok();
}

Status ValidateMultileaving(const SyntheticConfig& c,
                            const std::unordered_set<std::string>& names) {
  if (c.multileave.empty()) return Status::Ok();
  if (!c.interleave.empty()) {
    return Invalid("interleave and multileave are exclusive");
  }
  if (c.multileave.size() < 2 ||
      c.multileave.size() > metrics::kMaxMultileavingTeams) {
    return Invalid("multileave must name 2 to " +
                   std::to_string(metrics::kMaxMultileavingTeams) +
                   " variants");
  }
  std::string served;
  std::set<std::string> seen;
  for (const std::string& name : c.multileave) {
    if (names.count(name) == 0) {
      return Invalid("multileave '" + name + "' is not a variant");
    }
    if (!seen.insert(name).second) {
      return Invalid("multileave names '" + name + "' twice");
    }
    served += (served.empty() ? "" : "-vs-") + name;
  }
  if (names.count(served) > 0) {
    return Invalid("a variant is named like the multileaved traffic");
  }
  if (!(c.interleave_share > 0 && c.interleave_share <= 1)) {
    return Invalid("interleave_share must be in (0, 1]");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SyntheticTraffic> SyntheticTraffic::Create(SyntheticConfig config) {
  RW_RETURN_IF_ERROR(Validate(config));
  SyntheticTraffic traffic(std::move(config));
  traffic.BuildCatalog();
  RW_RETURN_IF_ERROR(traffic.Calibrate());
  return traffic;
}

SyntheticTraffic::SyntheticTraffic(SyntheticConfig config)
    : config_(std::move(config)),
      rng_(config_.seed),
      covariate_rng_(config_.seed ^ kCovariateStream),
      latency_rng_(config_.seed ^ kLatencyStream) {}

Status SyntheticTraffic::Validate(const SyntheticConfig& c) {
  // In this order: the first problem found is the one reported.
  Status status = ValidateShape(c);
  std::unordered_set<std::string> names;
  if (status.ok()) status = ValidateVariants(c, &names);
  if (status.ok()) status = ValidateSegments(c);
  if (status.ok()) status = ValidateBehaviour(c);
  if (status.ok()) status = ValidateRegression(c, names);
  if (status.ok()) status = ValidateInterleaving(c, names);
  if (status.ok()) status = ValidateMultileaving(c, names);
  return status;
}

void SyntheticTraffic::BuildCatalog() {
  Xoshiro256 rng(config_.catalog_seed ^ kCatalogStream);
  const int width = std::max<int>(
      4, static_cast<int>(std::to_string(config_.num_queries - 1).size()));
  queries_.resize(config_.num_queries);
  std::vector<double> popularity;
  for (int32_t q = 0; q < config_.num_queries; ++q) {
    Query& query = queries_[q];
    std::string number = std::to_string(q);
    query.id = "q-" + std::string(width - number.size(), '0') + number;
    const double relevant_share =
        kMinRelevantShare +
        (kMaxRelevantShare - kMinRelevantShare) * rng.Uniform();
    std::unordered_set<uint64_t> used;
    bool any_relevant = false;
    for (int32_t d = 0; d < config_.docs_per_query; ++d) {
      uint64_t doc = rng.Below(kCatalogDocs);
      while (!used.insert(doc).second) doc = rng.Below(kCatalogDocs);
      query.doc_ids.push_back("doc-" + std::to_string(doc));
      metrics::Grade grade = 0;
      if (rng.Uniform() < relevant_share) {
        const double u = rng.Uniform();
        grade = 1;
        while (grade < 3 && u >= kRelevantGradeCdf[grade - 1]) ++grade;
        any_relevant = true;
      }
      query.grades.push_back(grade);
    }
    // Every query has a relevant doc, so that nDCG is defined for all.
    if (!any_relevant) query.grades[rng.Below(query.grades.size())] = 1;
    popularity.push_back(1.0 / std::pow(static_cast<double>(q + 1),
                                        config_.query_zipf_exponent));
  }
  query_cdf_ = Cumulative(popularity);
  std::vector<double> weights;
  for (const VariantSpec& v : config_.variants) weights.push_back(v.weight);
  variant_cdf_ = Cumulative(weights);
  segment_cdf_ = Cumulative(config_.segment_weights);
  for (size_t v = 0; v < config_.variants.size(); ++v) {
    if (config_.variants[v].name == config_.regress_variant) {
      regress_index_ = static_cast<int32_t>(v);
    }
    if (config_.variants[v].name == config_.interleave) {
      challenger_index_ = static_cast<int32_t>(v);
      interleaved_variant_ =
          config_.variants[0].name + "-vs-" + config_.interleave;
      team_variants_ = {0, challenger_index_};
    }
  }
  for (const std::string& name : config_.multileave) {
    for (size_t v = 0; v < config_.variants.size(); ++v) {
      if (config_.variants[v].name != name) continue;
      team_variants_.push_back(static_cast<int32_t>(v));
      interleaved_variant_ +=
          (interleaved_variant_.empty() ? "" : "-vs-") + name;
    }
  }
  if (!config_.multileave.empty()) {
    multileaved_ = true;
    challenger_index_ = team_variants_[1];
  }
  team_served_.resize(team_variants_.size());
  team_views_.resize(team_variants_.size());
  BuildUsers();
}

// A separate stream, so that users do not shift the catalog's or the
// traffic's draws.
void SyntheticTraffic::BuildUsers() {
  if (config_.num_users == 0) return;
  Xoshiro256 rng(config_.seed ^ kUserStream);
  std::vector<double> activity;
  const double sd = config_.user_click_sd;
  for (int32_t u = 0; u < config_.num_users; ++u) {
    activity.push_back(
        1.0 / std::pow(static_cast<double>(u + 1), config_.user_zipf_exponent));
    // Mean 1: exp(sd z - sd^2 / 2).
    user_click_.push_back(std::exp(sd * rng.Gaussian() - sd * sd / 2));
  }
  user_cdf_ = Cumulative(activity);
}

int32_t SyntheticTraffic::VariantOfUser(int32_t user) const {
  uint64_t state = config_.seed ^ (static_cast<uint64_t>(user) << 20);
  const double u =
      static_cast<double>(SplitMix64(&state) >> 11) * 0x1.0p-53;  // [0, 1)
  const auto it = std::upper_bound(variant_cdf_.begin(), variant_cdf_.end(),
                                   u * variant_cdf_.back());
  return static_cast<int32_t>(
      std::min<ptrdiff_t>(it - variant_cdf_.begin(),
                          static_cast<ptrdiff_t>(variant_cdf_.size()) - 1));
}

// Scales the examination probabilities so that the mean judgments per
// request over a sample of rankings meets the target. The mean grows with
// the scale (until every probability is capped at 1), so bisection finds it.
Status SyntheticTraffic::Calibrate() {
  const int32_t k = config_.results_per_request;
  examination_.resize(k);
  for (int32_t r = 0; r < k; ++r) {
    examination_[r] =
        config_
            .examination[std::min<size_t>(r, config_.examination.size() - 1)];
  }
  Xoshiro256 rng(config_.seed ^ kCalibrationStream);
  std::vector<std::vector<metrics::Grade>> rankings(kCalibrationRequests);
  for (std::vector<metrics::Grade>& ranking : rankings) {
    const Query& query = queries_[PickIndex(query_cdf_, &rng)];
    const int32_t variant = PickIndex(variant_cdf_, &rng);
    Rank(query, config_.variants[variant].noise_sigma, &rng);
    for (int32_t doc : served_) ranking.push_back(query.grades[doc]);
  }
  if (config_.judgments_per_request == 0) {
    expected_judgments_ = ExpectedJudgments(1.0, rankings);
    return Status::Ok();
  }
  const double max_scale =
      1.0 / *std::min_element(examination_.begin(), examination_.end());
  const double reachable = ExpectedJudgments(max_scale, rankings);
  if (config_.judgments_per_request > reachable) {
    return Status::InvalidArgument(
        "synthetic traffic: judgments_per_request " +
        std::to_string(config_.judgments_per_request) +
        " is out of reach of the click model (at most " +
        std::to_string(reachable) + ")");
  }
  double lo = 0;
  double hi = max_scale;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (ExpectedJudgments(mid, rankings) < config_.judgments_per_request ? lo
                                                                      : hi) =
        mid;
  }
  examination_scale_ = hi;
  for (double& p : examination_) p = std::min(1.0, p * examination_scale_);
  expected_judgments_ = ExpectedJudgments(1.0, rankings);
  return Status::Ok();
}

double SyntheticTraffic::ExpectedJudgments(
    double scale, std::span<const std::vector<metrics::Grade>> rankings) const {
  double total = 0;
  for (const std::vector<metrics::Grade>& ranking : rankings) {
    for (size_t r = 0; r < ranking.size(); ++r) {
      const metrics::Grade g = ranking[r];
      const double click =
          std::min(1.0, examination_[r] * scale) * config_.click_probability[g];
      total += click * (1.0 + config_.purchase_probability[g]);
    }
  }
  return total / static_cast<double>(rankings.size());
}

void SyntheticTraffic::NextRequest(int64_t served_ms, std::string* results_json,
                                   std::vector<TimedJudgment>* judgments,
                                   RequestTruth* truth) {
  if (requests_ == 0) first_served_ms_ = served_ms;
  std::string& request_id = request_id_;
  request_id.assign("req-");
  AppendDecimal(&request_id, static_cast<int64_t>(config_.seed));
  request_id.push_back('-');
  AppendDecimal(&request_id, requests_++);

  const int32_t query_index = PickIndex(query_cdf_, &rng_);
  const Query& query = queries_[query_index];
  const int32_t user = user_cdf_.empty() ? -1 : PickIndex(user_cdf_, &rng_);
  const int32_t variant =
      user >= 0 ? VariantOfUser(user) : PickIndex(variant_cdf_, &rng_);
  double click_factor = user >= 0 ? user_click_[user] : 1.0;
  double covariate = std::numeric_limits<double>::quiet_NaN();
  if (!config_.covariate.empty()) {
    if (user < 0) {
      const double sd = config_.user_click_sd;
      click_factor = std::exp(sd * covariate_rng_.Gaussian() - sd * sd / 2);
    }
    covariate = std::log(click_factor) +
                config_.covariate_noise_sd * covariate_rng_.Gaussian();
  }
  const int32_t segment =
      segment_cdf_.empty() ? -1 : PickIndex(segment_cdf_, &rng_);
  // Drawn only with interleaving, so that traffic without it keeps its
  // stream.
  const bool interleaved =
      challenger_index_ >= 0 && rng_.Uniform() < config_.interleave_share;
  if (truth != nullptr) {
    truth->request_id = request_id;
    truth->query_index = query_index;
    truth->variant_index = interleaved ? team_variants_[0] : variant;
    truth->user_index = user;
    truth->ranked_grades.clear();
    truth->judged.clear();
    truth->interleaved = interleaved;
    truth->challenger_index = interleaved ? challenger_index_ : -1;
    truth->team_variants.clear();
    if (interleaved) truth->team_variants = team_variants_;
    truth->teams.clear();
    truth->rankings.clear();
    truth->interleave_seed = 0;
    truth->click_factor = click_factor;
    truth->covariate = covariate;
  }
  bool regressed = false;
  if (interleaved) {
    RankInterleaved(query, served_ms, &regressed, truth);
  } else {
    Rank(query, Sigma(variant, served_ms, &regressed), &rng_);
  }
  if (truth != nullptr) truth->regressed = regressed;
  const double latency = DrawLatency(regressed);
  if (truth != nullptr) truth->latency_ms = latency;

  results_json->clear();
  AppendResultsJson(
      served_ms, request_id, query,
      interleaved ? interleaved_variant_ : config_.variants[variant].name,
      interleaved, segment, user, results_json);
  if (!config_.covariate.empty()) {
    results_json->pop_back();  // The closing brace.
    AppendCovariate(covariate, results_json);
    results_json->push_back('}');
  }
  if (!config_.latency.empty()) {
    results_json->pop_back();
    AppendNumberAt(config_.latency, latency, results_json);
    results_json->push_back('}');
  }

  judgments->clear();
  for (size_t r = 0; r < served_.size(); ++r) {
    const int32_t doc = served_[r];
    const metrics::Grade grade = query.grades[doc];
    if (truth != nullptr) truth->ranked_grades.push_back(grade);
    if (rng_.Uniform() >= std::min(1.0, examination_[r] * click_factor) *
                              config_.click_probability[grade]) {
      continue;
    }
    const int64_t click_ms = served_ms + Delay(config_.click_delay_mean_ms);
    AppendJudgment(click_ms, request_id, query, doc, 1, judgments);
    if (truth != nullptr)
      truth->judged.emplace_back(static_cast<int32_t>(r), 1);
    if (rng_.Uniform() < config_.purchase_probability[grade]) {
      const int64_t purchase_ms =
          std::min(served_ms + config_.max_delay_ms,
                   click_ms + Delay(config_.purchase_delay_mean_ms));
      AppendJudgment(purchase_ms, request_id, query, doc, 2, judgments);
      if (truth != nullptr)
        truth->judged.emplace_back(static_cast<int32_t>(r), 2);
    }
  }
}

double SyntheticTraffic::Sigma(int32_t variant, int64_t served_ms,
                               bool* regressed) const {
  const double sigma = config_.variants[variant].noise_sigma;
  *regressed = variant == regress_index_ &&
               served_ms - first_served_ms_ >= config_.regress_after_ms;
  return *regressed ? sigma * config_.regress_factor : sigma;
}

// Leaves in scored_ the top results_per_request (score, doc index) pairs,
// best first, and in served_ their doc indices. Insertion into the short
// sorted top list beats sorting all candidates; a tie (improbable) keeps
// the lower doc index first, for determinism.
void SyntheticTraffic::Rank(const Query& query, double sigma, Xoshiro256* rng) {
  const size_t k = static_cast<size_t>(config_.results_per_request);
  scored_.clear();
  for (size_t d = 0; d < query.grades.size(); ++d) {
    const double score = query.grades[d] + sigma * rng->Gaussian();
    if (scored_.size() == k && !(score > scored_.back().first)) continue;
    if (scored_.size() < k) scored_.emplace_back();
    size_t pos = scored_.size() - 1;
    while (pos > 0 && score > scored_[pos - 1].first) {
      scored_[pos] = scored_[pos - 1];
      --pos;
    }
    scored_[pos] = {score, static_cast<int32_t>(d)};
  }
  served_.clear();
  for (const auto& [score, doc] : scored_) served_.push_back(doc);
}

// Every team's ranker ranks the query with its own noise, as it would
// serve it alone (in team order); the interleaver's coins come from a
// generator seeded by the traffic's stream, so that the seed alone replays
// the merge.
void SyntheticTraffic::RankInterleaved(const Query& query, int64_t served_ms,
                                       bool* regressed, RequestTruth* truth) {
  const size_t n = team_variants_.size();
  bool any_regressed = false;
  for (size_t t = 0; t < n; ++t) {
    bool team_regressed = false;
    Rank(query, Sigma(team_variants_[t], served_ms, &team_regressed), &rng_);
    team_served_[t] = served_;
    any_regressed = any_regressed || team_regressed;
    team_views_[t].clear();
    for (int32_t doc : served_) {
      team_views_[t].emplace_back(query.doc_ids[doc]);
    }
  }
  *regressed = any_regressed;
  const uint64_t seed = rng_.Next();
  Xoshiro256 coins(seed);
  const size_t length = static_cast<size_t>(config_.results_per_request);
  if (multileaved_) {
    std::vector<std::span<const std::string_view>> views(team_views_.begin(),
                                                         team_views_.end());
    metrics::TeamDraftMultileave(views, length, &coins, &merged_);
  } else {
    metrics::TeamDraftInterleave(team_views_[0], team_views_[1], length, &coins,
                                 &merged_);
  }
  // The merged views point into query.doc_ids: map them back to indices
  // through the ranking of the team that contributed each.
  std::vector<int32_t> merged;
  merged.reserve(merged_.docs.size());
  for (size_t r = 0; r < merged_.docs.size(); ++r) {
    for (int32_t doc : team_served_[merged_.teams[r]]) {
      if (query.doc_ids[doc].data() == merged_.docs[r].data()) {
        merged.push_back(doc);
        break;
      }
    }
  }
  served_ = std::move(merged);
  teams_ = merged_.teams;
  if (truth == nullptr) return;
  truth->teams = teams_;
  truth->interleave_seed = seed;
  truth->rankings.resize(n);
  for (size_t t = 0; t < n; ++t) {
    for (std::string_view doc : team_views_[t]) {
      truth->rankings[t].emplace_back(doc);
    }
  }
}

// Log-normal with mean `mean_ms`, capped at max_delay_ms.
int64_t SyntheticTraffic::Delay(int64_t mean_ms) {
  const double mu = std::log(static_cast<double>(mean_ms)) -
                    kDelayLogSigma * kDelayLogSigma / 2;
  const double delay = std::exp(mu + kDelayLogSigma * rng_.Gaussian());
  return std::min<int64_t>(config_.max_delay_ms,
                           static_cast<int64_t>(std::llround(delay)));
}

void SyntheticTraffic::AppendResultsJson(int64_t served_ms,
                                         const std::string& request_id,
                                         const Query& query,
                                         const std::string& variant,
                                         bool interleaved, int32_t segment,
                                         int32_t user, std::string* out) const {
  out->append("{\"request_id\":\"");
  out->append(request_id);
  out->append("\",\"query_id\":\"");
  out->append(query.id);
  out->append("\",\"variant\":");
  AppendJsonString(out, variant);
  if (user >= 0) {
    out->append(",\"user_id\":\"u-");
    AppendDecimal(out, user);
    out->push_back('"');
  }
  out->append(",\"timestamp\":");
  AppendDecimal(out, served_ms);
  out->append(",\"results\":[");
  // The score served is the ranker's noisy one, from scored_; an
  // interleaved list has no common score, its results name their team.
  for (size_t r = 0; r < served_.size(); ++r) {
    if (r > 0) out->push_back(',');
    out->append("{\"doc_id\":\"");
    out->append(query.doc_ids[served_[r]]);
    if (interleaved) {
      out->append("\",\"team\":");
      AppendJsonString(out, config_.variants[team_variants_[teams_[r]]].name);
    } else {
      out->append("\",\"score\":");
      AppendScore(scored_[r].first, out);
    }
    out->push_back('}');
  }
  out->push_back(']');
  if (segment >= 0) {
    out->append(",\"segments\":{");
    AppendJsonString(out, config_.segment_label);
    out->push_back(':');
    AppendJsonString(out, config_.segment_values[segment]);
    out->push_back('}');
  }
  out->push_back('}');
}

double SyntheticTraffic::DrawLatency(bool regressed) {
  if (config_.latency.empty()) return std::numeric_limits<double>::quiet_NaN();
  // exp(N(mu, sd^2)) has mean exp(mu + sd^2 / 2) = latency_mean_ms.
  const double sd = config_.latency_sd;
  return config_.latency_mean_ms *
         std::exp(sd * latency_rng_.Gaussian() - sd * sd / 2) *
         (regressed ? config_.regress_latency_factor : 1.0);
}

void SyntheticTraffic::AppendCovariate(double x, std::string* out) const {
  AppendNumberAt(config_.covariate, x, out);
}

void SyntheticTraffic::AppendNumberAt(const std::string& path, double x,
                                      std::string* out) {
  out->append(",\"");
  int depth = 0;
  for (char c : path) {
    if (c == '.') {
      out->append("\":{\"");
      ++depth;
    } else {
      out->push_back(c);
    }
  }
  out->append("\":");
  // Shortest round-trip form: the reader gets x exactly.
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  out->append(buf, end);
  out->append(static_cast<size_t>(depth), '}');
}

void SyntheticTraffic::AppendJudgment(
    int64_t time_ms, const std::string& request_id, const Query& query,
    int32_t doc, metrics::Grade relevance,
    std::vector<TimedJudgment>* judgments) const {
  TimedJudgment& j = judgments->emplace_back();
  j.time_ms = time_ms;
  j.request_id = request_id;
  j.json.reserve(128);
  j.json.append("{\"request_id\":\"");
  j.json.append(request_id);
  j.json.append("\",\"query_id\":\"");
  j.json.append(query.id);
  j.json.append("\",\"doc_id\":\"");
  j.json.append(query.doc_ids[doc]);
  j.json.append("\",\"relevance\":");
  AppendDecimal(&j.json, relevance);
  j.json.append(relevance == 1 ? ",\"kind\":\"click\""
                               : ",\"kind\":\"purchase\"");
  j.json.append(",\"timestamp\":");
  AppendDecimal(&j.json, time_ms);
  j.json.push_back('}');
}

std::string SyntheticTraffic::TrecQrels() const {
  std::string out;
  for (const Query& query : queries_) {
    for (size_t d = 0; d < query.doc_ids.size(); ++d) {
      out.append(query.id);
      out.append(" 0 ");
      out.append(query.doc_ids[d]);
      out.push_back(' ');
      AppendDecimal(&out, query.grades[d]);
      out.push_back('\n');
    }
  }
  return out;
}

void ClickGrades(const RequestTruth& truth, std::vector<metrics::Grade>* ranked,
                 std::vector<metrics::Grade>* judged) {
  ranked->assign(truth.ranked_grades.size(), metrics::kUnjudged);
  judged->clear();
  for (const auto& [rank, relevance] : truth.judged) {
    if ((*ranked)[rank] == metrics::kUnjudged) judged->push_back(1);
    (*ranked)[rank] = 1;
  }
}

}  // namespace rankwatch::sim
