#include "daemon/cli/demo_command.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/exit_code.h"
#include "base/strings.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/demo_prometheus.h"
#include "daemon/cli/demo_snapshot.h"
#include "daemon/cli/demo_story.h"
#include "daemon/cli/run_command.h"
#include "daemon/cli/signals.h"
#include "daemon/exporter/families.h"
#include "daemon/server/daemon.h"
#include "daemon/sim/mock_cluster.h"
#include "daemon/sim/synthetic.h"
#include "daemon/sim/synthetic_producer.h"
#include "daemon/stream/pipeline/snapshot.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kDemoCommand = "demo";
constexpr int kPartitions = 4;

struct DemoArgs {
  std::string listen = "127.0.0.1:9464";
  double rate = 100;
  std::string regress_variant;
  std::string regress_after = "2m";
  double regress_factor = 3.0;
  std::string duration;
  std::string bootstrap;         // An existing cluster instead of the mock.
  std::string interleave;        // A challenger variant to interleave with A.
  std::string multileave;        // Variants to multileave: "A,B,C".
  bool prometheus = false;       // Also run Prometheus with the rules.
  std::string prometheus_rules;  // Their folder (default: found).
};

// With --duration: how long the demo runs on after its last request, so
// that the last requests' join window closes: their judgments come up to
// 25 s later (max_delay_ms), then idle_timeout (10 s) lets event time move
// on to close the 30 s window plus 2 s of lateness; a few seconds more for
// the story's last look. Counted from the last request, not from the last
// judgment (which made --duration 20s run 80 s).
constexpr std::chrono::seconds kDrainAfterTraffic(40);

// How often the terminal story takes the daemon's snapshot, and prints its
// table.
constexpr auto kStoryLookInterval = std::chrono::seconds(2);
constexpr int kStoryLooksPerTable = 5;

constexpr char kTopics[2][10] = {"results", "judgments"};

// With --interleave: the interleaving experiment on the interleaved
// traffic (named like its variant), and the click measures beside the
// relevance ones (the demo's judgments are clicks and purchases).
std::string InterleavingConfig(const sim::SyntheticTraffic& traffic) {
  if (traffic.interleaved_variant().empty()) return "";
  const sim::SyntheticConfig& c = traffic.config();
  const std::vector<std::string> teams =
      c.multileave.empty()
          ? std::vector<std::string>{c.variants[0].name, c.interleave}
          : c.multileave;
  std::string list;
  for (const std::string& team : teams) {
    list += (list.empty() ? "\"" : ", \"") + team + "\"";
  }
  return "interleaving:\n  - name: \"" + traffic.interleaved_variant() +
         "\"\n    variant: \"" + traffic.interleaved_variant() +
         "\"\n    teams: [" + list + "]\n";
}

// The field of results events holding the demo's pre-exposure covariate.
constexpr std::string_view kDemoCovariate = "pre_exposure.clicks";
// The field holding each served list's latency (ms), a guardrail.
constexpr std::string_view kDemoLatency = "timing.latency_ms";

constexpr std::string_view kClickMeasures = R"(
  measures: [precision, recall, reciprocal_rank, average_precision, ndcg,
             success, r_precision, judged, ctr, clicks, abandonment,
             first_click_rank, recip_rank_first_click])";

// The daemon's configuration for the demo: short windows so that numbers
// show up within a minute, an A/B experiment, and a locale segment.
std::string DemoConfig(const std::string& bootstrap, const std::string& listen,
                       const sim::SyntheticTraffic& traffic) {
  const std::string interleaving = InterleavingConfig(traffic);
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
  covariate: )" +
         std::string(kDemoCovariate) + R"(
  # Compared as a series of its own (latency_ms), a guardrail below.
  fields:
    - {name: latency_ms, path: )" +
         std::string(kDemoLatency) + R"(, better: lower, mixture_sd: 5}
join:
  mode: impression
  window: 30s
  allowed_lateness: 2s
  idle_timeout: 10s
metrics:
  cutoffs: [1, 3, 5, 10])" +
         std::string(interleaving.empty() ? "" : kClickMeasures) + R"(
aggregation:
  windows: [1m, 5m]
  bucket: 5s
  segments: [locale]
