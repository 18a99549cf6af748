#include "daemon/sim/synthetic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/decode/event_decoder.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "gtest/gtest.h"
#include "metrics/interleaving.h"
#include "metrics/measures.h"
#include "metrics/multileaving.h"
#include "metrics/regression_adjustment.h"

namespace rankwatch::sim {
namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;
constexpr int64_t kStepMs = 10;  // 100 requests per second of event time.

SyntheticTraffic MakeTraffic(SyntheticConfig config = {}) {
  StatusOr<SyntheticTraffic> traffic = SyntheticTraffic::Create(config);
  EXPECT_TRUE(traffic.ok()) << traffic.status().ToString();
  return std::move(traffic).value();
}

// Mean nDCG@10 per variant, from the true grades (what the ranker really
// achieved) and from the emitted judgments (what the daemon measures in
// impression mode: clicks 1, purchases 2, unjudged docs not relevant).
struct VariantMeans {
  std::vector<double> true_ndcg_sum;
  std::vector<double> click_ndcg_sum;
  std::vector<int64_t> count;

  double TrueNdcg(int v) const { return true_ndcg_sum[v] / count[v]; }
  double ClickNdcg(int v) const { return click_ndcg_sum[v] / count[v]; }
};

class NdcgMeter {
 public:
  explicit NdcgMeter(int variants)
      : evaluator_(*metrics::Evaluator::Create({10}, metrics::Definitions{})) {
    means_.true_ndcg_sum.assign(variants, 0);
    means_.click_ndcg_sum.assign(variants, 0);
    means_.count.assign(variants, 0);
  }

  void Add(const SyntheticTraffic& traffic, const RequestTruth& truth) {
    evaluator_.Evaluate(truth.ranked_grades,
                        traffic.query_grades(truth.query_index), &scores_);
    means_.true_ndcg_sum[truth.variant_index] += scores_.at[0].ndcg;

    std::vector<metrics::Grade> ranked(truth.ranked_grades.size(),
                                       metrics::kUnjudged);
    for (const auto& [rank, relevance] : truth.judged) {
      ranked[rank] = std::max(ranked[rank], relevance);
    }
    std::vector<metrics::Grade> judged;
    for (metrics::Grade g : ranked) {
      if (g >= 0) judged.push_back(g);
    }
    evaluator_.Evaluate(ranked, judged, &scores_);
    means_.click_ndcg_sum[truth.variant_index] += scores_.at[0].ndcg;
    ++means_.count[truth.variant_index];
  }

  const VariantMeans& means() const { return means_; }

 private:
  metrics::Evaluator evaluator_;
  metrics::ListScores scores_;
  VariantMeans means_;
};

TEST(SyntheticTrafficTest, SameSeedSameEvents) {
  SyntheticTraffic a = MakeTraffic();
  SyntheticTraffic b = MakeTraffic();
  SyntheticConfig other;
  other.seed = 2;
  SyntheticTraffic c = MakeTraffic(other);
  std::string ra, rb, rc;
  std::vector<TimedJudgment> ja, jb, jc;
  int differing = 0;
  for (int i = 0; i < 2000; ++i) {
    const int64_t t = kStartMs + i * kStepMs;
    a.NextRequest(t, &ra, &ja);
    b.NextRequest(t, &rb, &jb);
    c.NextRequest(t, &rc, &jc);
    ASSERT_EQ(ra, rb);
    ASSERT_EQ(ja.size(), jb.size());
    for (size_t k = 0; k < ja.size(); ++k) {
      EXPECT_EQ(ja[k].json, jb[k].json);
      EXPECT_EQ(ja[k].time_ms, jb[k].time_ms);
      EXPECT_EQ(ja[k].request_id, jb[k].request_id);
    }
    differing +=
        ra.substr(ra.find("query_id")) != rc.substr(rc.find("query_id"));
  }
  EXPECT_GT(differing, 1900);               // Another seed, other traffic.
  EXPECT_EQ(a.TrecQrels(), c.TrecQrels());  // Same catalog_seed.
}

TEST(SyntheticTrafficTest, AboutThreeJudgmentsPerRequest) {
  SyntheticTraffic traffic = MakeTraffic();
  EXPECT_NEAR(traffic.expected_judgments_per_request(), 3.0, 0.01);
  constexpr int kRequests = 20000;
  std::string results;
  std::vector<TimedJudgment> judgments;
  int64_t total = 0;
  int64_t purchases = 0;
  int64_t with_none = 0;
  for (int i = 0; i < kRequests; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments);
    total += static_cast<int64_t>(judgments.size());
    with_none += judgments.empty();
    for (const TimedJudgment& j : judgments) {
      purchases += j.json.find("\"relevance\":2") != std::string::npos;
    }
  }
  const double mean = static_cast<double>(total) / kRequests;
  std::printf(
      "judgments/request %.3f (purchases %.3f), no judgment %.1f%%, "
      "examination scale %.3f\n",
      mean, static_cast<double>(purchases) / kRequests,
      100.0 * with_none / kRequests, traffic.examination_scale());
  EXPECT_NEAR(mean, 3.0, 0.1);
  EXPECT_GT(purchases, 0);
  EXPECT_GT(with_none, 0);  // Some users click nothing.

  SyntheticConfig more;
  more.judgments_per_request = 4.5;
  EXPECT_NEAR(MakeTraffic(more).expected_judgments_per_request(), 4.5, 0.01);
}

