// Google Benchmark for a /metrics scrape, in the daemon's two steps
// (daemon/exporter/probe.h): under the daemon's mutex, the pipeline's
// snapshot and the guarded collectors' families (BM_Locked); without it,
// rendering the families from the snapshot (BM_Render), text serialization
// (BM_Serialize) and gzip (BM_Gzip); and the whole (BM_Scrape), for a
// pipeline with `variants` x `locales` label groups of 32 series each (all
// measures at cutoffs 1, 3, 5, 10; windows 5m and 1h).
//
//   variants=8,  locales=1:   256 series,  6,746 Prometheus samples
//   variants=10, locales=1:   320 series,  8,410 samples
//   variants=8,  locales=20: 5,120 series, 133,210 samples
// (2026-11-26; they grow with the families exported).
//
// BM_JudgesRender: issue 41's case, 8 judges grading 0-63 over 320 lists,
// whose judges' agreement was the larger part of a scrape.
//
// BM_Look: what a scrape may add under the lock besides the copy: one
// look of the A/B tests (Pipeline::RefreshLook, when lists were finalized
// since the last one), for `variants` x `locales` label groups and one
// experiment comparing variant0 with every other variant.
//
// The `samples` counter is the number of exposed sample lines.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/random.h"
#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/exporter/probe.h"
#include "daemon/http/gzip.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace {

using rankwatch::exporter::MakeDaemonProbe;
using rankwatch::exporter::Probe;
using rankwatch::exporter::SerializeText;
using rankwatch::stream::PipelineSnapshot;

// A fed pipeline and its probe.
struct Setup {
  explicit Setup(int variants, int locales) {
    auto p = rankwatch::stream::Pipeline::Create(
        rankwatch::exporter::testing::ScaleConfig(), &clock);
    if (!p.ok()) std::abort();
    pipeline = std::move(p).value();
    rankwatch::exporter::testing::FeedGroups(pipeline.get(), variants, locales);
    kafka.topics = {"results", "judgments"};
    probe = MakeDaemonProbe(&kafka, {"bench", "", "impression"});
  }

  // What the daemon's /metrics handler does; the lock is held for the
  // first two calls.
  std::vector<prometheus::MetricFamily> Collect() const {
    PipelineSnapshot snapshot;
    rankwatch::stream::TakeSnapshot(*pipeline, &snapshot);
    Probe::GuardedFamilies guarded = probe->CollectGuarded();
    return probe->Render(snapshot, std::move(guarded));
  }

  rankwatch::FakeClock clock{1'700'000'000'000};
  std::unique_ptr<rankwatch::stream::Pipeline> pipeline;
  rankwatch::kafka::IngestState kafka;
  std::unique_ptr<Probe> probe;
};

void SetCounters(benchmark::State& state, const Setup& setup) {
  const std::string text = SerializeText(setup.Collect());
  state.counters["samples"] =
      static_cast<double>(rankwatch::exporter::testing::CountSamples(text));
  state.counters["bytes"] = static_cast<double>(text.size());
}

// Under the lock: the snapshot (into a new one, as the daemon takes it;
// its construction and destruction, which the daemon does outside the
// lock, are counted too) and the guarded collectors (Kafka).
void BM_Locked(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  for (auto _ : state) {
    PipelineSnapshot snapshot;
    rankwatch::stream::TakeSnapshot(*setup.pipeline, &snapshot);
    Probe::GuardedFamilies guarded = setup.probe->CollectGuarded();
    benchmark::DoNotOptimize(snapshot);
    benchmark::DoNotOptimize(guarded);
  }
  SetCounters(state, setup);
}

// The snapshot alone, into one reused across scrapes (TakeSnapshot keeps
// its buffers): the copy without the allocations.
void BM_SnapshotReused(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  PipelineSnapshot snapshot;
  for (auto _ : state) {
    rankwatch::stream::TakeSnapshot(*setup.pipeline, &snapshot);
    benchmark::DoNotOptimize(snapshot);
  }
  SetCounters(state, setup);
}

// After the lock: every family, rendered from the snapshot.
void BM_Render(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  PipelineSnapshot snapshot;
  rankwatch::stream::TakeSnapshot(*setup.pipeline, &snapshot);
  const Probe::GuardedFamilies guarded = setup.probe->CollectGuarded();
  for (auto _ : state) {
    benchmark::DoNotOptimize(setup.probe->Render(snapshot, guarded));
  }
  SetCounters(state, setup);
}

void BM_Serialize(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  const auto families = setup.Collect();
  for (auto _ : state) benchmark::DoNotOptimize(SerializeText(families));
  SetCounters(state, setup);
}

void BM_Gzip(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  const std::string text = SerializeText(setup.Collect());
  for (auto _ : state) {
    auto compressed = rankwatch::http::GzipCompress(text);
    benchmark::DoNotOptimize(compressed);
  }
  SetCounters(state, setup);
}

// What GET /metrics with Accept-Encoding: gzip costs the daemon.
void BM_Scrape(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  for (auto _ : state) {
    auto compressed =
        rankwatch::http::GzipCompress(SerializeText(setup.Collect()));
    benchmark::DoNotOptimize(compressed);
  }
  SetCounters(state, setup);
}

