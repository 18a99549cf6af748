#include "daemon/exporter/probe.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/exporter/exporter_test_util.h"
#include "daemon/exporter/families.h"
#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"

namespace rankwatch::exporter {
namespace {

using prometheus::MetricFamily;
using testing::HasLine;
using testing::JudgmentJson;
using testing::ResultsJson;

// Exports `*value` as the gauge `name` and counts its calls.
class FakeCollector : public Collector {
 public:
  FakeCollector(std::string name, const int* value, bool guarded, int* calls)
      : name_(std::move(name)),
        value_(value),
        guarded_(guarded),
        calls_(calls) {}
  bool guarded() const override { return guarded_; }
  void Collect(std::vector<MetricFamily>* out) const override {
    ++*calls_;
    MetricFamily f = MakeFamily(name_, "test", prometheus::MetricType::Gauge);
    AddGauge(&f, {}, *value_);
    out->push_back(std::move(f));
  }

 private:
  std::string name_;
  const int* value_;
  bool guarded_;
  int* calls_;
};

// Exports the snapshot's pending requests as the gauge `name`.
class FakeSnapshotCollector : public SnapshotCollector {
 public:
  FakeSnapshotCollector(std::string name, int* calls)
      : name_(std::move(name)), calls_(calls) {}
  void Collect(const stream::PipelineSnapshot& snapshot,
               std::vector<MetricFamily>* out) const override {
    ++*calls_;
    MetricFamily f = MakeFamily(name_, "test", prometheus::MetricType::Gauge);
    AddGauge(&f, {}, static_cast<double>(snapshot.pending_requests));
    out->push_back(std::move(f));
  }

 private:
  std::string name_;
  int* calls_;
};

// A scrape's two steps: the guarded collector reads its state in the
// first (under the daemon's lock), and a change after it does not show;
// the snapshot collector renders the snapshot it is given and the
// unguarded collector reads its state in the second; the families keep
// the order in which the collectors were added.
TEST(ProbeTest, GuardedStateIsReadUnderTheLockTheRestAfter) {
  int guarded_value = 1, live_value = 10;
  int guarded_calls = 0, snapshot_calls = 0, live_calls = 0;
  Probe probe;
  probe.Add(std::make_unique<FakeCollector>("a_guarded", &guarded_value, true,
                                            &guarded_calls));
  probe.Add(
      std::make_unique<FakeSnapshotCollector>("b_snapshot", &snapshot_calls));
  probe.Add(std::make_unique<FakeCollector>("c_live", &live_value, false,
                                            &live_calls));
  Probe::GuardedFamilies guarded = probe.CollectGuarded();
  EXPECT_EQ(guarded_calls, 1);
  EXPECT_EQ(snapshot_calls, 0);
  EXPECT_EQ(live_calls, 0);

  guarded_value = 2;  // After the lock was released.
  live_value = 20;
  stream::PipelineSnapshot snapshot;
  snapshot.pending_requests = 7;
  const std::vector<MetricFamily> families =
      probe.Render(snapshot, std::move(guarded));
  EXPECT_EQ(guarded_calls, 1);
  EXPECT_EQ(snapshot_calls, 1);
  EXPECT_EQ(live_calls, 1);
  std::vector<std::string> names;
  for (const MetricFamily& f : families) names.push_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"a_guarded", "b_snapshot", "c_live"}));
  const std::string text = SerializeText(families);
  EXPECT_TRUE(HasLine(text, "a_guarded 1")) << text;
  EXPECT_TRUE(HasLine(text, "b_snapshot 7")) << text;
  EXPECT_TRUE(HasLine(text, "c_live 20")) << text;
}

// A snapshot holds every figure and label it renders: the daemon's probe
// renders it the same after its pipeline is gone (the A/B comparisons and
// interleaving states point into the pipeline's configuration, which a
// reload replaces while a scrape renders; AddressSanitizer reports a read
// of it).
TEST(ProbeTest, RendersASnapshotAfterItsPipelineIsGone) {
  config::Config c;
  c.metrics.measures = {metrics::Measure::kPrecision};
  c.metrics.cutoffs = {1};
  c.events.min_timestamp_ms = 0;
  c.experiments = {{"ranker-v2", "A", {"B"}}};
  c.interleaving = {{"b_vs_a", "A-vs-B", {"A", "B"}}};
  FakeClock clock(1'700'000'000'000);
  auto p = stream::Pipeline::Create(c, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::unique_ptr<stream::Pipeline> pipeline = std::move(p).value();
  // One list per arm: A's doc relevant (P@1 = 1), B's not judged (0).
  pipeline->OnPayload(stream::Topic::kResults,
                      ResultsJson("a1", "A", 1000, {"a"}), {0, 0});
  pipeline->OnPayload(stream::Topic::kJudgments,
                      JudgmentJson("a1", "a", 1, 2000), {0, 1});
  pipeline->OnPayload(stream::Topic::kResults,
                      ResultsJson("b1", "B", 1000, {"a"}), {0, 2});
  pipeline->FinishAll();
  const stream::PipelineSnapshot snapshot = testing::Snapshot(*pipeline);
  const std::unique_ptr<Probe> probe = MakeDaemonProbe(nullptr, {"t", "", ""});
  // Without process_*, which change between two scrapes.
  const auto render = [&] {
    std::vector<MetricFamily> families = probe->Collect(snapshot);
    std::erase_if(families, [](const MetricFamily& f) {
      return f.name.starts_with("process_");
    });
    return SerializeText(families);
  };
  const std::string before = render();
  pipeline.reset();
  const std::string after = render();
  EXPECT_EQ(after, before);
  const std::string arm = "{experiment=\"ranker-v2\",variant=\"B\",baseline=";
  EXPECT_TRUE(
      HasLine(after, "rankwatch_ab_baseline_mean" + arm +
                         "\"A\",measure=\"precision\",k=\"1\",window=\"all\"}"
                         " 1"))
      << after;
  EXPECT_TRUE(
      HasLine(after, "rankwatch_ab_treatment_mean" + arm +
                         "\"A\",measure=\"precision\",k=\"1\",window=\"all\"}"
                         " 0"));
  EXPECT_TRUE(HasLine(after,
                      "rankwatch_interleaving_team_info{experiment=\"b_vs_a\","
                      "team=\"B\",position=\"1\"} 1"));
  EXPECT_TRUE(HasLine(after, "rankwatch_query_movers_tested" + arm +
                                 "\"A\",measure=\"precision\",k=\"1\"} 0"));
}

}  // namespace
}  // namespace rankwatch::exporter