TEST(SyntheticTrafficTest, VariantBRanksBetterThanA) {
  SyntheticTraffic traffic = MakeTraffic();
  NdcgMeter meter(2);
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  for (int i = 0; i < 40000; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    ASSERT_EQ(truth.ranked_grades.size(), 10u);
    meter.Add(traffic, truth);
  }
  const VariantMeans& m = meter.means();
  std::printf(
      "A: %lld requests, nDCG@10 %.4f (from clicks %.4f)\n"
      "B: %lld requests, nDCG@10 %.4f (from clicks %.4f)\n",
      static_cast<long long>(m.count[0]), m.TrueNdcg(0), m.ClickNdcg(0),
      static_cast<long long>(m.count[1]), m.TrueNdcg(1), m.ClickNdcg(1));
  // 50/50 assignment.
  EXPECT_NEAR(static_cast<double>(m.count[0]) / 40000, 0.5, 0.02);
  // B is slightly better: a few points of nDCG, far beyond the standard
  // error (about 0.001 here).
  EXPECT_GT(m.TrueNdcg(1) - m.TrueNdcg(0), 0.01);
  EXPECT_LT(m.TrueNdcg(1) - m.TrueNdcg(0), 0.08);
  EXPECT_GT(m.TrueNdcg(0), 0.6);
  EXPECT_LT(m.TrueNdcg(1), 0.95);
  // The daemon sees it in the clicks too.
  EXPECT_GT(m.ClickNdcg(1), m.ClickNdcg(0));
}

TEST(SyntheticTrafficTest, RegressionLowersTheVariantsNdcg) {
  SyntheticConfig config;
  config.regress_variant = "B";
  config.regress_after_ms = 100'000;  // Half way through.
  config.regress_factor = 3;
  SyntheticTraffic traffic = MakeTraffic(config);
  NdcgMeter before(2);
  NdcgMeter after(2);
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = kStartMs + i * kStepMs;
    traffic.NextRequest(t, &results, &judgments, &truth);
    const bool late = t - kStartMs >= config.regress_after_ms;
    EXPECT_EQ(truth.regressed, late && truth.variant_index == 1);
    (late ? after : before).Add(traffic, truth);
  }
  std::printf(
      "B nDCG@10 %.4f -> %.4f (clicks %.4f -> %.4f); "
      "A %.4f -> %.4f\n",
      before.means().TrueNdcg(1), after.means().TrueNdcg(1),
      before.means().ClickNdcg(1), after.means().ClickNdcg(1),
      before.means().TrueNdcg(0), after.means().TrueNdcg(0));
  EXPECT_LT(after.means().TrueNdcg(1), before.means().TrueNdcg(1) - 0.1);
  EXPECT_LT(after.means().ClickNdcg(1), before.means().ClickNdcg(1) - 0.02);
  EXPECT_NEAR(after.means().TrueNdcg(0), before.means().TrueNdcg(0), 0.01);
}

TEST(SyntheticTrafficTest, EveryEventDecodesWithTheDefaultSchema) {
  SyntheticConfig config;
  config.variants = {{"control \"x\"", 1.0, 2.0}, {"B", 0.8, 1.0}};
  config.interleave = "B";
  config.interleave_share = 0.25;
  SyntheticTraffic traffic = MakeTraffic(config);
  // Later than every event (the last judgment is at most 30 s + 10 min
  // after kStartMs), so that none is ahead of the clock.
  const FakeClock clock(kStartMs + 3'600'000);
  stream::EventDecoder decoder(
      config::SchemaConfig{}, config::EventLimitsConfig{},
      config::JoinMode::kImpression, {"locale"}, &clock);
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  stream::ResultsEvent r;
  stream::JudgmentEvent j;
  std::set<std::string> request_ids;
  std::set<std::string> locales;
  std::map<std::string, int> variants;
  for (int i = 0; i < 3000; ++i) {
    const int64_t t = kStartMs + i * kStepMs;
    traffic.NextRequest(t, &results, &judgments, &truth);
    const stream::DecodeStatus rs =
        decoder.DecodeResults(results, std::nullopt, &r);
    ASSERT_TRUE(rs.ok()) << rs.detail << ": " << results;
    EXPECT_EQ(r.request_id, truth.request_id);
    EXPECT_EQ(r.request_id, traffic.last_request_id());
    EXPECT_EQ(r.query_id, traffic.query_id(truth.query_index));
    EXPECT_EQ(r.timestamp_ms, t);
    EXPECT_EQ(r.doc_ids.size(), 10u);
    ASSERT_EQ(r.segment_values.size(), 1u);
    locales.insert(std::string(r.segment_values[0]));
    ++variants[std::string(r.variant)];
    EXPECT_TRUE(request_ids.insert(std::string(r.request_id)).second);
    // Copies: the decoded views die with the next Decode call.
    const std::set<std::string> served(r.doc_ids.begin(), r.doc_ids.end());
    const std::string request_id(r.request_id);
    for (const TimedJudgment& tj : judgments) {
      const stream::DecodeStatus js =
          decoder.DecodeJudgments(tj.json, std::nullopt, &j);
      ASSERT_TRUE(js.ok()) << js.detail << ": " << tj.json;
      EXPECT_EQ(j.request_id, request_id);
      EXPECT_EQ(tj.request_id, request_id);
      EXPECT_EQ(j.timestamp_ms, tj.time_ms);
      EXPECT_GE(tj.time_ms, t);
      EXPECT_LE(tj.time_ms, t + config.max_delay_ms);
      ASSERT_EQ(j.judgments.size(), 1u);
      EXPECT_TRUE(served.count(std::string(j.judgments[0].doc_id)) > 0)
          << tj.json << " not in " << results;
      ASSERT_TRUE(j.judgments[0].grade.has_value());
      EXPECT_TRUE(*j.judgments[0].grade == 1 || *j.judgments[0].grade == 2);
    }
  }
  EXPECT_EQ(locales.size(), 3u);
  ASSERT_EQ(variants.size(), 3u);
  // A quarter interleaved (results without scores, with teams: the default
  // schema decodes them as ordinary results), the rest by weights 2:1.
  EXPECT_NEAR(variants["control \"x\"-vs-B"] / 3000.0, 0.25, 0.03);
  EXPECT_NEAR(variants["control \"x\""] / 3000.0, 0.75 * 2 / 3, 0.03);
}

