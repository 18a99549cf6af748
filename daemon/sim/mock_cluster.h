// MockCluster: an in-memory Kafka cluster that speaks the Kafka protocol on
// loopback, from librdkafka's mock cluster (rdkafka_mock.h), for local use
// (`rankwatch kafka-mock`, `rankwatch demo`) and for tests that inject
// faults (brokers down, request errors, leader moves).
//
// Any Kafka client can connect to bootstrap_servers(). Known limits of the
// librdkafka 2.0 mock, which callers must design around:
//  * Data lives in memory only and dies with the object.
//  * Each partition keeps only about 5 MiB (or 100k message batches) and
//    silently drops its oldest batches beyond that: use enough partitions,
//    or compression, for large volumes.
//  * A consumer group's first join takes about 3 s; later rebalances wait
//    session.timeout.ms - 1 s, so tests set session.timeout.ms low (3000 for
//    daemons; 6000 where a broker outage must stay shorter than a session).
//  * The replication factor is always min(3, brokers); the leader of each
//    partition is picked at random among its replicas. A broker that is set
//    down keeps leading its partitions (no leader election): clients wait
//    for it to come back, or for SetPartitionLeader().
//
// Ownership: the object owns the librdkafka handle the mock is attached to
// and the mock itself; destroying it closes every listener.
//
// Thread-safety: the mock serves clients on its own thread. Every method may
// be called from any thread concurrently (librdkafka forwards the control
// calls to the mock's thread or guards them with its lock); only
// destruction must not race with other calls.
#ifndef RANKWATCH_DAEMON_SIM_MOCK_CLUSTER_H_
#define RANKWATCH_DAEMON_SIM_MOCK_CLUSTER_H_

#include <librdkafka/rdkafka.h>
// Must follow rdkafka.h.
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace rankwatch::sim {

class MockCluster {
 public:
  // Starts `brokers` (1..kMaxBrokers) brokers listening on 127.0.0.1 at
  // ephemeral ports. Broker ids are 1..brokers.
  static StatusOr<std::unique_ptr<MockCluster>> Start(int brokers);

  static constexpr int kMaxBrokers = 64;

  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;
  ~MockCluster();

  // Creates `name` with `partitions` partitions. Fails if it exists.
  // `replication` is accepted for symmetry with real clusters but ignored
  // by the librdkafka 2.0 mock (see the header comment). Topics a client
  // asks for that do not exist are auto-created with 4 partitions.
  [[nodiscard]] Status CreateTopic(const std::string& name, int partitions,
                                   int replication = 1);

  // "127.0.0.1:PORT,127.0.0.1:PORT,...", one per broker.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  int broker_count() const { return broker_count_; }

  // Disconnects broker `broker_id` and refuses new connections until
  // SetBrokerUp(); -1 means every broker. Leadership does not move.
  [[nodiscard]] Status SetBrokerDown(int32_t broker_id);
  [[nodiscard]] Status SetBrokerUp(int32_t broker_id);
  // Delays every response of `broker_id` (-1: all) by `rtt_ms`.
  [[nodiscard]] Status SetBrokerRtt(int32_t broker_id, int rtt_ms);

  // Makes the next requests of type `api_key` (a Kafka protocol ApiKey,
  // e.g. 0 Produce, 1 Fetch, 8 OffsetCommit) fail with `errors`, one error
  // per request, in order, whichever broker serves them.
  [[nodiscard]] Status PushRequestErrors(
      int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors);
  // Drops the errors still queued for `api_key`.
  [[nodiscard]] Status ClearRequestErrors(int16_t api_key);

  // Moves the leadership of a partition to `broker_id` (-1: no leader).
  // Like a client's request, it auto-creates an unknown topic (with 4
  // partitions); NotFound for a partition or broker that does not exist.
  [[nodiscard]] Status SetPartitionLeader(const std::string& topic,
                                          int32_t partition, int32_t broker_id);
  // Sets the coordinator of a group ("group") or a transactional id
  // ("transaction") to `broker_id`.
  [[nodiscard]] Status SetCoordinator(const std::string& key_type,
                                      const std::string& key,
                                      int32_t broker_id);

  // The underlying mock, for fault injections not wrapped here. Owned by
  // this object.
  rd_kafka_mock_cluster_t* c_ptr() const { return mock_; }

 private:
  MockCluster(rd_kafka_t* handle, rd_kafka_mock_cluster_t* mock, int brokers);

  // The handle the mock is attached to: librdkafka needs one for its
  // bookkeeping; it never connects anywhere.
  rd_kafka_t* handle_;
  rd_kafka_mock_cluster_t* mock_;
  int broker_count_;
  std::string bootstrap_servers_;
};

}  // namespace rankwatch::sim

#endif  // RANKWATCH_DAEMON_SIM_MOCK_CLUSTER_H_
