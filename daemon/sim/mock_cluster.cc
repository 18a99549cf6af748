#include "daemon/sim/mock_cluster.h"

#include <spdlog/spdlog.h>
#include <syslog.h>

#include <utility>

namespace rankwatch::sim {

namespace {

// librdkafka logs of the mock's handle. Its warnings are noise (it has no
// bootstrap.servers on purpose); errors are worth seeing.
void LogFromMock(const rd_kafka_t* /*rk*/, int level, const char* facility,
                 const char* message) {
  if (level <= LOG_ERR) {
    spdlog::error("kafka mock: {}: {}", facility, message);
  } else {
    spdlog::debug("kafka mock: {}: {}", facility, message);
  }
}

Status MockError(rd_kafka_resp_err_t err, const std::string& what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  std::string message = what + ": " + rd_kafka_err2str(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
      return Status::AlreadyExists(std::move(message));
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
      return Status::NotFound(std::move(message));
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return Status::InvalidArgument(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

}  // namespace

StatusOr<std::unique_ptr<MockCluster>> MockCluster::Start(int brokers) {
  if (brokers < 1 || brokers > kMaxBrokers) {
    return Status::InvalidArgument("mock cluster: brokers must be in 1.." +
                                   std::to_string(kMaxBrokers) + ", not " +
                                   std::to_string(brokers));
  }
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, LogFromMock);
  if (rd_kafka_conf_set(conf, "client.id", "rankwatch-mock-cluster", errstr,
                        sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(std::string("mock cluster: ") + errstr);
  }
  // On success rd_kafka_new() takes ownership of `conf`.
  rd_kafka_t* handle =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (handle == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(std::string("mock cluster: ") + errstr);
  }
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(handle, brokers);
  if (mock == nullptr) {
    rd_kafka_destroy(handle);
    return Status::Unavailable(
        "mock cluster: cannot start the brokers (no loopback listener?)");
  }
  return std::unique_ptr<MockCluster>(new MockCluster(handle, mock, brokers));
}

MockCluster::MockCluster(rd_kafka_t* handle, rd_kafka_mock_cluster_t* mock,
                         int brokers)
    : handle_(handle),
      mock_(mock),
      broker_count_(brokers),
      bootstrap_servers_(rd_kafka_mock_cluster_bootstraps(mock)) {}

MockCluster::~MockCluster() {
  // The mock refers to the handle: destroy it first.
  rd_kafka_mock_cluster_destroy(mock_);
  rd_kafka_destroy(handle_);
}

Status MockCluster::CreateTopic(const std::string& name, int partitions,
                                int replication) {
  if (name.empty()) {
    return Status::InvalidArgument("mock cluster: empty topic name");
  }
  if (partitions < 1) {
    return Status::InvalidArgument("mock cluster: topic '" + name +
                                   "' needs at least one partition");
  }
  if (replication < 1) {
    return Status::InvalidArgument("mock cluster: topic '" + name +
                                   "' needs a replication factor >= 1");
  }
  return MockError(
      rd_kafka_mock_topic_create(mock_, name.c_str(), partitions, replication),
      "mock cluster: creating topic '" + name + "'");
}

Status MockCluster::SetBrokerDown(int32_t broker_id) {
  return MockError(rd_kafka_mock_broker_set_down(mock_, broker_id),
                   "mock cluster: broker " + std::to_string(broker_id));
}

Status MockCluster::SetBrokerUp(int32_t broker_id) {
  return MockError(rd_kafka_mock_broker_set_up(mock_, broker_id),
                   "mock cluster: broker " + std::to_string(broker_id));
}

Status MockCluster::SetBrokerRtt(int32_t broker_id, int rtt_ms) {
  if (rtt_ms < 0) {
    return Status::InvalidArgument("mock cluster: negative rtt");
  }
  return MockError(rd_kafka_mock_broker_set_rtt(mock_, broker_id, rtt_ms),
                   "mock cluster: broker " + std::to_string(broker_id));
}

Status MockCluster::PushRequestErrors(
    int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors) {
  if (api_key < 0) {
    return Status::InvalidArgument("mock cluster: negative ApiKey");
  }
  if (errors.empty()) return Status::Ok();
  rd_kafka_mock_push_request_errors_array(mock_, api_key, errors.size(),
                                          errors.data());
  return Status::Ok();
}

Status MockCluster::ClearRequestErrors(int16_t api_key) {
  if (api_key < 0) {
    return Status::InvalidArgument("mock cluster: negative ApiKey");
  }
  rd_kafka_mock_clear_request_errors(mock_, api_key);
  return Status::Ok();
}

Status MockCluster::SetPartitionLeader(const std::string& topic,
                                       int32_t partition, int32_t broker_id) {
  return MockError(rd_kafka_mock_partition_set_leader(mock_, topic.c_str(),
                                                      partition, broker_id),
                   "mock cluster: leader of " + topic + " [" +
                       std::to_string(partition) + "]");
}

Status MockCluster::SetCoordinator(const std::string& key_type,
                                   const std::string& key, int32_t broker_id) {
  if (key_type != "group" && key_type != "transaction") {
    return Status::InvalidArgument(
        "mock cluster: coordinator key type must be 'group' or "
        "'transaction', not '" +
        key_type + "'");
  }
  return MockError(
      rd_kafka_mock_coordinator_set(mock_, key_type.c_str(), key.c_str(),
                                    broker_id),
      "mock cluster: coordinator of " + key_type + " '" + key + "'");
}

}  // namespace rankwatch::sim