TEST(SyntheticTrafficTest, NoSegmentsWhenNoValues) {
  SyntheticConfig config;
  config.segment_values.clear();
  config.segment_weights.clear();
  SyntheticTraffic traffic = MakeTraffic(config);
  std::string results;
  std::vector<TimedJudgment> judgments;
  traffic.NextRequest(kStartMs, &results, &judgments);
  EXPECT_EQ(results.find("segments"), std::string::npos);
}

// With users: every results event names its user, a user keeps one
// variant, variants split the users by weight, and the most active user
// gets her Zipf share 1 / sum_{u=1..500} u^-0.6 of the requests.
TEST(SyntheticTrafficTest, UsersKeepTheirVariant) {
  SyntheticConfig config;
  config.num_users = 500;
  SyntheticTraffic traffic = MakeTraffic(config);
  std::map<std::string, std::string> variant_of;
  std::map<std::string, int> requests_of;
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  const int kRequests = 20000;
  for (int i = 0; i < kRequests; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    const size_t at = results.find("\"user_id\":\"u-");
    ASSERT_NE(at, std::string::npos) << results;
    const size_t begin = at + 11;
    const std::string user =
        results.substr(begin, results.find('"', begin) - begin);
    EXPECT_EQ(user, "u-" + std::to_string(truth.user_index));
    const std::string variant = config.variants[truth.variant_index].name;
    auto [it, inserted] = variant_of.emplace(user, variant);
    ASSERT_EQ(it->second, variant) << user << " changed variant";
    ++requests_of[user];
  }
  int in_a = 0;
  for (const auto& [user, variant] : variant_of) in_a += variant == "A";
  // Users seen (nearly all 500): a binomial(n, 0.5) share, +-4 s.e.
  const double n = static_cast<double>(variant_of.size());
  EXPECT_NEAR(in_a / n, 0.5, 4 * std::sqrt(0.25 / n));
  double harmonic = 0;
  for (int u = 1; u <= 500; ++u) harmonic += std::pow(u, -0.6);
  const double top = 1 / harmonic;
  EXPECT_NEAR(requests_of["u-0"] / double(kRequests), top,
              5 * std::sqrt(top * (1 - top) / kRequests));
  // Without users, no user_id.
  SyntheticTraffic plain = MakeTraffic();
  plain.NextRequest(kStartMs, &results, &judgments, &truth);
  EXPECT_EQ(results.find("user_id"), std::string::npos);
  EXPECT_EQ(truth.user_index, -1);
}

TEST(SyntheticTrafficTest, QrelsListEveryCandidate) {
  SyntheticConfig config;
  config.num_queries = 7;
  config.docs_per_query = 12;
  config.results_per_request = 5;
  config.judgments_per_request = 0;  // Keep the click model as is.
  SyntheticTraffic traffic = MakeTraffic(config);
  const std::string qrels = traffic.TrecQrels();
  EXPECT_EQ(std::count(qrels.begin(), qrels.end(), '\n'), 7 * 12);
  EXPECT_EQ(qrels.rfind("q-0000 0 doc-", 0), 0u);
  for (int q = 0; q < traffic.num_queries(); ++q) {
    const auto grades = traffic.query_grades(q);
    EXPECT_EQ(grades.size(), 12u);
    EXPECT_TRUE(std::any_of(grades.begin(), grades.end(),
                            [](metrics::Grade g) { return g > 0; }));
  }
}

// The results of an interleaved results event, as (doc_id, team) pairs.
// Plain variant names only (no escapes).
std::vector<std::pair<std::string, std::string>> ParseTeams(
    const std::string& json) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string doc_key = "{\"doc_id\":\"";
  const std::string team_key = "\",\"team\":\"";
  for (size_t at = json.find(doc_key); at != std::string::npos;
       at = json.find(doc_key, at + 1)) {
    const size_t doc = at + doc_key.size();
    const size_t doc_end = json.find('"', doc);
    if (json.compare(doc_end, team_key.size(), team_key) != 0) return {};
    const size_t team = doc_end + team_key.size();
    out.emplace_back(json.substr(doc, doc_end - doc),
                     json.substr(team, json.find('"', team) - team));
  }
  return out;
}

// The clicked ranks of a request as CreditClicks wants them: the highest
// judgment per rank, kUnjudged where none.
std::vector<metrics::Grade> ClicksOf(const RequestTruth& truth) {
  std::vector<metrics::Grade> clicks(truth.ranked_grades.size(),
                                     metrics::kUnjudged);
  for (const auto& [rank, relevance] : truth.judged) {
    clicks[rank] = std::max(clicks[rank], relevance);
  }
  return clicks;
}

