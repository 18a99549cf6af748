// The promise behind `rankwatch run` == `rankwatch replay`: what the
// streaming pipeline computes from a set of events does not depend on the
// order they arrive in, as long as each event is within the allowed
// lateness of its own source (docs/configuration.md, "When an event
// counts").
//
// A generator makes random event sets (early, late, far-late, boundary,
// duplicate and batch judgments, withdrawals, duplicate results events,
// orphans, malformed lines; both combine rules; several variants and
// segments). Each set is delivered through the pipeline in many random
// interleavings that keep the order within each source but shuffle across
// 1 to 24 sources, with consumer-style idle signals, and through `replay`
// (from files in yet another order). Every run must give the same
// finalized counts exactly and the same sums to 1e-12 relative.
//
// The expected values are not computed by the code under test alone: the
// sums of one run are checked against every other run and against replay,
// and the small hand-made cases in daemon/stream/join/impression_join_test.cc
// pin the semantics themselves.
//
// A failure prints the seeds; RANKWATCH_PROPERTY_SEED=<set seed> reruns
// one event set.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/replay.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch {
namespace {

using stream::EventOrigin;
using stream::Pipeline;
using stream::Topic;

constexpr int64_t kStart = 1'763'800'000'000;  // 2025-11-22, epoch ms.

// The project's seeded generator: the same stream everywhere.
class Rng : public Xoshiro256 {
 public:
  using Xoshiro256::Xoshiro256;
  bool Chance(double p) { return Uniform() < p; }
};

struct Event {
  Topic topic;
  int64_t time_ms;  // For the generator's ordering only; the JSON has it.
  std::string key;  // request_id (impression) or query_id (qrels).
  std::string json;
};

struct EventSet {
  config::Config config;
  // In "production" order: within any subsequence (a source), every event
  // is at most allowed_lateness older than the newest before it.
  std::vector<Event> events;
};

std::string Doc(int64_t i) { return "d" + std::to_string(i); }

std::string ResultsJson(const std::string& id, const std::string& variant,
                        const std::string& locale, int64_t t,
                        const std::vector<int64_t>& docs,
                        const std::string& query_id = "") {
  std::string s = "{\"request_id\":\"" + id + "\",\"variant\":\"" + variant +
                  "\",\"timestamp\":" + std::to_string(t);
  if (!query_id.empty()) s += ",\"query_id\":\"" + query_id + "\"";
  if (!locale.empty()) s += ",\"segments\":{\"locale\":\"" + locale + "\"}";
  s += ",\"results\":[";
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i > 0) s += ",";
    if (variant == "I") {
      // Interleaved: each doc's team follows from the doc.
      s += "{\"doc_id\":\"" + Doc(docs[i]) + "\",\"team\":\"" +
           (docs[i] % 2 == 0 ? "A" : "B") + "\"}";
    } else {
      s += "\"" + Doc(docs[i]) + "\"";
    }
  }
  return s + "]}";
}

// grade -1 withdraws ("relevance": null). A non-empty `kind` is the
// event's judgment kind.
std::string JudgmentsJson(const std::string& id_field, const std::string& id,
                          int64_t t,
                          const std::vector<std::pair<int64_t, int>>& grades,
                          const std::string& kind = "") {
  auto relevance = [](int g) {
    return g < 0 ? std::string("null") : std::to_string(g);
  };
  std::string s =
      "{\"" + id_field + "\":\"" + id + "\",\"timestamp\":" + std::to_string(t);
  if (!kind.empty()) s += ",\"kind\":\"" + kind + "\"";
  if (grades.size() == 1) {
    return s + ",\"doc_id\":\"" + Doc(grades[0].first) +
           "\",\"relevance\":" + relevance(grades[0].second) + "}";
  }
  s += ",\"judgments\":[";
  for (size_t i = 0; i < grades.size(); ++i) {
    if (i > 0) s += ",";
    s += "{\"doc_id\":\"" + Doc(grades[i].first) +
         "\",\"relevance\":" + relevance(grades[i].second) + "}";
  }
  return s + "]}";
}

const char* const kMalformed[] = {
    "{\"request_id\":\"x\",\"timestamp\":",
    "not json",
    "{\"request_id\":\"x\",\"results\":[\"a\"]}",  // No timestamp.
    "{\"request_id\":\"\",\"timestamp\":1763800000000,\"results\":[\"a\"]}",
    "{\"request_id\":\"x\",\"timestamp\":1763800000000,\"doc_id\":\"a\","
    "\"relevance\":1.5}",
};

