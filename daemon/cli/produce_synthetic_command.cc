#include "daemon/cli/produce_synthetic_command.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "base/exit_code.h"
#include "base/strings.h"
#include "config/config_loader.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/signals.h"
#include "daemon/sim/synthetic.h"
#include "daemon/sim/synthetic_producer.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kProduceSyntheticCommand = "produce-synthetic";

// Noise of a variant listed without one: the first is the baseline, the
// others slightly better.
constexpr double kBaselineSigma = 1.0;
constexpr double kTreatmentSigma = 0.85;

struct ProduceArgs {
  std::string bootstrap;
  std::string results_topic = "results";
  std::string judgments_topic = "judgments";
  double rate = 1000;
  std::string duration;
  int64_t requests = 0;
  bool fast = false;
  int64_t start_ms = -1;
  uint64_t seed = 1;
  std::string variants = "A,B";
  int32_t queries = 200;
  int32_t users = 0;
  double judgments_per_request = 3.0;
  std::string regress_variant;
  std::string regress_after = "0s";
  double regress_factor = 3.0;
  std::string interleave;
  double interleave_share = 0.5;
  std::string multileave;               // Comma-separated variant names.
  std::vector<std::string> properties;  // prop=value
  std::string status_interval = "5s";
  std::string qrels_file;
  std::string covariate;  // A field of results events; "" emits none.
  double covariate_noise_sd = 0.3;
  std::string results_copy;    // --also-write-results FILE.
  std::string judgments_copy;  // --also-write-judgments FILE.
};

// "A,B" or "A:1.0,B:0.8" (name:noise sigma).
StatusOr<std::vector<sim::VariantSpec>> ParseVariants(const std::string& text) {
  std::vector<sim::VariantSpec> variants;
  for (std::string_view item : SplitOn(text, ',')) {
    sim::VariantSpec v;
    const size_t colon = item.find(':');
    v.name = item.substr(0, colon);
    v.noise_sigma = variants.empty() ? kBaselineSigma : kTreatmentSigma;
    if (colon != std::string::npos) {
      const std::string sigma(item.substr(colon + 1));
      char* end = nullptr;
      v.noise_sigma = std::strtod(sigma.c_str(), &end);
      if (sigma.empty() || *end != '\0') {
        return Status::InvalidArgument("--variants: bad noise sigma in '" +
                                       std::string(item) + "'");
      }
    }
    variants.push_back(std::move(v));
  }
  return variants;
}

StatusOr<int64_t> ParseDurationMs(const std::string& flag,
                                  const std::string& text) {
  const std::optional<Duration> d = ParseDuration(text);
  if (!d.has_value()) {
    return Status::InvalidArgument(flag +
                                   ": expected a duration like 30s, "
                                   "5m, 1h, not '" +
                                   text + "'");
  }
  return static_cast<int64_t>(d->count());
}

StatusOr<std::map<std::string, std::string>> ParseProperties(
    const std::vector<std::string>& items) {
  std::map<std::string, std::string> properties;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("-X '" + item +
                                     "': expected property=value");
    }
    properties[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return properties;
}

StatusOr<sim::SyntheticConfig> MakeTrafficConfig(const ProduceArgs& args) {
  sim::SyntheticConfig config;
  config.seed = args.seed;
  config.num_queries = args.queries;
  config.num_users = args.users;
  config.judgments_per_request = args.judgments_per_request;
  StatusOr<std::vector<sim::VariantSpec>> variants =
      ParseVariants(args.variants);
  if (!variants.ok()) return variants.status();
  config.variants = *variants;
  if (!args.regress_variant.empty()) {
    StatusOr<int64_t> after =
        ParseDurationMs("--regress-after", args.regress_after);
    if (!after.ok()) return after.status();
    config.regress_variant = args.regress_variant;
    config.regress_after_ms = *after;
    config.regress_factor = args.regress_factor;
  }
  config.interleave = args.interleave;
  config.interleave_share = args.interleave_share;
  config.covariate = args.covariate;
  config.covariate_noise_sd = args.covariate_noise_sd;
  if (!args.multileave.empty()) {
    for (std::string_view name : SplitOn(args.multileave, ',')) {
      config.multileave.emplace_back(name);
    }
  }
  return config;
}

