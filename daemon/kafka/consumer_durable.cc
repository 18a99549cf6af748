// KafkaIngest's durable state (kafka.durable_state): restoring a partition's
// checkpoint on assignment, writing checkpoints with their offsets, and
// preparing the changelog topic. The consume loop is in consumer.cc; the
// class comment in consumer.h describes both.
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/kafka/commit_metadata.h"
#include "daemon/kafka/consumer.h"
#include "daemon/kafka/rdkafka_handles.h"

namespace rankwatch::kafka {

namespace {

// Reading one partition's checkpoint (writing: changelog.h's
// kCheckpointTimeoutMs).
constexpr int kRestoreTimeoutMs = 30'000;
// Preparing the changelog topic: one attempt's metadata and admin calls.
constexpr int kPrepareTimeoutMs = 10'000;

}  // namespace

KafkaIngest::Restore KafkaIngest::ReadCheckpoint(
    int32_t shard, const std::vector<AssignedPartition>& partitions) {
  Restore r;
  r.shard = shard;
  // The pointer committed with the group's offsets (either topic's).
  CommitMetadata pointer;
  for (const AssignedPartition& p : partitions) {
    if (p.partition == shard && p.committed_offset >= 0) {
      DecodeCommitMetadata(p.metadata, &pointer);
    }
  }
  const bool has_pointer =
      pointer.changelog_offset >= 0 &&
      pointer.changelog_partition == changelog_->PartitionOf(shard);
  StatusOr<std::optional<std::string>> latest = changelog_->ReadLatest(
      shard, has_pointer ? pointer.changelog_offset : -1, kRestoreTimeoutMs);
  const std::string where = "partition " + std::to_string(shard) +
                            " of changelog '" + changelog_->topic() + "'";
  if (!latest.ok()) {
    r.problem = "cannot read the checkpoint of " + where + ": " +
                latest.status().message();
  } else if (latest->has_value()) {
    r.record = std::move(**latest);
  } else if (has_pointer) {
    r.problem = "no checkpoint of " + where +
                ", though the group's offsets point to one (changelog "
                "partition " +
                std::to_string(pointer.changelog_partition) + ", offset " +
                std::to_string(pointer.changelog_offset) +
                "): the topic was deleted or compacted away. rankwatch does "
                "not count from zero: to start afresh, use a new "
                "kafka.group_id or reset the group's offsets";
  }
  return r;
}

void KafkaIngest::ApplyRestore(const Restore& restore,
                               std::vector<AssignedPartition>& partitions) {
  std::string problem = restore.problem;
  std::array<int64_t, 2> offsets{-1, -1};
  if (problem.empty() && restore.record.has_value()) {
    StatusOr<CheckpointRecord> record = DecodeCheckpointRecord(*restore.record);
    Status s = record.status();
    if (s.ok() && record->partition != restore.shard) {
      s = Status::InvalidArgument("it is partition " +
                                  std::to_string(record->partition) + "'s");
    }
    if (s.ok()) s = pipeline_->DecodeShard(restore.shard, record->state);
    if (s.ok()) {
      offsets = record->offsets;
      ++status_.partitions_restored;
      spdlog::info(
          "restored partition {} from changelog '{}' ({} bytes), "
          "reading on from offsets {}/{}",
          restore.shard, changelog_->topic(), restore.record->size(),
          offsets[0], offsets[1]);
    } else {
      problem = "the checkpoint of partition " + std::to_string(restore.shard) +
                " in changelog '" + changelog_->topic() +
                "' cannot be restored: " + s.message();
    }
  }
  if (!problem.empty()) {
    unrestored_[restore.shard] = problem;
    spdlog::error("{}; partition {} is paused", problem, restore.shard);
  } else if (restore.record.has_value()) {
    checkpointed_[restore.shard] = offsets;
  }
  for (AssignedPartition& p : partitions) {
    const int t = TopicIndex(p.topic);
    if (t < 0 || p.partition != restore.shard) continue;
    if (!problem.empty()) {
      p.pause = true;
    } else if (offsets[t] >= 0) {
      p.start_offset = offsets[t];
      book_.MarkCommitted(SlotOf(t, p.partition), offsets[t]);
    }
  }
  PublishStateProblem();
}

void KafkaIngest::PublishStateProblem() {
  status_.state_problem =
      unrestored_.empty() ? std::string() : unrestored_.begin()->second;
  PublishReadiness();
}

std::vector<int32_t> KafkaIngest::ShardsOf(const std::vector<int32_t>& slots) {
  std::vector<int32_t> shards;
  for (int32_t slot : slots) {
    const int32_t shard = SlotPartition(slot);
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) {
      shards.push_back(shard);
    }
  }
  return shards;
}

std::vector<int32_t> KafkaIngest::AssignedShards() const {
  // The group's slots: in qrels mode the judgments are the table's, not
  // the group's, and the results slots name every shard.
  return ShardsOf(book_.slots());
}

void KafkaIngest::Checkpoint(const std::vector<int32_t>& shards, bool force) {
  AwaitCheckpoint();
  if (StartCheckpoint(shards, force)) AwaitCheckpoint();
}

