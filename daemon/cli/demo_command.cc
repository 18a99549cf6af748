#include "daemon/cli/demo_command.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/exit_code.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/run_command.h"
#include "daemon/cli/signals.h"
#include "daemon/server/daemon.h"
#include "daemon/sim/mock_cluster.h"
#include "daemon/sim/synthetic.h"
#include "daemon/sim/synthetic_producer.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kCommand = "demo";
constexpr int kPartitions = 4;

struct DemoArgs {
  std::string listen = "127.0.0.1:9464";
  double rate = 100;
  std::string regress_variant;
  std::string regress_after = "2m";
  double regress_factor = 3.0;
  std::string duration;
};

// The daemon's configuration for the demo: short windows so that numbers
// show up within a minute, an A/B experiment, and a locale segment.
std::string DemoConfig(const std::string& bootstrap,
                       const std::string& listen) {
  return R"(
kafka:
  bootstrap_servers: ")" +
         bootstrap + R"("
  group_id: rankwatch-demo
  commit_interval: 2s
  properties:
    session.timeout.ms: "6000"
schema:
  unit: user_id
join:
  mode: impression
  window: 30s
  allowed_lateness: 2s
  idle_timeout: 10s
metrics:
  cutoffs: [1, 3, 5, 10]
aggregation:
  windows: [1m, 5m]
  bucket: 5s
  segments: [locale]
experiments:
  - name: ranker-v2
    baseline: A
    treatments: [B]
    primary: [ndcg@10, precision@5]
http:
  listen: ")" +
         listen + R"("
)";
}

sim::SyntheticConfig TrafficConfig(const DemoArgs& args) {
  sim::SyntheticConfig c;
  c.seed = static_cast<uint64_t>(SystemClock::Get()->NowMillis());
  // Users randomized to A or B, some of them far more active than others:
  // the A/B figures are clustered by user_id.
  c.num_users = 20'000;
  // Clicks within seconds, purchases within the 30 s join window.
  c.click_delay_mean_ms = 2000;
  c.purchase_delay_mean_ms = 8000;
  c.max_delay_ms = 25'000;
  c.regress_variant = args.regress_variant;
  if (auto d = config::ParseDuration(args.regress_after)) {
    c.regress_after_ms = d->count();
  }
  c.regress_factor = args.regress_factor;
  return c;
}

void PrintGuide(int port, const DemoArgs& args) {
  std::printf(
      "\nrankwatch demo: a Kafka mock cluster, synthetic A/B traffic (%g "
      "requests/s, B slightly better%s) and the daemon on them.\n\n"
      "Metrics:   http://127.0.0.1:%d/metrics   (first numbers after ~35 s: "
      "the 30 s join window must close)\n"
      "Try:\n"
      "  curl -s localhost:%d/metrics | grep 'rankwatch_ndcg_mean{.*k=\"10\"'\n"
      "  curl -s localhost:%d/metrics | grep -E 'rankwatch_ab_(verdict|srm)'\n"
      "  curl -s localhost:%d/metrics | grep -E 'events_(consumed|rejected)'\n"
      "  curl -s localhost:%d/readyz\n\n"
      "Ctrl-C stops.\n\n",
      args.rate,
      args.regress_variant.empty() ? ""
                                   : (", " + args.regress_variant +
                                      " regresses after " + args.regress_after)
                                         .c_str(),
      port, port, port, port, port);
  std::fflush(stdout);
}

int RunDemo(const DemoArgs& args) {
  static std::atomic<bool> stop{false};
  InstallStopHandlers(&stop);

  // The cluster and its topics are the demo's input, not the user's flags.
  auto cluster = sim::MockCluster::Start(3);
  if (!cluster.ok()) {
    return Fail(kCommand, cluster.status(), ErrorSource::kInput);
  }
  for (const char* topic : {"results", "judgments"}) {
    Status s = (*cluster)->CreateTopic(topic, kPartitions);
    if (!s.ok()) return Fail(kCommand, s, ErrorSource::kInput);
  }
  StatusOr<config::Config> config = config::ParseConfig(
      DemoConfig((*cluster)->bootstrap_servers(), args.listen), "<demo>");
  if (!config.ok()) return Fail(kCommand, config.status(), ErrorSource::kUsage);
  SetLogLevel("warn");
  // A busy --listen port is Unavailable: exit 1, not the usage code.
  auto daemon = server::Daemon::Create(*config);
  if (!daemon.ok()) return Fail(kCommand, daemon.status(), ErrorSource::kUsage);

  auto traffic = sim::SyntheticTraffic::Create(TrafficConfig(args));
  if (!traffic.ok()) {
    return Fail(kCommand, traffic.status(), ErrorSource::kUsage);
  }
  sim::ProduceOptions produce;
  produce.bootstrap_servers = (*cluster)->bootstrap_servers();
  produce.rate = args.rate;
  if (auto d = config::ParseDuration(args.duration); d && d->count() > 0) {
    produce.duration_ms = d->count();
  }
  auto producer =
      sim::SyntheticProducer::Create(produce, std::move(traffic).value());
  if (!producer.ok()) {
    return Fail(kCommand, producer.status(), ErrorSource::kUsage);
  }
  std::thread generator([&] {
    auto stats = (*producer)->Run(&stop);
    if (!stats.ok()) spdlog::error("generator: {}", stats.status().message());
    // With a --duration, the demo ends a join window after the traffic.
    if (produce.duration_ms > 0 && !stop.load()) {
      std::this_thread::sleep_for(std::chrono::seconds(35));
      stop.store(true);
    }
  });
  PrintGuide((*daemon)->http_port(), args);
  StartShutdownWatchdog(&stop, std::chrono::milliseconds(9000));
  const Status s = (*daemon)->Run(stop);
  stop.store(true);
  generator.join();
  if (!s.ok()) return Fail(kCommand, s, ErrorSource::kInput);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Run a Kafka mock cluster, synthetic A/B traffic and the daemon, and "
      "serve the metrics");
  cmd->add_option("--listen", args->listen, "HTTP address host:port")
      ->capture_default_str();
  cmd->add_option("--rate", args->rate, "Requests per second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--regress-variant", args->regress_variant,
                  "Inject a ranking regression into this variant (e.g. B)");
  cmd->add_option("--regress-after", args->regress_after,
                  "...after this much traffic (a duration like 90s, 2m)")
      ->capture_default_str();
  cmd->add_option("--regress-factor", args->regress_factor,
                  "How much noisier the regressed ranker gets")
      ->capture_default_str();
  cmd->add_option("--duration", args->duration,
                  "Stop after this much traffic (default: until Ctrl-C)");
  cmd->callback([args, exit_code] { *exit_code = RunDemo(*args); });
}

}  // namespace rankwatch::cli