StatusOr<sim::ProduceOptions> MakeProduceOptions(const ProduceArgs& args) {
  sim::ProduceOptions options;
  options.bootstrap_servers = args.bootstrap;
  options.results_topic = args.results_topic;
  options.judgments_topic = args.judgments_topic;
  options.rate = args.rate;
  options.fast = args.fast;
  options.start_ms = args.start_ms;
  options.max_requests = args.requests;
  if (!args.duration.empty()) {
    StatusOr<int64_t> duration = ParseDurationMs("--duration", args.duration);
    if (!duration.ok()) return duration.status();
    options.duration_ms = *duration;
  }
  StatusOr<std::map<std::string, std::string>> properties =
      ParseProperties(args.properties);
  if (!properties.ok()) return properties.status();
  options.properties = *properties;
  StatusOr<int64_t> interval =
      ParseDurationMs("--status-interval", args.status_interval);
  if (!interval.ok()) return interval.status();
  if (*interval > 0) {
    options.progress_interval_ms = *interval;
    options.progress = [](const sim::ProduceStats& s) {
      std::fprintf(stderr,
                   "produce-synthetic: %.0fs requests=%lld (%.0f/s) "
                   "events=%lld delivered=%lld errors=%lld "
                   "queued_judgments=%lld\n",
                   s.elapsed_seconds, static_cast<long long>(s.requests),
                   s.requests / std::max(s.elapsed_seconds, 1e-9),
                   static_cast<long long>(s.events()),
                   static_cast<long long>(s.delivered),
                   static_cast<long long>(s.delivery_errors),
                   static_cast<long long>(s.queued_judgments));
    };
  }
  // Clicks and purchases come up to the traffic's max delay after their
  // request: say so when the requests stop, or the run seems to hang
  // (issue 43: still sending judgments 90 s after --duration 8s).
  options.on_draining = [](int64_t queued, int64_t last_due_ms) {
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::fprintf(stderr,
                 "produce-synthetic: requests done; %lld delayed judgments "
                 "(clicks, purchases) still to send as they fall due, the "
                 "last in %s (Ctrl-C drops them)\n",
                 static_cast<long long>(queued),
                 FormatApproxSeconds(static_cast<double>(std::max<int64_t>(
                                         0, last_due_ms - now_ms)) /
                                     1000)
                     .c_str());
  };
  return options;
}

void PrintSummary(const sim::ProduceStats& s) {
  const double seconds = std::max(s.elapsed_seconds, 1e-9);
  std::printf(
      "requests=%lld results=%lld judgments=%lld events=%lld bytes=%lld "
      "delivered=%lld delivery_errors=%lld undelivered=%lld "
      "dropped_judgments=%lld seconds=%.3f "
      "requests_per_second=%.0f events_per_second=%.0f\n",
      static_cast<long long>(s.requests),
      static_cast<long long>(s.results_events),
      static_cast<long long>(s.judgment_events),
      static_cast<long long>(s.events()), static_cast<long long>(s.bytes),
      static_cast<long long>(s.delivered),
      static_cast<long long>(s.delivery_errors),
      static_cast<long long>(s.undelivered),
      static_cast<long long>(s.dropped_judgments), s.elapsed_seconds,
      s.requests / seconds, s.events() / seconds);
  std::fflush(stdout);
}

// A plain write, not WriteFileAtomically: FILE may be a pipe or
// /dev/stdout, which a temporary file and a rename would replace.
Status WriteQrels(const std::string& path,
                  const sim::SyntheticTraffic& traffic) {
  const std::string qrels = traffic.TrecQrels();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::IoError("cannot create " + path);
  const bool written =
      std::fwrite(qrels.data(), 1, qrels.size(), f) == qrels.size();
  if (std::fclose(f) != 0 || !written) {
    return Status::IoError("cannot write " + path);
  }
  return Status::Ok();
}

// The --also-write-* copies: every event handed to the producer, one JSON
// line each, in the file of its topic, for `rankwatch replay` over the same
// events. Plain writes, as WriteQrels': FILE may be a pipe.
//
// Owns the open files. Thread-safety: none; Write() is called on the
// producer's Run() thread only.
class EventCopies {
 public:
  EventCopies() = default;
  EventCopies(const EventCopies&) = delete;
  EventCopies& operator=(const EventCopies&) = delete;
  ~EventCopies() { (void)Close(); }

