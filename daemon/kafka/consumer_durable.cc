// KafkaIngest's durable state (kafka.durable_state): restoring a partition's
// checkpoint on assignment, writing checkpoints with their offsets, and
// preparing the changelog topic. The consume loop is in consumer.cc; the
// class comment in consumer.h describes both.
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/kafka/checkpoint_chain.h"
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
// A new base is written once the deltas since the base outgrow it
// (docs/operations.md, "Durable state"): a restore then reads at most
// twice the state (plus one round's delta), and the bases cost as many
// bytes as the deltas, so a round writes at most twice its changes. A
// larger share writes fewer bases but restores from longer chains.
constexpr int64_t kDeltaShare = 1;

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
  r.read_from = has_pointer ? pointer.changelog_offset : -1;
  StatusOr<std::vector<Changelog::Stored>> chain =
      changelog_->ReadChain(shard, r.read_from, kRestoreTimeoutMs);
  const std::string where = "partition " + std::to_string(shard) +
                            " of changelog '" + changelog_->topic() + "'";
  if (!chain.ok()) {
    r.problem = "cannot read the checkpoint of " + where + ": " +
                chain.status().message();
    return r;
  }
  ChainSelection selected = SelectChain(shard, *chain);
  r.delta_keys = std::move(selected.delta_keys);
  if (selected.base.has_value()) {
    r.record = std::move((*chain)[*selected.base].value);
    for (size_t i : selected.deltas) {
      r.deltas.push_back(std::move((*chain)[i].value));
    }
    r.chain_problem = std::move(selected.problem);
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
    std::string chain_problem = restore.chain_problem;
    const Status s = RestoreChain(restore, &offsets, &chain_problem);
    if (s.ok()) {
      ++status_.partitions_restored;
      spdlog::info(
          "restored partition {} from changelog '{}' ({} bytes and {} "
          "deltas), reading on from offsets {}/{}",
          restore.shard, changelog_->topic(), restore.record->size(),
          restore.deltas.size(), offsets[0], offsets[1]);
      // The next record starts a chain of this owner's; the deltas read
      // (of no chain, or of the one restored) are deleted once its base is
      // acknowledged.
      chains_[restore.shard].Restored(restore.delta_keys, restore.read_from);
    } else {
      problem = "the checkpoint of partition " + std::to_string(restore.shard) +
                " in changelog '" + changelog_->topic() +
                "' cannot be restored: " + s.message();
    }
    if (s.ok() && !chain_problem.empty()) {
      ++status_.checkpoint_deltas_refused;
      spdlog::error(
          "the checkpoint of partition {} in changelog '{}': {}; restored the "
          "base and the deltas before it, reading the input again from their "
          "offsets {}/{}",
          restore.shard, changelog_->topic(), chain_problem, offsets[0],
          offsets[1]);
    }
  }
  if (problem.empty() && !restore.record.has_value() &&
      !restore.delta_keys.empty()) {
    // Deltas without a base to apply to: deleted with this owner's first
    // base.
    chains_[restore.shard].Restored(restore.delta_keys, restore.read_from);
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

Status KafkaIngest::RestoreChain(const Restore& restore,
                                 std::array<int64_t, 2>* offsets,
                                 std::string* problem) {
  StatusOr<CheckpointRecord> record = DecodeCheckpointRecord(*restore.record);
  Status s = record.status();
  if (s.ok() && record->partition != restore.shard) {
    s = Status::InvalidArgument("it is partition " +
                                std::to_string(record->partition) + "'s");
  }
  if (s.ok()) s = pipeline_->DecodeShard(restore.shard, record->state);
  if (!s.ok()) return s;
  *offsets = record->offsets;
  // SelectChain checked each delta's header, checksum and place; what
  // remains to fail is its state (not a state this version reads).
  size_t applied = 0;
  for (; applied < restore.deltas.size(); ++applied) {
    StatusOr<DeltaRecord> delta = DecodeDeltaRecord(restore.deltas[applied]);
    Status d = delta.status();
    if (d.ok()) d = pipeline_->ApplyShardDelta(restore.shard, delta->state);
    if (!d.ok()) {
      *problem = "delta " + std::to_string(applied + 1) +
                 " cannot be applied: " + d.message();
      break;
    }
    *offsets = delta->offsets;
  }
  if (applied == restore.deltas.size()) return Status::Ok();
  // The shard is empty after the failed delta: the base and the deltas
  // that applied, again.
  RW_RETURN_IF_ERROR(pipeline_->DecodeShard(restore.shard, record->state));
  *offsets = record->offsets;
  for (size_t i = 0; i < applied; ++i) {
    StatusOr<DeltaRecord> delta = DecodeDeltaRecord(restore.deltas[i]);
    RW_RETURN_IF_ERROR(delta.status());
    RW_RETURN_IF_ERROR(pipeline_->ApplyShardDelta(restore.shard, delta->state));
    *offsets = delta->offsets;
  }
  return Status::Ok();
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
  std::vector<Changelog::Outgoing> records;
  CheckpointRound round;
  for (int32_t shard : shards) {
    // Never restored: writing its empty state would hide the real one.
    if (unrestored_.contains(shard)) continue;
    const std::array<int64_t, 2> at = {
        book_.Position(SlotOf(0, shard)),
        qrels ? -1 : book_.Position(SlotOf(1, shard))};
    auto it = checkpointed_.find(shard);
    if (!force && it != checkpointed_.end() && it->second == at) continue;
    EncodeChainRecord(shard, at, &records, &round);
  }
  if (records.empty()) return false;
  // The deltas of superseded bases go with the round (and come back to
  // the list when it fails).
  round.tombstones = std::move(tombstones_);
  tombstones_.clear();
  records.insert(records.end(), round.tombstones.begin(),
                 round.tombstones.end());
  const Status s = changelog_->Send(records);
  if (!s.ok()) {
    ++status_.checkpoints_failed;
    errors_.Log("checkpoint failed", s.message());
    // The records may have been produced: each shard starts a new chain.
    round_ = std::move(round);
    FailRound();
    return false;
  }
  round_ = std::move(round);
  return true;
}

void KafkaIngest::EncodeChainRecord(int32_t shard,
                                    const std::array<int64_t, 2>& at,
                                    std::vector<Changelog::Outgoing>* records,
                                    CheckpointRound* round) {
  ShardChain& chain = chains_[shard];
  std::string state;
  std::string bytes;
  uint32_t seq = 0;
  const bool delta_due = chain.base_offset >= 0 &&
                         chain.delta_bytes <= kDeltaShare * chain.base_bytes;
  // False when the shard's changes are not tracked (restored or created
  // since its last base): a base then.
  if (delta_due && pipeline_->EncodeShardDelta(shard, &state)) {
    seq = chain.seq + 1;
    EncodeDeltaRecord({shard, at, chain.base_offset, seq, state}, &bytes);
    records->push_back({shard, DeltaKey(shard, chain.base_offset, seq), {}});
  } else {
    pipeline_->EncodeShardBase(shard, &state);
    EncodeCheckpointRecord({shard, at, state}, &bytes);
    records->push_back({shard, BaseKey(shard), {}});
  }
  const int64_t size = static_cast<int64_t>(bytes.size());
  round->bytes += size;
  round->shards.push_back(shard);
  round->positions.push_back(at);
  round->seqs.push_back(seq);
  round->keys.push_back(records->back().key);
  round->sizes.push_back(size);
  records->back().value = std::move(bytes);
}

void KafkaIngest::FailRound() {
  CheckpointRound round = std::move(*round_);
  round_.reset();
  for (size_t i = 0; i < round.shards.size(); ++i) {
    // Whether the broker took the record is unknown: a new base, and the
    // delta deleted with the base's deltas.
    chains_[round.shards[i]].RoundFailed(round.seqs[i], round.keys[i]);
  }
  tombstones_.insert(tombstones_.end(), round.tombstones.begin(),
                     round.tombstones.end());
}

void KafkaIngest::FinishCheckpoint(
    const Status& result, const std::vector<Changelog::Written>& written,
    bool sync) {
  if (!result.ok()) {
    ++status_.checkpoints_failed;
    errors_.Log("checkpoint failed", result.message());
    FailRound();
    return;
  }
  const CheckpointRound round = std::move(*round_);
  round_.reset();
  ++status_.checkpoints_ok;
  status_.checkpoint_bytes = round.bytes;
  // The group's offsets follow, pointing to the records: lag shows, and a
  // new owner reads from the pointer on.
  const bool qrels = table_consumer_ != nullptr;
  // Every tombstone due when the round started went with it (and those
  // due since come from the loop below).
  for (const Changelog::Outgoing& t : round.tombstones) {
    auto it = chains_.find(t.partition);
    if (it != chains_.end()) it->second.TombstonesAcked();
  }
  PartitionList list = MakePartitionList(round.shards.size() * 2);
  for (size_t i = 0; i < round.shards.size(); ++i) {
    const int32_t shard = round.shards[i];
    checkpointed_[shard] = round.positions[i];
    ShardChain& chain = chains_[shard];
    if (round.seqs[i] == 0) {
      // A new base: the previous chain's deltas are garbage now.
      for (std::string& key :
           chain.BaseAcked(written[i].offset, round.sizes[i])) {
        tombstones_.push_back({shard, std::move(key), std::nullopt});
      }
    } else {
      chain.DeltaAcked(round.seqs[i], round.sizes[i], round.keys[i]);
    }
    // The pointer names the chain's base (or, while deltas before it wait
    // for their tombstones, the first of them): a new owner reads from
    // there on.
    CommitMetadata metadata;
    metadata.changelog_partition = written[i].partition;
    metadata.changelog_offset = chain.Pointer();
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