experiments:
  - name: ranker-v2
    baseline: A
    treatments: [B]
    primary: [ndcg@10, precision@5]
    # Not to get worse by more than the margin: the decision ships B only
    # when they hold (docs/statistics.md, "Decisions").
    guardrails:
      - {series: success@10, relative_margin: 0.02}
      - {series: judged@10, margin: 0.05}
      - {series: latency_ms, relative_margin: 0.05}
    # The minimum evidence before a call, scaled to a demo that runs for
    # minutes (the defaults, 100 lists per arm and 1h, suit real traffic).
    min_lists: 100
    min_duration: 15s
statistics:
  # The top movers in /metrics (the alert RankwatchQueriesMoved names
  # them) and on the terminal: the story names the queries behind a
  # verdict among the same ones.
  export_query_movers: 10
http:
  listen: ")" +
         listen + R"("
)" + interleaving;
}

// The noise of the rankers --multileave adds beyond A (1.0) and B (0.85),
// in order: lower ranks better.
constexpr std::array<double, 6> kExtraRankerSigma = {0.7, 1.2, 0.95,
                                                     1.5, 0.8, 1.1};

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
  if (auto d = ParseDuration(args.regress_after)) {
    c.regress_after_ms = d->count();
  }
  c.regress_factor = args.regress_factor;
  // A CUPAC-style covariate (a prediction of how much the user clicks,
  // which the variant cannot move): the daemon's comparisons are also
  // regression-adjusted by it (schema.covariate below).
  c.covariate = std::string(kDemoCovariate);
  // Latencies around 80 ms; a regressed ranker is also 30% slower, which
  // the latency guardrail catches.
  c.latency = std::string(kDemoLatency);
  c.regress_latency_factor = 1.3;
  c.interleave = args.interleave;
  // --multileave: rankers beyond A and B are synthetic ones of known
  // quality (kExtraRankerSigma, C the best), served only merged: their
  // weight is negligible, so the A/B traffic keeps its split.
  if (!args.multileave.empty()) {
    for (std::string_view name : SplitOn(args.multileave, ',')) {
      c.multileave.emplace_back(name);
      const bool known = std::any_of(
          c.variants.begin(), c.variants.end(),
          [&](const sim::VariantSpec& v) { return v.name == name; });
      const size_t extra = c.variants.size() - 2;
      if (known || name.empty() || extra >= kExtraRankerSigma.size()) continue;
      c.variants.push_back({std::string(name), kExtraRankerSigma[extra], 1e-9});
    }
  }
  return c;
}

void PrintGuide(int port, const DemoArgs& args, const std::string& bootstrap,
                bool mock, const DemoPrometheus* prometheus) {
  std::printf(
      "\nrankwatch demo: %s, synthetic A/B traffic (%g "
      "requests/s, B slightly better%s) and the daemon on them.\n\n"
      "Status:    http://127.0.0.1:%d/   (the live status page)\n"
      "Metrics:   http://127.0.0.1:%d/metrics   (first numbers after ~35 s: "
      "the 30 s join window must close)\n"
      "Try:\n"
      "  curl -s localhost:%d/metrics | grep 'rankwatch_ndcg_mean{.*k=\"10\"'\n"
      "  curl -s localhost:%d/metrics | grep -E 'rankwatch_ab_(verdict|srm)'\n"
      "  curl -s localhost:%d/metrics | grep -E 'events_(consumed|rejected)'\n"
      "  curl -s localhost:%d/readyz\n"
      "%s%s\n"
      "Every 10 s a summary follows here, and a line whenever something "
      "changes (a verdict, the sample ratio, the event flow).\n"
      "%s\n\n",
      mock ? "a Kafka mock cluster"
           : ("the Kafka cluster at " + bootstrap +
              " (topics results, judgments; group rankwatch-demo)")
                 .c_str(),
      args.rate,
      args.regress_variant.empty() ? ""
                                   : (", " + args.regress_variant +
                                      " regresses after " + args.regress_after)
                                         .c_str(),
      port, port, port, port, port, port,
      args.interleave.empty() && args.multileave.empty()
          ? ""
          : ("  curl -s localhost:" + std::to_string(port) +
             "/metrics | grep -E 'rankwatch_interleaving_(wins_total|"
             "preference|verdict|pair_verdict|rank)'\n")
                .c_str(),
      prometheus == nullptr
          ? ""
          : ("\nPrometheus: " + prometheus->url() +
             " (the shipped rules and alerts; alerts: " + prometheus->url() +
             "alerts, rules: " + prometheus->url() + "rules)\n")
                .c_str(),
      args.duration.empty()
          ? "Ctrl-C stops, with a final summary."
          : ("It stops " + std::to_string(kDrainAfterTraffic.count()) +
             " s after " + args.duration +
             " of traffic (the last join window must close), with a final "
             "summary; Ctrl-C stops sooner.")
                .c_str());
  std::fflush(stdout);
}