// Orders events as a producer might write them: by time, each shifted by
// up to `lateness` (so any two in order are at most `lateness` apart the
// wrong way round, the bound the watermark allows).
void ProductionOrder(int64_t lateness, Rng* rng, std::vector<Event>* events) {
  std::vector<std::pair<int64_t, size_t>> keys;
  for (size_t i = 0; i < events->size(); ++i) {
    keys.emplace_back((*events)[i].time_ms + rng->Between(0, lateness), i);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<Event> ordered;
  for (const auto& [key, i] : keys) ordered.push_back((*events)[i]);
  *events = std::move(ordered);
}

config::Config BaseConfig(Rng* rng) {
  config::Config c;
  c.join.window = std::chrono::milliseconds(
      std::array<int64_t, 3>{2000, 5000, 10000}[rng->Between(0, 2)]);
  c.join.allowed_lateness = std::chrono::milliseconds(
      std::array<int64_t, 3>{0, 500, 2000}[rng->Between(0, 2)]);
  c.join.early_tolerance = std::chrono::milliseconds(
      std::array<int64_t, 2>{0, 1000}[rng->Between(0, 1)]);
  c.join.idle_timeout = std::chrono::hours(1);
  c.join.combine =
      rng->Chance(0.5) ? config::CombineRule::kMax : config::CombineRule::kLast;
  c.aggregation.segments = {"locale"};
  c.aggregation.windows = {std::chrono::seconds(30), std::chrono::minutes(5)};
  c.aggregation.bucket = std::chrono::seconds(1);
  c.logging.max_rejects_logged_per_second = 0;  // Malformed on purpose.
  return c;
}

EventSet GenerateImpression(uint64_t seed) {
  Rng rng(seed);
  EventSet set;
  set.config = BaseConfig(&rng);
  // Clicks too: the click measures, labels that are no clicks, and
  // variant I interleaving teams A and B.
  for (metrics::Measure m :
       {metrics::Measure::kCtr, metrics::Measure::kClicks,
        metrics::Measure::kAbandonment, metrics::Measure::kFirstClickRank,
        metrics::Measure::kRecipRankFirstClick}) {
    set.config.metrics.measures.push_back(m);
  }
  set.config.metrics.click_exclude_kinds = {"label"};
  set.config.interleaving = {{"x", "I", {"A", "B"}}};
  const int64_t window = set.config.join.window.count();
  const int64_t early = set.config.join.early_tolerance.count();
  const int64_t requests = rng.Between(40, 200);
  const int64_t span = window * rng.Between(5, 25);
  const char* const variants[] = {"A", "I", "C"};
  const int64_t num_variants = rng.Between(1, 3);
  const char* const locales[] = {"de", "fr", ""};
  std::vector<Event>& ev = set.events;
  for (int64_t i = 0; i < requests; ++i) {
    const std::string id = "r" + std::to_string(i);
    const int64_t served = kStart + rng.Between(0, span);
    std::vector<int64_t> docs;
    const int64_t n = rng.Between(1, 10);
    while (static_cast<int64_t>(docs.size()) < n) {
      const int64_t d = rng.Between(0, 14);
      if (std::find(docs.begin(), docs.end(), d) == docs.end()) {
        docs.push_back(d);
      }
    }
    const std::string variant = variants[rng.Between(0, num_variants - 1)];
    const std::string locale = locales[rng.Between(0, 2)];
    ev.push_back({Topic::kResults, served, id,
                  ResultsJson(id, variant, locale, served, docs)});
    if (rng.Chance(0.05)) ev.push_back(ev.back());  // At-least-once copy.
    if (rng.Chance(0.05)) {
      // A second, different results event within the window: the earlier
      // one is the request, wherever either arrives.
      std::vector<int64_t> other = docs;
      std::reverse(other.begin(), other.end());
      const int64_t t = served + rng.Between(0, window / 2);
      ev.push_back(
          {Topic::kResults, t, id, ResultsJson(id, variant, locale, t, other)});
    }
    const int64_t judgment_events = rng.Between(0, 6);
    for (int64_t k = 0; k < judgment_events; ++k) {
      const double p = rng.Uniform();
      int64_t offset;
      if (p < 0.70) {
        offset = rng.Between(0, window);
      } else if (p < 0.78) {
        offset = rng.Chance(0.5) ? window : -early;  // Exactly on a bound.
      } else if (p < 0.86) {
        offset = rng.Between(window + 1, 3 * window);  // Far late.
      } else if (p < 0.93) {
        offset = -rng.Between(0, early);  // Early, within tolerance.
      } else {
        offset = -early - rng.Between(1, 2000);  // Too early.
      }
      const int64_t t = std::max<int64_t>(0, served + offset);
      std::vector<std::pair<int64_t, int>> grades;
      const int64_t m = rng.Between(1, 3);
      for (int64_t g = 0; g < m; ++g) {
        // Mostly served docs; some not served; some withdrawals.
        const int64_t d =
            rng.Chance(0.8) ? docs[rng.Between(0, n - 1)] : rng.Between(15, 20);
        grades.emplace_back(d, rng.Chance(0.1) ? -1 : rng.Between(0, 3));
      }
      ev.push_back(
          {Topic::kJudgments, t, id,
           JudgmentsJson(
               "request_id", id, t, grades,
               rng.Chance(0.2) ? "label" : (rng.Chance(0.5) ? "click" : ""))});
      if (rng.Chance(0.05)) ev.push_back(ev.back());  // At-least-once copy.
    }
  }
  for (int64_t i = rng.Between(0, 10); i > 0; --i) {  // Never served.
    const std::string id = "orphan" + std::to_string(i);
    const int64_t t = kStart + rng.Between(0, span);
    ev.push_back({Topic::kJudgments, t, id,
                  JudgmentsJson("request_id", id, t, {{1, 1}})});
  }
  for (int64_t i = rng.Between(0, 5); i > 0; --i) {
    const Topic topic = rng.Chance(0.5) ? Topic::kResults : Topic::kJudgments;
    ev.push_back({topic, kStart + rng.Between(0, span), "bad",
                  kMalformed[rng.Between(0, 4)]});
  }
  ProductionOrder(set.config.join.allowed_lateness.count(), &rng, &ev);
  return set;
}

// qrels mode: labels (updates, withdrawals, ties) all stamped before the
// first results event, so every list is scored against the final table.
EventSet GenerateQrels(uint64_t seed) {
  Rng rng(seed);
  EventSet set;
  set.config = BaseConfig(&rng);
  set.config.join.mode = config::JoinMode::kQrels;
  // 0 would score on arrival, before labels read later (documented).
  set.config.join.qrels_delay = std::chrono::milliseconds(rng.Between(1, 3000));
  std::vector<Event>& ev = set.events;
  const int64_t queries = rng.Between(3, 12);
  for (int64_t i = rng.Between(20, 120); i > 0; --i) {
    const std::string q = "q" + std::to_string(rng.Between(0, queries - 1));
    const int64_t t = kStart + rng.Between(0, 20);  // Many equal times.
    std::vector<std::pair<int64_t, int>> grades;
    for (int64_t g = rng.Between(1, 3); g > 0; --g) {
      grades.emplace_back(rng.Between(0, 9),
                          rng.Chance(0.15) ? -1 : rng.Between(0, 3));
    }
    ev.push_back(
        {Topic::kJudgments, t, q, JudgmentsJson("query_id", q, t, grades)});
  }
  const char* const variants[] = {"A", "B"};
  for (int64_t i = rng.Between(20, 150); i > 0; --i) {
    const std::string q = "q" + std::to_string(rng.Between(0, queries));
    const int64_t t = kStart + 1000 + rng.Between(0, 60'000);
    std::vector<int64_t> docs;
    for (int64_t d = rng.Between(1, 8); d > 0; --d) {
      const int64_t doc = rng.Between(0, 11);
      if (std::find(docs.begin(), docs.end(), doc) == docs.end()) {
        docs.push_back(doc);
      }
    }
    const std::string id = "r" + std::to_string(i);
    ev.push_back(
        {Topic::kResults, t, q,
         ResultsJson(id, variants[rng.Between(0, 1)], "", t, docs, q)});
  }
  ProductionOrder(set.config.join.allowed_lateness.count(), &rng, &ev);
  return set;
}

// What a run leaves, keyed by labels (group ids depend on arrival order).
struct SeriesSummary {
  int64_t count = 0;
  double sum = 0;
  std::vector<stream::WindowTotals> windows;
};
struct GroupSummary {
  int64_t requests = 0;
  int64_t without_relevant = 0;
  std::vector<SeriesSummary> series;
  stream::FirstClickHistogram first_click;
};
struct Outcome {
  std::map<std::string, GroupSummary> groups;
  // Per interleaving experiment: since start, then per window.
  std::vector<std::vector<metrics::InterleavingCounts>> interleaving;
  stream::JoinCounters join;
  stream::PipelineCounters pipeline;
  int64_t table_entries = 0;
};

Outcome Summarize(const Pipeline& p) {
  Outcome o;
  const stream::Aggregator& agg = p.aggregator();
  // Windows end at the newest closing time folded in: a function of the
  // events, unlike the watermark at the end of a run.
  const int64_t now = agg.newest_time_ms();
  for (size_t g = 0; g < agg.num_groups(); ++g) {
    const stream::GroupStats& gs = agg.group(g);
    std::string key = gs.variant;
    for (const std::string& v : gs.segment_values) key += "/" + v;
    GroupSummary& s = o.groups[key];
    s.requests = gs.requests;
    s.without_relevant = gs.without_relevant;
    s.first_click = gs.first_click;
    for (size_t i = 0; i < agg.series().size(); ++i) {
      SeriesSummary ss;
      ss.count = gs.all[i].count();
      ss.sum = gs.all[i].count() > 0
                   ? gs.all[i].mean() * static_cast<double>(gs.all[i].count())
                   : 0.0;
      for (int64_t w : agg.windows_ms()) {
        ss.windows.push_back(gs.windows.Sum(i, now, w));
      }
      s.series.push_back(ss);
    }
  }
  // Interleaving outcomes since start, and each window's ending at `now`.
  for (const stream::InterleavingState& st : p.interleaving().experiments()) {
    std::vector<metrics::InterleavingCounts> counts = {st.all};
    for (int64_t w : p.interleaving().windows_ms()) {
      counts.push_back(stream::InterleavingMonitor::WindowCounts(st, now, w));
    }
    o.interleaving.push_back(std::move(counts));
  }
  // A group whose requests were all duplicates or late has nothing in it.
  std::erase_if(o.groups,
                [](const auto& kv) { return kv.second.requests == 0; });
  o.join = p.join_counters();
  o.pipeline = p.counters();
  o.table_entries = p.table_entries();
  return o;
}

bool Close(double a, double b) {
  return std::fabs(a - b) <=
         1e-12 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// Compares two outcomes; returns "" when equal, else what differs.
std::string Diff(const Outcome& a, const Outcome& b) {
  std::string d;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok && d.size() < 2000) d += what + "; ";
  };
  check(a.groups.size() == b.groups.size(), "number of groups");
  for (const auto& [key, ga] : a.groups) {
    auto it = b.groups.find(key);
    if (it == b.groups.end()) {
      check(false, "group " + key + " missing");
      continue;
    }
    const GroupSummary& gb = it->second;
    check(ga.requests == gb.requests, key + " requests " +
                                          std::to_string(ga.requests) + " vs " +
                                          std::to_string(gb.requests));
    check(ga.without_relevant == gb.without_relevant,
          key + " without_relevant");
    check(ga.first_click.counts == gb.first_click.counts &&
              Close(ga.first_click.sum_seconds, gb.first_click.sum_seconds),
          key + " time to first click");
    for (size_t s = 0; s < ga.series.size(); ++s) {
      const SeriesSummary& x = ga.series[s];
      const SeriesSummary& y = gb.series[s];
      check(x.count == y.count,
            key + " series " + std::to_string(s) + " count");
      check(Close(x.sum, y.sum), key + " series " + std::to_string(s) +
                                     " sum " + std::to_string(x.sum) + " vs " +
                                     std::to_string(y.sum));
      for (size_t w = 0; w < x.windows.size(); ++w) {
        check(
            x.windows[w].count == y.windows[w].count &&
                Close(x.windows[w].sum, y.windows[w].sum) &&
                Close(x.windows[w].sum_of_squares, y.windows[w].sum_of_squares),
            key + " series " + std::to_string(s) + " window " +
                std::to_string(w));
      }
    }
  }
  const stream::JoinCounters& x = a.join;
  const stream::JoinCounters& y = b.join;
  check(x.finalized == y.finalized, "finalized " + std::to_string(x.finalized) +
                                        " vs " + std::to_string(y.finalized));
  check(x.duplicate_results == y.duplicate_results, "duplicate_results");
  check(x.orphaned_judgments == y.orphaned_judgments,
        "orphaned_judgments " + std::to_string(x.orphaned_judgments) + " vs " +
            std::to_string(y.orphaned_judgments));
  check(x.unjudged == y.unjudged, "unjudged");
  check(a.pipeline.consumed == b.pipeline.consumed, "consumed");
  check(a.pipeline.rejected == b.pipeline.rejected, "rejected");
  check(a.table_entries == b.table_entries, "table entries");
  check(a.interleaving.size() == b.interleaving.size(),
        "interleaving experiments");
  for (size_t e = 0; e < a.interleaving.size() && e < b.interleaving.size();
       ++e) {
    for (size_t w = 0; w < a.interleaving[e].size(); ++w) {
      const metrics::InterleavingCounts& x = a.interleaving[e][w];
      const metrics::InterleavingCounts& y = b.interleaving[e][w];
      check(x.impressions == y.impressions && x.wins == y.wins &&
                x.ties == y.ties && x.no_click == y.no_click,
            "interleaving window " + std::to_string(w) + ": " +
                std::to_string(x.wins[0]) + "/" + std::to_string(x.wins[1]) +
                "/" + std::to_string(x.ties) + " vs " +
                std::to_string(y.wins[0]) + "/" + std::to_string(y.wins[1]) +
                "/" + std::to_string(y.ties));
    }
  }
  return d;
}

// Delivers `set` through a pipeline as a consumer of `partitions`
// partitions per topic would: sources are (topic, partition) like the
// daemon's slots, each read in order, the sources interleaved at random
// paces, caught-up sources reported idle (and now and then one in the
// middle, as a consumer between fetches does).
Outcome DeliverInterleaved(const EventSet& set, int partitions, uint64_t seed) {
  Rng rng(seed);
  const int64_t last_ms = kStart + 3'600'000;
  FakeClock clock(last_ms);
  auto created = Pipeline::Create(set.config, &clock);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (!created.ok()) return {};
  Pipeline& p = **created;
  const int num_sources = 2 * partitions;
  std::vector<std::vector<const Event*>> sources(num_sources);
  for (const Event& e : set.events) {
    const int partition =
        static_cast<int>(std::hash<std::string>()(e.key) % partitions);
    sources[2 * partition + static_cast<int>(e.topic)].push_back(&e);
  }
  std::vector<size_t> next(num_sources, 0);
  std::vector<double> pace(num_sources);
  for (int s = 0; s < num_sources; ++s) {
    p.AddSource(s);
    pace[s] = 0.02 + rng.Uniform() * rng.Uniform();
  }
  std::vector<int64_t> offsets(num_sources, 0);
  for (;;) {
    double total = 0;
    for (int s = 0; s < num_sources; ++s) {
      if (next[s] < sources[s].size()) total += pace[s];
    }
    if (total == 0) break;
    double pick = rng.Uniform() * total;
    int s = 0;
    for (; s < num_sources; ++s) {
      if (next[s] >= sources[s].size()) continue;
      pick -= pace[s];
      if (pick <= 0) break;
    }
    if (s == num_sources) {  // Rounding: the last one with events.
      for (s = num_sources - 1; next[s] >= sources[s].size(); --s) {
      }
    }
    const Event& e = *sources[s][next[s]++];
    (void)p.OnPayload(e.topic, e.json, EventOrigin{s, offsets[s]++});
    if (next[s] == sources[s].size()) {
      p.SetSourceIdle(s, true);
    } else if (rng.Chance(0.01)) {
      p.SetSourceIdle(s, true);  // Caught up between fetches: still holds.
    }
    if (rng.Chance(0.05)) p.AdvanceWallClock();
  }
  // Everything read: the idle holds expire, then wall time closes every
  // window (as a daemon left running would), no FinishAll().
  clock.Advance(set.config.join.idle_timeout.count() + 1);
  p.AdvanceWallClock();
  EXPECT_EQ(p.pending_requests(), 0);
  return Summarize(p);
}

Outcome DeliverReplay(const EventSet& set, uint64_t seed) {
  // The files in yet another order: replay must not depend on it either.
  std::vector<const Event*> order;
  for (const Event& e : set.events) order.push_back(&e);
  Rng rng(seed);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng.Between(0, static_cast<int64_t>(i) - 1)]);
  }
  std::string results, judgments;
  for (const Event* e : order) {
    (e->topic == Topic::kResults ? results : judgments) += e->json + "\n";
  }
  testing::TempDir dir;
  stream::ReplayOptions options;
  options.results_path = dir.Write("results.jsonl", results);
  options.judgments_path = dir.Write("judgments.jsonl", judgments);
  FakeClock clock(kStart + 3'600'000);
  auto replayed = stream::RunReplay(set.config, options, &clock);
  EXPECT_TRUE(replayed.ok()) << replayed.status().ToString();
  if (!replayed.ok()) return {};
  return Summarize(*replayed->pipeline);
}

