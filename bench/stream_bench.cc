// Throughput of the streaming core on one core: raw JSON events through
// decode, join, scoring and aggregation (stream::Pipeline::OnPayload), for
// requests of 10 results and 3 judgments; the memory a pending request
// costs; a partition's checkpoint; and the time to score one long list.
// See bench/README.md for how to run it and the figures.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::stream {
namespace {

// Wall clock of the runs: well after every event time (events stamped
// ahead of it by more than events.max_future_skew would be rejected).
constexpr int64_t kClockMs = 1'800'000'000'000;

// A deterministic stream: request i served at i ms, 10 docs, 3 clicks at
// +200, +400, +600 ms on ranks (i % 10), (i * 3 % 10), (i * 7 % 10).
struct Stream {
  std::vector<std::string> events;  // Results and judgments interleaved.
  std::vector<Topic> topics;
};

// `query`: the request's query number (round-robin over 5,000 by default).
std::string ResultsJson(int64_t i, int64_t query) {
  std::string s = "{\"request_id\":\"req-" + std::to_string(i) +
                  "\",\"query_id\":\"q-" + std::to_string(query) +
                  "\",\"variant\":\"" + (i % 2 ? "B" : "A") +
                  "\",\"timestamp\":" + std::to_string(1'700'000'000'000 + i) +
                  ",\"results\":[";
  for (int d = 0; d < 10; ++d) {
    if (d > 0) s += ',';
    s += "{\"doc_id\":\"doc-" + std::to_string((i * 13 + d) % 100'000) +
         "\",\"score\":" + std::to_string(10 - d) + ".5}";
  }
  return s + "],\"segments\":{\"locale\":\"" + (i % 3 ? "en" : "de") + "\"}}";
}

std::string JudgmentJson(int64_t i, int rank, int64_t delay_ms, int grade) {
  return "{\"request_id\":\"req-" + std::to_string(i) + "\",\"doc_id\":\"doc-" +
         std::to_string((i * 13 + rank) % 100'000) +
         "\",\"relevance\":" + std::to_string(grade) +
         ",\"timestamp\":" + std::to_string(1'700'000'000'000 + i + delay_ms) +
         "}";
}

// `zipf`: queries drawn from a Zipf law (exponent 1.1 over 5,000 queries,
// a fixed seed), as search traffic is; else round-robin.
Stream MakeStream(int64_t requests, bool zipf = false) {
  Stream s;
  std::vector<double> cdf;
  double total = 0;
  for (int q = 0; q < 5000; ++q) {
    total += std::pow(q + 1, -1.1);
    cdf.push_back(total);
  }
  Xoshiro256 rng(42);
  for (int64_t i = 0; i < requests; ++i) {
    const int64_t query =
        zipf ? std::lower_bound(cdf.begin(), cdf.end(), rng.Uniform() * total) -
                   cdf.begin()
             : i % 5000;
    s.events.push_back(ResultsJson(i, query));
    s.topics.push_back(Topic::kResults);
    // Judgments of earlier requests interleave, as in a live stream.
    if (i >= 600) {
      const int64_t j = i - 600;
      s.events.push_back(JudgmentJson(j, static_cast<int>(j % 10), 600, 1));
      s.topics.push_back(Topic::kJudgments);
      s.events.push_back(JudgmentJson(j, static_cast<int>(j * 3 % 10), 600, 2));
      s.topics.push_back(Topic::kJudgments);
      s.events.push_back(JudgmentJson(j, static_cast<int>(j * 7 % 10), 600, 1));
      s.topics.push_back(Topic::kJudgments);
    }
  }
  return s;
}

config::Config BenchConfig() {
  config::Config c;
  c.join.window = std::chrono::seconds(1);  // 1000 requests pending.
  c.join.allowed_lateness = std::chrono::milliseconds(0);
  c.aggregation.segments = {"locale"};
  c.metrics.cutoffs = {1, 3, 5, 10};  // All 8 measures (the default).
  return c;
}

// Feeds `stream` through a pipeline of `config`, one event per iteration;
// at the stream's end starts over with a fresh pipeline, outside the
// timing. Returns the last pipeline (null if it could not be built), which
// reads `clock`.
std::unique_ptr<Pipeline> FeedPipeline(benchmark::State& state,
                                       const Stream& stream,
                                       const config::Config& config,
                                       FakeClock* clock) {
  auto pipeline = Pipeline::Create(config, clock);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.status().message().c_str());
    return nullptr;
  }
  size_t i = 0;
  int64_t offset = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize((*pipeline)->OnPayload(
        stream.topics[i], stream.events[i], EventOrigin{0, offset++}));
    if (++i == stream.events.size()) {
      state.PauseTiming();
      i = 0;
      pipeline = Pipeline::Create(config, clock);
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
  return std::move(pipeline).value();
}

void BM_PipelineEvents(benchmark::State& state) {
  static const Stream* stream = new Stream(MakeStream(200'000));
  FakeClock clock(kClockMs);
  const std::unique_ptr<Pipeline> pipeline =
      FeedPipeline(state, *stream, BenchConfig(), &clock);
  if (pipeline == nullptr) return;
  state.counters["finalized"] =
      static_cast<double>(pipeline->join_counters().finalized);
}
BENCHMARK(BM_PipelineEvents);

// The same stream in an A/B experiment (A against B), with the query movers
// tracking `state.range(0)` queries per variant (statistics.tracked_queries;
// 0: off). range(1) 0: the 5,000 queries come round-robin, so every counter
// changes hands all the time (Space-Saving's worst case); 1: they follow a
// Zipf law, as search traffic does, and mostly hit their counter.
void BM_PipelineEventsExperiment(benchmark::State& state) {
  static const Stream* round_robin = new Stream(MakeStream(200'000));
  static const Stream* zipf = new Stream(MakeStream(200'000, true));
  config::Config c = BenchConfig();
  c.experiments = {{"ab", "A", {"B"}}};
  c.statistics.tracked_queries = static_cast<int32_t>(state.range(0));
  FakeClock clock(kClockMs);
  const std::unique_ptr<Pipeline> pipeline = FeedPipeline(
      state, state.range(1) == 0 ? *round_robin : *zipf, c, &clock);
  if (pipeline == nullptr) return;
  state.counters["movers_bytes"] =
      static_cast<double>(pipeline->query_movers().bytes());
}
BENCHMARK(BM_PipelineEventsExperiment)
    ->Args({0, 0})
    ->Args({1000, 0})
    ->Args({0, 1})
    ->Args({1000, 1});

size_t HeapInUse() { return mallinfo2().uordblks; }

// Heap bytes per pending request: 1M requests of 10 results (ids like
// "req-123456", docs like "doc-12345") held in the join, none finalized.
void BM_PendingRequestMemory(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    config::Config c = BenchConfig();
    c.join.window = std::chrono::hours(24);
    c.join.max_pending_requests = n + 1;
    FakeClock clock(kClockMs);
    const size_t before = HeapInUse();
    auto pipeline = Pipeline::Create(c, &clock);
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      benchmark::DoNotOptimize((*pipeline)->OnPayload(
          Topic::kResults, ResultsJson(i, i % 5000), EventOrigin{0, i}));
    }
    state.PauseTiming();
    const size_t after = HeapInUse();
    state.counters["pending"] =
        static_cast<double>((*pipeline)->pending_requests());
    state.counters["bytes_per_pending"] =
        static_cast<double>(after - before) / static_cast<double>(n);
    pipeline->reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_PendingRequestMemory)
    ->Arg(1'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// One partition's state as checkpoints hold it (kafka.durable_state):
// range(0) == 0, what the stream of BM_PipelineEvents leaves after 200,000
// requests (its aggregates for 2 variants x 2 locales x 36 series, the
// windows' buckets, 1,000 requests pending); range(0) > 0, that many
// requests of 10 results pending (a day's join window) besides.
// The configuration of StateOfOnePartition(pending): a restore must read
// its record under the same one (the stream's own state, with pending 0,
// holds about a thousand pending requests under BenchConfig's bound).
config::Config StateConfig(int64_t pending) {
  config::Config c = BenchConfig();
  if (pending > 0) {
    c.join.window = std::chrono::hours(24);
    c.join.max_pending_requests = pending + 1;
  }
  return c;
}

std::unique_ptr<Pipeline> StateOfOnePartition(int64_t pending,
                                              const Clock* clock) {
  auto p = Pipeline::Create(StateConfig(pending), clock);
  if (!p.ok()) return nullptr;
  static const Stream* stream = new Stream(MakeStream(200'000));
  int64_t offset = 0;
  if (pending == 0) {
    for (size_t i = 0; i < stream->events.size(); ++i) {
      (void)(*p)->OnPayload(stream->topics[i], stream->events[i],
                            EventOrigin{0, offset++});
    }
  } else {
    for (int64_t i = 0; i < pending; ++i) {
      (void)(*p)->OnPayload(Topic::kResults, ResultsJson(i, i % 5000),
                            EventOrigin{0, offset++});
    }
  }
  return std::move(p).value();
}

// Bytes and time of encoding one partition's checkpoint.
void BM_CheckpointEncode(benchmark::State& state) {
  FakeClock clock(kClockMs);
  std::unique_ptr<Pipeline> p = StateOfOnePartition(state.range(0), &clock);
  std::string record;
  for (auto _ : state) {
    record.clear();
    p->EncodeShard(0, &record);
    benchmark::DoNotOptimize(record.data());
  }
  state.counters["bytes"] = static_cast<double>(record.size());
  state.counters["pending"] = static_cast<double>(p->pending_requests());
}
BENCHMARK(BM_CheckpointEncode)
    ->Arg(0)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond);

// Time of restoring it into a fresh pipeline (what a new owner does once
// it has read the record).
void BM_CheckpointRestore(benchmark::State& state) {
  FakeClock clock(kClockMs);
  std::string record;
  StateOfOnePartition(state.range(0), &clock)->EncodeShard(0, &record);
  const config::Config c = StateConfig(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    auto fresh = Pipeline::Create(c, &clock);
    state.ResumeTiming();
    const Status s = (*fresh)->DecodeShard(0, record);
    if (!s.ok()) {
      // Out of the loop at once: the timer may not be paused after an
      // error (google benchmark checks it and aborts).
      state.SkipWithError(s.message().c_str());
      break;
    }
    state.PauseTiming();
    fresh->reset();
    state.ResumeTiming();
  }
  state.counters["bytes"] = static_cast<double>(record.size());
}
BENCHMARK(BM_CheckpointRestore)
    ->Arg(0)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond);

// Time of scoring one request of n docs and m judged docs (issue 40: the
// join looked each judged doc up by scanning the list, O(n m); a hash
// index makes it O(n + m)). The events are fed untimed; FinishAll, which
// finalizes the request, is timed.
void BM_FinalizeLongList(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int64_t m = state.range(1);
  FakeClock clock(kClockMs);
  config::Config c = BenchConfig();
  c.events.max_results = static_cast<int32_t>(n);
  c.events.max_judgments = static_cast<int32_t>(m);
  c.events.max_event_bytes = 64 << 20;
  c.join.max_judgments_per_request = static_cast<int32_t>(m);
  std::string results =
      "{\"request_id\":\"r\",\"variant\":\"A\",\"timestamp\":" +
      std::to_string(1'700'000'000'000) + ",\"results\":[";
  for (int64_t d = 0; d < n; ++d) {
    results += (d > 0 ? ",\"doc-" : "\"doc-") + std::to_string(d) + "\"";
  }
  results += "]}";
  // Every (n / m)-th doc judged, from the end of the list.
  std::string judgments = "{\"request_id\":\"r\",\"timestamp\":" +
                          std::to_string(1'700'000'000'100) +
                          ",\"judgments\":[";
  for (int64_t j = 0; j < m; ++j) {
    judgments += std::string(j > 0 ? "," : "") + "{\"doc_id\":\"doc-" +
                 std::to_string(n - 1 - j * (n / m)) + "\",\"relevance\":1}";
  }
  judgments += "]}";
  for (auto _ : state) {
    state.PauseTiming();
    auto p = Pipeline::Create(c, &clock);
    (*p)->OnPayload(Topic::kResults, results, EventOrigin{0, 0});
    (*p)->OnPayload(Topic::kJudgments, judgments, EventOrigin{1, 1});
    state.ResumeTiming();
    (*p)->FinishAll();
    state.PauseTiming();
    if ((*p)->counters().scored != 1) state.SkipWithError("not scored");
    p->reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_FinalizeLongList)
    ->Args({1'000, 60})
    ->Args({100'000, 6'000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rankwatch::stream

BENCHMARK_MAIN();
