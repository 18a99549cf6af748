#include "daemon/sim/synthetic_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace rankwatch::sim {

namespace {

// The longest poll() wait, so that the stop flag and the progress callback
// are looked at often enough.
constexpr int kMaxWaitMs = 100;
// Realtime: requests generated in one go when behind schedule, before
// serving delivery reports and due judgments again.
constexpr int64_t kMaxBurst = 1000;
// Fast mode: delivery reports are served every this many requests.
constexpr int64_t kPollEvery = 256;
// How long a message may wait for room in a full producer queue once the
// stop flag is raised, before it is given up (counted as an error).
constexpr int64_t kQueueFullGiveUpMs = 1000;
// The fastest rate accepted: beyond it the simulated clock stops moving.
constexpr double kMaxRate = 1e7;

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Stopped(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

// Orders a std::*_heap of judgments as a min-heap on event time.
bool Later(const TimedJudgment& a, const TimedJudgment& b) {
  return a.time_ms > b.time_ms;
}

}  // namespace

// Counts delivery reports; served by poll() and flush() on Run()'s thread.
class SyntheticProducer::DeliveryReport : public RdKafka::DeliveryReportCb {
 public:
  explicit DeliveryReport(ProduceStats* stats) : stats_(stats) {}

  void dr_cb(RdKafka::Message& message) override {
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++stats_->delivered;
      return;
    }
    ++stats_->delivery_errors;
    stats_->last_error = message.errstr();
  }

 private:
  ProduceStats* stats_;
};

// Routes librdkafka's errors and logs to spdlog. May run on librdkafka's
// threads (logs); spdlog is thread-safe.
class SyntheticProducer::EventLogger : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    switch (event.type()) {
      case RdKafka::Event::EVENT_ERROR:
        if (event.fatal()) {
          spdlog::error("kafka producer: fatal: {}: {}",
                        RdKafka::err2str(event.err()), event.str());
        } else {
          spdlog::warn("kafka producer: {}: {}", RdKafka::err2str(event.err()),
                       event.str());
        }
        break;
      case RdKafka::Event::EVENT_LOG:
        if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_ERROR) {
          spdlog::error("kafka producer: {}: {}", event.fac(), event.str());
        } else if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_WARNING) {
          spdlog::warn("kafka producer: {}: {}", event.fac(), event.str());
        } else {
          spdlog::debug("kafka producer: {}: {}", event.fac(), event.str());
        }
        break;
      default:
        break;
    }
  }
};

StatusOr<std::unique_ptr<SyntheticProducer>> SyntheticProducer::Create(
    ProduceOptions options, SyntheticTraffic traffic) {
  if (!(options.rate > 0 && options.rate <= kMaxRate)) {
    return Status::InvalidArgument("produce: rate must be in (0, 1e7]");
  }
  if (options.results_topic.empty() || options.judgments_topic.empty()) {
    return Status::InvalidArgument("produce: empty topic name");
  }
  if (options.bootstrap_servers.empty() &&
      options.properties.count("bootstrap.servers") == 0) {
    return Status::InvalidArgument("produce: no bootstrap servers");
  }
  if (options.max_requests < 0 || options.duration_ms < 0 ||
      options.flush_timeout_ms < 0) {
    return Status::InvalidArgument("produce: negative limit");
  }
  std::unique_ptr<SyntheticProducer> producer(
      new SyntheticProducer(std::move(options), std::move(traffic)));
  RW_RETURN_IF_ERROR(producer->Init());
  return producer;
}

SyntheticProducer::SyntheticProducer(ProduceOptions options,
                                     SyntheticTraffic traffic)
    : options_(std::move(options)),
      traffic_(std::move(traffic)),
      delivery_report_(std::make_unique<DeliveryReport>(&stats_)),
      event_logger_(std::make_unique<EventLogger>()) {}

SyntheticProducer::~SyntheticProducer() = default;

Status SyntheticProducer::Init() {
  std::map<std::string, std::string> properties = {
      {"client.id", "rankwatch-synthetic"},
      {"compression.type", "lz4"},
      // 100 ms batches: librdkafka's mock cluster (the demo's broker)
      // stores each produced batch as one message set in a list, scans that
      // list from its oldest entry on every fetch and answers a fetch with
      // one message set per partition (rdkafka_mock.c 2.0.2,
      // rd_kafka_mock_msgset_find). With 5 ms batches of one or two events
      // each, a full partition log held ~20,000 sets: kafka-mock spent most
      // of a core scanning and the daemon fell behind (issue 25, item 9;
      // bench/demo_soak.sh). Larger batches cut both the list and the
      // fetches per event; 100 ms is invisible next to the join window.
      {"linger.ms", "100"},
      // Room for bursts of judgments in fast mode.
      {"queue.buffering.max.messages", "500000"},
  };
  if (!options_.bootstrap_servers.empty()) {
    properties["bootstrap.servers"] = options_.bootstrap_servers;
  }
  for (const auto& [name, value] : options_.properties) {
    properties[name] = value;
  }
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [name, value] : properties) {
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("produce: librdkafka property '" + name +
                                     "': " + error);
    }
  }
  if (conf->set("dr_cb", delivery_report_.get(), error) !=
          RdKafka::Conf::CONF_OK ||
      conf->set("event_cb", event_logger_.get(), error) !=
          RdKafka::Conf::CONF_OK) {
    return Status::Internal("produce: " + error);
  }
  producer_.reset(RdKafka::Producer::create(conf.get(), error));
  if (producer_ == nullptr) {
    return Status::InvalidArgument("produce: cannot create the producer: " +
                                   error);
  }
  return Status::Ok();
}