  // Creates the files the flags name (none: nothing to do). The two topics
  // must differ: an event's topic is all that says which file it goes to.
  [[nodiscard]] Status Open(const ProduceArgs& args) {
    if (args.results_copy.empty() && args.judgments_copy.empty()) {
      return Status::Ok();
    }
    if (args.results_topic == args.judgments_topic) {
      return Status::InvalidArgument(
          "--also-write-results/--also-write-judgments: --results-topic and "
          "--judgments-topic are both '" +
          args.results_topic + "': the copies need two topics");
    }
    const std::pair<const std::string*, const std::string*> wanted[] = {
        {&args.results_topic, &args.results_copy},
        {&args.judgments_topic, &args.judgments_copy}};
    for (const auto& [topic, path] : wanted) {
      if (path->empty()) continue;
      std::FILE* f = std::fopen(path->c_str(), "w");
      if (f == nullptr) {
        return Status::IoError("cannot create " + *path + ": " +
                               std::strerror(errno));
      }
      copies_.push_back({*topic, *path, f, false});
    }
    return Status::Ok();
  }

  bool empty() const { return copies_.empty(); }

  // Appends `payload` to its topic's copy, if there is one. A failed write
  // is remembered for Close(), not retried.
  void Write(const std::string& topic, std::string_view payload) {
    for (Copy& c : copies_) {
      if (c.topic != topic || c.file == nullptr) continue;
      if (std::fwrite(payload.data(), 1, payload.size(), c.file) !=
              payload.size() ||
          std::fputc('\n', c.file) == EOF) {
        c.failed = true;
      }
    }
  }

  // Closes every file; fails naming the first one not completely written.
  [[nodiscard]] Status Close() {
    Status status = Status::Ok();
    for (Copy& c : copies_) {
      if (c.file == nullptr) continue;
      const bool closed = std::fclose(c.file) == 0;
      c.file = nullptr;
      if ((c.failed || !closed) && status.ok()) {
        status = Status::IoError("cannot write " + c.path);
      }
    }
    return status;
  }

 private:
  struct Copy {
    std::string topic;
    std::string path;
    std::FILE* file;
    bool failed;
  };
  std::vector<Copy> copies_;
};

