#include "daemon/exporter/kafka_collector.h"

#include <map>
#include <string>
#include <utility>

#include "daemon/exporter/families.h"

namespace rankwatch::exporter {

namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

double Value(int64_t v) { return static_cast<double>(v); }

// `counts` per topic, with every configured topic present (0 if absent).
std::map<std::string, int64_t> WithTopics(
    std::map<std::string, int64_t> counts,
    const std::vector<std::string>& topics) {
  for (const std::string& t : topics) counts.try_emplace(t, 0);
  return counts;
}

}  // namespace

void KafkaCollector::Collect(std::vector<MetricFamily>* out) const {
  CollectPartitions(out);
  CollectCounters(out);
  CollectTopicEvents(out);
}

void KafkaCollector::CollectPartitions(std::vector<MetricFamily>* out) const {
  MetricFamily lag = MakeFamily(
      "rankwatch_consumer_lag_messages",
      "Messages between the consumer's position and the high watermark, per "
      "assigned topic-partition",
      MetricType::Gauge);
  MetricFamily committed = MakeFamily(
      "rankwatch_consumer_committed_offset",
      "Offset last committed, per assigned topic-partition", MetricType::Gauge);
  MetricFamily high = MakeFamily(
      "rankwatch_consumer_high_watermark_offset",
      "End offset (high watermark) last reported by the broker, per assigned "
      "topic-partition",
      MetricType::Gauge);
  std::map<std::string, int64_t> assigned;
  for (const std::string& t : status_->topics) assigned.try_emplace(t, 0);
  for (const kafka::PartitionStatus& p : status_->partitions) {
    ++assigned[p.topic];
    const Labels labels = {{"topic", p.topic},
                           {"partition", std::to_string(p.partition)}};
    // Unknown values (-1) are left out rather than exported as a number.
    if (p.lag >= 0) AddGauge(&lag, labels, Value(p.lag));
    if (p.committed_offset >= 0) {
      AddGauge(&committed, labels, Value(p.committed_offset));
    }
    if (p.high_watermark >= 0) AddGauge(&high, labels, Value(p.high_watermark));
  }
  MetricFamily partitions = MakeFamily(
      "rankwatch_assigned_partitions",
      "Partitions assigned to this consumer, per topic", MetricType::Gauge);
  for (const auto& [topic, n] : assigned) {
    AddGauge(&partitions, {{"topic", topic}}, Value(n));
  }
  out->push_back(std::move(lag));
  out->push_back(std::move(committed));
  out->push_back(std::move(high));
  out->push_back(std::move(partitions));
}