uint64_t FirstSeed(uint64_t fallback) {
  const char* env = std::getenv("RANKWATCH_PROPERTY_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fallback;
}

// Interleaved impressions and first clicks seen by the references of
// CheckOrderIndependence, so a test can tell the generator made them.
struct Coverage {
  int64_t interleaved = 0;
  int64_t decided = 0;
  int64_t first_clicks = 0;
};

// Runs `sets` event sets from `generate`, each in `interleavings` orders
// plus replay; returns the number of interleavings run.
int64_t CheckOrderIndependence(EventSet (*generate)(uint64_t), uint64_t base,
                               int sets, int interleavings,
                               Coverage* coverage = nullptr) {
  const bool pinned = std::getenv("RANKWATCH_PROPERTY_SEED") != nullptr;
  int64_t runs = 0;
  for (int i = 0; i < (pinned ? 1 : sets); ++i) {
    const uint64_t set_seed = FirstSeed(base + static_cast<uint64_t>(i));
    const EventSet set = generate(set_seed);
    const Outcome reference = DeliverReplay(set, set_seed * 31 + 7);
    if (coverage != nullptr) {
      for (const auto& counts : reference.interleaving) {
        coverage->interleaved += counts[0].impressions;
        coverage->decided += counts[0].decided();
      }
      for (const auto& [key, group] : reference.groups) {
        coverage->first_clicks += group.first_click.count;
      }
    }
    EXPECT_EQ(reference.join.late_judgments, 0) << "seed " << set_seed;
    EXPECT_EQ(reference.join.late_results, 0) << "seed " << set_seed;
    EXPECT_GT(reference.join.finalized + reference.join.unjudged, 0)
        << "seed " << set_seed;
    Rng rng(set_seed ^ 0x9e3779b97f4a7c15ULL);
    for (int k = 0; k < interleavings; ++k) {
      const int partitions = static_cast<int>(rng.Between(1, 12));
      const uint64_t order_seed = rng.Next();
      const Outcome got = DeliverInterleaved(set, partitions, order_seed);
      ++runs;
      const std::string diff = Diff(reference, got);
      EXPECT_EQ(diff, "") << "event set seed " << set_seed
                          << " (RANKWATCH_PROPERTY_SEED=" << set_seed
                          << "), order seed " << order_seed << ", "
                          << partitions << " partitions per topic";
      if (!diff.empty()) return runs;  // One report per failing set.
      EXPECT_EQ(got.join.late_judgments, 0);
      EXPECT_EQ(got.join.late_results, 0);
    }
  }
  return runs;
}

TEST(OrderIndependenceTest, ImpressionJoinGivesReplaysFiguresInAnyOrder) {
  Coverage coverage;
  const int64_t runs =
      CheckOrderIndependence(&GenerateImpression, 1000, 60, 8, &coverage);
  std::printf(
      "impression: %lld interleavings, each equal to replay; %lld "
      "interleaved impressions (%lld decided), %lld first clicks\n",
      static_cast<long long>(runs),
      static_cast<long long>(coverage.interleaved),
      static_cast<long long>(coverage.decided),
      static_cast<long long>(coverage.first_clicks));
  EXPECT_GT(coverage.decided, 100);
  EXPECT_GT(coverage.first_clicks, 100);
}

TEST(OrderIndependenceTest, QrelsJoinGivesReplaysFiguresInAnyOrder) {
  const int64_t runs = CheckOrderIndependence(&GenerateQrels, 5000, 30, 8);
  std::printf("qrels: %lld interleavings, each equal to replay\n",
              static_cast<long long>(runs));
}

}  // namespace
}  // namespace rankwatch
