// What the configured Kafka cluster offers a configuration, for
// `rankwatch check-config --connect`: FetchClusterMetadata() connects as
// `rankwatch run`'s consumer would (the same librdkafka configuration,
// kafka.properties with SASL and TLS included) and lists the brokers and
// topics; CheckCluster() says, one finding per line, whether the topics
// the configuration names are there.
//
// FetchClusterMetadata() creates, uses and destroys its own librdkafka
// client on the calling thread; CheckCluster() is pure. Both thread-safe.
#ifndef RANKWATCH_DAEMON_KAFKA_CLUSTER_CHECK_H_
#define RANKWATCH_DAEMON_KAFKA_CLUSTER_CHECK_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"

namespace rankwatch::kafka {

// The cluster as one metadata response describes it.
struct ClusterMetadata {
  struct Broker {
    int32_t id = 0;
    std::string host;
    int port = 0;
  };
  std::vector<Broker> brokers;
  struct Topic {
    int partitions = 0;
    std::string error;  // librdkafka's name of the topic's error, if any.
  };
  // Every topic the client may describe (Kafka leaves out those its ACLs
  // hide), by name.
  std::map<std::string, Topic> topics;
};

// Connects to kafka.bootstrap_servers with the consumer's configuration
// (ConsumerConf) and asks for the metadata of every topic, for at most
// `timeout`. Asking for every topic, not the configured ones by name, does
// not create them on a broker that auto-creates topics. Unavailable
// "cannot reach kafka at BOOTSTRAP (CAUSE)" when no broker answers: as soon
// as librdkafka reports every broker down, with the cause of the last
// connection error ("Connection refused", "SASL authentication error:
// ..."), else after `timeout` ("no answer within 10s"). InvalidArgument
// when librdkafka refuses the configuration.
StatusOr<ClusterMetadata> FetchClusterMetadata(
    const config::KafkaConfig& kafka, std::chrono::milliseconds timeout);

// One line of `check-config --connect`: what was found (kOk), what may be
// a mistake (kWarning: exit 0), or what a daemon would fail on (kError).
struct ClusterFinding {
  enum class Level { kOk, kWarning, kError };
  Level level = Level::kOk;
  std::string message;  // One line, starting "kafka: ".
};

// The findings on `cluster` for `config`, in this order: the brokers
// reached; per configured topic (kafka.results_topic,
// kafka.judgments_topic, dead_letter.topic when set) its partition count,
// or an error when it is missing (a warning for the dead-letter topic,
// which the first dead letter creates where the broker auto-creates
// topics), naming the closest existing topic as a likely typo; a warning
// when the topic reports an error; in impression mode, a warning when the
// two topics differ in partition count.
std::vector<ClusterFinding> CheckCluster(const config::Config& config,
                                         const ClusterMetadata& cluster);

}  // namespace rankwatch::kafka

#endif  // RANKWATCH_DAEMON_KAFKA_CLUSTER_CHECK_H_