int RunProduce(const ProduceArgs& args) {
  // First, so that no SIGHUP finds the process without it.
  IgnoreHangup();
  StatusOr<sim::SyntheticConfig> config = MakeTrafficConfig(args);
  if (!config.ok())
    return Fail(kProduceSyntheticCommand, config.status(), ErrorSource::kUsage);
  StatusOr<sim::ProduceOptions> options = MakeProduceOptions(args);
  if (!options.ok()) {
    return Fail(kProduceSyntheticCommand, options.status(),
                ErrorSource::kUsage);
  }
  StatusOr<sim::SyntheticTraffic> traffic =
      sim::SyntheticTraffic::Create(*config);
  if (!traffic.ok()) {
    return Fail(kProduceSyntheticCommand, traffic.status(),
                ErrorSource::kUsage);
  }
  if (!args.qrels_file.empty()) {
    const Status written = WriteQrels(args.qrels_file, *traffic);
    if (!written.ok())
      return Fail(kProduceSyntheticCommand, written, ErrorSource::kUsage);
  }
  EventCopies copies;
  const Status opened = copies.Open(args);
  if (!opened.ok())
    return Fail(kProduceSyntheticCommand, opened, ErrorSource::kUsage);
  if (!copies.empty()) {
    options->on_produce = [&copies](const std::string& topic, int64_t,
                                    std::string_view payload) {
      copies.Write(topic, payload);
    };
  }
  StatusOr<std::unique_ptr<sim::SyntheticProducer>> producer =
      sim::SyntheticProducer::Create(std::move(options).value(),
                                     std::move(traffic).value());
  if (!producer.ok()) {
    return Fail(kProduceSyntheticCommand, producer.status(),
                ErrorSource::kUsage);
  }

  // A first SIGTERM/SIGINT stops the run (queued judgments are sent and the
  // producer flushed); a second one exits at once.
  static std::atomic<bool> stop{false};
  InstallStopHandlers(&stop);
  StatusOr<sim::ProduceStats> stats = (*producer)->Run(&stop);
  if (!stats.ok())
    return Fail(kProduceSyntheticCommand, stats.status(), ErrorSource::kInput);

  PrintSummary(*stats);
  const Status copied = copies.Close();
  if (!copied.ok())
    return Fail(kProduceSyntheticCommand, copied, ErrorSource::kInput);
  // Exit 3, as docs/kafka-mock.md promises: the summary above already
  // counts what was lost.
  if (!stats->ok()) {
    return Fail(
        kProduceSyntheticCommand,
        std::to_string(stats->delivery_errors + stats->undelivered) +
            " event(s) not delivered; last error: " +
            (stats->last_error.empty() ? "flush timed out" : stats->last_error),
        ExitCode::kInternal);
  }
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddProduceSyntheticCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProduceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "produce-synthetic",
      "Produce synthetic A/B search traffic (results, clicks, purchases) to "
      "a Kafka cluster; see docs/kafka-mock.md");
  cmd->add_option("--bootstrap", args->bootstrap,
                  "Bootstrap servers, HOST:PORT[,HOST:PORT...]")
      ->required();
  cmd->add_option("--results-topic", args->results_topic, "Results topic");
  cmd->add_option("--judgments-topic", args->judgments_topic,
                  "Judgments topic");
  cmd->add_option("--rate", args->rate,
                  "Requests per second (of event time with --fast)")
      ->check(CLI::Range(1e-3, 1e7));
  CLI::Option* duration = cmd->add_option(
      "--duration", args->duration,
      "Stop the requests after this long (wall time; event time with "
      "--fast), e.g. 60s; their delayed judgments follow as they fall due");
  CLI::Option* requests =
      cmd->add_option("--requests", args->requests, "Stop after N requests")
          ->check(CLI::PositiveNumber);
  duration->excludes(requests);
  cmd->add_flag("--fast", args->fast,
                "As fast as possible on a simulated clock advancing 1/rate "
                "per request, never ahead of the wall clock (it waits for "
                "it instead)");
  cmd->add_option("--start-ms", args->start_ms,
                  "--fast: event time of the first request, epoch ms "
                  "(default: early enough that the whole run, judgments "
                  "included, is in the past)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", args->seed,
                  "Traffic seed (same seed, same events)");
  cmd->add_option("--variants", args->variants,
                  "Variants, NAME[:NOISE_SIGMA],... (default sigma 1.0 for "
                  "the first, 0.85 for the others: lower ranks better)");
  cmd->add_option("--queries", args->queries, "Size of the query set")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--users", args->users,
                  "Users: each request carries a user_id, each user one "
                  "variant (0: requests are independent)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--judgments-per-request", args->judgments_per_request,
                  "Mean clicks + purchases per request")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--regress-variant", args->regress_variant,
                  "Inject a regression in this variant...");
  cmd->add_option("--regress-after", args->regress_after,
                  "...this long (event time) after the first request...");
  cmd->add_option("--regress-factor", args->regress_factor,
                  "...multiplying its ranking noise by this factor")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--interleave", args->interleave,
                  "Interleave this variant (the challenger) with the first: "
                  "a share of the requests serves their team-draft merge as "
                  "variant FIRST-vs-NAME, each result with its team");
  cmd->add_option("--multileave", args->multileave,
                  "Multileave these variants (A,B,C: 2 to 8, the incumbent "
                  "first): a share of the requests serves their team-draft "
                  "multileaving as variant A-vs-B-vs-C, each result with its "
                  "team");
  cmd->add_option("--interleave-share", args->interleave_share,
                  "--interleave, --multileave: the share of the requests "
                  "merged")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("-X", args->properties,
                  "librdkafka producer property, prop=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--status-interval", args->status_interval,
                  "Status line on stderr every so often; 0s disables");
  cmd->add_option("--covariate", args->covariate,
                  "Emit a pre-exposure covariate in every results event under "
                  "this field (dotted for nested objects, as schema.covariate "
                  "reads it): the log of the request's click factor plus "
                  "noise, for regression adjustment");
  cmd->add_option("--covariate-noise-sd", args->covariate_noise_sd,
                  "Standard deviation of the covariate's noise (default 0.3; "
                  "larger weakens its correlation with the clicks)");
  cmd->add_option("--write-qrels", args->qrels_file,
                  "Write the query set's true grades as TREC qrels to FILE");
  cmd->add_option("--also-write-results", args->results_copy,
                  "Also write every results event produced to FILE, one JSON "
                  "line each (for rankwatch replay --results)");
  cmd->add_option("--also-write-judgments", args->judgments_copy,
                  "Also write every judgment event produced to FILE, one "
                  "JSON line each (for rankwatch replay --judgments)");
  cmd->callback([args, exit_code] { *exit_code = RunProduce(*args); });
}

}  // namespace rankwatch::cli