// About half of the requests are interleaved; their results events name
// the team of each result, and the teams are exactly what an independent
// run of the reference interleaver on the two rankings and the recorded
// seed gives. The list also satisfies team draft's invariants on its own:
// no doc twice, at any prefix the teams' picks differ by at most one, and
// each pick is the best doc of its team's ranking not already shown.
TEST(SyntheticTrafficTest, InterleavedTeamsReplayTeamDraft) {
  SyntheticConfig config;
  config.interleave = "B";
  SyntheticTraffic traffic = MakeTraffic(config);
  EXPECT_EQ(traffic.interleaved_variant(), "A-vs-B");
  const std::array<std::string, 2> names = {"A", "B"};
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  constexpr int kRequests = 4000;
  int interleaved = 0;
  std::map<std::string, int> variants;
  std::set<std::string> orders;  // Team sequences seen.
  for (int i = 0; i < kRequests; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    const size_t v = results.find("\"variant\":\"") + 11;
    ++variants[results.substr(v, results.find('"', v) - v)];
    if (!truth.interleaved) {
      EXPECT_TRUE(truth.teams.empty());
      EXPECT_EQ(results.find("\"team\""), std::string::npos);
      continue;
    }
    ++interleaved;
    EXPECT_EQ(truth.variant_index, 0);
    EXPECT_EQ(truth.challenger_index, 1);
    const auto served = ParseTeams(results);
    ASSERT_EQ(served.size(), 10u) << results;
    ASSERT_EQ(truth.teams.size(), 10u);
    ASSERT_EQ(truth.ranked_grades.size(), 10u);

    // The independent replay.
    std::array<std::vector<std::string_view>, 2> rankings;
    for (int t = 0; t < 2; ++t) {
      ASSERT_EQ(truth.rankings[t].size(), 10u);
      rankings[t].assign(truth.rankings[t].begin(), truth.rankings[t].end());
    }
    Xoshiro256 coins(truth.interleave_seed);
    metrics::InterleavedList replay;
    metrics::TeamDraftInterleave(rankings[0], rankings[1], 10, &coins, &replay);
    ASSERT_EQ(replay.docs.size(), 10u);
    std::string order;
    for (size_t r = 0; r < 10; ++r) {
      EXPECT_EQ(served[r].first, replay.docs[r]) << "rank " << r + 1;
      EXPECT_EQ(served[r].second, names[replay.teams[r]]) << "rank " << r + 1;
      EXPECT_EQ(truth.teams[r], replay.teams[r]);
      order.push_back(names[truth.teams[r]][0]);
    }
    orders.insert(order);

    // The invariants, from the JSON alone.
    std::set<std::string> shown;
    std::array<int, 2> picks = {0, 0};
    for (const auto& [doc, team_name] : served) {
      const int team = team_name == "A" ? 0 : 1;
      ASSERT_TRUE(team_name == "A" || team_name == "B") << team_name;
      ++picks[team];
      EXPECT_LE(std::abs(picks[0] - picks[1]), 1) << results;
      const std::vector<std::string>& own = truth.rankings[team];
      const auto best = std::find_if(
          own.begin(), own.end(),
          [&](const std::string& d) { return shown.count(d) == 0; });
      ASSERT_NE(best, own.end());
      EXPECT_EQ(*best, doc) << results;
      EXPECT_TRUE(shown.insert(doc).second) << doc << " twice";
    }
    // Judgments point at served ranks.
    for (const auto& [rank, relevance] : truth.judged) {
      EXPECT_LT(rank, 10);
    }
  }
  // A binomial(4000, 0.5) count, +-4 s.e. (= 126).
  EXPECT_NEAR(interleaved, 2000, 126);
  EXPECT_EQ(variants["A-vs-B"], interleaved);
  EXPECT_EQ(variants["A"] + variants["B"], kRequests - interleaved);
  EXPECT_GT(variants["A"], 0);
  EXPECT_GT(variants["B"], 0);
  // The coins vary the team sequence (2^5 are possible).
  EXPECT_GT(orders.size(), 16u);
}

// Judgments say what they are.
TEST(SyntheticTrafficTest, JudgmentsCarryTheirKind) {
  SyntheticTraffic traffic = MakeTraffic();
  std::string results;
  std::vector<TimedJudgment> judgments;
  int clicks = 0;
  int purchases = 0;
  for (int i = 0; i < 500; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments);
    for (const TimedJudgment& j : judgments) {
      const bool click = j.json.find("\"relevance\":1,\"kind\":\"click\"") !=
                         std::string::npos;
      const bool purchase =
          j.json.find("\"relevance\":2,\"kind\":\"purchase\"") !=
          std::string::npos;
      EXPECT_TRUE(click != purchase) << j.json;
      clicks += click;
      purchases += purchase;
    }
  }
  EXPECT_GT(clicks, purchases);
  EXPECT_GT(purchases, 0);
}