// Creates the demo's topics on an existing cluster (kPartitions each,
// replication 1 unless the broker's default.replication.factor says
// otherwise) through the Admin API; topics that already exist are used as
// they are. Before the daemon starts: a consumer that subscribed to a
// missing topic sees it only at its next metadata refresh (5 minutes).
Status CreateDemoTopics(const std::string& bootstrap) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr,
                        sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("--bootstrap: ") + errstr);
  }
  rd_kafka_t* rk =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) return Status::InvalidArgument(errstr);
  std::vector<rd_kafka_NewTopic_t*> topics;
  for (const char* name : kTopics) {
    // -1: the broker's default.replication.factor.
    topics.push_back(
        rd_kafka_NewTopic_new(name, kPartitions, -1, errstr, sizeof(errstr)));
  }
  rd_kafka_AdminOptions_t* options =
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(options, 15'000, errstr,
                                            sizeof(errstr));
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, topics.data(), topics.size(), options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 20'000);
  Status status;
  if (event == nullptr) {
    status = Status::Unavailable("creating the demo's topics on " + bootstrap +
                                 ": no answer within 20 s");
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = Status::Unavailable("creating the demo's topics on " + bootstrap +
                                 ": " + rd_kafka_event_error_string(event));
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(
            rd_kafka_event_CreateTopics_result(event), &n);
    for (size_t i = 0; i < n && status.ok(); ++i) {
      const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR &&
          err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status = Status::Unavailable(std::string("creating topic ") +
                                     rd_kafka_topic_result_name(results[i]) +
                                     " on " + bootstrap + ": " +
                                     rd_kafka_err2str(err));
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy_array(topics.data(), topics.size());
  rd_kafka_destroy(rk);
  return status;
}

// The story's headline series: the experiment's primary ones, and the
// click-through rate when the demo interleaves (clicks are its signal).
std::vector<Headline> Headlines(const config::Config& config) {
  std::vector<Headline> out;
  for (const config::ExperimentConfig& e : config.experiments) {
    for (const config::SeriesRef& ref : e.primary) {
      Headline h{exporter::MeasureLabel(ref),
                 exporter::CutoffLabel(ref.cutoff)};
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    }
  }
  if (!config.interleaving.empty()) out.push_back({"ctr", "10"});
  return out;
}

// Sleeps until `deadline`, waking every 100 ms to hear `stop`. True when
// the deadline came, false when stopped first.
bool WaitUntil(std::chrono::steady_clock::time_point deadline,
               const std::atomic<bool>& stop) {
  while (!stop.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !stop.load();
}

// What the story saw last: the final summary prints it.
struct LastLook {
  std::optional<DemoSnapshot> snapshot;
  int64_t at_ms = 0;  // Since the story started.
};

// Takes the daemon's snapshot every kStoryLookInterval until `stop`,
// printing what changed at once and the table every kStoryLooksPerTable
// looks. Returns its last look; `story_out` keeps the story (for the final
// table).
LastLook TellStory(server::Daemon* daemon,
                   const std::vector<Headline>& headlines,
                   const std::atomic<bool>& stop, DemoStory* story_out) {
  const auto start = std::chrono::steady_clock::now();
  DemoStory& story = *story_out;
  LastLook last;
  for (int look = 1; !stop.load(); ++look) {
    if (!WaitUntil(start + look * kStoryLookInterval, stop)) break;
    // Shared with /metrics and the page when they read the same state.
    const stream::SnapshotCache::Snapshot pipeline = daemon->Snapshot();
    DemoSnapshot snapshot = DemoSnapshotOf(*pipeline, headlines);
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start)
            .count();
    for (const std::string& line : story.Observe(snapshot, now_ms)) {
      std::printf("[%3llds] %s\n", static_cast<long long>(now_ms / 1000),
                  line.c_str());
    }
    if (look % kStoryLooksPerTable == 0) {
      std::printf("\n%s\n", story.Table(snapshot, now_ms).c_str());
    }
    std::fflush(stdout);
    last.snapshot = std::move(snapshot);
    last.at_ms = now_ms;
  }
  return last;
}

// The demo's last words: how long it ran and why it stopped, then the
// table of its last look (a demo that ends silently looks like a crash).
void PrintFinalSummary(const LastLook& last, DemoStory* story, bool by_duration,
                       std::string_view duration) {
  std::printf("\nrankwatch demo: stopped after %lld s (%s).\n",
              static_cast<long long>(last.at_ms / 1000),
              by_duration ? ("--duration " + std::string(duration) +
                             " of traffic, then one join window")
                                .c_str()
                          : "stop requested");
  if (last.snapshot.has_value()) {
    std::printf("Final figures (last look, %lld s):\n\n%s\n",
                static_cast<long long>(last.at_ms / 1000),
                story->Table(*last.snapshot, last.at_ms).c_str());
  } else {
    std::printf("No figures were read from the daemon.\n");
  }
  std::fflush(stdout);
}

// The generator thread: the traffic, then, with a --duration, a join
// window (and a look of the story) after the last request, so that the
// last requests count; then it stops the demo. `ended_by_duration` tells
// the final summary why the demo stopped.
void ProduceThenDrain(sim::SyntheticProducer* producer, int64_t duration_ms,
                      std::atomic<bool>* stop,
                      std::atomic<bool>* ended_by_duration) {
  const auto traffic_start = std::chrono::steady_clock::now();
  auto stats = producer->Run(stop);
  if (!stats.ok()) spdlog::error("generator: {}", stats.status().message());
  if (duration_ms <= 0 || stop->load()) return;
  const auto now = std::chrono::steady_clock::now();
  const auto until =
      std::max(traffic_start + std::chrono::milliseconds(duration_ms) +
                   kDrainAfterTraffic,
               now + std::chrono::seconds(3));
  std::printf(
      "[traffic done: the last join window closes in %lld s]\n",
      static_cast<long long>(
          std::chrono::ceil<std::chrono::seconds>(until - now).count()));
  std::fflush(stdout);
  ended_by_duration->store(WaitUntil(until, *stop));
  stop->store(true);
}

int RunDemo(const DemoArgs& args) {
  // First, so that a bad --interleave or --regress-variant is a usage error
  // before anything starts.
  auto traffic = sim::SyntheticTraffic::Create(TrafficConfig(args));
  if (!traffic.ok()) {
    return Fail(kDemoCommand, traffic.status(), ErrorSource::kUsage);
  }
  // Before anything starts too: --prometheus without its rules.
  StatusOr<std::string> rules_dir = std::string();
  if (args.prometheus) {
    rules_dir = FindPrometheusRulesDir(args.prometheus_rules);
    if (!rules_dir.ok()) {
      return Fail(kDemoCommand, rules_dir.status(), ErrorSource::kUsage);
    }
  }
  static std::atomic<bool> stop{false};
  InstallStopHandlers(&stop);

  // The cluster and its topics are the demo's input, not the user's flags.
  std::unique_ptr<sim::MockCluster> cluster;
  std::string bootstrap = args.bootstrap;
  if (bootstrap.empty()) {
    auto mock = sim::MockCluster::Start(3);
    if (!mock.ok())
      return Fail(kDemoCommand, mock.status(), ErrorSource::kInput);
    cluster = std::move(mock).value();
    for (const char* topic : kTopics) {
      Status s = cluster->CreateTopic(topic, kPartitions);
      if (!s.ok()) return Fail(kDemoCommand, s, ErrorSource::kInput);
    }
    bootstrap = cluster->bootstrap_servers();
  } else if (Status s = CreateDemoTopics(bootstrap); !s.ok()) {
    return Fail(kDemoCommand, s, ErrorSource::kInput);
  }
  StatusOr<config::Config> config = config::ParseConfig(
      DemoConfig(bootstrap, args.listen, *traffic), "<demo>");
  if (!config.ok())
    return Fail(kDemoCommand, config.status(), ErrorSource::kUsage);
  SetLogLevel("warn");
  // A busy --listen port is Unavailable: exit 1, not the usage code.
  auto daemon = server::Daemon::Create(*config);
  if (!daemon.ok())
    return Fail(kDemoCommand, daemon.status(), ErrorSource::kUsage);

  sim::ProduceOptions produce;
  produce.bootstrap_servers = bootstrap;
  produce.rate = args.rate;
  if (auto d = ParseDuration(args.duration); d && d->count() > 0) {
    produce.duration_ms = d->count();
  }
  auto producer =
      sim::SyntheticProducer::Create(produce, std::move(traffic).value());
  if (!producer.ok()) {
    return Fail(kDemoCommand, producer.status(), ErrorSource::kUsage);
  }
  std::atomic<bool> ended_by_duration{false};
  std::thread generator([&] {
    ProduceThenDrain(producer->get(), produce.duration_ms, &stop,
                     &ended_by_duration);
  });
  std::unique_ptr<DemoPrometheus> prometheus;
  if (args.prometheus) {
    auto started = DemoPrometheus::Start((*daemon)->http_port(), *rules_dir);
    if (!started.ok()) {
      stop.store(true);
      generator.join();
      return Fail(kDemoCommand, started.status(), ErrorSource::kInput);
    }
    prometheus = std::move(started).value();
  }
  PrintGuide((*daemon)->http_port(), args, bootstrap, cluster != nullptr,
             prometheus.get());
  DemoStory story_state;
  LastLook last;
  std::thread story([&] {
    last = TellStory(daemon->get(), Headlines(*config), stop, &story_state);
  });
  StartShutdownWatchdog(&stop, std::chrono::milliseconds(9000));
  const Status s = (*daemon)->Run(stop);
  stop.store(true);
  story.join();
  generator.join();
  prometheus.reset();
  if (!s.ok()) return Fail(kDemoCommand, s, ErrorSource::kInput);
  PrintFinalSummary(last, &story_state, ended_by_duration.load(),
                    args.duration);
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Run a Kafka mock cluster (or use --bootstrap's), synthetic A/B "
      "traffic and the daemon, and serve the metrics");
  cmd->add_option("--bootstrap", args->bootstrap,
                  "host:port of an existing Kafka cluster to use instead of "
                  "the embedded mock; its topics results and judgments are "
                  "created (4 partitions) when missing");
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
  cmd->add_option("--interleave", args->interleave,
                  "Also serve interleaved traffic: half the requests merge A's "
                  "and this variant's (B's) rankings by team draft, as "
                  "variant A-vs-B, watched by an interleaving experiment");
  cmd->add_option("--multileave", args->multileave,
                  "Also serve multileaved traffic: half the requests merge "
                  "these rankers' lists (e.g. A,B,C; 2 to 8, the incumbent "
                  "first) by team-draft multileaving, as variant A-vs-B-vs-C. "
                  "Names other than A and B are synthetic rankers of known "
                  "quality (noise 0.7, 1.2, 0.95, 1.5, 0.8, 1.1 in order; A "
                  "1.0, B 0.85): C,A,B ranks best first");
  cmd->add_flag("--prometheus", args->prometheus,
                "Also run Prometheus (the `prometheus` on PATH) on a free "
                "port, scraping the demo with the shipped recording rules and "
                "alerts, and print its URL");
  cmd->add_option("--prometheus-rules", args->prometheus_rules,
                  "Folder with rules.yml and alerts.yml for --prometheus "
                  "(default: deploy/prometheus found from the binary)");
  cmd->add_option("--duration", args->duration,
                  "Stop after this much traffic (default: until Ctrl-C)");
  cmd->callback([args, exit_code] { *exit_code = RunDemo(*args); });
}

}  // namespace rankwatch::cli
