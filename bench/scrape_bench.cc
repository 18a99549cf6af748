// Google Benchmark for a /metrics scrape: the probe's collection (what runs
// under the daemon's mutex), text serialization, gzip, and the three
// together, for a pipeline with `variants` x `locales` label groups of 32
// series each (all measures at cutoffs 1, 3, 5, 10; windows 5m and 1h).
//
//   variants=8,  locales=1:   256 series,  4,410 Prometheus samples
//   variants=10, locales=1:   320 series,  5,498 samples
//   variants=8,  locales=20: 5,120 series, 87,098 samples
//
// The `samples` counter is the number of exposed sample lines.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/metrics_handler.h"
#include "daemon/exporter/probe.h"
#include "daemon/http/gzip.h"

namespace {

using rankwatch::exporter::MakeDaemonProbe;
using rankwatch::exporter::Probe;
using rankwatch::exporter::SerializeText;

// A fed pipeline and its probe.
struct Setup {
  explicit Setup(int variants, int locales) {
    auto p = rankwatch::stream::Pipeline::Create(
        rankwatch::exporter::testing::ScaleConfig(), &clock);
    if (!p.ok()) std::abort();
    pipeline = std::move(p).value();
    rankwatch::exporter::testing::FeedGroups(pipeline.get(), variants, locales);
    kafka.topics = {"results", "judgments"};
    probe =
        MakeDaemonProbe(pipeline.get(), &kafka, {"bench", "", "impression"});
  }

  rankwatch::FakeClock clock{1'700'000'000'000};
  std::unique_ptr<rankwatch::stream::Pipeline> pipeline;
  rankwatch::kafka::IngestState kafka;
  std::unique_ptr<Probe> probe;
};

void SetCounters(benchmark::State& state, const Setup& setup) {
  const std::string text = SerializeText(setup.probe->Collect());
  state.counters["samples"] =
      static_cast<double>(rankwatch::exporter::testing::CountSamples(text));
  state.counters["bytes"] = static_cast<double>(text.size());
}

void BM_Collect(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(setup.probe->Collect());
  SetCounters(state, setup);
}

void BM_Serialize(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  const auto families = setup.probe->Collect();
  for (auto _ : state) benchmark::DoNotOptimize(SerializeText(families));
  SetCounters(state, setup);
}

void BM_Gzip(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)),
              static_cast<int>(state.range(1)));
  const std::string text = SerializeText(setup.probe->Collect());
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
        rankwatch::http::GzipCompress(SerializeText(setup.probe->Collect()));
    benchmark::DoNotOptimize(compressed);
  }
  SetCounters(state, setup);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"variants", "locales"});
  b->Args({8, 1})->Args({10, 1})->Args({8, 20});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Collect)->Apply(Sizes);
BENCHMARK(BM_Serialize)->Apply(Sizes);
BENCHMARK(BM_Gzip)->Apply(Sizes);
BENCHMARK(BM_Scrape)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
