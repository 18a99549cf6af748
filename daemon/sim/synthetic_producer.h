// SyntheticProducer: sends a SyntheticTraffic to a Kafka cluster (real or
// MockCluster) with librdkafka's producer, for demos and load tests.
//
// Results events go to the results topic and judgments to the judgments
// topic, both keyed by request_id (so, with equal partition counts, a
// request's events land in the same partition number, as the daemon's
// impression join requires) and stamped with their event time. lz4
// compression by default; any librdkafka property can be passed through.
//
// No event is ever produced before the wall clock has reached its event
// time: a consumer must be able to reject events stamped ahead of the clock
// (events.max_future_skew) without losing any of ours. Two modes:
//  * realtime: requests at `rate` per second of wall clock, served "now";
//    each judgment is held in a time-ordered queue and produced when its
//    event time comes.
//  * fast: as fast as the producer goes, on a simulated clock that advances
//    1 / rate per request from `start_ms`. By default the start lies far
//    enough in the past that the whole run, judgments included, is behind
//    the wall clock (see start_ms). Where the simulated clock would pass the
//    wall clock, the run waits for it, i.e. goes on at `rate` per second of
//    wall clock, and judgments wait in the queue as in realtime mode.
// It stops after `duration` (wall time in realtime, event time in fast
// mode) or `max_requests`, or when the stop flag is raised. It then waits
// for the queued judgments to fall due and produces them (when stopped by
// the flag, those not yet due are dropped and counted instead), and
// flushes the producer. Every delivery report is checked and counted.
//
// Ownership: owns the traffic and the librdkafka producer. Thread-safety:
// Run() is single-threaded (delivery reports are served on its thread);
// only the stop flag may be touched from other threads.
#ifndef RANKWATCH_DAEMON_SIM_SYNTHETIC_PRODUCER_H_
#define RANKWATCH_DAEMON_SIM_SYNTHETIC_PRODUCER_H_

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/sim/synthetic.h"

namespace rankwatch::sim {

// Counts of a run; also what the progress callback sees.
struct ProduceStats {
  int64_t requests = 0;
  int64_t results_events = 0;    // Handed to the producer.
  int64_t judgment_events = 0;   // Handed to the producer.
  int64_t bytes = 0;             // Payload and key bytes handed over.
  int64_t delivered = 0;         // Acknowledged by the cluster.
  int64_t delivery_errors = 0;   // Failed delivery reports or produce calls.
  int64_t undelivered = 0;       // Still unacknowledged after the flush.
  int64_t queued_judgments = 0;  // Waiting for their event time.
  // Still waiting for their event time when the stop flag ended the run:
  // never produced, as they would have been stamped ahead of the clock.
  int64_t dropped_judgments = 0;
  int64_t first_event_ms = 0;  // Event time of the first request.
  int64_t last_event_ms = 0;   // Event time of the latest request.
  double elapsed_seconds = 0;  // Wall time.
  std::string last_error;      // The latest delivery error, if any.

  int64_t events() const { return results_events + judgment_events; }
  bool ok() const { return delivery_errors == 0 && undelivered == 0; }
};

struct ProduceOptions {
  std::string bootstrap_servers;
  std::string results_topic = "results";
  std::string judgments_topic = "judgments";
  // librdkafka properties; they override the defaults set here
  // (compression.type=lz4, linger.ms=5, ...).
  std::map<std::string, std::string> properties;
  double rate = 1000;  // Requests per second (of event time in fast mode).
  bool fast = false;
  int64_t max_requests = 0;  // 0: no limit.
  int64_t duration_ms = 0;   // 0: no limit.
  // Fast mode: event time of the first request, epoch ms. -1 is now minus
  // the event time the run spans (known from max_requests or duration_ms;
  // none otherwise) minus the traffic's max_delay_ms, so that every event
  // is already due (never before the epoch).
  int64_t start_ms = -1;
  int64_t flush_timeout_ms = 30000;
  // Called on Run()'s thread about every progress_interval_ms.
  std::function<void(const ProduceStats&)> progress;
  int64_t progress_interval_ms = 1000;
  // Called once on Run()'s thread when the requests stop (a limit reached)
  // with judgments still waiting for their time: how many, and the event
  // time of the last (epoch ms). The run goes on sending them as they fall
  // due (up to the traffic's max_delay_ms) unless stopped: produce-synthetic
  // says so rather than seem to hang (issue 43).
  std::function<void(int64_t queued, int64_t last_due_ms)> on_draining;
  // Called on Run()'s thread just before each event is handed to
  // librdkafka, with its topic, event time (epoch ms) and JSON payload:
  // produce-synthetic's --also-write-* copies, and a seam for tests.
  std::function<void(const std::string& topic, int64_t timestamp_ms,
                     std::string_view payload)>
      on_produce;
};

class SyntheticProducer {
 public:
  // Fails on invalid options or a property librdkafka rejects; the cluster
  // is first contacted by Run().
  static StatusOr<std::unique_ptr<SyntheticProducer>> Create(
      ProduceOptions options, SyntheticTraffic traffic);

  SyntheticProducer(const SyntheticProducer&) = delete;
  SyntheticProducer& operator=(const SyntheticProducer&) = delete;
  ~SyntheticProducer();

  // Produces until a limit or `*stop` (may be null). Delivery failures are
  // counted in the stats, not returned as errors; an error is returned only
  // when producing cannot run at all. Call it once.
  StatusOr<ProduceStats> Run(const std::atomic<bool>* stop);

  const SyntheticTraffic& traffic() const { return traffic_; }

 private:
  class DeliveryReport;
  class EventLogger;

  SyntheticProducer(ProduceOptions options, SyntheticTraffic traffic);
  Status Init();

  void RunRealtime(const std::atomic<bool>* stop);
  void RunFast(const std::atomic<bool>* stop);
  int64_t FastStartMs(int64_t now_ms) const;
  void WaitFor(int64_t due_ms, int64_t now_ms);
  bool LimitReached(int64_t elapsed_ms) const;
  void GenerateRequest(int64_t served_ms, const std::atomic<bool>* stop);
  void ProduceDueJudgments(int64_t now_ms, const std::atomic<bool>* stop);
  void Produce(const std::string& topic, const std::string& payload,
               const std::string& key, int64_t timestamp_ms,
               const std::atomic<bool>* stop);
  void Finish(const std::atomic<bool>* stop);
  void MaybeReportProgress();
  double ElapsedSeconds() const;

  ProduceOptions options_;
  SyntheticTraffic traffic_;
  std::unique_ptr<DeliveryReport> delivery_report_;
  std::unique_ptr<EventLogger> event_logger_;
  std::unique_ptr<RdKafka::Producer> producer_;
  ProduceStats stats_;

  // Run() state.
  bool ran_ = false;
  int64_t start_steady_ns_ = 0;
  int64_t last_progress_ns_ = 0;
  std::string results_json_;
  std::vector<TimedJudgment> judgments_;
  // Judgments not yet due: a min-heap on time_ms (std::push_heap with
  // Later()).
  std::vector<TimedJudgment> pending_;
};

}  // namespace rankwatch::sim

#endif  // RANKWATCH_DAEMON_SIM_SYNTHETIC_PRODUCER_H_
