#include "daemon/kafka/cluster_check.h"

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "base/duration.h"
#include "base/strings.h"
#include "daemon/kafka/error_reporter.h"
#include "daemon/kafka/kafka_conf.h"

namespace rankwatch::kafka {

namespace {

// Metadata requests of this long, their client's callbacks served in
// between, until `timeout`: an ERR__ALL_BROKERS_DOWN ends the wait early.
constexpr std::chrono::milliseconds kAttempt(500);

// What the client's error callback reports of its connections. Served on
// the calling thread (inside consume()): no lock.
class ConnectionWatch : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    if (event.type() != RdKafka::Event::EVENT_ERROR) return;
    if (IsConnectionError(event.err())) {
      cause_ = ConnectionErrorCause(event.str());
    }
    if (event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) {
      all_down_ = true;
      if (cause_.empty()) cause_ = event.str();
    }
  }
  bool all_down() const { return all_down_; }
  const std::string& cause() const { return cause_; }

 private:
  bool all_down_ = false;
  std::string cause_;
};

std::string Plural(int n, std::string_view one) {
  return std::to_string(n) + " " + std::string(one) + (n == 1 ? "" : "s");
}

}  // namespace

StatusOr<ClusterMetadata> FetchClusterMetadata(
    const config::KafkaConfig& kafka, std::chrono::milliseconds timeout) {
  StatusOr<std::unique_ptr<RdKafka::Conf>> conf =
      ConsumerConf(kafka, kafka.group_id, /*range_assignor=*/false);
  if (!conf.ok()) return conf.status();
  ConnectionWatch watch;
  RW_RETURN_IF_ERROR(SetCallback(conf->get(), "event_cb", &watch));
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf->get(), err));
  if (!consumer) return Status::InvalidArgument("kafka consumer: " + err);
  const int attempts =
      std::max<int>(1, static_cast<int>(timeout.count() / kAttempt.count()));
  RdKafka::ErrorCode md_err = RdKafka::ERR__TIMED_OUT;
  std::unique_ptr<RdKafka::Metadata> md;
  for (int i = 0; i < attempts; ++i) {
    RdKafka::Metadata* got = nullptr;
    md_err = consumer->metadata(/*all_topics=*/true, nullptr, &got,
                                static_cast<int>(kAttempt.count()));
    md.reset(got);
    // Nothing subscribed: this serves the callbacks only.
    std::unique_ptr<RdKafka::Message> none(consumer->consume(0));
    if (md_err == RdKafka::ERR_NO_ERROR || watch.all_down()) break;
    if (md_err != RdKafka::ERR__TRANSPORT &&
        md_err != RdKafka::ERR__TIMED_OUT) {
      break;
    }
  }
  consumer->close();
  if (md_err != RdKafka::ERR_NO_ERROR || md == nullptr) {
    std::string cause = watch.cause();
    if (cause.empty()) {
      cause =
          md_err == RdKafka::ERR__TRANSPORT || md_err == RdKafka::ERR__TIMED_OUT
              ? "no answer within " + FormatDuration(timeout)
              : RdKafka::err2str(md_err);
    }
    return Status::Unavailable("cannot reach kafka at " +
                               kafka.bootstrap_servers + " (" + cause + ")");
  }
  ClusterMetadata out;
  for (const RdKafka::BrokerMetadata* b : *md->brokers()) {
    out.brokers.push_back({b->id(), b->host(), b->port()});
  }
  std::sort(out.brokers.begin(), out.brokers.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const RdKafka::TopicMetadata* t : *md->topics()) {
    ClusterMetadata::Topic& topic = out.topics[t->topic()];
    topic.partitions = static_cast<int>(t->partitions()->size());
    if (t->err() != RdKafka::ERR_NO_ERROR) {
      topic.error = std::string(ErrorName(t->err()));
    }
  }
  return out;
}

std::vector<ClusterFinding> CheckCluster(const config::Config& config,
                                         const ClusterMetadata& cluster) {
  using Level = ClusterFinding::Level;
  std::vector<ClusterFinding> out;
  const std::string& bootstrap = config.kafka.bootstrap_servers;
  std::string brokers;
  for (const ClusterMetadata::Broker& b : cluster.brokers) {
    brokers += (brokers.empty() ? ": " : ", ") + std::to_string(b.id) + " at " +
               b.host + ":" + std::to_string(b.port);
  }
  out.push_back(
      {Level::kOk,
       "kafka: reached " + bootstrap + ", " +
           Plural(static_cast<int>(cluster.brokers.size()), "broker") +
           brokers});
  std::vector<std::string_view> names;
  for (const auto& [name, topic] : cluster.topics) names.push_back(name);
  // The partition count of `name`, when it exists.
  auto check_topic = [&](const std::string& name, std::string_view key,
                         Level missing,
                         std::string_view missing_note) -> std::optional<int> {
    const std::string what =
        "kafka: topic '" + name + "' (" + std::string(key) + ")";
    auto it = cluster.topics.find(name);
    if (it == cluster.topics.end()) {
      std::string message = what + " not found at " + bootstrap;
      if (const std::optional<std::string_view> close =
              ClosestKey(name, names)) {
        message += " (did you mean '" + std::string(*close) + "'?)";
      }
      out.push_back({missing, message + std::string(missing_note)});
      return std::nullopt;
    }
    if (!it->second.error.empty()) {
      out.push_back({Level::kWarning, what + ": " + it->second.error});
    }
    out.push_back(
        {Level::kOk, what + ": " + Plural(it->second.partitions, "partition")});
    return it->second.partitions;
  };
  const std::optional<int> results = check_topic(
      config.kafka.results_topic, "kafka.results_topic", Level::kError, "");
  const std::optional<int> judgments = check_topic(
      config.kafka.judgments_topic, "kafka.judgments_topic", Level::kError, "");
  if (!config.dead_letter.topic.empty()) {
    (void)check_topic(config.dead_letter.topic, "dead_letter.topic",
                      Level::kWarning,
                      ": the first dead letter creates it only where the "
                      "broker auto-creates topics");
  }
  // The daemon's start-up warning (KafkaIngest), before it runs.
  if (config.join.mode == config::JoinMode::kImpression && results &&
      judgments && *results != *judgments) {
    out.push_back(
        {Level::kWarning,
         "kafka: topics '" + config.kafka.results_topic + "' (" +
             Plural(*results, "partition") + ") and '" +
             config.kafka.judgments_topic + "' (" +
             Plural(*judgments, "partition") +
             ") differ in partition count: a request's results and "
             "judgments can land in different replicas and never meet"});
  }
  return out;
}

}  // namespace rankwatch::kafka
