#include "daemon/kafka/rebalance.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include "daemon/kafka/rdkafka_handles.h"

namespace rankwatch::kafka {

namespace {

bool Cooperative(RdKafka::KafkaConsumer* consumer) {
  return consumer->rebalance_protocol() == "COOPERATIVE";
}

}  // namespace

void RebalanceHandler::rebalance_cb(
    RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
    std::vector<RdKafka::TopicPartition*>& partitions) {
  switch (err) {
    case RdKafka::ERR__ASSIGN_PARTITIONS:
      Assign(consumer, partitions);
      return;
    case RdKafka::ERR__REVOKE_PARTITIONS:
      Revoke(consumer, partitions);
      return;
    default:
      break;
  }
  spdlog::error("rebalance failed: {}", RdKafka::err2str(err));
  listener_->OnRebalanceError(err, "rebalance");
  (void)Check(consumer->unassign(), "unassign after a failed rebalance");
  listener_->OnAssignmentChanged(false);
}

std::vector<AssignedPartition> RebalanceHandler::Committed(
    RdKafka::KafkaConsumer* consumer,
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  // Through the C API: the C++ committed() drops the metadata.
  PartitionList list = MakePartitionList(partitions.size());
  for (const RdKafka::TopicPartition* tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp->topic().c_str(),
                                      tp->partition());
  }
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer->c_ptr(), list.get(), committed_timeout_ms_);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // The partitions are still assigned, from auto.offset.reset.
    listener_->OnRebalanceError(static_cast<RdKafka::ErrorCode>(err),
                                "cannot fetch committed offsets");
  }
  std::vector<AssignedPartition> out;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    AssignedPartition a;
    a.topic = tp.topic;
    a.partition = tp.partition;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && tp.offset >= 0) {
      a.committed_offset = tp.offset;
      if (tp.metadata != nullptr) {
        a.metadata.assign(static_cast<const char*>(tp.metadata),
                          tp.metadata_size);
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

void RebalanceHandler::Assign(
    RdKafka::KafkaConsumer* consumer,
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  std::vector<AssignedPartition> assigned = Committed(consumer, partitions);
  listener_->OnAssigned(assigned);
  std::vector<RdKafka::TopicPartition*> paused;
  for (size_t i = 0; i < assigned.size() && i < partitions.size(); ++i) {
    if (assigned[i].start_offset >= 0) {
      partitions[i]->set_offset(assigned[i].start_offset);
    }
    if (assigned[i].pause) paused.push_back(partitions[i]);
  }
  const bool ok = Cooperative(consumer)
                      ? Check(consumer->incremental_assign(partitions),
                              "incremental assign")
                      : Check(consumer->assign(partitions), "assign");
  if (ok) {
    std::vector<RdKafka::TopicPartition*> now;
    const bool assigned_any =
        consumer->assignment(now) == RdKafka::ERR_NO_ERROR && !now.empty();
    RdKafka::TopicPartition::destroy(now);
    listener_->OnAssignmentChanged(assigned_any);
  }
  if (ok && !paused.empty()) (void)Check(consumer->pause(paused), "pause");
  spdlog::info("assigned {} partitions", partitions.size());
}

void RebalanceHandler::Revoke(
    RdKafka::KafkaConsumer* consumer,
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  const bool lost = consumer->assignment_lost();
  std::vector<RevokedPartition> revoked;
  for (const RdKafka::TopicPartition* tp : partitions) {
    revoked.push_back({tp->topic(), tp->partition()});
  }
  listener_->OnRevoked(revoked, lost);
  if (Cooperative(consumer)) {
    (void)Check(consumer->incremental_unassign(partitions),
                "incremental unassign");
    std::vector<RdKafka::TopicPartition*> now;
    const bool assigned =
        consumer->assignment(now) == RdKafka::ERR_NO_ERROR && !now.empty();
    RdKafka::TopicPartition::destroy(now);
    listener_->OnAssignmentChanged(assigned);
  } else {
    (void)Check(consumer->unassign(), "unassign");
    listener_->OnAssignmentChanged(false);
  }
  spdlog::info("revoked {} partitions{}", partitions.size(),
               lost ? " (lost)" : "");
}

bool RebalanceHandler::Check(RdKafka::Error* error, std::string_view context) {
  const ErrorPtr owned(error);
  if (owned == nullptr) return true;
  spdlog::error("{} failed: {}", context, owned->str());
  listener_->OnRebalanceError(owned->code(), context);
  return false;
}

bool RebalanceHandler::Check(RdKafka::ErrorCode err, std::string_view context) {
  if (err == RdKafka::ERR_NO_ERROR) return true;
  spdlog::error("{} failed: {}", context, RdKafka::err2str(err));
  listener_->OnRebalanceError(err, context);
  return false;
}

}  // namespace rankwatch::kafka
