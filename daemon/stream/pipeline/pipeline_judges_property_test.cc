// Property: the judges' live figures (issue 29) do not depend on the order
// in which partitions deliver their events, nor on a checkpoint and
// restore of every shard part-way, and they equal figures computed here,
// in the test, from the lists' grades alone:
//  - each judge's P@2 and reciprocal rank over the lists it labelled;
//  - each judge's coverage and the unjudged share of the served top 2;
//  - prediction-powered P@2 (human trusted, llm cheap) from
//    metrics::PpiMean over the items (the two-pass form checked against
//    ppi_py in metrics/ppi_test.cc), not the pipeline's sums;
//  - the agreement's counts, and kappa from the items (metrics::CohenKappa
//    over spans, checked against scikit-learn in metrics/agreement_test);
//  - the coverage check of A against B.
// Every event lies within a join window of the first, so every order is
// allowed and nothing finalizes before FinishAll. A failure prints its
// seed.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/numeric.h"
#include "base/random.h"
#include "daemon/stream/pipeline/judge_report_test_util.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"
#include "metrics/agreement.h"
#include "metrics/ppi.h"

namespace rankwatch::stream {
namespace {

constexpr int64_t kStart = kNow - 600'000;
constexpr int kDocs = 3;

struct RandomList {
  std::string variant;
  int32_t partition = 0;
  int64_t time_ms = 0;
  std::vector<metrics::Grade> human;  // Per rank; U: not labelled.
  std::vector<metrics::Grade> llm;
};

struct Event {
  int32_t partition = 0;
  Topic topic = Topic::kResults;
  std::string json;
};

config::Config PropertyConfig() {
  config::Config c;
  c.join.window = std::chrono::seconds(60);
  c.metrics.measures = {metrics::Measure::kPrecision,
                        metrics::Measure::kReciprocalRank};
  c.metrics.cutoffs = {2};
  c.aggregation.variants = {"A", "B"};
  c.judges.names = {"human", "llm"};
  c.judges.ppi = {.trusted = "human", .cheap = "llm", .tune = false};
  c.experiments = {judge_story::RankerExperiment()};
  return c;
}

std::vector<RandomList> RandomLists(Xoshiro256* rng) {
  std::vector<RandomList> lists(static_cast<size_t>(rng->Between(40, 120)));
  const int32_t partitions = static_cast<int32_t>(rng->Between(1, 4));
  // B's llm labels less of the list: its coverage differs in some seeds.
  for (size_t i = 0; i < lists.size(); ++i) {
    RandomList& l = lists[i];
    l.variant = rng->Below(2) == 0 ? "A" : "B";
    l.partition = static_cast<int32_t>(rng->Below(partitions));
    l.time_ms = kStart + static_cast<int64_t>(i) * 10;
    const bool human = rng->Uniform() < 0.35;
    const double llm_rate = l.variant == "A" ? 0.9 : rng->Uniform();
    for (int d = 0; d < kDocs; ++d) {
      l.human.push_back(human && rng->Uniform() < 0.7
                            ? static_cast<metrics::Grade>(rng->Below(3))
                            : U);
      l.llm.push_back(rng->Uniform() < llm_rate
                          ? static_cast<metrics::Grade>(rng->Below(3))
                          : U);
    }
  }
  return lists;
}

// Per partition, the production order: each list's results event, then its
// judges' labels.
std::vector<std::vector<Event>> EventsOf(const std::vector<RandomList>& lists) {
  std::vector<std::vector<Event>> out(4);
  for (size_t i = 0; i < lists.size(); ++i) {
    const RandomList& l = lists[i];
    const std::string id = "r" + std::to_string(i);
    std::string docs;
    for (int d = 0; d < kDocs; ++d) {
      docs += std::string(d ? "," : "") + "\"" + id + "d" + std::to_string(d) +
              "\"";
    }
    auto& p = out[static_cast<size_t>(l.partition)];
    p.push_back({l.partition, Topic::kResults,
                 "{\"request_id\":\"" + id + "\",\"variant\":\"" + l.variant +
                     "\",\"timestamp\":" + std::to_string(l.time_ms) +
                     ",\"results\":[" + docs + "]}"});
    for (const auto& [judge, grades] :
         {std::pair<std::string, const std::vector<metrics::Grade>*>{"human",
                                                                     &l.human},
          {"llm", &l.llm}}) {
      for (int d = 0; d < kDocs; ++d) {
        if ((*grades)[static_cast<size_t>(d)] == U) continue;
        p.push_back({l.partition, Topic::kJudgments,
                     "{\"request_id\":\"" + id + "\",\"judge\":\"" + judge +
                         "\",\"timestamp\":" + std::to_string(l.time_ms + 100) +
                         ",\"doc_id\":\"" + id + "d" + std::to_string(d) +
                         "\",\"relevance\":" +
                         std::to_string((*grades)[static_cast<size_t>(d)]) +
                         "}"});
      }
    }
  }
  return out;
}

// The reference: P@2 and RR by their definitions (relevant: grade >= 1),
// NaN for a judge that labelled none of the list.
bool Labelled(const std::vector<metrics::Grade>& g) {
  for (metrics::Grade x : g) {
    if (x != U) return true;
  }
  return false;
}
double PrecisionAt2(const std::vector<metrics::Grade>& g) {
  if (!Labelled(g)) return kNaN;
  return ((g[0] >= 1) + (g[1] >= 1)) / 2.0;
}
double ReciprocalRank(const std::vector<metrics::Grade>& g) {
  if (!Labelled(g)) return kNaN;
  for (size_t r = 0; r < g.size(); ++r) {
    if (g[r] >= 1) return 1.0 / static_cast<double>(r + 1);
  }
  return 0;
}
double Top2Share(const std::vector<metrics::Grade>& a,
                 const std::vector<metrics::Grade>* b, bool labelled) {
  int n = 0;
  for (size_t r = 0; r < 2; ++r) {
    const bool any = a[r] != U || (b != nullptr && (*b)[r] != U);
    n += any == labelled;
  }
  return n / 2.0;
}

// The mean of the defined values of `f` over `variant`'s lists.
template <typename F>
std::pair<int64_t, double> MeanOf(const std::vector<RandomList>& lists,
                                  const std::string& variant, F f) {
  int64_t n = 0;
  double sum = 0;
  for (const RandomList& l : lists) {
    if (l.variant != variant) continue;
    const double v = f(l);
    if (std::isnan(v)) continue;
    ++n;
    sum += v;
  }
  return {n, n ? sum / static_cast<double>(n) : kNaN};
}

// Runs the lists through a pipeline: partitions interleaved at random, and
// every shard checkpointed into a fresh pipeline after a random share.
PipelineSnapshot RunLive(const config::Config& config,
                         const std::vector<RandomList>& lists,
                         Xoshiro256* rng) {
  FakeClock clock(kNow);
  auto created = Pipeline::Create(config, &clock);
  EXPECT_TRUE(created.ok());
  std::unique_ptr<Pipeline> p = std::move(created).value();
  std::vector<std::vector<Event>> events = EventsOf(lists);
  size_t total = 0;
  for (const auto& e : events) total += e.size();
  const size_t restart_at = static_cast<size_t>(rng->Below(total + 1));
  std::vector<size_t> next(events.size(), 0);
  int64_t offset = 0;
  for (size_t delivered = 0; delivered < total; ++delivered) {
    if (delivered == restart_at) {
      std::vector<std::string> records(events.size());
      for (size_t s = 0; s < events.size(); ++s) {
        p->EncodeShard(static_cast<int32_t>(s), &records[s]);
      }
      p = std::move(Pipeline::Create(config, &clock)).value();
      for (size_t s = 0; s < events.size(); ++s) {
        EXPECT_TRUE(p->DecodeShard(static_cast<int32_t>(s), records[s]).ok());
      }
    }
    size_t part;
    do {
      part = static_cast<size_t>(rng->Below(events.size()));
    } while (next[part] == events[part].size());
    const Event& e = events[part][next[part]++];
    const int32_t source =
        2 * e.partition + (e.topic == Topic::kResults ? 0 : 1);
    p->OnPayload(e.topic, e.json, EventOrigin{source, offset++});
  }
  p->FinishAll();
  PipelineSnapshot s;
  TakeSnapshot(*p, &s);
  return s;
}

// The snapshot's since-start figure of `role`, `judge`, main series
// `measure`, variant.
const metrics::RunningStats* Find(const PipelineSnapshot& s,
                                  JudgeSeriesRole role, int32_t judge,
                                  int32_t measure, const std::string& variant) {
  for (size_t g = 0; g < s.judge_groups.size(); ++g) {
    if (s.judge_groups[g].variant != variant) continue;
    for (size_t i = 0; i < s.judge_layout.size(); ++i) {
      if (s.judge_layout[i] == JudgeSeries{role, judge, measure}) {
        return &s.judge_groups[g].all[i];
      }
    }
  }
  return nullptr;
}

void ExpectFigure(const metrics::RunningStats* got,
                  std::pair<int64_t, double> want, const char* what) {
  ASSERT_NE(got, nullptr) << what;
  EXPECT_EQ(got->count(), want.first) << what;
  if (want.first > 0) {
    EXPECT_NEAR(got->mean(), want.second, 1e-12) << what;
  }
}

TEST(PipelineJudgesPropertyTest, EveryJudgesFiguresInAnyOrder) {
  const config::Config config = PropertyConfig();
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Xoshiro256 rng(seed);
    const std::vector<RandomList> lists = RandomLists(&rng);
    const PipelineSnapshot s = RunLive(config, lists, &rng);
    // Main series 0 is P_2, 2 the uncut recip_rank (1 is recip_rank@2).
    for (const std::string v : {"A", "B"}) {
      ExpectFigure(
          Find(s, JudgeSeriesRole::kMeasure, 0, 0, v),
          MeanOf(lists, v,
                 [](const RandomList& l) { return PrecisionAt2(l.human); }),
          "human P@2");
      ExpectFigure(
          Find(s, JudgeSeriesRole::kMeasure, 1, 0, v),
          MeanOf(lists, v,
                 [](const RandomList& l) { return PrecisionAt2(l.llm); }),
          "llm P@2");
      ExpectFigure(
          Find(s, JudgeSeriesRole::kMeasure, 0, 2, v),
          MeanOf(lists, v,
                 [](const RandomList& l) { return ReciprocalRank(l.human); }),
          "human RR");
      ExpectFigure(Find(s, JudgeSeriesRole::kCoverage, 1, -1, v),
                   MeanOf(lists, v,
                          [](const RandomList& l) {
                            return Top2Share(l.llm, nullptr, true);
                          }),
                   "llm coverage");
      ExpectFigure(Find(s, JudgeSeriesRole::kUnjudged, -1, -1, v),
                   MeanOf(lists, v,
                          [](const RandomList& l) {
                            return Top2Share(l.human, &l.llm, false);
                          }),
                   "unjudged");
      // PPI of P@2 from the items.
      std::vector<double> y, f, u;
      for (const RandomList& l : lists) {
        if (l.variant != v || !Labelled(l.llm)) continue;
        if (Labelled(l.human)) {
          y.push_back(PrecisionAt2(l.human));
          f.push_back(PrecisionAt2(l.llm));
        } else {
          u.push_back(PrecisionAt2(l.llm));
        }
      }
      const auto want = metrics::PpiMean(y, f, u, 0.95, /*tune=*/false);
      const PpiFigure* got = nullptr;
      for (const PpiFigure& p : s.ppi) {
        if (s.judge_groups[p.group].variant == v && p.series == 0 &&
            p.window == -1) {
          got = &p;
        }
      }
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(got->moments.n, static_cast<int64_t>(y.size()));
      EXPECT_EQ(got->moments.others, static_cast<int64_t>(u.size()));
      ASSERT_EQ(got->estimate.has_value(), want.has_value());
      if (want) {
        EXPECT_NEAR(got->estimate->estimate, want->estimate, 1e-12);
        EXPECT_NEAR(got->estimate->lower, want->lower, 1e-12);
        EXPECT_NEAR(got->estimate->upper, want->upper, 1e-12);
      }
    }
    // Agreement over the served docs.
    std::vector<int> xs, ys;
    int64_t only_human = 0, only_llm = 0;
    for (const RandomList& l : lists) {
      for (int d = 0; d < kDocs; ++d) {
        const metrics::Grade h = l.human[static_cast<size_t>(d)];
        const metrics::Grade m = l.llm[static_cast<size_t>(d)];
        if (h != U && m != U) {
          xs.push_back(h);
          ys.push_back(m);
        }
        only_human += h != U && m == U;
        only_llm += h == U && m != U;
      }
    }
    ASSERT_EQ(s.agreement.size(), 1u);
    EXPECT_EQ(s.agreement[0].pairs, static_cast<int64_t>(xs.size()));
    EXPECT_EQ(s.agreement[0].only_first, only_human);
    EXPECT_EQ(s.agreement[0].only_second, only_llm);
    const auto kappa =
        metrics::CohenKappa(xs, ys, metrics::KappaWeights::kNone);
    ASSERT_EQ(s.agreement[0].kappa.has_value(), kappa.has_value());
    if (kappa) {
      EXPECT_NEAR(s.agreement[0].kappa->estimate, kappa->estimate, 1e-12);
    }
    // Every list lies in the windows, which end at the newest.
    ASSERT_EQ(s.window_agreement.size(), 2u);
    EXPECT_EQ(s.window_agreement[0][0].pairs, s.agreement[0].pairs);
    // The coverage check of B against A at k = 2.
    const double a = MeanOf(lists, "A", [](const RandomList& l) {
                       return Top2Share(l.human, &l.llm, false);
                     }).second;
    const double b = MeanOf(lists, "B", [](const RandomList& l) {
                       return Top2Share(l.human, &l.llm, false);
                     }).second;
    ASSERT_EQ(s.coverage.size(), 1u);
    EXPECT_EQ(s.coverage[0].cutoff, 2);
    EXPECT_NEAR(s.coverage[0].baseline_unjudged, a, 1e-12);
    EXPECT_NEAR(s.coverage[0].treatment_unjudged, b, 1e-12);
    EXPECT_EQ(s.coverage[0].flagged, std::abs(b - a) > 0.05);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace rankwatch::stream