// Credited clicks (CreditClicks on the served teams and the emitted
// clicks): with B truly better (noise 0.85 against 1.0) B wins far more
// impressions than A; with equal rankers neither does. Under equal rankers
// team draft is fair by symmetry (the coin decides who picks first), so
// B's share of the decided impressions is 1/2: checked within 4 standard
// errors.
TEST(SyntheticTrafficTest, TheBetterRankerWinsTheInterleaving) {
  for (const double b_sigma : {0.85, 1.0}) {
    SyntheticConfig config;
    config.variants = {{"A", 1.0, 1.0}, {"B", b_sigma, 1.0}};
    config.interleave = "B";
    config.interleave_share = 1;
    config.seed = 12;
    SyntheticTraffic traffic = MakeTraffic(config);
    std::string results;
    std::vector<TimedJudgment> judgments;
    RequestTruth truth;
    metrics::InterleavingCounts counts;
    std::array<int64_t, 2> credited = {0, 0};
    for (int i = 0; i < 20000; ++i) {
      traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
      ASSERT_TRUE(truth.interleaved);
      const std::vector<metrics::Grade> clicks = ClicksOf(truth);
      counts.Add(metrics::CreditClicks(truth.teams, clicks, 1));
      for (size_t r = 0; r < clicks.size(); ++r) {
        if (clicks[r] >= 1) ++credited[truth.teams[r]];
      }
    }
    const double p_b = static_cast<double>(counts.wins[1]) /
                       static_cast<double>(counts.decided());
    std::printf(
        "B sigma %.2f (seed 12): impressions %lld, wins A %lld B %lld, ties "
        "%lld, no click %lld; credited clicks A %lld B %lld; p(B wins) "
        "%.4f\n",
        b_sigma, static_cast<long long>(counts.impressions),
        static_cast<long long>(counts.wins[0]),
        static_cast<long long>(counts.wins[1]),
        static_cast<long long>(counts.ties),
        static_cast<long long>(counts.no_click),
        static_cast<long long>(credited[0]),
        static_cast<long long>(credited[1]), p_b);
    EXPECT_EQ(counts.impressions, 20000);
    const double se = std::sqrt(0.25 / static_cast<double>(counts.decided()));
    if (b_sigma < 1.0) {
      EXPECT_GT(credited[1], credited[0]);
      EXPECT_GT(p_b, 0.5 + 4 * se);
    } else {
      EXPECT_NEAR(p_b, 0.5, 4 * se);
    }
  }
}

// The always-valid interleaving test on this traffic, as
// bench/interleaving_sensitivity runs it at scale (docs/statistics.md,
// "Interleaving sensitivity"): 20 experiments, a look every 50
// impressions, at most 4000 impressions. With B better (P(B wins a decided
// impression) about 0.555, 2/3 of impressions decided) a fixed-horizon
// sign test at 4000 impressions would have z about 0.055 / (0.5 /
// sqrt(2680)) = 5.7, so nearly every experiment decides, all for B; with
// equal rankers at most alpha = 0.05 of them may decide at all (Ville), so
// more than 3 of 20 (binomial tail 0.016) would be a failure.
TEST(SyntheticTrafficTest, SequentialInterleavingDecidesForTheBetterRanker) {
  constexpr int kExperiments = 20;
  constexpr int64_t kCap = 4000;
  for (const double b_sigma : {0.85, 1.0}) {
    std::array<int, 2> decided = {0, 0};  // A better, B better.
    for (int e = 0; e < kExperiments; ++e) {
      SyntheticConfig config;
      config.seed = 100 + e;
      config.variants = {{"A", 1.0, 1.0}, {"B", b_sigma, 1.0}};
      config.interleave = "B";
      config.interleave_share = 1;
      SyntheticTraffic traffic = MakeTraffic(config);
      metrics::InterleavingCounts counts;
      metrics::SequentialPreferenceTest test;
      std::string results;
      std::vector<TimedJudgment> judgments;
      RequestTruth truth;
      for (int64_t n = 1; n <= kCap; ++n) {
        traffic.NextRequest(kStartMs + n * kStepMs, &results, &judgments,
                            &truth);
        counts.Add(metrics::CreditClicks(truth.teams, ClicksOf(truth), 1));
        if (n % 50 != 0) continue;
        test.Look(counts);
        const int verdict = metrics::PreferenceVerdict(
            test.p_value(), metrics::Preference(counts), 0.05);
        if (verdict != 0) {
          ++decided[verdict > 0 ? 1 : 0];
          break;
        }
      }
    }
    std::printf("B sigma %.2f: %d of %d experiments decided B better, %d A\n",
                b_sigma, decided[1], kExperiments, decided[0]);
    if (b_sigma < 1.0) {
      EXPECT_GE(decided[1], kExperiments - 1);
      EXPECT_EQ(decided[0], 0);
    } else {
      EXPECT_LE(decided[0] + decided[1], 3);
    }
  }
}

TEST(SyntheticTrafficTest, RejectsBadConfigurations) {
  auto rejected = [](SyntheticConfig c) {
    return SyntheticTraffic::Create(std::move(c)).status().code() ==
           StatusCode::kInvalidArgument;
  };
  SyntheticConfig c;
  c.variants.clear();
  EXPECT_TRUE(rejected(c));
  c = {};
  c.variants = {{"A", 1, 1}, {"A", 1, 1}};
  EXPECT_TRUE(rejected(c));
  c = {};
  c.regress_variant = "C";
  EXPECT_TRUE(rejected(c));
  c = {};
  c.results_per_request = 41;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.judgments_per_request = 50;  // More than the click model can give.
  EXPECT_TRUE(rejected(c));
  c = {};
  c.segment_weights = {1.0};
  EXPECT_TRUE(rejected(c));
  c = {};
  c.click_probability[2] = 1.5;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.interleave = "C";  // Not a variant.
  EXPECT_TRUE(rejected(c));
  c = {};
  c.interleave = "A";  // The first variant cannot challenge itself.
  EXPECT_TRUE(rejected(c));
  c = {};
  c.interleave = "B";
  c.interleave_share = 0;
  EXPECT_TRUE(rejected(c));
  c.interleave_share = 1.5;
  EXPECT_TRUE(rejected(c));
  c = {};
  c.variants = {{"A", 1, 1}, {"B", 1, 1}, {"A-vs-B", 1, 1}};
  c.interleave = "B";
  EXPECT_TRUE(rejected(c));
  c = {};
  c.covariate = "pre";
  c.covariate_noise_sd = -1;
  EXPECT_TRUE(rejected(c));
  for (const char* path : {".pre", "pre.", "pre..x", "p\"re"}) {
    c = {};
    c.covariate = path;
    EXPECT_TRUE(rejected(c)) << path;
  }
  c = {};
  c.covariate = "pre.clicks";
  EXPECT_FALSE(rejected(c));
}