// Issue 41's case: 8 judges grading 0-63 (every doc of every list, the
// second to eighth judge within 8 grades of the first, often further) over
// 320 lists of 10 docs in two variants, the default windows {5m, 1h}. The
// judges' agreement (Krippendorff's alpha with its jackknife, per pair of
// judges and window) is the larger part of its scrape.
struct JudgesSetup {
  JudgesSetup() {
    rankwatch::config::Config config;
    for (int j = 0; j < 8; ++j) {
      config.judges.names.push_back("judge" + std::to_string(j));
    }
    config.judges.default_judge = "judge0";
    auto p = rankwatch::stream::Pipeline::Create(config, &clock);
    if (!p.ok()) std::abort();
    pipeline = std::move(p).value();
    rankwatch::Xoshiro256 random(41);
    int64_t offset = 0;
    for (int list = 0; list < 320; ++list) {
      const std::string id = "r" + std::to_string(list);
      const int64_t t = 1'700'000'000'000 + list * 1000;
      std::vector<std::string> docs;
      for (int d = 0; d < 10; ++d) docs.push_back("d" + std::to_string(d));
      Feed(rankwatch::stream::Topic::kResults,
           rankwatch::exporter::testing::ResultsJson(
               id, list % 2 == 0 ? "A" : "B", t, docs),
           offset++);
      std::vector<int> first(docs.size());
      for (int& g : first) g = static_cast<int>(random.Below(64));
      for (int j = 0; j < 8; ++j) {
        std::string batch;
        for (size_t d = 0; d < docs.size(); ++d) {
          const int g =
              j == 0 || random.Uniform() < 0.2
                  ? (j == 0 ? first[d] : static_cast<int>(random.Below(64)))
                  : std::clamp(
                        first[d] + static_cast<int>(random.Between(-8, 8)), 0,
                        63);
          batch += std::string(batch.empty() ? "" : ",") + R"({"doc_id":")" +
                   docs[d] + R"(","relevance":)" + std::to_string(g) + "}";
        }
        Feed(rankwatch::stream::Topic::kJudgments,
             R"({"request_id":")" + id + R"(","judge":"judge)" +
                 std::to_string(j) + R"(","timestamp":)" +
                 std::to_string(t + 100) + R"(,"judgments":[)" + batch + "]}",
             offset++);
      }
    }
    pipeline->FinishAll();
    kafka.topics = {"results", "judgments"};
    probe = MakeDaemonProbe(&kafka, {"bench", "", "impression"});
  }

  void Feed(rankwatch::stream::Topic topic, const std::string& json,
            int64_t offset) {
    pipeline->OnPayload(topic, json, {0, offset});
  }

  rankwatch::FakeClock clock{1'700'000'400'000};
  std::unique_ptr<rankwatch::stream::Pipeline> pipeline;
  rankwatch::kafka::IngestState kafka;
  std::unique_ptr<Probe> probe;
};

// One /metrics render of issue 41's case: the snapshot and its figures,
// then the families, as the daemon's handler (without serialization and
// gzip, which BM_Scrape measures).
void BM_JudgesRender(benchmark::State& state) {
  JudgesSetup setup;
  for (auto _ : state) {
    PipelineSnapshot snapshot;
    rankwatch::stream::TakeSnapshot(*setup.pipeline, &snapshot);
    Probe::GuardedFamilies guarded = setup.probe->CollectGuarded();
    benchmark::DoNotOptimize(setup.probe->Render(snapshot, std::move(guarded)));
  }
  const std::string text = SerializeText(setup.probe->Collect(
      rankwatch::exporter::testing::Snapshot(*setup.pipeline)));
  state.counters["samples"] =
      static_cast<double>(rankwatch::exporter::testing::CountSamples(text));
}
BENCHMARK(BM_JudgesRender)->Unit(benchmark::kMillisecond);

// One look of the A/B tests over every comparison (as RefreshLook takes
// it, through FinishAll, whose join has nothing left to finish).
void BM_Look(benchmark::State& state) {
  const int variants = static_cast<int>(state.range(0));
  rankwatch::config::Config config =
      rankwatch::exporter::testing::ScaleConfig();
  rankwatch::config::ExperimentConfig experiment;
  experiment.name = "bench";
  experiment.baseline = "variant0";
  for (int v = 1; v < variants; ++v) {
    experiment.treatments.push_back("variant" + std::to_string(v));
  }
  config.experiments.push_back(experiment);
  rankwatch::FakeClock clock{1'700'000'000'000};
  auto p = rankwatch::stream::Pipeline::Create(config, &clock);
  if (!p.ok()) std::abort();
  std::unique_ptr<rankwatch::stream::Pipeline> pipeline = std::move(p).value();
  rankwatch::exporter::testing::FeedGroups(pipeline.get(), variants,
                                           static_cast<int>(state.range(1)));
  for (auto _ : state) pipeline->FinishAll();
}
BENCHMARK(BM_Look)->Args({10, 1})->Args({8, 20})->Args({20, 20});

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"variants", "locales"});
  b->Args({8, 1})->Args({10, 1})->Args({8, 20});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Locked)->Apply(Sizes);
BENCHMARK(BM_SnapshotReused)->Apply(Sizes);
BENCHMARK(BM_Render)->Apply(Sizes);
BENCHMARK(BM_Serialize)->Apply(Sizes);
BENCHMARK(BM_Gzip)->Apply(Sizes);
BENCHMARK(BM_Scrape)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