StatusOr<ProduceStats> SyntheticProducer::Run(const std::atomic<bool>* stop) {
  if (ran_) return Status::Internal("produce: Run() called twice");
  ran_ = true;
  start_steady_ns_ = SteadyNowNs();
  last_progress_ns_ = start_steady_ns_;
  if (options_.fast) {
    RunFast(stop);
  } else {
    RunRealtime(stop);
  }
  Finish(stop);
  return stats_;
}

// Request i is due i / rate seconds after the start; judgments when the
// wall clock reaches their event time.
void SyntheticProducer::RunRealtime(const std::atomic<bool>* stop) {
  const double ns_per_request = 1e9 / options_.rate;
  while (!Stopped(stop)) {
    const int64_t elapsed_ns = SteadyNowNs() - start_steady_ns_;
    if (LimitReached(elapsed_ns / 1'000'000)) break;
    int64_t due =
        static_cast<int64_t>(static_cast<double>(elapsed_ns) / ns_per_request) +
        1;
    if (options_.max_requests > 0) due = std::min(due, options_.max_requests);
    for (int64_t burst = 0; stats_.requests < due && burst < kMaxBurst;
         ++burst) {
      GenerateRequest(SystemNowMs(), stop);
    }
    ProduceDueJudgments(SystemNowMs(), stop);
    MaybeReportProgress();

    // Sleep in poll() (which serves delivery reports) until the next
    // request or judgment is due.
    const int64_t now_ns = SteadyNowNs() - start_steady_ns_;
    const auto next_request_ns = static_cast<int64_t>(
        static_cast<double>(stats_.requests) * ns_per_request);
    // Rounded up: waking early would only spin until the request is due.
    int64_t wait_ms = (next_request_ns - now_ns + 999'999) / 1'000'000;
    if (!pending_.empty()) {
      wait_ms = std::min(wait_ms, pending_.front().time_ms - SystemNowMs());
    }
    producer_->poll(
        static_cast<int>(std::clamp<int64_t>(wait_ms, 0, kMaxWaitMs)));
  }
}

// Event time advances 1 / rate per request from the start. A request (or
// judgment) whose time the wall clock has not reached yet waits for it.
void SyntheticProducer::RunFast(const std::atomic<bool>* stop) {
  const int64_t start_ms =
      options_.start_ms >= 0 ? options_.start_ms : FastStartMs(SystemNowMs());
  const double ms_per_request = 1000.0 / options_.rate;
  while (!Stopped(stop)) {
    const int64_t served_ms =
        start_ms + static_cast<int64_t>(static_cast<double>(stats_.requests) *
                                        ms_per_request);
    if (LimitReached(served_ms - start_ms)) break;
    const int64_t now_ms = SystemNowMs();
    if (served_ms > now_ms) {
      ProduceDueJudgments(now_ms, stop);
      MaybeReportProgress();
      WaitFor(served_ms, now_ms);
      continue;
    }
    GenerateRequest(served_ms, stop);
    ProduceDueJudgments(now_ms, stop);
    if (stats_.requests % kPollEvery == 0) {
      producer_->poll(0);
      MaybeReportProgress();
    }
  }
}

int64_t SyntheticProducer::FastStartMs(int64_t now_ms) const {
  const double ms_per_request = 1000.0 / options_.rate;
  // Event time from the first request to the last (an upper bound: served
  // times are truncated to whole milliseconds).
  double span_ms = 0;
  if (options_.max_requests > 0) {
    span_ms = static_cast<double>(options_.max_requests - 1) * ms_per_request;
  }
  if (options_.duration_ms > 0) {
    const double duration_ms = static_cast<double>(options_.duration_ms);
    span_ms = options_.max_requests > 0 ? std::min(span_ms, duration_ms)
                                        : duration_ms;
  }
  // Every judgment comes at most max_delay_ms after its request.
  const double back_ms =
      std::ceil(span_ms) + static_cast<double>(traffic_.config().max_delay_ms);
  // In double: a long span at a low rate could overflow int64 arithmetic.
  if (back_ms >= static_cast<double>(now_ms)) return 0;
  return now_ms - static_cast<int64_t>(back_ms);
}

// Sleeps in poll() (which serves delivery reports) until `due_ms` or the
// next queued judgment, whichever is first, at most kMaxWaitMs.
void SyntheticProducer::WaitFor(int64_t due_ms, int64_t now_ms) {
  if (!pending_.empty()) due_ms = std::min(due_ms, pending_.front().time_ms);
  producer_->poll(
      static_cast<int>(std::clamp<int64_t>(due_ms - now_ms, 0, kMaxWaitMs)));
}

bool SyntheticProducer::LimitReached(int64_t elapsed_ms) const {
  return (options_.max_requests > 0 &&
          stats_.requests >= options_.max_requests) ||
         (options_.duration_ms > 0 && elapsed_ms >= options_.duration_ms);
}

// Produces the results event at once (its time has come) and queues the
// judgments for theirs.
void SyntheticProducer::GenerateRequest(int64_t served_ms,
                                        const std::atomic<bool>* stop) {
  traffic_.NextRequest(served_ms, &results_json_, &judgments_);
  if (stats_.requests == 0) stats_.first_event_ms = served_ms;
  stats_.last_event_ms = served_ms;
  ++stats_.requests;
  // The key is the request id, which every judgment carries too.
  const std::string& key = traffic_.last_request_id();
  Produce(options_.results_topic, results_json_, key, served_ms, stop);
  ++stats_.results_events;
  for (TimedJudgment& j : judgments_) {
    pending_.push_back(std::move(j));
    std::push_heap(pending_.begin(), pending_.end(), Later);
  }
}

void SyntheticProducer::ProduceDueJudgments(int64_t now_ms,
                                            const std::atomic<bool>* stop) {
  while (!pending_.empty() && pending_.front().time_ms <= now_ms) {
    std::pop_heap(pending_.begin(), pending_.end(), Later);
    const TimedJudgment& j = pending_.back();
    Produce(options_.judgments_topic, j.json, j.request_id, j.time_ms, stop);
    ++stats_.judgment_events;
    pending_.pop_back();
  }
}

// Hands one message to librdkafka (which copies it). A full queue is waited
// out, serving delivery reports meanwhile, unless stopping.
void SyntheticProducer::Produce(const std::string& topic,
                                const std::string& payload,
                                const std::string& key, int64_t timestamp_ms,
                                const std::atomic<bool>* stop) {
  if (options_.on_produce) options_.on_produce(topic, timestamp_ms, payload);
  int64_t stopped_waiting_ms = 0;
  while (true) {
    const RdKafka::ErrorCode err = producer_->produce(
        topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(payload.data()), payload.size(), key.data(),
        key.size(), timestamp_ms, nullptr);
    if (err == RdKafka::ERR_NO_ERROR) {
      stats_.bytes += static_cast<int64_t>(payload.size() + key.size());
      return;
    }
    if (err == RdKafka::ERR__QUEUE_FULL &&
        (!Stopped(stop) || stopped_waiting_ms < kQueueFullGiveUpMs)) {
      constexpr int kQueueFullWaitMs = 10;
      producer_->poll(kQueueFullWaitMs);
      if (Stopped(stop)) stopped_waiting_ms += kQueueFullWaitMs;
      continue;
    }
    ++stats_.delivery_errors;
    stats_.last_error = RdKafka::err2str(err);
    return;
  }
}

// Produces the judgments still waiting as they fall due (after the last
// request, clicks and purchases still come, up to max_delay_ms later), or,
// once stopped, drops those not yet due; then waits for every delivery
// report.
void SyntheticProducer::Finish(const std::atomic<bool>* stop) {
  if (options_.on_draining && !pending_.empty() && !Stopped(stop)) {
    int64_t last_due_ms = INT64_MIN;
    for (const TimedJudgment& j : pending_) {
      last_due_ms = std::max(last_due_ms, j.time_ms);
    }
    options_.on_draining(static_cast<int64_t>(pending_.size()), last_due_ms);
  }
  while (true) {
    const int64_t now_ms = SystemNowMs();
    ProduceDueJudgments(now_ms, stop);
    if (pending_.empty() || Stopped(stop)) break;
    MaybeReportProgress();
    WaitFor(pending_.front().time_ms, now_ms);
  }
  stats_.dropped_judgments = static_cast<int64_t>(pending_.size());
  pending_.clear();
  producer_->flush(static_cast<int>(
      std::min<int64_t>(options_.flush_timeout_ms, INT32_MAX)));
  producer_->poll(0);
  stats_.undelivered = producer_->outq_len();
  MaybeReportProgress();
}

void SyntheticProducer::MaybeReportProgress() {
  const int64_t now_ns = SteadyNowNs();
  stats_.elapsed_seconds = static_cast<double>(now_ns - start_steady_ns_) / 1e9;
  stats_.queued_judgments = static_cast<int64_t>(pending_.size());
  if (!options_.progress) return;
  if (now_ns - last_progress_ns_ < options_.progress_interval_ms * 1'000'000) {
    return;
  }
  last_progress_ns_ = now_ns;
  options_.progress(stats_);
}

}  // namespace rankwatch::sim
