// Fetch health: which topic-partitions librdkafka is actively fetching from
// a reachable leader, read from its statistics JSON
// (statistics.interval.ms). A partition read up to its end may release
// event time only while this holds: when its leader is down, its last known
// end is stale and its data waits (see KafkaIngest).
//
// ParseFetchHealth is a pure function; FetchHealthTable is plain state,
// not thread-safe (the consumer thread owns it).
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