void KafkaIngest::PollCheckpoint() {
  if (!round_.has_value()) return;
  std::vector<Changelog::Written> written;
  const std::optional<Status> result = changelog_->Collect(&written);
  if (result.has_value()) FinishCheckpoint(*result, written, /*sync=*/false);
}

void KafkaIngest::AwaitCheckpoint() {
  if (!round_.has_value()) return;
  std::vector<Changelog::Written> written;
  const Status result = changelog_->Await(kCheckpointTimeoutMs, &written);
  FinishCheckpoint(result, written, /*sync=*/true);
}

bool KafkaIngest::StartCheckpoint(const std::vector<int32_t>& shards,
                                  bool force) {
  const bool qrels = table_consumer_ != nullptr;
  std::vector<std::pair<int32_t, std::string>> records;
  CheckpointRound round;
  std::string state;
  for (int32_t shard : shards) {
    // Never restored: writing its empty state would hide the real one.
    if (unrestored_.contains(shard)) continue;
    const std::array<int64_t, 2> at = {
        book_.Position(SlotOf(0, shard)),
        qrels ? -1 : book_.Position(SlotOf(1, shard))};
    auto it = checkpointed_.find(shard);
    if (!force && it != checkpointed_.end() && it->second == at) continue;
    state.clear();
    pipeline_->EncodeShard(shard, &state);
    std::string bytes;
    EncodeCheckpointRecord({shard, at, state}, &bytes);
    round.bytes += static_cast<int64_t>(bytes.size());
    records.emplace_back(shard, std::move(bytes));
    round.shards.push_back(shard);
    round.positions.push_back(at);
  }
  if (records.empty()) return false;
  const Status s = changelog_->Send(records);
  if (!s.ok()) {
    ++status_.checkpoints_failed;
    errors_.Log("checkpoint failed", s.message());
    return false;
  }
  round_ = std::move(round);
  return true;
}

void KafkaIngest::FinishCheckpoint(
    const Status& result, const std::vector<Changelog::Written>& written,
    bool sync) {
  const CheckpointRound round = std::move(*round_);
  round_.reset();
  if (!result.ok()) {
    ++status_.checkpoints_failed;
    errors_.Log("checkpoint failed", result.message());
    return;
  }
  ++status_.checkpoints_ok;
  status_.checkpoint_bytes = round.bytes;
  // The group's offsets follow, pointing to the records: lag shows, and a
  // new owner reads from the pointer on.
  const bool qrels = table_consumer_ != nullptr;
  PartitionList list = MakePartitionList(round.shards.size() * 2);
  for (size_t i = 0; i < round.shards.size(); ++i) {
    const int32_t shard = round.shards[i];
    checkpointed_[shard] = round.positions[i];
    CommitMetadata metadata;
    metadata.changelog_partition = written[i].partition;
    metadata.changelog_offset = written[i].offset;
    const std::string encoded = EncodeCommitMetadata(metadata);
    for (int t = 0; t < (qrels ? 1 : 2); ++t) {
      rd_kafka_topic_partition_t* tp = rd_kafka_topic_partition_list_add(
          list.get(), TopicName(t).c_str(), shard);
      tp->offset = round.positions[i][static_cast<size_t>(t)];
      SetPartitionMetadata(tp, encoded);
    }
  }
  if (!sync) {
    // Its result comes to CommitHandler inside consume(): the consume loop
    // never waits for the broker here.
    (void)rd_kafka_commit(consumer_->c_ptr(), list.get(), /*async=*/1);
    return;
  }
  const rd_kafka_resp_err_t err =
      rd_kafka_commit(consumer_->c_ptr(), list.get(), /*async=*/0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // The checkpoint holds its offsets: a new owner restores from it
    // whatever the group's offsets say.
    ++status_.commits_failed;
    errors_.Log("offset commit after a checkpoint failed",
                rd_kafka_err2str(err));
    return;
  }
  ++status_.commits_ok;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      book_.MarkCommitted(SlotOf(TopicIndex(tp.topic), tp.partition),
                          tp.offset);
    }
  }
}

Status KafkaIngest::PrepareChangelog(const std::atomic<bool>& stop) {
  const int32_t partitions = std::max(topic_partitions_[0], 1);
  for (;;) {
    const Status s = changelog_->Prepare(partitions, kPrepareTimeoutMs);
    std::lock_guard<std::mutex> lock(*mu_);
    if (s.ok()) {
      status_.state_problem.clear();
      PublishReadiness();
      spdlog::info("durable state in changelog '{}' ({} partitions)",
                   changelog_->topic(), changelog_->partitions());
      return Status::Ok();
    }
    if (status_.state_problem != s.message()) {
      spdlog::error("durable state: {}", s.message());
    }
    status_.state_problem = s.message();
    PublishReadiness();
    if (stop.load()) return Status::Unavailable(s.message());
    // Errors such as a wrong cleanup policy need the operator; broker
    // problems pass. Retried either way, in steps that hear a stop.
    for (int step = 0; step < 20 && !stop.load(); ++step) {
      mu_->unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      mu_->lock();
    }
  }
}

}  // namespace rankwatch::kafka
