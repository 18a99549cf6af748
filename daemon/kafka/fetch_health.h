// Fetch health, read from librdkafka's statistics JSON
// (statistics.interval.ms), parsed once per report (ParseFetchStatistics):
//  * which topic-partitions librdkafka is actively fetching from a
//    reachable leader. A partition read up to its end may release event
//    time only while this holds: when its leader is down, its last known
//    end is stale and its data waits (see KafkaIngest);
//  * per partition, the state of the broker it is fetched from and how
//    long that broker has been silent: the input of readiness
//    (ingest_state.h FetchProgressTable).
//
// The parse functions are pure; FetchHealthTable is plain state, not
// thread-safe (the consumer thread owns it).
#ifndef RANKWATCH_DAEMON_KAFKA_FETCH_HEALTH_H_
#define RANKWATCH_DAEMON_KAFKA_FETCH_HEALTH_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rankwatch::kafka {

struct PartitionFetchHealth {
  std::string topic;
  int32_t partition = 0;
  // fetch_state "active" and the leader broker's state "UP".
  bool healthy = false;
};

// The partitions of every topic in librdkafka's statistics `json`:
// topics.<t>.partitions.<p>.{partition, leader, fetch_state}, with the
// leader looked up in brokers.<b>.{nodeid, state} among the real brokers
// (not the "logical" aliases such as GroupCoordinator, which share a node
// id). Partitions lacking a field, or numbered below 0 (the internal
// "-1" partition) or beyond int32, are left out; JSON that does not parse
// gives an empty list.
std::vector<PartitionFetchHealth> ParseFetchHealth(std::string_view json);

// brokers.<b>.toppars lists the partitions each broker serves to this
// client (it fetches them from there), with the broker's `state` and
// `rxidle` (microseconds since the last response on its connection, -1
// when none yet). Fetch requests are long polls answered at least every
// fetch.wait.max.ms (500 ms by default), so a fetching broker that stays
// silent is frozen or cut off even while its state is still "UP" (as it
// stays until socket.timeout.ms, 60 s, expires).
struct BrokerFetch {
  std::string topic;
  int32_t partition = 0;
  bool broker_up = false;   // state "UP".
  int64_t rx_idle_ms = -1;  // -1: nothing received on this connection yet.
};

// The toppars of the real brokers in `json` (not the "logical" ones such
// as GroupCoordinator, which have a connection of their own). Entries
// lacking a field or numbered outside [0, int32 max] are left out; JSON
// that does not parse gives an empty list.
std::vector<BrokerFetch> ParseBrokerFetches(std::string_view json);

// Both of the above from one parse of the report, and how many brokers
// the client is connected to.
struct FetchStatistics {
  std::vector<PartitionFetchHealth> partitions;  // As ParseFetchHealth.
  std::vector<BrokerFetch> brokers;              // As ParseBrokerFetches.
  // Brokers in state "UP" among the configured (bootstrap) and learned
  // ones; not the logical aliases (GroupCoordinator) nor librdkafka's
  // internal one. Above 0: some broker can be reached.
  int brokers_up = 0;
};
FetchStatistics ParseFetchStatistics(std::string_view json);

// The last fetch health reported per slot, and when (monotonic time).
class FetchHealthTable {
 public:
  // Statistics older than this count as unknown (not healthy): they come
  // every second while librdkafka's threads run.
  static constexpr int64_t kStaleMs = 5000;

  void Record(int32_t slot, bool healthy, int64_t now_mono_ms);
  // Reported healthy less than kStaleMs ago.
  bool Healthy(int32_t slot, int64_t now_mono_ms) const;

 private:
  struct Entry {
    bool healthy = false;
    int64_t reported_mono_ms = 0;
  };
  std::map<int32_t, Entry> slots_;
};

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_FETCH_HEALTH_H_