void KafkaCollector::CollectCounters(std::vector<MetricFamily>* out) const {
  const kafka::IngestState& s = *status_;
  MetricFamily errors = MakeFamily(
      "rankwatch_kafka_errors_total",
      "Kafka client errors, by librdkafka error name", MetricType::Counter);
  for (const auto& [name, n] : s.errors) {
    AddCounter(&errors, {{"error", name}}, Value(n));
  }
  MetricFamily commits =
      MakeFamily("rankwatch_commits_total",
                 "Offset commits, by result (ok, failed)", MetricType::Counter);
  AddCounter(&commits, {{"result", "ok"}}, Value(s.commits_ok));
  AddCounter(&commits, {{"result", "failed"}}, Value(s.commits_failed));
  MetricFamily rebalances =
      MakeFamily("rankwatch_rebalances_total",
                 "Consumer group rebalances this consumer took part in",
                 MetricType::Counter);
  AddCounter(&rebalances, {}, Value(s.rebalances));
  MetricFamily checkpoints = MakeFamily(
      "rankwatch_checkpoints_total",
      "Durable state: checkpoint rounds written to the changelog topic, by "
      "result (ok, failed)",
      MetricType::Counter);
  AddCounter(&checkpoints, {{"result", "ok"}}, Value(s.checkpoints_ok));
  AddCounter(&checkpoints, {{"result", "failed"}}, Value(s.checkpoints_failed));
  MetricFamily checkpoint_bytes =
      MakeFamily("rankwatch_checkpoint_bytes",
                 "Durable state: bytes written by the latest checkpoint round",
                 MetricType::Gauge);
  AddGauge(&checkpoint_bytes, {}, Value(s.checkpoint_bytes));
  MetricFamily restored = MakeFamily(
      "rankwatch_partitions_restored_total",
      "Durable state: partitions whose state was restored from a checkpoint",
      MetricType::Counter);
  AddCounter(&restored, {}, Value(s.partitions_restored));
  MetricFamily deltas_refused = MakeFamily(
      "rankwatch_checkpoint_deltas_refused_total",
      "Durable state: restores that stopped at a delta that did not apply "
      "(corrupt, missing, out of order): the base and the deltas before it "
      "were restored and the input is read again from their offsets",
      MetricType::Counter);
  AddCounter(&deltas_refused, {}, Value(s.checkpoint_deltas_refused));
  MetricFamily dead_letters = MakeFamily(
      "rankwatch_dead_letters_total",
      "Rejected events copied to the dead-letter topic, by result (produced, "
      "failed)",
      MetricType::Counter);
  AddCounter(&dead_letters, {{"result", "produced"}},
             Value(s.dead_letters_produced));
  AddCounter(&dead_letters, {{"result", "failed"}},
             Value(s.dead_letters_failed));
  // One evaluation for both gauges: they cannot disagree.
  const kafka::ReadyReason reason = s.ready_reason(clock_->MonotonicMillis());
  MetricFamily ready = MakeFamily(
      "rankwatch_consumer_ready",
      "1 when partitions are assigned and consumed: the loop polled within "
      "10 s and every assigned partition fetched within "
      "kafka.not_ready_after (what /readyz reports), else 0",
      MetricType::Gauge);
  AddGauge(&ready, {}, reason == kafka::ReadyReason::kReady ? 1 : 0);
  MetricFamily ready_reason = MakeFamily(
      "rankwatch_consumer_ready_reason",
      "1 for the current readiness reason (ready, not_consuming, "
      "not_assigned, loop_stalled, broker_unreachable, fetch_stalled, "
      "state_unavailable), 0 for the others",
      MetricType::Gauge);
  for (kafka::ReadyReason r : kafka::kAllReadyReasons) {
    AddGauge(&ready_reason,
             {{"reason", std::string(kafka::ReadyReasonName(r))}},
             r == reason ? 1 : 0);
  }
  out->push_back(std::move(errors));
  out->push_back(std::move(commits));
  out->push_back(std::move(rebalances));
  out->push_back(std::move(checkpoints));
  out->push_back(std::move(checkpoint_bytes));
  out->push_back(std::move(deltas_refused));
  out->push_back(std::move(restored));
  out->push_back(std::move(dead_letters));
  out->push_back(std::move(ready));
  out->push_back(std::move(ready_reason));
}

// Events the consumer skipped or could not read, per configured topic.
void KafkaCollector::CollectTopicEvents(std::vector<MetricFamily>* out) const {
  const kafka::IngestState& s = *status_;
  MetricFamily replayed = MakeFamily(
      "rankwatch_replayed_events_total",
      "Events re-read after a restart or rebalance and skipped because the "
      "metrics already reflect them, per topic",
      MetricType::Counter);
  for (const auto& [topic, n] : WithTopics(s.replayed_events, s.topics)) {
    AddCounter(&replayed, {{"topic", topic}}, Value(n));
  }
  MetricFamily deleted_unread = MakeFamily(
      "rankwatch_events_deleted_unread_total",
      "Events the broker deleted (retention, DeleteRecords) before this "
      "replica read them: reading resumed below a partition's log start, or "
      "fell behind it, per topic. What of them a previous owner had not "
      "counted is lost",
      MetricType::Counter);
  for (const auto& [topic, n] : WithTopics(s.deleted_unread_events, s.topics)) {
    AddCounter(&deleted_unread, {{"topic", topic}}, Value(n));
  }
  out->push_back(std::move(replayed));
  out->push_back(std::move(deleted_unread));
}

}  // namespace rankwatch::exporter