// Multileaving: the served list names each result's team, and it is
// exactly what an independent run of the reference multileaver on the
// teams' rankings and the recorded seed gives.
TEST(SyntheticTrafficTest, MultileavedTeamsReplayTeamDraftMultileaving) {
  SyntheticConfig config;
  config.variants = {{"A", 1.0, 1.0}, {"B", 0.85, 1.0}, {"C", 0.7, 1.0}};
  config.multileave = {"B", "A", "C"};  // B is the incumbent.
  SyntheticTraffic traffic = MakeTraffic(config);
  EXPECT_EQ(traffic.interleaved_variant(), "B-vs-A-vs-C");
  const std::vector<std::string> names = {"B", "A", "C"};
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  int multileaved = 0;
  for (int i = 0; i < 2000; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    if (!truth.interleaved) continue;
    ++multileaved;
    EXPECT_EQ(truth.variant_index, 1);     // B
    EXPECT_EQ(truth.challenger_index, 0);  // A
    EXPECT_EQ(truth.team_variants, (std::vector<int32_t>{1, 0, 2}));
    ASSERT_NE(results.find("\"variant\":\"B-vs-A-vs-C\""), std::string::npos);
    const auto served = ParseTeams(results);
    ASSERT_EQ(served.size(), 10u) << results;
    ASSERT_EQ(truth.rankings.size(), 3u);
    std::vector<std::vector<std::string_view>> rankings(3);
    for (int t = 0; t < 3; ++t) {
      rankings[t].assign(truth.rankings[t].begin(), truth.rankings[t].end());
    }
    const std::vector<std::span<const std::string_view>> views(rankings.begin(),
                                                               rankings.end());
    Xoshiro256 coins(truth.interleave_seed);
    metrics::InterleavedList replay;
    metrics::TeamDraftMultileave(views, 10, &coins, &replay);
    ASSERT_EQ(replay.docs.size(), 10u);
    for (size_t r = 0; r < 10; ++r) {
      EXPECT_EQ(served[r].first, replay.docs[r]) << "rank " << r + 1;
      EXPECT_EQ(served[r].second, names[replay.teams[r]]) << "rank " << r + 1;
      EXPECT_EQ(truth.teams[r], replay.teams[r]);
    }
  }
  // Binomial(2000, 1/2): 5 standard deviations is 112.
  EXPECT_NEAR(multileaved, 1000, 112);
}

