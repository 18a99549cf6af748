// Events, a producer and replay comparisons for the daemon's end-to-end
// tests over a Kafka cluster (librdkafka's mock or a real broker): the
// deterministic request stream, a librdkafka producer that stamps each
// record with its event time, "sentinels" that move every partition's event
// time past all windows, and the check that scraped means equal `rankwatch
// replay`'s over the same events.
//
// Producer owns its librdkafka handle; none of this is thread-safe (one test
// thread drives it).
#ifndef RANKWATCH_TESTS_TESTING_KAFKA_EVENTS_H_
#define RANKWATCH_TESTS_TESTING_KAFKA_EVENTS_H_

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/daemon_process.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::testing {

inline constexpr int64_t kT0 = 1'763'805'600'000;  // Event time of request 0.
inline constexpr int64_t kSpacingMs = 50;          // Between requests.

// Metrics sections of the daemon's configuration in these tests. The A/B
// series are those ExpectSameAsReplay compares.
inline constexpr char kAbMetrics[] = R"(
metrics:
  cutoffs: [1, 3]
  measures: [precision, reciprocal_rank, ndcg]
)";
// Per-request variants ("v-<i>"), one series each: the metrics say which
// requests a daemon finalized, and how often (FinalizedPerRequest).
inline constexpr char kTracingMetrics[] = R"(
metrics:
  cutoffs: [1]
  measures: [precision]
aggregation:
  windows: []
  max_variants: 100000
)";

struct Event {
  bool results;
  std::string key;
  std::string json;
  int64_t timestamp_ms;
};

// Request i: query "q-<i % 7>", 5 docs, served at kT0 + 50 ms * i. Clicks: doc
// i % 5 (grade 1) 100 ms later; for i % 3 == 0 also doc (i + 2) % 5 (grade 2)
// at 200 ms; none at all for i % 7 == 0 (a request without a relevant doc).
// `variant_per_request`: variant "v-<i>" (the metrics tell which requests
// were finalized) instead of "A"/"B" alternately. Sorted by event time.
std::vector<Event> Requests(int first, int count, bool variant_per_request);

class Producer {
 public:
  // `properties`: librdkafka properties over the defaults (linger.ms 5, lz4).
  // `partitions`: of each topic, for Sentinels().
  explicit Producer(const std::string& bootstrap,
                    std::string results_topic = "results",
                    std::string judgments_topic = "judgments",
                    const std::map<std::string, std::string>& properties = {},
                    int partitions = 4);
  ~Producer();

  // Keyed by the event's key, its Kafka timestamp its event time.
  void Send(const Event& e, int32_t partition = RdKafka::Topic::PARTITION_UA);
  void SendAll(const std::vector<Event>& events);
  // At the pace of the events' timestamps, `speedup` times faster than real
  // time, as a live stream arrives. 4x: 200 requests (50 ms apart) still
  // arrive over 2.5 s, across several commits (commit_interval 1s or less
  // in the tests) and polls; 2x only made every test wait twice as long.
  void SendPaced(const std::vector<Event>& events, double speedup = 4.0);
  // An event far in the future on every partition of both topics: it moves
  // every consumer's watermark past all windows (and itself stays pending).
  // Results sentinels are one variant of their own; judgment sentinels are
  // orphans.
  void Sentinels(int64_t time_ms);
  // Sends each event once the wall clock (epoch ms) reaches `due(event)`,
  // in the order given.
  template <typename Due>
  void SendWhenDue(const std::vector<Event>& events, Due due) {
    for (const Event& e : events) {
      const int64_t at = due(e);
      while (NowMs() < at) producer_->poll(1);
      Send(e);
      producer_->poll(0);
    }
    Flush();
  }
  void Flush();

  // Wall-clock time, epoch ms.
  static int64_t NowMs();

 private:
  std::string results_topic_;
  std::string judgments_topic_;
  int partitions_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

// Waits (30 s at most) until `daemons` together have read at least `events`
// events and have no lag, so that nothing is in flight when a sentinel
// follows.
bool WaitConsumed(const std::vector<DaemonProcess*>& daemons, double events);

// Which series of a scrape hold the figures compared with replay's.
enum class Figures {
  kCounters,  // What each process scored: the histograms' _count and _sum.
  kState,     // The durable state: _window_lists and _window_sum_values
              // with window="all" (or the window given).
};

// Expects the summed counts and means of `scrapes` to equal replay's JSON
// output, per variant and series (P@1, P@3, RR@3, RR, nDCG@3, nDCG): counts
// exactly, means to `tolerance` (absolute, or relative when `relative`).
void ExpectSameAsReplay(const std::vector<Scrape>& scrapes,
                        const std::string& replay_json,
                        const std::vector<std::string>& variants,
                        double tolerance = 1e-9, bool relative = false,
                        Figures figures = Figures::kCounters,
                        const std::string& window = "all");

// `rankwatch replay --format json` (the binary `rankwatch`) over `events`,
// written as JSON-lines files r.jsonl and j.jsonl in `dir`, with `config`:
// its output, after expecting exit code 0.
std::string ReplayJson(const std::string& rankwatch, const TempDir& dir,
                       const std::string& config,
                       const std::vector<Event>& events);

// How many times each of requests 0..requests-1 (variant "v-<i>") was
// finalized, summed over `scrapes`.
std::map<int, double> FinalizedPerRequest(const std::vector<Scrape>& scrapes,
                                          int requests);

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_KAFKA_EVENTS_H_