// The credited clicks of three rankers of known quality (noise 1.0, 0.85,
// 0.7: C best, then B, then A) rank them in that order, and on 20000
// multileaved impressions the always-valid tests with BH across the pairs
// decide every pair for the better ranker.
TEST(SyntheticTrafficTest, MultileavingRanksRankersOfKnownQuality) {
  SyntheticConfig config;
  config.seed = 31;
  config.variants = {{"A", 1.0, 1.0}, {"B", 0.85, 1.0}, {"C", 0.7, 1.0}};
  config.multileave = {"A", "B", "C"};
  config.interleave_share = 1;
  SyntheticTraffic traffic = MakeTraffic(config);
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  metrics::MultileavingCounts counts(3);
  std::vector<metrics::SequentialPreferenceTest> tests(3);
  std::vector<double> p(3, 1.0);
  std::vector<int64_t> credit(3);
  for (int i = 1; i <= 20000; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    ASSERT_TRUE(truth.interleaved);
    metrics::CreditTeams(truth.teams, ClicksOf(truth), 1, credit);
    counts.Add(credit);
    if (i % 100 != 0) continue;
    for (size_t k = 0; k < 3; ++k) {
      tests[k].Look(counts.pairs[k]);
      p[k] = tests[k].p_value();
    }
  }
  const metrics::MultileavingAnalysis a =
      metrics::AnalyzeMultileaving(counts, p, 0.05);
  std::printf(
      "seed 31: clicks A %lld B %lld C %lld; adjusted p %.3g %.3g "
      "%.3g\n",
      static_cast<long long>(counts.clicks[0]),
      static_cast<long long>(counts.clicks[1]),
      static_cast<long long>(counts.clicks[2]), a.pairs[0].adjusted_p_value,
      a.pairs[1].adjusted_p_value, a.pairs[2].adjusted_p_value);
  EXPECT_GT(counts.clicks[2], counts.clicks[1]);
  EXPECT_GT(counts.clicks[1], counts.clicks[0]);
  for (const metrics::PairAnalysis& pair : a.pairs) {
    EXPECT_EQ(pair.verdict, 1) << pair.first << " vs " << pair.second;
  }
  EXPECT_EQ(a.ranking, (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(a.winner, 2);
}

TEST(SyntheticTrafficTest, RejectsBadMultileaving) {
  auto rejected = [](SyntheticConfig c) {
    return SyntheticTraffic::Create(std::move(c)).status().code() ==
           StatusCode::kInvalidArgument;
  };
  SyntheticConfig c;
  c.variants = {{"A", 1, 1}, {"B", 1, 1}, {"C", 1, 1}};
  c.multileave = {"A", "B", "C"};
  EXPECT_FALSE(rejected(c));
  c.multileave = {"A"};
  EXPECT_TRUE(rejected(c));
  c.multileave = {"A", "B", "B"};
  EXPECT_TRUE(rejected(c));
  c.multileave = {"A", "D"};
  EXPECT_TRUE(rejected(c));
  c.multileave = {"A", "B"};
  c.interleave = "B";
  EXPECT_TRUE(rejected(c));
  c.interleave.clear();
  c.variants.push_back({"A-vs-B", 1, 1});
  EXPECT_TRUE(rejected(c));
}

// A click and a purchase on rank 1 and a click on rank 3 of a four-doc
// list: ranks 1 and 3 are clicked (grade 1 each, whatever the judgment),
// ranks 2 and 4 unjudged; one judged grade per clicked rank.
TEST(ClickGradesTest, OneBinaryGradePerClickedRank) {
  RequestTruth truth;
  truth.ranked_grades = {3, 0, 2, 1};
  truth.judged = {{0, 1}, {2, 1}, {0, 2}};
  std::vector<metrics::Grade> ranked = {7, 7, 7, 7, 7, 7};  // Reused.
  std::vector<metrics::Grade> judged = {9};
  ClickGrades(truth, &ranked, &judged);
  EXPECT_EQ(ranked, (std::vector<metrics::Grade>{1, metrics::kUnjudged, 1,
                                                 metrics::kUnjudged}));
  EXPECT_EQ(judged, (std::vector<metrics::Grade>{1, 1}));
}

// schema.covariate traffic: every results event carries x = log(f) +
// noise (f the request's click factor), decoded exactly as emitted; its
// correlation with log(f) is the design's sd / sqrt(sd^2 + noise^2); with
// users the rest of the traffic is the same as without a covariate.
TEST(SyntheticTrafficTest, CovariateHasItsDesignedCorrelation) {
  SyntheticConfig config;
  config.covariate = "pre.clicks";
  config.user_click_sd = 0.5;
  config.covariate_noise_sd = 0.5;
  SyntheticTraffic traffic = MakeTraffic(config);
  config::SchemaConfig schema;
  schema.covariate = "pre.clicks";
  const FakeClock clock(kStartMs + 3'600'000);
  stream::EventDecoder decoder(schema, config::EventLimitsConfig(),
                               config::JoinMode::kImpression, {}, &clock);
  stream::ResultsEvent event;
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  constexpr int kRequests = 20000;
  metrics::CovariateMoments moments;  // y = log f, x = the covariate.
  for (int i = 0; i < kRequests; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    ASSERT_TRUE(decoder.DecodeResults(results, std::nullopt, &event).ok())
        << results;
    ASSERT_EQ(event.covariate, truth.covariate) << results;
    moments.Add(std::log(truth.click_factor), truth.covariate);
  }
  // r = 0.5 / sqrt(0.5) = 0.7071; its standard error (1 - r^2) / sqrt(n)
  // = 0.0035 at n = 20000: within 4 of them.
  const double r = moments.c_xy / std::sqrt(moments.m2_x * moments.m2_y);
  EXPECT_NEAR(r, std::sqrt(0.5), 4 * 0.5 / std::sqrt(kRequests));

  // With users the click factor is the user's: the events are those of the
  // same traffic without a covariate, plus the field.
  config.num_users = 300;
  SyntheticConfig plain_config = config;
  plain_config.covariate.clear();
  SyntheticTraffic with = MakeTraffic(config);
  SyntheticTraffic without = MakeTraffic(plain_config);
  std::string plain;
  std::vector<TimedJudgment> plain_judgments;
  for (int i = 0; i < 200; ++i) {
    with.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    without.NextRequest(kStartMs + i * kStepMs, &plain, &plain_judgments);
    const size_t at = results.find(",\"pre\":{\"clicks\":");
    ASSERT_NE(at, std::string::npos) << results;
    EXPECT_EQ(results.substr(0, at) + "}", plain);
    ASSERT_EQ(judgments.size(), plain_judgments.size());
    for (size_t j = 0; j < judgments.size(); ++j) {
      EXPECT_EQ(judgments[j].json, plain_judgments[j].json);
    }
  }
}

// A latency field (schema.fields): log-normal with the configured mean,
// decoded as the daemon reads it, slower by regress_latency_factor once a
// request is regressed; its draws have a stream of their own (the events
// are those of the same traffic without it, plus the field). With log-sd
// s = 0.3 the mean's standard error is 80 sqrt(e^{s^2} - 1) / sqrt(n):
// 0.31 ms at n = 5000 per phase of B; within 4 of them.
TEST(SyntheticTrafficTest, LatencyHasItsMeanAndRegresses) {
  SyntheticConfig config;
  config.latency = "timing.latency_ms";
  config.latency_mean_ms = 80;
  config.latency_sd = 0.3;
  config.regress_variant = "B";
  config.regress_after_ms = 100'000;
  config.regress_latency_factor = 1.25;
  SyntheticTraffic traffic = MakeTraffic(config);
  config::SchemaConfig schema;
  schema.fields = {{"latency_ms", "timing.latency_ms", false, 10}};
  const FakeClock clock(kStartMs + 3'600'000);
  stream::EventDecoder decoder(schema, config::EventLimitsConfig(),
                               config::JoinMode::kImpression, {}, &clock);
  stream::ResultsEvent event;
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  double sum[2] = {0, 0};  // B before, B after the regression.
  int n[2] = {0, 0};
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = kStartMs + i * kStepMs;
    traffic.NextRequest(t, &results, &judgments, &truth);
    ASSERT_TRUE(decoder.DecodeResults(results, std::nullopt, &event).ok())
        << results;
    ASSERT_EQ(event.fields[0], truth.latency_ms) << results;
    if (truth.variant_index != 1) continue;
    const int phase = truth.regressed ? 1 : 0;
    sum[phase] += truth.latency_ms;
    ++n[phase];
  }
  ASSERT_GT(n[0], 4000);
  ASSERT_GT(n[1], 4000);
  const double se = 80 * std::sqrt(std::exp(0.09) - 1);
  EXPECT_NEAR(sum[0] / n[0], 80, 4 * se / std::sqrt(n[0]));
  EXPECT_NEAR(sum[1] / n[1], 100, 4 * 1.25 * se / std::sqrt(n[1]));

  SyntheticConfig plain_config = config;
  plain_config.latency.clear();
  SyntheticTraffic with = MakeTraffic(config);
  SyntheticTraffic without = MakeTraffic(plain_config);
  std::string plain;
  std::vector<TimedJudgment> plain_judgments;
  for (int i = 0; i < 200; ++i) {
    with.NextRequest(kStartMs + i * kStepMs, &results, &judgments);
    without.NextRequest(kStartMs + i * kStepMs, &plain, &plain_judgments);
    const size_t at = results.find(",\"timing\":{\"latency_ms\":");
    ASSERT_NE(at, std::string::npos) << results;
    EXPECT_EQ(results.substr(0, at) + "}", plain);
    EXPECT_EQ(judgments.size(), plain_judgments.size());
  }
  config.latency = "a..b";
  EXPECT_FALSE(SyntheticTraffic::Create(config).ok());
}

// The adjusted interval on synthetic traffic through the pipeline: the
// monitor's variance ratio is 1 - r^2 for r the pooled within-arm
// correlation of the covariate and the list's nDCG@10 from clicks,
// computed here from what the generator knows (NdcgMeter's click nDCG),
// so the interval shrinks by about sqrt(1 - r^2). 20000 requests, users'
// click factors log-normal with sigma 0.8, covariate noise 0.3.
TEST(SyntheticTrafficTest, CovariateShrinksTheAdjustedInterval) {
  SyntheticConfig traffic_config;
  traffic_config.covariate = "pre_clicks";
  traffic_config.user_click_sd = 0.8;
  traffic_config.covariate_noise_sd = 0.3;
  SyntheticTraffic traffic = MakeTraffic(traffic_config);
  config::Config config;
  config.schema.covariate = "pre_clicks";
  config.metrics.measures = {metrics::Measure::kNdcg};
  config.metrics.cutoffs = {10};
  config.join.window = std::chrono::minutes(15);
  config.join.allowed_lateness = std::chrono::hours(2);
  config.experiments = {{"x", "A", {"B"}}};
  const FakeClock clock(kStartMs + 3'600'000);
  auto pipeline = stream::Pipeline::Create(config, &clock);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  NdcgMeter meter(2);
  std::vector<metrics::CovariateMoments> arms(2);
  std::string results;
  std::vector<TimedJudgment> judgments;
  RequestTruth truth;
  int64_t offset = 0;
  for (int i = 0; i < 20000; ++i) {
    traffic.NextRequest(kStartMs + i * kStepMs, &results, &judgments, &truth);
    (*pipeline)->OnPayload(stream::Topic::kResults, results, {0, offset++});
    for (const TimedJudgment& j : judgments) {
      (*pipeline)->OnPayload(stream::Topic::kJudgments, j.json, {0, offset++});
    }
    const double before = meter.means().click_ndcg_sum[truth.variant_index];
    meter.Add(traffic, truth);
    arms[static_cast<size_t>(truth.variant_index)].Add(
        meter.means().click_ndcg_sum[truth.variant_index] - before,
        truth.covariate);
  }
  (*pipeline)->FinishAll();
  const double c_xy = arms[0].c_xy + arms[1].c_xy;
  const double r2 =
      c_xy * c_xy /
      ((arms[0].m2_x + arms[1].m2_x) * (arms[0].m2_y + arms[1].m2_y));
  const stream::Comparison& c = (*pipeline)->experiments().comparisons()[0];
  ASSERT_EQ(c.adjusted.status, metrics::AdjustmentStatus::kAdjusted);
  EXPECT_EQ(c.adjusted.baseline_arm.count, arms[0].count);
  EXPECT_EQ(c.adjusted.treatment_arm.count, arms[1].count);
  const double width_ratio =
      (c.adjusted.welch.interval.upper - c.adjusted.welch.interval.lower) /
      (c.welch.interval.upper - c.welch.interval.lower);
  std::printf(
      "within-arm correlation r = %.4f: variance ratio %.4f (1 - r^2 = "
      "%.4f), width ratio %.4f (sqrt(1 - r^2) = %.4f)\n",
      std::sqrt(r2), c.adjusted.variance_ratio, 1 - r2, width_ratio,
      std::sqrt(1 - r2));
  EXPECT_GT(r2, 0.05);  // The covariate predicts the clicks.
  // 1 - r^2 exactly for equal arms; the arms differ by about 1% here
  // (0.7937 against 0.7938 when written).
  EXPECT_NEAR(c.adjusted.variance_ratio, 1 - r2, 0.003);
  EXPECT_NEAR(width_ratio, std::sqrt(1 - r2), 0.003);
}

}  // namespace
}  // namespace rankwatch::sim
